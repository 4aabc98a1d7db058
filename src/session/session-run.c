/*
 * session-run.c - a request's run in the worker (see session-int.h):
 * what the worker is sent of it, an exec's cell number, output caps,
 * the measure of its cost and the checkpoint of the state before it.
 * The worker's side of the conversation, its frames and its death, is
 * session-link.c's; the answer, session-reply.c's.
 *
 * Layer: the ops, beside session-ops.c.  Calls down into the worker's
 * link (a reset replaces the worker: session_replace), its process and
 * life, the checkpoint policy, the costs and the outbox.
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "export.h"
#include "session-int.h"

double
session_timeout_of(const struct session *s, json_t *req)
{
	json_t *t = json_object_get(req, "timeout");

	if (json_is_number(t))
		return json_number_value(t);
	return s->opts->timeout < 0 ? OPTS_TIMEOUT : s->opts->timeout;
}

/* This cell's output cap: its max_output, else --max-output. */
static void
session_cap(struct session *s, size_t cap)
{
	if (s->ob_out.cap != cap) {
		outbuf_free(&s->ob_out);
		outbuf_free(&s->ob_err);
		outbuf_init(&s->ob_out, cap);
		outbuf_init(&s->ob_err, cap);
	}
	outbuf_reset(&s->ob_out);
	outbuf_reset(&s->ob_err);
	s->runs->n = 0;
	s->runs->over = false;
}

/* What the worker is sent of a request: the fields it reads, no more
 * (a request's other fields could make the frame grow past the limit
 * as JSON numbers are written out again). */
static json_t *
session_worker_request(json_t *req)
{
	static const char *const keep[] = { "op", "code", "name", "cursor",
	    "all", "max_output", "columns", "lines", "display" };
	json_t *m = json_object(), *v;
	size_t i;

	for (i = 0; i < nitems(keep); i++)
		if ((v = json_object_get(req, keep[i])) != NULL)
			json_object_set(m, keep[i], v);
	return m;
}

/* Whether r's cell may read lines from its client: a person's, at a
 * client that answers (plain mode at a terminal, the UI), or that said
 * in the request it would (an attached UI: "input", then the input op);
 * a replay's that says so, which gives the lines the recording had. */
static bool
session_may_ask(struct session *s, struct sreq *r)
{
	struct sclient *c = session_client(s, r->client);

	if (r->origin == ORIGIN_REPLAY)	/* the lines the recording gave */
		return c != NULL && json_is_true(json_object_get(r->req,
		    "input"));
	return r->origin == ORIGIN_PERSON && c != NULL && !c->gone &&
	    ((c->flags & SESSION_INPUT) || json_is_true(json_object_get(
	    r->req, "input")));
}

/* exec's part of the message, and of the run: its cell, its caps, the
 * checkpoint of the state before it.  The seq of a checkpoint owed
 * before the reply, or 0. */
static uint64_t
session_start_exec(struct session *s, struct sreq *r, json_t *msg)
{
	json_t *cap = json_object_get(r->req, "max_output");
	size_t n = json_is_integer(cap) ? (size_t)json_integer_value(cap) :
	    s->opts->max_output;

	r->cell = r->redo > 0 ? r->redo : s->cells + 1;
	json_object_set_new(msg, "cell", json_integer(r->cell));
	session_cap(s, n);
	r->shape[0].cap = r->shape[1].cap = n;
	if (r->origin == ORIGIN_PERSON)
		json_object_set_new(msg, "repl", json_true());
	/* Observers are shown the namespace after each cell. */
	if (s->hub->ns_observers > 0)
		json_object_set_new(msg, "summary", json_true());
	r->atomic = json_is_true(json_object_get(r->req, "atomic"));
	/* A notebook's cell replayed: input() fails as Jupyter's did */
	if (r->origin == ORIGIN_REPLAY && json_is_string(json_object_get(
	    r->req, "stdin")))
		json_object_set(msg, "stdin", json_object_get(r->req,
		    "stdin"));
	/* What the cell costs is measured from here (usage.h). */
	session_reset_peak(s);
	r->floor_ms = session_usage(s)->last_ms;
	r->peak_reset = s->hwm_clean;
	if (s->current != NULL && ckpt_alive(s->current)) {
		r->pre = s->current;
		r->pre->held = r->atomic;
		return 0;
	}
	if (!r->atomic)
		return 0;
	/* No checkpoint of this state (none is on its way: an atomic cell
	 * waits for quiet): the worker takes one before it runs the cell. */
	json_object_set_new(msg, "ckpt_first", json_true());
	session_ckpt_kept(s);
	return link_owe(&s->ctl, LINK_CKPT, LINK_CK_BEFORE, 0, -1);
}

void
session_start_run(struct session *s, struct sreq *r)
{
	json_t *msg;
	uint64_t seq = 0;

	r->t0 = now_ns();
	r->timeout = session_timeout_of(s, r->req);
	r->deadline = r->timeout > 0 ? now_ms() +
	    (int64_t)ceil(r->timeout * 1000) : 0;	/* 0: none */
	r->kill_at = 0;
	/* What the worker wrote while idle (threads of earlier cells; it
	 * flushes their buffers then) and we have not read yet is
	 * background: read it before this run owns the pipes. */
	session_drain_both(s, SESSION_DRAIN_BUDGET);
	s->run = r;
	if (r->op == OP_RESET) {
		/* A fresh interpreter is the only honest reset: modules and
		 * C-level state go too.  The pristine checkpoint is one,
		 * taken before any cell ran. */
		struct ckpt *ck = ckpt_pristine(&s->ck);

		r->target = ck != NULL && ckpt_alive(ck) ? ck : NULL;
		session_replace(s, r, AFTER_RESET);
		return;
	}
	/* Listing the namespace runs no code of the user's: anything else
	 * may change the state (a completion imports), which a pristine
	 * checkpoint taken after it would not be. */
	if (r->op != OP_VARS)
		life_no_pristine(&s->life);
	msg = session_worker_request(r->req);
	if (r->op == OP_EXEC)
		seq = session_start_exec(s, r, msg);
	seq = link_owe(&s->ctl, LINK_REPLY, 0, seq, -1);
	json_object_set_new(msg, "seq", json_integer((json_int_t)seq));
	if (r->op == OP_EXEC && session_may_ask(s, r)) {
		link_allow_input(&s->ctl, seq);
		json_object_set_new(msg, "input", json_true());
	}
	life_sent(&s->life);
	session_send(s, msg);
}
