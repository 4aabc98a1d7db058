/*
 * sandbox.c: the --sandbox profiles, enforced by the kernel.  See sandbox.h
 * for the contract and which process calls what.
 *
 * The shape follows nsjail's contain.cc and bubblewrap: an ordered list of
 * steps, each a function that either puts one mechanism in force or says
 * exactly why not (errno and a hint), recorded in the report.  Missing
 * mechanisms degrade openly; unexpected failures fail closed.
 *
 * Why each mechanism is there (the guarantees are the rule table at the
 * end of this file):
 *
 *   cgroup           memory (swap off) and process count for the whole
 *                    session, whatever uid it runs as; root ignores
 *                    RLIMIT_NPROC, so the cgroup is what stops a fork bomb
 *   user namespace   root is not special: the worker is uid 0 inside and an
 *                    unused uid outside, so DAC alone stops it reading
 *                    /etc/shadow or chmod-ing a root-owned file; the
 *                    writable dirs are id-mapped mounts, so what it writes
 *                    is owned on disk by the directory's owner
 *   mount namespace  a new root holding only the system dirs (read-only),
 *                    the work dir, the private tmp and --allow-* dirs: the
 *                    rest of the machine, its unix sockets included, is not
 *                    there to be reached
 *   PID namespace    nothing a cell starts outlives init (PID 1), and the
 *                    worker cannot name a process outside the session
 *   net namespace    no interface but a loopback that is down
 *   IPC namespace    no System V or POSIX IPC with the host
 *   rlimits          DATA (not AS, which starves OpenBLAS's thread stacks),
 *                    FSIZE, NOFILE, CORE 0, NPROC inside the user namespace
 *   capabilities     none, bounding set empty, securebits locked
 *   Landlock         the file access allow-list, TCP bind/connect, and the
 *                    signal and abstract-socket scopes; works without any
 *                    namespace, so it is the floor everywhere
 *   seccomp          last: the dangerous kernel interfaces, socket
 *                    families, clone3 -> ENOSYS so that glibc falls back to
 *                    clone(2), whose flags a filter can read; strict adds
 *                    no exec, no fork, no sockets but socketpair
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sandbox.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>
#include <seccomp.h>

#include "exit.h"
#include "landlock-compat.h"

extern char **environ;

#define GiB (1024ULL * 1024 * 1024)

/* AddressSanitizer maps terabytes of shadow memory as it goes: under
 * RLIMIT_DATA it fails at once.  Such a build leaves the limit to the
 * memory cgroup, and says so. */
#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN 1
#endif
#endif

/* The worker's uid outside its user namespace when coil runs as root: an
 * unused, unprivileged uid per session.  Below 2^31 and far above the
 * ranges /etc/subuid hands out. */
#define WORKER_UID_BASE 2000000000L
#define WORKER_UID_SPAN 100000000L

/* ---- small helpers ---------------------------------------------------- */

/* Only out of memory ends a process here; everything else fails closed
 * through the caller.  Never the supervisor's teardown: the sandbox runs
 * in init and the worker. */
static void
sbx_fatal(const char *what)
{
	fprintf(stderr, "coil: sandbox: %s: %s\n", what, strerror(errno));
	_exit(EXIT_NOMEM);
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		sbx_fatal("out of memory");
	return p;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		sbx_fatal("out of memory");
	return p;
}

static char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		sbx_fatal("out of memory");
	va_end(ap);
	return s;
}

/* "what: strerror(e); hint" into a caller's buffer. */
static void
seterr(char *err, size_t len, int e, const char *hint, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (err == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (e != 0 && n < len)
		n += snprintf(err + n, len - n, ": %s", strerror(e));
	if (hint != NULL && n < len)
		snprintf(err + n, len - n, "; %s", hint);
}

static void
mark(struct sandbox_report *r, enum sandbox_mech m, enum sandbox_state st,
    int e, const char *fmt, ...)
{
	va_list ap;

	r->m[m].state = st;
	r->m[m].err = e;
	va_start(ap, fmt);
	vsnprintf(r->m[m].detail, sizeof r->m[m].detail, fmt, ap);
	va_end(ap);
}

static bool
is_on(const struct sandbox_report *r, enum sandbox_mech m)
{
	return r->m[m].state == SANDBOX_ON;
}

/* conf->skip asks not to try a mechanism (tests degrade on purpose). */
static bool
skipped(const struct sandbox_conf *c, struct sandbox_report *r,
    enum sandbox_mech m)
{
	if (!(c->skip & (1U << m)))
		return false;
	mark(r, m, SANDBOX_MISSING, 0, "not tried: skipped on request");
	return true;
}

static int
write_file(const char *path, const char *s)
{
	int fd, e;
	ssize_t n;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	if (n != (ssize_t)strlen(s)) {
		errno = n < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

/* Reads up to len-1 bytes; NUL-terminates.  Returns bytes read or -1. */
static ssize_t
read_file(const char *path, char *buf, size_t len)
{
	int fd;
	ssize_t n, got = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

static void
fmt_size(char *buf, size_t len, unsigned long long b)
{
	static const char u[] = "KMGTPE";
	int i = -1;

	if (b < 1024 || b % 1024 != 0) {
		snprintf(buf, len, "%llu", b);
		return;
	}
	while (b >= 1024 && b % 1024 == 0 && i < 5) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, "%llu%c", b, u[i]);
}

/* mkdir -p of an absolute path; existing dirs are fine. */
static int
mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(buf, mode) < 0 && errno != EEXIST)
				return -1;
			*p = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}

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

/*
 * The dirs of the configuration, made absolute and free of symlinks, so
 * that a bind mount, a Landlock rule and the audit hook all speak of the
 * same path.  Filled by sandbox_enter (init) or sandbox_apply (worker);
 * the worker inherits init's copy.
 */
struct bind {
	char *path;
	bool rw;
	int fd;			/* detached clone for the new root, or -1 */
};

static struct {
	bool ready;
	char workdir[PATH_MAX];
	char tmpdir[PATH_MAX];	/* "" until en_tmp chose it */
	struct bind *b;		/* allow_read, python_paths, workdir,
				   allow_write, and en_tmp's host dir if it
				   made one; sorted by path */
	size_t nb;
} P;

static int
bind_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bind *)a)->path,
	    ((const struct bind *)b)->path);
}

static int
add_bind(const char *opt, const char *path, bool rw, char *err, size_t len)
{
	char real[PATH_MAX];
	size_t i;

	if (realpath(path, real) == NULL) {
		seterr(err, len, errno, "check the path and start coil again",
		    "%s '%s'", opt, path);
		return -1;
	}
	for (i = 0; i < P.nb; i++) {
		if (strcmp(P.b[i].path, real) == 0) {
			P.b[i].rw |= rw;
			return 0;
		}
	}
	P.b = xrealloc(P.b, (P.nb + 1) * sizeof *P.b);
	P.b[P.nb].path = xstrdup(real);
	P.b[P.nb].rw = rw;
	P.b[P.nb].fd = -1;
	P.nb++;
	return 0;
}

static int
prepare_paths(const struct sandbox_conf *c, char *err, size_t len)
{
	size_t i;

	if (P.ready)
		return 0;
	if (c->workdir != NULL) {
		if (realpath(c->workdir, P.workdir) == NULL) {
			seterr(err, len, errno, "pass an existing directory",
			    "--workdir '%s'", c->workdir);
			return -1;
		}
	} else if (getcwd(P.workdir, sizeof P.workdir) == NULL) {
		seterr(err, len, errno, NULL, "getcwd");
		return -1;
	}
	if (strcmp(P.workdir, "/") == 0) {
		seterr(err, len, 0, "start coil with --workdir DIR or from "
		    "another directory", "the work directory is '/': the "
		    "sandbox would protect nothing");
		return -1;
	}
	P.tmpdir[0] = '\0';
	for (i = 0; i < c->n_python_paths; i++)
		if (add_bind("python path", c->python_paths[i], false, err,
		    len) < 0)
			return -1;
	for (i = 0; i < c->n_allow_read; i++)
		if (add_bind("--allow-read", c->allow_read[i], false, err,
		    len) < 0)
			return -1;
	if (add_bind("--workdir", P.workdir, true, err, len) < 0)
		return -1;
	for (i = 0; i < c->n_allow_write; i++)
		if (add_bind("--allow-write", c->allow_write[i], true, err,
		    len) < 0)
			return -1;
	qsort(P.b, P.nb, sizeof *P.b, bind_cmp);
	P.ready = true;
	return 0;
}

/* ---- report ----------------------------------------------------------- */

static const char *const mech_names[SANDBOX_M_COUNT] = {
	[SANDBOX_M_CGROUP_PIDS] = "cgroup pids",
	[SANDBOX_M_CGROUP_MEMORY] = "cgroup memory",
	[SANDBOX_M_USERNS] = "user namespace",
	[SANDBOX_M_MOUNTNS] = "mount namespace",
	[SANDBOX_M_PIDNS] = "pid namespace",
	[SANDBOX_M_NETNS] = "network namespace",
	[SANDBOX_M_IPCNS] = "ipc namespace",
	[SANDBOX_M_ENV] = "environment",
	[SANDBOX_M_RLIMITS] = "rlimits",
	[SANDBOX_M_CAPS] = "capabilities",
	[SANDBOX_M_NNP] = "no_new_privs",
	[SANDBOX_M_LANDLOCK_FS] = "landlock files",
	[SANDBOX_M_LANDLOCK_NET] = "landlock tcp",
	[SANDBOX_M_LANDLOCK_SCOPE] = "landlock scopes",
	[SANDBOX_M_SECCOMP] = "seccomp",
	[SANDBOX_M_SECCOMP_STRICT] = "seccomp strict",
	[SANDBOX_M_CKPT_GATE] = "checkpoint gate",
};

static const char *const state_names[] = {
	[SANDBOX_UNTRIED] = "untried",
	[SANDBOX_ON] = "on",
	[SANDBOX_OFF] = "off",
	[SANDBOX_MISSING] = "missing",
	[SANDBOX_FAILED] = "failed",
};

const char *
sandbox_mech_name(enum sandbox_mech m)
{
	return (unsigned)m < SANDBOX_M_COUNT ? mech_names[m] : "?";
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
	const char *s = getenv("COIL_TEST_SKIP"), *e;
	size_t n;
	unsigned m;

	for (; s != NULL && *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = strchr(s, ',');
		if (e == NULL)
			e = s + strlen(s);
		n = (size_t)(e - s);
		for (m = 0; m < SANDBOX_M_COUNT; m++)
			if (strlen(mech_names[m]) == n &&
			    strncmp(mech_names[m], s, n) == 0)
				break;
		if (m == SANDBOX_M_COUNT) {
			fprintf(stderr, "coil: COIL_TEST_SKIP: unknown "
			    "mechanism '%.*s'\n", (int)n, s);
			exit(2);
		}
		c->skip |= 1U << m;
	}
	s = getenv("COIL_TEST_NO_GATE");
	if (s != NULL && strcmp(s, "1") == 0)
		c->ckpt_gate = false;
}
#endif

void
sandbox_report_init(struct sandbox_report *r, enum sandbox_profile p)
{
	struct utsname u;
	int i;

	memset(r, 0, sizeof *r);
	r->profile = p;
	r->worker_uid = (long)geteuid();
	if (uname(&u) == 0)
		snprintf(r->kernel, sizeof r->kernel, "%s", u.release);
	if (p == SANDBOX_NONE)
		for (i = 0; i < SANDBOX_M_COUNT; i++)
			mark(r, i, SANDBOX_OFF, 0, "profile none");
}

/* ---- step: cgroup (init) ---------------------------------------------- */

/*
 * Where a controller lives: v1 hierarchies are mounted one per controller
 * (here /sys/fs/cgroup/pids and /sys/fs/cgroup/memory) next to an empty v2
 * hierarchy; pure v2 systems have every controller in one tree.  A
 * controller is bound to one hierarchy at a time, so whichever has it is
 * the one to use.  The session's cgroup is a child of the one init is in
 * (so outer limits still apply), named coil.<session>.
 */
struct cg {
	char dir[PATH_MAX];	/* the session cgroup */
	char base[PATH_MAX];	/* its parent: init's cgroup at start */
	int version;		/* 1 or 2; 0: not found */
};

/* The mount point of the v1 hierarchy holding ctrl (ctrl NULL: the v2
 * hierarchy), and the root of that mount within the hierarchy. */
static bool
cg_mount(const char *ctrl, char *mnt, size_t mlen, char *root, size_t rlen)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		char *fields[12], *dash, *save = NULL, *tok, *s;
		int n = 0;

		dash = strstr(line, " - ");
		if (dash == NULL)
			continue;
		*dash = '\0';
		for (s = line; n < 12 && (tok = strtok_r(s, " ", &save));
		    s = NULL)
			fields[n++] = tok;
		if (n < 5)
			continue;
		{
			char *fstype, *src, *opts, *save2 = NULL;

			fstype = strtok_r(dash + 3, " ", &save2);
			src = strtok_r(NULL, " ", &save2);
			opts = strtok_r(NULL, " \n", &save2);
			(void)src;
			if (fstype == NULL || opts == NULL)
				continue;
			if (ctrl == NULL) {
				found = strcmp(fstype, "cgroup2") == 0;
			} else if (strcmp(fstype, "cgroup") == 0) {
				char *o, *save3 = NULL;

				for (o = strtok_r(opts, ",", &save3); o;
				    o = strtok_r(NULL, ",", &save3))
					if (strcmp(o, ctrl) == 0)
						found = true;
			}
		}
		if (found) {
			snprintf(mnt, mlen, "%s", fields[4]);
			snprintf(root, rlen, "%s", fields[3]);
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* This process's cgroup path in the hierarchy holding ctrl (NULL: v2). */
static bool
cg_self(const char *ctrl, char *path, size_t len)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	f = fopen("/proc/self/cgroup", "re");
	if (f == NULL)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':'), *c2;

		if (c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
			continue;
		*c2 = '\0';
		line[strcspn(line, "\n")] = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (ctrl == NULL) {
			found = strcmp(line, "0") == 0 && c1[1] == '\0';
		} else {
			char *o, *save = NULL;

			for (o = strtok_r(c1 + 1, ",", &save); o;
			    o = strtok_r(NULL, ",", &save))
				if (strcmp(o, ctrl) == 0)
					found = true;
		}
		if (found)
			snprintf(path, len, "%s", c2 + 1);
	}
	free(line);
	fclose(f);
	return found;
}

/* Fill cg->base/dir for the hierarchy holding ctrl (NULL: v2).  For v2,
 * also require that the controller can be had there. */
static bool
cg_locate(const char *ctrl, pid_t session, struct cg *cg)
{
	char mnt[PATH_MAX], root[PATH_MAX], self[PATH_MAX];
	const char *rel;
	size_t rl;

	cg->version = 0;
	if (!cg_mount(ctrl, mnt, sizeof mnt, root, sizeof root) ||
	    !cg_self(ctrl, self, sizeof self))
		return false;
	/* In a cgroup namespace or a container the mount may show a
	 * subtree: strip its root from our path. */
	rel = self;
	rl = strlen(root);
	if (strcmp(root, "/") != 0 && strncmp(self, root, rl) == 0)
		rel = self + rl;
	if (snprintf(cg->base, sizeof cg->base, "%s%s", mnt,
	    strcmp(rel, "/") == 0 ? "" : rel) >= (int)sizeof cg->base ||
	    snprintf(cg->dir, sizeof cg->dir, "%s/coil.%ld", cg->base,
	    (long)session) >= (int)sizeof cg->dir)
		return false;
	cg->version = ctrl == NULL ? 2 : 1;
	return true;
}

/*
 * The supervisor a session's name (coil.<N>, coil-<N>-XXXXXX) stands for:
 * N itself, or for the probe's sessions, numbered above any pid,
 * N - WORKER_UID_SPAN.  Is it gone?  Asked in the supervisor's own PID
 * namespace, where those pids were taken.  A pid reused since reads as
 * alive: the stale thing waits for a later sweep, never the reverse.
 */
static bool
owner_dead(long n)
{
	if (n >= WORKER_UID_SPAN)
		n -= WORKER_UID_SPAN;
	if (n <= 0 || n >= WORKER_UID_SPAN)
		return false;
	return kill((pid_t)n, 0) < 0 && errno == ESRCH;
}

/* Remove coil.N cgroups whose coil died without cleaning up.  Only an
 * empty cgroup can be removed, so rmdir is also the test that nothing of
 * that session still runs. */
static void
cg_sweep(const char *base, pid_t session)
{
	DIR *d;
	struct dirent *e;

	d = opendir(base);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char *end, path[PATH_MAX];
		long n;

		if (strncmp(e->d_name, "coil.", 5) != 0)
			continue;
		n = strtol(e->d_name + 5, &end, 10);
		if (*end != '\0' || n <= 0 || n == (long)session ||
		    !owner_dead(n))
			continue;
		if (snprintf(path, sizeof path, "%s/%s", base, e->d_name) <
		    (int)sizeof path)
			rmdir(path);
	}
	closedir(d);
}

static int
cg_write(const struct cg *cg, const char *file, const char *val)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof path, "%s/%s", cg->dir, file);
	return write_file(path, val);
}

static bool
cg_has(const struct cg *cg, const char *file)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof path, "%s/%s", cg->dir, file);
	return access(path, F_OK) == 0;
}

static int
cg_join(const struct cg *cg)
{
	char pid[32];

	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	return cg_write(cg, "cgroup.procs", pid);
}

/* v2: is ctrl enabled for the session cgroup?  Try to enable it in the
 * parent if not (works at the root and in delegated subtrees). */
static bool
cg2_controller(struct cg *cg, const char *ctrl)
{
	char path[PATH_MAX + 64], buf[512], want[32];
	char *p;

	snprintf(path, sizeof path, "%s/cgroup.controllers", cg->dir);
	if (read_file(path, buf, sizeof buf) < 0)
		return false;
	for (p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		if (strcmp(p, ctrl) == 0)
			return true;
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg->base);
	snprintf(want, sizeof want, "+%s", ctrl);
	if (write_file(path, want) < 0)
		return false;
	snprintf(path, sizeof path, "%s/cgroup.controllers", cg->dir);
	if (read_file(path, buf, sizeof buf) < 0)
		return false;
	for (p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		if (strcmp(p, ctrl) == 0)
			return true;
	return false;
}

/* Does the v2 hierarchy offer pids or memory where we are? */
static bool
cg2_has_controllers(const struct cg *cg)
{
	char path[PATH_MAX + 64], buf[512];

	snprintf(path, sizeof path, "%s/cgroup.controllers", cg->base);
	if (read_file(path, buf, sizeof buf) < 0)
		return false;
	return strstr(buf, "pids") != NULL || strstr(buf, "memory") != NULL;
}

static const char cg_hint[] =
    "run coil as root, or in a cgroup delegated to you "
    "(systemd-run --user --scope -p Delegate=yes coil ...)";

/* Create, limit and join the session cgroup for one controller. */
static void
cg_one(const struct sandbox_conf *c, struct sandbox_report *r,
    enum sandbox_mech m, const char *ctrl, pid_t session, struct cg *v2)
{
	struct cg cg;
	char val[64], sz[32];
	bool v2ok = false;

	if (skipped(c, r, m))
		return;
	/* Prefer the hierarchy that actually has the controller. */
	if (v2->version == 2 && cg2_controller(v2, ctrl)) {
		cg = *v2;
		v2ok = true;
	} else if (!cg_locate(ctrl, session, &cg)) {
		mark(r, m, SANDBOX_MISSING, 0, "no %s controller mounted "
		    "(neither cgroup v1 nor v2)", ctrl);
		return;
	}
	if (!v2ok) {
		if (mkdir(cg.dir, 0755) < 0 && errno != EEXIST) {
			mark(r, m, SANDBOX_MISSING, errno, "cannot create "
			    "'%s': %s; %s", cg.dir, strerror(errno), cg_hint);
			return;
		}
	}
	if (strcmp(ctrl, "pids") == 0) {
		snprintf(val, sizeof val, "%ld", c->max_procs);
		if (cg_write(&cg, "pids.max", val) < 0)
			goto fail;
		if (cg_join(&cg) < 0)
			goto fail;
		mark(r, m, SANDBOX_ON, 0, "pids.max=%ld in %s (v%d)",
		    c->max_procs, cg.dir, cg.version);
		return;
	}
	/* memory, swap off */
	snprintf(val, sizeof val, "%llu", c->memory);
	fmt_size(sz, sizeof sz, c->memory);
	if (cg.version == 2) {
		if (cg_write(&cg, "memory.max", val) < 0)
			goto fail;
		if (cg_has(&cg, "memory.swap.max") &&
		    cg_write(&cg, "memory.swap.max", "0") < 0)
			goto fail;
	} else {
		if (cg_write(&cg, "memory.limit_in_bytes", val) < 0)
			goto fail;
		/* memsw = mem means no swap; without swap accounting,
		 * swappiness 0 is the best left. */
		if (cg_has(&cg, "memory.memsw.limit_in_bytes")) {
			if (cg_write(&cg, "memory.memsw.limit_in_bytes",
			    val) < 0)
				goto fail;
		} else {
			cg_write(&cg, "memory.swappiness", "0");
		}
	}
	if (cg_join(&cg) < 0)
		goto fail;
	mark(r, m, SANDBOX_ON, 0, "%s, swap off, in %s (v%d)", sz, cg.dir,
	    cg.version);
	return;
fail:
	mark(r, m, SANDBOX_MISSING, errno, "%s: %s; %s", cg.dir,
	    strerror(errno), cg_hint);
}

static int
step_cgroup(const struct sandbox_conf *c, struct sandbox_report *r,
    pid_t session, char *err, size_t len)
{
	struct cg v2;

	(void)err;
	(void)len;
	/* The v2 hierarchy, even without controllers, gives cgroup.kill:
	 * without a PID namespace, join it so sandbox_cleanup can end the
	 * session at once.  (With controllers there, cg_one uses it.) */
	if (!cg_locate(NULL, session, &v2) || (getpid() == 1 &&
	    !cg2_has_controllers(&v2)) || (mkdir(v2.dir, 0755) < 0 &&
	    errno != EEXIST) || cg_join(&v2) < 0)
		v2.version = 0;
	cg_one(c, r, SANDBOX_M_CGROUP_PIDS, "pids", session, &v2);
	cg_one(c, r, SANDBOX_M_CGROUP_MEMORY, "memory", session, &v2);
	return 0;
}

/* ---- user namespaces --------------------------------------------------- */

/* The helper of userns_make: born in the new namespace (clone with
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
	if (read_file(path, buf, sizeof buf) > 0 &&
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
static int
userns_make(long inside, long outside, long ginside, long goutside)
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
	if (write_file(path, map) < 0) {
		e = errno;
		goto reap;
	}
	snprintf(path, sizeof path, "/proc/%ld/setgroups", (long)ppid);
	if (write_file(path, "deny") < 0) {
		e = errno;
		goto reap;
	}
	snprintf(map, sizeof map, "%ld %ld 1\n", ginside, goutside);
	snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)ppid);
	if (write_file(path, map) < 0) {
		e = errno;
		goto reap;
	}
	snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)ppid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		e = errno;
reap:
	close(hold[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
out:
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
	if (write_file("/proc/self/uid_map", map) < 0 ||
	    write_file("/proc/self/setgroups", "deny") < 0)
		return -1;
	snprintf(map, sizeof map, "%ld %ld 1\n", (long)gid, (long)gid);
	return write_file("/proc/self/gid_map", map);
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

/* ---- sandbox_spawn (supervisor) ---------------------------------------- */

/*
 * A pidfd on the supervisor, open in init: init re-arms its parent-death
 * signal after each change of credentials (the kernel clears it then) and
 * this tells whether the supervisor died in between.  getppid() cannot:
 * it is 0 in PID 1 of a new namespace.
 */
static int parent_pidfd = -1;

static int
check_parent(void)
{
	struct pollfd pfd = { parent_pidfd, POLLIN, 0 };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -1;
	/* readable: the supervisor has exited */
	if (parent_pidfd >= 0 && poll(&pfd, 1, 0) > 0)
		_exit(1);
	return 0;
}

/*
 * fork() for init.  The new PID namespace must be asked for when the
 * process is created, for init to be its PID 1 rather than the parent of
 * it: so this is a raw clone(2), as nsjail's cloneProc and systemd's
 * raw_clone do.  It skips glibc's fork handlers, hence "single-threaded
 * only", and the child's cached tid is its parent's (glibc >= 2.25 caches
 * no pid; raise() asks the kernel).  Not root: the child also gets a user
 * namespace mapping its uid to itself, without which it could make none
 * of the others.
 */
pid_t
sandbox_spawn(const struct sandbox_conf *c, struct sandbox_report *r)
{
	unsigned long flags = CLONE_NEWPID;
	bool root = geteuid() == 0;
	uid_t uid = getuid();
	gid_t gid = getgid();
	int pfd, e;
	pid_t pid;

	if (c->profile == SANDBOX_NONE)
		return fork();
	if (skipped(c, r, SANDBOX_M_PIDNS))
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
		mark(r, SANDBOX_M_PIDNS, SANDBOX_MISSING, e, "%s%s: processes "
		    "a cell starts may outlive the session", strerror(e),
		    root ? "" : " (with a user namespace)");
		if (!root)
			mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, e, "%s; %s",
			    strerror(e), userns_hint(e));
		return fork();
	}
	if (pid > 0) {
		if (pfd >= 0)
			close(pfd);
		return pid;
	}
	parent_pidfd = pfd;
	if (check_parent() < 0) {
		fprintf(stderr, "coil: init: prctl(PR_SET_PDEATHSIG): %s\n",
		    strerror(errno));
		_exit(EXIT_SETUP);
	}
	if (!root) {
		if (userns_map_self(uid, gid) < 0) {
			e = errno;
			mark(r, SANDBOX_M_USERNS, SANDBOX_FAILED, e, "writing "
			    "the maps: %s", strerror(e));
		} else {
			mark(r, SANDBOX_M_USERNS, SANDBOX_ON, 0, "uid %ld "
			    "mapped to itself", (long)uid);
		}
	}
	mark(r, SANDBOX_M_PIDNS, SANDBOX_ON, 0, "init is PID 1: everything "
	    "the session starts dies with it");
	return 0;
}

/* ---- step: mount namespace and the new root (init) -------------------- */

/* sandbox_enter's state, passed from step to step. */
struct enter {
	const struct sandbox_conf *c;
	struct sandbox_report *r;
	char *err;
	size_t len;
	pid_t session;
	int userns;		/* root: the worker's user namespace, not
				   entered yet */
	long outside;		/* the worker's uid outside */
	bool root;		/* coil runs as uid 0 */
	bool pid1;		/* init is PID 1 of its own PID namespace */
};

/* System dirs bound read-only into the new root, when they are real dirs;
 * when they are symlinks (merged /usr) the link is copied instead. */
static const char *const root_dirs[] = {
	"usr", "etc", "opt", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
};

/* Device nodes bound into the new /dev. */
static const char *const dev_nodes[] = {
	"null", "zero", "full", "random", "urandom",
};

#define NEWROOT "/tmp"		/* mount point of the new root while it is
				   built; any dir works, /tmp always exists */

/* Bind src on dst read-only, nosuid, and nodev unless it is a device. */
static int
bind_flags_ro(const char *src, const char *dst, bool rec, bool dev)
{
	struct mount_attr a = { 0 };

	if (mount(src, dst, NULL, MS_BIND | (rec ? MS_REC : 0), NULL) < 0)
		return -1;
	a.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
	    (dev ? 0 : MOUNT_ATTR_NODEV);
	if (mount_setattr(AT_FDCWD, dst, rec ? AT_RECURSIVE : 0, &a,
	    sizeof a) == 0)
		return 0;
	/* mount_setattr is 5.12+; a remount covers the top mount only */
	return mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | (dev ? 0 : MS_NODEV), NULL);
}

static int
bind_ro(const char *src, const char *dst, bool rec)
{
	return bind_flags_ro(src, dst, rec, false);
}

/* The kernel's knobs under a /proc, read-only: needed only when the
 * worker stays uid 0, which owns them. */
static int
proc_ro(const char *proc)
{
	static const char *const ro[] = { "sys", "sysrq-trigger", "irq",
	    "bus" };
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof ro / sizeof *ro; i++) {
		snprintf(path, sizeof path, "%s/%s", proc, ro[i]);
		if (access(path, F_OK) == 0 && bind_ro(path, path, true) < 0)
			return -1;
	}
	return 0;
}

/* nosuid, nodev, and read-only unless the bind is writable; recursive. */
static int
bind_flags(const struct bind *b)
{
	struct mount_attr a = { 0 };

	a.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	    (b->rw ? 0 : MOUNT_ATTR_RDONLY);
	return mount_setattr(b->fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a,
	    sizeof a);
}

/*
 * Root: id-map the detached clone of a bind, so that its owner on disk
 * appears as the worker's uid, and what the worker creates there is owned
 * on disk by that owner.  A dir owned by root uses the worker's own
 * namespace for the map (0 -> worker); another owner gets a namespace of
 * its own (owner -> worker).  Returns -1 with errno (EINVAL: the
 * filesystem cannot be id-mapped).
 */
struct owner { uid_t u; gid_t g; int fd; };

static int
bind_idmap(struct bind *b, struct enter *en, struct owner *own, size_t *nown,
    size_t maxown)
{
	struct mount_attr a = { 0 };
	struct stat st;
	size_t j;
	int fd = -1;

	if (fstat(b->fd, &st) < 0)
		return -1;
	for (j = 0; j < *nown; j++)
		if (own[j].u == st.st_uid && own[j].g == st.st_gid)
			fd = own[j].fd;
	if (fd < 0) {
		if (st.st_uid == 0 && st.st_gid == 0)
			fd = en->userns;
		else if ((fd = userns_make(st.st_uid, en->outside, st.st_gid,
		    en->outside)) < 0)
			return -1;
		if (*nown < maxown)
			own[(*nown)++] = (struct owner){ st.st_uid, st.st_gid,
			    fd };
	}
	a.attr_set = MOUNT_ATTR_IDMAP;
	a.userns_fd = fd;
	return mount_setattr(b->fd, "", AT_EMPTY_PATH, &a, sizeof a);
}

/*
 * Credentials people keep in their home: when the work dir (or an
 * --allow-* dir) is a home, they would be the worker's to read.  Each one
 * found in a bind is covered, a dir by an empty read-only tmpfs, a file by
 * an empty file nobody may read; naming it with --allow-read or
 * --allow-write shows it again.  Landlock cannot express "this dir but
 * not that child"; the mount namespace can.
 */
static const char *const cred_dirs[] = {
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker",
	".config/gcloud", ".config/gh", ".password-store",
	".local/share/keyrings", ".mozilla", ".config/google-chrome",
	".config/chromium",
};
static const char *const cred_files[] = {
	".netrc", ".git-credentials", ".pypirc", ".npmrc", ".pgpass",
	".my.cnf", ".bash_history", ".python_history", ".psql_history",
};

static struct {
	char **v;
	size_t n;
} M;				/* what mask_credentials covered */

static bool
named_bind(const char *path)
{
	size_t i;

	for (i = 0; i < P.nb; i++)
		if (strcmp(P.b[i].path, path) == 0)
			return true;
	return false;
}

static int
mask_one(const char *real, bool dir)
{
	char dst[PATH_MAX + 32];
	struct stat st;

	if (named_bind(real))
		return 0;
	snprintf(dst, sizeof dst, NEWROOT "%s", real);
	if (lstat(dst, &st) < 0 || (dir ? !S_ISDIR(st.st_mode) :
	    !S_ISREG(st.st_mode)))
		return 0;
	if (dir) {
		if (mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID |
		    MS_NODEV | MS_NOEXEC, "mode=0,size=4k") < 0)
			return -1;
	} else if (bind_ro(NEWROOT "/.coil-masked", dst, false) < 0) {
		return -1;
	}
	M.v = xrealloc(M.v, (M.n + 1) * sizeof *M.v);
	M.v[M.n++] = xstrdup(real);
	return 0;
}

static int
mask_credentials(void)
{
	char real[PATH_MAX * 2];
	size_t i, k;
	int fd;

	fd = open(NEWROOT "/.coil-masked", O_CREAT | O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	close(fd);
	for (i = 0; i < P.nb; i++) {
		for (k = 0; k < sizeof cred_dirs / sizeof *cred_dirs; k++) {
			snprintf(real, sizeof real, "%s/%s", P.b[i].path,
			    cred_dirs[k]);
			if (strlen(real) < PATH_MAX && mask_one(real, true) < 0)
				return -1;
		}
		for (k = 0; k < sizeof cred_files / sizeof *cred_files; k++) {
			snprintf(real, sizeof real, "%s/%s", P.b[i].path,
			    cred_files[k]);
			if (strlen(real) < PATH_MAX && mask_one(real, false) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * The worker's root: a read-only tmpfs holding the system dirs (read-only
 * binds), /sys read-only, a /dev of five nodes, private /tmp and /dev/shm,
 * a /proc of the session's own, and the binds (work dir, tmp, --allow-*)
 * at their own paths.  Everything else of the machine, its unix sockets
 * included, is not there to be named.  `what` says which part failed.
 */
static int
build_root(struct enter *en, char *what, size_t wlen)
{
	const struct sandbox_conf *c = en->c;
	struct sandbox_report *r = en->r;
	char path[PATH_MAX + 32], opts[64], link[PATH_MAX];
	struct owner own[8];
	size_t i, nown = 0;
	ssize_t n;
	struct stat st;
	int rc = -1;

#define TRY(x, ...) do { if ((x) < 0) { \
		snprintf(what, wlen, __VA_ARGS__); goto out; } } while (0)
	/* Clone the binds first: NEWROOT covers /tmp, where some may be. */
	for (i = 0; i < P.nb; i++) {
		struct bind *b = &P.b[i];

		TRY(b->fd = open_tree(AT_FDCWD, b->path, OPEN_TREE_CLONE |
		    OPEN_TREE_CLOEXEC | AT_RECURSIVE), "cloning '%s'",
		    b->path);
		if (en->userns >= 0 && bind_idmap(b, en, own, &nown,
		    sizeof own / sizeof *own) < 0) {
			/* not fatal: the worker stays uid 0 instead */
			mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, errno,
			    "id-mapped mount of '%s': %s; the filesystem may "
			    "not support it: the worker stays uid 0, without "
			    "capabilities", b->path, strerror(errno));
			close(en->userns);
			en->userns = -1;
			/* an id-mapped clone cannot be un-mapped: redo */
			for (i = 0; i <= (size_t)(b - P.b); i++) {
				close(P.b[i].fd);
				P.b[i].fd = -1;
			}
			i = (size_t)-1;
			continue;
		}
		TRY(bind_flags(b), "flags of '%s'", b->path);
	}
	TRY(mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=0755,size=1m"), "mounting the new root on '%s'", NEWROOT);
	for (i = 0; i < sizeof root_dirs / sizeof *root_dirs; i++) {
		char src[64];

		snprintf(src, sizeof src, "/%s", root_dirs[i]);
		snprintf(path, sizeof path, NEWROOT "/%s", root_dirs[i]);
		if (lstat(src, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			n = readlink(src, link, sizeof link - 1);
			if (n < 0)
				continue;
			link[n] = '\0';
			TRY(symlink(link, path), "symlink '%s'", path);
		} else if (S_ISDIR(st.st_mode)) {
			TRY(mkdir(path, 0755), "mkdir '%s'", path);
			TRY(bind_ro(src, path, true), "binding '%s'", src);
		}
	}
	/* /sys read-only: the CPU topology OpenBLAS and os.cpu_count
	 * read; Landlock narrows what is readable in it. */
	TRY(mkdir(NEWROOT "/sys", 0755), "mkdir /sys");
	TRY(bind_ro("/sys", NEWROOT "/sys", true), "binding /sys");
	/* with a PID namespace, en_mountns put the session's own there */
	TRY(mkdir(NEWROOT "/proc", 0555), "mkdir /proc");
	TRY(mount("/proc", NEWROOT "/proc", NULL, MS_BIND | MS_REC, NULL),
	    "binding /proc");
	if (en->userns < 0 && en->root)
		TRY(proc_ro(NEWROOT "/proc"), "read-only /proc/sys");
	TRY(mkdir(NEWROOT "/dev", 0755), "mkdir /dev");
	TRY(mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
	    "mode=0755,size=64k"), "mounting /dev");
	for (i = 0; i < sizeof dev_nodes / sizeof *dev_nodes; i++) {
		char src[64];
		int fd;

		snprintf(src, sizeof src, "/dev/%s", dev_nodes[i]);
		snprintf(path, sizeof path, NEWROOT "/dev/%s", dev_nodes[i]);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		TRY(fd, "creating '%s'", path);
		close(fd);
		/* Read-only stops chmod of the host's node; reads and
		 * writes of a device still go to its driver. */
		TRY(bind_flags_ro(src, path, false, true), "binding '%s'",
		    src);
	}
	TRY(symlink("/proc/self/fd", NEWROOT "/dev/fd"), "symlink /dev/fd");
	TRY(symlink("/proc/self/fd/0", NEWROOT "/dev/stdin"), "/dev/stdin");
	TRY(symlink("/proc/self/fd/1", NEWROOT "/dev/stdout"), "/dev/stdout");
	TRY(symlink("/proc/self/fd/2", NEWROOT "/dev/stderr"), "/dev/stderr");
	/* Private /dev/shm and /tmp: the worker's pages there are charged
	 * to its memory cgroup and vanish with the session. */
	snprintf(opts, sizeof opts, "mode=1777,size=%lluk",
	    c->memory / 1024 ? c->memory / 1024 : 1);
	TRY(mkdir(NEWROOT "/dev/shm", 01777), "mkdir /dev/shm");
	TRY(mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
	    opts), "mounting /dev/shm");
	TRY(mkdir(NEWROOT "/tmp", 01777), "mkdir /tmp");
	TRY(mount("tmpfs", NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
	    opts), "mounting /tmp");
	TRY(mkdir(NEWROOT "/run", 0755), "mkdir /run");
	/* /var/tmp exists, empty and read-only: TMPDIR is where to write.
	 * (Not a symlink to /tmp: a bind under /var/tmp would follow it.) */
	TRY(mkdir(NEWROOT "/var", 0755), "mkdir /var");
	TRY(mkdir(NEWROOT "/var/tmp", 0755), "mkdir /var/tmp");
	/* The binds, parents before children (P.b is sorted). */
	for (i = 0; i < P.nb; i++) {
		struct bind *b = &P.b[i];

		snprintf(path, sizeof path, NEWROOT "%s", b->path);
		if (mkdir_p(path, 0755) < 0 && errno != EROFS)
			TRY(-1, "mkdir '%s'", path);
		TRY(move_mount(b->fd, "", AT_FDCWD, path,
		    MOVE_MOUNT_F_EMPTY_PATH), "mounting '%s'", b->path);
		close(b->fd);
		b->fd = -1;
	}
	TRY(mask_credentials(), "hiding credentials");
	/* Nothing may be created at the top of the new root. */
	TRY(mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV, NULL), "making the new root read-only");
	TRY(chdir(NEWROOT), "chdir to the new root");
	TRY(syscall(SYS_pivot_root, ".", "."), "pivot_root");
	TRY(umount2(".", MNT_DETACH), "detaching the old root");
	TRY(chdir("/"), "chdir /");
#undef TRY
	rc = 0;
out:
	for (i = 0; i < nown; i++)
		if (own[i].fd != en->userns)
			close(own[i].fd);
	for (i = 0; i < P.nb; i++) {
		if (P.b[i].fd >= 0)
			close(P.b[i].fd);
		P.b[i].fd = -1;
	}
	return rc;
}

/* ---- sandbox_enter (init) ------------------------------------------------ */

static int
en_cgroup(struct enter *en)
{
	return step_cgroup(en->c, en->r, en->session, en->err, en->len);
}

/* Not root and not given a user namespace by sandbox_spawn: make one. */
static int
en_userns_self(struct enter *en)
{
	struct sandbox_report *r = en->r;

	if (en->root || is_on(r, SANDBOX_M_USERNS) ||
	    skipped(en->c, r, SANDBOX_M_USERNS))
		return 0;
	if (unshare(CLONE_NEWUSER) < 0) {
		mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, errno, "%s; %s",
		    strerror(errno), userns_hint(errno));
		return 0;
	}
	if (userns_map_self(getuid(), getgid()) < 0) {
		mark(r, SANDBOX_M_USERNS, SANDBOX_FAILED, errno, "writing the "
		    "maps: %s", strerror(errno));
		return 0;
	}
	mark(r, SANDBOX_M_USERNS, SANDBOX_ON, 0, "uid %ld mapped to itself",
	    (long)getuid());
	return 0;
}

static int
en_ns(struct enter *en)
{
	const struct sandbox_conf *c = en->c;
	struct sandbox_report *r = en->r;

	if (c->allow_net && c->profile != SANDBOX_STRICT)
		mark(r, SANDBOX_M_NETNS, SANDBOX_OFF, 0, "--allow-net");
	else if (skipped(c, r, SANDBOX_M_NETNS))
		;
	else if (unshare(CLONE_NEWNET) < 0)
		mark(r, SANDBOX_M_NETNS, SANDBOX_MISSING, errno, "%s",
		    strerror(errno));
	else
		mark(r, SANDBOX_M_NETNS, SANDBOX_ON, 0, "no interface but a "
		    "loopback that is down");
	if (skipped(c, r, SANDBOX_M_IPCNS))
		;
	else if (unshare(CLONE_NEWIPC) < 0)
		mark(r, SANDBOX_M_IPCNS, SANDBOX_MISSING, errno, "%s",
		    strerror(errno));
	else
		mark(r, SANDBOX_M_IPCNS, SANDBOX_ON, 0, "private System V and "
		    "POSIX IPC");
	return 0;
}

/* The mount namespace failed half-way: fail closed, saying what. */
static int
en_mount_failed(struct enter *en, int e, const char *what)
{
	seterr(en->err, en->len, e, "report this with `coil "
	    "--sandbox-report`", "mount namespace: %s", what);
	mark(en->r, SANDBOX_M_MOUNTNS, SANDBOX_FAILED, e, "%s", en->err);
	errno = e;
	return -1;
}

/* A mount namespace of our own, and in it, when init is PID 1, a /proc
 * that shows the session only.  Before anything else that reads /proc:
 * the host's would show other processes under the pids we know. */
static int
en_mountns(struct enter *en)
{
	struct sandbox_report *r = en->r;
	const char *what;
	int e;

	if (skipped(en->c, r, SANDBOX_M_MOUNTNS))
		return 0;
	if (unshare(CLONE_NEWNS) < 0) {
		mark(r, SANDBOX_M_MOUNTNS, SANDBOX_MISSING, errno, "%s; needs "
		    "a user namespace or root: the work dir is enforced by "
		    "Landlock alone", strerror(errno));
		return 0;
	}
	/* Nothing done here may propagate back to the host. */
	what = "making / private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		goto fail;
	what = "mounting the session's /proc";
	if (en->pid1 && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) < 0)
		goto fail;
	return 0;
fail:
	e = errno;
	return en_mount_failed(en, e, what);
}

/* Root: the worker's uid outside will be an unused one.  Its namespace is
 * made now (the id-mapped binds need it) and entered last: everything
 * before is done as real root, so the mount, network and IPC namespaces
 * belong to the initial user namespace and the worker, without any
 * capability there, can change none of them. */
static int
en_userns_make(struct enter *en)
{
	struct sandbox_report *r = en->r;

	if (!en->root || is_on(r, SANDBOX_M_USERNS) ||
	    skipped(en->c, r, SANDBOX_M_USERNS))
		return 0;
	en->outside = WORKER_UID_BASE + (long)en->session % WORKER_UID_SPAN;
	en->userns = userns_make(0, en->outside, 0, en->outside);
	if (en->userns < 0)
		mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, errno,
		    "%s; %s: the worker stays uid 0, without capabilities",
		    strerror(errno), userns_hint(errno));
	return 0;
}

/* The worker's root.  A kernel that lacks a piece of the mount API (the
 * new one is 5.2+, id-mapped mounts 5.12+) leaves the host's tree as it
 * was, and Landlock alone keeps the files. */
static int
en_root(struct enter *en)
{
	struct sandbox_report *r = en->r;
	char what[PATH_MAX + 64];
	int e;

	if (r->m[SANDBOX_M_MOUNTNS].state == SANDBOX_MISSING)
		return 0;
	if (build_root(en, what, sizeof what) == 0) {
		mark(r, SANDBOX_M_MOUNTNS, SANDBOX_ON, 0, "new root: system "
		    "dirs read-only, %zu bind%s, private /tmp and /dev/shm%s"
		    "%s", P.nb, P.nb == 1 ? "" : "s", en->pid1 ? ", the "
		    "session's /proc" : "", M.n ? "; credentials in the binds "
		    "hidden" : "");
		return 0;
	}
	e = errno;
	umount2(NEWROOT, MNT_DETACH);
	if (e == ENOSYS || e == EPERM || e == EINVAL || e == EOPNOTSUPP) {
		mark(r, SANDBOX_M_MOUNTNS, SANDBOX_MISSING, e, "%s: %s; the "
		    "work dir is enforced by Landlock alone", what,
		    strerror(e));
		return 0;
	}
	return en_mount_failed(en, e, what);
}

/*
 * The cells' private temp dir.  With the new root it is that root's own
 * /tmp: a tmpfs of the session's mount namespace, gone with the namespace
 * however coil ends (SIGKILL included), and nothing is made on the host.
 * Without it, a dir coil-<session>-XXXXXX under conf->tmp_base, locked
 * (flock) by init while the session lives: sandbox_cleanup removes it,
 * and sandbox_sweep the ones whose coil died before it could.
 */
static int tmp_lock_fd = -1;	/* init's hold on that dir */

static int
en_tmp(struct enter *en)
{
	const char *base = en->c->tmp_base != NULL ? en->c->tmp_base : "/tmp";
	char tmpl[PATH_MAX];

	if (is_on(en->r, SANDBOX_M_MOUNTNS)) {
		snprintf(P.tmpdir, sizeof P.tmpdir, "/tmp");
		return 0;
	}
	if (snprintf(tmpl, sizeof tmpl, "%s/coil-%ld-XXXXXX", base,
	    (long)en->session) >= (int)sizeof tmpl) {
		seterr(en->err, en->len, ENAMETOOLONG, "set TMPDIR to a "
		    "shorter path", "temporary directory under '%s'", base);
		return -1;
	}
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, P.tmpdir) == NULL) {
		seterr(en->err, en->len, errno, "set TMPDIR to a writable "
		    "directory", "creating a temporary directory '%s'", tmpl);
		return -1;
	}
	tmp_lock_fd = open(P.tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tmp_lock_fd < 0 || flock(tmp_lock_fd, LOCK_EX | LOCK_NB) < 0) {
		seterr(en->err, en->len, errno, NULL, "locking the temporary "
		    "directory '%s'", P.tmpdir);
		return -1;
	}
	if (add_bind("tmpdir", P.tmpdir, true, en->err, en->len) < 0)
		return -1;
	qsort(P.b, P.nb, sizeof *P.b, bind_cmp);
	return 0;
}

int
sandbox_held_fd(void)
{
	return tmp_lock_fd;
}

/* Root: become the worker's uid, last. */
static int
en_userns_enter(struct enter *en)
{
	struct sandbox_report *r = en->r;

	if (en->userns < 0)
		return 0;
	/* Without the new root the work dir is not id-mapped, and the
	 * worker's uid could not write it: stay uid 0, without caps. */
	if (!is_on(r, SANDBOX_M_MOUNTNS)) {
		close(en->userns);
		en->userns = -1;
		mark(r, SANDBOX_M_USERNS, SANDBOX_MISSING, 0, "needs the mount "
		    "namespace (to id-map the work dir): the worker stays uid "
		    "0, without capabilities");
		return 0;
	}
	/* Supplementary groups would survive setns and keep root's group
	 * rights outside: drop them first. */
	if (setgroups(0, NULL) < 0 || setns(en->userns, CLONE_NEWUSER) < 0 ||
	    setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
		seterr(en->err, en->len, errno, NULL, "entering the user "
		    "namespace");
		mark(r, SANDBOX_M_USERNS, SANDBOX_FAILED, errno, "%s",
		    en->err);
		return -1;
	}
	close(en->userns);
	en->userns = -1;
	if (check_parent() < 0) {
		seterr(en->err, en->len, errno, NULL, "PR_SET_PDEATHSIG");
		return -1;
	}
	r->worker_uid = en->outside;
	mark(r, SANDBOX_M_USERNS, SANDBOX_ON, 0, "uid 0 inside is uid %ld "
	    "outside; writable dirs are id-mapped", en->outside);
	return 0;
}

static int
en_chdir(struct enter *en)
{
	if (chdir(P.workdir) == 0)
		return 0;
	seterr(en->err, en->len, errno, NULL, "chdir '%s'", P.workdir);
	return -1;
}

/* init's steps, in order; see sandbox.h. */
static const struct {
	const char *name;
	int (*fn)(struct enter *);
} enter_steps[] = {
	{ "cgroup", en_cgroup },
	{ "user namespace, not root", en_userns_self },
	{ "network and IPC namespaces", en_ns },
	{ "mount namespace and /proc", en_mountns },
	{ "user namespace, root", en_userns_make },
	{ "the worker's root", en_root },
	{ "the private temp dir", en_tmp },
	{ "the worker's uid", en_userns_enter },
	{ "the work directory", en_chdir },
};

int
sandbox_enter(const struct sandbox_conf *c, struct sandbox_report *r,
    char *err, size_t len)
{
	struct enter en = { .c = c, .r = r, .err = err, .len = len,
	    .userns = -1 };
	size_t i;
	int rc = 0;

	if (c->profile == SANDBOX_NONE)
		return 0;
	if (prepare_paths(c, err, len) < 0)
		return -1;
	en.session = c->session ? c->session : getppid();
	en.root = geteuid() == 0;
	en.pid1 = getpid() == 1;
	if (!en.pid1 && r->m[SANDBOX_M_PIDNS].state == SANDBOX_UNTRIED)
		mark(r, SANDBOX_M_PIDNS, SANDBOX_MISSING, 0, "init was not "
		    "created by sandbox_spawn: processes a cell starts may "
		    "outlive the session");
	if (!en.root)
		r->worker_uid = (long)geteuid();
	/* A session of its own: no controlling terminal to inject into
	 * or to deliver a terminal's signals. */
	setsid();
	for (i = 0; rc == 0 && i < sizeof enter_steps / sizeof *enter_steps;
	    i++)
		rc = enter_steps[i].fn(&en);
	if (en.userns >= 0)
		close(en.userns);
	if (parent_pidfd >= 0)
		close(parent_pidfd);
	parent_pidfd = -1;
	/* init's memory (and environment) is not for the worker's eyes;
	 * set last, as it makes /proc/self/uid_map root's */
	if (rc == 0 && prctl(PR_SET_DUMPABLE, 0) < 0) {
		seterr(err, len, errno, NULL, "prctl(PR_SET_DUMPABLE, 0)");
		rc = -1;
	}
	return rc;
}

/* ---- environment (worker) --------------------------------------------- */

/* Passed through as they are: none is a secret. */
static const char *const env_keep[] = {
	"PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "TERM",
	"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
	"NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS",
};
static const char *const env_keep_prefix[] = { "LC_" };
/* With --allow-net only: what a network client needs.  Proxies may carry
 * a password, but the user asked for the network. */
static const char *const env_keep_net[] = {
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE",
};
static const char *const env_threads[] = {
	"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
	"NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS",
};

/* CPUs this process may use: its affinity, capped by a CPU quota of its
 * cgroup if there is one. */
static long
cpus_allowed(void)
{
	cpu_set_t set;
	long n = 0;
	char path[PATH_MAX + 64], buf[128];
	struct cg cg;

	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0)
		n = 1;
	if (cg_locate(NULL, 0, &cg)) {
		long long q, p;

		snprintf(path, sizeof path, "%s/cpu.max", cg.base);
		if (read_file(path, buf, sizeof buf) > 0 &&
		    sscanf(buf, "%lld %lld", &q, &p) == 2 && q > 0 && p > 0 &&
		    (q + p - 1) / p < n)
			n = (long)((q + p - 1) / p);
	}
	if (cg_locate("cpu", 0, &cg)) {
		long long q = -1, p = 0;

		snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", cg.base);
		if (read_file(path, buf, sizeof buf) > 0)
			q = atoll(buf);
		snprintf(path, sizeof path, "%s/cpu.cfs_period_us", cg.base);
		if (read_file(path, buf, sizeof buf) > 0)
			p = atoll(buf);
		if (q > 0 && p > 0 && (q + p - 1) / p < n)
			n = (long)((q + p - 1) / p);
	}
	return n;
}

static bool
env_name_is(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

static bool
env_listed(const char *e, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (env_name_is(e, list[i]))
			return true;
	return false;
}

struct envv { char **v; size_t n; };

static void
env_push(struct envv *ev, char *s)
{
	ev->v = xrealloc(ev->v, (ev->n + 2) * sizeof *ev->v);
	ev->v[ev->n++] = s;
	ev->v[ev->n] = NULL;
}

static bool
env_has(const struct envv *ev, const char *name)
{
	size_t i;

	for (i = 0; i < ev->n; i++)
		if (env_name_is(ev->v[i], name))
			return true;
	return false;
}

char **
sandbox_env(const struct sandbox_conf *c, char *const *env)
{
	struct envv ev = { NULL, 0 };
	char wd[PATH_MAX];
	const char *tmp;
	long cpus;
	size_t i;

	env_push(&ev, NULL);
	ev.n = 0;
	if (c->profile == SANDBOX_NONE) {
		for (i = 0; env != NULL && env[i] != NULL; i++)
			env_push(&ev, xstrdup(env[i]));
		return ev.v;
	}
	for (i = 0; env != NULL && env[i] != NULL; i++) {
		const char *e = env[i];
		bool keep;
		size_t k;

		keep = env_listed(e, env_keep, sizeof env_keep /
		    sizeof *env_keep);
		for (k = 0; !keep && k < sizeof env_keep_prefix /
		    sizeof *env_keep_prefix; k++)
			keep = strncmp(e, env_keep_prefix[k],
			    strlen(env_keep_prefix[k])) == 0 &&
			    strchr(e, '=') != NULL;
		if (!keep && c->allow_net && c->profile != SANDBOX_STRICT)
			keep = env_listed(e, env_keep_net, sizeof env_keep_net
			    / sizeof *env_keep_net);
		if (keep)
			env_push(&ev, xstrdup(e));
	}
	if (!env_has(&ev, "PATH"))
		env_push(&ev, xstrdup("PATH=/usr/local/bin:/usr/bin:/bin"));
	if (c->workdir == NULL || realpath(c->workdir, wd) == NULL) {
		if (getcwd(wd, sizeof wd) == NULL)
			snprintf(wd, sizeof wd, "/");
	}
	/* init chose it (en_tmp) and the worker inherited the choice */
	tmp = P.tmpdir[0] != '\0' ? P.tmpdir : "/tmp";
	env_push(&ev, xasprintf("HOME=%s", wd));
	env_push(&ev, xasprintf("TMPDIR=%s", tmp));
	env_push(&ev, xasprintf("TMP=%s", tmp));
	env_push(&ev, xasprintf("TEMP=%s", tmp));
	/* Caches are disposable: keep them out of the user's work dir. */
	env_push(&ev, xasprintf("MPLCONFIGDIR=%s/matplotlib", tmp));
	env_push(&ev, xasprintf("XDG_CACHE_HOME=%s/cache", tmp));
	env_push(&ev, xstrdup("MPLBACKEND=Agg"));
	cpus = cpus_allowed();
	for (i = 0; i < sizeof env_threads / sizeof *env_threads; i++)
		if (!env_has(&ev, env_threads[i]))
			env_push(&ev, xasprintf("%s=%ld", env_threads[i],
			    cpus));
	return ev.v;
}

void
sandbox_env_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* ---- step: environment scrub (worker) --------------------------------- */

/*
 * The strings the process was started with stay in memory (and in
 * /proc/self/environ) whatever `environ` points to now; coil's own
 * secrets live there.  Zero them.  The caller has switched environ to
 * sandbox_env's copy first.
 */
static int
step_env(const struct sandbox_conf *c, struct sandbox_report *r, char *err,
    size_t len)
{
	char buf[4096], *p;
	unsigned long start = 0, end = 0;
	int field;
	size_t i, n = 0;

	(void)c;
	if (read_file("/proc/self/stat", buf, sizeof buf) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL) {
		mark(r, SANDBOX_M_ENV, SANDBOX_FAILED, errno, "reading "
		    "/proc/self/stat: %s", strerror(errno));
		return 0;
	}
	/* after ") ", field 3 is the state; env_start is field 50 */
	for (field = 2, p++; *p && field < 51; ) {
		while (*p == ' ')
			p++;
		field++;
		if (field == 50)
			start = strtoul(p, NULL, 10);
		if (field == 51)
			end = strtoul(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	for (i = 0; environ != NULL && environ[i] != NULL; i++) {
		unsigned long a = (unsigned long)environ[i];

		if (a >= start && a < end) {
			seterr(err, len, 0, "call sandbox_env and set environ "
			    "before sandbox_apply", "environ still points to "
			    "the original environment");
			mark(r, SANDBOX_M_ENV, SANDBOX_FAILED, 0, "%s", err);
			return -1;
		}
		n++;
	}
	if (start != 0 && end > start)
		memset((void *)start, 0, end - start);
	mark(r, SANDBOX_M_ENV, SANDBOX_ON, 0, "an allow-list of %zu "
	    "variables; the original block erased", n);
	return 0;
}

/* ---- step: rlimits (worker) ------------------------------------------- */

static int
limit(int res, rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) < 0)
		return -1;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		want = rl.rlim_max;
	rl.rlim_cur = rl.rlim_max = want;
	return setrlimit(res, &rl);
}

static int
step_rlimits(const struct sandbox_conf *c, struct sandbox_report *r,
    char *err, size_t len)
{
	char mem[32], fsz[32], nproc[48];

	/* RLIMIT_DATA, not AS: address space counts every thread's
	 * reserved stack, so OpenBLAS would fail long before memory is
	 * short.  It is per process; the memory cgroup bounds the sum. */
#ifndef SBX_ASAN
	if (limit(RLIMIT_DATA, c->memory) < 0)
		goto fail;
#endif
	/* Past the size a write fails with EFBIG (OSError) instead of
	 * the process dying of SIGXFSZ. */
	signal(SIGXFSZ, SIG_IGN);
	if (limit(RLIMIT_FSIZE, c->max_file_size) < 0)
		goto fail;
	if (limit(RLIMIT_NOFILE, (rlim_t)c->max_files) < 0)
		goto fail;
	if (limit(RLIMIT_CORE, 0) < 0)
		goto fail;
	/* RLIMIT_NPROC counts the real uid's processes in its user
	 * namespace: set it only when the session has one of its own,
	 * or it would count the user's whole desktop.  Root is exempt
	 * in the initial namespace anyway. */
	nproc[0] = '\0';
	if (is_on(r, SANDBOX_M_USERNS)) {
		if (limit(RLIMIT_NPROC, (rlim_t)c->max_procs) < 0)
			goto fail;
		snprintf(nproc, sizeof nproc, " NPROC=%ld", c->max_procs);
	}
	fmt_size(mem, sizeof mem, c->memory);
	fmt_size(fsz, sizeof fsz, c->max_file_size);
#ifdef SBX_ASAN
	snprintf(mem, sizeof mem, "unset (AddressSanitizer)");
#endif
	mark(r, SANDBOX_M_RLIMITS, SANDBOX_ON, 0, "DATA=%s FSIZE=%s "
	    "NOFILE=%ld CORE=0%s", mem, fsz, c->max_files, nproc);
	return 0;
fail:
	seterr(err, len, errno, NULL, "setrlimit");
	mark(r, SANDBOX_M_RLIMITS, SANDBOX_FAILED, errno, "%s", err);
	return -1;
}

/* ---- step: capabilities (worker) -------------------------------------- */

static int
step_caps(struct sandbox_report *r, char *err, size_t len)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int cap, e;

	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &h, d) < 0)
		goto fail;
	if ((d[0].permitted | d[1].permitted) != 0) {
		/* Without SECBIT_NOROOT an execve as uid 0 would grant
		 * every capability again. */
		if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT |
		    SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
		    SECBIT_NO_CAP_AMBIENT_RAISE |
		    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
			goto fail;
		for (cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++)
			if (prctl(PR_CAPBSET_DROP, cap) < 0)
				goto fail;
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(d, 0, sizeof d);
	if (syscall(SYS_capset, &h, d) < 0)
		goto fail;
	mark(r, SANDBOX_M_CAPS, SANDBOX_ON, 0, "none left, bounding set "
	    "empty, securebits locked");
	return 0;
fail:
	e = errno;
	seterr(err, len, e, NULL, "dropping capabilities");
	mark(r, SANDBOX_M_CAPS, SANDBOX_FAILED, e, "%s", err);
	return -1;
}

static int
step_nnp(struct sandbox_report *r, char *err, size_t len)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		seterr(err, len, errno, NULL, "PR_SET_NO_NEW_PRIVS");
		mark(r, SANDBOX_M_NNP, SANDBOX_FAILED, errno, "%s", err);
		return -1;
	}
	mark(r, SANDBOX_M_NNP, SANDBOX_ON, 0, "set-uid bits and file "
	    "capabilities give nothing");
	return 0;
}

/* ---- step: Landlock (worker) ------------------------------------------ */

#define LL_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
    LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LL_R (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_X LANDLOCK_ACCESS_FS_EXECUTE
#define LL_DEV (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
    LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LL_ALL (~0ULL)

/* The rules in force, for the audit hook's words. */
struct ll_rule { char *path; uint64_t access; };
static struct {
	struct ll_rule *v;
	size_t n;
	char **hidden;		/* /etc entries left out */
	size_t nhidden;
	uint64_t handled;
} LL;

/* Add a rule for the file or dir open at fd (O_PATH); record it under
 * `path`, which must be free of symlinks. */
static int
ll_add_fd(int rs, int fd, const char *path, bool dir, uint64_t access)
{
	struct coil_landlock_path_beneath_attr pb;

	access &= LL.handled;
	if (!dir)
		access &= LL_FILE;
	pb.allowed_access = access;
	pb.parent_fd = fd;
	if (coil_landlock_add_rule(rs, COIL_LANDLOCK_RULE_PATH_BENEATH, &pb,
	    0) < 0)
		return -1;
	LL.v = xrealloc(LL.v, (LL.n + 1) * sizeof *LL.v);
	LL.v[LL.n].path = xstrdup(path);
	LL.v[LL.n].access = access;
	LL.n++;
	return 0;
}

/* A rule for path, which may be missing (no rule then) or a symlink. */
static int
ll_add(int rs, const char *path, uint64_t access)
{
	char real[PATH_MAX], link[64];
	struct stat st;
	ssize_t n;
	int fd, rc, e;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	/* the path the kernel resolved, for the audit hook */
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof real - 1);
	if (n > 0 && real[0] == '/')
		real[n] = '\0';
	else
		snprintf(real, sizeof real, "%s", path);
	rc = ll_add_fd(rs, fd, real, S_ISDIR(st.st_mode), access);
	e = errno;
	close(fd);
	errno = e;
	return rc;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static void
ll_hide(const char *path)
{
	LL.hidden = xrealloc(LL.hidden, (LL.nhidden + 1) * sizeof *LL.hidden);
	LL.hidden[LL.nhidden++] = xstrdup(path);
}

/* Dirs of /etc that hold private keys next to public files: walked one
 * entry at a time instead of allowed whole. */
static const char *const etc_walk[] = {
	"ssh", "ssl", "pki", "NetworkManager", "wireguard", "openvpn",
	"ipsec.d", "libvirt", "security", "polkit-1", "sudoers.d", "docker",
	"containerd", "kubernetes", "letsencrypt", "cups", "ppp",
};

/*
 * /etc minus its secrets.  Landlock can only allow, so /etc is allowed
 * entry by entry: every world-readable entry, except that the dirs known
 * to keep private keys are walked the same way.  A file that is not
 * world-readable is a secret by its owner's own word.
 */
static int
ll_etc(int rs, const char *dir, uint64_t access, int depth)
{
	DIR *d;
	struct dirent *e;
	char path[PATH_MAX];
	struct stat st;
	size_t i;
	int rc = 0, fd;

	d = opendir(dir);
	if (d == NULL)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		bool walk = false;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		/* a symlink's target is checked where it lands */
		if (e->d_type == DT_LNK)
			continue;
		if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
		    (int)sizeof path)
			continue;
		fd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
			close(fd);
			continue;
		}
		if (!(st.st_mode & S_IROTH)) {
			close(fd);
			ll_hide(path);
			continue;
		}
		for (i = 0; depth == 0 && i < sizeof etc_walk /
		    sizeof *etc_walk; i++)
			if (strcmp(e->d_name, etc_walk[i]) == 0)
				walk = true;
		if (walk && S_ISDIR(st.st_mode))
			rc = ll_etc(rs, path, access, depth + 1);
		else
			rc = ll_add_fd(rs, fd, path, S_ISDIR(st.st_mode),
			    access);
		close(fd);
	}
	closedir(d);
	return rc;
}

/* Under strict, /etc gives only what Python and its usual libraries read. */
static const char *const etc_strict[] = {
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/timezone", "/etc/passwd", "/etc/group",
	"/etc/nsswitch.conf", "/etc/mime.types", "/etc/matplotlibrc",
	"/etc/python3", "/etc/python3.11", "/etc/python3.12",
	"/etc/python3.13", "/etc/fonts",
};

static const char *const sys_standard[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
};

static const char *const sys_strict[] = {
	"/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32",
	"/usr/local/lib", "/usr/share", "/lib", "/lib32", "/lib64", "/libx32",
};

static int
ll_rules(const struct sandbox_conf *c, const struct sandbox_report *r,
    int rs)
{
	bool strict = c->profile == SANDBOX_STRICT;
	bool priv = is_on(r, SANDBOX_M_MOUNTNS);
	uint64_t rw = LL_ALL & ~(strict ? LL_X : 0);
	uint64_t ro = LL_R | (strict ? 0 : LL_X);
	size_t i;

#define ADD(p, a) do { if (ll_add(rs, (p), (a)) < 0) return -1; } while (0)
	if (strict) {
		for (i = 0; i < sizeof sys_strict / sizeof *sys_strict; i++)
			ADD(sys_strict[i], LL_R);
		for (i = 0; i < sizeof etc_strict / sizeof *etc_strict; i++)
			ADD(etc_strict[i], LL_R);
	} else {
		for (i = 0; i < sizeof sys_standard / sizeof *sys_standard;
		    i++)
			ADD(sys_standard[i], LL_R | LL_X);
		/* A worker that is uid 0 outside, or has supplementary
		 * groups, could read the secrets of /etc by its file
		 * permissions: then Landlock leaves them out one by one.
		 * Otherwise the permissions already refuse every file of
		 * /etc that is not world-readable, and one rule does (the
		 * walk costs a millisecond and a half of start-up). */
		if (r->worker_uid == 0 || getgroups(0, NULL) > 0) {
			/* /etc is a real dir on every system coil knows;
			 * its entries' paths are canonical as they stand */
			if (ll_etc(rs, "/etc", LL_R, 0) < 0)
				return -1;
		} else {
			ADD("/etc", LL_R);
		}
	}
	/* /proc: with a PID namespace it shows the session only; the
	 * processes outside it are also out of Landlock's ptrace scope. */
	ADD("/proc", LL_R);
	ADD("/sys/devices/system/cpu", LL_R);
	ADD("/sys/devices/system/node", LL_R);
	for (i = 0; i < sizeof dev_nodes / sizeof *dev_nodes; i++) {
		char p[64];

		snprintf(p, sizeof p, "/dev/%s", dev_nodes[i]);
		ADD(p, LL_DEV);
	}
	if (priv) {
		ADD("/tmp", rw);
		ADD("/dev/shm", rw);
	}
	for (i = 0; i < P.nb; i++)
		ADD(P.b[i].path, P.b[i].rw ? rw : ro);
#undef ADD
	return 0;
}

static int
step_landlock(const struct sandbox_conf *c, struct sandbox_report *r,
    char *err, size_t len)
{
	struct coil_landlock_ruleset_attr a = { 0 };
	size_t asize = COIL_LANDLOCK_ATTR_SIZE_V1;
	int abi, rs, e;
	bool net_off = !c->allow_net || c->profile == SANDBOX_STRICT;

	if (skipped(c, r, SANDBOX_M_LANDLOCK_FS)) {
		mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_MISSING, 0, "not tried: "
		    "skipped on request");
		mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_MISSING, 0, "not "
		    "tried: skipped on request");
		return 0;
	}
	abi = coil_landlock_abi();
	if (abi < 1) {
		e = errno;
		r->landlock_abi = 0;
		mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_MISSING, e, "%s; %s", 
		    strerror(e), e == EOPNOTSUPP ? "Landlock is built in but "
		    "off: add landlock to the lsm= boot parameter" :
		    "the kernel has no Landlock (5.13+)");
		mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_MISSING, e, "no "
		    "Landlock");
		mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_MISSING, e, "no "
		    "Landlock");
		return 0;
	}
	r->landlock_abi = abi;
	if (abi > COIL_LANDLOCK_ABI_KNOWN)
		abi = COIL_LANDLOCK_ABI_KNOWN;
	a.handled_access_fs = coil_landlock_fs_by_abi[abi - 1];
	if (abi >= 4 && net_off) {
		a.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
		    LANDLOCK_ACCESS_NET_CONNECT_TCP;
		asize = COIL_LANDLOCK_ATTR_SIZE_V4;
	}
	if (abi >= 6) {
		a.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
		    LANDLOCK_SCOPE_SIGNAL;
		asize = COIL_LANDLOCK_ATTR_SIZE_V6;
	}
	LL.handled = a.handled_access_fs;
	rs = coil_landlock_create_ruleset(&a, asize, 0);
	if (rs < 0) {
		seterr(err, len, errno, NULL, "landlock_create_ruleset");
		goto fail;
	}
	if (ll_rules(c, r, rs) < 0) {
		e = errno;
		close(rs);
		errno = e;
		seterr(err, len, errno, NULL, "landlock_add_rule");
		goto fail;
	}
	if (coil_landlock_restrict_self(rs, 0) < 0) {
		e = errno;
		close(rs);
		errno = e;
		seterr(err, len, errno, NULL, "landlock_restrict_self");
		goto fail;
	}
	close(rs);
	if (LL.nhidden > 0 || c->profile == SANDBOX_STRICT)
		mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_ON, 0, "ABI %d: %zu "
		    "rules; %zu secret%s of /etc left out", r->landlock_abi,
		    LL.n, LL.nhidden, LL.nhidden == 1 ? "" : "s");
	else
		mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_ON, 0, "ABI %d: %zu "
		    "rules; the secrets of /etc are not world-readable and "
		    "the worker owns none", r->landlock_abi, LL.n);
	if (!net_off)
		mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_OFF, 0, "--allow-net");
	else if (abi >= 4)
		mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_ON, 0, "TCP bind and "
		    "connect denied");
	else
		mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_MISSING, 0, "ABI %d < "
		    "4 (Linux 6.7)", abi);
	if (abi >= 6)
		mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_ON, 0, "no signals "
		    "or abstract unix sockets outside the worker");
	else
		mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_MISSING, 0, "ABI %d "
		    "< 6 (Linux 6.12)", abi);
	return 0;
fail:
	e = errno;
	mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_FAILED, e, "%s", err);
	return -1;
}

/* ---- step: seccomp (worker, last) ------------------------------------- */

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

static int
sc_base(const struct sandbox_conf *c, const struct sandbox_report *r,
    scmp_filter_ctx ctx, bool *chown_denied)
{
	static const unsigned long ns_flags[] = { CLONE_NEWNS, CLONE_NEWCGROUP,
	    CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	    CLONE_NEWNET };
	struct scmp_arg_cmp cmp[2];
	int rc, allow[3], nallow = 0;
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
	/* Socket families: unix always; inet only with --allow-net, and
	 * never raw.  Netlink, packet, vsock and the rest: never. */
	allow[nallow++] = AF_UNIX;
	if (net) {
		allow[nallow++] = AF_INET;
		allow[nallow++] = AF_INET6;
	}
	if ((rc = sc_sockets(ctx, allow, (size_t)nallow)) < 0)
		return rc;
	if (net) {
		static const int fams[] = { AF_INET, AF_INET6 };
		static const int types[] = { SOCK_RAW, SOCK_PACKET };
		size_t f, t;

		for (f = 0; f < 2; f++)
			for (t = 0; t < 2; t++) {
				cmp[0] = SCMP_A0(SCMP_CMP_EQ, fams[f]);
				cmp[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf,
				    types[t]);
				if ((rc = sc_rule(ctx, SCMP_ACT_ERRNO(EACCES),
				    "socket", 2, cmp)) < 0)
					return rc;
			}
	}
	*chown_denied = false;
	if (r->worker_uid == 0 && !is_on(r, SANDBOX_M_USERNS) &&
	    !is_on(r, SANDBOX_M_MOUNTNS)) {
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
 * checkpoint it expects, from the main thread only.  What is left: code
 * that runs on the main thread inside that window (an os.register_at_fork
 * hook, say) can spend the one fork itself; its child is then as confined
 * as the worker (this filter, no execve, no sockets), and the checkpoint
 * fails and says so.
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

static int notify_fd = -1;

int
sandbox_take_notify_fd(void)
{
	int fd = notify_fd;

	notify_fd = -1;
	return fd;
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

static int
step_seccomp(const struct sandbox_conf *c, struct sandbox_report *r,
    char *err, size_t len)
{
	scmp_filter_ctx ctx;
	bool chown_denied = false, gate;
	int rc;

	if (skipped(c, r, SANDBOX_M_SECCOMP)) {
		if (c->profile == SANDBOX_STRICT)
			mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_MISSING, 0,
			    "not tried: skipped on request");
		return 0;
	}
	if (prctl(PR_GET_SECCOMP) < 0 && errno == EINVAL) {
		mark(r, SANDBOX_M_SECCOMP, SANDBOX_MISSING, EINVAL, "the kernel "
		    "has no CONFIG_SECCOMP_FILTER");
		if (c->profile == SANDBOX_STRICT)
			mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_MISSING,
			    EINVAL, "no seccomp");
		return 0;
	}
	ctx = sc_new();
	if (ctx == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	if ((rc = sc_base(c, r, ctx, &chown_denied)) < 0 ||
	    (rc = seccomp_load(ctx)) < 0) {
		seccomp_release(ctx);
		goto fail;
	}
	seccomp_release(ctx);
	mark(r, SANDBOX_M_SECCOMP, SANDBOX_ON, 0, "ptrace, mount, namespaces, "
	    "bpf, io_uring, keyrings, modules denied; clone3 ENOSYS; sockets: "
	    "%s%s", c->allow_net && c->profile != SANDBOX_STRICT ?
	    "unix, inet" : "unix only",
	    chown_denied ? "; chmod and chown denied (root without a user "
	    "namespace)" : "");
	if (c->profile != SANDBOX_STRICT) {
		mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_OFF, 0, "standard");
		mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_OFF, 0, "standard: "
		    "checkpoints fork freely");
		return 0;
	}
	/* The gate needs SECCOMP_RET_USER_NOTIF (Linux 5.0) and libseccomp
	 * API 5; without them strict takes no checkpoints. */
	gate = c->ckpt_gate;
	if (gate && seccomp_api_get() < 5) {
		mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_MISSING, 0, "libseccomp "
		    "API %u < 5: no user notification; no checkpoints under "
		    "strict", seccomp_api_get());
		gate = false;
	}
	for (;;) {
		ctx = sc_new();
		if (ctx == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		if ((rc = sc_strict(gate, ctx)) == 0 &&
		    (rc = seccomp_load(ctx)) == 0)
			break;
		seccomp_release(ctx);
		if (!gate || rc != -EINVAL)
			goto fail;
		mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_MISSING, EINVAL, "no "
		    "seccomp user notification: no checkpoints under strict");
		gate = false;
	}
	if (gate) {
		notify_fd = seccomp_notify_fd(ctx);
		if (notify_fd < 0) {
			rc = notify_fd;
			seccomp_release(ctx);
			goto fail;
		}
		mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_ON, 0, "fork and clone go "
		    "to the supervisor, which lets the worker's own "
		    "checkpoint fork through");
	} else if (r->m[SANDBOX_M_CKPT_GATE].state != SANDBOX_MISSING) {
		mark(r, SANDBOX_M_CKPT_GATE, SANDBOX_OFF, 0, "no checkpoints "
		    "under strict");
	}
	seccomp_release(ctx);
	mark(r, SANDBOX_M_SECCOMP_STRICT, SANDBOX_ON, 0, "no execve, no fork "
	    "(threads only), no socket but socketpair");
	return 0;
fail:
	seterr(err, len, -rc, NULL, "seccomp");
	mark(r, c->profile == SANDBOX_STRICT && is_on(r, SANDBOX_M_SECCOMP) ?
	    SANDBOX_M_SECCOMP_STRICT : SANDBOX_M_SECCOMP, SANDBOX_FAILED, -rc,
	    "%s", err);
	return -1;
}

/* ---- the guarantees ---------------------------------------------------- */

static bool
r_net(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_NETNS) || is_on(r, SANDBOX_M_SECCOMP);
}

static bool
r_read(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_LANDLOCK_FS);
}

static bool
r_write(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_LANDLOCK_FS) ||
	    (is_on(r, SANDBOX_M_MOUNTNS) && is_on(r, SANDBOX_M_USERNS));
}

static bool
r_signal(const struct sandbox_report *r)
{
	return (is_on(r, SANDBOX_M_PIDNS) ||
	    is_on(r, SANDBOX_M_LANDLOCK_SCOPE)) && is_on(r, SANDBOX_M_SECCOMP);
}

static bool
r_memory(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_CGROUP_MEMORY);
}

static bool
r_procs(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_CGROUP_PIDS) ||
	    (r->worker_uid != 0 && is_on(r, SANDBOX_M_USERNS) &&
	    is_on(r, SANDBOX_M_RLIMITS));
}

static bool
r_files(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_RLIMITS);
}

static bool
r_die(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_PIDNS);
}

static bool
r_root(const struct sandbox_report *r)
{
	if (r->worker_uid != 0)
		return true;
	return is_on(r, SANDBOX_M_CAPS) && is_on(r, SANDBOX_M_SECCOMP) &&
	    is_on(r, SANDBOX_M_LANDLOCK_FS);
}

static bool
r_env(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_ENV);
}

static bool
r_sockets(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_MOUNTNS) && (is_on(r, SANDBOX_M_NETNS) ||
	    is_on(r, SANDBOX_M_LANDLOCK_SCOPE));
}

static bool
r_kernel(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_SECCOMP) && is_on(r, SANDBOX_M_NNP);
}

static bool
r_strict(const struct sandbox_report *r)
{
	return is_on(r, SANDBOX_M_SECCOMP_STRICT);
}

#define P_STD (1 << SANDBOX_STANDARD)
#define P_STRICT (1 << SANDBOX_STRICT)
#define P_BOTH (P_STD | P_STRICT)

static const struct rule {
	const char *text;
	const char *by;			/* mechanisms that give it */
	const char *lifted_by;
	int profiles;
	bool net;			/* wanted only without --allow-net */
	bool (*holds)(const struct sandbox_report *);
} rules[] = {
	{ "no network", "network namespace, seccomp (sockets), landlock tcp",
	  "--allow-net", P_BOTH, true, r_net },
	{ "reads limited to the system's shared files (Python's own under "
	  "strict), the work directory and --allow-read", "landlock files, "
	  "mount namespace, user namespace", "--allow-read DIR", P_BOTH, false,
	  r_read },
	{ "writes only in the work directory, the private tmp and "
	  "--allow-write", "landlock files, mount namespace",
	  "--allow-write DIR", P_BOTH, false, r_write },
	{ "no unix socket of the machine (docker, dbus, X11)", "mount "
	  "namespace (pathname), network namespace or landlock scopes "
	  "(abstract)", "--allow-write DIR", P_BOTH, false, r_sockets },
	{ "no signals or tracing of processes outside the session",
	  "pid namespace, landlock scopes, seccomp", NULL, P_BOTH, false,
	  r_signal },
	{ "memory limited, swap off", "cgroup memory (rlimits: per process)",
	  "--memory SIZE", P_BOTH, false, r_memory },
	{ "process count limited", "cgroup pids, RLIMIT_NPROC in the user "
	  "namespace", "--max-procs N", P_BOTH, false, r_procs },
	{ "file size and open files limited", "rlimits", "--max-file-size SIZE",
	  P_BOTH, false, r_files },
	{ "every process it starts dies with the session", "pid namespace",
	  NULL, P_BOTH, false, r_die },
	{ "root is not special", "user namespace, capabilities, seccomp, "
	  "landlock", NULL, P_BOTH, false, r_root },
	{ "no secrets in the environment", "environment", NULL, P_BOTH, false,
	  r_env },
	{ "no ptrace, mount, namespace, bpf, io_uring or module calls",
	  "seccomp, no_new_privs", NULL, P_BOTH, false, r_kernel },
	{ "no new processes or programs; no socket but socketpair",
	  "seccomp strict", "--sandbox standard", P_STRICT, false, r_strict },
};

static bool
rule_wanted(const struct rule *ru, const struct sandbox_report *r,
    bool allow_net)
{
	if (!(ru->profiles & (1 << r->profile)))
		return false;
	if (ru->net && allow_net && r->profile != SANDBOX_STRICT)
		return false;
	return true;
}

/* --allow-net is not in the report; it shows as the netns being off. */
static bool
report_allow_net(const struct sandbox_report *r)
{
	return r->m[SANDBOX_M_NETNS].state == SANDBOX_OFF &&
	    r->profile != SANDBOX_NONE;
}

bool
sandbox_report_complete(const struct sandbox_report *r)
{
	size_t i;
	bool net = report_allow_net(r);

	for (i = 0; i < sizeof rules / sizeof *rules; i++)
		if (rule_wanted(&rules[i], r, net) && !rules[i].holds(r))
			return false;
	return true;
}

/* ---- sandbox_apply ------------------------------------------------------ */

typedef int (*step_fn)(const struct sandbox_conf *, struct sandbox_report *,
    char *, size_t);

static int
st_caps(const struct sandbox_conf *c, struct sandbox_report *r, char *e,
    size_t l)
{
	(void)c;
	return step_caps(r, e, l);
}

static int
st_nnp(const struct sandbox_conf *c, struct sandbox_report *r, char *e,
    size_t l)
{
	(void)c;
	return step_nnp(r, e, l);
}

/* The worker's steps, in order. */
static const struct step {
	const char *name;
	step_fn fn;
} apply_steps[] = {
	{ "environment", step_env },
	{ "rlimits", step_rlimits },
	{ "capabilities", st_caps },
	{ "no_new_privs", st_nnp },
	{ "landlock", step_landlock },
	{ "seccomp", step_seccomp },
};

int
sandbox_apply(const struct sandbox_conf *c, struct sandbox_report *r,
    char *err, size_t len)
{
	size_t i, n;
	int ln;

	if (c->profile == SANDBOX_NONE)
		return 0;
	/* When init ran sandbox_enter the paths are ready (inherited); a
	 * worker without it computes them here. */
	if (prepare_paths(c, err, len) < 0)
		return -1;
	/* init's hold on the temp dir is init's: a cell must not be able
	 * to let go of it */
	if (tmp_lock_fd >= 0) {
		close(tmp_lock_fd);
		tmp_lock_fd = -1;
	}
	/* init made itself non-dumpable; the worker's /proc/self must be
	 * its own (subprocess reads /proc/self/fd).  Only the session's
	 * processes share its uid, and ptrace is denied below. */
	if (prctl(PR_SET_DUMPABLE, 1) < 0) {
		seterr(err, len, errno, NULL, "prctl(PR_SET_DUMPABLE, 1)");
		return -1;
	}
	for (i = 0; i < sizeof apply_steps / sizeof *apply_steps; i++)
		if (apply_steps[i].fn(c, r, err, len) < 0)
			return -1;
	if (!c->require || sandbox_report_complete(r))
		return 0;
	ln = snprintf(err, len, "--sandbox-require: not enforced here:");
	n = ln > 0 ? (size_t)ln : 0;
	for (i = 0; i < sizeof rules / sizeof *rules && n < len; i++) {
		if (!rule_wanted(&rules[i], r, report_allow_net(r)) ||
		    rules[i].holds(r))
			continue;
		ln = snprintf(err + n, len - n, " %s (needs %s);",
		    rules[i].text, rules[i].by);
		n += ln > 0 ? (size_t)ln : 0;
	}
	if (n < len)
		snprintf(err + n, len - n, " see `coil --sandbox-report`");
	return -1;
}

/* ---- checkpoint gate (supervisor) ------------------------------------- */

int
sandbox_gate_answer(int fd, pid_t tid, bool allow)
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
	ok = allow && (pid_t)req->pid == tid && (req->data.nr ==
	    sc_nr("fork") || (req->data.nr == sc_nr("clone") &&
	    !(req->data.args[0] & (CLONE_VM | CLONE_THREAD))));
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

/* ---- report output (supervisor) --------------------------------------- */

void
sandbox_report_print(const struct sandbox_report *r, FILE *f)
{
	size_t i;
	int m;
	bool net = report_allow_net(r);

	fprintf(f, "sandbox %s on Linux %s, Landlock ABI %d: %s\n",
	    sandbox_profile_name(r->profile), r->kernel, r->landlock_abi,
	    r->profile == SANDBOX_NONE ? "no protection asked for" :
	    sandbox_report_complete(r) ? "every protection holds" :
	    "some protections are missing");
	for (m = 0; m < SANDBOX_M_COUNT; m++)
		fprintf(f, "  %-8s %-18s %s\n", state_names[r->m[m].state],
		    mech_names[m], r->m[m].detail);
	if (r->profile == SANDBOX_NONE)
		return;
	fprintf(f, "guarantees:\n");
	for (i = 0; i < sizeof rules / sizeof *rules; i++) {
		if (!rule_wanted(&rules[i], r, net))
			continue;
		fprintf(f, "  %-6s %s", rules[i].holds(r) ? "holds" : "NOT",
		    rules[i].text);
		if (rules[i].lifted_by != NULL)
			fprintf(f, " (lift: %s)", rules[i].lifted_by);
		fputc('\n', f);
	}
}

json_t *
sandbox_report_json(const struct sandbox_report *r)
{
	json_t *o, *mech, *rl;
	size_t i;
	int m;
	bool net = report_allow_net(r);

	mech = json_object();
	for (m = 0; m < SANDBOX_M_COUNT; m++)
		json_object_set_new(mech, mech_names[m], json_pack("{s:s,s:s}",
		    "state", state_names[r->m[m].state], "detail",
		    r->m[m].detail));
	rl = json_array();
	for (i = 0; i < sizeof rules / sizeof *rules; i++) {
		if (!rule_wanted(&rules[i], r, net))
			continue;
		json_array_append_new(rl, json_pack("{s:s,s:b,s:s,s:s?}",
		    "rule", rules[i].text, "holds", rules[i].holds(r), "by",
		    rules[i].by, "lifted_by", rules[i].lifted_by));
	}
	o = json_pack("{s:s,s:b,s:s,s:i,s:I,s:o,s:o}", "profile",
	    sandbox_profile_name(r->profile), "complete",
	    r->profile == SANDBOX_NONE || sandbox_report_complete(r),
	    "kernel", r->kernel, "landlock_abi", r->landlock_abi,
	    "worker_uid", (json_int_t)r->worker_uid, "mechanisms", mech,
	    "rules", rl);
	return o;
}

/* ---- the audit hook's configuration (worker) --------------------------- */

json_t *
sandbox_audit_conf(const struct sandbox_conf *c, const struct sandbox_report *r)
{
	json_t *o, *rl, *hid;
	size_t i;
	bool strict = c->profile == SANDBOX_STRICT;

	rl = json_array();
	for (i = 0; i < LL.n; i++) {
		char a[4];
		int n = 0;
		uint64_t x = LL.v[i].access;

		if (x & (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR))
			a[n++] = 'r';
		if (x & (LANDLOCK_ACCESS_FS_WRITE_FILE |
		    LANDLOCK_ACCESS_FS_MAKE_REG))
			a[n++] = 'w';
		if (x & LANDLOCK_ACCESS_FS_EXECUTE)
			a[n++] = 'x';
		a[n] = '\0';
		json_array_append_new(rl, json_pack("[s,s]", LL.v[i].path, a));
	}
	hid = json_array();
	for (i = 0; i < LL.nhidden; i++)
		json_array_append_new(hid, json_string(LL.hidden[i]));
	for (i = 0; i < M.n; i++)
		json_array_append_new(hid, json_string(M.v[i]));
	o = json_pack("{s:s,s:s,s:s,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:o,"
	    "s:o,s:I,s:I,s:I,s:I}",
	    "profile", sandbox_profile_name(c->profile),
	    "workdir", P.workdir,
	    "tmpdir", P.tmpdir,
	    "allow_net", c->allow_net && !strict,
	    "net_enforced", r_net(r),
	    "landlock_fs", is_on(r, SANDBOX_M_LANDLOCK_FS),
	    "mount_root", is_on(r, SANDBOX_M_MOUNTNS),
	    "idmap", is_on(r, SANDBOX_M_USERNS) &&
	    r->worker_uid >= WORKER_UID_BASE,
	    "signals_scoped", is_on(r, SANDBOX_M_PIDNS) ||
	    is_on(r, SANDBOX_M_LANDLOCK_SCOPE),
	    "exec", !(strict && is_on(r, SANDBOX_M_SECCOMP_STRICT)),
	    "fork", !(strict && is_on(r, SANDBOX_M_SECCOMP_STRICT)),
	    "socket", !(strict && is_on(r, SANDBOX_M_SECCOMP_STRICT)),
	    "rules", rl, "hidden", hid,
	    "memory", (json_int_t)c->memory,
	    "max_procs", (json_int_t)c->max_procs,
	    "max_file_size", (json_int_t)c->max_file_size,
	    "max_files", (json_int_t)c->max_files);
	return o;
}

/* ---- probe and cleanup (supervisor) ------------------------------------ */

static ssize_t
read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

void
sandbox_probe(const struct sandbox_conf *conf, struct sandbox_report *out)
{
	struct sandbox_conf c;
	int p[2];
	pid_t pid;
	struct sandbox_report r;

	sandbox_report_init(out, conf->profile);
	if (conf->profile == SANDBOX_NONE)
		return;
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	/* the session cgroup is named after the probe's init: its pid is
	 * not known before the fork, so use a number no process has */
	c = *conf;
	c.require = false;
	c.session = (pid_t)(WORKER_UID_SPAN + getpid());
	sandbox_report_init(&r, c.profile);
	pid = sandbox_spawn(&c, &r);
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		char err[512];
		pid_t w;
		char **env;

		close(p[0]);
		if (sandbox_enter(&c, &r, err, sizeof err) < 0) {
			if (write(p[1], &r, sizeof r) < 0)
				_exit(EXIT_SANDBOX);
			_exit(EXIT_SANDBOX);
		}
		w = fork();
		if (w == 0) {
			env = sandbox_env(&c, environ);
			environ = env;
			sandbox_apply(&c, &r, err, sizeof err);
			if (write(p[1], &r, sizeof r) < 0)
				_exit(EXIT_PROTOCOL);
			_exit(0);
		}
		if (w > 0)
			while (waitpid(w, NULL, 0) < 0 && errno == EINTR)
				;
		_exit(0);
	}
	close(p[1]);
	if (read_full(p[0], &r, sizeof r) == (ssize_t)sizeof r)
		*out = r;
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	sandbox_cleanup(&c);
}

/* Kill every process left in one session cgroup and remove it. */
static void
cg_end(const struct cg *cg)
{
	char path[PATH_MAX + 64], buf[8192];
	int tries;

	if (cg->version == 2 && cg_write(cg, "cgroup.kill", "1") == 0) {
		for (tries = 0; tries < 100 && rmdir(cg->dir) < 0 &&
		    errno == EBUSY; tries++)
			usleep(2000);
		return;
	}
	snprintf(path, sizeof path, "%s/cgroup.procs", cg->dir);
	for (tries = 0; tries < 100; tries++) {
		char *p, *end;
		bool any = false;

		if (read_file(path, buf, sizeof buf) < 0)
			return;
		for (p = buf; *p; p = end) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			if (pid > 0) {
				kill((pid_t)pid, SIGKILL);
				any = true;
			}
		}
		if (!any && rmdir(cg->dir) == 0)
			return;
		if (!any && errno != EBUSY)
			return;
		usleep(2000);
	}
}

/*
 * Remove the tree under the directory fd `dir` (consumed), then nothing
 * else: every step is relative to an fd opened with O_NOFOLLOW, so a
 * symlink planted by a cell is removed, never followed, and another
 * filesystem mounted inside is left alone.
 */
static void
rm_under(int dir, dev_t dev, int depth)
{
	DIR *d = fdopendir(dir);
	struct dirent *e;
	struct stat st;

	if (d == NULL) {
		close(dir);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		int sub;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (st.st_dev != dev || depth > 64)
			continue;
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		/* A cell may have taken its own rights away: ours to give
		 * back.  AT_SYMLINK_NOFOLLOW: should the entry have become
		 * a symlink since fstatat, its target is not touched. */
		if (sub < 0 && errno == EACCES && st.st_uid == geteuid() &&
		    fchmodat(dirfd(d), e->d_name, 0700,
		    AT_SYMLINK_NOFOLLOW) == 0)
			sub = openat(dirfd(d), e->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			rm_under(sub, dev, depth + 1);
		unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* base/name and all under it, if it is a directory of ours; with
 * only_unlocked, only if no init holds it (en_tmp's flock). */
static void
tmp_remove(const char *base, const char *name, bool only_unlocked)
{
	struct stat st;
	int b, fd, tries;

	b = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b < 0)
		return;
	fd = openat(b, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (only_unlocked && flock(fd, LOCK_EX | LOCK_NB) < 0)) {
		if (fd >= 0)
			close(fd);
		close(b);
		return;
	}
	/* Our own session's: its init is dying (the janitor) or dead; a
	 * second at most for it to let go, so no cell writes on while the
	 * tree is removed. */
	for (tries = 0; !only_unlocked && tries < 100 &&
	    flock(fd, LOCK_EX | LOCK_NB) < 0; tries++)
		usleep(10000);
	rm_under(fd, st.st_dev, 0);
	unlinkat(b, name, AT_REMOVEDIR);
	close(b);
}

/* coil-<N>-XXXXXX: N, else 0. */
static long
tmp_owner(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "coil-", 5) != 0)
		return 0;
	n = strtol(name + 5, &end, 10);
	if (end == name + 5 || *end != '-' || strlen(end + 1) != 6)
		return 0;
	return n;
}

/* The temp dirs under base named for session, or (session 0) those of
 * coils that are gone. */
static void
tmp_sweep(const char *base, pid_t session)
{
	DIR *d = opendir(base);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		long n = tmp_owner(e->d_name);

		if (n <= 0)
			continue;
		if (session != 0 ? n == (long)session : owner_dead(n))
			tmp_remove(base, e->d_name, session == 0);
	}
	closedir(d);
}

static const char *
tmp_base_of(const struct sandbox_conf *c)
{
	return c->tmp_base != NULL ? c->tmp_base : "/tmp";
}

/* The hierarchies a session cgroup may be in: v1's pids and memory, v2. */
static const char *const cg_ctrls[] = { "pids", "memory", NULL };

void
sandbox_cleanup(const struct sandbox_conf *c)
{
	pid_t session = c->session != 0 ? c->session : getpid();
	struct cg cg;
	size_t i;

	for (i = 0; i < sizeof cg_ctrls / sizeof *cg_ctrls; i++)
		if (cg_locate(cg_ctrls[i], session, &cg) &&
		    access(cg.dir, F_OK) == 0)
			cg_end(&cg);
	tmp_sweep(tmp_base_of(c), session);
}

void
sandbox_sweep(const struct sandbox_conf *c)
{
	pid_t session = c->session != 0 ? c->session : getpid();
	struct cg cg;
	size_t i;

	for (i = 0; i < sizeof cg_ctrls / sizeof *cg_ctrls; i++)
		if (cg_locate(cg_ctrls[i], session, &cg))
			cg_sweep(cg.base, session);
	tmp_sweep(tmp_base_of(c), 0);
}
