/*
 * peer.h - who is at the other end of the attach socket (listen.h).
 *
 * A cell that can write the socket's directory can remove the socket
 * and serve its own there; a person who attached to that would type
 * into the cell.  So the two ends check each other, with the kernel's
 * word (SO_PEERCRED) and a key no cell can read:
 *
 * The key.  Before the socket appears at its path, coil --listen writes
 * KEYDIR/attach-DEV-INO (the socket's device and inode, in decimal),
 * mode 0600, with O_EXCL | O_NOFOLLOW through KEYDIR's descriptor.
 * KEYDIR is $XDG_RUNTIME_DIR/coil when XDG_RUNTIME_DIR is absolute,
 * else /tmp/coil-UID: coil's user's, mode 0700 (made so when absent,
 * refused otherwise), and the caller refuses one that lies where cells
 * may read (peer_keydir_open says where it is).  The key is one JSON
 * line {"pid", "start", "token"}: the supervisor's pid, its start time
 * (field 22 of /proc/PID/stat), 32 hex digits of getrandom.  It goes
 * when the listener closes; a coil that was killed leaves it, and the
 * next peer_key_make in KEYDIR removes every key whose process is gone.
 *
 * The server.  It lets in only peers of its own uid in its own PID and
 * user namespaces (peer_may_attach): no process of the sandbox (under
 * standard and strict) is ever told the token.  To each peer it lets in
 * it first sends {"event": "hello", "pid", "token", "name"} (peer_hello;
 * the name is the one the session knows the client by, peer_name).
 *
 * The client (peer_connect).  It finds the key by the socket's inode,
 * connects through the directory it looked in, and before it sends a
 * byte checks that SO_PEERCRED gives its own uid and the key's pid,
 * that this pid has the key's start time, and then that the first line
 * is the hello with the key's token.  The pid is the kernel's and names
 * the process that listens: no process of the sandbox has the
 * supervisor's, and a server that read no key cannot say the token.
 *
 * Under --sandbox none cells run as the user, in the user's namespaces:
 * they can read and rewrite the key, and nothing here holds.
 *
 * Supervisor (the key, the checks of peers) and the attaching UI (the
 * client); no Python.
 */
#ifndef COIL_PEER_H
#define COIL_PEER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define PEER_TOKEN_HEX	32

struct peer_key {
	int dirfd;			/* KEYDIR, or -1 */
	char dir[PATH_MAX];		/* its canonical path, for messages */
	char name[64];			/* attach-DEV-INO, "" until made */
	char token[PEER_TOKEN_HEX + 1];
};

/* dirfd -1, nothing made. */
void peer_key_init(struct peer_key *k);
/* Open KEYDIR (made when absent) and check it is ours and closed to
 * others: 0, or -1 with err.  k->dir says where it is. */
int peer_keydir_open(struct peer_key *k, char *err, size_t len);
/* Write the key of the socket NAME in the directory sockdirfd (bound,
 * not yet at its final name: the inode is what counts).  Removes the
 * keys in KEYDIR whose process is gone first.  0, or -1 with err. */
int peer_key_make(struct peer_key *k, int sockdirfd, const char *name,
    char *err, size_t len);
/* Remove the key (when made), KEYDIR when it is empty then, and close
 * it; k is as after init. */
void peer_key_remove(struct peer_key *k);
/* The first line to a peer that was let in, with the name the session
 * gives it (NULL: none); a new reference. */
json_t *peer_hello(const struct peer_key *k, const char *name);
/* A name for the peer of the accepted socket fd, from the kernel's word
 * (SO_PEERCRED, /proc/PID/stat): its user's login name and controlling
 * terminal, "alice@pts/3", or the name alone without a terminal.  At
 * most PEER_NAME_MAX - 1 bytes, printable. */
#define PEER_NAME_MAX	64
void peer_name(int fd, char *buf, size_t len);

/* Supervisor: may the peer of the accepted socket fd attach?  Its uid
 * must be ours, and its PID and user namespaces ours (a process of the
 * sandbox has others).  false with why. */
bool peer_may_attach(int fd, char *why, size_t len);

/* The attaching client: connect to the socket at path and check its
 * server as above, having sent nothing.  A connected socket (blocking,
 * close-on-exec) whose hello was read, the name the hello gave this
 * client in me ("" when none), or -1 with err: a message for the
 * person naming path and what is wrong. */
int peer_connect(const char *path, char *me, size_t melen, char *err,
    size_t len);

#endif
