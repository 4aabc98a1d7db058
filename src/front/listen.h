/*
 * listen.h - the attach socket: `coil --agent --listen PATH` serves the
 * live session on a unix socket as well as on stdin and stdout, so that
 * a person (coil --attach) or any tool can watch an agent's cells and
 * run cells of its own.
 *
 * The socket is PATH, mode 0600, in a directory that only coil's user
 * can enter: the directory is made (mode 0700) when it does not exist,
 * and refused when it is another user's or open to others.  A stale
 * socket (nobody answers on it) is replaced; a live one is refused.
 * With --listen systemd the socket is the one systemd bound and passed
 * (sdfd.h): used at its path (which --attach is given), in a directory
 * no other user may write, its key made as below, and neither it nor
 * its directory removed at the end.
 *
 * Who is at either end (peer.h).  Before the socket appears at PATH its
 * key is written where no cell reads (--listen is refused when that
 * place lies in the work dir or an --allow-read, --allow-write or
 * Python dir), and removed with the socket.  Each peer is checked
 * (SO_PEERCRED): one of another uid, or of other PID or user namespaces
 * (a process of the sandbox), gets one line {"event": "refused",
 * "message"} and is closed; one let in gets {"event": "hello", "pid",
 * "token"} first, which coil --attach checks against the key with the
 * kernel's pid of its peer.  A socket whose directory cells can write
 * (in the work dir or an --allow-write dir; under --sandbox none, any)
 * is served with a warning, not refused: a cell can remove it or serve
 * its own there, which --attach refuses, so it can deny an attach but
 * not take the person's input.
 *
 * What the socket speaks, after the hello: the agent protocol (one
 * request a line, one response a line, each carrying "seq" and
 * "origin"), plus the hub's observer events as lines {"event": NAME,
 * "seq", "origin", "id", ...} for every client's requests
 * (session_event_json): queued, started, output, response (another
 * client's, whole), cancelled, background, worker, checkpoint,
 * namespace, warning.  When the session ends the
 * last line is {"event": "end", "reason": ...}.  A client's cells are
 * marked with the origin "person".  A client that leaves, or stops
 * reading (conn.h), is detached; the session and the others go on.
 *
 * Supervisor only; runs in the front end's loop (listener_fds, then
 * listener_run with what poll found).
 */
#ifndef COIL_LISTEN_H
#define COIL_LISTEN_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "opts.h"
#include "session.h"

struct listener;

/* Make the socket and listen.  NULL with a message in err. */
struct listener *listener_open(const char *path, struct session *s,
    const struct coil_opts *opts, char *err, size_t len);
/* The listening socket and every client's two entries; fills at most
 * max of pfd and returns how many there are. */
int listener_fds(const struct listener *l, struct pollfd *pfd, int max);
/* Accept, read and write as poll found; drop clients that left. */
void listener_run(struct listener *l, const struct pollfd *pfd, int n);
/* No more clients, no more requests (the agent's input ended): what
 * is queued is still answered and written. */
void listener_quiet(struct listener *l);
/* Say "end" to every client with reason, write what is queued (at most
 * timeout_ms in all), close them, remove the socket (and its directory
 * when it was made here). */
void listener_close(struct listener *l, const char *reason, int timeout_ms);

#endif
