/*
 * sbx-seccomp.c: seccomp, the worker's last step: the dangerous kernel
 * interfaces, socket families, clone3 -> ENOSYS so that glibc falls back
 * to clone(2), whose flags a filter can read.  Strict adds a second
 * filter: no exec, no fork, no sockets but socketpair, and the checkpoint
 * gate, which sends each fork to the supervisor (sandbox_gate_answer)
 * instead of running it.  Filters are built with libseccomp.
 *
 * Set-uid and set-gid bits, under standard and strict alike: the work dir
 * and --allow-write dirs are id-mapped binds, so a file a cell makes there
 * is, on the host, the file of whoever started coil (root, on servers).
 * The binds are nosuid, the host's mounts of the same files are not: a
 * cell that copies a shell and sets its set-uid bit would leave a root
 * shell for any local user who can reach the work dir.  So every call
 * that sets a mode (chmod, fchmod, fchmodat, fchmodat2, creat, open and
 * openat with O_CREAT or O_TMPFILE, mknod, mknodat) is refused with EPERM
 * when the mode has S_ISUID or S_ISGID; openat2 carries its mode in a
 * struct a filter cannot read: ENOSYS (glibc's open() never uses it).
 * No option lifts this.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <seccomp.h>

/* Denied with EPERM under standard and strict: debugging other processes,
 * the mount and namespace API, and the kernel's big attack surfaces. */
static const char *const sc_deny[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"pidfd_getfd", "mount", "umount2", "pivot_root", "chroot",
	"move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr", "unshare", "setns", "bpf", "perf_event_open",
	"userfaultfd", "keyctl", "add_key", "request_key", "io_uring_setup",
	"io_uring_enter", "io_uring_register", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module",
	"acct", "swapon", "swapoff", "reboot", "syslog", "open_by_handle_at",
	"name_to_handle_at", "iopl", "ioperm", "quotactl", "quotactl_fd",
	"lookup_dcookie", "fanotify_init", "uselib", "nfsservctl", "vhangup",
	"settimeofday", "clock_settime", "clock_adjtime", "sethostname",
	"setdomainname", "migrate_pages", "move_pages", "_sysctl",
	"create_module", "get_kernel_syms", "query_module", "vm86", "vm86old",
};

/* Root without a user namespace or a new root owns every root-owned file
 * it can name: then chmod and chown are denied outright. */
static const char *const sc_chown[] = {
	"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown",
	"lchown", "fchownat",
};

/* Syscalls newer than libseccomp 2.5.4's table, by x86_64 number. */
struct sc_raw { const char *name; int nr; };
static const struct sc_raw sc_raw[] = {
#ifdef __x86_64__
	{ "open_tree_attr", 467 },
#endif
	/* one number on every architecture since Linux 5.1's unified
	 * table, but for alpha and mips (not ours) */
#if defined(__x86_64__) || defined(__aarch64__)
	{ "fchmodat2", 452 },
#endif
};

static int
sc_nr(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	size_t i;

	if (nr != __NR_SCMP_ERROR)
		return nr;
	for (i = 0; i < sizeof sc_raw / sizeof *sc_raw; i++)
		if (strcmp(sc_raw[i].name, name) == 0)
			return sc_raw[i].nr;
	return __NR_SCMP_ERROR;
}

static int
sc_rule(scmp_filter_ctx ctx, uint32_t act, const char *name, unsigned n,
    const struct scmp_arg_cmp *cmp)
{
	int nr = sc_nr(name), rc;

	if (nr == __NR_SCMP_ERROR)
		return 0;	/* not on this architecture */
	rc = seccomp_rule_add_array(ctx, act, nr, n, cmp);
	/* A pseudo-syscall libseccomp cannot filter here is no error. */
	return rc == -EDOM || rc == -EOPNOTSUPP ? 0 : rc;
}

/* Deny socket() of every family but those allowed (sorted): one rule per
 * family below the highest allowed, one for all above it.  The family is
 * an int: compare the low 32 bits only. */
static int
sc_sockets(scmp_filter_ctx ctx, const int *allow, size_t nallow)
{
	struct scmp_arg_cmp cmp;
	int fam, rc, top = allow[nallow - 1];
	size_t i;

	for (fam = 0; fam < top; fam++) {
		bool ok = false;

		for (i = 0; i < nallow; i++)
			ok |= allow[i] == fam;
		if (ok)
			continue;
		cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffU,
		    (scmp_datum_t)fam);
		if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EACCES), "socket", 1,
		    &cmp)) < 0)
			return rc;
	}
	/* signed: a negative family is above top as an unsigned word */
	cmp = SCMP_A0(SCMP_CMP_GT, (scmp_datum_t)top);
	return sc_rule(ctx, SCMP_ACT_ERRNO(EACCES), "socket", 1, &cmp);
}

/* Socket families: unix always; inet only with --allow-net (net), and
 * never raw.  Netlink, packet, vsock and the rest: never. */
static int
sc_families(scmp_filter_ctx ctx, bool net)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	static const int types[] = { SOCK_RAW, SOCK_PACKET };
	struct scmp_arg_cmp cmp[2];
	int rc, allow[3], nallow = 0;
	size_t f, t;

	allow[nallow++] = AF_UNIX;
	if (net) {
		allow[nallow++] = AF_INET;
		allow[nallow++] = AF_INET6;
	}
	if ((rc = sc_sockets(ctx, allow, (size_t)nallow)) < 0)
		return rc;
	if (!net)
		return 0;
	for (f = 0; f < 2; f++)
		for (t = 0; t < 2; t++) {
			cmp[0] = SCMP_A0(SCMP_CMP_EQ, fams[f]);
			cmp[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, types[t]);
			if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EACCES),
			    "socket", 2, cmp)) < 0)
				return rc;
		}
	return 0;
}

/* Calls that set a file's mode: the argument holding it, and the one
 * holding open's flags (-1: the mode always counts). */
struct sc_modecall { const char *name; unsigned mode; int flags; };
static const struct sc_modecall sc_modecalls[] = {
	{ "chmod", 1, -1 }, { "fchmod", 1, -1 }, { "fchmodat", 2, -1 },
	{ "creat", 1, -1 }, { "open", 2, 1 }, { "openat", 3, 2 },
	{ "mknod", 1, -1 }, { "mknodat", 2, -1 },
};

/* The kernel reads open's mode only with O_CREAT or __O_TMPFILE (glibc's
 * O_TMPFILE is that bit with O_DIRECTORY, which it needs as well). */
#define SC_O_TMPFILE_BIT ((scmp_datum_t)(O_TMPFILE & ~O_DIRECTORY))

/* EPERM for call m when its mode has a set-id bit (and, for open, its
 * flags create a file).  Only the mode's and the flags' low bits are
 * compared, as the kernel reads them. */
static int
sc_setid_call(scmp_filter_ctx ctx, const struct sc_modecall *m)
{
	static const scmp_datum_t bits[] = { S_ISUID, S_ISGID };
	const scmp_datum_t creates[] = { O_CREAT, SC_O_TMPFILE_BIT };
	struct scmp_arg_cmp cmp[2];
	size_t b, f;
	int rc;

	for (b = 0; b < 2; b++) {
		cmp[0] = SCMP_CMP(m->mode, SCMP_CMP_MASKED_EQ, bits[b],
		    bits[b]);
		if (m->flags < 0) {
			if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), m->name,
			    1, cmp)) < 0)
				return rc;
			continue;
		}
		for (f = 0; f < 2; f++) {
			cmp[1] = SCMP_CMP((unsigned)m->flags,
			    SCMP_CMP_MASKED_EQ, creates[f], creates[f]);
			if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), m->name,
			    2, cmp)) < 0)
				return rc;
		}
	}
	return 0;
}

/* No set-uid or set-gid file (see the top of the file). */
static int
sc_setid(scmp_filter_ctx ctx)
{
	static const scmp_datum_t bits[] = { S_ISUID, S_ISGID };
	struct scmp_arg_cmp cmp;
	size_t i;
	int nr, rc;

	for (i = 0; i < sizeof sc_modecalls / sizeof *sc_modecalls; i++)
		if ((rc = sc_setid_call(ctx, &sc_modecalls[i])) < 0)
			return rc;
	/* fchmodat2 (Linux 6.6) by its mode if libseccomp can filter it
	 * here; if not, ENOSYS, and glibc falls back to fchmodat */
	if ((nr = sc_nr("fchmodat2")) != __NR_SCMP_ERROR)
		for (i = 0; i < 2; i++) {
			cmp = SCMP_CMP(2, SCMP_CMP_MASKED_EQ, bits[i], bits[i]);
			if (seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM),
			    nr, 1, &cmp) == 0)
				continue;
			if ((rc = seccomp_rule_add(ctx,
			    SCMP_ACT_ERRNO(ENOSYS), nr, 0)) < 0)
				return rc;
			break;
		}
	return sc_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL);
}

/* The filter of standard and strict alike; *chown_denied: whether it
 * denies chmod and chown too. */
static int
sc_base(const struct sandbox_conf *c, const struct sandbox_report *r,
    scmp_filter_ctx ctx, bool *chown_denied)
{
	static const unsigned long ns_flags[] = { CLONE_NEWNS, CLONE_NEWCGROUP,
	    CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	    CLONE_NEWNET };
	struct scmp_arg_cmp cmp[1];
	int rc;
	size_t i;
	bool net = c->allow_net && c->profile != SANDBOX_STRICT;

	for (i = 0; i < sizeof sc_deny / sizeof *sc_deny; i++)
		if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), sc_deny[i], 0,
		    NULL)) < 0)
			return rc;
	if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), "open_tree_attr", 0,
	    NULL)) < 0)
		return rc;
	/* clone3 passes its flags in memory a filter cannot read: ENOSYS
	 * makes glibc fall back to clone(2). */
	if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL)) < 0)
		return rc;
	for (i = 0; i < sizeof ns_flags / sizeof *ns_flags; i++) {
		cmp[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
		if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1,
		    cmp)) < 0)
			return rc;
	}
	/* Typing into a terminal's input queue. */
	cmp[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCSTI);
	if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, cmp)) < 0)
		return rc;
	cmp[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCLINUX);
	if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, cmp)) < 0)
		return rc;
	if ((rc = sc_families(ctx, net)) < 0)
		return rc;
	if ((rc = sc_setid(ctx)) < 0)
		return rc;
	*chown_denied = false;
	if (r->worker_uid == 0 && !sbx_is_on(r, SANDBOX_M_USERNS) &&
	    !sbx_is_on(r, SANDBOX_M_MOUNTNS)) {
		for (i = 0; i < sizeof sc_chown / sizeof *sc_chown; i++)
			if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM),
			    sc_chown[i], 0, NULL)) < 0)
				return rc;
		*chown_denied = true;
	}
	return 0;
}

/*
 * strict, as a second filter: where both filters answer, the kernel takes
 * the stronger action, so the base filter's EPERM for a namespace clone
 * still beats this one's notification.
 *
 * The checkpoint gate.  User code and the worker are one process: any
 * secret or code path the worker could use to fork, ctypes can use too, so
 * no in-process test (a cookie in an argument, the calling address, a
 * thread with a laxer filter) can tell the worker's fork from the user's.
 * The supervisor can: it knows when a checkpoint is due.  So every fork
 * goes to it (SECCOMP_RET_USER_NOTIF) and it lets one through per
 * checkpoint it expects, from the main thread only; the worker runs no
 * Python from the order to that fork (worker-fork.c: no at-fork hooks).
 * What is left: cell code the worker still runs on the main thread while
 * the order is on its way (a Python signal handler as it waits) can
 * spend the one fork itself; its child is then as confined as the worker
 * (this filter, no execve, no sockets), the supervisor kills it, and the
 * checkpoint fails and says so (session-ckpt.c).
 */
static int
sc_strict(bool gate, scmp_filter_ctx ctx)
{
	uint32_t fork_act = gate ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
	struct scmp_arg_cmp cmp;
	int rc;

	if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), "execve", 0, NULL)) < 0 ||
	    (rc = sc_rule(ctx, SCMP_ACT_ERRNO(EPERM), "execveat", 0,
	    NULL)) < 0 ||
	    (rc = sc_rule(ctx, fork_act, "fork", 0, NULL)) < 0 ||
	    (rc = sc_rule(ctx, fork_act, "vfork", 0, NULL)) < 0)
		return rc;
	/* threads (CLONE_THREAD) still work */
	cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0);
	if ((rc = sc_rule(ctx, fork_act, "clone", 1, &cmp)) < 0)
		return rc;
	if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EACCES), "socket", 0, NULL)) < 0)
		return rc;
	cmp = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
	return sc_rule(ctx, SCMP_ACT_ERRNO(EACCES), "socketpair", 1, &cmp);
}

static scmp_filter_ctx
sc_new(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (ctx == NULL)
		return NULL;
	/* 32-bit and x32 syscalls would slip past the rules: kill. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS) < 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/* Load the base filter.  Returns 0, or a negative errno. */
static int
sc_load_base(struct sbx *sb)
{
	const struct sandbox_conf *c = sb->c;
	scmp_filter_ctx ctx;
	bool chown_denied = false;
	int rc;

	ctx = sc_new();
	if (ctx == NULL)
		return -ENOMEM;
	if ((rc = sc_base(c, sb->r, ctx, &chown_denied)) < 0 ||
	    (rc = seccomp_load(ctx)) < 0) {
		seccomp_release(ctx);
		return rc;
	}
	seccomp_release(ctx);
	sbx_mark(sb->r, SANDBOX_M_SECCOMP, SANDBOX_ON, 0, "ptrace, mount, "
	    "namespaces, bpf, io_uring, keyrings, modules denied; clone3 "
	    "ENOSYS; set-uid and set-gid modes denied, openat2 ENOSYS; "
	    "sockets: %s%s", c->allow_net &&
	    c->profile != SANDBOX_STRICT ? "unix, inet" : "unix only",
	    chown_denied ? "; chmod and chown denied (root without a user "
	    "namespace)" : "");
	return 0;
}

/*
 * Load the strict filter, with the checkpoint gate if conf->ckpt_gate and
 * the machine can (SECCOMP_RET_USER_NOTIF, Linux 5.0, and libseccomp API
 * 5; without them strict takes no checkpoints).  The gate's listener goes
 * to st->notify_fd.  Returns 0, or a negative errno.
 */
static int
sc_load_strict(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;
	scmp_filter_ctx ctx;
	bool gate = sb->c->ckpt_gate;
	int rc;

	if (gate && seccomp_api_get() < 5) {
		sbx_mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_MISSING, 0,
		    "libseccomp API %u < 5: no user notification; no "
		    "checkpoints under strict", seccomp_api_get());
		gate = false;
	}
	for (;;) {
		ctx = sc_new();
		if (ctx == NULL)
			return -ENOMEM;
		if ((rc = sc_strict(gate, ctx)) == 0 &&
		    (rc = seccomp_load(ctx)) == 0)
			break;
		seccomp_release(ctx);
		if (!gate || rc != -EINVAL)
			return rc;
		sbx_mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_MISSING, EINVAL, "no "
		    "seccomp user notification: no checkpoints under strict");
		gate = false;
	}
	if (gate) {
		sb->st->notify_fd = seccomp_notify_fd(ctx);
		if (sb->st->notify_fd < 0) {
			rc = sb->st->notify_fd;
			seccomp_release(ctx);
			return rc;
		}
		sbx_mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_ON, 0, "fork and "
		    "clone go to the supervisor, which lets the worker's own "
		    "checkpoint fork through");
	} else if (r->m[SANDBOX_M_CKPT_GATE].state != SANDBOX_MISSING) {
		sbx_mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_OFF, 0, "no "
		    "checkpoints under strict");
	}
	seccomp_release(ctx);
	sbx_mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_ON, 0, "no execve, no "
	    "fork (threads only), no socket but socketpair");
	return 0;
}

/* The seccomp step, last of all. */
int
sc_apply(struct sbx *sb)
{
	const struct sandbox_conf *c = sb->c;
	struct sandbox_report *r = sb->r;
	bool strict = c->profile == SANDBOX_STRICT;
	int rc;

	if (sbx_skipped(c, r, SANDBOX_M_SECCOMP)) {
		if (strict)
			sbx_mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_MISSING,
			    0, "not tried: skipped on request");
		return 0;
	}
	if (prctl(PR_GET_SECCOMP) < 0 && errno == EINVAL) {
		sbx_mark(r, SANDBOX_M_SECCOMP, SANDBOX_MISSING, EINVAL, "the "
		    "kernel has no CONFIG_SECCOMP_FILTER");
		if (strict)
			sbx_mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_MISSING,
			    EINVAL, "no seccomp");
		return 0;
	}
	if ((rc = sc_load_base(sb)) < 0)
		goto out;
	if (!strict) {
		sbx_mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_OFF, 0,
		    "standard");
		sbx_mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_OFF, 0, "standard: "
		    "checkpoints fork freely");
		return 0;
	}
	if ((rc = sc_load_strict(sb)) < 0)
		goto out;
	return 0;
out:
	sbx_seterr(sb->err, sb->len, -rc, NULL, "seccomp");
	sbx_mark(r, strict && sbx_is_on(r, SANDBOX_M_SECCOMP) ?
	    SANDBOX_M_SECCOMP_STRICT : SANDBOX_M_SECCOMP, SANDBOX_FAILED, -rc,
	    "%s", sb->err);
	return -1;
}

/* ---- checkpoint gate (supervisor) ------------------------------------- */

int
sandbox_gate_answer(int fd, sandbox_gate_fn allow, void *ctx)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	int rc, ok;

	if (seccomp_notify_alloc(&req, &resp) < 0) {
		errno = ENOMEM;
		return -1;
	}
	rc = seccomp_notify_receive(fd, req);
	if (rc < 0) {
		seccomp_notify_free(req, resp);
		errno = -rc;
		return -1;
	}
	/* a fork as glibc makes it: a copy, not a thread sharing memory
	 * (CONTINUE is safe here: nothing it checks is in user memory) */
	ok = (req->data.nr == sc_nr("fork") || (req->data.nr ==
	    sc_nr("clone") && !(req->data.args[0] & (CLONE_VM |
	    CLONE_THREAD)))) && allow(ctx, (pid_t)req->pid);
	resp->id = req->id;
	resp->val = 0;
	resp->error = ok ? 0 : -EPERM;
	resp->flags = ok ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	rc = seccomp_notify_respond(fd, resp);
	seccomp_notify_free(req, resp);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return ok;
}
