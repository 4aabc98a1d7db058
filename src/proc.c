/*
 * proc.c - init: forks workers, reaps everything, reports exits.
 * See proc.h.  proc_start and proc_spawn run in the supervisor; the
 * rest of this file runs in init.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "proc.h"
#include "util.h"
#include "worker.h"

static int proc_sock = -1;	/* init's end of the report socket */
static int proc_sigfd = -1;	/* init's SIGCHLD */
static const struct sandbox_conf *proc_sbx;
static struct sandbox_report proc_report;	/* filled by sandbox_enter */

static void
proc_report_exits(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		json_t *m = json_pack("{s:s, s:I, s:i}", "t", "exit",
		    "pid", (json_int_t)pid, "status", status);

		chan_send(proc_sock, m, NULL, 0);
		json_decref(m);
	}
}

/* In the new worker: the rest of the sandbox, then Python. */
static void __attribute__((noreturn))
proc_worker(int ctl, json_t *conf)
{
	struct sandbox_report rep = proc_report;
	char err[1024];

	environ = sandbox_env(proc_sbx, environ);
	if (sandbox_apply(proc_sbx, &rep, err, sizeof err) == -1) {
		dprintf(2, "the sandbox cannot be applied: %s\n", err);
		_exit(78);
	}
	worker_main(ctl, conf, proc_sbx, &rep);
}

static void
proc_fork_worker(int *fds, int nfds, json_t *conf)
{
	json_t *m;
	pid_t pid;
	int devnull;

	if (nfds != 3) {
		while (nfds > 0)
			close(fds[--nfds]);
		return;
	}
	pid = fork();
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "coil-worker");
		devnull = open("/dev/null", O_RDWR);
		if (devnull == -1 || dup2(devnull, 0) == -1 ||
		    dup2(fds[1], 1) == -1 || dup2(fds[2], 2) == -1)
			_exit(71);
		close(devnull);
		/* Nothing of init's goes to the cells: its report socket,
		 * its signalfd, whatever the supervisor had when it forked
		 * init.  The worker keeps fd 0, 1, 2 and its control
		 * socket. */
		close_fds_except(&fds[0], 1);
		set_cloexec(fds[0], true);
		proc_worker(fds[0], conf);
	}
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
	m = json_pack("{s:s, s:I, s:i}", "t", "spawned", "pid",
	    (json_int_t)pid, "errno", pid < 0 ? errno : 0);
	chan_send(proc_sock, m, NULL, 0);
	json_decref(m);
}

static void __attribute__((noreturn))
proc_init_main(json_t *conf)
{
	struct chan c;
	struct pollfd pfd[2];
	sigset_t set;
	char err[1024];
	int sfd, devnull;

	prctl(PR_SET_NAME, "coil-init");
	/* Not the front end's stdin and stdout (the agent's JSON channel):
	 * init reads and writes only its report socket. */
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		close(devnull);
	}
	if (sandbox_enter(proc_sbx, &proc_report, err, sizeof err) == -1) {
		json_t *m = json_pack("{s:s, s:s}", "t", "fatal", "error", err);

		chan_send(proc_sock, m, NULL, 0);
		_exit(1);
	}
	/* Everything else the supervisor held when it forked init goes:
	 * after a restart that includes the old worker's socket and pipes,
	 * and every later worker would inherit it all.  (sandbox_enter has
	 * used and closed what it took across.) */
	close_fds_except(&proc_sock, 1);
	setsid();			/* sandbox_enter did, unless "none" */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = proc_sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd == -1)
		_exit(72);
	chan_init(&c, proc_sock);
	for (;;) {
		json_t *m;
		int fds[CHAN_MAX_FDS], nfds;

		pfd[0].fd = proc_sock;
		pfd[0].events = POLLIN;
		pfd[1].fd = sfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof si) > 0)
				;
			proc_report_exits();
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (chan_fill(&c) <= 0)
				break;
			while ((m = chan_next(&c, fds, &nfds, NULL)) != NULL) {
				const char *t = json_string_value(
				    json_object_get(m, "t"));

				if (t != NULL && strcmp(t, "spawn") == 0)
					proc_fork_worker(fds, nfds, conf);
				else
					while (nfds > 0)
						close(fds[--nfds]);
				json_decref(m);
			}
		}
	}
	/* The supervisor is gone: take the session's processes along. */
	kill(0, SIGKILL);
	_exit(0);
}

int
proc_start(struct proc *p, json_t *worker_conf,
    const struct sandbox_conf *sbx, char *err, size_t len)
{
	int sv[2];
	pid_t parent = getpid();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return err_set(err, len, "cannot create init's socket: %s",
		    strerror(errno));
	proc_sbx = sbx;
	sandbox_report_init(&proc_report, sbx->profile);
	p->pid = sandbox_spawn(sbx, &proc_report);
	if (p->pid == -1) {
		close(sv[0]);
		close(sv[1]);
		return err_set(err, len, "cannot fork init: %s",
		    strerror(errno));
	}
	if (p->pid == 0) {
		/* In a new PID namespace getppid() is 0: only the death
		 * signal tells of the supervisor's end there. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (sbx->profile == SANDBOX_NONE && getppid() != parent)
			_exit(0);
		close(sv[0]);
		proc_sock = sv[1];
		proc_init_main(worker_conf);
	}
	close(sv[1]);
	chan_init(&p->chan, sv[0]);
	set_nonblock(sv[0], true);
	return 0;
}

int
proc_spawn(struct proc *p, int ctl, int out, int errfd)
{
	int fds[3] = { ctl, out, errfd };
	json_t *m = json_pack("{s:s}", "t", "spawn");
	int rc = chan_send(p->chan.fd, m, fds, 3);

	json_decref(m);
	return rc;
}

void
proc_stop(struct proc *p)
{
	if (p->pid > 0) {
		kill(-p->pid, SIGKILL);		/* init's session and group */
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
	chan_close(&p->chan);
}
