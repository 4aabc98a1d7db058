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

#include "proc.h"
#include "util.h"
#include "worker.h"

static int proc_sock = -1;	/* init's end of the report socket */

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
		close(fds[1]);
		close(fds[2]);
		close(proc_sock);
		set_cloexec(fds[0], true);
		worker_main(fds[0], conf);
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
	int sfd;

	prctl(PR_SET_NAME, "coil-init");
	setsid();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
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
proc_start(struct proc *p, json_t *worker_conf, char *err, size_t len)
{
	int sv[2];
	pid_t parent = getpid();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return err_set(err, len, "cannot create init's socket: %s",
		    strerror(errno));
	p->pid = fork();
	if (p->pid == -1) {
		close(sv[0]);
		close(sv[1]);
		return err_set(err, len, "cannot fork init: %s",
		    strerror(errno));
	}
	if (p->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
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
