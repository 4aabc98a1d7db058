/*
 * proc.c - init: forks workers, reaps everything, reports exits; and the
 * janitor, which cleans up after a supervisor that was killed.  See
 * proc.h.  proc_start, proc_spawn, proc_signal, proc_stop, proc_abort and
 * proc_janitor run in the supervisor; proc_janitor_main in the janitor;
 * the rest of this file in init.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "proc.h"
#include "util.h"
#include "worker.h"

/* supervisor side: the init running now, for proc_abort */
static pid_t proc_running;

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

/* init cannot go on: tell the supervisor why (it prints it), and end. */
static void __attribute__((noreturn))
proc_init_fail(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *m;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	m = json_pack("{s:s, s:s, s:i}", "t", "fatal", "error", msg, "code",
	    code);
	if (m != NULL)
		chan_send(proc_sock, m, NULL, 0);
	_exit(code);
}

/* In the new worker: the rest of the sandbox, then Python. */
static void __attribute__((noreturn))
proc_worker(int ctl, json_t *conf)
{
	struct sandbox_report rep = proc_report;
	char err[1024];

	environ = sandbox_env(proc_sbx, environ);
	if (sandbox_apply(proc_sbx, &rep, err, sizeof err) == -1)
		fatal_code(EXIT_SANDBOX, 0, "the sandbox cannot be applied: %s",
		    err);
	worker_main(ctl, conf, proc_sbx, &rep);
}

/* The supervisor asks init to signal pid, a process the supervisor has
 * no pidfd for.  Only a child of init that it has not reaped yet: its pid
 * cannot have been reused, and it is of the session. */
static void
proc_signal_child(json_t *m)
{
	pid_t pid = (pid_t)json_integer_value(json_object_get(m, "pid"));
	int sig = (int)json_integer_value(json_object_get(m, "sig"));
	siginfo_t si;

	if (pid <= 0 || (sig != SIGKILL && sig != SIGINT))
		return;
	si.si_pid = 0;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == 0)
		kill(pid, sig);
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
		if (sigprocmask(SIG_SETMASK, &none, NULL) == -1 ||
		    signal(SIGPIPE, SIG_DFL) == SIG_ERR)
			fatal_code(EXIT_SETUP, errno, "worker: cannot reset "
			    "its signals");
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
			fatal_code(EXIT_SETUP, errno, "worker: "
			    "prctl(PR_SET_PDEATHSIG)");
		prctl(PR_SET_NAME, "coil-worker");
		devnull = open("/dev/null", O_RDWR);
		if (devnull == -1 || dup2(devnull, 0) == -1 ||
		    dup2(fds[1], 1) == -1 || dup2(fds[2], 2) == -1)
			fatal_code(EXIT_SETUP, errno, "worker: cannot set up "
			    "fds 0, 1 and 2");
		close(devnull);
		/* Nothing of init's goes to the cells: its report socket,
		 * its signalfd, whatever the supervisor had when it forked
		 * init.  The worker keeps fd 0, 1, 2 and its control
		 * socket. */
		close_fds_except(&fds[0], 1);
		/* not for the programs a cell runs */
		if (set_cloexec(fds[0], true) == -1)
			fatal_code(EXIT_SETUP, errno, "worker: cannot set "
			    "FD_CLOEXEC on its socket");
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
	int sfd, devnull, keep[2], nkeep = 0;

	prctl(PR_SET_NAME, "coil-init");
	/* Not the front end's stdin and stdout (the agent's JSON channel):
	 * init reads and writes only its report socket. */
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		close(devnull);
	}
	if (sandbox_enter(proc_sbx, &proc_report, err, sizeof err) == -1)
		proc_init_fail(EXIT_SANDBOX, "%s", err);
	/* Everything else the supervisor held when it forked init goes:
	 * after a restart that includes the old worker's socket and pipes,
	 * and every later worker would inherit it all.  (sandbox_enter has
	 * used and closed what it took across; what it keeps, the lock on
	 * a host temp dir, stays.) */
	keep[nkeep++] = proc_sock;
	if (sandbox_held_fd() >= 0)
		keep[nkeep++] = sandbox_held_fd();
	close_fds_except(keep, nkeep);
	/* sandbox_enter did, unless "none": then this one makes init a
	 * session leader, and EPERM means it already is */
	if (setsid() == -1 && errno != EPERM)
		proc_init_fail(EXIT_SETUP, "init: setsid: %s", strerror(errno));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		proc_init_fail(EXIT_SETUP, "init: prctl("
		    "PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sfd = proc_sigfd = signalfd(-1, &set, SFD_CLOEXEC |
	    SFD_NONBLOCK)) == -1)
		proc_init_fail(EXIT_SETUP, "init: signalfd: %s",
		    strerror(errno));
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
				else if (t != NULL && strcmp(t, "signal") == 0)
					proc_signal_child(m);
				if (t == NULL || strcmp(t, "spawn") != 0)
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
		static const int deflt[] = { SIGINT, SIGTERM, SIGHUP };
		size_t i;

		close(sv[0]);
		proc_sock = sv[1];
		/* A restarted init is forked from a supervisor that catches
		 * these (plain mode): init and its workers get the defaults */
		for (i = 0; i < nitems(deflt); i++)
			if (signal(deflt[i], SIG_DFL) == SIG_ERR)
				proc_init_fail(EXIT_SETUP, "init: signal: %s",
				    strerror(errno));
		/* In a new PID namespace getppid() is 0: only the death
		 * signal tells of the supervisor's end there. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
			proc_init_fail(EXIT_SETUP, "init: prctl("
			    "PR_SET_PDEATHSIG): %s", strerror(errno));
		if (sbx->profile == SANDBOX_NONE && getppid() != parent)
			_exit(0);
		proc_init_main(worker_conf);
	}
	proc_running = p->pid;
	close(sv[1]);
	chan_init(&p->chan, sv[0]);
	if (set_nonblock(sv[0], true) == -1) {
		err_set(err, len, "cannot make init's socket non-blocking: %s",
		    strerror(errno));
		proc_stop(p);
		return -1;
	}
	return 0;
}

int
proc_signal(struct proc *p, pid_t pid, int sig)
{
	json_t *m = json_pack("{s:s, s:I, s:i}", "t", "signal", "pid",
	    (json_int_t)pid, "sig", sig);
	int rc = chan_send(p->chan.fd, m, NULL, 0);

	json_decref(m);
	return rc;
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
		while (waitpid(p->pid, NULL, 0) == -1 && errno == EINTR)
			;
		if (proc_running == p->pid)
			proc_running = 0;
		p->pid = 0;
	}
	chan_close(&p->chan);
}

/*
 * The janitor: a fork of the supervisor made before init, so in none of
 * the session's namespaces or cgroups, that only waits for the supervisor
 * to end and then runs sandbox_cleanup.  A supervisor killed by SIGKILL
 * removes nothing itself, and the session's cgroups cannot be removed
 * before init (PR_SET_PDEATHSIG) and everything in them are gone, which
 * cg_end waits for.  It keeps no descriptor of coil's (a reader waiting
 * for the end of coil's stdout is not kept waiting) and no work dir.
 */
static void __attribute__((noreturn))
proc_janitor_main(int pfd, const struct sandbox_conf *sbx)
{
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	int fd, devnull;

	prctl(PR_SET_NAME, "coil-janitor");
	setsid();		/* a terminal's signals are for coil */
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 ||
	    dup2(devnull, 2) < 0 || chdir("/") < 0)
		_exit(EXIT_SETUP);
	for (fd = 3; fd < 1024; fd++)
		if (fd != pfd)
			close(fd);
	while (poll(&p, 1, -1) == -1 && errno == EINTR)
		;
	sandbox_cleanup(sbx);
	_exit(0);
}

int
proc_janitor(const struct sandbox_conf *sbx)
{
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	pid_t pid;

	if (pfd < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		proc_janitor_main(pfd, sbx);
	close(pfd);
	return pid < 0 ? -1 : 0;
}

void
proc_abort(void)
{
	pid_t pid = proc_running;

	if (pid <= 0)
		return;
	proc_running = 0;
	/* our own child, not yet reaped: its pid is still its own */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}
