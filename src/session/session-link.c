/*
 * session-link.c - what the session's worker says and does (see
 * session-int.h): the frames it sends, its death and its replacement,
 * and init's reports.  The worker as a process (channels, spawn,
 * resume, signals, output) is session-proc.c's.
 *
 * The worker is untrusted (link.h): every frame it writes is checked
 * against what the supervisor asked it for, and one that is not owed ends
 * it (session_broke) as a crash would, with the protocol violation as the
 * reason.  So the supervisor alone decides when a checkpoint is taken:
 * it orders one (session_order_ckpt) after a cell that ran code, when
 * the policy says (session-ckpt.c), after a fresh worker's hello (the
 * pristine one) and after a resume (the re-arm).  The socket keeps them
 * in order: reply N, checkpoint N, reply N+1 ...  A new worker is
 * either spawned fresh by init or resumed from a checkpoint
 * (session_restore), and only once the old one is dead, as init
 * reports: its checkpoints are then children of init, which a resumed
 * worker's death signal relies on.  Ops that
 * replace the worker on purpose (rollback, reset, a failed atomic cell)
 * kill it and go the same way; the run stays in s->run with life.after
 * set until the new worker says hello, so that the answer says what is
 * really there.
 *
 * Layer: the worker's link, under the ops.  Hands each checked frame
 * down to the file that consumes it (the table session_on_frame: the
 * run's answer, the checkpoint policy) and, when the worker dies or a
 * new one is up, tells the run's answer (session_run_died,
 * session_restored); moves the worker's state only through
 * session-life.c, and works the process through session-proc.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "export.h"
#include "session-int.h"

static void session_spawned(struct session *s, pid_t pid);

/* hello: a worker is up, spawned fresh or resumed from a checkpoint (the
 * one owed hello says which; link.c checked that it agrees). */
static void
session_hello(struct session *s, struct link_frame *f)
{
	json_t *m = f->msg;
	const char *py = json_string_value(json_object_get(m, "python"));
	struct ckpt *ck = s->life.resuming;
	json_t *restored;

	if (f->nfds > 0) {
		if (s->pidfd >= 0)
			close(s->pidfd);
		s->pidfd = f->fds[0];
		usage_close(&s->usage);
		f->fds[0] = -1;
	}
	/* The report of what the sandbox enforces: from a fresh worker,
	 * which says hello before any cell runs; a resumed one's hello
	 * might follow cell code (an at-fork hook), and adds nothing. */
	if (ck == NULL && json_is_object(json_object_get(m, "sandbox"))) {
		json_decref(s->sandbox);
		s->sandbox = json_incref(json_object_get(m, "sandbox"));
	}
	if (py != NULL && s->python == NULL)
		s->python = xstrndup(py, strcspn(py, " ") < 64 ?
		    strcspn(py, " ") : 64);
	/* A branch's worker: whether it has a Landlock domain of its own
	 * (its word: it said so before any cell ran in it) */
	if (ck != NULL && json_is_true(json_object_get(m, "isolated")))
		snprintf(s->isolation, sizeof s->isolation, "yes");
	else if (ck != NULL && json_is_string(json_object_get(m, "isolated")))
		snprintf(s->isolation, sizeof s->isolation, "%.190s",
		    json_string_value(json_object_get(m, "isolated")));
	life_hello(&s->life, s->opts->checkpoints > 0);
	/* What a starting worker printed is not a cell's. */
	buf_free(&s->start_err);
	s->current = NULL;
	/* What is lost is our record (the lineage), not the worker's. */
	if (ck != NULL) {
		restored = ckpt_restored(ck);
		json_object_set_new(restored, "lost", session_lost(s, ck->node));
		session_set_node(s, ckpt_node_ref(ck->node));
	} else {
		restored = json_pack("{s:n, s:i, s:o}", "cell", "threads_lost",
		    0, "lost", session_lost(s, NULL));
		session_set_node(s, ckpt_node_new(0, NULL));
	}
	/* Its process is the worker now: a replacement (life.rearm),
	 * before the run's answer lets anything else be sent. */
	if (ck != NULL && ck->kind != CKPT_ATOMIC)
		session_order_ckpt(s, LINK_CK_REARM, ck->node->cell);
	/* Between requests: the lost cells are run again first, if they
	 * may be (session-redo.c), and the client told once they were. */
	if (s->died_idle != NULL && (s->run != NULL ||
	    !session_redo_begin(s, NULL, restored)))
		session_idle_restored(s, restored);
	session_note(s, EV_WORKER, json_pack("{s:s, s:O, s:s?}", "state",
	    "ready", "restored", restored, "python", s->python));
	if (s->run != NULL)
		session_restored(s, ck, restored);
	json_decref(restored);
	if (ck != NULL && ck->kind == CKPT_ATOMIC)
		ckpt_drop(&s->ck, ck);
}

/* The worker is gone.  Pick what comes next: the run's target, or the
 * newest checkpoint of the state the worker was in, or a fresh start. */
void
session_restore(struct session *s)
{
	struct sreq *r = s->run;
	struct ckpt *ck;

	for (;;) {
		ckpt_prune(&s->ck, session_warnings(s));	/* may drop r->target */
		ck = r != NULL ? r->target : NULL;
		if (ck == NULL && !(r != NULL &&
		    (s->life.after == AFTER_RESET ||
		    s->life.after == AFTER_START)))
			ck = ckpt_nearest(&s->ck, s->node, session_warnings(s));
		if (ck == NULL) {
			session_spawn(s);
			return;
		}
		if (session_resume(s, ck) == 0)
			return;
		session_warn(s, "the checkpoint at cell %d could not be resumed "
		    "(%s)", ck->node->cell, strerror(errno));
		ckpt_drop(&s->ck, ck);
	}
}

/* The worker is gone: answer what was in flight once another is up. */
void
session_worker_died(struct session *s, int status)
{
	char how[400];
	bool starting = life_starting(&s->life), broke;

	/* What it sent before it died still counts: a reply, a checkpoint
	 * (or a frame that breaks protocol). */
	if (link_open(&s->ctl) && !starting)
		session_from_worker(s);
	describe_wait(status, how, sizeof how);
	broke = s->broke[0] != '\0';
	if (broke) {
		snprintf(how, sizeof how, "%s", s->broke);
		s->broke[0] = '\0';
	}
	session_drain(s, false, SIZE_MAX);
	session_drain(s, true, SIZE_MAX);
	session_note(s, EV_WORKER, json_pack("{s:s, s:s, s:b}", "state",
	    "died", "how", how, "broke", broke));
	if (s->life.resuming != NULL) {
		struct ckpt *ck = s->life.resuming;

		session_warn(s, "the checkpoint at cell %d died as it was "
		    "resumed (%s)", ck->node->cell, how);
		ckpt_drop(&s->ck, ck);	/* life_forget: no longer resuming */
	} else if (starting) {
		if (life_start_failed(&s->life) >= 3) {
			session_fail(s, "the python worker cannot start (%s)"
			    "%s%.1800s", how, s->start_err.len ? ":\n" : "",
			    s->start_err.len ? s->start_err.p : "");
			session_close_worker(s);
			return;
		}
	}
	if (s->life.rearm != NULL)
		ckpt_drop(&s->ck, s->life.rearm);	/* never re-armed */
	session_close_worker(s);
	session_run_died(s, how, broke, starting);
	session_restore(s);
}

/*
 * init is gone: only a cell can do that, under --sandbox none, where it
 * may signal its parent.  The worker dies with init, and the checkpoints
 * cannot be resumed without it (nobody would report their exits), so they
 * go too; a new init starts a fresh worker and the session goes on.  The
 * processes left behind are ours now (we are their subreaper): reaped in
 * session_poll.
 */
static void
session_init_died(struct session *s)
{
	char err[512];
	int early, i;

	/* every session's worker and checkpoints went with it */
	for (i = 0; i < s->nall; i++) {
		session_signal(s->all[i], SIGKILL);
		ckpt_set_free(&s->all[i]->ck);
		if (s->all[i] != s)
			life_init_gone(&s->all[i]->life);
	}
	init_stop(&s->init);
	s->nspawns = 0;
	s->reap_orphans = true;
	/* Its answers to our spawns and signals are gone with it; one
	 * that keeps dying before a worker is up is not restarted for
	 * ever (under none a cell can kill it later, as often as it
	 * likes). */
	early = life_init_gone(&s->life);
	if (early >= 3) {
		session_fail(s, "coil's init process dies before a worker "
		    "starts (%d times in a row); its messages, if any, are "
		    "above", early);
		session_close_worker(s);
		return;
	}
	session_warn(s, "coil's init process was killed; a new one started, "
	    "and the checkpoints went with the old one");
	if (init_start(&s->init, s->worker_conf, &s->opts->sbx, err,
	    sizeof err) == -1) {
		session_fail(s, "cannot restart init: %s", err);
		session_close_worker(s);
		return;
	}
	/* each open session starts again, fresh (the list may shrink
	 * under the loop: a branch that cannot start is reaped later) */
	for (i = 0; i < s->nall; i++)
		session_worker_died(s->all[i], W_EXITCODE(0, SIGKILL));
}

/* init's "spawned": the answer to the oldest spawn it owes (init
 * answers in order), of whichever session asked. */
static void
session_spawn_answered(struct session *hub, json_t *m, pid_t pid)
{
	struct session *s;

	if (hub->nspawns == 0)
		return;
	s = hub->spawns[0];
	memmove(hub->spawns, hub->spawns + 1, (size_t)--hub->nspawns *
	    sizeof *hub->spawns);
	if (s == NULL)
		return;		/* a branch closed meanwhile */
	if (pid <= 0)
		session_fail(s, "init cannot fork a worker: %s",
		    strerror((int)json_integer_value(json_object_get(m,
		    "errno"))));
	/* Only the newest spawn's answer names the worker. */
	else if (life_spawn_done(&s->life) && s->pid == 0 &&
	    s->life.resuming == NULL && life_alive(&s->life))
		session_spawned(s, pid);
}

/* init's "signalled" for pid: the session it was sent for (its worker
 * may have died since), or the first that waits for one. */
static struct session *
session_signalled(struct session *hub, pid_t pid)
{
	int i;

	for (i = 0; i < hub->nall; i++)
		if (hub->all[i]->pid == pid && hub->all[i]->life.ints_owed > 0)
			return hub->all[i];
	for (i = 0; i < hub->nall; i++)
		if (hub->all[i]->life.ints_owed > 0)
			return hub->all[i];
	return NULL;
}

void
session_from_init(struct session *s)
{
	struct session *b;
	json_t *m;
	bool bad;
	int rc = chan_fill(&s->init.chan);

	if (rc == 0 || (rc == -1 && errno != EAGAIN && errno != EINTR)) {
		/* After a fatal report init's end is expected: the session
		 * is over, not to be restarted. */
		if (!s->failed)
			session_init_died(s);
		return;
	}
	while ((m = chan_next(&s->init.chan, NULL, NULL, &bad)) != NULL) {
		const char *t = json_string_value(json_object_get(m, "t"));
		pid_t pid = (pid_t)json_integer_value(json_object_get(m, "pid"));

		if (t == NULL) {
			/* ignore */
		} else if (strcmp(t, "fatal") == 0) {
			session_init_fatal(s, m);
		} else if (strcmp(t, "spawned") == 0) {
			session_spawn_answered(s, m, pid);
		} else if (strcmp(t, "signalled") == 0) {
			if ((b = session_signalled(s, pid)) != NULL)
				life_int_done(&b->life);
		} else if (strcmp(t, "exit") == 0 &&
		    (b = session_of_pid(s, pid)) != NULL) {
			/* Exits of checkpoints are reported too; they are
			 * noticed through their pidfds when it matters. */
			session_worker_died(b, (int)json_integer_value(
			    json_object_get(m, "status")));
		}
		json_decref(m);
	}
}

/*
 * The worker broke protocol (link.h): it is finished.  Nothing more it
 * wrote is read; init reports its death, and session_worker_died answers
 * the run and resumes the newest checkpoint we recorded, with why as the
 * reason.
 */
static void
session_broke(struct session *s, const char *why)
{
	if (s->broke[0] == '\0')
		snprintf(s->broke, sizeof s->broke, "%s", why);
	link_close(&s->ctl);
	session_signal(s, SIGKILL);
}

/* init names the worker it forked: the pidfd its hello carried must be
 * of that process. */
static void
session_spawned(struct session *s, pid_t pid)
{
	s->pid = s->ctl.pid = pid;
	if (s->ctl.hello_pid > 0 && s->ctl.hello_pid != pid) {
		/* That pidfd is some other process's: never signal it.  With
		 * its socket closed the worker ends at its next read. */
		close(s->pidfd);
		s->pidfd = -1;
		usage_close(&s->usage);
		snprintf(s->broke, sizeof s->broke, "its 'hello' frame carries "
		    "a pidfd of pid %ld, not of the worker (%ld)",
		    (long)s->ctl.hello_pid, (long)pid);
		link_close(&s->ctl);
	}
}

/* The running cell reads a line: what it printed before (the prompt of
 * pdb, say) goes out first, then its client is asked; a client that has
 * left answers the end of input (session_detach does for the question
 * it left unanswered). */
static void
session_input_asked(struct session *s, struct link_frame *f)
{
	struct sclient *c;
	struct sevent *e;

	if (s->run == NULL)
		return;
	s->run->asked_input = true;
	c = session_client(s, s->run->client);
	if (c == NULL || c->gone) {
		session_give_input(s, NULL);
		return;
	}
	session_drain(s, false, SESSION_DRAIN_BUDGET);
	session_drain(s, true, SESSION_DRAIN_BUDGET);
	e = session_event_new(EV_INPUT, s->run);
	e->ev.info = json_pack("{s:O, s:O*}", "prompt", json_object_get(
	    f->msg, "prompt"), "page", json_object_get(f->msg, "page"));
	session_post(s, e);
}

/* %save FILE.ipynb: the cell gets the notebook's bytes, not a path of
 * its choosing written by us (link.h).  Answered at once, whatever the
 * cell does next; an fd rather than the bytes, so that a cell that
 * asks and never reads cannot block the supervisor on the socket. */
static void
session_notebook_asked(struct session *s, struct link_frame *f)
{
	size_t n = 0;
	json_t *m;
	int fd;

	(void)f;
	fd = export_memfd(s->export, CHAN_MAX_OUTPUT, &n);
	link_answered_input(&s->ctl);
	if (fd == -1) {
		session_send(s, json_pack("{s:s, s:s}", "op", "notebook",
		    "error", errno == EMSGSIZE ? "the notebook is too big to "
		    "hand over" : errno == EIO ? "cells were lost: its temp "
		    "file could not be written" : strerror(errno)));
		return;
	}
	m = json_pack("{s:s, s:I}", "op", "notebook", "cells", (json_int_t)n);
	if (chan_send(s->ctl.chan.fd, m, &fd, 1) == -1)
		session_signal(s, SIGKILL);	/* init reports the death */
	json_decref(m);
	close(fd);
}

typedef void (*session_frame_fn)(struct session *, struct link_frame *);

/* What each checked frame does; link.c's table decides which may come. */
static const session_frame_fn session_on_frame[LINK_NFRAMES] = {
	[LINK_F_GATE] = session_gate_arrived,
	[LINK_F_HELLO] = session_hello,
	[LINK_F_REPLY] = session_reply,
	[LINK_F_CKPT] = session_ckpt_arrived,
	[LINK_F_CKPT_FAILED] = session_ckpt_failed,
	[LINK_F_INPUT] = session_input_asked,
	[LINK_F_NOTEBOOK] = session_notebook_asked,
};

void
session_from_worker(struct session *s)
{
	struct link_frame f;
	char why[256];
	int rc, got;

	for (;;) {
		rc = link_fill(&s->ctl);
		if (rc == -1 && errno == EAGAIN)
			return;
		while ((got = link_next(&s->ctl, &f, why, sizeof why)) == 1) {
			session_on_frame[f.type](s, &f);
			link_frame_free(&f);
			if (!link_open(&s->ctl))
				return;
		}
		if (got == -1) {
			session_broke(s, why);
			return;
		}
		if (rc <= 0)
			break;
	}
	/* The worker closed its socket, or it broke: it is finished.  init
	 * reports the exit. */
	link_close(&s->ctl);
	session_signal(s, SIGKILL);
}

/* Replace the worker on purpose: kill it and go on at once, without
 * waiting for init to report its exit (a worker of a few GB takes tens
 * of milliseconds to die, a rollback should take one): the next one
 * (r->target, or a fresh spawn) owns new channels, and the old one's
 * exit report no longer matches s->pid.  worker.c arms the resumed
 * worker's death signal only once init is its parent, so the old
 * worker's end does not take it along. */
void
session_replace(struct session *s, struct sreq *r, enum life_after after)
{
	r->deadline = r->kill_at = 0;
	if (r->target != NULL)
		r->target->held = true;
	s->run = r;
	life_killed(&s->life, after);
	session_signal(s, SIGKILL);
	session_worker_died(s, W_EXITCODE(0, SIGKILL));
}
