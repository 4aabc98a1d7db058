/*
 * peer.c - the attach socket's key and the checks of its two ends (see
 * peer.h).
 *
 * Every path here is reached through a descriptor: KEYDIR's base (the
 * user's own $XDG_RUNTIME_DIR or /tmp) is resolved once, KEYDIR itself
 * without following a link, and the key inside it with O_NOFOLLOW.
 * fs(private): KEYDIR, the file-system inventory's mark for these
 * calls (tests/unit/fs-inventory.py): $XDG_RUNTIME_DIR/coil or
 * /tmp/coil-UID, the user's alone (0700, checked), never where cells
 * reach.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hostfs.h"
#include "outbuf.h"
#include "peer.h"
#include "util.h"

#define PEER_KEY_MAX	4096	/* bytes of a key file, and of a hello */
#define PEER_HELLO_MS	60000	/* for the verified server's first line */

void
peer_key_init(struct peer_key *k)
{
	memset(k, 0, sizeof *k);
	k->dirfd = -1;
}

/* A name fit to be shown as it is: valid UTF-8 (a JSON string can
 * hold it: json_pack fails on any other, and the hello with it), no
 * control character (C0, DEL, C1: the interrupt's "by" takes none), at
 * most PEER_NAME_MAX - 1 bytes. */
static bool
peer_label_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	if (n == 0 || n >= PEER_NAME_MAX || utf8_valid_prefix(s, n) != n)
		return false;
	for (; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 &&
		    p[1] < 0xa0))
			return false;
	return true;
}

/* Field n (n >= 3: after the command) of /proc/PID/stat, as a number. */
static int
peer_stat_field(long pid, int n, unsigned long long *out)
{
	char path[64], buf[1024], *p;
	ssize_t got;
	int fd, i;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	/* fs(proc): the kernel's */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	got = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	/* after the command's ")" comes field 3 */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	for (i = 2; i < n && p != NULL; i++)
		if ((p = strchr(p + 1, ' ')) == NULL)
			return -1;
	*out = strtoull(p + 1, NULL, 10);
	return 0;
}

/* The start time of pid (clock ticks after boot), as /proc says it. */
static int
peer_start_time(long pid, unsigned long long *out)
{
	return peer_stat_field(pid, 22, out);
}

/* ---- KEYDIR ------------------------------------------------------- */

/* KEYDIR's base and name in it: $XDG_RUNTIME_DIR and "coil", else /tmp
 * and "coil-UID" (as tmux does). */
static void
peer_keydir_where(const char **base, char *name, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (xdg != NULL && *xdg == '/') {
		*base = xdg;
		snprintf(name, len, "coil");
	} else {
		*base = "/tmp";
		snprintf(name, len, "coil-%ld", (long)geteuid());
	}
}

/* KEYDIR's base ($XDG_RUNTIME_DIR or /tmp), walked (hostfs.h): its
 * descriptor, or -1 with why. */
static int
peer_base(const char *base, char *why, size_t len)
{
	struct hostfs_dir d;

	if (hostfs_walk(base, HOSTFS_DIR, &d, NULL, why, len) == -1)
		return -1;
	return d.fd;
}

/* Open KEYDIR, made when make and absent, and check it: 0 or -1. */
static int
peer_keydir(struct peer_key *k, bool make, char *err, size_t len)
{
	const char *base;
	char name[64], link[64], why[256];
	struct stat st;
	ssize_t n;
	int bfd, rc = 0;

	peer_keydir_where(&base, name, sizeof name);
	snprintf(k->dir, sizeof k->dir, "%s/%s", base, name);
	/* KEYDIR's base through hostfs's walk: no link a cell may have
	 * planted on the way is followed */
	if ((bfd = peer_base(base, why, sizeof why)) == -1)
		return err_set(err, len, "cannot open '%s' for the attach "
		    "key: %s", base, why);
	/* fs(private): KEYDIR */
	if (make && mkdirat(bfd, name, 0700) == -1 && errno != EEXIST)
		rc = err_set(err, len, "cannot make '%s' for the attach key: "
		    "%s", k->dir, strerror(errno));
	/* fs(private): KEYDIR */
	if (rc == 0 && (k->dirfd = openat(bfd, name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		rc = err_set(err, len, "cannot open '%s': %s", k->dir,
		    errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	if (rc == 0 && fstat(k->dirfd, &st) == -1)
		rc = err_set(err, len, "'%s': %s", k->dir, strerror(errno));
	if (rc == 0 && (st.st_uid != geteuid() || (st.st_mode & 077) != 0))
		rc = err_set(err, len, "the attach key's directory '%s' must "
		    "be yours and closed to others (mode 0700); it is mode "
		    "%04o, owned by uid %ld: remove it, or set XDG_RUNTIME_DIR",
		    k->dir, (unsigned)(st.st_mode & 07777), (long)st.st_uid);
	if (rc == 0) {
		snprintf(link, sizeof link, "/proc/self/fd/%d", k->dirfd);
		/* fs(proc): the held directory's name, through /proc/self/fd */
		n = readlink(link, k->dir, sizeof k->dir - 1);
		if (n > 0)
			k->dir[n] = '\0';
	}
	close(bfd);
	if (rc == -1 && k->dirfd >= 0) {
		close(k->dirfd);
		k->dirfd = -1;
	}
	return rc;
}

int
peer_keydir_open(struct peer_key *k, char *err, size_t len)
{
	return peer_keydir(k, true, err, len);
}

/* The key NAME in KEYDIR, read through O_NOFOLLOW and checked (ours,
 * closed to others, one link, small): a new reference, or NULL with
 * errno (ENOENT: there is none) or err. */
static json_t *
peer_key_read(int dirfd, const char *name, char *err, size_t len)
{
	char buf[PEER_KEY_MAX];
	struct stat st;
	json_t *o = NULL;
	ssize_t n;
	int fd;

	/* fs(private): KEYDIR */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1) {
		err_set(err, len, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
	    st.st_nlink != 1 || st.st_size >= PEER_KEY_MAX) {
		err_set(err, len, "not a key coil made (a file of yours, mode "
		    "0600, one link)");
		errno = EINVAL;
		goto out;
	}
	n = read(fd, buf, sizeof buf - 1);
	if (n < 0) {
		err_set(err, len, "%s", strerror(errno));
		goto out;
	}
	o = json_loadb(buf, (size_t)n, 0, NULL);
	if (!json_is_object(o) || !json_is_integer(json_object_get(o, "pid")) ||
	    !json_is_integer(json_object_get(o, "start")) ||
	    !json_is_string(json_object_get(o, "token"))) {
		json_decref(o);
		o = NULL;
		err_set(err, len, "not a key coil made");
		errno = EINVAL;
	}
out:
	close(fd);
	return o;
}

/* The process the key names still runs. */
static bool
peer_key_live(const json_t *key)
{
	unsigned long long start;

	return peer_start_time((long)json_integer_value(json_object_get(key,
	    "pid")), &start) == 0 && start == (unsigned long long)
	    json_integer_value(json_object_get(key, "start"));
}

/* Remove the keys of coils that were killed: their process is gone, or
 * its pid is another process's now.  fs(private): the key dir, by name
 * in the descriptor held. */
static void
peer_key_sweep(int dirfd)
{
	/* fs(private): KEYDIR */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	char err[64];
	json_t *key;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "attach-", 7) != 0)
			continue;
		key = peer_key_read(dirfd, e->d_name, err, sizeof err);
		if (key != NULL && !peer_key_live(key))
			unlinkat(dirfd, e->d_name, 0);
		json_decref(key);
	}
	closedir(d);
}

int
peer_key_make(struct peer_key *k, int sockdirfd, const char *name,
    char *err, size_t len)
{
	unsigned char raw[PEER_TOKEN_HEX / 2];
	unsigned long long start;
	struct stat st;
	char *text = NULL;
	json_t *o;
	size_t i;
	int fd = -1, tries, rc = -1;

	/* fs(walked): the socket's directory, held by listen.c */
	if (fstatat(sockdirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISSOCK(st.st_mode))
		return err_set(err, len, "the socket to make a key for is "
		    "gone");
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return err_set(err, len, "getrandom: %s", strerror(errno));
	if (peer_start_time((long)getpid(), &start) == -1)
		return err_set(err, len, "cannot read this process's start "
		    "time in /proc: %s", strerror(errno));
	for (i = 0; i < sizeof raw; i++)
		snprintf(k->token + 2 * i, 3, "%02x", raw[i]);
	peer_key_sweep(k->dirfd);
	snprintf(k->name, sizeof k->name, "attach-%llu-%llu",
	    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	/* A key of this inode is of a socket that was removed: the inode
	 * is this one's now.  Once removed, O_EXCL is ours or refused.
	 * KEYDIR gone (ENOENT): a session that ended removed it as we
	 * opened it; made again. */
	for (tries = 0; fd == -1 && tries < 3; tries++) {
		/* fs(private): KEYDIR */
		fd = openat(k->dirfd, k->name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || tries == 2)
			break;
		if (errno == EEXIST) {
			/* fs(private): KEYDIR */
			unlinkat(k->dirfd, k->name, 0);
			continue;
		}
		if (errno != ENOENT)
			break;
		close(k->dirfd);
		k->dirfd = -1;
		if (peer_keydir(k, true, err, len) == -1) {
			k->name[0] = '\0';
			return -1;
		}
	}
	if (fd == -1) {
		err_set(err, len, "cannot make the attach key '%s/%s': %s",
		    k->dir, k->name, strerror(errno));
		k->name[0] = '\0';
		return -1;
	}
	o = json_pack("{s:I, s:I, s:s}", "pid", (json_int_t)getpid(),
	    "start", (json_int_t)start, "token", k->token);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (text == NULL || write_all(fd, text, strlen(text)) == -1 ||
	    write_all(fd, "\n", 1) == -1)
		err_set(err, len, "cannot write the attach key '%s/%s': %s",
		    k->dir, k->name, strerror(errno));
	else
		rc = 0;
	if (close(fd) == -1 && rc == 0)
		rc = err_set(err, len, "cannot write the attach key '%s/%s': "
		    "%s", k->dir, k->name, strerror(errno));
	if (rc == -1) {
		/* fs(private): KEYDIR */
		unlinkat(k->dirfd, k->name, 0);
		k->name[0] = '\0';
	}
	free(text);
	return rc;
}

/* KEYDIR, once empty, is removed too: nothing of coil's stays in the
 * runtime dir.  Only the directory k holds, and only when
 * empty (rmdir); a session that opened it meanwhile makes it again
 * (peer_key_make).  fs(private): the key dir, checked to be the one held,
 * removed by name in its parent. */
static void
peer_keydir_drop(const struct peer_key *k)
{
	const char *base;
	char name[64], why[256];
	struct stat held, now;
	int bfd;

	peer_keydir_where(&base, name, sizeof name);
	if ((bfd = peer_base(base, why, sizeof why)) == -1)
		return;
	if (fstat(k->dirfd, &held) == 0 && fstatat(bfd, name, &now,
	    AT_SYMLINK_NOFOLLOW) == 0 && held.st_dev == now.st_dev &&
	    held.st_ino == now.st_ino)
		unlinkat(bfd, name, AT_REMOVEDIR);
	close(bfd);
}

void
peer_key_remove(struct peer_key *k)
{
	/* fs(private): KEYDIR */
	if (k->dirfd >= 0 && k->name[0] != '\0')
		unlinkat(k->dirfd, k->name, 0);
	if (k->dirfd >= 0) {
		peer_keydir_drop(k);
		close(k->dirfd);
	}
	peer_key_init(k);
}

json_t *
peer_hello(const struct peer_key *k, const char *name)
{
	return json_pack("{s:s, s:I, s:s, s:s*}", "event", "hello", "pid",
	    (json_int_t)getpid(), "token", k->token, "name", name);
}

/* The name of a terminal from its device number (/proc/PID/stat's
 * tty_nr), as ps prints it: pts/3, tty2, ttyS0. */
static void
peer_tty(unsigned long long nr, char *buf, size_t len)
{
	unsigned major = (unsigned)(nr >> 8) & 0xfff;
	unsigned minor = (unsigned)((nr & 0xff) | ((nr >> 12) & 0xfff00));

	if (major >= 136 && major <= 143)
		snprintf(buf, len, "pts/%u", minor + (major - 136) * 256);
	else if (major == 4 && minor < 64)
		snprintf(buf, len, "tty%u", minor);
	else if (major == 4)
		snprintf(buf, len, "ttyS%u", minor - 64);
	else
		snprintf(buf, len, "tty%u:%u", major, minor);
}

void
peer_name(int fd, char *buf, size_t len)
{
	struct ucred cred;
	socklen_t clen = sizeof cred;
	unsigned long long nr = 0;
	struct passwd *pw;
	char tty[32] = "";
	int n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == -1 ||
	    clen != sizeof cred)
		cred = (struct ucred){ .pid = 0, .uid = geteuid() };
	/* the controlling terminal: the kernel's word, not the peer's */
	if (cred.pid > 0 && peer_stat_field(cred.pid, 7, &nr) == 0 && nr != 0)
		peer_tty(nr, tty, sizeof tty);
	pw = getpwuid(cred.uid);
	/* whole or not at all: a cut could split a character */
	if (pw != NULL && strlen(pw->pw_name) <= 32 &&
	    peer_label_ok(pw->pw_name))
		n = snprintf(buf, len, "%s", pw->pw_name);
	else
		n = snprintf(buf, len, "uid%ld", (long)cred.uid);
	if (tty[0] != '\0' && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "@%s", tty);
}

/* ---- the server's check ------------------------------------------- */

/* pid is in our namespace NS (pid, user): true; false when it is not,
 * or cannot be told. */
static bool
peer_same_ns(long pid, const char *ns)
{
	char path[64];
	struct stat mine, its;

	snprintf(path, sizeof path, "/proc/%ld/ns/%s", pid, ns);
	/* fs(proc): the kernel's namespace links */
	if (stat(path, &its) == -1)
		return false;
	snprintf(path, sizeof path, "/proc/self/ns/%s", ns);
	/* fs(proc): the kernel's namespace links */
	if (stat(path, &mine) == -1)
		return false;
	return its.st_dev == mine.st_dev && its.st_ino == mine.st_ino;
}

bool
peer_may_attach(int fd, char *why, size_t len)
{
	struct ucred cred;
	socklen_t clen = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == -1 ||
	    clen != sizeof cred) {
		err_set(why, len, "cannot tell who is attaching: %s",
		    strerror(errno));
		return false;
	}
	if (cred.uid != geteuid()) {
		err_set(why, len, "this session belongs to uid %ld; uid %ld "
		    "may not attach to it", (long)geteuid(), (long)cred.uid);
		return false;
	}
	/* pid 0: a process of a namespace we cannot see */
	if (cred.pid <= 0 || !peer_same_ns(cred.pid, "pid") ||
	    !peer_same_ns(cred.pid, "user")) {
		err_set(why, len, "pid %ld runs in other namespaces than this "
		    "session (in its sandbox?) and may not attach to it",
		    (long)cred.pid);
		return false;
	}
	return true;
}

/* ---- the client ---------------------------------------------------- */

/* The first line of the server, read a byte at a time (what follows it
 * is the conn's), within PEER_HELLO_MS: a new reference, or NULL with
 * err. */
static json_t *
peer_read_hello(int fd, const char *path, char *err, size_t len)
{
	char line[PEER_KEY_MAX];
	int64_t end = now_ms() + PEER_HELLO_MS, left;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;
	ssize_t got;
	json_t *o;

	while (n < sizeof line - 1) {
		left = end - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			err_set(err, len, "the session on '%s' said nothing "
			    "in %d seconds", path, PEER_HELLO_MS / 1000);
			return NULL;
		}
		got = read(fd, &line[n], 1);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0) {
			err_set(err, len, "the session on '%s' closed the "
			    "connection before its hello%s%s", path, got < 0 ?
			    ": " : "", got < 0 ? strerror(errno) : "");
			return NULL;
		}
		if (line[n] == '\n')
			break;
		n++;
	}
	o = json_loadb(line, n, 0, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		err_set(err, len, "the server on '%s' does not speak coil's "
		    "attach protocol", path);
		return NULL;
	}
	return o;
}

/* Connect to NAME in the held directory dfd (path for messages). */
static int
peer_dial(int dfd, const char *dir, const char *name, const char *path,
    char *err, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n, fd;

	n = snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s",
	    dfd, name);
	if (n < 0 || (size_t)n >= sizeof sa.sun_path)
		return err_set(err, len, "the socket name in '%s' is too long "
		    "for a unix socket", dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return err_set(err, len, "socket: %s", strerror(errno));
	/* fs(held): the socket, through the directory held (dfd) */
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1) {
		err_set(err, len, "cannot attach to '%s': %s (is a coil "
		    "--agent --listen serving it?)", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The peer of fd is the process the key names, as the kernel says:
 * 0, or -1 with what differs in why. */
static int
peer_is_keyed(int fd, const json_t *key, char *why, size_t len)
{
	long want = (long)json_integer_value(json_object_get(key, "pid"));
	struct ucred cred;
	socklen_t clen = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == -1 ||
	    clen != sizeof cred)
		return err_set(why, len, "the kernel does not say who serves "
		    "it: %s", strerror(errno));
	if (cred.uid != geteuid())
		return err_set(why, len, "it is served by uid %ld, not by you",
		    (long)cred.uid);
	if (cred.pid != want)
		return err_set(why, len, "it is served by pid %ld, not by the "
		    "session that made it (pid %ld)", (long)cred.pid, want);
	if (!peer_key_live(key))
		return err_set(why, len, "the session that made it (pid %ld) "
		    "is gone", want);
	return 0;
}

/* The server's hello on the socket at path: 0 when it is the session's
 * (its token is key's), else -1 with err filled (a refusal says why). */
static int
peer_check_hello(json_t *hello, json_t *key, const char *path, char *err,
    size_t len)
{
	const char *ev, *tok;

	ev = json_string_value(json_object_get(hello, "event"));
	tok = json_string_value(json_object_get(hello, "token"));
	if (ev != NULL && strcmp(ev, "refused") == 0) {
		ev = json_string_value(json_object_get(hello, "message"));
		err_set(err, len, "the session on '%s' refused: %s", path,
		    ev != NULL ? ev : "no reason given");
		return -1;
	}
	if (ev == NULL || strcmp(ev, "hello") != 0 || tok == NULL ||
	    strcmp(tok, json_string_value(json_object_get(key, "token"))) !=
	    0) {
		err_set(err, len, "refusing to attach to '%s': its server "
		    "does not know the session's key", path);
		return -1;
	}
	return 0;
}

int
peer_connect(const char *path, char *me, size_t melen, char *err,
    size_t len)
{
	char *copy = xstrdup(path), *copy2 = xstrdup(path);
	char *dir = dirname(copy), *name = basename(copy2), why[256];
	char kname[64];
	struct peer_key k;
	struct stat st;
	json_t *key = NULL, *hello = NULL;
	const char *given;
	int dfd, fd = -1, rc = -1;

	peer_key_init(&k);
	/* fs(user): the socket's directory as the user named it; what
	 * serves there is checked against its key below */
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1) {
		err_set(err, len, "cannot attach to '%s': %s", path,
		    strerror(errno));
		goto out;
	}
	/* fs(held): in that directory, held */
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		err_set(err, len, "cannot attach to '%s': %s (is a coil "
		    "--agent --listen serving it?)", path, strerror(errno));
		goto out;
	}
	if (!S_ISSOCK(st.st_mode)) {
		err_set(err, len, "cannot attach to '%s': it is not a socket",
		    path);
		goto out;
	}
	if (peer_keydir(&k, false, why, sizeof why) == -1) {
		err_set(err, len, "refusing to attach to '%s': no key to check "
		    "its server with (%s); is a coil --agent --listen serving "
		    "it, with this XDG_RUNTIME_DIR?", path, why);
		goto out;
	}
	snprintf(kname, sizeof kname, "attach-%llu-%llu",
	    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	if ((key = peer_key_read(k.dirfd, kname, why, sizeof why)) == NULL) {
		err_set(err, len, "refusing to attach to '%s': no coil "
		    "session made that socket (its key '%s/%s': %s); a cell "
		    "may have replaced it, or the session has another "
		    "XDG_RUNTIME_DIR", path, k.dir, kname, why);
		goto out;
	}
	if ((fd = peer_dial(dfd, dir, name, path, err, len)) == -1)
		goto out;
	if (peer_is_keyed(fd, key, why, sizeof why) == -1) {
		err_set(err, len, "refusing to attach to '%s': %s; a cell may "
		    "have replaced the socket: keep it in a directory cells "
		    "cannot write", path, why);
		goto out;
	}
	if ((hello = peer_read_hello(fd, path, err, len)) == NULL ||
	    peer_check_hello(hello, key, path, err, len) == -1)
		goto out;
	given = json_string_value(json_object_get(hello, "name"));
	snprintf(me, melen, "%s", given != NULL && peer_label_ok(given) ?
	    given : "");
	rc = 0;
out:
	if (rc == -1 && fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	peer_key_remove(&k);	/* k.name is "": closes KEYDIR only */
	json_decref(key);
	json_decref(hello);
	free(copy);
	free(copy2);
	return rc == 0 ? fd : -1;
}
