/*
 * sandbox.c: the --sandbox profiles, enforced by the kernel.  See sandbox.h
 * for the contract and which process calls what.  This file is the
 * driver: the configuration, the two ordered step tables (init's and the
 * worker's), and the one state of the process that every step is handed
 * (sbx.h).  Each mechanism is a file of its own, named below.
 *
 * The shape follows nsjail's contain.cc and bubblewrap: an ordered list of
 * steps, each a function that either puts one mechanism in force or says
 * exactly why not (errno and a hint), recorded in the report.  Missing
 * mechanisms degrade openly; unexpected failures fail closed.
 *
 * Why each mechanism is there (the guarantees are the rule table of
 * sbx-report.c):
 *
 *   cgroup           memory (swap off) and process count for the whole
 *   (sbx-cgroup.c)   session, whatever uid it runs as; root ignores
 *                    RLIMIT_NPROC, so the cgroup is what stops a fork bomb
 *   user namespace   root is not special: the worker is uid 0 inside and an
 *   (sbx-ns.c)       unused uid outside, so DAC alone stops it reading
 *                    /etc/shadow or chmod-ing a root-owned file; the
 *                    writable dirs are id-mapped mounts, so what it writes
 *                    is owned on disk by the directory's owner
 *   mount namespace  a new root holding only the system dirs (read-only),
 *   (sbx-root.c)     the work dir, the private tmp and --allow-* dirs: the
 *                    rest of the machine, its unix sockets included, is not
 *                    there to be reached
 *   PID namespace    nothing a cell starts outlives init (PID 1), and the
 *   (sbx-ns.c)       worker cannot name a process outside the session
 *   net namespace    no interface but a loopback that is down
 *   IPC namespace    no System V or POSIX IPC with the host
 *   rlimits          DATA (not AS, which starves OpenBLAS's thread stacks),
 *   (sbx-limits.c)   FSIZE, NOFILE, CORE 0, NPROC inside the user namespace
 *   capabilities     none, bounding set empty, securebits locked
 *   Landlock         the file access allow-list, TCP bind/connect, and the
 *   (sbx-landlock.c) signal and abstract-socket scopes; works without any
 *                    namespace, so it is the floor everywhere
 *   seccomp          last: the dangerous kernel interfaces, socket
 *   (sbx-seccomp.c)  families, clone3 -> ENOSYS so that glibc falls back to
 *                    clone(2), whose flags a filter can read; strict adds
 *                    no exec, no fork, no sockets but socketpair
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "util.h"

#define GiB (1024ULL * 1024 * 1024)

/*
 * The process's state.  One per process: init fills it in sandbox_enter,
 * the worker it forks inherits it and adds to it in sandbox_apply (see
 * struct sbx_state).
 */
static struct sbx_state state = {
	.parent_pidfd = -1,
	.tmp_lock_fd = -1,
	.notify_fd = -1,
};

/* ---- configuration ---------------------------------------------------- */

#ifdef COIL_TEST_HOOKS
static void test_hooks(struct sandbox_conf *);
#endif

void
sandbox_conf_init(struct sandbox_conf *c)
{
	memset(c, 0, sizeof *c);
	c->profile = SANDBOX_STANDARD;
	c->memory = 4 * GiB;
	c->max_procs = 256;
	c->max_file_size = 1 * GiB;
	c->max_files = 1024;
	c->ckpt_gate = true;
	c->venv_fd = -1;
#ifdef COIL_TEST_HOOKS
	test_hooks(c);
#endif
}

static const char *const profile_names[] = { "none", "standard", "strict" };

int
sandbox_parse_profile(const char *s, enum sandbox_profile *p)
{
	size_t i;

	for (i = 0; i < sizeof profile_names / sizeof *profile_names; i++) {
		if (strcmp(s, profile_names[i]) == 0) {
			*p = (enum sandbox_profile)i;
			return 0;
		}
	}
	return -1;
}

const char *
sandbox_profile_name(enum sandbox_profile p)
{
	if ((unsigned)p < sizeof profile_names / sizeof *profile_names)
		return profile_names[p];
	return "?";
}

#ifdef COIL_TEST_HOOKS
/*
 * Test builds only (tests/coil-hooked; the installed coil has no hook):
 * COIL_TEST_SKIP="landlock files,seccomp" leaves those mechanisms untried
 * (conf->skip; names as in the report), COIL_TEST_NO_GATE=1 turns the
 * strict checkpoint gate off.  An unknown name is a broken test: exit.
 */
static void
test_hooks(struct sandbox_conf *c)
{
	const char *s = getenv("COIL_TEST_SKIP"), *e, *name;
	size_t n;
	unsigned m;

	for (; s != NULL && *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = strchr(s, ',');
		if (e == NULL)
			e = s + strlen(s);
		n = (size_t)(e - s);
		for (m = 0; m < SANDBOX_M_COUNT; m++) {
			name = sandbox_mech_name((enum sandbox_mech)m);
			if (strlen(name) == n && strncmp(name, s, n) == 0)
				break;
		}
		if (m == SANDBOX_M_COUNT) {
			coil_error("COIL_TEST_SKIP: unknown mechanism "
			    "'%.*s'", (int)n, s);
			exit(2);
		}
		c->skip |= 1U << m;
	}
	s = getenv("COIL_TEST_NO_GATE");
	if (s != NULL && strcmp(s, "1") == 0)
		c->ckpt_gate = false;
}
#endif

/* ---- the configuration's dirs ------------------------------------------ */

static int
bind_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sbx_bind *)a)->path,
	    ((const struct sbx_bind *)b)->path);
}

/* Add path (resolved; `opt` names it in the error) to the binds, writable
 * if rw; one already there is made writable if rw.  The binds stay sorted
 * by path. */
int
sbx_paths_add(struct sbx_paths *p, const char *opt, const char *path,
    bool rw, char *err, size_t len)
{
	char real[PATH_MAX];
	size_t i;

	/* fs(user): a dir the user named, walked already by
	 * main_named_dirs, before any cell runs */
	if (realpath(path, real) == NULL) {
		sbx_seterr(err, len, errno, "check the path and start coil "
		    "again", "%s '%s'", opt, path);
		return -1;
	}
	for (i = 0; i < p->nb; i++) {
		if (strcmp(p->b[i].path, real) == 0) {
			p->b[i].rw |= rw;
			return 0;
		}
	}
	p->b = sbx_realloc(p->b, (p->nb + 1) * sizeof *p->b);
	p->b[p->nb].path = sbx_strdup(real);
	p->b[p->nb].rw = rw;
	p->b[p->nb].fd = -1;
	p->b[p->nb].src = -1;
	p->nb++;
	qsort(p->b, p->nb, sizeof *p->b, bind_cmp);
	return 0;
}

/*
 * The venv (sandbox.h), unless a bind holds it already (the work dir, an
 * --allow-* dir: their rules reach it): a read-only bind of the dir the
 * supervisor held since the start, at the path it had then.  Not
 * resolved again: where cells may write (a .venv in the work dir) that
 * path may be theirs by now, and then a bind holds it anyway.
 */
static void
venv_bind(const struct sandbox_conf *c, struct sbx_paths *p)
{
	size_t i, n;

	if (c->venv == NULL || c->venv_fd < 0)
		return;
	for (i = 0; i < p->nb; i++) {
		n = strlen(p->b[i].path);
		if (strncmp(c->venv, p->b[i].path, n) == 0 &&
		    (c->venv[n] == '\0' || c->venv[n] == '/' ||
		    strcmp(p->b[i].path, "/") == 0))
			return;
	}
	p->b = sbx_realloc(p->b, (p->nb + 1) * sizeof *p->b);
	p->b[p->nb] = (struct sbx_bind){ .path = sbx_strdup(c->venv),
	    .rw = false, .fd = -1, .src = c->venv_fd };
	p->nb++;
	qsort(p->b, p->nb, sizeof *p->b, bind_cmp);
}

/* The dirs, once: init resolves them and the worker inherits them; a
 * worker whose init did not run sandbox_enter resolves them itself. */
static int
prepare_paths(const struct sandbox_conf *c, struct sbx_paths *p, char *err,
    size_t len)
{
	size_t i;

	if (p->ready)
		return 0;
	if (c->workdir != NULL) {
		/* fs(user): the work dir the user named, before any cell
		 * runs */
		if (realpath(c->workdir, p->workdir) == NULL) {
			sbx_seterr(err, len, errno, "pass an existing "
			    "directory", "--workdir '%s'", c->workdir);
			return -1;
		}
	} else if (getcwd(p->workdir, sizeof p->workdir) == NULL) {
		sbx_seterr(err, len, errno, NULL, "getcwd");
		return -1;
	}
	if (strcmp(p->workdir, "/") == 0) {
		sbx_seterr(err, len, 0, "start coil with --workdir DIR or "
		    "from another directory", "the work directory is '/': the "
		    "sandbox would protect nothing");
		return -1;
	}
	p->tmpdir[0] = '\0';
	for (i = 0; i < c->n_python_paths; i++)
		if (sbx_paths_add(p, "python path", c->python_paths[i], false,
		    err, len) < 0)
			return -1;
	for (i = 0; i < c->n_allow_read; i++)
		if (sbx_paths_add(p, "--allow-read", c->allow_read[i], false,
		    err, len) < 0)
			return -1;
	if (sbx_paths_add(p, "--workdir", p->workdir, true, err, len) < 0)
		return -1;
	for (i = 0; i < c->n_allow_write; i++)
		if (sbx_paths_add(p, "--allow-write", c->allow_write[i], true,
		    err, len) < 0)
			return -1;
	venv_bind(c, p);
	p->ready = true;
	return 0;
}

/* ---- the steps, in order ------------------------------------------------ */

static int
en_chdir(struct sbx *sb)
{
	const char *wd = sb->st->paths.workdir;

	/* fs(user): the work dir, in init, before any cell runs */
	if (chdir(wd) == 0)
		return 0;
	sbx_seterr(sb->err, sb->len, errno, NULL, "chdir '%s'", wd);
	return -1;
}

struct step {
	const char *name;
	sbx_step_fn *fn;
};

/* init's steps, in order; see sandbox.h. */
static const struct step enter_steps[] = {
	{ "cgroup", cg_enter },
	{ "user namespace, not root", ns_userns_self },
	{ "network and IPC namespaces", ns_net_ipc },
	{ "mount namespace and /proc", root_mountns },
	{ "user namespace, root", ns_userns_make },
	{ "the worker's root", root_build },
	{ "the private temp dir", root_tmp },
	{ "the worker's uid", ns_userns_enter },
	{ "the work directory", en_chdir },
};

/* The worker's steps, in order: no_new_privs before Landlock and seccomp,
 * seccomp last. */
static const struct step apply_steps[] = {
	{ "environment", lim_env_scrub },
	{ "rlimits", lim_rlimits },
	{ "capabilities", lim_caps },
	{ "no_new_privs", lim_nnp },
	{ "landlock", ll_apply },
	{ "seccomp", sc_apply },
};

/* ---- sandbox_spawn (supervisor), sandbox_enter (init) ------------------ */

/* An init was spawned since the last sandbox_cleanup: what it made
 * (cgroups, a temp dir) may be there. */
static bool cleanup_owed;

pid_t
sandbox_spawn(const struct sandbox_conf *c, struct sandbox_report *r)
{
	cleanup_owed = true;
	return ns_spawn(c, r, &state);
}

int
sandbox_enter(const struct sandbox_conf *c, struct sandbox_report *r,
    char *err, size_t len)
{
	struct sbx sb = { .c = c, .r = r, .st = &state, .err = err,
	    .len = len, .userns = -1 };
	size_t i;
	int rc = 0;

	if (c->profile == SANDBOX_NONE)
		return 0;
	if (prepare_paths(c, &state.paths, err, len) < 0)
		return -1;
	sb.session = c->session ? c->session : getppid();
	sb.root = geteuid() == 0;
	sb.pid1 = getpid() == 1;
	if (!sb.pid1 && r->m[SANDBOX_M_PIDNS].state == SANDBOX_UNTRIED)
		sbx_mark(r, SANDBOX_M_PIDNS, SANDBOX_MISSING, 0, "init was not "
		    "created by sandbox_spawn: processes a cell starts may "
		    "outlive the session");
	if (!sb.root)
		r->worker_uid = (long)geteuid();
	/* A session of its own: no controlling terminal to inject into
	 * or to deliver a terminal's signals. */
	setsid();
	for (i = 0; rc == 0 && i < sizeof enter_steps / sizeof *enter_steps;
	    i++)
		rc = enter_steps[i].fn(&sb);
	if (sb.userns >= 0)
		close(sb.userns);
	if (state.parent_pidfd >= 0)
		close(state.parent_pidfd);
	state.parent_pidfd = -1;
	/* init's memory (and environment) is not for the worker's eyes;
	 * set last, as it makes /proc/self/uid_map root's */
	if (rc == 0 && prctl(PR_SET_DUMPABLE, 0) < 0) {
		sbx_seterr(err, len, errno, NULL, "prctl(PR_SET_DUMPABLE, 0)");
		rc = -1;
	}
	return rc;
}

int
sandbox_held_fd(void)
{
	return state.tmp_lock_fd;
}

/* ---- the worker ------------------------------------------------------- */

char **
sandbox_env(const struct sandbox_conf *c, char *const *env)
{
	return lim_env(c, env, state.paths.tmpdir);
}

int
sandbox_apply(const struct sandbox_conf *c, struct sandbox_report *r,
    char *err, size_t len)
{
	struct sbx sb = { .c = c, .r = r, .st = &state, .err = err,
	    .len = len, .userns = -1 };
	size_t i;

	if (c->profile == SANDBOX_NONE)
		return 0;
	/* When init ran sandbox_enter the paths are ready (inherited); a
	 * worker without it computes them here. */
	if (prepare_paths(c, &state.paths, err, len) < 0)
		return -1;
	/* init's hold on the temp dir is init's: a cell must not be able
	 * to let go of it */
	if (state.tmp_lock_fd >= 0) {
		close(state.tmp_lock_fd);
		state.tmp_lock_fd = -1;
	}
	/* init made itself non-dumpable; the worker's /proc/self must be
	 * its own (subprocess reads /proc/self/fd).  Only the session's
	 * processes share its uid, and ptrace is denied below. */
	if (prctl(PR_SET_DUMPABLE, 1) < 0) {
		sbx_seterr(err, len, errno, NULL, "prctl(PR_SET_DUMPABLE, 1)");
		return -1;
	}
	for (i = 0; i < sizeof apply_steps / sizeof *apply_steps; i++)
		if (apply_steps[i].fn(&sb) < 0)
			return -1;
	if (!c->require || sandbox_report_complete(r))
		return 0;
	rep_unmet(r, err, len);
	return -1;
}

int
sandbox_take_notify_fd(void)
{
	int fd = state.notify_fd;

	state.notify_fd = -1;
	return fd;
}

json_t *
sandbox_audit_conf(const struct sandbox_conf *c, const struct sandbox_report *r)
{
	return rep_audit_conf(c, r, &state);
}

/* ---- cleanup (supervisor) ---------------------------------------------- */

static const char *
tmp_base_of(const struct sandbox_conf *c)
{
	return c->tmp_base != NULL ? c->tmp_base : "/tmp";
}

void
sandbox_cleanup(const struct sandbox_conf *c)
{
	pid_t session = c->session != 0 ? c->session : getpid();

	cg_cleanup(session);
	root_tmp_sweep(tmp_base_of(c), session);
	cleanup_owed = false;
}

bool
sandbox_cleanup_owed(void)
{
	return cleanup_owed;
}

void
sandbox_sweep(const struct sandbox_conf *c)
{
	pid_t session = c->session != 0 ? c->session : getpid();

	cg_sweep_stale(session);
	root_tmp_sweep(tmp_base_of(c), 0);
}
