/*
 * sbx-ns.c: the user, PID, network and IPC namespaces.
 *
 *   PID namespace    nothing a cell starts outlives init (PID 1), and the
 *                    worker cannot name a process outside the session;
 *                    asked for when init is created (ns_spawn, in the
 *                    supervisor)
 *   user namespace   not root: maps the uid to itself, which gives no power
 *                    but lets init make the other namespaces; root: the
 *                    worker is uid 0 inside and an unused uid outside, so
 *                    DAC alone stops it reading /etc/shadow, entered last
 *                    (ns_userns_enter) once the new root is built with
 *                    id-mapped binds (ns_userns_mapped, for sbx-root.c)
 *   net namespace    no interface but a loopback that is down
 *   IPC namespace    no System V or POSIX IPC with the host
 *
 * The mount namespace is sbx-root.c's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit.h"
#include "util.h"

/* The helper of ns_userns_mapped: born in the new namespace (clone with
 * CLONE_NEWUSER), it only waits until its parent has written the maps and
 * opened the namespace, then exits.  It shares its parent's memory
 * (CLONE_VM): no copy of the page tables, a tenth of a fork's cost, so
 * it uses raw syscalls only and a stack of its own. */
static char helper_stack[16384] __attribute__((aligned(16)));
static int helper_fds[2];	/* the pipe, read-only after the clone: the
				   parent's own variables change under it */

static int
userns_helper(void *arg)
{
	char c;

	(void)arg;
	/* its copy of the write end would keep the pipe open forever; and
	 * errno is the parent's (shared TLS): do not look at it.  If the
	 * parent dies before it closes its end, go too. */
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	syscall(SYS_close, helper_fds[1]);
	syscall(SYS_read, helper_fds[0], &c, 1);
	syscall(SYS_exit, 0);
	return 0;
}

/*
 * The pid under which /proc shows a child.  When init is PID 1 of a new
 * namespace but /proc is still the host's (no mount namespace), the two
 * numberings differ; a pidfd's fdinfo speaks in the numbering of the
 * /proc it is read from.
 */
static pid_t
proc_pid(pid_t pid)
{
	char path[64], buf[1024], *p;
	int fd;
	pid_t got = pid;

	if (getpid() != 1)
		return pid;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return pid;
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	if (sbx_read_file(path, buf, sizeof buf) > 0 &&
	    (p = strstr(buf, "\nPid:")) != NULL && atol(p + 5) > 0)
		got = (pid_t)atol(p + 5);
	close(fd);
	return got;
}

/*
 * A user namespace whose uid_map maps `inside` to `outside` (and gids
 * likewise), created by a short-lived helper child so that the mapping is
 * written from the parent namespace: only a process there with CAP_SETUID
 * may map to a uid other than its own.  Returns an fd on the namespace,
 * or -1 with errno.
 */
int
ns_userns_mapped(long inside, long outside, long ginside, long goutside)
{
	int hold[2], fd = -1, e = 0;
	char path[64], map[64];
	pid_t pid, ppid;

	if (pipe2(hold, O_CLOEXEC) < 0)
		return -1;
	helper_fds[0] = hold[0];
	helper_fds[1] = hold[1];
	pid = clone(userns_helper, helper_stack + sizeof helper_stack,
	    CLONE_VM | CLONE_NEWUSER | SIGCHLD, NULL);
	if (pid < 0) {
		e = errno;
		close(hold[1]);
		goto out;
	}
	ppid = proc_pid(pid);
	snprintf(map, sizeof map, "%ld %ld 1\n", inside, outside);
	snprintf(path, sizeof path, "/proc/%ld/uid_map", (long)ppid);
	if (sbx_write_file(path, map) < 0) {
		e = errno;
		goto out;
	}
	snprintf(path, sizeof path, "/proc/%ld/setgroups", (long)ppid);
	if (sbx_write_file(path, "deny") < 0) {
		e = errno;
		goto out;
	}
	snprintf(map, sizeof map, "%ld %ld 1\n", ginside, goutside);
	snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)ppid);
	if (sbx_write_file(path, map) < 0) {
		e = errno;
		goto out;
	}
	snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)ppid);
	/* fs(proc): the kernel's */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		e = errno;
out:
	if (pid > 0) {
		close(hold[1]);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(hold[0]);
	errno = e;
	return fd;
}

/* Not root: map our own uid (and gid) to itself in the namespace we just
 * entered.  It gives no power over anyone's files, but lets init build a
 * mount and network namespace, and confines RLIMIT_NPROC's count to the
 * session. */
static int
userns_map_self(uid_t uid, gid_t gid)
{
	char map[64];

	snprintf(map, sizeof map, "%ld %ld 1\n", (long)uid, (long)uid);
	if (sbx_write_file("/proc/self/uid_map", map) < 0 ||
	    sbx_write_file("/proc/self/setgroups", "deny") < 0)
		return -1;
	snprintf(map, sizeof map, "%ld %ld 1\n", (long)gid, (long)gid);
	return sbx_write_file("/proc/self/gid_map", map);
}

static const char *
userns_hint(int e)
{
	switch (e) {
	case EPERM:
	case EACCES:
		return "user namespaces are refused here (a container's "
		    "seccomp or AppArmor policy, or "
		    "kernel.unprivileged_userns_clone=0)";
	case ENOSPC:
	case EUSERS:
		return "user.max_user_namespaces is 0 or used up";
	case EINVAL:
		return "the kernel lacks CONFIG_USER_NS";
	default:
		return "unexpected";
	}
}

/* ---- ns_spawn (supervisor) ------------------------------------------- */

/*
 * Re-arm init's parent-death signal, which the kernel clears on each change
 * of credentials, and end init if the supervisor died in between: its
 * pidfd (st->parent_pidfd, open in init) is then readable.  getppid()
 * cannot tell: it is 0 in PID 1 of a new namespace.
 */
static int
check_parent(const struct sbx_state *st)
{
	struct pollfd pfd = { st->parent_pidfd, POLLIN, 0 };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -1;
	/* readable: the supervisor has exited */
	if (st->parent_pidfd >= 0 && poll(&pfd, 1, 0) > 0)
		_exit(1);
	return 0;
}

/* In init, just born: watch the supervisor (pfd, a pidfd on it, or -1),
 * and not root, map the uid and gid it had to themselves. */
static void
spawn_child(struct sandbox_report *r, struct sbx_state *st, int pfd,
    bool root, uid_t uid, gid_t gid)
{
	int e;

	st->parent_pidfd = pfd;
	if (check_parent(st) < 0) {
		coil_error("init: prctl(PR_SET_PDEATHSIG): %s",
		    strerror(errno));
		_exit(EXIT_SETUP);
	}
	if (!root) {
		if (userns_map_self(uid, gid) < 0) {
			e = errno;
			sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_FAILED, e,
			    "writing the maps: %s", strerror(e));
		} else {
			sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_ON, 0, "uid %ld "
			    "mapped to itself", (long)uid);
		}
	}
	sbx_mark(r, SANDBOX_M_PIDNS, SANDBOX_ON, 0, "init is PID 1: "
	    "everything the session starts dies with it");
}

/*
 * sandbox_spawn: fork() for init.  The new PID namespace must be asked for
 * when the process is created, for init to be its PID 1 rather than the
 * parent of it: so this is a raw clone(2), as nsjail's cloneProc and
 * systemd's raw_clone do.  It skips glibc's fork handlers, hence
 * "single-threaded only", and the child's cached tid is its parent's
 * (glibc >= 2.25 caches no pid; raise() asks the kernel).  Not root: the
 * child also gets a user namespace mapping its uid to itself, without
 * which it could make none of the others.
 */
pid_t
ns_spawn(const struct sandbox_conf *c, struct sandbox_report *r,
    struct sbx_state *st)
{
	unsigned long flags = CLONE_NEWPID;
	bool root = geteuid() == 0;
	uid_t uid = getuid();
	gid_t gid = getgid();
	int pfd, e;
	pid_t pid;

	if (c->profile == SANDBOX_NONE)
		return fork();
	if (sbx_skipped(c, r, SANDBOX_M_PIDNS))
		return fork();
	if (!root) {
		if (c->skip & (1U << SANDBOX_M_USERNS))
			return fork();
		flags |= CLONE_NEWUSER;
	}
	pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	fflush(NULL);
	pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid < 0) {
		e = errno;
		if (pfd >= 0)
			close(pfd);
		sbx_mark(r, SANDBOX_M_PIDNS, SANDBOX_MISSING, e, "%s%s: "
		    "processes a cell starts may outlive the session",
		    strerror(e), root ? "" : " (with a user namespace)");
		if (!root)
			sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, e,
			    "%s; %s", strerror(e), userns_hint(e));
		return fork();
	}
	if (pid > 0) {
		if (pfd >= 0)
			close(pfd);
		return pid;
	}
	spawn_child(r, st, pfd, root, uid, gid);
	return 0;
}

/* ---- the steps of sandbox_enter (init) -------------------------------- */

/* Not root and not given a user namespace by sandbox_spawn: make one. */
int
ns_userns_self(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;

	if (sb->root || sbx_is_on(r, SANDBOX_M_USERNS) ||
	    sbx_skipped(sb->c, r, SANDBOX_M_USERNS))
		return 0;
	if (unshare(CLONE_NEWUSER) < 0) {
		sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, errno, "%s; %s",
		    strerror(errno), userns_hint(errno));
		return 0;
	}
	if (userns_map_self(getuid(), getgid()) < 0) {
		sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_FAILED, errno, "writing "
		    "the maps: %s", strerror(errno));
		return 0;
	}
	sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_ON, 0, "uid %ld mapped to itself",
	    (long)getuid());
	return 0;
}

/* Network and IPC namespaces; --allow-net keeps the host's network
 * (except under strict). */
int
ns_net_ipc(struct sbx *sb)
{
	const struct sandbox_conf *c = sb->c;
	struct sandbox_report *r = sb->r;

	if (c->allow_net && c->profile != SANDBOX_STRICT)
		sbx_mark(r, SANDBOX_M_NETNS, SANDBOX_OFF, 0, "--allow-net");
	else if (sbx_skipped(c, r, SANDBOX_M_NETNS))
		;
	else if (unshare(CLONE_NEWNET) < 0)
		sbx_mark(r, SANDBOX_M_NETNS, SANDBOX_MISSING, errno, "%s",
		    strerror(errno));
	else
		sbx_mark(r, SANDBOX_M_NETNS, SANDBOX_ON, 0, "no interface but "
		    "a loopback that is down");
	if (sbx_skipped(c, r, SANDBOX_M_IPCNS))
		;
	else if (unshare(CLONE_NEWIPC) < 0)
		sbx_mark(r, SANDBOX_M_IPCNS, SANDBOX_MISSING, errno, "%s",
		    strerror(errno));
	else
		sbx_mark(r, SANDBOX_M_IPCNS, SANDBOX_ON, 0, "private System V "
		    "and POSIX IPC");
	return 0;
}

/* Root: the worker's uid outside will be an unused one.  Its namespace is
 * made now (the id-mapped binds need it) and entered last: everything
 * before is done as real root, so the mount, network and IPC namespaces
 * belong to the initial user namespace and the worker, without any
 * capability there, can change none of them. */
int
ns_userns_make(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;

	if (!sb->root || sbx_is_on(r, SANDBOX_M_USERNS) ||
	    sbx_skipped(sb->c, r, SANDBOX_M_USERNS))
		return 0;
	sb->outside = WORKER_UID_BASE + (long)sb->session % WORKER_UID_SPAN;
	sb->userns = ns_userns_mapped(0, sb->outside, 0, sb->outside);
	if (sb->userns < 0)
		sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, errno,
		    "%s; %s: the worker stays uid 0, without capabilities",
		    strerror(errno), userns_hint(errno));
	return 0;
}

/* Root: become the worker's uid, last. */
int
ns_userns_enter(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;

	if (sb->userns < 0)
		return 0;
	/* Without the new root the work dir is not id-mapped, and the
	 * worker's uid could not write it: stay uid 0, without caps. */
	if (!sbx_is_on(r, SANDBOX_M_MOUNTNS)) {
		close(sb->userns);
		sb->userns = -1;
		sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, 0, "needs the "
		    "mount namespace (to id-map the work dir): the worker "
		    "stays uid 0, without capabilities");
		return 0;
	}
	/* Supplementary groups would survive setns and keep root's group
	 * rights outside: drop them first. */
	if (setgroups(0, NULL) < 0 || setns(sb->userns, CLONE_NEWUSER) < 0 ||
	    setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
		sbx_seterr(sb->err, sb->len, errno, NULL, "entering the user "
		    "namespace");
		sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_FAILED, errno, "%s",
		    sb->err);
		return -1;
	}
	close(sb->userns);
	sb->userns = -1;
	if (check_parent(sb->st) < 0) {
		sbx_seterr(sb->err, sb->len, errno, NULL, "PR_SET_PDEATHSIG");
		return -1;
	}
	r->worker_uid = sb->outside;
	sbx_mark(r, SANDBOX_M_USERNS, SANDBOX_ON, 0, "uid 0 inside is uid %ld "
	    "outside; writable dirs are id-mapped", sb->outside);
	return 0;
}
