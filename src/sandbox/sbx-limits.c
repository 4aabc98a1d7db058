/*
 * sbx-limits.c: what the worker does to itself before Landlock and
 * seccomp, in sandbox_apply's order:
 *
 *   environment      an allow-list (lim_env, for sandbox_env), then the
 *                    original block, coil's own secrets in it, erased
 *   rlimits          DATA (not AS, which starves OpenBLAS's thread stacks),
 *                    FSIZE, NOFILE, CORE 0, NPROC inside the user namespace
 *   capabilities     none, bounding set empty, securebits locked
 *   no_new_privs     set-uid bits and file capabilities give nothing, and
 *                    Landlock and seccomp need it
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>

extern char **environ;

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

/* Passed through as they are: none is a secret. */
static const char *const env_keep[] = {
	"PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "TERM",
	"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
	"NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS",
	"PIP_FIND_LINKS",	/* the wheels %pip installs from, offline */
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
	ev->v = sbx_realloc(ev->v, (ev->n + 2) * sizeof *ev->v);
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

/*
 * The venv in force (sandbox.h), as its bin/activate says it: VIRTUAL_ENV
 * and its bin/ first on PATH, so that a cell's `!tabulate` or
 * subprocess finds its scripts.  Without one (--no-venv), no
 * VIRTUAL_ENV from coil's own environment, nor its bin/ on PATH.
 */
static void
env_venv(struct envv *ev, const char *venv)
{
	char *bin = venv != NULL ? sbx_asprintf("%s/bin", venv) : NULL;
	char *bin_old = NULL, *path = NULL, *np;
	const char *p, *end;
	size_t i, k;

	/* the VIRTUAL_ENV coil was started in goes, and its bin/ with it */
	for (i = k = 0; i < ev->n; i++) {
		if (env_name_is(ev->v[i], "VIRTUAL_ENV")) {
			if (ev->v[i][12] == '/')
				bin_old = sbx_asprintf("%s/bin", ev->v[i] + 12);
			free(ev->v[i]);
		} else if (env_name_is(ev->v[i], "PATH")) {
			path = ev->v[i];
		} else {
			ev->v[k++] = ev->v[i];
		}
	}
	ev->n = k;
	ev->v[k] = NULL;
	np = sbx_realloc(NULL, (path != NULL ? strlen(path) : 32) +
	    (bin != NULL ? strlen(bin) : 0) + 8);
	strcpy(np, "PATH=");
	if (bin != NULL)
		strcat(np, bin);
	/* no PATH at all (under none): bin/ before the shell's default */
	for (p = path != NULL ? path + 5 : "/usr/local/bin:/usr/bin:/bin";
	    *p != '\0';
	    p = *end != '\0' ? end + 1 : end) {
		end = strchrnul(p, ':');
		k = (size_t)(end - p);
		if ((bin != NULL && strlen(bin) == k &&
		    strncmp(p, bin, k) == 0) || (bin_old != NULL &&
		    strlen(bin_old) == k && strncmp(p, bin_old, k) == 0))
			continue;
		if (np[5] != '\0')
			strcat(np, ":");
		strncat(np, p, k);
	}
	if (path != NULL || bin != NULL)
		env_push(ev, np);
	else
		free(np);
	if (venv != NULL)
		env_push(ev, sbx_asprintf("VIRTUAL_ENV=%s", venv));
	free(path);
	free(bin);
	free(bin_old);
}

/* sandbox_env; tmpdir: the private temp dir init chose, or "" */
char **
lim_env(const struct sandbox_conf *c, char *const *env, const char *tmpdir)
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
			env_push(&ev, sbx_strdup(env[i]));
		env_venv(&ev, c->venv);
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
			env_push(&ev, sbx_strdup(e));
	}
	if (!env_has(&ev, "PATH"))
		env_push(&ev, sbx_strdup("PATH=/usr/local/bin:/usr/bin:/bin"));
	env_venv(&ev, c->venv);
	/* fs(user): the work dir the user named, in the worker before any
	 * cell runs */
	if (c->workdir == NULL || realpath(c->workdir, wd) == NULL) {
		if (getcwd(wd, sizeof wd) == NULL)
			snprintf(wd, sizeof wd, "/");
	}
	/* init chose it (root_tmp) and the worker inherited the choice */
	tmp = tmpdir[0] != '\0' ? tmpdir : "/tmp";
	env_push(&ev, sbx_asprintf("HOME=%s", wd));
	env_push(&ev, sbx_asprintf("TMPDIR=%s", tmp));
	env_push(&ev, sbx_asprintf("TMP=%s", tmp));
	env_push(&ev, sbx_asprintf("TEMP=%s", tmp));
	/* Caches are disposable: keep them out of the user's work dir. */
	env_push(&ev, sbx_asprintf("MPLCONFIGDIR=%s/matplotlib", tmp));
	env_push(&ev, sbx_asprintf("XDG_CACHE_HOME=%s/cache", tmp));
	env_push(&ev, sbx_strdup("MPLBACKEND=Agg"));
	cpus = cg_cpus_allowed();
	for (i = 0; i < sizeof env_threads / sizeof *env_threads; i++)
		if (!env_has(&ev, env_threads[i]))
			env_push(&ev, sbx_asprintf("%s=%ld", env_threads[i],
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
int
lim_env_scrub(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;
	char buf[4096], *p;
	unsigned long start = 0, end = 0;
	int field;
	size_t i, n = 0;

	if (sbx_read_file("/proc/self/stat", buf, sizeof buf) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL) {
		sbx_mark(r, SANDBOX_M_ENV, SANDBOX_FAILED, errno, "reading "
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
			sbx_seterr(sb->err, sb->len, 0, "call sandbox_env and "
			    "set environ before sandbox_apply", "environ still "
			    "points to the original environment");
			sbx_mark(r, SANDBOX_M_ENV, SANDBOX_FAILED, 0, "%s",
			    sb->err);
			return -1;
		}
		n++;
	}
	if (start != 0 && end > start)
		memset((void *)start, 0, end - start);
	sbx_mark(r, SANDBOX_M_ENV, SANDBOX_ON, 0, "an allow-list of %zu "
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

int
lim_rlimits(struct sbx *sb)
{
	const struct sandbox_conf *c = sb->c;
	struct sandbox_report *r = sb->r;
	char mem[32], fsz[32], nproc[48];

	/* RLIMIT_DATA, not AS: address space counts every thread's
	 * reserved stack, so OpenBLAS would fail long before memory is
	 * short.  It is per process; the memory cgroup bounds the sum. */
#ifndef SBX_ASAN
	if (limit(RLIMIT_DATA, c->memory) < 0)
		goto out;
#endif
	/* Past the size a write fails with EFBIG (OSError) instead of
	 * the process dying of SIGXFSZ. */
	signal(SIGXFSZ, SIG_IGN);
	if (limit(RLIMIT_FSIZE, c->max_file_size) < 0)
		goto out;
	if (limit(RLIMIT_NOFILE, (rlim_t)c->max_files) < 0)
		goto out;
	if (limit(RLIMIT_CORE, 0) < 0)
		goto out;
	/* RLIMIT_NPROC counts the real uid's processes in its user
	 * namespace: set it only when the session has one of its own,
	 * or it would count the user's whole desktop.  Root is exempt
	 * in the initial namespace anyway. */
	nproc[0] = '\0';
	if (sbx_is_on(r, SANDBOX_M_USERNS)) {
		if (limit(RLIMIT_NPROC, (rlim_t)c->max_procs) < 0)
			goto out;
		snprintf(nproc, sizeof nproc, " NPROC=%ld", c->max_procs);
	}
	sbx_fmt_size(mem, sizeof mem, c->memory);
	sbx_fmt_size(fsz, sizeof fsz, c->max_file_size);
#ifdef SBX_ASAN
	snprintf(mem, sizeof mem, "unset (AddressSanitizer)");
#endif
	sbx_mark(r, SANDBOX_M_RLIMITS, SANDBOX_ON, 0, "DATA=%s FSIZE=%s "
	    "NOFILE=%ld CORE=0%s", mem, fsz, c->max_files, nproc);
	return 0;
out:
	sbx_seterr(sb->err, sb->len, errno, NULL, "setrlimit");
	sbx_mark(r, SANDBOX_M_RLIMITS, SANDBOX_FAILED, errno, "%s", sb->err);
	return -1;
}

/* ---- step: capabilities (worker) -------------------------------------- */

int
lim_caps(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int cap, e;

	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &h, d) < 0)
		goto out;
	if ((d[0].permitted | d[1].permitted) != 0) {
		/* Without SECBIT_NOROOT an execve as uid 0 would grant
		 * every capability again. */
		if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT |
		    SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
		    SECBIT_NO_CAP_AMBIENT_RAISE |
		    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
			goto out;
		for (cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++)
			if (prctl(PR_CAPBSET_DROP, cap) < 0)
				goto out;
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(d, 0, sizeof d);
	if (syscall(SYS_capset, &h, d) < 0)
		goto out;
	sbx_mark(r, SANDBOX_M_CAPS, SANDBOX_ON, 0, "none left, bounding set "
	    "empty, securebits locked");
	return 0;
out:
	e = errno;
	sbx_seterr(sb->err, sb->len, e, NULL, "dropping capabilities");
	sbx_mark(r, SANDBOX_M_CAPS, SANDBOX_FAILED, e, "%s", sb->err);
	return -1;
}

/* ---- step: no_new_privs (worker) -------------------------------------- */

int
lim_nnp(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		sbx_seterr(sb->err, sb->len, errno, NULL,
		    "PR_SET_NO_NEW_PRIVS");
		sbx_mark(r, SANDBOX_M_NNP, SANDBOX_FAILED, errno, "%s",
		    sb->err);
		return -1;
	}
	sbx_mark(r, SANDBOX_M_NNP, SANDBOX_ON, 0, "set-uid bits and file "
	    "capabilities give nothing");
	return 0;
}
