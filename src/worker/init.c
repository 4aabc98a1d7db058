/*
 * init.c - init: forks workers, reaps everything, reports exits; and the
 * janitor, which cleans up after a supervisor that was killed.  See
 * init.h.  init_start, init_spawn, init_signal, init_stop, init_abort and
 * init_janitor run in the supervisor; init_janitor_main in the janitor;
 * the rest of this file in init.
 */
#include "config.h"

#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

extern char **environ;

#include "init.h"
#include "util.h"
#include "worker.h"

/* How long init spends ending the session's processes (init_end): a
 * process it may not kill must not keep it forever. */
#define INIT_END_MS 2000

/* supervisor side: the init running now, for init_abort */
static pid_t init_running;

static int init_sock = -1;	/* init's end of the report socket */
static int init_sigfd = -1;	/* init's SIGCHLD */
static const struct sandbox_conf *init_sbx;
static struct sandbox_report init_report;	/* filled by sandbox_enter */

/*
 * Reap every child that has ended and report it.  A child that led a
 * process group takes the group along first: a worker leads the group
 * of everything its cells started (init_fork_worker), so `sh -c sleep
 * 100` ends with a worker killed at its grace, a crash or a rollback.
 * The child is reaped only after the kill: while it is a zombie its pid,
 * hence its group's id, cannot be reused.  A checkpoint leads a group of
 * its own and nothing else, so killing that group kills nobody.  A
 * daemon's group (a session of its own) is the daemon's business.
 */
static void
init_report_exits(void)
{
	siginfo_t si;
	json_t *m;
	int status;
	pid_t pid;

	for (;;) {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 ||
		    (pid = si.si_pid) == 0)
			break;
		if (getpgid(pid) == pid && getsid(pid) == getsid(0))
			kill(-pid, SIGKILL);
		if (waitpid(pid, &status, 0) != pid)
			continue;
		m = json_pack("{s:s, s:I, s:i}", "t", "exit", "pid",
		    (json_int_t)pid, "status", status);

		chan_send(init_sock, m, NULL, 0);
		json_decref(m);
	}
}

/* The pids of init's children now that are of its session, from /proc
 * (no PID namespace: the host's /proc names our pids).  At most max;
 * how many. */
static size_t
init_children(pid_t *pids, size_t max)
{
	char path[300], buf[512], *p;
	struct dirent *d;
	size_t n = 0;
	ssize_t got;
	DIR *dir;
	int fd;

	/* fs(proc): the session's own processes */
	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while (n < max && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", d->d_name);
		/* fs(proc): a process of the session, /proc/PID/stat */
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		got = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (got <= 0)
			continue;
		buf[got] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything */
		if ((p = strrchr(buf, ')')) == NULL ||
		    strtol(p + 4, NULL, 10) != (long)getpid())
			continue;
		pids[n] = (pid_t)strtol(d->d_name, NULL, 10);
		if (getsid(pids[n]) == getsid(0))
			n++;
	}
	closedir(dir);
	return n;
}

/*
 * The supervisor is gone or asked init to go: end every process of the
 * session before init does.  In a PID namespace init's own end does
 * that.  Without one (--sandbox none) each worker leads a process group
 * of its own, so killing init's group would miss them: init kills each
 * child of its session and the child's group, reaps, and looks again,
 * since a process whose parent died is init's child now (init is their
 * subreaper).  A daemon, which made a session of its own, is what the
 * user asked for under none, and is left running.
 */
static void __attribute__((noreturn))
init_end(void)
{
	struct timespec ms = { 0, 1000 * 1000 };
	int64_t deadline = now_ms() + INIT_END_MS;
	pid_t kids[256];
	size_t i, n;

	while (getpid() != 1 && now_ms() < deadline) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if ((n = init_children(kids, nitems(kids))) == 0)
			break;
		for (i = 0; i < n; i++) {
			kill(-kids[i], SIGKILL);
			kill(kids[i], SIGKILL);
		}
		nanosleep(&ms, NULL);
	}
	kill(0, SIGKILL);	/* init's group, itself included */
	_exit(0);
}

/* init cannot go on: tell the supervisor why (it prints it), and end. */
static void __attribute__((noreturn))
init_fail(int code, const char *fmt, ...)
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
		chan_send(init_sock, m, NULL, 0);
	_exit(code);
}

/* In the new worker: the rest of the sandbox, then Python. */
static void __attribute__((noreturn))
init_worker(int ctl, json_t *conf)
{
	struct sandbox_report rep = init_report;
	char err[1024];

	environ = sandbox_env(init_sbx, environ);
	if (sandbox_apply(init_sbx, &rep, err, sizeof err) == -1)
		fatal_code(EXIT_SANDBOX, 0, "the sandbox cannot be applied: %s",
		    err);
	worker_main(ctl, conf, init_sbx, &rep);
}

/*
 * An interrupt is for the worker's whole process group, as a terminal's
 * Ctrl-C is for its foreground job: os.system's shell and its sleep get
 * it too, and os.system returns their status as it does at a terminal.
 * Checkpoints lead groups of their own (worker.c) and are not hit; init
 * and the supervisor are in none of these groups.  pid may be a resumed
 * worker whose old parent has not ended yet, so not init's child: it is
 * checked to be of init's session instead, which holds only the
 * session's processes.
 */
static void
init_interrupt(pid_t pid)
{
	if (getsid(pid) != getsid(0))
		return;
	kill(pid, WORKER_STOP_SIGNAL);	/* first: when it came (worker.h) */
	if (getpgid(pid) == pid)
		kill(-pid, SIGINT);
	else
		kill(pid, SIGINT);	/* a cell moved it out of its group */
}

/* The supervisor asks init to signal pid, a process the supervisor has
 * no pidfd for.  Only a child of init that it has not reaped yet: its pid
 * cannot have been reused, and it is of the session. */
static void
init_signal_child(json_t *m)
{
	pid_t pid = (pid_t)json_integer_value(json_object_get(m, "pid"));
	int sig = (int)json_integer_value(json_object_get(m, "sig"));
	siginfo_t si;
	json_t *done;

	if (sig == SIGINT) {
#ifdef COIL_TEST_HOOKS
		/* tests/hostile/late-interrupt.py: an init slow to send. */
		const char *late = getenv("COIL_TEST_LATE_INTERRUPT_MS");

		if (late != NULL)
			usleep((useconds_t)atoi(late) * 1000);
#endif
		if (pid > 0)
			init_interrupt(pid);
		/* The supervisor holds the worker's next request until the
		 * interrupt is sent: said for each one asked. */
		done = json_pack("{s:s, s:I}", "t", "signalled", "pid",
		    (json_int_t)pid);
		chan_send(init_sock, done, NULL, 0);
		json_decref(done);
		return;
	}
	if (pid <= 0 || sig != SIGKILL)
		return;
	si.si_pid = 0;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == 0)
		kill(pid, sig);
}

static void
init_fork_worker(int *fds, int nfds, json_t *conf)
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
		/* The leader of a group of its own: what its cells start is
		 * in it, for an interrupt and for its end (init_interrupt,
		 * init_report_exits). */
		if (setpgid(0, 0) == -1)
			fatal_code(EXIT_SETUP, errno, "worker: setpgid");
		prctl(PR_SET_NAME, "coil-worker");
		/* fs(dev): /dev/null */
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
		init_worker(fds[0], conf);
	}
	/* Here too: the group must exist before "spawned" lets the
	 * supervisor interrupt it. */
	if (pid > 0)
		setpgid(pid, pid);
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
	m = json_pack("{s:s, s:I, s:i}", "t", "spawned", "pid",
	    (json_int_t)pid, "errno", pid < 0 ? errno : 0);
	chan_send(init_sock, m, NULL, 0);
	json_decref(m);
}

/* The supervisor's orders read so far: spawn a worker (the descriptors
 * that came with it are the worker's), or signal one. */
static void
init_take(struct chan *c, json_t *conf)
{
	json_t *m;
	int fds[CHAN_MAX_FDS], nfds;

	while ((m = chan_next(c, fds, &nfds, NULL)) != NULL) {
		const char *t = json_string_value(json_object_get(m, "t"));

		if (t != NULL && strcmp(t, "spawn") == 0)
			init_fork_worker(fds, nfds, conf);
		else if (t != NULL && strcmp(t, "signal") == 0)
			init_signal_child(m);
		if (t == NULL || strcmp(t, "spawn") != 0)
			while (nfds > 0)
				close(fds[--nfds]);
		json_decref(m);
	}
}

static void __attribute__((noreturn))
init_main(json_t *conf)
{
	struct chan c;
	struct pollfd pfd[2];
	sigset_t set;
	char err[1024];
	int sfd, devnull, keep[2], nkeep = 0;

	prctl(PR_SET_NAME, "coil-init");
	/* Not the front end's stdin and stdout (the agent's JSON channel):
	 * init reads and writes only its report socket. */
	/* fs(dev): /dev/null */
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		close(devnull);
	}
	if (sandbox_enter(init_sbx, &init_report, err, sizeof err) == -1)
		init_fail(EXIT_SANDBOX, "%s", err);
	/* Everything else the supervisor held when it forked init goes:
	 * after a restart that includes the old worker's socket and pipes,
	 * and every later worker would inherit it all.  (sandbox_enter has
	 * used and closed what it took across; what it keeps, the lock on
	 * a host temp dir, stays.) */
	keep[nkeep++] = init_sock;
	if (sandbox_held_fd() >= 0)
		keep[nkeep++] = sandbox_held_fd();
	close_fds_except(keep, nkeep);
	/* sandbox_enter did, unless "none": then this one makes init a
	 * session leader, and EPERM means it already is */
	if (setsid() == -1 && errno != EPERM)
		init_fail(EXIT_SETUP, "init: setsid: %s", strerror(errno));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		init_fail(EXIT_SETUP, "init: prctl("
		    "PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);	/* the supervisor's end, under none */
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sfd = init_sigfd = signalfd(-1, &set, SFD_CLOEXEC |
	    SFD_NONBLOCK)) == -1)
		init_fail(EXIT_SETUP, "init: signalfd: %s",
		    strerror(errno));
	chan_init(&c, init_sock);
	for (;;) {
		pfd[0].fd = init_sock;
		pfd[0].events = POLLIN;
		pfd[1].fd = sfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof si) > 0)
				if (si.ssi_signo == SIGTERM)
					init_end();
			init_report_exits();
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (chan_fill(&c) <= 0)
				break;
			init_take(&c, conf);
		}
	}
	/* The supervisor is gone: take the session's processes along. */
	init_end();
}

int
init_start(struct init *p, json_t *worker_conf,
    const struct sandbox_conf *sbx, char *err, size_t len)
{
	int sv[2];
	pid_t parent = getpid();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return err_set(err, len, "cannot create init's socket: %s",
		    strerror(errno));
	init_sbx = sbx;
	sandbox_report_init(&init_report, sbx->profile);
	p->pid = sandbox_spawn(sbx, &init_report);
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
		init_sock = sv[1];
		/* A restarted init is forked from a supervisor that catches
		 * these (plain mode): init and its workers get the defaults */
		for (i = 0; i < nitems(deflt); i++)
			if (signal(deflt[i], SIG_DFL) == SIG_ERR)
				init_fail(EXIT_SETUP, "init: signal: %s",
				    strerror(errno));
		/* A worker not yet catching it must not die of it */
		if (signal(WORKER_STOP_SIGNAL, SIG_IGN) == SIG_ERR)
			init_fail(EXIT_SETUP, "init: signal: %s",
			    strerror(errno));
		/* In a new PID namespace getppid() is 0: only the death
		 * signal tells of the supervisor's end there, and init's end
		 * ends the rest.  Without one init has work to do first
		 * (init_end): SIGTERM, which it reads on its signalfd. */
		if (prctl(PR_SET_PDEATHSIG, sbx->profile == SANDBOX_NONE ?
		    SIGTERM : SIGKILL) == -1)
			init_fail(EXIT_SETUP, "init: prctl("
			    "PR_SET_PDEATHSIG): %s", strerror(errno));
		if (sbx->profile == SANDBOX_NONE && getppid() != parent)
			_exit(0);
		init_main(worker_conf);
	}
	init_running = p->pid;
	close(sv[1]);
	chan_init(&p->chan, sv[0]);
	/* init lives in the sandbox's namespaces with the cells */
	chan_limit(&p->chan, &chan_peer_limits);
	if (set_nonblock(sv[0], true) == -1) {
		err_set(err, len, "cannot make init's socket non-blocking: %s",
		    strerror(errno));
		init_stop(p);
		return -1;
	}
	return 0;
}

int
init_signal(struct init *p, pid_t pid, int sig)
{
	json_t *m = json_pack("{s:s, s:I, s:i}", "t", "signal", "pid",
	    (json_int_t)pid, "sig", sig);
	int rc = chan_send(p->chan.fd, m, NULL, 0);

	json_decref(m);
	return rc;
}

int
init_spawn(struct init *p, int ctl, int out, int errfd)
{
	int fds[3] = { ctl, out, errfd };
	json_t *m = json_pack("{s:s}", "t", "spawn");
	int rc = chan_send(p->chan.fd, m, fds, 3);

	json_decref(m);
	return rc;
}

/* init ends the session's processes (init_end) when its socket closes;
 * wait for it a while: on its pidfd, which wakes us as it ends (a
 * millisecond's sleeps between looks were half of coil's exit), else in
 * such sleeps.  True when it has ended and is reaped. */
static bool
init_ended(struct init *p)
{
	struct timespec ms = { 0, 1000 * 1000 };
	int64_t deadline = now_ms() + INIT_END_MS + 500, left;
	struct pollfd pfd = { .fd = -1, .events = POLLIN };
	bool ended = false;

	if (p->chan.fd < 0)
		return false;
	pfd.fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (shutdown(p->chan.fd, SHUT_RDWR) == -1)
		goto out;
	while (!(ended = waitpid(p->pid, NULL, WNOHANG) == p->pid) &&
	    (left = deadline - now_ms()) > 0) {
		if (pfd.fd < 0 || poll(&pfd, 1, (int)left) == -1)
			nanosleep(&ms, NULL);
	}
out:
	if (pfd.fd >= 0)
		close(pfd.fd);
	return ended;
}

void
init_stop(struct init *p)
{
	if (p->pid > 0) {
		if (!init_ended(p)) {
			kill(-p->pid, SIGKILL);	/* init's session, group */
			kill(p->pid, SIGKILL);
			while (waitpid(p->pid, NULL, 0) == -1 &&
			    errno == EINTR)
				;
		}
		if (init_running == p->pid)
			init_running = 0;
		p->pid = 0;
	}
	chan_close(&p->chan);
}

/*
 * The janitor: a fork of the supervisor made before init, so in none of
 * the session's namespaces or cgroups, that sweeps what coils killed
 * earlier left (sandbox_sweep: a walk of the temp dir and the cgroup
 * trees, milliseconds off the session's start when it runs here, on the
 * other CPU) and then waits for the supervisor to end and runs
 * sandbox_cleanup.  The sweep never takes this session's own: their
 * owner is alive.  A supervisor killed by SIGKILL
 * removes nothing itself, and the session's cgroups cannot be removed
 * before init (PR_SET_PDEATHSIG) and everything in them are gone, which
 * cg_end waits for.  It keeps no descriptor of coil's (a reader waiting
 * for the end of coil's stdout is not kept waiting) and no work dir.
 */
static void __attribute__((noreturn))
init_janitor_main(int pfd, const struct sandbox_conf *sbx)
{
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	int devnull;

	prctl(PR_SET_NAME, "coil-janitor");
	setsid();		/* a terminal's signals are for coil */
	/* fs(dev): /dev/null */
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 ||
	    dup2(devnull, 2) < 0 || chdir("/") < 0)
		_exit(EXIT_SETUP);
	/* close_range: a thousand closes were a thousand system calls, on
	 * a CPU the session's start needs. */
	close_fds_except(&pfd, 1);
	sandbox_sweep(sbx);
	while (poll(&p, 1, -1) == -1 && errno == EINTR)
		;
	sandbox_cleanup(sbx);
	_exit(0);
}

int
init_janitor(const struct sandbox_conf *sbx)
{
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	pid_t pid;

	if (pfd < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		init_janitor_main(pfd, sbx);
	close(pfd);
	return pid < 0 ? -1 : 0;
}

void
init_abort(void)
{
	pid_t pid = init_running;

	if (pid <= 0)
		return;
	init_running = 0;
	/* our own child, not yet reaped: its pid is still its own */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}
