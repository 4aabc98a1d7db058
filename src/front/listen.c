/*
 * listen.c - the attach socket (see listen.h).
 *
 * Each client is a conn (conn.h) and a client of the session with
 * SESSION_OBSERVE: its own requests are answered as on stdin (plus seq
 * and origin), and every event of the session reaches it as a line,
 * after the history of the cells that ran before it came.  A client
 * whose first line is a hello asking for figures (coil --attach) gets
 * their bytes too (lclient_hello); the others' lines stay as they were.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "hostfs.h"
#include "listen.h"
#include "peer.h"
#include "response.h"
#include "util.h"
#include "wire.h"

struct lclient {
	struct listener *l;
	struct conn io;
	int client;		/* the session's tag; 0 once detached */
	char name[PEER_NAME_MAX + 8];	/* the session's name for it */
	bool refused;		/* another user: close once told so */
	bool hup;		/* the peer closed its socket whole */
	bool lines;		/* a line came: no hello after it */
	bool figures;		/* its hello asked for figures' bytes */
};

struct listener {
	struct session *s;
	const struct coil_opts *opts;
	char *path;
	char *base;		/* the socket's name in its directory */
	struct hostfs_dir parent; /* the socket directory's, held */
	char *dir_name;		/* the socket directory's name in it */
	bool made_dir;		/* we made it: removed at the end */
	int dirfd;		/* the directory, held: paths of any length */
	bool placed;		/* the socket is ours to remove at the end */
	struct peer_key key;	/* its key, for the peers' check (peer.h) */
	int fd;			/* -1 once quiet */
	struct lclient **c;
	int n;
};

/* ---- the socket ----------------------------------------------------- */

/* The socket's directory: ours and closed to everyone else, made when
 * it is not there, and held open so that the checks and the binding see
 * the same directory.  It is reached through hostfs's walk (hostfs.h):
 * no link a cell may have planted on the way is followed; its parent is
 * held too, to remove the directory by name at the end.  0, or -1 with
 * err. */
static int
listen_dir(struct listener *l, char *err, size_t len)
{
	char *copy = xstrdup(l->path), *dir = dirname(copy), why[256];
	struct stat st;
	int rc = 0;

	/* fs(walked): the socket dir's parent, and the dir in it */
	if (hostfs_walk(dir, HOSTFS_PARENT, &l->parent, &l->dir_name, why,
	    sizeof why) == -1)
		rc = err_set(err, len, "cannot use %s for the listen socket: "
		    "%s", dir, why);
	/* fs(walked): in the socket's directory, held since hostfs's walk */
	else if (mkdirat(l->parent.fd, l->dir_name, 0700) == 0)
		l->made_dir = true;
	else if (errno != EEXIST)
		rc = err_set(err, len, "cannot make %s for the listen socket: "
		    "%s", dir, strerror(errno));
	if (rc == 0) {
		/* fs(walked): in the socket's directory, held since
		 * hostfs's walk */
		l->dirfd = openat(l->parent.fd, l->dir_name, O_PATH |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (l->dirfd == -1 && errno == ENOTDIR)
			rc = err_set(err, len, "%s is not a directory", dir);
		else if (l->dirfd == -1 || fstat(l->dirfd, &st) == -1)
			rc = err_set(err, len, "cannot use %s for the listen "
			    "socket: %s", dir, strerror(errno));
	}
	if (rc == 0 && (st.st_uid != geteuid() || (st.st_mode & 077) != 0))
		rc = err_set(err, len, "the listen socket's directory %s must "
		    "be yours and closed to others (mode 0700); it is mode "
		    "%04o, owned by uid %ld", dir, (unsigned)(st.st_mode &
		    07777), (long)st.st_uid);
	free(copy);
	return rc;
}

/* The address of NAME in the socket's directory: through the held
 * directory in /proc, so that no path is resolved again (and a deep
 * directory works too).  0, or -1 with err. */
static int
listen_addr(const struct listener *l, const char *name,
    struct sockaddr_un *sa, char *err, size_t len)
{
	int n;

	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s",
	    l->dirfd, name);
	if (n >= 0 && (size_t)n < sizeof sa->sun_path)
		return 0;
	return err_set(err, len, "the listen socket's name %s is too long "
	    "for a unix socket", l->base);
}

/* Something is at the path already: a stale socket of a coil that
 * ended is replaced, anything else refused. */
static int
listen_clear(struct listener *l, const struct sockaddr_un *sa, char *err,
    size_t len)
{
	struct stat st;
	int fd, rc;

	/* fs(walked): in the socket's directory, held since hostfs's walk */
	if (fstatat(l->dirfd, l->base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : err_set(err, len, "%s: %s",
		    l->path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return err_set(err, len, "%s exists and is not a socket",
		    l->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return err_set(err, len, "socket: %s", strerror(errno));
	/* fs(walked): in the socket's directory, held since hostfs's walk */
	rc = connect(fd, (const struct sockaddr *)sa, sizeof *sa);
	close(fd);
	if (rc == 0)
		return err_set(err, len, "another session listens on %s",
		    l->path);
	/* fs(walked): in the socket's directory, held since hostfs's walk */
	if (unlinkat(l->dirfd, l->base, 0) == -1)
		return err_set(err, len, "cannot remove the stale socket %s: "
		    "%s", l->path, strerror(errno));
	return 0;
}

/* Bind and listen under a temporary name, write its key (peer.h), then
 * rename it into place: the socket appears only once it takes
 * connections and its key is there to check its server by. */
static int
listen_bind(struct listener *l, char *err, size_t len)
{
	struct sockaddr_un sa, tmp;
	char name[NAME_MAX + 1];
	mode_t old;
	int n, rc;

	n = snprintf(name, sizeof name, "%s.%ld.tmp", l->base, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof name)
		return err_set(err, len, "the listen socket's name %s is too "
		    "long", l->base);
	if (listen_addr(l, l->base, &sa, err, len) == -1 ||
	    listen_addr(l, name, &tmp, err, len) == -1 ||
	    listen_clear(l, &sa, err, len) == -1)
		return -1;
	/* fs(walked): in the socket's directory, held since hostfs's walk */
	unlinkat(l->dirfd, name, 0);
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd == -1)
		return err_set(err, len, "socket: %s", strerror(errno));
	/* 0600 as it is made: no chmod by name afterwards, which would
	 * follow whatever a cell put there meanwhile. */
	old = umask(0177);
	/* fs(walked): in the socket's directory, held since hostfs's walk */
	rc = bind(l->fd, (struct sockaddr *)&tmp, sizeof tmp);
	umask(old);
	if (rc == -1)
		return err_set(err, len, "cannot listen on %s: %s", l->path,
		    strerror(errno));
	if (listen(l->fd, 16) == -1) {
		rc = errno;
		/* fs(walked): in the socket's directory, held since
		 * hostfs's walk */
		unlinkat(l->dirfd, name, 0);
		return err_set(err, len, "cannot listen on %s: %s", l->path,
		    strerror(rc));
	}
	if (peer_key_make(&l->key, l->dirfd, name, err, len) == -1) {
		/* fs(walked): in the socket's directory, held since
		 * hostfs's walk */
		unlinkat(l->dirfd, name, 0);
		return -1;
	}
	/* fs(walked): in the socket's directory, held since hostfs's walk */
	if (renameat(l->dirfd, name, l->dirfd, l->base) == -1) {
		rc = errno;
		unlinkat(l->dirfd, name, 0);
		return err_set(err, len, "cannot listen on %s: %s", l->path,
		    strerror(rc));
	}
	l->placed = true;
	return 0;
}

/*
 * --listen systemd: the socket systemd bound and passed (sdfd.h), used
 * where it is.  It must have a path, which coil --attach is given; its
 * directory is walked and held as listen_dir's is (no link followed)
 * and must be one no other user can write (or replace the socket in).
 * Its key is made as listen_bind's (peer.h), but after the socket
 * appeared: an attach in between is refused, never misled.  The socket
 * and its directory are systemd's: neither is removed at the end.
 */
static int
listen_passed(struct listener *l, int fd, char *err, size_t len)
{
	struct sockaddr_un sa;
	socklen_t salen = sizeof sa;
	char *name = NULL, why[256];
	struct stat st;
	int rc = -1;

	memset(&sa, 0, sizeof sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &salen) == -1 ||
	    salen <= offsetof(struct sockaddr_un, sun_path) ||
	    sa.sun_path[0] != '/' || memchr(sa.sun_path, '\0',
	    sizeof sa.sun_path) == NULL) {
		close(fd);
		return err_set(err, len, "the socket systemd passed is not "
		    "bound to an absolute path (it is abstract, unnamed or "
		    "relative), and coil --attach is given one: set "
		    "ListenStream=/PATH in the .socket unit");
	}
	l->fd = fd;
	free(l->path);
	l->path = xstrdup(sa.sun_path);
	l->base = strrchr(l->path, '/') + 1;
	/* fs(walked): the passed socket's directory, and its name there */
	if (hostfs_walk(l->path, HOSTFS_PARENT, &l->parent, &name, why,
	    sizeof why) == -1) {
		err_set(err, len, "cannot use the socket systemd passed, %s: "
		    "%s", l->path, why);
		goto out;
	}
	l->dirfd = fcntl(l->parent.fd, F_DUPFD_CLOEXEC, 0);
	if (l->dirfd == -1 || fstat(l->dirfd, &st) == -1) {
		err_set(err, len, "%s: %s", l->path, strerror(errno));
		goto out;
	}
	if ((st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & 022) != 0) {
		err_set(err, len, "the directory of the socket systemd passed, "
		    "%s, is mode %04o, owned by uid %ld: others can replace "
		    "the socket there; put it in a directory only you (or "
		    "root) can write, such as %%t/coil.sock", l->path,
		    (unsigned)(st.st_mode & 07777), (long)st.st_uid);
		goto out;
	}
	rc = peer_key_make(&l->key, l->dirfd, l->base, err, len);
out:
	free(name);
	return rc;
}

/* ---- what cells reach ----------------------------------------------- */

/* The canonical path real is dir or lies in it. */
static bool
listen_within(const char *real, const char *dir)
{
	/* fs(user): the roots the user named (work dir, --allow-*),
	 * compared, not opened */
	char *d = realpath(dir, NULL);
	size_t n = d != NULL ? strlen(d) : 0;
	bool in = d != NULL && strncmp(real, d, n) == 0 && (n == 1 ||
	    real[n] == '/' || real[n] == '\0');

	free(d);
	return in;
}

/* The first of the places cells may write (and with reads, read) that
 * holds the canonical path real: what it is, its path in *where; NULL
 * when none does.  Their roots are the sandbox's binds, which a cell
 * cannot move. */
static const char *
listen_cells_reach(const struct coil_opts *o, const char *real, bool reads,
    const char **where)
{
	const struct sandbox_conf *c = &o->sbx;
	size_t i;

	*where = o->workdir;
	if (listen_within(real, o->workdir))
		return "the work dir";
	for (i = 0; i < c->n_allow_write; i++)
		if (listen_within(real, *where = c->allow_write[i]))
			return "the --allow-write dir";
	for (i = 0; reads && i < c->n_allow_read; i++)
		if (listen_within(real, *where = c->allow_read[i]))
			return "the --allow-read dir";
	for (i = 0; reads && i < c->n_python_paths; i++)
		if (listen_within(real, *where = c->python_paths[i]))
			return "Python's dir";
	return NULL;
}

/* The canonical path of the held directory fd, into buf. */
static const char *
listen_fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	/* fs(proc): the held directory's name, through /proc/self/fd */
	n = readlink(link, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* The key must be where no cell reads (peer.h); under none nothing is,
 * and the person is told so with the socket's warning.  0, or -1. */
static int
listen_key_dir(struct listener *l, char *err, size_t len)
{
	const char *what, *where;

	if (peer_keydir_open(&l->key, err, len) == -1)
		return -1;
	if (l->opts->sbx.profile == SANDBOX_NONE)
		return 0;
	what = listen_cells_reach(l->opts, l->key.dir, true, &where);
	if (what != NULL)
		return err_set(err, len, "the attach key's directory '%s' lies "
		    "in %s '%s', where cells can read it: set XDG_RUNTIME_DIR "
		    "to a directory of yours outside it", l->key.dir, what,
		    where);
	return 0;
}

/* A socket whose directory cells can write can be removed, or replaced
 * by a cell's own server: coil --attach refuses that server (peer.h),
 * so the person is not fooled, but the attach fails.  That is worth a
 * warning, not a refusal: a socket beside the project (--listen
 * ./coil.sock) is the common case, and a cell can stop a session in
 * many other ways. */
static void
listen_warn(const struct listener *l)
{
	char real[PATH_MAX];
	const char *what, *where;

	if (l->opts->sbx.profile == SANDBOX_NONE) {
		coil_warn("--listen under --sandbox none: "
		    "cells run as you, so they can replace the socket '%s' "
		    "and read its key in '%s': coil --attach cannot tell "
		    "their server from this session's", l->path,
		    l->key.dir);
		return;
	}
	listen_fd_path(l->dirfd, real, sizeof real);
	what = listen_cells_reach(l->opts, real, false, &where);
	if (what != NULL)
		coil_warn("--listen: the socket's "
		    "directory '%s' lies in %s '%s', which cells can write: a "
		    "cell can remove the socket or serve its own there (coil "
		    "--attach refuses to talk to it); put the socket in a "
		    "directory of yours outside it", real, what, where);
}

struct listener *
listener_open(const char *path, struct session *s,
    const struct coil_opts *opts, char *err, size_t len)
{
	struct listener *l = xcalloc(1, sizeof *l);

	l->s = s;
	l->opts = opts;
	l->path = xstrdup(path);
	l->base = strrchr(l->path, '/') != NULL ? strrchr(l->path, '/') + 1 :
	    l->path;
	l->dirfd = l->parent.fd = -1;
	l->fd = -1;
	peer_key_init(&l->key);
	if (opts->listen_fd >= 0 ? listen_key_dir(l, err, len) == -1 ||
	    listen_passed(l, opts->listen_fd, err, len) == -1 :
	    listen_dir(l, err, len) == -1 || listen_key_dir(l, err, len) == -1 ||
	    listen_bind(l, err, len) == -1) {
		if (l->fd >= 0)
			close(l->fd);
		l->fd = -1;
		listener_close(l, NULL, 0);
		return NULL;
	}
	listen_warn(l);
	return l;
}

/* ---- clients -------------------------------------------------------- */

/* An answer with its figures' bytes (session_figures_json) in the
 * response's "figure_data", for a client that asked for them. */
static void
lclient_figures(struct lclient *c, const struct session_event *ev)
{
	json_t *figs = session_figures_json(ev->resp), *o;

	if (ev->client == c->client) {
		o = response_json(ev->resp, RESPONSE_SEQ);
		json_object_set_new(o, "figure_data", figs);
	} else {
		o = session_event_json(ev);
		json_object_set_new(json_object_get(o, "response"),
		    "figure_data", figs);
	}
	wire_send(&c->io, o);
}

/* Our own answers are response lines; everything else an event line. */
static void
lclient_on_event(void *ctx, const struct session_event *ev)
{
	struct lclient *c = ctx;
	const char *text;
	size_t len;

	if (ev->kind == EV_RESPONSE && c->figures && ev->resp->nfigs > 0)
		lclient_figures(c, ev);
	else if (ev->kind == EV_RESPONSE && ev->client == c->client) {
		text = response_text(ev->resp, RESPONSE_SEQ, &len);
		wire_send_text(&c->io, text, len);
	} else
		wire_send(&c->io, session_event_json(ev));
}

/* A client's first line may be its hello, {"event": "hello", ...}, no
 * request (those have no "event"): "figures": true asks for figures'
 * bytes with each answer from now on, and at once for the cells of the
 * history it was sent.  True when the line was a hello. */
static bool
lclient_hello(struct lclient *c, const char *p, size_t n)
{
	json_t *o, *lines;
	const char *ev;
	size_t i;

	if (c->lines)
		return false;
	c->lines = true;
	if (memmem(p, n, "\"hello\"", 7) == NULL)
		return false;
	o = json_loadb(p, n, 0, NULL);
	ev = json_string_value(json_object_get(o, "event"));
	if (ev == NULL || strcmp(ev, "hello") != 0) {
		json_decref(o);
		return false;
	}
	c->figures = json_is_true(json_object_get(o, "figures"));
	json_decref(o);
	if (!c->figures)
		return true;
	lines = session_history_figures(c->l->s);
	for (i = 0; i < json_array_size(lines); i++)
		wire_send(&c->io, json_incref(json_array_get(lines, i)));
	json_decref(lines);
	return true;
}

static void
lclient_line(void *ctx, const char *p, size_t n)
{
	struct lclient *c = ctx;

	/* Not once detached, nor when the session takes no more. */
	if (c->client != 0 && c->l->fd >= 0 && !lclient_hello(c, p, n))
		wire_line(c->l->s, c->client, p, n);
}

static void
lclient_too_long(void *ctx, size_t bytes, const char *head,
    size_t headlen)
{
	struct lclient *c = ctx;

	if (c->client != 0 && c->l->fd >= 0)
		wire_too_long(c->l->s, c->client, bytes,
		    c->l->opts->max_request, head, headlen);
}

static const struct conn_ops lclient_ops = { lclient_line, lclient_too_long };

/* The client's name: its user and terminal (peer_name), or with a
 * number when that is taken (two UIs on one terminal, or none), so that
 * each attached person's cells say who ran them. */
static void
listen_name(struct lclient *c, int fd)
{
	char base[PEER_NAME_MAX];
	unsigned n;

	peer_name(fd, base, sizeof base);
	snprintf(c->name, sizeof c->name, "%s", base);
	for (n = 2; session_name_taken(c->l->s, c->name); n++)
		snprintf(c->name, sizeof c->name, "%s#%u", base, n);
}

/* A peer of another user, or of the sandbox (peer.h), hears why and
 * goes; one let in hears the hello with the key's token and its name
 * first. */
static bool
listen_peer_ok(struct lclient *c, int fd)
{
	char msg[200];

	if (peer_may_attach(fd, msg, sizeof msg)) {
		listen_name(c, fd);
		wire_send(&c->io, peer_hello(&c->l->key, c->name));
		return true;
	}
	wire_send(&c->io, json_pack("{s:s, s:s}", "event", "refused", "message",
	    msg));
	coil_error("refused an attach to %s: %s", c->l->path, msg);
	c->refused = true;
	return false;
}

/* What ran before the client came, before any event (session.h).  The
 * history's bound (SESSION_HISTORY_BYTES) is under the least a client's
 * queue holds (opts_max_queue), so a new client is never dropped for
 * it. */
_Static_assert(SESSION_HISTORY_BYTES < ((size_t)64 << 20),
    "the history fits the least client queue");

static void
listen_history(struct lclient *c)
{
	json_t *lines = session_history(c->l->s);
	size_t i;

	for (i = 0; i < json_array_size(lines); i++)
		wire_send(&c->io, json_incref(json_array_get(lines, i)));
	json_decref(lines);
}

static void
listen_accept(struct listener *l)
{
	struct lclient *c;
	int fd;

	fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd == -1)
		return;		/* EAGAIN, or a peer that left already */
	c = xcalloc(1, sizeof *c);
	c->l = l;
	conn_init(&c->io, fd, fd, l->opts->max_request, opts_max_queue(
	    l->opts));
	l->c = xrealloc(l->c, (size_t)(l->n + 1) * sizeof *l->c);
	l->c[l->n++] = c;
	if (listen_peer_ok(c, fd)) {
		/* The events on their way are of what the history tells:
		 * to the clients that were there first, or this one hears
		 * of the cells waiting and running twice. */
		session_deliver(l->s);
		c->client = session_attach(l->s, ORIGIN_PERSON, SESSION_OBSERVE,
		    lclient_on_event, c);
		session_name(l->s, c->client, c->name);
		listen_history(c);
	}
}

static void
lclient_free(struct lclient *c)
{
	conn_free(&c->io);
	free(c);
}

/* Clients that left, stopped reading, or were refused and told.  One
 * that only shut its writing half after its requests (as nc -N does)
 * still reads: it is not gone while they are owed an answer, as at the
 * end of the agent's stdin.  One that closed its socket (the kernel
 * says POLLHUP then, not for a half) is gone. */
static void
listen_reap(struct listener *l)
{
	int i, n = 0;

	for (i = 0; i < l->n; i++) {
		struct lclient *c = l->c[i];
		bool owed = c->io.eof && !c->hup && c->client != 0 &&
		    conn_dropped(&c->io) == NULL &&
		    session_hangup(l->s, c->client);
		bool gone = conn_dropped(&c->io) != NULL || (c->io.eof &&
		    !owed && conn_pending(&c->io) == 0) || (c->refused &&
		    conn_pending(&c->io) == 0);

		if (!gone) {
			l->c[n++] = c;
			continue;
		}
		if (conn_dropped(&c->io) != NULL && c->client != 0)
			coil_error("an attached client was dropped: %s",
			    conn_dropped(&c->io));
		if (c->client != 0)
			session_detach(l->s, c->client);
		lclient_free(c);
	}
	l->n = n;
}

int
listener_fds(const struct listener *l, struct pollfd *pfd, int max)
{
	int i, n = 1 + 2 * l->n;

	if (max >= 1)
		pfd[0] = (struct pollfd){ .fd = l->fd, .events = POLLIN };
	for (i = 0; i < l->n && 1 + 2 * i + 1 < max; i++)
		conn_pollfds(&l->c[i]->io, &pfd[1 + 2 * i]);
	return n;
}

void
listener_run(struct listener *l, const struct pollfd *pfd, int n)
{
	int i, have = (n - 1) / 2;

	/* Clients first: listen_accept may grow l->c past what was polled. */
	for (i = 0; i < l->n && i < have; i++) {
		struct lclient *c = l->c[i];

		if (pfd[1 + 2 * i].revents & (POLLHUP | POLLERR))
			c->hup = true;
		if (pfd[1 + 2 * i].revents && !c->refused && l->fd >= 0)
			conn_read(&c->io, &lclient_ops, c);
		else if (pfd[1 + 2 * i].revents & (POLLHUP | POLLERR))
			c->io.eof = true;
		if (pfd[2 + 2 * i].revents)
			conn_flush(&c->io);
	}
	if (n >= 1 && l->fd >= 0 && (pfd[0].revents & POLLIN))
		listen_accept(l);
	listen_reap(l);
}

void
listener_quiet(struct listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

void
listener_close(struct listener *l, const char *reason, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	int i;

	if (l == NULL)
		return;
	listener_quiet(l);
	for (i = 0; i < l->n; i++) {
		struct lclient *c = l->c[i];
		int64_t left = end - now_ms();

		if (c->client != 0)
			session_detach(l->s, c->client);
		if (reason != NULL && !c->refused)
			wire_send(&c->io, json_pack("{s:s, s:s}", "event", "end",
			    "reason", reason));
		conn_drain(&c->io, left > 0 ? (int)left : 0);
		lclient_free(c);
	}
	free(l->c);
	/* fs(walked): in the socket's directory, held since hostfs's walk */
	if (l->placed)
		unlinkat(l->dirfd, l->base, 0);
	peer_key_remove(&l->key);
	if (l->dirfd >= 0)
		close(l->dirfd);
	/* fs(walked): by name in its parent, held since the start */
	if (l->made_dir)
		unlinkat(l->parent.fd, l->dir_name, AT_REMOVEDIR);
	hostfs_close(&l->parent);
	free(l->dir_name);
	free(l->path);
	free(l);
}
