/*
 * session-reply.c - the answer to the run in flight (see session-int.h):
 * from the worker's reply (an exec's streams, figures and namespace; a
 * snapshot's checkpoint; a stop that came late or not at all), or, when
 * the worker died or was replaced under it, from what the new worker
 * holds, in words (session_where).
 *
 * A reply's fields are the worker's word about its own request (link.h):
 * they go into that request's answer, checked for type, and nowhere else.
 *
 * Layer: answers to the run.  Consumes what session-link.c hands it (a
 * reply, the death of the worker, a new one up); calls down into the
 * checkpoint policy (session-ckpt.c), the answers' parts
 * (session-answer.c), the costs, the worker's process and the outbox.
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "session-int.h"

static void session_redone(struct session *s);

/* Who interrupted r, in words: the person or client that asked, or
 * the plain fact. */
static const char *
session_stopped_by(const struct sreq *r)
{
	return r->stop_by[0] != '\0' ? r->stop_by : "an interrupt request";
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
		xasprintf(&e->message, "interrupted by %s",
		    session_stopped_by(r));
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
		xasprintf(&msg, "cell %d %s%s%s, and went on to finish: the "
		    "programs it ran got the interrupt too (os.system "
		    "returns their status, 2 for SIGINT), or it caught "
		    "KeyboardInterrupt", r->cell, r->timed_out ? "ran past "
		    "its timeout and was interrupted" : "was interrupted",
		    r->timed_out ? "" : " by ", r->timed_out ? "" :
		    session_stopped_by(r));
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

/* Whether the interrupt reached the worker before the cell's code had
 * ended: the worker notes when it came (worker-stop.c), as the SIGINT
 * itself may find it ignoring SIGINT (os.system) and leave no trace.
 * One that came after found coil's own code, which drops it: that cell
 * is no cell that "went on to finish", nor is one it never reached. */
static bool
session_stop_reached(json_t *reply)
{
	json_t *at = json_object_get(reply, "interrupt_ns");
	json_t *end = json_object_get(reply, "ended_ns");

	return json_is_integer(at) && json_is_integer(end) &&
	    json_integer_value(at) > 0 &&
	    json_integer_value(at) <= json_integer_value(end);
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
		    session_fields_vars(NULL, "namespace", session_cap_list(
		    reply, "namespace", vars, SESSION_LIST_MAX, &more)));
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
static void
session_exec_replied(struct session *s, struct sreq *r,
    const struct link_frame *f)
{
	json_t *reply = f->msg;
	enum status status = session_status_of(reply);
	bool ran = json_is_true(json_object_get(reply, "ran")), reached;
	struct response_error *error = NULL;
	struct response *resp;

	session_namespace(s, r, reply);
	if (status != ST_INCOMPLETE && r->redo == 0)
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
	reached = session_stop_reached(reply);
	if ((r->timed_out || r->interrupted) && status == ST_OK &&
	    (reached || session_began_after(r, reply)))
		session_stop_survived(r, resp, !reached);
	if (r->atomic && ran && status != ST_OK &&
	    session_undo_atomic(s, r, resp))
		return;
	/* The state after the cell, now or once the session is quiet (the
	 * policy, session-ckpt.c); an order now comes before anyone can see
	 * the answer and send more. */
	if (ran && s->opts->checkpoints > 0)
		session_ckpt_after(s, r, resp);
	if (r->pre != NULL && r->pre->kind == CKPT_ATOMIC &&
	    s->current != r->pre) {
		/* r is no longer s->run: on_drop cannot forget it for us. */
		struct ckpt *tmp = r->pre;

		r->pre = NULL;
		ckpt_drop(&s->ck, tmp);
	}
	if (r->redo > 0) {
		if (session_redo_took(s, r, resp))
			session_redone(s);
		return;
	}
	if (ran)
		session_redo_keep(s, r, resp);
	session_answer(r, resp);
}

static void
session_snapshot_done(struct session *s, struct sreq *r, json_t *reply)
{
	struct response *msg = r->pending, *answer;
	const char *name = json_string_value(json_object_get(msg->fields,
	    "name"));

	r->pending = NULL;
	s->run = NULL;
	if (json_is_string(json_object_get(reply, "status")) &&
	    strcmp(json_string_value(json_object_get(reply, "status")), "ok")
	    == 0 && r->target != NULL) {
		struct ckpt *old = ckpt_find_name(&s->ck, name);

		if (old != NULL && old != r->target) {
			response_set(msg, "replaced", json_integer(
			    old->node->cell));
			ckpt_drop(&s->ck, old);
		}
		r->target->name = xstrdup(name);
		response_set(msg, "cell", json_integer(r->target->node->cell));
		session_answer(r, msg);
		return;
	}
	response_free(msg);
	answer = session_worker_answer(reply, OP_SNAPSHOT);
	if (answer->status == ST_OK) {
		/* ok, yet no checkpoint came: not the worker's to say. */
		answer->status = ST_ERROR;
		answer->error = response_error("CheckpointError", "no "
		    "checkpoint could be taken");
	}
	session_answer(r, answer);
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
	resp = session_worker_answer(f->msg, r->op);
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
		    "KeyboardInterrupt", "cell %d %s%s and did not stop "
		    "within %g s of the interrupt, so its worker was killed; "
		    "%s", r->cell, r->timed_out ? "ran past its timeout" :
		    "was interrupted by ", r->timed_out ? "" :
		    session_stopped_by(r), s->opts->grace, tail);
	else
		resp->error = response_error("WorkerDied", "the worker died (%s) "
		    "while running cell %d; %s", r->how, r->cell, tail);
	resp->restored = json_incref(restored);
	return resp;
}

/* The worker died between requests: the client whose cell came last
 * is told, in a warning and in the "restored" of its next answer
 * (session_answer). */
void
session_idle_restored(struct session *s, json_t *restored)
{
	struct sclient *c = session_client(s, s->cause);
	char where[SESSION_WHERE_MAX];

	session_warn(s, "the worker died between requests (%s); %s",
	    s->died_idle != NULL ? s->died_idle : "how is not known",
	    session_where(restored, where, sizeof where));
	free(s->died_idle);
	s->died_idle = NULL;
	if (c != NULL) {
		json_decref(c->restored);
		c->restored = json_incref(restored);
	}
}

/* The redo is over (session-redo.c): the answer that waited for it goes
 * out, or, when the worker died between requests, the warning. */
static void
session_redone(struct session *s)
{
	struct sreq *held;
	json_t *restored = session_redo_end(s, &held);
	char tail[SESSION_WHERE_MAX];

	session_note(s, EV_WORKER, json_pack("{s:s, s:O}", "state", "redone",
	    "restored", restored));
	if (held != NULL)
		session_answer(held, session_died_answer(s, held,
		    session_where(restored, tail, sizeof tail), restored));
	else
		session_idle_restored(s, restored);
	json_decref(restored);
}

/* The new worker is up: answer the run that waited for it.  ck is the
 * checkpoint it was resumed from, NULL when it was spawned fresh. */
void
session_restored(struct session *s, struct ckpt *ck, json_t *restored)
{
	struct sreq *r = s->run;
	struct response *resp = NULL;
	char tail[SESSION_WHERE_MAX];

	enum life_after after = s->life.after;

	s->run = NULL;
	life_answered(&s->life);
	if (r->redo > 0) {
		session_redo_broke(s, r, restored);
		session_redone(s);
		return;
	}
	if (after == AFTER_DIED && session_redo_begin(s, r, restored))
		return;		/* answered once the redo is over */
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

/* The worker died (how; broke: it broke protocol; starting: before
 * its hello).  The run in flight waits for the next worker, its answer
 * written now as far as it can be (session_restored ends it); with
 * none, the next answer says the worker died between requests. */
void
session_run_died(struct session *s, const char *how, bool broke,
    bool starting)
{
	struct sreq *r = s->run;

	if (r == NULL) {
		if (!starting && s->died_idle == NULL && broke)
			xasprintf(&s->died_idle, "it broke protocol: %s, so it "
			    "was killed", how);
		else if (!starting && s->died_idle == NULL)
			s->died_idle = xstrdup(how);
	} else if (life_died_under(&s->life)) {
		r->broke = broke;
		r->deadline = r->kill_at = 0;
		snprintf(r->how, sizeof r->how, "%s", how);
		if (r->op == OP_EXEC) {
			if (r->redo == 0)
				s->cells = r->cell;
			r->pending = session_exec_response(s, r, r->killed &&
			    !broke ? session_stop_status(r) : ST_CRASHED, NULL,
			    NULL, NULL);
		}
	}
}

/* Append to buf what cells holds, in runs: "5-9, 12"; "..." when the
 * rest does not fit. */
static void
session_cells_text(json_t *cells, char *buf, size_t len)
{
	size_t i = 0, n = json_array_size(cells), at;
	json_int_t first, last;

	while (i < n) {
		first = last = json_integer_value(json_array_get(cells, i++));
		while (i < n && json_integer_value(json_array_get(cells, i)) ==
		    last + 1)
			last = json_integer_value(json_array_get(cells, i++));
		at = strlen(buf);
		if (len - at < 32) {
			snprintf(buf + at, len - at, ", ...");
			return;
		}
		snprintf(buf + at, len - at, first == last ? "%s%lld" :
		    "%s%lld-%lld", at > 0 && buf[at - 1] != ' ' ? ", " : "",
		    (long long)first, (long long)last);
	}
}

/* "; cells 5-7 were run again ...": cells (numbers, or objects with a
 * "cell") and what became of them, appended to buf. */
static void
session_where_add(char *buf, size_t len, json_t *cells, const char *is,
    const char *are, const char *what)
{
	json_t *nums = json_array(), *v;
	size_t i, n = json_array_size(cells);

	if (n == 0) {
		json_decref(nums);
		return;
	}
	json_array_foreach(cells, i, v)
		json_array_append(nums, json_is_object(v) ?
		    json_object_get(v, "cell") : v);
	snprintf(buf + strlen(buf), len - strlen(buf), "; cell%s ",
	    n > 1 ? "s" : "");
	session_cells_text(nums, buf, len);
	snprintf(buf + strlen(buf), len - strlen(buf), " %s %s",
	    n > 1 ? are : is, what);
	json_decref(nums);
}

/* Where a restore left the namespace, for messages: "the namespace is
 * back at the state after cell 4; cells 5-6 were run again and
 * answered as before; cell 7 is lost (it wrote 'out.csv'): run it again
 * if you need what it did; 1 thread did not survive". */
const char *
session_where(json_t *restored, char *buf, size_t len)
{
	json_t *cell = json_object_get(restored, "cell");
	json_t *lost = json_object_get(restored, "lost");
	json_t *first = json_array_get(json_object_get(restored, "lost_why"),
	    0), *why = json_object_get(first, "why");
	json_t *differs = json_object_get(restored, "differs");
	int threads = (int)json_integer_value(json_object_get(restored,
	    "threads_lost"));
	size_t n = json_array_size(lost);
	char what[300];

	if (!json_is_integer(cell))
		snprintf(buf, len, "nothing could be restored, so a fresh "
		    "namespace started");
	else
		snprintf(buf, len, "the namespace is back at the state after "
		    "cell %d", (int)json_integer_value(cell));
	session_where_add(buf, len, json_object_get(restored, "redone"),
	    "was", "were", "run again and answered as before");
	snprintf(what, sizeof what, "run again and answered differently "
	    "(first in its %s)", json_string_value(json_object_get(
	    json_object_get(json_array_get(differs, 0), "first"), "field"))
	    ?: "answer");
	session_where_add(buf, len, differs, "was", "were", what);
	if (why != NULL)
		snprintf(what, sizeof what, "lost (cell %d: %.200s): run %s "
		    "again if you need what %s did", (int)json_integer_value(
		    json_object_get(first, "cell")), json_string_value(why),
		    n > 1 ? "them" : "it", n > 1 ? "they" : "it");
	else
		snprintf(what, sizeof what, "lost: run %s again if you need "
		    "what %s did", n > 1 ? "them" : "it", n > 1 ? "they" :
		    "it");
	session_where_add(buf, len, lost, "is", "are", what);
	if (threads > 0)
		snprintf(buf + strlen(buf), len - strlen(buf), "; %d thread%s "
		    "did not survive", threads, threads > 1 ? "s" : "");
	return buf;
}
