/*
 * session-proc.c - the worker as a process (see session-int.h): its
 * channels, its start (spawned fresh by init or resumed from a
 * checkpoint), what it is sent and the signals it gets, its output
 * drained, and a line for a cell that reads one.  What its frames and
 * its death do is session-link.c's.
 *
 * Layer: the worker's process, below the answers and the checkpoint
 * policy.  Calls down into init.c, ckpt.c, the link (link.c, chan.c),
 * session-life.c and the outbox (session-post.c), nothing above.
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
#include "session-int.h"

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
		if (init_signal(&s->hub->init, s->pid, sig) == 0)
			life_int_sent(&s->life);
		return;
	}
	if (s->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0);
		return;
	}
	if (s->pid > 0)
		init_signal(&s->hub->init, s->pid, sig);
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
void
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

	if (chan_fill(&s->hub->init.chan) <= 0)
		return;
	while ((m = chan_next(&s->hub->init.chan, NULL, NULL, &bad)) !=
	    NULL) {
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
	rc = init_spawn(&s->hub->init, child[0], child[1], child[2]);
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
	/* init answers spawns in order: its "spawned" is this one's */
	s->hub->spawns = xrealloc(s->hub->spawns, (size_t)(s->hub->nspawns +
	    1) * sizeof *s->hub->spawns);
	s->hub->spawns[s->hub->nspawns++] = s;
	session_note(s, EV_WORKER, json_pack("{s:s}", "state", "starting"));
	/* strict: the fork listener comes first, before any Python runs */
	if (s->opts->sbx.profile == SANDBOX_STRICT)
		link_owe(&s->ctl, LINK_GATE, 0, 0, -1);
	link_owe(&s->ctl, LINK_HELLO, 0, 0, -1);
	s->pid = 0;
	buf_free(&s->start_err);
}

/* Resume ck as the worker; it answers with hello.  -1 when it is gone. */
int
session_resume(struct session *s, struct ckpt *ck)
{
	int child[3], rc;

	if (session_channels(s, child) == -1)
		return -1;
	/* The re-arm is ours to order once it has said hello.  A branch's
	 * worker, or any session's once there are branches, gets a
	 * Landlock domain of its own, unless its checkpoint was taken in
	 * one (session-branch.c). */
	rc = ckpt_resume(ck, child[0], child[1], child[2], false,
	    s->opts->sbx.profile != SANDBOX_NONE && !ck->own_domain &&
	    (s != s->hub || s->hub->nall > 1));
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

int
session_input(struct session *s, const char *line)
{
	int i;

	/* a front end's (it holds the hub): the cell reading may be a
	 * branch's (the plain REPL after %switch); a local front end is
	 * the only client that answers input */
	if (s == s->hub && session_give_input(s, line) == -1) {
		for (i = 0; i < s->nall; i++)
			if (s->all[i] != s && s->all[i]->run != NULL &&
			    s->all[i]->run->asked_input)
				return session_give_input(s->all[i], line);
		return -1;
	}
	return s == s->hub ? 0 : session_give_input(s, line);
}

int
session_give_input(struct session *s, const char *line)
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

/* The run a live worker owes its reply, or NULL: none runs, or its
 * worker is starting, or gone, or being replaced under it. */
struct sreq *
session_serving(const struct session *s)
{
	return life_serving(&s->life) ? s->run : NULL;
}
