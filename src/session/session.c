/*
 * session.c - the session's requests and its loop (see session.h; the
 * parts are listed in session-int.h): the queue and its one dispatcher,
 * the ops' servers (session_servers: request_ops says when each op is
 * served, this table who serves it), cancel and interrupt, deadlines,
 * the descriptors, life and end.
 *
 * Deadlines: at run->deadline the worker gets SIGINT; if the request has
 * not been answered by run->kill_at it gets SIGKILL.  A worker that dies
 * is reported by init; the run in flight is answered with what happened
 * once another worker is up (session-link.c).
 *
 * Layer: the top of the session's files (README has the order), below
 * the front ends, which call session.h.  Serves the ops through
 * session-run.c and session-ops.c, hands the worker's and init's
 * descriptors to session-link.c, and answers through the outbox
 * (session-post.c), which the hub delivers.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "export.h"
#include "record.h"
#include "session-int.h"

/* ---- the queue ----------------------------------------------------- */

static void session_serve(struct session *s, struct sreq *r);

/* A checkpoint on its way is read before the worker runs anything
 * more: its frame is checked against the worker as its parent, which
 * only a live worker can be.  Read after a cell killed the worker, it
 * is lost (link.c's late), and the crash goes back a cell further. */
static bool
session_held_by_ckpt(const struct session *s, const struct sreq *r)
{
	return (request_ops[r->op].flags & OPF_QUIET) &&
	    link_ckpt_owed(&s->ctl);
}

/* Whether the request at the head of the queue may be served now:
 * what its op waits for (request.h's OPF_*).  One answered already
 * (session_reject) waits for its turn only. */
static bool
session_may_serve(const struct session *s, const struct sreq *r)
{
	unsigned flags = request_ops[r->op].flags;

	if (r->ready != NULL)
		return true;
	if ((flags & OPF_QUIET) && !life_ready(&s->life))
		return false;
	/* An interrupt init is still to send was meant for the request
	 * before: sent after the next one reached the worker, it would
	 * stop that one.  Once sent, the worker drops it between
	 * requests (worker.c). */
	if ((flags & OPF_RUN) && s->life.ints_owed > 0)
		return false;
	return !session_held_by_ckpt(s, r);
}

/*
 * A worker the cells took over can leave a checkpoint's order
 * unanswered, and the request held behind it (session_may_serve) would
 * wait for ever, with no deadline of its own: it has not run.  So the
 * wait gets the request's timeout; when it runs out the worker is
 * killed, as wedged, and the request goes to the one that replaces it.
 */
static void
session_hold_arm(struct session *s)
{
	const struct sreq *r = s->queue;
	double t;

	if (s->run != NULL || r == NULL || r->ready != NULL ||
	    !life_ready(&s->life) || !session_held_by_ckpt(s, r)) {
		s->hold_deadline = 0;
		return;
	}
	if (s->hold_deadline != 0)
		return;
	t = session_timeout_of(s, r->req);
	s->hold_deadline = t > 0 ? now_ms() + (int64_t)ceil(t * 1000) : -1;
}

/* The wait of session_hold_arm ran out: the worker is killed. */
static void
session_hold_expired(struct session *s, int64_t now)
{
	if (s->hold_deadline <= 0 || now < s->hold_deadline)
		return;
	s->hold_deadline = 0;
	free(s->died_idle);
	s->died_idle = xstrdup("it did not hand over the checkpoint it was "
	    "ordered to take before the next request's timeout ran out, so "
	    "coil killed it");
	/* The cells may have taken the worker over: run again, they could
	 * do it again (session-redo.c). */
	s->redo_refused = "the worker it ran in stopped obeying coil (it "
	    "ignored a checkpoint order), which running it again could do "
	    "again";
	/* dying, not ready: nothing is sent to it till init reports its
	 * end (its socket may close first) */
	life_killed(&s->life, AFTER_NONE);
	session_signal(s, SIGKILL);
}

void
session_dispatch(struct session *s)
{
	while (s->run == NULL && s->queue != NULL && !s->done && !s->failed &&
	    session_may_serve(s, s->queue)) {
		struct sreq *r = s->queue;
		struct sevent *e;

		s->queue = r->next;
		if (s->queue == NULL)
			s->queue_tail = &s->queue;
		if (r->redo == 0)
			s->cause = r->client;
		if (r->ready != NULL) {
			struct response *resp = r->ready;

			r->ready = NULL;
			session_answer(r, resp);
			continue;
		}
		session_serve(s, r);
		if (session_watched(s) && s->run == r && r->redo == 0) {
			e = session_event_new(EV_STARTED, r);
			session_post(s, e);
		}
	}
	session_hold_arm(s);
}

/* Interrupt the run in flight; by, when not NULL, says who asked, in
 * words for its answer (the first who did is the one named). */
static bool
session_stop(struct session *s, const char *by)
{
	struct sreq *r = session_serving(s);

	if (r == NULL || r->op == OP_SNAPSHOT)
		return false;
	if (by != NULL && !r->interrupted && !r->timed_out)
		snprintf(r->stop_by, sizeof r->stop_by, "%s", by);
	r->interrupted = !r->timed_out;
	if (r->stop_ns == 0)
		r->stop_ns = now_ns();
	life_deadline(&s->life);
	session_signal(s, SIGINT);
	if (r->kill_at == 0)
		r->kill_at = now_ms() + (int64_t)ceil(s->opts->grace * 1000);
	return true;
}

bool
session_interrupt(struct session *s)
{
	return session_stop(s, NULL);
}

static struct sreq *
sreq_new(struct session *s, int client, json_t *req, json_t *id,
    enum op op)
{
	struct sreq *r = sreq_alloc(s, req, id, op);
	struct sclient *c = session_client(s, client);

	r->seq = ++s->next_seq;
	r->client = client;
	r->origin = c != NULL ? c->origin : ORIGIN_AGENT;
	r->by = c != NULL ? json_incref(c->name) : NULL;
	r->stream = json_is_true(json_object_get(req, "stream"));
	r->warnings = request_warnings(req, op);
	if (s->run != NULL && s->run->op == OP_EXEC)
		r->waited_for = s->run->cell;
	return r;
}

/* ---- the ops' servers ---------------------------------------------- */

static void
session_serve_ping(struct session *s, struct sreq *r)
{
	session_answer(r, session_ping(s));
}

static void
session_serve_input(struct session *s, struct sreq *r)
{
	/* only the cell's own client answers it */
	bool mine = s->run != NULL && s->run->client == r->client;

	session_answer(r, mine && session_input(s, json_string_value(
	    json_object_get(r->req, "text"))) == 0 ? response_new(ST_OK) :
	    response_invalid("no cell of yours is reading a line"));
}

/* Who sent the interrupt r, in words for the answer of the cell it
 * stops: its "by", else its client's name, with its origin; an
 * attached person (a named client) is said to be one.  NULL when the
 * request names nobody. */
static const char *
session_stopper(const struct sreq *r, char *buf, size_t len)
{
	const char *by = json_string_value(json_object_get(r->req, "by"));

	if (by == NULL)
		by = json_string_value(r->by);
	if (by == NULL)
		return NULL;
	snprintf(buf, len, "%s \"%s\"%s", origin_names[r->origin], by,
	    r->by != NULL ? " (an attached UI)" : "");
	return buf;
}

static void
session_serve_interrupt(struct session *s, struct sreq *r)
{
	struct response *resp;
	int cell = s->run != NULL ? s->run->cell : 0;
	char words[sizeof r->stop_by];
	bool was = session_stop(s, session_stopper(r, words, sizeof words));

	resp = response_new(ST_OK);
	response_set(resp, "interrupted", json_boolean(was));
	response_set(resp, "cell", was ? json_integer(cell) : json_null());
	session_answer(r, resp);
}

static void
session_serve_shutdown(struct session *s, struct sreq *r)
{
	s->done = true;
	session_answer(r, response_new(ST_OK));
	/* What came after the shutdown is answered, not dropped. */
	while ((r = s->queue) != NULL) {
		s->queue = r->next;
		session_answer(r, response_invalid("the session was shut "
		    "down before this request ran"));
	}
	s->queue_tail = &s->queue;
}

/* Who serves each op; request_ops says when (request.h).  The runs
 * (OPF_RUN) go to the worker under a deadline: reset's replaces the
 * worker with a fresh interpreter (session_start_run). */
static void (*const session_servers[])(struct session *, struct sreq *) = {
	[OP_EXEC] = session_start_run,
	[OP_VARS] = session_start_run,
	[OP_INSPECT] = session_start_run,
	[OP_COMPLETE] = session_start_run,
	[OP_SNAPSHOT] = session_snapshot,
	[OP_SNAPSHOTS] = session_snapshots,
	[OP_ROLLBACK] = session_rollback,
	[OP_RESET] = session_start_run,
	[OP_INTERRUPT] = session_serve_interrupt,
	[OP_PING] = session_serve_ping,
	[OP_SHUTDOWN] = session_serve_shutdown,
	[OP_INPUT] = session_serve_input,
};

static void
session_serve(struct session *s, struct sreq *r)
{
	if ((size_t)r->op >= nitems(session_servers) ||
	    session_servers[r->op] == NULL)
		fatal("op '%s' has no server", request_ops[r->op].name);
	session_servers[r->op](s, r);
}

uint64_t
session_submit(struct session *s, int client, json_t *req, json_t *id,
    enum op op)
{
	struct sreq *r;
	uint64_t seq;

	request_magic(req, &op);	/* %snapshot: the supervisor's */
	r = sreq_new(s, client, req, id, op);
	seq = r->seq;
	if (session_watched(s)) {
		struct sevent *e = session_event_new(EV_QUEUED, r);

		e->ev.req = json_incref(req);
		session_post(s, e);
	}
	if (request_ops[op].where == OP_IMMEDIATE) {
		session_serve(s, r);	/* even while a cell runs */
		return seq;
	}
	s->ckpt_due = 0;	/* not quiet: the idle checkpoint waits */
	*s->queue_tail = r;
	s->queue_tail = &r->next;
	session_dispatch(s);
	return seq;
}

uint64_t
session_reject(struct session *s, int client, json_t *id,
    const char *message)
{
	struct sreq *r = sreq_new(s, client, json_object(), id, OP_PING);
	uint64_t seq = r->seq;	/* r is freed once answered */

	r->ready = response_invalid("%s", message);
	*s->queue_tail = r;
	s->queue_tail = &r->next;
	session_dispatch(s);
	return seq;
}

bool
session_cancel(struct session *s, uint64_t seq)
{
	struct sreq **pp, *r;

	if (s->run != NULL && s->run->seq == seq)
		return session_interrupt(s);
	for (pp = &s->queue; (r = *pp) != NULL; pp = &r->next) {
		if (r->seq != seq || r->redo > 0)
			continue;
		*pp = r->next;
		if (*pp == NULL)
			s->queue_tail = pp;
		session_drop(s, r, "cancelled");
		return true;
	}
	return false;
}

/* ---- the loop ------------------------------------------------------ */

static void
session_check_deadlines(struct session *s)
{
	struct sreq *r = session_serving(s);
	int64_t now = now_ms();

	/* Stopped or wedged: init reports the kill, and the next
	 * checkpoint is tried (session_worker_died). */
	if (life_resume_expired(&s->life, now))
		session_signal(s, SIGKILL);
	session_hold_expired(s, now);
	if (r == NULL)
		return;
	if (r->kill_at != 0 && now >= r->kill_at) {
		session_usage_end(s, r, NULL);	/* the last chance to */
		r->killed = true;
		r->kill_at = 0;
		r->deadline = 0;
		session_signal(s, SIGKILL);
		return;
	}
	if (r->deadline != 0 && now >= r->deadline && !r->timed_out &&
	    !r->interrupted) {
		r->timed_out = true;
		r->deadline = 0;
		if (r->stop_ns == 0)
			r->stop_ns = now_ns();
		life_deadline(&s->life);
		session_signal(s, SIGINT);
		r->kill_at = now + (int64_t)ceil(s->opts->grace * 1000);
	}
}

int64_t
session_next_deadline(const struct session *s)
{
	const struct sreq *r = session_serving(s);

	if (s->events != NULL || s->failed)
		return 0;
	if (s->life.resuming != NULL && s->life.resume_deadline != 0)
		return s->life.resume_deadline;
	if (s->hold_deadline > 0)
		return s->hold_deadline;
	if (r == NULL)
		return session_ckpt_deadline(s);
	if (r->kill_at != 0)
		return r->kill_at;
	if (r->deadline != 0 && !r->timed_out && !r->interrupted)
		return r->deadline;
	return -1;
}

/* The descriptors, in the order session_run reads them back. */
int
session_fds(const struct session *s, struct pollfd *pfd, int max)
{
	int fds[5], n = 0, i;

	fds[n++] = s->init.chan.fd;
	fds[n++] = link_open(&s->ctl) ? s->ctl.chan.fd : -1;
	fds[n++] = s->out;
	fds[n++] = s->err;
	fds[n++] = s->gate_fd;
	for (i = 0; i < n && i < max; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	return n;
}

static void
session_handle(struct session *s, const struct pollfd *pfd, int n)
{
	if (n < 5)
		return;
	/* Output first, then replies: a reply ends the cell, and its
	 * output must be in by then (session_reply drains too).  Each
	 * descriptor is checked again: a handler before it may have
	 * closed it. */
	if (pfd[2].revents && pfd[2].fd == s->out && s->out >= 0 &&
	    !session_drain(s, false, SESSION_DRAIN_BUDGET)) {
		close(s->out);
		s->out = -1;
	}
	if (pfd[3].revents && pfd[3].fd == s->err && s->err >= 0 &&
	    !session_drain(s, true, SESSION_DRAIN_BUDGET)) {
		close(s->err);
		s->err = -1;
	}
	if (pfd[1].revents && link_open(&s->ctl) && pfd[1].fd ==
	    s->ctl.chan.fd)
		session_from_worker(s);
	if (pfd[0].revents)
		session_from_init(s);
	if (pfd[4].revents && s->gate_fd >= 0 && pfd[4].fd == s->gate_fd)
		session_gate(s);
}

int
session_run(struct session *s, const struct pollfd *pfd, int n)
{
	if (!s->failed)
		session_handle(s, pfd, n);
	if (s->reap_orphans)
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	if (!s->failed) {
		session_check_deadlines(s);
		session_dispatch(s);
		session_ckpt_tick(s);
	}
	session_deliver(s);
	if (life_ready(&s->life) && !link_ckpt_owed(&s->ctl))
		session_reset_peak(s);
	return s->failed ? -1 : 0;
}

/* poll's timeout for a deadline, capped by the caller's. */
static int
session_wait_ms(const struct session *s, int timeout_ms)
{
	int64_t when = session_next_deadline(s), now;

	if (when < 0)
		return timeout_ms;
	now = now_ms();
	if (when <= now)
		return 0;
	if (timeout_ms < 0 || when - now < timeout_ms)
		return (int)(when - now);
	return timeout_ms;
}

int
session_poll(struct session *s, struct pollfd *extra, int nextra,
    int timeout_ms)
{
	int n = session_fds(s, NULL, 0), i, rc;
	struct pollfd *pfd = xcalloc((size_t)(n + nextra), sizeof *pfd);

	session_fds(s, pfd, n);
	for (i = 0; i < nextra; i++) {
		pfd[n + i] = extra[i];
		pfd[n + i].revents = 0;
	}
	rc = poll(pfd, (nfds_t)(n + nextra), session_wait_ms(s, timeout_ms));
	if (rc == -1 && errno != EINTR)
		session_fail(s, "poll: %s", strerror(errno));
	for (i = 0; i < n + nextra; i++)
		if (rc <= 0)
			pfd[i].revents = 0;
	for (i = 0; i < nextra; i++)
		extra[i].revents = pfd[n + i].revents;
	rc = session_run(s, pfd, n);
	free(pfd);
	return rc;
}

/* ---- life ---------------------------------------------------------- */

static json_t *
session_worker_conf(const struct coil_opts *o)
{
	json_t *c = json_pack("{s:s, s:I, s:s, s:i}", "workdir",
	    o->workdir, "max_output", (json_int_t)o->max_output, "figure_dir",
	    o->figure_dir, "traceback_frames", 20);
	json_t *pre = json_array();
	size_t i;

	/* For the hints of errors: whether a cell could install anything. */
	json_object_set_new(c, "sandbox", json_string(sandbox_profile_name(
	    o->sbx.profile)));
	for (i = 0; i < o->npreload; i++)
		json_array_append_new(pre, json_string(o->preload[i]));
	json_object_set_new(c, "preload", pre);
	if (o->nallow_import > 0) {
		pre = json_array();
		for (i = 0; i < o->nallow_import; i++)
			json_array_append_new(pre, json_string(
			    o->allow_import[i]));
		json_object_set_new(c, "allow_import", pre);
	}
	return c;
}

/* What a supervisor must be before it forks init: one that a gone
 * reader cannot kill with SIGPIPE, and the reaper of every orphan. */
static int
session_prepare(char *err, size_t errlen)
{
	/* A reader that goes away is an EPIPE for the front end to see,
	 * not a signal that skips the teardown. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return err_set(err, errlen, "signal(SIGPIPE): %s",
		    strerror(errno));
	/* No process of the session outlives it: orphans come to us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		return err_set(err, errlen, "prctl(PR_SET_CHILD_SUBREAPER): "
		    "%s", strerror(errno));
	return 0;
}

struct session *
session_new(const struct coil_opts *opts, char *err, size_t errlen)
{
	struct session *s = xcalloc(1, sizeof *s);

	s->opts = opts;
	s->queue_tail = &s->queue;
	s->events_tail = &s->events;
	s->orphan_warnings = json_array();
	life_init(&s->life);
	link_init(&s->ctl, -1);
	s->out = s->err = s->pidfd = s->gate_fd = -1;
	usage_init(&s->usage);
	buf_init(&s->start_err);
	outbuf_init(&s->ob_out, opts->max_output);
	outbuf_init(&s->ob_err, opts->max_output);
	ckpt_set_init(&s->ck, opts->checkpoints, opts->checkpoint_memory,
	    session_ckpt_dropped, s);
	s->node = ckpt_node_new(0, NULL);
	s->worker_conf = session_worker_conf(opts);
	if ((opts->export != NULL && (s->export = export_new(opts->export,
	    err, errlen)) == NULL) ||
	    session_prepare(err, errlen) == -1 || init_start(&s->init,
	    s->worker_conf, &opts->sbx, err, errlen) == -1)
		goto out;
	/* The transcript is the first client, so each line is written
	 * before any client hears of what it says. */
	if (opts->record != NULL) {
		if ((s->rec = record_open(opts, err, errlen)) == NULL)
			goto out;
		session_attach(s, ORIGIN_AGENT, SESSION_OBSERVE |
		    SESSION_NO_NS, record_event, s->rec);
	}
	/* Kept with or without --export: %save FILE.ipynb asks for it. */
	if (opts->export != NULL) {
		session_attach(s, ORIGIN_AGENT, SESSION_OBSERVE |
		    SESSION_NO_NS, export_event, s->export);
	} else {
		s->export = export_keeper();
		s->export_fed = true;
	}
	/* The order an exec's streams came in: for the keeper, and for
	 * the history lines an attaching client gets. */
	s->runs = xcalloc(1, sizeof *s->runs);
	session_spawn(s);
	return s;
out:
	/* No session, so no notebook of it either. */
	export_free(s->export);
	s->export = NULL;
	session_free(s);
	return NULL;
}

int
session_free(struct session *s)
{
	struct sreq *r, *next;
	struct sevent *e;
	int i, rc;

	if (s == NULL)
		return 0;
	/* The checkpoints first: each also dies when its socket closes,
	 * but a kill gives the memory back before coil has exited. */
	ckpt_set_free(&s->ck);
	if (s->init.pid > 0)
		init_stop(&s->init);
	/* Also after a failure, when init may be gone already. */
	sandbox_cleanup(&s->opts->sbx);
	session_close_worker(s);
	if (s->run != NULL)
		sreq_free(s->run);
	for (r = s->queue; r != NULL; r = next) {
		next = r->next;
		sreq_free(r);
	}
	while ((e = s->events) != NULL) {
		s->events = e->next;
		sevent_free(e);
	}
	for (i = 0; i < s->nclients; i++)
		sclient_free(s->clients[i]);
	free(s->clients);
	outbuf_free(&s->ob_out);
	outbuf_free(&s->ob_err);
	free(s->runs);
	buf_free(&s->start_err);
	json_decref(s->worker_conf);
	json_decref(s->orphan_warnings);
	json_decref(s->history);
	json_decref(s->history_figs);
	json_decref(s->sandbox);
	if (s->gate_fd >= 0)
		close(s->gate_fd);
	ckpt_node_unref(s->node);
	free(s->died_idle);
	session_redo_free(s);
	free(s->python);
	record_close(s->rec);
	rc = export_close(s->export);
	free(s);
	return rc;
}

bool
session_idle(const struct session *s)
{
	return s->run == NULL && s->queue == NULL && s->events == NULL;
}

bool
session_done(const struct session *s)
{
	return s->done && s->events == NULL;
}

const char *
session_failure(const struct session *s)
{
	return s->failed ? s->failure : NULL;
}

int
session_cell(const struct session *s)
{
	return s->cells;
}
