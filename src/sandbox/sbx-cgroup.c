/*
 * sbx-cgroup.c: the session's cgroup, which limits memory (swap off) and
 * the process count for the whole session, whatever uid it runs as: root
 * ignores RLIMIT_NPROC, so the cgroup is what stops a fork bomb.  Run by
 * init (cg_enter); the supervisor ends it (cg_cleanup) and removes those
 * of coils that died without doing so (cg_sweep_stale); the worker reads
 * its CPU quota for the thread counts (cg_cpus_allowed).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

	/* fs(proc): the kernel's */
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

	/* fs(proc): the kernel's */
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


/* Remove coil.N cgroups whose coil died without cleaning up.  Only an
 * empty cgroup can be removed, so rmdir is also the test that nothing of
 * that session still runs.  fs(cgroup): cells cannot make links there. */
static void
cg_sweep(const char *base, pid_t session)
{
	DIR *d;
	struct dirent *e;

	/* fs(cgroup): the cgroup file system: cells cannot make links there */
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
		    !sbx_owner_dead(n))
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
	return sbx_write_file(path, val);
}

static bool
cg_has(const struct cg *cg, const char *file)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof path, "%s/%s", cg->dir, file);
	/* fs(cgroup): the cgroup file system: cells cannot make links there */
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
	if (sbx_read_file(path, buf, sizeof buf) < 0)
		return false;
	for (p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		if (strcmp(p, ctrl) == 0)
			return true;
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg->base);
	snprintf(want, sizeof want, "+%s", ctrl);
	if (sbx_write_file(path, want) < 0)
		return false;
	snprintf(path, sizeof path, "%s/cgroup.controllers", cg->dir);
	if (sbx_read_file(path, buf, sizeof buf) < 0)
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
	if (sbx_read_file(path, buf, sizeof buf) < 0)
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

	if (sbx_skipped(c, r, m))
		return;
	/* Prefer the hierarchy that actually has the controller. */
	if (v2->version == 2 && cg2_controller(v2, ctrl)) {
		cg = *v2;
		v2ok = true;
	} else if (!cg_locate(ctrl, session, &cg)) {
		sbx_mark(r, m, SANDBOX_MISSING, 0, "no %s controller mounted "
		    "(neither cgroup v1 nor v2)", ctrl);
		return;
	}
	if (!v2ok) {
		/* fs(cgroup): the cgroup file system: cells cannot make
		 * links there */
		if (mkdir(cg.dir, 0755) < 0 && errno != EEXIST) {
			sbx_mark(r, m, SANDBOX_MISSING, errno, "cannot create "
			    "'%s': %s; %s", cg.dir, strerror(errno), cg_hint);
			return;
		}
	}
	if (strcmp(ctrl, "pids") == 0) {
		snprintf(val, sizeof val, "%ld", c->max_procs);
		if (cg_write(&cg, "pids.max", val) < 0)
			goto out;
		if (cg_join(&cg) < 0)
			goto out;
		sbx_mark(r, m, SANDBOX_ON, 0, "pids.max=%ld in %s (v%d)",
		    c->max_procs, cg.dir, cg.version);
		return;
	}
	/* memory, swap off */
	snprintf(val, sizeof val, "%llu", c->memory);
	sbx_fmt_size(sz, sizeof sz, c->memory);
	if (cg.version == 2) {
		if (cg_write(&cg, "memory.max", val) < 0)
			goto out;
		if (cg_has(&cg, "memory.swap.max") &&
		    cg_write(&cg, "memory.swap.max", "0") < 0)
			goto out;
	} else {
		if (cg_write(&cg, "memory.limit_in_bytes", val) < 0)
			goto out;
		/* memsw = mem means no swap; without swap accounting,
		 * swappiness 0 is the best left. */
		if (cg_has(&cg, "memory.memsw.limit_in_bytes")) {
			if (cg_write(&cg, "memory.memsw.limit_in_bytes",
			    val) < 0)
				goto out;
		} else {
			cg_write(&cg, "memory.swappiness", "0");
		}
	}
	if (cg_join(&cg) < 0)
		goto out;
	sbx_mark(r, m, SANDBOX_ON, 0, "%s, swap off, in %s (v%d)", sz, cg.dir,
	    cg.version);
	return;
out:
	sbx_mark(r, m, SANDBOX_MISSING, errno, "%s: %s; %s", cg.dir,
	    strerror(errno), cg_hint);
}

/* The cgroup step: it never fails closed, a cgroup it cannot have is
 * only missing. */
int
cg_enter(struct sbx *sb)
{
	const struct sandbox_conf *c = sb->c;
	struct sandbox_report *r = sb->r;
	pid_t session = sb->session;
	struct cg v2;

	/* The v2 hierarchy, even without controllers, gives cgroup.kill:
	 * without a PID namespace, join it so sandbox_cleanup can end the
	 * session at once.  (With controllers there, cg_one uses it.) */
	/* fs(cgroup): the cgroup file system: cells cannot make links there */
	if (!cg_locate(NULL, session, &v2) || (getpid() == 1 &&
	    !cg2_has_controllers(&v2)) || (mkdir(v2.dir, 0755) < 0 &&
	    errno != EEXIST) || cg_join(&v2) < 0)
		v2.version = 0;
	cg_one(c, r, SANDBOX_M_CGROUP_PIDS, "pids", session, &v2);
	cg_one(c, r, SANDBOX_M_CGROUP_MEMORY, "memory", session, &v2);
	return 0;
}

/* CPUs this process may use: its affinity, capped by a CPU quota of its
 * cgroup if there is one. */
long
cg_cpus_allowed(void)
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
		if (sbx_read_file(path, buf, sizeof buf) > 0 &&
		    sscanf(buf, "%lld %lld", &q, &p) == 2 && q > 0 && p > 0 &&
		    (q + p - 1) / p < n)
			n = (long)((q + p - 1) / p);
	}
	if (cg_locate("cpu", 0, &cg)) {
		long long q = -1, p = 0;

		snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", cg.base);
		if (sbx_read_file(path, buf, sizeof buf) > 0)
			q = atoll(buf);
		snprintf(path, sizeof path, "%s/cpu.cfs_period_us", cg.base);
		if (sbx_read_file(path, buf, sizeof buf) > 0)
			p = atoll(buf);
		if (q > 0 && p > 0 && (q + p - 1) / p < n)
			n = (long)((q + p - 1) / p);
	}
	return n;
}

/* Kill every process left in one session cgroup and remove it. */
static void
cg_end(const struct cg *cg)
{
	char path[PATH_MAX + 64], buf[8192];
	int tries;

	if (cg->version == 2 && cg_write(cg, "cgroup.kill", "1") == 0) {
		/* fs(cgroup): the cgroup file system: cells cannot make
		 * links there */
		for (tries = 0; tries < 100 && rmdir(cg->dir) < 0 &&
		    errno == EBUSY; tries++)
			usleep(2000);
		return;
	}
	snprintf(path, sizeof path, "%s/cgroup.procs", cg->dir);
	for (tries = 0; tries < 100; tries++) {
		char *p, *end;
		bool any = false;

		if (sbx_read_file(path, buf, sizeof buf) < 0)
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
		/* fs(cgroup): the cgroup file system: cells cannot make
		 * links there */
		if (!any && rmdir(cg->dir) == 0)
			return;
		if (!any && errno != EBUSY)
			return;
		usleep(2000);
	}
}

/* The hierarchies a session cgroup may be in: v1's pids and memory, v2. */
static const char *const cg_ctrls[] = { "pids", "memory", NULL };

/* Kill what is left in the session's cgroups and remove them. */
void
cg_cleanup(pid_t session)
{
	struct cg cg;
	size_t i;

	for (i = 0; i < sizeof cg_ctrls / sizeof *cg_ctrls; i++)
		/* fs(cgroup): the cgroup file system: cells cannot make
		 * links there */
		if (cg_locate(cg_ctrls[i], session, &cg) &&
		    access(cg.dir, F_OK) == 0)
			cg_end(&cg);
}

/* The coil.N cgroups beside this session's whose coil is gone. */
void
cg_sweep_stale(pid_t session)
{
	struct cg cg;
	size_t i;

	for (i = 0; i < sizeof cg_ctrls / sizeof *cg_ctrls; i++)
		if (cg_locate(cg_ctrls[i], session, &cg))
			cg_sweep(cg.base, session);
}
