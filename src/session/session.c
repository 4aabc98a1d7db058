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
	while (s->run == NULL && s->queue != NULL && !s->hub->done &&
	    !s->failed && !s->hub->failed &&
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

/* A front end's Ctrl-C: the running cell of every session (a local
 * front end is one client; its cell is the one that runs). */
bool
session_interrupt(struct session *s)
{
	bool any = false;
	int i;

	for (i = 0; i < s->hub->nall; i++)
		any |= session_stop(s->hub->all[i], NULL);
	return any;
}

static struct sreq *
sreq_new(struct session *s, int client, json_t *req, json_t *id,
    enum op op)
{
	struct sreq *r = sreq_alloc(s, req, id, op);
	struct sclient *c = session_client(s, client);

	r->seq = ++s->hub->next_seq;
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
	const char *text = json_string_value(json_object_get(r->req, "text"));
	struct session *b;
	int i;

	/* only the cell's own client answers it, whichever session the
	 * cell runs in */
	for (i = 0; i < s->hub->nall; i++) {
		b = s->hub->all[i];
		if (b->run != NULL && b->run->client == r->client &&
		    session_give_input(b, text) == 0) {
			session_answer(r, response_new(ST_OK));
			return;
		}
	}
	session_answer(r, response_invalid("no cell of yours is reading a "
	    "line"));
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
	struct session *b;
	int i;

	s->hub->done = true;
	session_answer(r, response_new(ST_OK));
	/* and what waited for a fork, which will not be made now */
	while ((r = s->hub->limbo) != NULL) {
		s->hub->limbo = r->next;
		session_answer(r, response_invalid("the session was shut down "
		    "before this request ran"));
	}
	s->hub->limbo_tail = &s->hub->limbo;
	/* What came after the shutdown is answered, not dropped, in every
	 * branch. */
	for (i = 0; i < s->hub->nall; i++) {
		b = s->hub->all[i];
		while ((r = b->queue) != NULL) {
			b->queue = r->next;
			session_answer(r, response_invalid("the session was "
			    "shut down before this request ran"));
		}
		b->queue_tail = &b->queue;
	}
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
	[OP_FORK] = session_fork,
	[OP_SESSIONS] = session_sessions,
	[OP_CLOSE] = session_close,
	[OP_ADOPT] = session_adopt,
};

/* Each new branch's own transcript, beside main's: an observer of its
 * events alone.  One that cannot be written is said once, in a
 * warning; the branch goes on. */
static void
session_branch_records(struct session *s)
{
	struct session *hub = s->hub, *b;
	struct record *rec;
	char why[512];
	int i, c;

	for (i = 0; hub->rec != NULL && i < hub->nall; i++) {
		b = hub->all[i];
		if (b == hub || b->recorded)
			continue;
		b->recorded = true;
		rec = record_open_branch(hub->rec, hub->opts, b->name,
		    b->parent, b->fork_cell, why, sizeof why);
		if (rec == NULL) {
			session_warn(s, "branch '%s' has no transcript of its "
			    "own: %s", b->name, why);
			continue;
		}
		hub->brecs = xrealloc(hub->brecs, (size_t)(hub->nbrecs + 1) *
		    sizeof *hub->brecs);
		hub->brecs[hub->nbrecs++] = rec;
		c = session_attach(hub, ORIGIN_AGENT, SESSION_OBSERVE |
		    SESSION_NO_NS, record_event, rec);
		session_only(hub, c, b->name);
	}
}

static void
session_serve(struct session *s, struct sreq *r)
{
	enum op op = r->op;

	if ((size_t)op >= nitems(session_servers) ||
	    session_servers[op] == NULL)
		fatal("op '%s' has no server", request_ops[op].name);
	session_servers[op](s, r);	/* r may be gone now */
	if (op == OP_FORK)
		session_branch_records(s);
}

/* A magic rewritten into an op (request_magic) is checked as that op's
 * request would be: NULL, or why not. */
static const char *
session_magic_check(json_t *req, char *why, size_t len)
{
	json_t *copy = json_deep_copy(req), *out = NULL, *id = NULL;
	enum op op;
	int rc = request_from_json(copy, &out, &id, &op, why, len);

	json_decref(out);
	json_decref(id);
	return rc == 0 ? NULL : why;
}

/* r, routed to its session s: observers hear of it, then it is served
 * (an immediate op at once, even while a cell runs) or queued. */
static void
session_enqueue(struct session *s, struct sreq *r)
{
	if (session_watched(s)) {
		struct sevent *e = session_event_new(EV_QUEUED, r);

		e->ev.req = json_incref(r->req);
		session_post(s, e);
	}
	if (request_ops[r->op].where == OP_IMMEDIATE) {
		session_serve(s, r);
		return;
	}
	s->ckpt_due = 0;	/* not quiet: the idle checkpoint waits */
	*s->queue_tail = r;
	s->queue_tail = &r->next;
	session_dispatch(s);
}

/* The requests held for a session a fork was to make (session_route
 * found none): those whose session is there now go to its queue, in
 * their order; the others are answered once no fork is pending. */
/* Whether a request of client's is on the list (the held ones). */
static bool
session_limbo_holds(const struct sreq *list, int client)
{
	const struct sreq *r;

	for (r = list; r != NULL; r = r->next)
		if (r->client == client)
			return true;
	return false;
}

static void
session_limbo_release(struct session *hub)
{
	struct sreq *r, *keep = NULL, **tail = &keep;
	struct session *t;
	bool pending;
	char why[512];

	if (hub->limbo == NULL)
		return;
	pending = session_fork_pending(hub);
	while ((r = hub->limbo) != NULL) {
		hub->limbo = r->next;
		r->next = NULL;
		t = session_route(hub, r->client, r->req, r->op, why,
		    sizeof why);
		/* behind one of its client's still held: in order */
		if (t != NULL && session_limbo_holds(keep, r->client))
			t = NULL;
		if (t == NULL && pending) {
			*tail = r;
			tail = &r->next;
		} else if (t == NULL) {
			session_answer(r, response_invalid("%s", why));
		} else {
			r->s = t;
			session_enqueue(t, r);
		}
	}
	hub->limbo = keep;
	hub->limbo_tail = keep != NULL ? tail : &hub->limbo;
}

uint64_t
session_submit(struct session *s, int client, json_t *req, json_t *id,
    enum op op)
{
	struct session *t;
	struct sreq *r;
	uint64_t seq;
	char why[512];

	/* %snapshot, %fork: the supervisor's */
	if (request_magic(req, &op) &&
	    session_magic_check(req, why, sizeof why) != NULL) {
		r = sreq_new(s, client, req, id, op);
		seq = r->seq;
		session_answer(r, response_invalid("%s", why));
		return seq;
	}
	t = session_route(s->hub, client, req, op, why, sizeof why);
	r = sreq_new(t != NULL ? t : s->hub, client, req, id, op);
	seq = r->seq;
	/* a fork may make its session; and what the client sent after a
	 * request held so waits behind it (an adopt held there changes
	 * where the next goes), but ping, interrupt and the like */
	if ((t == NULL && (s->hub->limbo != NULL ||
	    session_fork_pending(s->hub))) || (t != NULL &&
	    (request_ops[op].where != OP_IMMEDIATE || op == OP_ADOPT ||
	    op == OP_CLOSE) && session_limbo_holds(s->hub->limbo, client)))
		session_limbo_hold(s->hub, r);
	else if (t == NULL)
		session_answer(r, response_invalid("%s", why));
	else
		session_enqueue(t, r);
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

static bool
session_cancel_in(struct session *s, uint64_t seq)
{
	struct sreq **pp, *r;

	if (s->run != NULL && s->run->seq == seq)
		return session_stop(s, NULL);
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

bool
session_cancel(struct session *s, uint64_t seq)
{
	int i;

	for (i = 0; i < s->hub->nall; i++)
		if (session_cancel_in(s->hub->all[i], seq))
			return true;
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
	/* A hello may be waiting unread: a fork op holds the loop while
	 * it makes its branches, and this turn's poll came before */
	if (s->life.resuming != NULL && s->life.resume_deadline != 0 &&
	    now >= s->life.resume_deadline && link_open(&s->ctl))
		session_from_worker(s);
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

/* When one session needs session_run; -1: never. */
static int64_t
session_deadline_of(const struct session *s)
{
	const struct sreq *r = session_serving(s);

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

int64_t
session_next_deadline(const struct session *s)
{
	int64_t when = -1, t;
	int i;

	if (s->events != NULL || s->failed)
		return 0;
	for (i = 0; i < s->nall; i++) {
		t = session_deadline_of(s->all[i]);
		if (t >= 0 && (when < 0 || t < when))
			when = t;
	}
	return when;
}

/*
 * The descriptors, in the order session_run reads them back: init's,
 * then each open session's control socket, stdout and stderr pipes and
 * fork gate (main's first).  Each session keeps where its four went
 * (pfd_at), so that a branch made or closed between the two calls
 * takes nothing of another's.
 */
int
session_fds(struct session *s, struct pollfd *pfd, int max)
{
	struct session *b;
	int n = 0, i, k, fds[4];

	if (n < max)
		pfd[n] = (struct pollfd){ .fd = s->init.chan.fd,
		    .events = POLLIN };
	n++;
	for (i = 0; i < s->nall; i++) {
		b = s->all[i];
		fds[0] = link_open(&b->ctl) ? b->ctl.chan.fd : -1;
		fds[1] = b->out;
		fds[2] = b->err;
		fds[3] = b->gate_fd;
		if (n + 4 <= max)
			b->pfd_at = n;
		for (k = 0; k < 4; k++, n++)
			if (n < max)
				pfd[n] = (struct pollfd){ .fd = fds[k],
				    .events = POLLIN };
	}
	/* strict: the retired gates, which copies may still fork through */
	if (n + s->ngates <= max)
		s->gates_at = n;
	for (i = 0; i < s->ngates; i++, n++)
		if (n < max)
			pfd[n] = (struct pollfd){ .fd = s->gates[i],
			    .events = POLLIN };
	return n;
}

/* One session's four descriptors, as poll filled them. */
static void
session_handle(struct session *s, const struct pollfd *pfd, int n)
{
	const struct pollfd *p = s->pfd_at > 0 && s->pfd_at + 4 <= n ?
	    pfd + s->pfd_at : NULL;

	if (p == NULL)
		return;
	/* Output first, then replies: a reply ends the cell, and its
	 * output must be in by then (session_reply drains too).  Each
	 * descriptor is checked again: a handler before it may have
	 * closed it. */
	if (p[1].revents && p[1].fd == s->out && s->out >= 0 &&
	    !session_drain(s, false, SESSION_DRAIN_BUDGET)) {
		close(s->out);
		s->out = -1;
	}
	if (p[2].revents && p[2].fd == s->err && s->err >= 0 &&
	    !session_drain(s, true, SESSION_DRAIN_BUDGET)) {
		close(s->err);
		s->err = -1;
	}
	if (p[0].revents && link_open(&s->ctl) && p[0].fd == s->ctl.chan.fd)
		session_from_worker(s);
	if (p[3].revents && s->gate_fd >= 0 && p[3].fd == s->gate_fd)
		session_gate(s);
}

/* Each open session in turn; one closed or made meanwhile is left out
 * (the list may change under the loop: each is found again by index). */
int
session_run(struct session *s, const struct pollfd *pfd, int n)
{
	struct session *b;
	int i;

	if (!s->failed) {
		for (i = 0; i < s->nall; i++)
			session_handle(s->all[i], pfd, n);
		if (n > 0 && pfd[0].revents && pfd[0].fd == s->init.chan.fd)
			session_from_init(s);
		session_gates_retired(s, pfd, n);
	}
	if (s->reap_orphans)
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	for (i = 0; !s->failed && i < s->nall; i++) {
		b = s->all[i];
		session_check_deadlines(b);
		session_dispatch(b);
		session_ckpt_tick(b);
	}
	session_branches_reap(s);
	session_limbo_release(s);
	session_deliver(s);
	for (i = 0; i < s->nall; i++) {
		b = s->all[i];
		if (life_ready(&b->life) && !link_ckpt_owed(&b->ctl))
			session_reset_peak(b);
	}
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
