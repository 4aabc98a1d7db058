/*
 * session-hub.c - the session's clients (see session.h): attach and
 * detach, the delivery of the events queued (session-post.c makes and
 * queues them), and the history of finished cells an attaching client
 * is given (events as protocol lines are session-event.c's).
 *
 * Layer: hub, under session.c.  Calls down into the outbox, and into
 * the worker's process for the end of input of a client that left
 * (session_give_input); the layers below never call it: what they say waits
 * in the queue until session_deliver hands it out.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "session-int.h"

/* ---- clients ------------------------------------------------------- */

int
session_attach(struct session *s, enum origin origin, unsigned flags,
    session_fn fn, void *ctx)
{
	struct sclient *c = xcalloc(1, sizeof *c);

	c->id = ++s->next_client;
	c->origin = origin;
	c->flags = flags;
	c->fn = fn;
	c->ctx = ctx;
	c->warnings = json_array();
	outbuf_init(&c->bg_out, s->opts->max_output);
	outbuf_init(&c->bg_err, s->opts->max_output);
	buf_init(&c->bg_shape[0].carry);
	buf_init(&c->bg_shape[1].carry);
	c->bg_shape[0].cap = c->bg_shape[1].cap = s->opts->max_output;
	s->clients = xrealloc(s->clients, (size_t)(s->nclients + 1) *
	    sizeof *s->clients);
	s->clients[s->nclients++] = c;
	if (flags & SESSION_OBSERVE)
		s->observers++;
	if ((flags & SESSION_OBSERVE) && (flags & SESSION_RAW))
		s->raw_observers++;
	if ((flags & SESSION_OBSERVE) && !(flags & SESSION_NO_NS))
		s->ns_observers++;
	return c->id;
}

void
session_name(struct session *s, int client, const char *name)
{
	struct sclient *c = session_client(s, client);

	if (c == NULL)
		return;
	json_decref(c->name);
	c->name = name != NULL && *name != '\0' ? json_string(name) : NULL;
}

void
session_only(struct session *s, int client, const char *name)
{
	struct sclient *c = session_client(s, client);

	if (c == NULL)
		return;
	free(c->only);
	c->only = xstrdup(name);
}

bool
session_name_taken(const struct session *s, const char *name)
{
	int i;

	for (i = 0; i < s->nclients; i++)
		if (!s->clients[i]->gone && s->clients[i]->name != NULL &&
		    strcmp(json_string_value(s->clients[i]->name), name) == 0)
			return true;
	return false;
}

void
sclient_free(struct sclient *c)
{
	json_decref(c->name);
	free(c->home);
	free(c->only);
	json_decref(c->warnings);
	json_decref(c->restored);
	outbuf_free(&c->bg_out);
	outbuf_free(&c->bg_err);
	buf_free(&c->bg_shape[0].carry);
	buf_free(&c->bg_shape[1].carry);
	free(c);
}

/* Forget the clients that left; not while events are being delivered
 * (the loop over s->clients would skip one). */
static void
session_reap_clients(struct session *s)
{
	int i, n = 0;

	for (i = 0; i < s->nclients; i++) {
		if (s->clients[i]->gone)
			sclient_free(s->clients[i]);
		else
			s->clients[n++] = s->clients[i];
	}
	s->nclients = n;
}

/* A client's requests leave b's queue; its cell reading a line gets
 * the end of input. */
static void
session_detach_from(struct session *b, int client)
{
	struct sreq **pp = &b->queue, *r;

	while ((r = *pp) != NULL) {
		if (r->client == client) {
			*pp = r->next;
			session_drop(b, r, "its client left");
		} else {
			pp = &r->next;
		}
	}
	b->queue_tail = pp;
	/* Its cell reading a line would wait for it for ever: the end of
	 * input instead (EOFError), if a question is waiting. */
	if (b->run != NULL && b->run->client == client)
		session_give_input(b, NULL);
}

void
session_detach(struct session *s, int client)
{
	struct sclient *c = session_client(s, client);
	struct sreq **pp, *r;
	int i;

	if (c == NULL)
		return;
	c->gone = true;
	if (c->flags & SESSION_OBSERVE)
		s->observers--;
	if ((c->flags & SESSION_OBSERVE) && (c->flags & SESSION_RAW))
		s->raw_observers--;
	if ((c->flags & SESSION_OBSERVE) && !(c->flags & SESSION_NO_NS))
		s->ns_observers--;
	for (i = 0; i < s->hub->nall; i++)
		session_detach_from(s->hub->all[i], client);
	/* what it sent for a branch still to be made */
	for (pp = &s->hub->limbo; (r = *pp) != NULL;) {
		if (r->client == client) {
			*pp = r->next;
			session_drop(s, r, "its client left");
		} else {
			pp = &r->next;
		}
	}
	s->hub->limbo_tail = pp;
}

bool
session_hangup(struct session *s, int client)
{
	const struct sreq *r;
	struct session *b;
	bool owed = false;
	int i;

	for (i = 0; i < s->hub->nall; i++) {
		b = s->hub->all[i];
		if (b->run != NULL && b->run->client == client) {
			session_give_input(b, NULL);
			owed = true;
		}
		for (r = b->queue; r != NULL && !owed; r = r->next)
			owed = r->client == client;
	}
	return owed;
}

/* ---- the history ---------------------------------------------------- */

/* A cell's answer was delivered: keep it as a history line, the oldest
 * going while there are too many or their lines weigh too much.  Kept
 * at delivery, not at the answer, so that a client attaching between
 * the two gets the answer once, as an event. */
static void
session_history_add(struct session *s, const struct sevent *e)
{
	json_t *line = json_pack("{s:s, s:I, s:s, s:O*, s:O?, s:O, s:o, "
	    "s:O*}", "event", "history", "seq", (json_int_t)e->ev.seq,
	    "origin", origin_names[e->ev.origin], "by", e->by, "id", e->ev.id,
	    "request", e->hist_req, "response", response_json(e->ev.resp,
	    RESPONSE_SEQ), "order", e->hist_order);
	size_t n;

	if (e->ev.session != NULL)
		json_object_set_new(line, "session", json_string(
		    e->ev.session));
	n = json_dumpb(line, NULL, 0, JSON_COMPACT);

	if (s->history == NULL)
		s->history = json_array();
	json_array_append_new(s->history, line);
	s->history_bytes += n;
	while (json_array_size(s->history) > 0 &&
	    (json_array_size(s->history) > SESSION_HISTORY_CELLS ||
	    s->history_bytes > SESSION_HISTORY_BYTES)) {
		s->history_bytes -= json_dumpb(json_array_get(s->history, 0),
		    NULL, 0, JSON_COMPACT);
		json_array_remove(s->history, 0);
	}
}

/* The bound's base64 (4/3) stays well under the least client queue. */
_Static_assert(SESSION_FIGURES_MAX / 3 * 4 < ((size_t)64 << 20) / 2,
    "a line of figures fits half the least client queue");

json_t *
session_figures_json(const struct response *r)
{
	json_t *a = NULL;
	size_t i, sum = 0;
	char *b64;

	for (i = 0; r != NULL && i < r->nfigs; i++) {
		if (r->figs[i].len > SESSION_FIGURES_MAX - sum)
			break;
		sum += r->figs[i].len;
		b64 = export_base64((const unsigned char *)r->figs[i].p,
		    r->figs[i].len);
		if (a == NULL)
			a = json_array();
		json_array_append_new(a, json_pack("{s:I, s:s}", "at",
		    (json_int_t)r->figs[i].at, "base64", b64));
		free(b64);
	}
	return a;
}

/* A delivered answer's figures, kept for the clients that ask for them
 * after they attached (session_history_figures): the oldest let go
 * while there are too many lines, or their bytes weigh too much. */
static void
session_history_figs_add(struct session *s, const struct sevent *e)
{
	json_t *figs = session_figures_json(e->ev.resp), *line;
	json_t *a;

	if (figs == NULL)
		return;
	line = json_pack("{s:s, s:I, s:o}", "event", "figures", "seq",
	    (json_int_t)e->ev.seq, "figure_data", figs);
	if (s->history_figs == NULL)
		s->history_figs = json_array();
	a = s->history_figs;
	json_array_append_new(a, line);
	s->history_fig_bytes += json_dumpb(line, NULL, 0, JSON_COMPACT);
	while (json_array_size(a) > 0 && (json_array_size(a) >
	    SESSION_HISTORY_CELLS || s->history_fig_bytes >
	    SESSION_HISTORY_FIGURES)) {
		s->history_fig_bytes -= json_dumpb(json_array_get(a, 0), NULL,
		    0, JSON_COMPACT);
		json_array_remove(a, 0);
	}
}

json_t *
session_history_figures(const struct session *s)
{
	json_t *lines = json_array();
	size_t i;

	for (i = 0; i < json_array_size(s->history_figs); i++)
		json_array_append(lines, json_array_get(s->history_figs, i));
	return lines;
}

/* A request's event as a line, for session_history.  The running
 * cell's start says how long it has run, so that a clock shown from it
 * counts from the cell's start, not from the attach. */
static json_t *
session_open_line(const struct sreq *r, enum session_ev kind)
{
	struct sevent *e = session_event_new(kind, r);
	json_t *o;

	if (r->s != r->s->hub)
		e->ev.session = r->s->name;
	if (kind == EV_QUEUED)
		e->ev.req = json_incref(r->req);
	if (kind == EV_STARTED && r->t0 != 0)
		e->ev.info = json_pack("{s:I}", "elapsed_ms", (json_int_t)
		    ((now_ns() - r->t0) / 1000000));
	o = session_event_json(&e->ev);
	sevent_free(e);
	return o;
}

/* The newest checkpoint the session holds (the last taken), as the
 * checkpoint event a client that attaches now would have seen last. */
static json_t *
session_ckpt_line(const struct session *s)
{
	const struct ckpt *ck, *newest = NULL;
	json_t *o;

	for (ck = s->ck.head; ck != NULL; ck = ck->next)
		if (newest == NULL || ck->born_ms >= newest->born_ms)
			newest = ck;
	o = json_pack("{s:s, s:s, s:i}", "event", "checkpoint", "state",
	    "newest", "count", s->ck.count);
	if (newest != NULL) {
		json_object_set_new(o, "cell", json_integer(newest->node->cell));
		json_object_set_new(o, "kind", json_string(ckpt_kind_name(
		    newest->kind)));
	}
	return o;
}

/* What the running cell r wrote before a client attached, as the
 * output lines it would have seen: stdout's, then stderr's. */
static void
session_output_so_far(const struct session *s, const struct sreq *r,
    json_t *lines)
{
	const struct outbuf *ob;
	struct sevent *e;
	char *text;
	size_t len;
	int i;

	for (i = 0; i < 2; i++) {
		ob = i == 0 ? &s->ob_out : &s->ob_err;
		if (outbuf_empty(ob))
			continue;
		text = outbuf_render_held(ob, r->shape[i].carry.len, &len);
		if (len > 0) {
			e = session_event_new(EV_OUTPUT, r);
			if (s != s->hub)
				e->ev.session = s->name;
			e->ev.stream = i + 1;
			e->ev.cell = r->cell;
			e->ev.text = text;
			e->ev.text_len = len;
			json_array_append_new(lines, session_event_json(&e->ev));
			e->ev.text = NULL;
			sevent_free(e);
		}
		free(text);
	}
}

/* What of b runs or waits, as the lines of session_history. */
static void
session_history_open(const struct session *b, json_t *lines)
{
	const struct sreq *r;
	const struct session *s = b;

	if (s->run != NULL && s->run->op == OP_EXEC) {
		json_array_append_new(lines, session_open_line(s->run,
		    EV_QUEUED));
		if (s->run->cell > 0) {
			json_array_append_new(lines, session_open_line(s->run,
			    EV_STARTED));
			session_output_so_far(s, s->run, lines);
		}
	}
	for (r = s->queue; r != NULL; r = r->next)
		if (r->op == OP_EXEC && r->redo == 0)
			json_array_append_new(lines, session_open_line(r,
			    EV_QUEUED));
}

json_t *
session_history(const struct session *s)
{
	json_t *lines = json_array();
	size_t i;
	int k;

	for (i = 0; i < json_array_size(s->history); i++)
		json_array_append(lines, json_array_get(s->history, i));
	for (k = 0; k < s->nall; k++)
		session_history_open(s->all[k], lines);
	json_array_append_new(lines, session_ckpt_line(s));
	return lines;
}

/* ---- delivery ------------------------------------------------------ */

/* Hand every queued event to its client and the observers.  A callback
 * may submit or detach: what it queues is delivered in this same call,
 * after what came before it (a call from inside one returns at once). */
void
session_deliver(struct session *s)
{
	struct sevent *e;
	int i;

	if (s->delivering)
		return;
	s->delivering = true;
	while ((e = s->events) != NULL) {
		s->events = e->next;
		if (s->events == NULL)
			s->events_tail = &s->events;
		for (i = 0; i < s->nclients; i++) {
			struct sclient *c = s->clients[i];

			if (c->gone || (c->only != NULL && (e->ev.session ==
			    NULL || strcmp(e->ev.session, c->only) != 0)))
				continue;
			if (c->id == e->ev.client ||
			    (c->flags & SESSION_OBSERVE))
				c->fn(c->ctx, &e->ev);
		}
		if (e->hist_req != NULL) {
			session_history_add(s, e);
			session_history_figs_add(s, e);
		}
		sevent_free(e);
	}
	s->delivering = false;
	session_reap_clients(s);
}

/* A request leaves the queue unanswered (cancelled, or its client left):
 * its client and the observers hear so. */
void
session_drop(struct session *s, struct sreq *r, const char *reason)
{
	struct sevent *e = session_event_new(EV_CANCELLED, r);

	e->ev.info = json_pack("{s:s}", "reason", reason);
	session_post(s, e);
	sreq_free(r);
}
