/*
 * session-link.c - the session's worker (see session-int.h): its
 * channels, its start (spawned fresh by init or resumed from a
 * checkpoint), the frames it sends, its output, its death, and init's
 * reports.
 *
 * The worker is untrusted (link.h): every frame it writes is checked
 * against what the supervisor asked it for, and one that is not owed ends
 * it (session_broke) as a crash would, with the protocol violation as the
 * reason.  So the supervisor alone decides when a checkpoint is taken:
 * it orders one (session_order_ckpt) after a cell that ran code, when
 * the policy says (session-ckpt.c), after a fresh worker's hello (the
 * pristine one) and after a resume (the re-arm).  The socket keeps them
 * in order: reply N, checkpoint N, reply N+1 ...  A new worker is either spawned fresh by
 * init or resumed from a checkpoint (session_restore), and only once the
 * old one is dead, as init reports: its checkpoints are then children of
 * init, which a resumed worker's death signal relies on.  Ops that
 * replace the worker on purpose (rollback, reset, a failed atomic cell)
 * kill it and go the same way; the run stays in s->run with life.after
 * set until the new worker says hello, so that the answer says what is
 * really there.
 *
 * Layer: worker.  Calls down into the link (link.c), chan.c, init.c and
 * ckpt.c, and moves the worker's state only through session-life.c.  It
 * hands each checked frame up to the layer that consumes it (the table
 * session_on_frame: answers, checkpoint policy) and, when the worker
 * dies or a new one is up, tells the requests (session_run_died,
 * session_restored): those are its only calls upward, besides the hub's
 * queue for events and warnings.
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

void
session_close_worker(struct session *s)
{
	link_close(&s->ctl);
	if (s->out >= 0)
		close(s->out);
	if (s->err >= 0)
		close(s->err);
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->out = s->err = s->pidfd = -1;
	usage_close(&s->usage);
	s->pid = 0;
	life_died(&s->life);
}

/*
 * s->pid is in init's PID namespace, not ours: it is never given to
 * kill().  The worker's pidfd names it exactly; without one (a kernel
 * before 5.3, or a worker that has not said hello) init, which lives in
 * that namespace, is asked to send the signal.  An interrupt always goes
 * through init, to the worker's process group: the programs a cell runs
 * get it too, as at a terminal (init_interrupt).
 */
void
session_signal(struct session *s, int sig)
{
	if (sig == SIGINT && s->pid > 0) {
		/* Held until init says it sent it (session_dispatch). */
		if (init_signal(&s->init, s->pid, sig) == 0)
			life_int_sent(&s->life);
		return;
	}
	if (s->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0);
		return;
	}
	if (s->pid > 0)
		init_signal(&s->init, s->pid, sig);
}

/* Send the worker a message; what answers it is owed already. */
void
session_send(struct session *s, json_t *msg)
{
	if (chan_send(s->ctl.chan.fd, msg, NULL, 0) == -1)
		session_signal(s, SIGKILL);	/* init reports the death */
	json_decref(msg);
}

/* A new worker's control socket and pipes: ours are kept, the worker's
 * ends are put in child[] for the caller to pass on and close.  0, or -1
 * with errno and nothing left open. */
static int
session_channels(struct session *s, int child[3])
{
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	int e, i;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1) {
		e = errno;
		for (i = 0; i < 2; i++) {
			if (sv[i] >= 0)
				close(sv[i]);
			if (po[i] >= 0)
				close(po[i]);
			if (pe[i] >= 0)
				close(pe[i]);
		}
		errno = e;
		return -1;
	}
	/* A blocking read here would stall every front end. */
	if (set_nonblock(sv[0], true) == -1 || set_nonblock(po[0], true) ==
	    -1 || set_nonblock(pe[0], true) == -1) {
		e = errno;
		for (i = 0; i < 2; i++) {
			close(sv[i]);
			close(po[i]);
			close(pe[i]);
		}
		errno = e;
		return -1;
	}
	/* A cell that prints a lot writes in bigger strides and the loop
	 * wakes less often; the system's cap (pipe-max-size) may refuse,
	 * and the default then does. */
	(void)fcntl(po[0], F_SETPIPE_SZ, SESSION_PIPE_SIZE);
	(void)fcntl(pe[0], F_SETPIPE_SZ, SESSION_PIPE_SIZE);
	link_init(&s->ctl, sv[0]);
	s->out = po[0];
	s->err = pe[0];
	child[0] = sv[1];
	child[1] = po[1];
	child[2] = pe[1];
	return 0;
}

/* init's {"t":"fatal"}: it could not set up the sandbox or itself. */
static void
session_init_fatal(struct session *s, json_t *m)
{
	session_fail(s, "the sandbox cannot be set up: %s (--sandbox none "
	    "runs without it)", json_string_value(json_object_get(m,
	    "error")));
}

/* init's socket is closed: read what it sent before it went, for a
 * "fatal" report (it exits right after one). */
static void
session_init_reason(struct session *s)
{
	json_t *m;
	bool bad = false;

	if (chan_fill(&s->init.chan) <= 0)
		return;
	while ((m = chan_next(&s->init.chan, NULL, NULL, &bad)) != NULL) {
		const char *t = json_string_value(json_object_get(m, "t"));

		if (t != NULL && strcmp(t, "fatal") == 0)
			session_init_fatal(s, m);
		json_decref(m);
	}
}

void
session_spawn(struct session *s)
{
	int child[3], rc;

	if (session_channels(s, child) == -1) {
		session_fail(s, "cannot create the worker's channels: %s",
		    strerror(errno));
		return;
	}
	rc = init_spawn(&s->init, child[0], child[1], child[2]);
	close(child[0]);
	close(child[1]);
	close(child[2]);
	if (rc == -1) {
		int e = errno;

		/* init is gone; if it said why, that is the reason to give */
		session_init_reason(s);
		session_fail(s, "cannot reach coil's init process: %s",
		    strerror(e));
		session_close_worker(s);
		return;
	}
	life_spawned(&s->life);
	session_note(s, EV_WORKER, json_pack("{s:s}", "state", "starting"));
	/* strict: the fork listener comes first, before any Python runs */
	if (s->opts->sbx.profile == SANDBOX_STRICT)
		link_owe(&s->ctl, LINK_GATE, 0, 0, -1);
	link_owe(&s->ctl, LINK_HELLO, 0, 0, -1);
	s->pid = 0;
	buf_free(&s->start_err);
}

/* Resume ck as the worker; it answers with hello.  -1 when it is gone. */
static int
session_resume(struct session *s, struct ckpt *ck)
{
	int child[3], rc;

	if (session_channels(s, child) == -1)
		return -1;
	/* The re-arm is ours to order once it has said hello. */
	rc = ckpt_resume(ck, child[0], child[1], child[2], false);
	close(child[0]);
	close(child[1]);
	close(child[2]);
	if (rc == -1) {
		session_close_worker(s);
		return -1;
	}
	ckpt_touch(&s->ck, ck);
	session_note(s, EV_WORKER, json_pack("{s:s, s:i}", "state",
	    "resuming", "cell", ck->node->cell));
	s->pid = s->ctl.pid = ck->pid;
	link_owe(&s->ctl, LINK_HELLO, 0, 0, ck->node->cell);
	s->pidfd = ck->pidfd;		/* to kill it if it never says hello */
	usage_close(&s->usage);
	ck->pidfd = -1;
	life_resumed(&s->life, ck, SESSION_RESUME_MS);
	buf_free(&s->start_err);
	return 0;
}

/* Read a pipe until it is empty, or budget bytes were read; false at
 * end of file. */
bool
session_drain(struct session *s, bool is_err, size_t budget)
{
	char chunk[65536];
	int fd = is_err ? s->err : s->out;
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return false;
	while (got < budget) {
		n = read(fd, chunk, sizeof chunk);
		if (n > 0) {
			session_output(s, is_err ? 2 : 1, chunk, (size_t)n);
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return false;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN;
	}
	return true;		/* more later: the loop turns first */
}

/* Both pipes, drained of what they hold now.  One poll asks both, where
 * two reads would each fail with EAGAIN: this runs twice on every
 * cell's round trip, and the pipes are most often empty.  An end of
 * file is left for the loop's poll, which sees it too. */
void
session_drain_both(struct session *s, size_t budget)
{
	struct pollfd p[2] = {
		{ .fd = s->out, .events = POLLIN },
		{ .fd = s->err, .events = POLLIN },
	};

	if (poll(p, 2, 0) <= 0)
		return;
	if (p[0].revents != 0)
		session_drain(s, false, budget);
	if (p[1].revents != 0)
		session_drain(s, true, budget);
}

/* hello: a worker is up, spawned fresh or resumed from a checkpoint (the
 * one owed hello says which; link.c checked that it agrees). */
void
session_hello(struct session *s, struct link_frame *f)
{
	json_t *m = f->msg;
	const char *py = json_string_value(json_object_get(m, "python"));
	struct ckpt *ck = s->life.resuming;
	json_t *restored;
	char where[400];

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
	if (s->died_idle != NULL) {
		session_warn(s, "the worker died between requests (%s); %s",
		    s->died_idle, session_where(restored, where, sizeof where));
		free(s->died_idle);
		s->died_idle = NULL;
	}
	session_note(s, EV_WORKER, json_pack("{s:s, s:O, s:s?}", "state",
	    "ready", "restored", restored, "python", s->python));
	if (s->run != NULL)
		session_restored(s, ck, restored);
	json_decref(restored);
	if (ck != NULL && ck->kind == CKPT_ATOMIC)
		ckpt_drop(&s->ck, ck);
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

/* Where a restore left the namespace, for messages: "the namespace is
 * back at the state after cell 4; cells 5-7 ran after that checkpoint
 * and are lost: run them again if you need what they did; 1 thread did
 * not survive". */
const char *
session_where(json_t *restored, char *buf, size_t len)
{
	json_t *cell = json_object_get(restored, "cell");
	json_t *lost = json_object_get(restored, "lost");
	int threads = (int)json_integer_value(json_object_get(restored,
	    "threads_lost"));
	size_t n = json_array_size(lost);

	if (!json_is_integer(cell))
		snprintf(buf, len, "nothing could be restored, so a fresh "
		    "namespace started");
	else
		snprintf(buf, len, "the namespace is back at the state after "
		    "cell %d", (int)json_integer_value(cell));
	if (n > 0) {
		snprintf(buf + strlen(buf), len - strlen(buf), "; cell%s ",
		    n > 1 ? "s" : "");
		session_cells_text(lost, buf, len);
		snprintf(buf + strlen(buf), len - strlen(buf), " %s lost: run "
		    "%s again if you need what %s did", n > 1 ? "are" : "is",
		    n > 1 ? "them" : "it", n > 1 ? "they" : "it");
	}
	if (threads > 0)
		snprintf(buf + strlen(buf), len - strlen(buf), "; %d thread%s "
		    "did not survive", threads, threads > 1 ? "s" : "");
	return buf;
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
	int early;

	session_signal(s, SIGKILL);
	init_stop(&s->init);
	ckpt_set_free(&s->ck);
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
	session_worker_died(s, W_EXITCODE(0, SIGKILL));
}

void
session_from_init(struct session *s)
{
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
			if (pid <= 0)
				session_fail(s, "init cannot fork a worker: %s",
				    strerror((int)json_integer_value(
				    json_object_get(m, "errno"))));
			/* Only the newest spawn's answer names the worker. */
			else if (life_spawn_done(&s->life) && s->pid == 0 &&
			    s->life.resuming == NULL && life_alive(&s->life))
				session_spawned(s, pid);
		} else if (strcmp(t, "signalled") == 0) {
			life_int_done(&s->life);
		} else if (strcmp(t, "exit") == 0 && pid == s->pid &&
		    life_alive(&s->life)) {
			/* Exits of checkpoints are reported too; they are
			 * noticed through their pidfds when it matters. */
			session_worker_died(s, (int)json_integer_value(
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
	c = session_client(s, s->run->client);
	if (c == NULL || c->gone) {
		session_input(s, NULL);
		return;
	}
	session_drain(s, false, SESSION_DRAIN_BUDGET);
	session_drain(s, true, SESSION_DRAIN_BUDGET);
	e = session_event_new(EV_INPUT, s->run);
	e->ev.info = json_pack("{s:O, s:O*}", "prompt", json_object_get(
	    f->msg, "prompt"), "page", json_object_get(f->msg, "page"));
	session_post(s, e);
}

int
session_input(struct session *s, const char *line)
{
	struct sevent *e;

	if (link_answered_input(&s->ctl) == -1)
		return -1;
	session_send(s, json_pack("{s:s, s:s?}", "op", "input", "line",
	    line));
	if (s->run != NULL) {
		e = session_event_new(EV_ANSWERED, s->run);
		e->ev.info = json_pack("{s:s?}", "line", line);
		if (line == NULL)
			json_object_set_new(e->ev.info, "line", json_null());
		session_post(s, e);
	}
	return 0;
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
