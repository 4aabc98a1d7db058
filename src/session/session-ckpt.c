/*
 * session-ckpt.c - checkpoint policy (see session-int.h): ordering a
 * checkpoint (ours to decide, never the worker's) and when
 * (--checkpoint-policy), what a restore lost, taking in what arrives,
 * and the strict profile's fork gate.  The ops served with checkpoints
 * (snapshot, snapshots, rollback) are session-ops.c's.
 *
 * Layer: the policy, under the run's answer.  session-link.c hands it
 * the checkpoint frames (session_ckpt_arrived, session_ckpt_failed,
 * session_gate_arrived).  Calls down into the worker's process
 * (session_send), its life (session-life.c), ckpt.c, the costs and the
 * outbox.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "chan.h"
#include "sandbox.h"
#include "session-int.h"

/* ckpt_set's on_drop: forget every pointer to a checkpoint that goes. */
void
session_ckpt_dropped(void *ctx, struct ckpt *ck)
{
	struct session *s = ctx;

	/* Still the worker's child until it reaps it: not a stray. */
	if (s->gate_fd >= 0 && ck->pidfd >= 0)
		s->dropped[s->ndropped++ % nitems(s->dropped)] =
		    ckpt_pid_of(ck->pidfd);
	if (s->current == ck)
		s->current = NULL;
	life_forget(&s->life, ck);
	if (s->run != NULL && s->run->target == ck)
		s->run->target = NULL;
	if (s->run != NULL && s->run->pre == ck)
		s->run->pre = NULL;
}

void
session_set_node(struct session *s, struct ckpt_node *n)
{
	ckpt_node_unref(s->node);
	s->node = n;
}

/* Order a checkpoint of the worker as it is now: ours to decide, never
 * the worker's.  kind explicit is also answered with a reply. */
void
session_order_ckpt(struct session *s, enum link_ckpt kind, int cell)
{
	uint64_t seq;

	session_reset_peak(s);
	seq = link_owe(&s->ctl, LINK_CKPT, kind, 0, -1);
	if (kind == LINK_CK_EXPLICIT)
		link_owe(&s->ctl, LINK_REPLY, 0, seq, -1);
	session_ckpt_kept(s);
	if (kind == LINK_CK_AUTO)
		s->ckpt_ordered_ns = now_ns();
	session_send(s, json_pack("{s:s, s:s, s:i, s:I}", "op", "ckpt",
	    "kind", link_ckpt_names[kind], "cell", cell, "seq",
	    (json_int_t)seq));
}

/*
 * The policy.  A checkpoint costs the worker a fork (a copy of its page
 * tables) and the next cell the copy-on-write faults of the pages it
 * writes again: about a millisecond for a bare interpreter, several for
 * one holding numpy and pandas, more than a trivial cell itself.  Under
 * "idle", the default, the state after a cell that ran code is kept
 *
 *  - when the session is quiet: nothing runs or waits, and no request
 *    came for CKPT_IDLE_MS (a timer, through session_next_deadline), so
 *    that back-to-back cells get one checkpoint, after the last; but
 *    only once the cells not yet kept took CKPT_IDLE_RATIO times what a
 *    checkpoint's fork takes (CKPT_COST_GUESS_MS until one is timed),
 *    for a checkpoint costs the machine several times its fork (the
 *    copy after it, the exit of the one it replaces: see below).
 *    Cheaper cells, which a crash would lose little of, wait for a
 *    pause: CKPT_PAUSE_MS since the last cell ran, as a model thinking
 *    or a person reading leaves.  A hundred sessions sent trivial cells in
 *    turn then fork none while they are kept busy, where one each,
 *    at the same moment, stalled them all;
 *  - at once, before the answer goes out, when the cells run since the
 *    state was last kept took long next to a checkpoint (CKPT_WORK_RATIO
 *    times what the newest one cost, and at least CKPT_WORK_MS): a crash
 *    then never loses much work, and the checkpoints stay a bounded
 *    share of it;
 *  - but an idle one no sooner than CKPT_SPACING times that cost after
 *    the previous one, so a client that sends a trivial cell every few
 *    milliseconds does not pay a fork for each.
 *
 * The cost is what we can time ourselves: from the order to the
 * checkpoint's arrival.  It is the fork, not all of it: on a 2-CPU VM a
 * session holding numpy, pandas and 100 MB of frames took 4 to 10 ms
 * that way, while each checkpoint cost the process tree about 30 ms of
 * CPU all told (the pages copied after it, the exit of the one it
 * displaced); a bare interpreter 1 to 2 ms.  Hence the large ratios.
 *
 * The pristine checkpoint, a fresh worker's state for reset, is ordered
 * when the session is first quiet, not at start-up: a client that sent
 * its first cell before the worker was up (a pipe, a one-shot run) would
 * wait for the fork and pay the copy-on-write faults of every page the
 * cell touched, 8 ms of a 60 ms cold start here.  If a request that runs
 * code reaches the worker first, there is none, and reset, rollback to
 * 0 and a crash before any checkpoint start a new interpreter, as they
 * do under --checkpoints 0: slower, and just as pristine.
 *
 * "lazy" is "idle" for a fleet: many sessions on one machine, each
 * pausing between cells, where the checkpoint after each pause costs
 * the machine several times the cell (bench/scale.py: 1,000 sessions of
 * trivial cells, the p99 ten times over).  Cheap cells that may be run
 * again (session-redo.c's rule) are left to the redo: none is kept
 * until one that may not has run, their CPU passes the idle ratio,
 * or half the redo's ring is used (session_ckpt_needless).
 *
 * "every" orders one after each such cell, before its answer.  Atomic
 * cells and snapshots fork their own before they run, whatever the
 * policy.  What a restore lost is the supervisor's own record (the
 * lineage of cells, session_lost), so a lazier policy costs no truth.
 */
#define CKPT_IDLE_MS		5
#define CKPT_IDLE_RATIO		10.0
#define CKPT_COST_GUESS_MS	2.0
#define CKPT_PAUSE_MS		1000
#define CKPT_WORK_MS		100.0
#define CKPT_WORK_RATIO		50.0
#define CKPT_SPACING		200.0

/* A checkpoint of the worker's state as it is now is on its way. */
void
session_ckpt_kept(struct session *s)
{
	s->ckpt_wanted = false;
	s->ckpt_due = 0;
	s->ckpt_work_ms = 0;
	s->ckpt_unkept = 0;
	s->ckpt_cpu_ms = 0;
	s->ckpt_unredoable = false;
}

/* The exec r ran code and was answered resp: keep the state now or
 * later. */
void
session_ckpt_after(struct session *s, const struct sreq *r,
    const struct response *resp)
{
	double long_ms = CKPT_WORK_RATIO * s->ckpt_cost_ms;
	double wall_ms = (double)(now_ns() - r->t0) / 1e6;

	s->ckpt_work_ms += wall_ms;
	/* lazy's measure; the wall time when the CPU was not measured */
	s->ckpt_cpu_ms += resp->has & RESP_COST ? resp->cpu_ms : wall_ms;
	s->ckpt_ran_ms = now_ms();
	s->ckpt_unkept++;
	if (s->opts->checkpoint_policy == CKPT_POLICY_EVERY ||
	    (s->ckpt_work_ms >= CKPT_WORK_MS && s->ckpt_work_ms >= long_ms)) {
		session_order_ckpt(s, LINK_CK_AUTO, r->cell);
		return;
	}
	s->ckpt_wanted = true;
	s->ckpt_due = 0;
}

/* Nothing runs, waits or is owed: an order now delays nobody. */
static bool
session_ckpt_quiet(const struct session *s)
{
	return s->run == NULL && s->queue == NULL && life_ready(&s->life) &&
	    !link_ckpt_owed(&s->ctl) && !s->done && !s->failed;
}

/* lazy: the cells since the state was last kept are cheap (their CPU
 * under CKPT_IDLE_RATIO forks: a redo's cost), each may be
 * run again, and the redo's ring still holds them all, with room: a
 * crash would lose nothing a redo cannot give back, so no fork for them
 * yet. */
static bool
session_ckpt_needless(const struct session *s)
{
	double cost = s->ckpt_cost_ms > 0 ? s->ckpt_cost_ms :
	    CKPT_COST_GUESS_MS;

	return s->opts->checkpoint_policy == CKPT_POLICY_LAZY &&
	    !s->ckpt_unredoable && s->ckpt_unkept < REDO_KEEP_CELLS / 2 &&
	    s->ckpt_cpu_ms < CKPT_IDLE_RATIO * cost;
}

/* Each turn of the loop: the pristine checkpoint once the session is
 * quiet, else start the quiet timer, or order when it ran out.  A
 * request that comes stops it (session_submit clears due). */
void
session_ckpt_tick(struct session *s)
{
	int64_t now, due, spaced;
	double cost;

	if (s->life.pristine_owed && session_ckpt_quiet(s)) {
		life_no_pristine(&s->life);
		session_order_ckpt(s, LINK_CK_PRISTINE, 0);
		return;
	}
	if (!s->ckpt_wanted)
		return;
	if (!session_ckpt_quiet(s) || session_ckpt_needless(s)) {
		s->ckpt_due = 0;
		return;
	}
	now = now_ms();
	if (s->ckpt_due == 0) {
		cost = s->ckpt_cost_ms > 0 ? s->ckpt_cost_ms :
		    CKPT_COST_GUESS_MS;
		due = now + CKPT_IDLE_MS;
		/* the pause is from the last cell: other requests (a UI
		 * asking for the namespace) do not put it off */
		if (s->ckpt_work_ms < CKPT_IDLE_RATIO * cost &&
		    s->ckpt_ran_ms + CKPT_PAUSE_MS > due)
			due = s->ckpt_ran_ms + CKPT_PAUSE_MS;
		spaced = s->ckpt_taken_ms + (int64_t)(CKPT_SPACING *
		    s->ckpt_cost_ms);
		s->ckpt_due = due > spaced ? due : spaced;
	}
	if (now >= s->ckpt_due)
		session_order_ckpt(s, LINK_CK_AUTO, s->node->cell);
}

/* The quiet timer for session_next_deadline: -1 when none runs, 0 when
 * it must be started at once. */
int64_t
session_ckpt_deadline(const struct session *s)
{
	if (s->life.pristine_owed && session_ckpt_quiet(s))
		return 0;
	if (!s->ckpt_wanted || !session_ckpt_quiet(s) ||
	    session_ckpt_needless(s))
		return -1;
	return s->ckpt_due;
}

/* The cells whose effects a restore to the state to undoes: those on
 * the worker's line since to, not counting the exec in flight (its
 * answer is about it).  The supervisor's own lineage, built from the
 * answers it read: a new array. */
json_t *
session_lost(struct session *s, struct ckpt_node *to)
{
	json_t *undone, *redone, *lost = json_array(), *v;
	int skip = s->run != NULL && s->run->op == OP_EXEC ? s->run->cell : -1;
	size_t i;

	ckpt_node_diff(s->node, to, &undone, &redone);
	json_array_foreach(undone, i, v)
		if (json_integer_value(v) != skip)
			json_array_append(lost, v);
	json_decref(undone);
	json_decref(redone);
	return lost;
}

/*
 * strict: the gate let one fork through for the checkpoint just answered,
 * and only from the worker's main thread.  Cell code can still run there
 * as the order comes - a Python signal handler calling libc's fork
 * through ctypes while the worker waits (at-fork hooks no longer run:
 * worker-fork.c) - and spend the pass; the worker's own fork is then
 * refused.  Forks are off under strict, so every child
 * of the worker is one of our checkpoints: any other dies here.
 */
static int
session_gate_sweep(struct session *s)
{
	pid_t kids[256], w = s->pidfd >= 0 ? ckpt_pid_of(s->pidfd) : 0;
	int n, i, j, killed = 0;
	struct ckpt *ck;

	for (ck = s->ck.head; ck != NULL; ck = ck->next)
		if (ck->sock >= 0 && ck->pidfd < 0)
			return 0;	/* one we could not tell from a stray */
	if (w <= 0 || (n = link_children(w, kids, (int)nitems(kids))) <= 0)
		return 0;
	for (i = 0; i < n; i++) {
		for (ck = s->ck.head; ck != NULL; ck = ck->next)
			if (ck->pidfd >= 0 && ckpt_pid_of(ck->pidfd) == kids[i])
				break;
		for (j = 0; ck == NULL && j < (int)nitems(s->dropped); j++)
			if (s->dropped[j] == kids[i])
				break;
		if (ck == NULL && j == (int)nitems(s->dropped) &&
		    link_kill_child(w, kids[i]) == 0)
			killed++;
	}
	if (killed > 0)
		session_warn(s, "a process forked by the cell's code while a "
		    "checkpoint was being taken was killed: the strict sandbox "
		    "starts no processes");
	return killed;
}

/*
 * strict: the checkpoint ordered at cell `cell` failed with `error`
 * (the worker's word, only quoted) and errno `err` (EPERM: the fork was
 * refused).  If the gate had let a fork through
 * for it (spent) and the worker's own fork was refused, or a stray was
 * found, the pass went to code of the cells' running on the main thread
 * as the checkpoint was taken; if the gate was not spent and the
 * worker's fork was refused, the gate refused our own checkpoint.  Both
 * are said in the next answer and kept for ping.  Returns whether it
 * was either.
 */
static bool
session_gate_failed(struct session *s, int cell, const char *error,
    int err, bool spent, int killed)
{
	bool refused = err == EPERM;

	if (s->gate_fd < 0 || !(killed > 0 || refused))
		return false;
	if (spent) {
		s->gate_lost++;
		snprintf(s->gate_note, sizeof s->gate_note, "the pass for "
		    "the checkpoint at cell %d went to a fork of the cell's "
		    "code, not the checkpoint%s", cell, killed > 0 ?
		    " (its process was killed)" : "");
		session_warn(s, "the checkpoint gate was spent by a fork of "
		    "the cell's code (code that ran as the checkpoint at cell "
		    "%d was taken), not by the checkpoint, which was not "
		    "taken%s", cell, killed > 0 ? "; that process was killed" :
		    "");
	} else {
		snprintf(s->gate_note, sizeof s->gate_note, "the gate refused "
		    "the checkpoint at cell %d", cell);
		session_warn(s, "the checkpoint gate refused the checkpoint at "
		    "cell %d (%.120s)", cell, error);
	}
	return true;
}

json_t *
session_gate_report(struct session *s)
{
	json_t *rep, *g;

	if (s->sandbox == NULL)
		return NULL;
	g = json_object_get(json_object_get(s->sandbox, "mechanisms"),
	    "checkpoint gate");
	if (!json_is_object(g) || (s->gate_note[0] == '\0' &&
	    s->gate_broken[0] == '\0'))
		return json_incref(s->sandbox);
	rep = json_deep_copy(s->sandbox);
	g = json_object_get(json_object_get(rep, "mechanisms"),
	    "checkpoint gate");
	if (s->gate_broken[0] != '\0') {
		json_object_set_new(g, "state", json_string("failed"));
		json_object_set_new(g, "detail", json_string(s->gate_broken));
	}
	if (s->gate_note[0] != '\0') {
		json_object_set_new(g, "spent_by_cells",
		    json_integer(s->gate_lost));
		json_object_set_new(g, "last", json_string(s->gate_note));
	}
	return rep;
}

/* A checkpoint we ordered arrived (link.c checked its socket, its pidfd
 * and that it was owed); f->kind is the kind we asked for. */
void
session_ckpt_arrived(struct session *s, struct link_frame *f)
{
	int threads = (int)json_integer_value(json_object_get(f->msg,
	    "threads"));
	double fork_ms = json_number_value(json_object_get(f->msg, "fork_ms"));
	struct sreq *r = s->run;
	bool exec_running = r != NULL && r->op == OP_EXEC &&
	    life_busy(&s->life);
	int sock = f->fds[0], pidfd = f->fds[1];
	struct ckpt *ck;
	enum ckpt_kind k;

	if (f->late) {
		if (pidfd >= 0)
			syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		json_object_set_new(f->msg, "error", json_string("it came "
		    "after the worker died, and was not kept"));
		session_ckpt_failed(s, f);
		return;
	}
	f->fds[0] = f->fds[1] = -1;	/* the checkpoint's now */
	if (threads < 0)
		threads = 0;
	if (f->kind == LINK_CK_AUTO && s->ckpt_ordered_ns != 0) {
		s->ckpt_cost_ms = (double)(now_ns() - s->ckpt_ordered_ns) / 1e6;
		s->ckpt_taken_ms = now_ms();
		s->ckpt_ordered_ns = 0;
	}
	if (f->kind == LINK_CK_REARM && s->life.rearm != NULL) {
		ck = life_rearm_take(&s->life);
		ck->sock = sock;
		ck->pidfd = pidfd;
		ck->pid = f->pid;
		ck->threads = threads;
		ck->fork_ms = fork_ms;
	} else {
		if (f->kind == LINK_CK_PRISTINE) {
			k = CKPT_PRISTINE;
			while ((ck = ckpt_pristine(&s->ck)) != NULL)
				ckpt_drop(&s->ck, ck);
		} else if (f->kind == LINK_CK_EXPLICIT) {
			k = CKPT_PINNED;
		} else if (f->kind == LINK_CK_BEFORE) {
			k = s->opts->checkpoints > 0 ? CKPT_AUTO : CKPT_ATOMIC;
		} else {
			k = CKPT_AUTO;
		}
		ck = ckpt_add(&s->ck, k, s->node, sock, pidfd, f->pid, threads,
		    fork_ms);
	}
	/* taken by a worker in a Landlock domain of its session's own: a
	 * resume of it needs none nested (session_resume) */
	ck->own_domain = strcmp(s->isolation, "yes") == 0;
	if (life_gate_close(&s->life) && session_gate_sweep(s) > 0) {
		s->gate_lost++;
		snprintf(s->gate_note, sizeof s->gate_note, "a process "
		    "forked as the checkpoint at cell %d was taken was killed",
		    ck->node->cell);
	}
	if (exec_running) {
		/* The state before the running cell: the previous cell's
		 * checkpoint, or one the atomic cell asked for. */
		if (r->pre != NULL)
			r->pre->held = false;
		r->pre = ck;
		ck->held = r->atomic;
	} else {
		s->current = ck;
	}
	if (r != NULL && r->op == OP_SNAPSHOT && f->kind == LINK_CK_EXPLICIT)
		r->target = ck;
	session_note(s, EV_CHECKPOINT, json_pack("{s:s, s:i, s:s}", "state",
	    "taken", "cell", ck->node->cell, "kind", ckpt_kind_name(ck->kind)));
	if (ckpt_limit(&s->ck, ck, s->pidfd) == -1 && !s->warned_memory) {
		s->warned_memory = true;
		session_warn(s, "--checkpoint-memory is not enforced: the "
		    "checkpoints' memory cannot be read from "
		    "/proc/PID/smaps_rollup here");
	}
}

/* A checkpoint we ordered could not be taken: say so on the next
 * response. */
void
session_ckpt_failed(struct session *s, struct link_frame *f)
{
	const char *error = json_string_value(json_object_get(f->msg,
	    "error"));
	/* the worker's errno, a number: its text is in the worker's
	 * language, not necessarily ours */
	json_t *jerr = json_object_get(f->msg, "errno");
	int err = json_is_integer(jerr) ? (int)json_integer_value(jerr) : 0;
	int cell = s->node->cell, killed = 0;
	bool spent = life_gate_close(&s->life);
	struct ckpt *ck;

	if (spent)
		killed = session_gate_sweep(s);
	if (error == NULL)
		error = "unknown error";
	session_gate_failed(s, cell, error, err, spent, killed);
	session_note(s, EV_CHECKPOINT, json_pack("{s:s, s:i, s:s, s:s}",
	    "state", "failed", "cell", cell, "kind", link_ckpt_names[f->kind],
	    "error", error));
	switch (f->kind) {
	case LINK_CK_AUTO:
		ck = ckpt_nearest(&s->ck, s->node, session_warnings(s));
		if (ck != NULL && ck->kind != CKPT_PRISTINE)
			session_warn(s, "no checkpoint could be taken after cell "
			    "%d (%.160s): if the worker dies now, the namespace "
			    "goes back to cell %d", cell, error, ck->node->cell);
		else
			session_warn(s, "no checkpoint could be taken after cell "
			    "%d (%.160s): if the worker dies now, the namespace "
			    "is lost", cell, error);
		break;
	case LINK_CK_PRISTINE:
		session_warn(s, "the pristine checkpoint could not be taken "
		    "(%.160s): reset will start a new interpreter", error);
		break;
	case LINK_CK_REARM:
		if ((ck = s->life.rearm) != NULL) {
			session_warn(s, "the checkpoint at cell %d%s%s%s was used "
			    "by the restore and could not be taken again "
			    "(%.160s)", ck->node->cell, ck->name ? " ('" : "",
			    ck->name ? ck->name : "", ck->name ? "')" : "",
			    error);
			ckpt_drop(&s->ck, ck);
		}
		break;
	default:
		/* explicit and before: the reply to the request says it. */
		break;
	}
}

/* strict: the new worker's fork listener (link.c checked that it is
 * one), sent before its Python started. */
void
session_gate_arrived(struct session *s, struct link_frame *f)
{
	session_gate_retire(s);
	s->gate_fd = f->fds[0];
	f->fds[0] = -1;
	life_gate_close(&s->life);
	s->gate_broken[0] = '\0';
}

/* strict: a fork of the worker waits for our answer (see gate_fd). */
/* Whose fork the gate may let through: a session's worker's, from
 * its main thread, for the checkpoint it owes (once), or the copy of a
 * checkpoint we asked for (session-branch.c): from it, or from the
 * child it forks the copy from. */
struct session_gate_ask {
	struct session *hub;
	struct session *who;	/* the session whose checkpoint it was */
};

static bool
session_gate_allow(void *ctx, pid_t tid)
{
	struct session_gate_ask *g = ctx;
	struct session *b;
	pid_t kids[16];
	int i, n;

	for (i = 0; i < g->hub->nall; i++) {
		b = g->hub->all[i];
		if (b->pidfd >= 0 && !b->life.gate_spent &&
		    link_ckpt_owed(&b->ctl) && ckpt_pid_of(b->pidfd) == tid) {
			g->who = b;
			return true;
		}
	}
	if (g->hub->cloning <= 0 || g->hub->cloning_passes <= 0)
		return false;
	if (tid != g->hub->cloning) {
		n = link_children(g->hub->cloning, kids, (int)nitems(kids));
		for (i = 0; i < n && kids[i] != tid; i++)
			;
		if (i == n)
			return false;
	}
	g->hub->cloning_passes--;
	return true;
}

/* Answer one fork at gate fd: -1 when the gate is broken. */
static int
session_gate_answer(struct session *s, int fd)
{
	struct session_gate_ask g = { s->hub, NULL };
	int rc = sandbox_gate_answer(fd, session_gate_allow, &g);

	if (rc == 1 && g.who != NULL)
		life_gate_pass(&g.who->life);
	return rc == -1 && errno != ENOENT && errno != EAGAIN &&
	    errno != EINTR ? -1 : 0;
}

void
session_gate(struct session *s)
{
	if (session_gate_answer(s, s->gate_fd) == 0)
		return;
	/* The listener is broken: forks now fail, checkpoints too. */
	snprintf(s->gate_broken, sizeof s->gate_broken, "the listener "
	    "failed (%s): no checkpoints until the worker is replaced",
	    strerror(errno));
	session_warn(s, "the checkpoint gate failed (%s); checkpoints are "
	    "off", strerror(errno));
	close(s->gate_fd);
	s->gate_fd = -1;
}

void
session_gate_fd(struct session *hub, int fd)
{
	int i;

	for (i = 0; i < hub->nall; i++)
		if (hub->all[i]->gate_fd == fd) {
			session_gate(hub->all[i]);
			return;
		}
	/* a retired one: one that fails is closed by the loop's turn */
	(void)session_gate_answer(hub, fd);
}

void
session_gate_retire(struct session *s)
{
	struct session *hub = s->hub;

	if (s->gate_fd < 0)
		return;
	hub->gates = xrealloc(hub->gates, (size_t)(hub->ngates + 1) *
	    sizeof *hub->gates);
	hub->gates[hub->ngates++] = s->gate_fd;
	s->gate_fd = -1;
}

void
session_gates_retired(struct session *hub, const struct pollfd *pfd, int n)
{
	int i, k = 0, at = hub->gates_at;

	for (i = 0; i < hub->ngates; i++) {
		const struct pollfd *p = at > 0 && at + i < n &&
		    pfd[at + i].fd == hub->gates[i] ? &pfd[at + i] : NULL;
		bool gone = false;

		if (p != NULL && (p->revents & POLLIN))
			gone = session_gate_answer(hub, hub->gates[i]) == -1;
		else if (p != NULL && (p->revents & (POLLHUP | POLLERR)))
			gone = true;	/* no process uses its filter */
		if (gone)
			close(hub->gates[i]);
		else
			hub->gates[k++] = hub->gates[i];
	}
	/* the places moved: the rest wait for the next poll */
	if (k != hub->ngates)
		hub->gates_at = -1;
	hub->ngates = k;
}
