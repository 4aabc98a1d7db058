/*
 * session-post.c - what reaches the clients, as it is made (see
 * session-int.h): events made and queued, warnings routed to the client
 * whose cell caused them, the cells' output shaped for JSON, answers
 * with what goes with them, and the session's end when it fails.  The
 * hub (session-hub.c) delivers the queue, never from in here.
 *
 * Layer: the outbox, the lowest of the session's files but the worker's
 * life and the observers: every layer above posts through it.  Calls
 * nothing of the session's but session-life.h (is a worker starting) and
 * the notebook keeper (export.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "session-int.h"

/* ---- the session's end and a request's ----------------------------- */

/* The first failure is the one the person sees. */
void
session_fail(struct session *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	s->failed = true;
	va_start(ap, fmt);
	vsnprintf(s->failure, sizeof s->failure, fmt, ap);
	va_end(ap);
}

/* A request of op for the session, req and id taken: what every request
 * has; session.c's sreq_new adds a client's, session-redo.c a redo's. */
struct sreq *
sreq_alloc(struct session *s, json_t *req, json_t *id, enum op op)
{
	struct sreq *r = xcalloc(1, sizeof *r);

	r->s = s;
	r->req = req;
	r->id = id;
	r->op = op;
	buf_init(&r->shape[0].carry);
	buf_init(&r->shape[1].carry);
	return r;
}

void
sreq_free(struct sreq *r)
{
	if (r->target != NULL)
		r->target->held = false;
	if (r->pre != NULL)
		r->pre->held = false;
	response_free(r->pending);
	response_free(r->ready);
	json_decref(r->warnings);
	json_decref(r->req);
	json_decref(r->id);
	json_decref(r->by);
	buf_free(&r->shape[0].carry);
	buf_free(&r->shape[1].carry);
	free(r);
}

/* ---- clients and warnings ----------------------------------------- */

struct sclient *
session_client(const struct session *s, int id)
{
	int i;

	const struct session *h = s->hub;

	for (i = 0; i < h->nclients; i++)
		if (h->clients[i]->id == id && !h->clients[i]->gone)
			return h->clients[i];
	return NULL;
}

struct session *
session_of_pid(struct session *hub, pid_t pid)
{
	int i;

	for (i = 0; pid > 0 && i < hub->nall; i++)
		if (hub->all[i]->pid == pid && life_alive(&hub->all[i]->life))
			return hub->all[i];
	return NULL;
}

/* Where a warning goes: to the client whose cell caused it, or, once
 * that client has left, to whoever is answered next. */
json_t *
session_warnings(struct session *s)
{
	struct sclient *c = session_client(s, s->cause);

	return c != NULL ? c->warnings : s->orphan_warnings;
}

/* Keep a warning for the next response of the client it concerns;
 * observers hear it at once. */
void
session_warn(struct session *s, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_array_append_new(session_warnings(s), json_string(msg));
	session_note(s, EV_WARNING, json_pack("{s:s}", "message", msg));
}

/* ---- events -------------------------------------------------------- */

/* True when someone beyond a request's own client listens. */
bool
session_watched(const struct session *s)
{
	return s->hub->observers > 0;
}

struct sevent *
session_event_new(enum session_ev kind, const struct sreq *r)
{
	struct sevent *e = xcalloc(1, sizeof *e);

	e->ev.kind = kind;
	if (r != NULL) {
		e->ev.seq = r->seq;
		e->ev.client = r->client;
		e->ev.origin = r->origin;
		e->by = json_incref(r->by);
		e->ev.by = json_string_value(e->by);
		e->ev.id = json_incref(r->id);
		e->ev.streaming = r->stream;
		e->ev.cell = r->cell;
	}
	return e;
}

/* Into the hub's queue; a branch's event says whose it is. */
void
session_post(struct session *s, struct sevent *e)
{
	struct session *h = s->hub;

	if (s != h && e->sname == NULL) {
		e->sname = xstrdup(s->name);
		e->ev.session = e->sname;
	}
	*h->events_tail = e;
	h->events_tail = &e->next;
}

/* An event for observers only, about request r (NULL: the session's
 * own, as a worker's or a checkpoint's change), so nothing is built when
 * nobody watches.  Steals info. */
void
session_note_for(struct session *s, const struct sreq *r,
    enum session_ev kind, json_t *info)
{
	struct sevent *e;

	if (!session_watched(s)) {
		json_decref(info);
		return;
	}
	e = session_event_new(kind, r);
	e->ev.info = info;
	session_post(s, e);
}

/* An event about what runs now, if anything. */
void
session_note(struct session *s, enum session_ev kind, json_t *info)
{
	session_note_for(s, s->run, kind, info);
}

void
sevent_free(struct sevent *e)
{
	free(e->data);
	free(e->text);
	free(e->sname);
	json_decref(e->ev.id);
	json_decref(e->by);
	json_decref(e->ev.req);
	json_decref(e->ev.info);
	json_decref(e->hist_req);
	json_decref(e->hist_order);
	response_free(e->ev.resp);
	free(e);
}

/* ---- output -------------------------------------------------------- */

/* True when an observer reads output as JSON text (a transcript,
 * --export, an attached client); the in-process UI reads the raw bytes
 * (SESSION_RAW), so nothing is escaped for it alone. */
static bool
session_watched_text(const struct session *s)
{
	return s->hub->observers > s->hub->raw_observers;
}

/* Shape n more bytes for JSON (final: the stream ended); a new string,
 * or NULL when nothing can go out yet or the cap was reached before. */
static char *
shape(struct shaper *sh, const char *p, size_t n, bool final, size_t *len)
{
	size_t ok;
	char *text, *more;

	if (sh->stopped)
		return NULL;
	buf_add(&sh->carry, p, n);
	ok = final ? sh->carry.len : utf8_complete_prefix(sh->carry.p,
	    sh->carry.len);
	if (ok == 0)
		return NULL;
	if (sh->sent + ok > sh->cap)
		ok = sh->cap - sh->sent;
	text = utf8_escape(sh->carry.p, ok, len);
	sh->sent += ok;
	buf_consume(&sh->carry, ok);
	if (sh->sent >= sh->cap) {
		sh->stopped = true;
		buf_free(&sh->carry);
		xasprintf(&more, "%s\n[... coil: streaming stopped after %zu "
		    "bytes; the response keeps the head and the tail ...]\n",
		    text, sh->cap);
		free(text);
		text = more;
		*len = strlen(text);
	}
	return text;
}

static void
shaper_reset(struct shaper *sh, size_t cap)
{
	buf_free(&sh->carry);
	sh->sent = 0;
	sh->cap = cap;
	sh->stopped = false;
}

static void
session_post_output(struct session *s, enum session_ev kind,
    const struct sreq *r, int client, struct shaper *sh, int stream,
    const char *p, size_t n, bool shaped)
{
	struct sclient *owner = session_client(s, client);
	bool raw = s->hub->raw_observers > 0 || (owner != NULL &&
	    (owner->flags & SESSION_RAW));
	struct sevent *e;

	if (!raw && !shaped)
		return;		/* nobody would read it */
	e = session_event_new(kind, r);
	e->ev.client = client;
	e->ev.stream = stream;
	if (raw && n > 0) {
		e->data = xmalloc(n);
		memcpy(e->data, p, n);
	}
	e->ev.data = e->data;
	e->ev.len = n;
	if (shaped) {
		e->text = shape(sh, p, n, n == 0, &e->ev.text_len);
		e->ev.text = e->text;
	}
	if (n == 0 && e->text == NULL) {
		sevent_free(e);		/* an end with nothing held back */
		return;
	}
	session_post(s, e);
}

/* Bytes read from the worker's fd 1 (stream 1) or 2: the running cell's,
 * or the background's, which belongs to the client of the last cell. */
void
session_output(struct session *s, int stream, const char *p, size_t n)
{
	struct sreq *r = s->run;
	struct sclient *c;

	if (life_starting(&s->life)) {
		if (s->start_err.len < 65536)
			buf_add(&s->start_err, p, n);
		return;
	}
	if (r != NULL && r->op == OP_EXEC) {
		outbuf_append(stream == 2 ? &s->ob_err : &s->ob_out, p, n);
		if (r->redo > 0)
			return;	/* no one's: session-redo.c */
		export_runs_add(s->runs, stream, n);
		session_post_output(s, EV_OUTPUT, r, r->client,
		    &r->shape[stream - 1], stream, p, n, r->stream ||
		    session_watched_text(s));
		return;
	}
	c = session_client(s, s->cause);
	if (c != NULL && !(c->flags & SESSION_LIVE_BG))
		outbuf_append(stream == 2 ? &c->bg_err : &c->bg_out, p, n);
	if (c == NULL && !session_watched(s))
		return;
	session_post_output(s, EV_BACKGROUND, NULL, c != NULL ? c->id : 0,
	    c != NULL ? &c->bg_shape[stream - 1] : NULL, stream, p, n,
	    c != NULL && session_watched_text(s));
}

/* The background a client's next exec response carries, if any. */
static void
session_take_background(struct session *s, struct sreq *r,
    struct response *resp)
{
	struct sclient *c = session_client(s, r->client);
	char *text;
	size_t len;

	if (c == NULL || (outbuf_empty(&c->bg_out) && outbuf_empty(&c->bg_err)))
		return;
	resp->background = json_object();
	text = outbuf_render(&c->bg_out, &len, NULL);
	json_object_set_new(resp->background, "output", json_stringn(text,
	    len));
	free(text);
	text = outbuf_render(&c->bg_err, &len, NULL);
	json_object_set_new(resp->background, "stderr", json_stringn(text,
	    len));
	free(text);
	outbuf_reset(&c->bg_out);
	outbuf_reset(&c->bg_err);
	shaper_reset(&c->bg_shape[0], s->opts->max_output);
	shaper_reset(&c->bg_shape[1], s->opts->max_output);
}

/* ---- answers ------------------------------------------------------- */

static void
session_take_warnings(json_t *from, struct response *resp)
{
	size_t i;

	for (i = 0; i < json_array_size(from); i++)
		response_warn(resp, json_string_value(json_array_get(from, i)));
	json_array_clear(from);
}

/* Answer a request and free it; steals resp.  The warnings kept for
 * its client go with it, and an exec answer takes its background. */
void
session_answer(struct sreq *r, struct response *resp)
{
	struct session *s = r->s;
	struct sclient *c = session_client(s, r->client);
	struct sevent *e;
	int i;

	json_decref(resp->id);
	resp->id = json_incref(r->id);
	resp->seq = r->seq;
	resp->origin = r->origin;
	resp->client = r->client;
	resp->op = r->op;
	if (s != s->hub)
		response_set(resp, "session", json_string(s->name));
	if (r->op == OP_EXEC && (r->stream || session_watched_text(s))) {
		/* What the streams held back goes before the answer. */
		for (i = 0; i < 2; i++)
			session_post_output(s, EV_OUTPUT, r, r->client,
			    &r->shape[i], i + 1, "", 0, true);
	}
	if (r->warnings != NULL)
		session_take_warnings(r->warnings, resp);
	if (c != NULL)
		session_take_warnings(c->warnings, resp);
	if (c != NULL && c->restored != NULL && resp->status != ST_INVALID) {
		/* a restore between its requests (session_idle_restored) */
		if (resp->restored == NULL)
			resp->restored = c->restored;
		else
			json_decref(c->restored);
		c->restored = NULL;
	}
	session_take_warnings(s->orphan_warnings, resp);
	if (resp->has & RESP_EXEC)
		session_take_background(s, r, resp);
	if (s->export_fed && (r->op == OP_EXEC || r->op == OP_ROLLBACK ||
	    r->op == OP_RESET))
		export_keep(s->export, r->req, resp, s->runs);
	e = session_event_new(EV_RESPONSE, r);
	e->ev.resp = resp;
	if (r->op == OP_EXEC && s->opts->listen != NULL &&
	    resp->status != ST_INCOMPLETE && resp->status != ST_INVALID) {
		e->hist_req = json_incref(r->req);
		e->hist_order = export_runs_json(s->runs);
	}
	session_post(s, e);
	sreq_free(r);
}
