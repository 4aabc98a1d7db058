/*
 * mcp-http.c - MCP over Streamable HTTP (see mcp-http.h): sessions,
 * their streams, and the loop that serves libmicrohttpd beside the hub.
 *
 * libmicrohttpd runs without a thread of its own: its epoll descriptor
 * is one entry of the loop's poll, MHD_run serves what is ready, and a
 * call's answer, which comes later from the hub, is written through a
 * suspended connection: a stream's reader suspends it when it has
 * nothing to write, and a new event resumes it (libmicrohttpd's own
 * eventfd wakes the loop).  The supervisor stays single-threaded
 * (session.h says why it must).
 *
 * A stream keeps every event it was given (each "id: S.N" for stream
 * S, event N; N 0 is the priming event 2025-11-25 asks for) until it
 * was written whole to a connection that completed; so a client that
 * drops its connection resumes with GET and Last-Event-ID and gets the
 * rest, the call's answer too.  A session keeps at most HTTP_STREAMS
 * streams not yet delivered (the oldest finished one is let go).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "agent.h"
#include "jsonline.h"
#include "mcp-http.h"
#include "mcp-http-int.h"
#include "mcp-int.h"
#include "replay.h"
#include "session.h"
#include "util.h"

#define HTTP_SESSIONS	256	/* MCP sessions at once */
#define HTTP_CONNS	512	/* connections at once */
#define HTTP_IDLE_S	120	/* an idle connection is closed */
#define HTTP_STATELESS	"2026-07-28"
#define HTTP_DRAIN_MS	2000	/* to write the last answers */

struct http {
	const struct coil_opts *opts;
	struct session *s;
	struct http_edge edge;
	struct MHD_Daemon *d;
	int epfd, sfd, signo;
	struct hsess *sessions, *stateless;
	struct hsess *transients;	/* 2026-07-28 calls', in flight */
	int nsess, ntrans;
	char full[256];		/* the 503 when HTTP_SESSIONS are taken */
	int64_t next_expiry;	/* of an idle session (now_ms), or -1 */
	struct pollfd *pfd;
	size_t npfd;
};

/* ---- sessions ------------------------------------------------------- */

/* mcp.c's messages: what the POST being served says is its answer; a
 * call's progress and result go to the call's stream; the rest (a
 * warning) to the session's GET stream, when it has one. */
static void
http_out(void *ctx, json_t *id, const char *line, size_t len)
{
	struct hsess *hs = ctx;
	struct hstream *st;

	hs->used = now_ms();
	if (hs->cur != NULL) {
		buf_add(hs->cur, line, len);
		return;
	}
	for (st = hs->streams; st != NULL; st = st->next)
		if (!st->done && (id == NULL ? st->id == NULL :
		    st->id != NULL && json_equal(st->id, id))) {
			http_stream_add(st, line, len, st->id != NULL &&
			    http_is_answer(line, len));
			return;
		}
}

static void
http_on_event(void *ctx, const struct session_event *ev)
{
	struct hsess *hs = ctx;

	mcp_proto.event(&hs->io, ev);
}

static struct hsess *
http_sess_new(struct http *h, bool named)
{
	struct hsess *hs = xcalloc(1, sizeof *hs);
	unsigned char raw[16];
	size_t i;

	hs->h = h;
	if (named) {
		if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
			fatal_errno("getrandom");
		for (i = 0; i < sizeof raw; i++)
			snprintf(hs->sid + 2 * i, 3, "%02x", raw[i]);
	}
	hs->io.opts = h->opts;
	hs->io.s = h->s;
	hs->io.proto = mcp_new(h->opts, http_out, hs);
	hs->io.client = session_attach(h->s, ORIGIN_AGENT,
	    mcp_proto.attach_flags, http_on_event, hs);
	hs->used = now_ms();
	return hs;
}

/* End hs: its client leaves the hub (a running cell runs on), its
 * streams end.  Unlinked by the caller. */
static void
http_sess_free(struct http *h, struct hsess *hs, bool detach)
{
	while (hs->streams != NULL)
		http_stream_free(hs, hs->streams);
	if (detach)
		session_detach(h->s, hs->io.client);
	mcp_free(hs->io.proto);
	free(hs);
}

/*
 * Idle expiry (--http-idle): a session is busy while a connection reads
 * one of its streams or a call of its waits for its answer; otherwise
 * it is idle since hs->used, the last request, message or reader's end.
 * One idle for --http-idle ends, as DELETE would end it: its client
 * leaves the hub, its streams go, and its id gets 404 after (the client
 * initializes anew).  A client that vanished holds no slot for ever.
 */
static bool
http_sess_busy(const struct hsess *hs)
{
	const struct hstream *st;

	for (st = hs->streams; st != NULL; st = st->next)
		if (st->r != NULL || (st->id != NULL && !st->done))
			return true;
	return false;
}

/* When hs expires (now_ms's clock), or -1: never, or busy now. */
static int64_t
http_sess_expiry(const struct http *h, const struct hsess *hs)
{
	if (h->opts->http_idle <= 0 || http_sess_busy(hs))
		return -1;
	return hs->used + (int64_t)(h->opts->http_idle * 1000);
}

/* End the sessions idle for --http-idle; the next expiry, or -1. */
static int64_t
http_expire(struct http *h)
{
	struct hsess **pp = &h->sessions, *hs;
	int64_t now = now_ms(), when, next = -1;

	while ((hs = *pp) != NULL) {
		when = http_sess_expiry(h, hs);
		if (when >= 0 && when <= now) {
			*pp = hs->next;
			h->nsess--;
			http_sess_free(h, hs, true);
			continue;
		}
		if (when >= 0 && (next < 0 || when < next))
			next = when;
		pp = &hs->next;
	}
	return next;
}

/* The session of id sid, or NULL: one past its expiry is ended first,
 * whether or not the loop came to it yet, so that a client idle for
 * --http-idle always hears 404. */
static struct hsess **
http_sess_find(struct http *h, const char *sid)
{
	struct hsess **pp;

	http_expire(h);
	for (pp = &h->sessions; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->sid, sid) == 0)
			return pp;
	return NULL;
}

/*
 * A 2026-07-28 call has no session: it gets a client of the hub of its
 * own, a transient one, so that the ids of clients that share nothing
 * never meet; it goes when its stream was read whole.  A cancel names
 * its call by id alone, so it reaches a call only when one call in
 * flight has that id.  At most HTTP_SESSIONS are kept; beyond, the
 * oldest that no connection reads goes.
 */
static struct hsess *
http_trans_new(struct http *h)
{
	struct hsess *hs, **pp, **old = NULL;

	if (h->ntrans >= HTTP_SESSIONS) {
		for (pp = &h->transients; *pp != NULL; pp = &(*pp)->next)
			if (((*pp)->streams == NULL ||
			    (*pp)->streams->r == NULL) && (old == NULL ||
			    (*pp)->used < (*old)->used))
				old = pp;
		if (old != NULL) {
			hs = *old;
			*old = hs->next;
			h->ntrans--;
			http_sess_free(h, hs, true);
		}
	}
	hs = http_sess_new(h, false);
	hs->transient = true;
	hs->next = h->transients;
	h->transients = hs;
	h->ntrans++;
	return hs;
}

/* Let hs go when it is transient and has nothing left to deliver. */
static void
http_trans_done(struct http *h, struct hsess *hs)
{
	struct hsess **pp;

	if (!hs->transient || hs->streams != NULL)
		return;
	for (pp = &h->transients; *pp != NULL; pp = &(*pp)->next)
		if (*pp == hs) {
			*pp = hs->next;
			h->ntrans--;
			http_sess_free(h, hs, true);
			return;
		}
}

/* The transient client of the one call in flight of id rid, or NULL. */
static struct hsess *
http_trans_of(struct http *h, json_t *rid)
{
	struct hsess *hs, *found = NULL;
	int n = 0;

	for (hs = h->transients; rid != NULL && hs != NULL; hs = hs->next)
		if (hs->streams != NULL && !hs->streams->done &&
		    json_equal(hs->streams->id, rid))
			found = hs, n++;
	return n == 1 ? found : NULL;
}

/* The client a 2026-07-28 message is served by. */
static struct hsess *
http_stateless_of(struct http *h, json_t *msg, const char *method)
{
	struct hsess *hs;

	if (method != NULL && strcmp(method, "tools/call") == 0 &&
	    json_object_get(msg, "id") != NULL)
		return http_trans_new(h);
	if (method != NULL && strcmp(method, "notifications/cancelled") == 0 &&
	    (hs = http_trans_of(h, json_object_get(json_object_get(msg,
	    "params"), "requestId"))) != NULL)
		return hs;
	if (h->stateless == NULL)
		h->stateless = http_sess_new(h, false);
	return h->stateless;
}

/* ---- the methods ---------------------------------------------------- */

static const char *
http_header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* The session a request is for: *hs, or a refusal already queued
 * (returns false with *rc set).  initialize without a session id makes
 * one (*made); a 2026-07-28 request needs none. */
static bool
http_sess_of(struct http *h, struct MHD_Connection *c, json_t *msg,
    struct hsess **hs, bool *made, enum MHD_Result *rc)
{
	const char *sid = http_header(c, "Mcp-Session-Id"),
	    *ver = http_header(c, "MCP-Protocol-Version"),
	    *method = json_string_value(json_object_get(msg, "method")),
	    *meta = json_string_value(json_object_get(json_object_get(
	    json_object_get(msg, "params"), "_meta"),
	    "io.modelcontextprotocol/protocolVersion"));
	struct hsess **pp;

	*made = false;
	if (sid != NULL) {
		if ((pp = http_sess_find(h, sid)) != NULL) {
			*hs = *pp;
			return true;
		}
		*rc = http_refuse(c, MHD_HTTP_NOT_FOUND, "session not found: "
		    "it ended, or was never made; initialize anew");
		return false;
	}
	if ((ver != NULL && strcmp(ver, HTTP_STATELESS) == 0) ||
	    (meta != NULL && strcmp(meta, HTTP_STATELESS) == 0)) {
		*hs = http_stateless_of(h, msg, method);
		return true;
	}
	if (method != NULL && strcmp(method, "initialize") == 0 &&
	    json_object_get(msg, "id") != NULL) {
		http_expire(h);
		if (h->nsess >= HTTP_SESSIONS) {
			*rc = http_refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			    h->full);
			return false;
		}
		*hs = http_sess_new(h, true);
		*made = true;
		return true;
	}
	*rc = http_refuse(c, MHD_HTTP_BAD_REQUEST, "bad request: no "
	    "Mcp-Session-Id: send initialize first, then its session id "
	    "with every request");
	return false;
}

static enum MHD_Result
http_post_answer(struct http *h, struct hsess *hs, struct hreq *q,
    struct MHD_Connection *c, json_t *msg, struct buf *out, bool made)
{
	json_t *id = json_object_get(msg, "id");
	bool request = json_is_string(json_object_get(msg, "method")) &&
	    id != NULL && !json_is_null(id);
	struct hstream *st;
	const char *ver;

	if (made && !http_has_result(out)) {
		/* A failed initialize makes no session. */
		http_sess_free(h, hs, true);
		return http_reply(c, MHD_HTTP_OK, "application/json", out->p,
		    out->len, NULL);
	}
	if (made) {
		hs->next = h->sessions;
		h->sessions = hs;
		h->nsess++;
	}
	if (out->len > 0)
		return http_reply(c, request ? MHD_HTTP_OK :
		    MHD_HTTP_BAD_REQUEST, "application/json", out->p,
		    out->len, hs->sid);
	if (!request)
		return http_reply(c, MHD_HTTP_ACCEPTED, NULL, "", 0, hs->sid);
	/* A call whose answer comes later: its stream, primed for a
	 * client of 2025-11-25 or later (the revision that asks for it;
	 * an earlier one may take an event without data for an error). */
	st = http_stream_new(hs, id);
	http_stream_bound(hs);
	ver = http_header(c, "MCP-Protocol-Version");
	return http_stream_serve(hs, q, c, st, ver != NULL &&
	    strcmp(ver, "2025-11-25") >= 0 ? 0 : 1);
}

/* A call the client cancelled has no answer (mcp.c sends none): its
 * stream ends here. */
static void
http_cancelled(struct hsess *hs, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *rid = json_object_get(json_object_get(msg, "params"),
	    "requestId");
	struct hstream *st;

	if (method == NULL || strcmp(method, "notifications/cancelled") != 0 ||
	    rid == NULL || json_object_get(msg, "id") != NULL)
		return;
	for (st = hs->streams; st != NULL; st = st->next)
		if (!st->done && st->id != NULL && json_equal(st->id, rid)) {
			st->done = true;
			http_reader_wake(st->r);
		}
}

static enum MHD_Result
http_post(struct http *h, struct hreq *q, struct MHD_Connection *c)
{
	struct hsess *hs = NULL;
	json_t *msg;
	struct buf out;
	bool made;
	enum MHD_Result rc;

	msg = jsonline_load(q->body.p != NULL ? q->body.p : "", q->body.len,
	    JSON_ALLOW_NUL | JSON_DECODE_ANY, NULL);
	if (json_is_object(msg) && !http_sess_of(h, c, msg, &hs, &made,
	    &rc)) {
		json_decref(msg);
		return rc;
	}
	if (hs == NULL) {
		/* Not a message at all: mcp.c words the error, for no
		 * session in particular. */
		if (h->stateless == NULL)
			h->stateless = http_sess_new(h, false);
		hs = h->stateless;
		made = false;
	}
	hs->used = now_ms();
	buf_init(&out);
	hs->cur = &out;
	mcp_proto.line(&hs->io, q->body.p != NULL ? q->body.p : "",
	    q->body.len);
	hs->cur = NULL;
	http_cancelled(hs, msg);
	rc = http_post_answer(h, hs, q, c, msg, &out, made);
	http_trans_done(h, hs);
	buf_free(&out);
	json_decref(msg);
	return rc;
}

/* GET: the session's own stream, or with Last-Event-ID "S.N" the rest
 * of its stream S after event N. */
static enum MHD_Result
http_get(struct hsess *hs, struct hreq *q, struct MHD_Connection *c)
{
	const char *last = http_header(c, "Last-Event-ID"),
	    *accept = http_header(c, "Accept");
	struct hstream *st;
	unsigned long no;
	uintmax_t n;
	char *end;

	if (accept == NULL || !http_accepts(accept, "text/event-stream"))
		return http_refuse(c, MHD_HTTP_NOT_ACCEPTABLE, "not "
		    "acceptable: GET /mcp is a text/event-stream");
	if (last == NULL) {
		for (st = hs->streams; st != NULL; st = st->next)
			if (st->id == NULL && !st->done)
				break;
		if (st != NULL && st->r != NULL)
			return http_refuse(c, MHD_HTTP_CONFLICT, "conflict: "
			    "this session's stream is being read already");
		/* A new one is primed, as a call's is; one resumed
		 * without an id goes on from now. */
		if (st == NULL)
			return http_stream_serve(hs, q, c,
			    http_stream_new(hs, NULL), 0);
		return http_stream_serve(hs, q, c, st, st->nev);
	}
	errno = 0;
	no = strtoul(last, &end, 10);
	if (end == last || *end != '.' || errno != 0 ||
	    (n = strtoumax(end + 1, &end, 10), *end != '\0' || errno != 0))
		return http_refuse(c, MHD_HTTP_BAD_REQUEST, "bad request: "
		    "Last-Event-ID is not an event id of coil's (S.N)");
	for (st = hs->streams; st != NULL; st = st->next)
		if (st->no == no)
			break;
	if (st == NULL || n >= st->nev)
		return http_refuse(c, MHD_HTTP_BAD_REQUEST, "bad request: "
		    "Last-Event-ID names no event this session keeps (its "
		    "stream was read whole, or never was)");
	return http_stream_serve(hs, q, c, st, (size_t)n + 1);
}

/* The session of a GET or DELETE: *pp, or a refusal queued. */
static bool
http_sess_named(struct http *h, struct MHD_Connection *c,
    struct hsess ***pp, enum MHD_Result *rc)
{
	const char *sid = http_header(c, "Mcp-Session-Id");

	if (sid == NULL) {
		*rc = http_refuse(c, MHD_HTTP_BAD_REQUEST, "bad request: no "
		    "Mcp-Session-Id");
		return false;
	}
	if ((*pp = http_sess_find(h, sid)) == NULL) {
		*rc = http_refuse(c, MHD_HTTP_NOT_FOUND, "session not found: "
		    "it ended, or was never made; initialize anew");
		return false;
	}
	return true;
}

static enum MHD_Result
http_method(struct http *h, struct hreq *q, struct MHD_Connection *c,
    const char *method)
{
	struct hsess **pp, *hs;
	enum MHD_Result rc;

	if (strcmp(method, "POST") == 0) {
		if (q->over)
			return http_refuse(c, MHD_HTTP_CONTENT_TOO_LARGE,
			    "content too large: the body is over "
			    "--max-request");
		return http_post(h, q, c);
	}
	if (!http_sess_named(h, c, &pp, &rc))
		return rc;
	(*pp)->used = now_ms();
	if (strcmp(method, "GET") == 0)
		return http_get(*pp, q, c);
	hs = *pp;
	*pp = hs->next;
	h->nsess--;
	http_sess_free(h, hs, true);
	return http_reply(c, MHD_HTTP_OK, NULL, "", 0, NULL);
}

static enum MHD_Result
http_access(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *data,
    size_t *size, void **con_cls)
{
	struct http *h = cls;
	struct hreq *q = *con_cls;
	enum MHD_Result rc;

	(void)version;
	if (q == NULL) {
		q = xcalloc(1, sizeof *q);
		buf_init(&q->body);
		*con_cls = q;
		if (http_edge_headers(&h->edge, h->opts->max_request, c, url,
		    method, &rc) == -1) {
			q->seen = true;
			return rc;
		}
		return MHD_YES;
	}
	if (*size > 0) {
		/* Beyond the bound, the rest is read and dropped. */
		if (!q->over && q->body.len + *size > h->opts->max_request)
			q->over = true, buf_free(&q->body), buf_init(&q->body);
		if (!q->over)
			buf_add(&q->body, data, *size);
		*size = 0;
		return MHD_YES;
	}
	if (q->seen)
		return MHD_YES;
	q->seen = true;
	return http_method(h, q, c, method);
}

/* A request is over: a stream written whole to a connection that
 * completed was delivered, and is let go. */
static void
http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http *h = cls;
	struct hreq *q = *con_cls;
	struct hreader *r;
	struct hsess *hs;

	(void)c;
	if (q == NULL)
		return;
	r = q->r;
	if (r != NULL && r->st != NULL && toe ==
	    MHD_REQUEST_TERMINATED_COMPLETED_OK && r->st->done &&
	    r->next == r->st->nev) {
		for (hs = h->sessions; hs != NULL; hs = hs->next)
			if (http_stream_owned(hs, r->st))
				break;
		for (hs = hs != NULL ? hs : h->transients; hs != NULL &&
		    !http_stream_owned(hs, r->st); hs = hs->next)
			;
		if (hs == NULL)
			hs = h->stateless;
		if (hs != NULL) {
			hs->used = now_ms();
			http_stream_free(hs, r->st);
			http_trans_done(h, hs);
		}
	}
	if (r != NULL)
		r->q = NULL;
	buf_free(&q->body);
	free(q);
	*con_cls = NULL;
}

/* ---- the loop ------------------------------------------------------- */

/* poll's timeout: the hub's next deadline or libmicrohttpd's. */
static int
http_wait_ms(const struct http *h)
{
	int64_t when = session_next_deadline(h->s), now = now_ms(), ms,
	    idle = h->next_expiry;
	MHD_UNSIGNED_LONG_LONG t;

	if (idle >= 0 && (when < 0 || idle < when))
		when = idle;
	ms = when < 0 ? -1 : when <= now ? 0 : when - now;
	if (MHD_get_timeout(h->d, &t) == MHD_YES && (ms < 0 ||
	    (int64_t)t < ms))
		ms = (int64_t)t;
	return ms > 1 << 30 ? 1 << 30 : (int)ms;
}

/* libmicrohttpd's turn, again while it resumed a connection (a stream
 * taken over, a call cancelled): each resumed one is served. */
static void
http_run(struct http *h)
{
	int i;

	MHD_run(h->d);
	for (i = 0; i < 8 && http_reader_woke(); i++)
		MHD_run(h->d);
}

/* One turn: [session][signals][libmicrohttpd's epoll]. */
static int
http_turn(struct http *h)
{
	int ns = session_fds(h->s, NULL, 0), rc;
	struct pollfd *pfd;
	struct signalfd_siginfo si;

	if ((size_t)ns + 2 > h->npfd) {
		h->npfd = (size_t)ns + 2;
		h->pfd = xrealloc(h->pfd, h->npfd * sizeof *h->pfd);
	}
	pfd = h->pfd;
	session_fds(h->s, pfd, ns);
	pfd[ns] = (struct pollfd){ .fd = h->sfd, .events = POLLIN };
	pfd[ns + 1] = (struct pollfd){ .fd = h->epfd, .events = POLLIN };
	rc = poll(pfd, (nfds_t)ns + 2, http_wait_ms(h));
	if (rc == -1 && errno != EINTR) {
		coil_error("poll: %s", strerror(errno));
		return -1;
	}
	if (rc <= 0)
		memset(pfd, 0, ((size_t)ns + 2) * sizeof *pfd);
	if ((pfd[ns].revents & POLLIN) &&
	    read(h->sfd, &si, sizeof si) == sizeof si)
		h->signo = (int)si.ssi_signo;
	http_run(h);
	rc = session_run(h->s, pfd, ns);
	if (rc == -1)
		coil_error("%s", session_failure(h->s));
	/* The answers the hub just gave resumed their connections: they
	 * are written now, not a turn later. */
	http_run(h);
	h->next_expiry = http_expire(h);
	return rc;
}

static int
http_start(struct http *h, char *err, size_t len)
{
	const union MHD_DaemonInfo *di;
	int fd;

	if ((fd = http_edge_listen(&h->edge, err, len)) == -1)
		return -1;
	h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME,
	    0, NULL, NULL, http_access, h,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_NOTIFY_COMPLETED, http_completed, h,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_HEADERS_MAX,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_S,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		close(fd);
		return err_set(err, len, "--http: libmicrohttpd would not "
		    "start on %s:%u", h->edge.host, h->edge.port);
	}
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (di == NULL)
		return err_set(err, len, "--http: libmicrohttpd gave no "
		    "epoll descriptor");
	h->epfd = di->epoll_fd;
	coil_note("serving MCP on http://%s:%u/mcp%s%s", h->edge.host,
	    h->edge.port, h->edge.passed >= 0 ? " (systemd's socket)" : "",
	    h->edge.token != NULL ? " (bearer token required)" : "");
	return 0;
}

/* The session cannot go on: each call owed is told why on its stream,
 * and the streams read now get HTTP_DRAIN_MS to be written. */
static void
http_failed(struct http *h)
{
	const char *why = session_failure(h->s) != NULL ?
	    session_failure(h->s) : "coil's loop failed";
	struct pollfd p = { .fd = h->epfd, .events = POLLIN };
	int64_t end = now_ms() + HTTP_DRAIN_MS;
	struct hsess *hs;

	for (hs = h->sessions; hs != NULL; hs = hs->next)
		mcp_proto.failed(&hs->io, why);
	for (hs = h->transients; hs != NULL; hs = hs->next)
		mcp_proto.failed(&hs->io, why);
	if (h->stateless != NULL)
		mcp_proto.failed(&h->stateless->io, why);
	http_run(h);
	while (now_ms() < end && poll(&p, 1, 50) >= 0)
		http_run(h);
}

/* The end: every reader let go (a suspended connection must be resumed
 * before libmicrohttpd stops), then the daemon, then the sessions. */
static void
http_stop(struct http *h)
{
	struct hsess *hs;

	while ((hs = h->sessions) != NULL) {
		h->sessions = hs->next;
		http_sess_free(h, hs, false);
	}
	while ((hs = h->transients) != NULL) {
		h->transients = hs->next;
		http_sess_free(h, hs, false);
	}
	if (h->stateless != NULL)
		http_sess_free(h, h->stateless, false);
	h->stateless = NULL;
	if (h->d != NULL) {
		MHD_run(h->d);
		MHD_stop_daemon(h->d);
	}
	http_edge_free(&h->edge);
}

int
mcp_http_main(const struct coil_opts *opts)
{
	struct http h = { .opts = opts, .epfd = -1, .edge.passed = -1,
	    .next_expiry = -1 };
	char err[512];
	int rc = 0;

	if (opts->http_idle > 0)
		snprintf(h.full, sizeof h.full, "service unavailable: all %d "
		    "MCP sessions coil keeps are in use; end one (DELETE), or "
		    "wait: one idle for %g s (--http-idle) ends",
		    HTTP_SESSIONS, opts->http_idle);
	else
		snprintf(h.full, sizeof h.full, "service unavailable: all %d "
		    "MCP sessions coil keeps are in use, and --http-idle 0 "
		    "keeps them: end one (DELETE)", HTTP_SESSIONS);
	if ((h.sfd = agent_signals()) == -1) {
		coil_error("signalfd: %s", strerror(errno));
		return 1;
	}
	/* The token is taken out of the environment before the worker
	 * starts: no cell inherits it. */
	if ((opts->http_fd >= 0 ? http_edge_passed(&h.edge, opts->http_fd,
	    err, sizeof err) : http_edge_addr(&h.edge, opts->http, err,
	    sizeof err)) == 0 &&
	    http_edge_token(&h.edge, opts, err, sizeof err) == 0)
		h.s = session_new(opts, err, sizeof err);
	/* --resume: the session rebuilt before any client can reach it */
	if (h.s != NULL && opts->resume != NULL && replay_resume(opts, h.s,
	    err, sizeof err) == -1) {
		coil_error("%s", err);
		rc = 1;
	} else if (h.s == NULL || http_start(&h, err, sizeof err) == -1) {
		coil_error("%s", err);
		rc = 1;
	}
	while (rc == 0 && h.signo == 0 && !session_done(h.s))
		if (http_turn(&h) == -1)
			rc = 1;
	if (rc != 0 && h.d != NULL)
		http_failed(&h);
	http_stop(&h);
	if (h.s != NULL && session_free(h.s) == -1 && rc == 0)
		rc = 1;
	free(h.pfd);
	close(h.sfd);
	return h.signo != 0 ? 128 + h.signo : rc;
}
