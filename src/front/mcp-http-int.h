/*
 * mcp-http-int.h - the parts of MCP over HTTP (mcp-http.h): mcp-http.c
 * is the server (sessions, streams, the loop), mcp-http-io.c its edges:
 * the address bound, the token, the checks each request passes and the
 * plain answers.  Supervisor only.
 */
#ifndef COIL_MCP_HTTP_INT_H
#define COIL_MCP_HTTP_INT_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "agent.h"
#include "opts.h"
#include "util.h"

/* What a connection may hold of a request's line and headers. */
#define HTTP_HEADERS_MAX	((size_t)64 << 10)
#define HTTP_STREAMS		64	/* streams a session keeps */

struct http_edge {
	struct sockaddr_storage sa;	/* bound */
	socklen_t salen;
	bool loopback;			/* a loopback address */
	bool any;			/* 0.0.0.0 or :: */
	char host[64];			/* numeric, a v6 one bracketed */
	unsigned port;
	char *token;			/* required bearer token, or NULL */
	int passed;			/* systemd's socket (sdfd.h), or -1 */
};

/* Parse ADDR:PORT, [V6]:PORT or PORT (loopback) into e.  0, or -1. */
int http_edge_addr(struct http_edge *e, const char *spec, char *err,
    size_t len);
/* --http systemd: e from the socket fd passed (main took and checked
 * it); http_edge_listen then gives fd.  0, or -1. */
int http_edge_passed(struct http_edge *e, int fd, char *err, size_t len);
/* Bind and listen; the socket, e->port set (PORT 0 picks one); -1. */
int http_edge_listen(struct http_edge *e, char *err, size_t len);
/* The token, from COIL_HTTP_TOKEN (then unset, so no cell inherits it)
 * or --http-token-file; required off loopback.  0, or -1. */
int http_edge_token(struct http_edge *e, const struct coil_opts *opts,
    char *err, size_t len);
void http_edge_free(struct http_edge *e);

/* The checks of every request before its body: 0 when it passes, else
 * the HTTP status to refuse it with, *why saying why. */
unsigned http_edge_check(const struct http_edge *e,
    struct MHD_Connection *c, const char *method, const char **why);
/* Before the body: the guards, the types, the size announced (over
 * max_request: 413).  0 when the request goes on, else -1, the refusal
 * queued (*rc). */
int http_edge_headers(const struct http_edge *e, size_t max_request,
    struct MHD_Connection *c, const char *url, const char *method,
    enum MHD_Result *rc);
/* Whether an Accept header takes type ("text/event-stream"). */
bool http_accepts(const char *accept, const char *type);

/* Whether a line of mcp_send's is an answer (not a notification). */
bool http_is_answer(const char *line, size_t len);
/* Whether the answer in b is a result (not an error). */
bool http_has_result(const struct buf *b);

/* Answer body (len bytes, copied) with status and type; sid, when not
 * NULL, as Mcp-Session-Id. */
enum MHD_Result http_reply(struct MHD_Connection *c, unsigned status,
    const char *type, const char *body, size_t len, const char *sid);
/* A refusal: a JSON-RPC error of no id saying msg; 401 also says how
 * to authenticate, 405 what is allowed. */
enum MHD_Result http_refuse(struct MHD_Connection *c, unsigned status,
    const char *msg);


/* ---- sessions and streams (mcp-http.c, mcp-http-stream.c) ---------- */

struct hstream;

/* The connection reading a stream now. */
struct hreq;

struct hreader {
	struct hstream *st;	/* NULL once the stream is gone or taken */
	struct hreq *q;		/* its request, NULL once that is over:
				   libmicrohttpd may end either first */
	struct MHD_Connection *conn;
	size_t next, off;	/* the event to write next, and how far */
	bool suspended;
};

struct hsess;

struct hstream {
	struct hstream *next;
	struct hsess *hs;	/* its session */
	unsigned no;		/* S of its event ids */
	json_t *id;		/* the request it answers; NULL: GET's */
	char **ev;		/* its events, whole */
	size_t *evlen, nev, cap;
	bool done;		/* its answer is its last event */
	struct hreader *r;
};

struct http;

struct hsess {
	struct hsess *next;
	struct http *h;
	char sid[33];		/* Mcp-Session-Id; "" sessionless */
	struct agent_io io;	/* mcp.c's view: io.proto is its mcp */
	struct hstream *streams;
	unsigned nstreams;
	struct buf *cur;	/* the POST being served: its answer */
	int64_t used;		/* when it was last used (now_ms): a
				   request, a message, a reader's end */
	bool transient;		/* one 2026-07-28 call's alone */
};

/* One HTTP request's state (libmicrohttpd's con_cls). */
struct hreq {
	bool seen;		/* its headers were checked */
	bool over;		/* its body passed --max-request */
	struct buf body;
	struct hreader *r;	/* the stream it reads, if any */
};

/* A new stream of hs answering request id (copied; NULL: the session's
 * own), with its priming event 0. */
struct hstream *http_stream_new(struct hsess *hs, json_t *id);
/* Add one message (line, its newline included) as an event; last: it is
 * the answer, the stream's end.  Its reader is woken. */
void http_stream_add(struct hstream *st, const char *line, size_t len,
    bool last);
/* Resume a suspended reader: it has more to write, or is to end. */
void http_reader_wake(struct hreader *r);
/* Whether one was resumed since the last call: libmicrohttpd, in the
 * loop's hands, serves a resumed connection only in a later MHD_run,
 * which the loop then owes it at once. */
bool http_reader_woke(void);
/* Unlink st from hs and free it; its reader ends. */
void http_stream_free(struct hsess *hs, struct hstream *st);
bool http_stream_owned(const struct hsess *hs, const struct hstream *st);
/* Keep at most HTTP_STREAMS: the oldest finished one unread goes. */
void http_stream_bound(struct hsess *hs);
/* Answer c with st from event `from` on (q->r is its reader). */
enum MHD_Result http_stream_serve(struct hsess *hs, struct hreq *q,
    struct MHD_Connection *c, struct hstream *st, size_t from);

#endif
