/*
 * session-answer.c - the session's answers (see session-int.h): an exec
 * response from the captured streams and the worker's reply, the words
 * for a worker that died or was replaced, ping.
 *
 * A reply's fields are the worker's word about its own request (link.h):
 * they go into that request's answer, checked for type, and nowhere else.
 *
 * Layer: requests (the answers).  Consumes the worker's reply and
 * restore events (session_reply, session_restored, handed up by
 * session-link.c) and moves the worker's state through session-life.c;
 * answers go up only through the hub's queue.
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "sandbox.h"
#include "session-int.h"

static enum status
status_of(json_t *reply)
{
	const char *st = json_string_value(json_object_get(reply, "status"));

	if (st != NULL && strcmp(st, "ok") == 0)
		return ST_OK;
	if (st != NULL && strcmp(st, "incomplete") == 0)
		return ST_INCOMPLETE;
	return ST_ERROR;
}

/* Say in resp what was cut of one of its fields: truncated sums the
 * bytes of every marker, cut has each field's {lines, bytes}. */
static void
session_count_cut(struct response *resp, const char *field,
    const struct outbuf_cut *cut)
{
	json_t *all;

	if (cut->bytes == 0)
		return;
	resp->truncated += cut->bytes;
	if ((all = json_object_get(resp->fields, "cut")) == NULL) {
		all = json_object();
		response_set(resp, "cut", all);
	}
	json_object_set_new(all, field, json_pack("{s:I, s:I}", "lines",
	    (json_int_t)cut->lines, "bytes", (json_int_t)cut->bytes));
}

/*
 * Every list in a reply (display, vars, matches, warnings, the
 * observers' namespace) is the worker's word, and every front end,
 * transcript and notebook walks it: at most SESSION_LIST_MAX entries of
 * each are kept (the worker keeps as many, worker.py's _LIST_MAX), and
 * what was left out is counted, with the worker's own count of what it
 * left out, in the answer's "<list>_more" (as effects_more counts
 * effects), never dropped silently.
 */
#define SESSION_LIST_MAX 1000
#define SESSION_WARNINGS_MAX 100
/* A count of the worker's beyond which it is not believed. */
#define SESSION_MORE_MAX ((json_int_t)1 << 40)

/* What the worker says it left out of reply's list key ("<key>_more"),
 * or 0 when it says nothing believable. */
static unsigned long long
session_more_of(json_t *reply, const char *key)
{
	/* a key of 64 bytes and "_more", as in session_worker_answer */
	char name[80];
	json_t *v;

	snprintf(name, sizeof name, "%s_more", key);
	v = json_object_get(reply, name);
	return json_is_integer(v) && json_integer_value(v) > 0 &&
	    json_integer_value(v) < SESSION_MORE_MAX ?
	    (unsigned long long)json_integer_value(v) : 0;
}

/* The first max entries of list (a new reference); *more gets how many
 * were left out, plus what the reply says it left out before. */
static json_t *
session_cap_list(json_t *reply, const char *key, json_t *list, size_t max,
    unsigned long long *more)
{
	size_t n = json_array_size(list), i;
	json_t *kept;

	*more = session_more_of(reply, key);
	if (n <= max)
		return json_incref(list);
	kept = json_array();
	for (i = 0; i < max; i++)
		json_array_append(kept, json_array_get(list, i));
	*more += n - max;
	return kept;
}

/* Whether key names a count of a list's ("<list>_more"): it is passed
 * on only with its list, as session_cap_list counts it, and a count
 * without a list is not passed on at all. */
static bool
session_is_more(const char *key)
{
	size_t n = strlen(key);

	return n > 5 && strcmp(key + n - 5, "_more") == 0;
}

/* The exec reply's display list into resp, capped; a warning says how
 * many objects the cell showed. */
static void
session_take_display(json_t *reply, struct response *resp)
{
	json_t *v = reply != NULL ? json_object_get(reply, "display") : NULL;
	unsigned long long more;
	char msg[160];

	if (!json_is_array(v)) {
		resp->display = json_array();
		return;
	}
	resp->display = session_cap_list(reply, "display", v,
	    SESSION_LIST_MAX, &more);
	if (more == 0)
		return;
	snprintf(msg, sizeof msg, "the cell showed %llu objects; the first "
	    "%zu are in \"display\"", more + json_array_size(resp->display),
	    json_array_size(resp->display));
	response_warn(resp, msg);
}

/* The exec reply's warnings into resp, the first SESSION_WARNINGS_MAX
 * of them and a count of the rest. */
static void
session_take_warnings(json_t *reply, struct response *resp)
{
	json_t *v = reply != NULL ? json_object_get(reply, "warnings") : NULL;
	unsigned long long more = session_more_of(reply, "warnings");
	size_t i;
	char msg[96];

	for (i = 0; i < json_array_size(v); i++) {
		if (i >= SESSION_WARNINGS_MAX) {
			more += json_array_size(v) - i;
			break;
		}
		if (json_is_string(json_array_get(v, i)))
			response_warn(resp, json_string_value(
			    json_array_get(v, i)));
	}
	if (more == 0)
		return;
	snprintf(msg, sizeof msg, "%llu more warnings of the cell's were "
	    "left out", more);
	response_warn(resp, msg);
}

/* The captured streams into r, capped; what was left out counted. */
static void
session_take_streams(struct session *s, struct response *resp)
{
	struct outbuf_cut cut;
	char *text;
	size_t len;

	text = outbuf_render(&s->ob_out, &len, &cut);
	response_set_output(resp, text, len);
	free(text);
	session_count_cut(resp, "output", &cut);
	text = outbuf_render(&s->ob_err, &len, &cut);
	response_set_stderr(resp, text, len);
	free(text);
	session_count_cut(resp, "stderr", &cut);
	outbuf_reset(&s->ob_out);
	outbuf_reset(&s->ob_err);
}

/* What the worker cut of a text before sending it (worker.py's _cut):
 * [bytes, lines], or nothing. Its word about its own text: the marker
 * then counts it, so a wrong word only makes its own answer wrong. */
static void
session_pre_cut(json_t *v, struct outbuf_cut *pre)
{
	json_t *b = json_array_get(v, 0), *l = json_array_get(v, 1);

	pre->bytes = pre->lines = 0;
	if (json_is_integer(b) && json_integer_value(b) > 0)
		pre->bytes = (unsigned long long)json_integer_value(b);
	if (json_is_integer(l) && json_integer_value(l) > 0)
		pre->lines = (unsigned long long)json_integer_value(l);
}

/* A text from the worker capped as output is, into a new string
 * (caller frees); pre is its own {key}_cut, the cut counted as field. */
static char *
session_cap_text(struct session *s, struct response *resp, const char *field,
    const char *p, size_t n, json_t *pre, size_t *len)
{
	struct outbuf_cut before, cut;
	char *text;

	session_pre_cut(pre, &before);
	text = utf8_cap(p, n, s->ob_out.cap, &before, len, &cut);
	session_count_cut(resp, field, &cut);
	return text;
}

/* The reply's result, capped as output is. */
static void
session_take_result(struct session *s, json_t *reply, struct response *resp)
{
	json_t *v = json_object_get(reply, "result");
	char *text;
	size_t len;

	if (!json_is_string(v))
		return;
	text = session_cap_text(s, resp, "result", json_string_value(v),
	    json_string_length(v), json_object_get(reply, "result_cut"), &len);
	response_set_result(resp, text, len);
	free(text);
}

/* The worker's error (err, read into e) with its message and traceback
 * capped as output is: a message can be as long as the exception made
 * it. A NUL ends e's strings (response_error_from_json), so strlen is
 * what the response shows. */
static void
session_cap_error(struct session *s, json_t *err, struct response_error *e,
    struct response *resp)
{
	char *text;

	text = session_cap_text(s, resp, "message", e->message,
	    strlen(e->message), json_object_get(err, "message_cut"), NULL);
	free(e->message);
	e->message = text;
	if (e->traceback == NULL)
		return;
	text = session_cap_text(s, resp, "traceback", e->traceback,
	    strlen(e->traceback), json_object_get(err, "traceback_cut"), NULL);
	free(e->traceback);
	e->traceback = text;
}

/* The worker's list of what the cell touched (effects.py's Effects), as
 * far as it is believable: at most EFFECTS_MAX objects, each with a
 * known kind and short strings; anything else in it is dropped and
 * counted with the rest. */
#define EFFECTS_MAX 20
#define EFFECT_TEXT_MAX 1024

static bool
effect_ok(json_t *e)
{
	static const char *const kinds[] = { "create", "write", "delete",
	    "rename", "process", "connect" };
	static const char *const texts[] = { "path", "to", "cmd" };
	const char *kind = json_string_value(json_object_get(e, "kind"));
	const char *key;
	json_t *v;
	size_t i;

	if (kind == NULL)
		return false;
	for (i = 0; i < nitems(kinds) && strcmp(kind, kinds[i]) != 0; i++)
		;
	if (i == nitems(kinds))
		return false;
	json_object_foreach(e, key, v) {
		if (strcmp(key, "kind") == 0)
			continue;
		if (strcmp(key, "denied") == 0) {
			if (!json_is_true(v))
				return false;
			continue;
		}
		for (i = 0; i < nitems(texts) && strcmp(key, texts[i]) != 0;
		    i++)
			;
		if (i == nitems(texts) || !json_is_string(v) ||
		    json_string_length(v) > EFFECT_TEXT_MAX ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return false;
	}
	return true;
}

static void
session_take_effects(json_t *reply, struct response *resp)
{
	json_t *list = json_object_get(reply, "effects");
	json_t *more = json_object_get(reply, "effects_more");
	json_t *e;
	size_t i;

	json_array_foreach(list, i, e) {
		if (json_array_size(resp->effects) < EFFECTS_MAX &&
		    effect_ok(e)) {
			if (resp->effects == NULL)
				resp->effects = json_array();
			json_array_append(resp->effects, e);
		} else {
			resp->effects_more++;
		}
	}
	if (json_is_integer(more) && json_integer_value(more) > 0 &&
	    json_integer_value(more) < (json_int_t)1 << 40)
		resp->effects_more += (unsigned long long)
		    json_integer_value(more);
}

/* An exec response: the captured streams and the worker's reply (NULL
 * when the worker died); error (stolen) replaces the reply's, restored
 * (stolen) is added when not NULL. */
struct response *
session_exec_response(struct session *s, struct sreq *r, enum status status,
    json_t *reply, struct response_error *error, json_t *restored)
{
	struct response *resp = response_new(status);

	resp->has = RESP_EXEC;
	if (status != ST_INCOMPLETE)
		resp->has |= RESP_CELL;
	resp->cell = r->cell;
	session_take_streams(s, resp);
	if (reply != NULL)
		session_take_result(s, reply, resp);
	if (error == NULL && reply != NULL &&
	    (error = response_error_from_json(json_object_get(reply,
	    "error"))) != NULL)
		session_cap_error(s, json_object_get(reply, "error"), error,
		    resp);
	if (error == NULL && status == ST_ERROR)
		error = response_error("ProtocolError", "the worker's answer "
		    "to cell %d carries no usable error", r->cell);
	resp->error = error;
	session_take_display(reply, resp);
	resp->duration_ms = round((double)(now_ns() - r->t0) / 1e4) / 100.0;
	if (reply != NULL) {
		session_usage_end(s, r, reply);
		session_take_effects(reply, resp);
	}
	session_take_usage(s, r, reply, resp);
	resp->restored = restored;
	session_take_warnings(reply, resp);
	return resp;
}

enum status
session_stop_status(const struct sreq *r)
{
	return r->interrupted ? ST_INTERRUPTED : ST_TIMEOUT;
}

/* An answer to vars, inspect or complete: the worker's fields as they
 * are (its word about its own request), its error checked. */
struct response *
session_worker_answer(json_t *reply)
{
	static const char *const internal[] = { "status", "error", "t", "seq",
	    "ran", "cpu0_ns", "cpu0_kids_ns", "cpu1_kids_ns" };
	enum status st = status_of(reply);
	struct response *resp = response_new(st == ST_INCOMPLETE ? ST_ERROR :
	    st);
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(reply, key, v) {
		unsigned long long more;
		char name[80];

		for (i = 0; i < nitems(internal); i++)
			if (strcmp(key, internal[i]) == 0)
				break;
		if (i < nitems(internal) || session_is_more(key) ||
		    strlen(key) > 64)
			continue;
		if (!json_is_array(v)) {
			response_set(resp, key, json_incref(v));
			continue;
		}
		response_set(resp, key, session_cap_list(reply, key, v,
		    SESSION_LIST_MAX, &more));
		snprintf(name, sizeof name, "%s_more", key);
		if (more > 0)
			response_set(resp, name, json_integer(
			    (json_int_t)more));
	}
	if (resp->status == ST_ERROR) {
		resp->error = response_error_from_json(json_object_get(reply,
		    "error"));
		if (resp->error == NULL)
			resp->error = response_error("ProtocolError", "the "
			    "worker's answer carries no usable error");
	}
	return resp;
}

/* A cell stopped by its deadline or an interrupt request that ended in
 * KeyboardInterrupt: say which, in the protocol's words. */
static struct response_error *
session_stop_error(struct sreq *r, json_t *reply)
{
	struct response_error *e;

	e = response_error_from_json(json_object_get(reply, "error"));
	if (e == NULL || strcmp(e->type, "KeyboardInterrupt") != 0) {
		response_error_free(e);
		return NULL;
	}
	free(e->message);
	if (r->timed_out) {
		free(e->type);
		e->type = xstrdup("TimeoutError");
		xasprintf(&e->message, "cell %d ran past its %g s timeout and "
		    "was interrupted", r->cell, r->timeout);
	} else {
		e->message = xstrdup("interrupted by an interrupt request");
	}
	return e;
}

/* A cell interrupted (its deadline, an interrupt request) that finished
 * all the same: at a terminal that is os.system's way, whose command
 * gets the Ctrl-C and which returns its status.  Say so, or the answer
 * would look like a cell that never met its deadline. */
static void
session_stop_survived(struct sreq *r, struct response *resp, bool late)
{
	char *msg;

	if (late && !r->timed_out)
		xasprintf(&msg, "an interrupt request came as cell %d was "
		    "starting, before its code ran, and was lost: the cell "
		    "ran to its end", r->cell);
	else
		xasprintf(&msg, "cell %d %s, and went on to finish: the "
		    "programs it ran got the interrupt too (os.system "
		    "returns their status, 2 for SIGINT), or it caught "
		    "KeyboardInterrupt", r->cell, r->timed_out ? "ran past "
		    "its timeout and was interrupted" : "was interrupted by "
		    "an interrupt request");
	response_warn(resp, msg);
	free(msg);
}

/* Whether the interrupt went before the cell's code began: the worker
 * then dropped it with those meant for the cell before (worker.c).  The
 * times here are the worker's word (CLOCK_MONOTONIC, which its
 * namespaces share): a lie only mislabels its own cell. */
static bool
session_began_after(const struct sreq *r, json_t *reply)
{
	json_t *t = json_object_get(reply, "started_ns");

	return r->stop_ns != 0 && json_is_integer(t) &&
	    (uint64_t)json_integer_value(t) > r->stop_ns;
}

/* Whether the cell's code had ended before the interrupt reached it:
 * the signal then found coil's own code (which drops it, or answers
 * interrupted), and this is no cell that "went on to finish".  It goes
 * through init, which takes a moment to send it: a cell that ended
 * within SESSION_STOP_RELAY_NS of our order ended before the signal, as
 * far as anyone can tell (one that ran a program the interrupt stopped
 * ends later than that). */
#define SESSION_STOP_RELAY_NS	2000000u

static bool
session_ended_first(const struct sreq *r, json_t *reply)
{
	json_t *t = json_object_get(reply, "ended_ns");

	return r->stop_ns != 0 && json_is_integer(t) &&
	    json_integer_value(t) > 0 &&
	    (uint64_t)json_integer_value(t) < r->stop_ns +
	    SESSION_STOP_RELAY_NS;
}

/* Observers see the namespace after each cell, as the worker summed it
 * up in its reply (asked for in session_start_exec). */
static void
session_namespace(struct session *s, struct sreq *r, json_t *reply)
{
	json_t *vars = json_object_get(reply, "namespace"), *ev;
	unsigned long long more;

	if (json_is_array(vars)) {
		ev = json_pack("{s:i, s:o}", "cell", r->cell, "vars",
		    session_cap_list(reply, "namespace", vars,
		    SESSION_LIST_MAX, &more));
		if (more > 0)
			json_object_set_new(ev, "vars_more",
			    json_integer((json_int_t)more));
		session_note_for(s, r, EV_NAMESPACE, ev);
	}
	json_object_del(reply, "namespace");
	json_object_del(reply, "namespace_more");
}

/* A failed atomic cell: the worker goes, the state before the cell
 * comes back (session_worker_died), then resp is sent.  False when that
 * checkpoint is gone. */
static bool
session_undo_atomic(struct session *s, struct sreq *r, struct response *resp)
{
	if (r->pre == NULL || !ckpt_alive(r->pre)) {
		session_warn(s, "cell %d was atomic, but the checkpoint of the "
		    "state before it is gone (killed from outside coil), so "
		    "what it did stays", r->cell);
		return false;
	}
	r->pending = resp;
	r->target = r->pre;
	r->pre = NULL;
	r->target->held = true;
	r->deadline = r->kill_at = 0;
	s->run = r;
	life_killed(&s->life, AFTER_ATOMIC);
	session_signal(s, SIGKILL);
	return true;
}

/*
 * The bytes of the images the cell showed, from the descriptors the
 * worker handed over with its reply (figure.h), into resp: read now,
 * within what anyone will use (a notebook's bytes left, or an MCP
 * client's images), and never again by path.  A cell without figures
 * sent no descriptor and costs nothing here.
 */
static void
session_take_figures(struct session *s, const struct link_frame *f,
    struct response *resp)
{
	size_t max = export_figures_left(s->export);

	if (f->nfds == 0)
		return;
	if (s->opts->mode == MODE_MCP || max > FIGURE_REPLY_MAX)
		max = FIGURE_REPLY_MAX;
	if (max == 0)
		return;
	resp->figs = figure_take(json_object_get(f->msg, "figures"), f->fds,
	    f->nfds, json_array_size(resp->display), max, &resp->nfigs);
}

/* The worker answered the exec in flight (session_reply). */
void
session_exec_replied(struct session *s, struct sreq *r,
    const struct link_frame *f)
{
	json_t *reply = f->msg;
	enum status status = status_of(reply);
	bool ran = json_is_true(json_object_get(reply, "ran"));
	struct response_error *error = NULL;
	struct response *resp;

	session_namespace(s, r, reply);
	if (status != ST_INCOMPLETE)
		s->cells = r->cell;
	if (ran) {
		session_set_node(s, ckpt_node_new(r->cell, s->node));
		s->current = NULL;
	} else if (r->pre != NULL) {
		s->current = r->pre;
	}
	if ((r->timed_out || r->interrupted) && status == ST_ERROR &&
	    (error = session_stop_error(r, reply)) != NULL)
		status = session_stop_status(r);
	resp = session_exec_response(s, r, status, reply, error,
	    status == ST_TIMEOUT || status == ST_INTERRUPTED ? json_null() :
	    NULL);
	session_take_figures(s, f, resp);
	if ((r->timed_out || r->interrupted) && status == ST_OK &&
	    !session_ended_first(r, reply))
		session_stop_survived(r, resp, session_began_after(r, reply));
	if (r->atomic && ran && status != ST_OK &&
	    session_undo_atomic(s, r, resp))
		return;
	/* The state after the cell, now or once the session is quiet (the
	 * policy, session-ckpt.c); an order now comes before anyone can see
	 * the answer and send more. */
	if (ran && s->opts->checkpoints > 0)
		session_ckpt_after(s, r);
	if (r->pre != NULL && r->pre->kind == CKPT_ATOMIC &&
	    s->current != r->pre) {
		/* r is no longer s->run: on_drop cannot forget it for us. */
		struct ckpt *tmp = r->pre;

		r->pre = NULL;
		ckpt_drop(&s->ck, tmp);
	}
	session_answer(r, resp);
}

/* The worker answered the request in flight (link.c checked that this
 * reply was owed, with the request's seq). */
void
session_reply(struct session *s, struct link_frame *f)
{
	struct sreq *r = session_serving(s);
	struct response *resp;

	if (r == NULL) {
		/* Owed, yet nothing waits for it: a run killed meanwhile. */
		return;
	}
	life_replied(&s->life);
	/* The end of a cell is read now; the high-water mark is reset for
	 * the next before the worker is sent anything (session_reset_peak):
	 * it waits for us then and holds no lock of its memory map, where
	 * a write to clear_refs during a checkpoint's fork would wait. */
	session_usage_end(s, r, f->msg);
	s->hwm_clean = false;
	s->hwm_due = true;
	if (r->op == OP_SNAPSHOT) {
		session_snapshot_done(s, r, f->msg);
		return;
	}
	if (r->op == OP_EXEC) {
		/* Everything the cell wrote is in the pipes by now: read it
		 * while the run is still its own, or it would count as
		 * background. */
		session_drain_both(s, SIZE_MAX);
		s->run = NULL;
		session_exec_replied(s, r, f);
		return;
	}
	s->run = NULL;
	resp = session_worker_answer(f->msg);
	/* ours, over any field of that name the worker put in its reply */
	if (r->op == OP_VARS)
		response_set(resp, "totals", session_totals(s));
	session_answer(r, resp);
}

/* The answer to a run whose worker died under it (AFTER_DIED). */
static struct response *
session_died_answer(struct session *s, struct sreq *r, const char *tail,
    json_t *restored)
{
	struct response *resp;
	const char *op = request_ops[r->op].name;

	if (r->op != OP_EXEC) {
		resp = response_new(ST_CRASHED);
		resp->error = r->broke ? response_error("ProtocolError", "the "
		    "worker broke protocol while serving '%s': %s, so it was "
		    "killed; %s", op, r->how, tail) : response_error(
		    "WorkerDied", "the worker died (%s) while serving '%s'; %s",
		    r->how, op, tail);
		resp->restored = json_incref(restored);
		return resp;
	}
	resp = r->pending;
	r->pending = NULL;
	response_error_free(resp->error);
	if (r->broke)
		resp->error = response_error("ProtocolError", "the worker broke "
		    "protocol while running cell %d: %s, so it was killed; %s",
		    r->cell, r->how, tail);
	else if (r->killed)
		resp->error = response_error(r->timed_out ? "TimeoutError" :
		    "KeyboardInterrupt", "cell %d %s and did not stop within "
		    "%g s of the interrupt, so its worker was killed; %s",
		    r->cell, r->timed_out ? "ran past its timeout" :
		    "was interrupted", s->opts->grace, tail);
	else
		resp->error = response_error("WorkerDied", "the worker died (%s) "
		    "while running cell %d; %s", r->how, r->cell, tail);
	resp->restored = json_incref(restored);
	return resp;
}

/* The new worker is up: answer the run that waited for it.  ck is the
 * checkpoint it was resumed from, NULL when it was spawned fresh. */
void
session_restored(struct session *s, struct ckpt *ck, json_t *restored)
{
	struct sreq *r = s->run;
	struct response *resp = NULL;
	char tail[400];

	enum life_after after = s->life.after;

	s->run = NULL;
	life_answered(&s->life);
	session_where(restored, tail, sizeof tail);
	switch (after) {
	case AFTER_DIED:
		resp = session_died_answer(s, r, tail, restored);
		break;
	case AFTER_ROLLBACK:
		if (ck == NULL || ck != r->target) {
			resp = response_failed(response_error("CheckpointError",
			    "the checkpoint died before it could be resumed; %s",
			    tail));
			resp->restored = json_incref(restored);
			break;
		}
		resp = r->pending;
		r->pending = NULL;
		response_set(resp, "threads_lost", json_incref(
		    json_object_get(restored, "threads_lost")));
		break;
	case AFTER_START:
		resp = r->pending;
		r->pending = NULL;
		response_set(resp, "threads_lost", json_incref(
		    json_object_get(restored, "threads_lost")));
		break;
	case AFTER_RESET:
		resp = response_new(ST_OK);
		response_set(resp, "from", json_string(ck != NULL ?
		    "pristine checkpoint" : "new interpreter"));
		break;
	case AFTER_ATOMIC:
		resp = r->pending;
		r->pending = NULL;
		resp->restored = json_incref(restored);
		if (ck == NULL || ck != r->target)
			session_warn(s, "cell %d was atomic, but the checkpoint "
			    "before it could not be resumed; %s", r->cell, tail);
		break;
	default:
		resp = response_new(ST_OK);
	}
	session_answer(r, resp);
}

struct response *
session_ping(struct session *s)
{
	struct response *resp = response_new(ST_OK);

	/* ping is answered at once, so the smaps of every checkpoint are
	 * read at most once a second for it; snapshots reads them fresh. */
	if (s->ping_mem_at == 0 || now_ms() - s->ping_mem_at > 1000) {
		s->ping_mem = ckpt_memory(&s->ck, s->pidfd);
		s->ping_mem_at = now_ms();
	}
	response_set(resp, "version", json_string(PACKAGE_VERSION));
	if (s->python != NULL)
		response_set(resp, "python", json_string(s->python));
	response_set(resp, "sandbox", s->sandbox != NULL ?
	    session_gate_report(s) : json_pack("{s:s, s:b}", "profile",
	    sandbox_profile_name(s->opts->sbx.profile), "starting", 1));
	response_set(resp, "cell", json_integer(s->cells));
	response_set(resp, "running", json_boolean(s->run != NULL &&
	    s->run->op == OP_EXEC));
	response_set(resp, "totals", session_totals(s));
	response_set(resp, "checkpoints", json_pack("{s:i, s:o, s:i}",
	    "count", s->ck.count, "memory", s->ping_mem >= 0 ?
	    json_integer(s->ping_mem) : json_null(), "max_auto",
	    s->opts->checkpoints));
	return resp;
}
