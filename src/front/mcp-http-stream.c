/*
 * mcp-http-stream.c - the SSE streams of MCP over HTTP (mcp-http.h):
 * each a call's answer, or a session's own (GET), kept event by event
 * until written whole, and read by one suspended connection at a time.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-http-int.h"
#include "util.h"

struct hstream *
http_stream_new(struct hsess *hs, json_t *id)
{
	struct hstream *st = xcalloc(1, sizeof *st);
	char prime[64];

	st->no = ++hs->nstreams;
	st->hs = hs;
	st->id = id != NULL ? json_deep_copy(id) : NULL;
	st->next = hs->streams;
	hs->streams = st;
	/* Event 0 primes the client to reconnect (2025-11-25). */
	snprintf(prime, sizeof prime, "id: %u.0\nretry: 1000\ndata: \n\n",
	    st->no);
	st->ev = xcalloc(8, sizeof *st->ev);
	st->evlen = xcalloc(8, sizeof *st->evlen);
	st->cap = 8;
	st->ev[0] = xstrdup(prime);
	st->evlen[0] = strlen(prime);
	st->nev = 1;
	return st;
}

/* Whether a reader was resumed since http_reader_woke last asked. */
static bool http_woken;

void
http_reader_wake(struct hreader *r)
{
	if (r != NULL && r->suspended) {
		r->suspended = false;
		http_woken = true;
		MHD_resume_connection(r->conn);
	}
}

bool
http_reader_woke(void)
{
	bool w = http_woken;

	http_woken = false;
	return w;
}

/* Unlink st from its session and free it; its reader ends. */
void
http_stream_free(struct hsess *hs, struct hstream *st)
{
	struct hstream **pp;
	size_t i;

	for (pp = &hs->streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	if (st->r != NULL) {
		st->r->st = NULL;
		http_reader_wake(st->r);
	}
	for (i = 0; i < st->nev; i++)
		free(st->ev[i]);
	free(st->ev);
	free(st->evlen);
	json_decref(st->id);
	free(st);
}

bool
http_stream_owned(const struct hsess *hs, const struct hstream *st)
{
	const struct hstream *t;

	for (t = hs->streams; t != NULL; t = t->next)
		if (t == st)
			return true;
	return false;
}

/* Keep at most HTTP_STREAMS: the oldest finished one unread goes. */
void
http_stream_bound(struct hsess *hs)
{
	struct hstream *st, *old = NULL;
	unsigned n = 0;

	for (st = hs->streams; st != NULL; st = st->next, n++)
		if (st->done && st->r == NULL)
			old = st;
	if (n > HTTP_STREAMS && old != NULL)
		http_stream_free(hs, old);
}

/* Add one message (line, its newline included) as an event. */
void
http_stream_add(struct hstream *st, const char *line, size_t len, bool last)
{
	char head[48];
	int n = snprintf(head, sizeof head, "id: %u.%zu\ndata: ", st->no,
	    st->nev);
	char *ev;

	if (st->nev == st->cap) {
		st->cap *= 2;
		st->ev = xrealloc(st->ev, st->cap * sizeof *st->ev);
		st->evlen = xrealloc(st->evlen, st->cap * sizeof *st->evlen);
	}
	while (len > 0 && line[len - 1] == '\n')
		len--;
	ev = xmalloc((size_t)n + len + 3);
	memcpy(ev, head, (size_t)n);
	memcpy(ev + n, line, len);
	memcpy(ev + n + len, "\n\n", 3);
	st->ev[st->nev] = ev;
	st->evlen[st->nev++] = (size_t)n + len + 2;
	st->done = last;
	http_reader_wake(st->r);
}

static ssize_t
http_sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct hreader *r = cls;
	struct hstream *st = r->st;
	size_t n = 0, k;

	(void)pos;
	if (st == NULL)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	while (n < max && r->next < st->nev) {
		k = st->evlen[r->next] - r->off;
		if (k > max - n)
			k = max - n;
		memcpy(buf + n, st->ev[r->next] + r->off, k);
		n += k;
		if ((r->off += k) == st->evlen[r->next])
			r->next++, r->off = 0;
	}
	if (n > 0)
		return (ssize_t)n;
	if (st->done)
		return MHD_CONTENT_READER_END_OF_STREAM;
	r->suspended = true;
	MHD_suspend_connection(r->conn);
	return 0;
}

static void
http_sse_free(void *cls)
{
	struct hreader *r = cls;

	/* Its session's idle time starts now (mcp-http.c, --http-idle). */
	if (r->st != NULL)
		r->st->hs->used = now_ms();
	if (r->st != NULL && r->st->r == r)
		r->st->r = NULL;
	if (r->q != NULL)
		r->q->r = NULL;
	free(r);
}

/* Answer c with st from event `from` on; a reader already on it is
 * cut off (its client went away, or it would not ask again). */
enum MHD_Result
http_stream_serve(struct hsess *hs, struct hreq *q, struct MHD_Connection *c,
    struct hstream *st, size_t from)
{
	struct hreader *r = xcalloc(1, sizeof *r);
	struct MHD_Response *resp;
	enum MHD_Result rc;

	if (st->r != NULL) {
		st->r->st = NULL;
		http_reader_wake(st->r);
	}
	r->st = st;
	r->q = q;
	r->conn = c;
	r->next = from;
	st->r = r;
	q->r = r;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
	    http_sse_read, r, http_sse_free);
	if (resp == NULL) {
		st->r = NULL;
		free(r);
		q->r = NULL;
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	if (hs->sid[0] != '\0')
		MHD_add_response_header(resp, "Mcp-Session-Id", hs->sid);
	rc = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return rc;
}
