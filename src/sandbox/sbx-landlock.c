/*
 * sbx-landlock.c: Landlock, in the worker, after no_new_privs and before
 * seccomp: the file access allow-list, TCP bind/connect, and the signal
 * and abstract-socket scopes.  It works without any namespace, so it is
 * the floor everywhere.  The ABI is probed and what this kernel lacks is
 * reported missing, as the kernel's samples/landlock/sandboxer.c does.
 * The rules in force are kept in the process's state for the audit hook.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock-compat.h"

#define LL_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
    LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LL_R (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_X LANDLOCK_ACCESS_FS_EXECUTE
#define LL_DEV (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
    LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LL_ALL (~0ULL)

/* Add a rule for the file or dir open at fd (O_PATH); record it under
 * `path`, which must be free of symlinks. */
static int
ll_add_fd(struct sbx_landlock *ll, int rs, int fd, const char *path,
    bool dir, uint64_t access)
{
	struct coil_landlock_path_beneath_attr pb;

	access &= ll->handled;
	if (!dir)
		access &= LL_FILE;
	pb.allowed_access = access;
	pb.parent_fd = fd;
	if (coil_landlock_add_rule(rs, COIL_LANDLOCK_RULE_PATH_BENEATH, &pb,
	    0) < 0)
		return -1;
	ll->v = sbx_realloc(ll->v, (ll->n + 1) * sizeof *ll->v);
	ll->v[ll->n].path = sbx_strdup(path);
	ll->v[ll->n].access = access;
	ll->n++;
	return 0;
}

/* A rule for path, which may be missing (no rule then) or a symlink. */
static int
ll_add(struct sbx_landlock *ll, int rs, const char *path, uint64_t access)
{
	char real[PATH_MAX], link[64];
	struct stat st;
	ssize_t n;
	int fd, rc, e;

	/* fs(worker): in the worker, in its new root, before any cell runs:
	 * a path of the sandbox's binds */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -1;
	if (fstat(fd, &st) < 0)
		goto out;
	/* the path the kernel resolved, for the audit hook */
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	/* fs(worker): in the worker, in its new root, before any cell runs:
	 * a path of the sandbox's binds */
	n = readlink(link, real, sizeof real - 1);
	if (n > 0 && real[0] == '/')
		real[n] = '\0';
	else
		snprintf(real, sizeof real, "%s", path);
	rc = ll_add_fd(ll, rs, fd, real, S_ISDIR(st.st_mode), access);
	e = errno;
	close(fd);
	errno = e;
	return rc;
out:
	e = errno;
	close(fd);
	errno = e;
	return -1;
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
ll_etc(struct sbx_landlock *ll, int rs, const char *dir, uint64_t access,
    int depth)
{
	DIR *d;
	struct dirent *e;
	char path[PATH_MAX];
	struct stat st;
	size_t i;
	int rc = 0, fd;

	/* fs(worker): in the worker, in its new root, before any cell runs:
	 * a path of the sandbox's binds */
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
		/* fs(worker): in the worker, in its new root, before any
		 * cell runs: a path of the sandbox's binds */
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
			sbx_strv_add(&ll->hidden, path);
			continue;
		}
		for (i = 0; depth == 0 && i < sizeof etc_walk /
		    sizeof *etc_walk; i++)
			if (strcmp(e->d_name, etc_walk[i]) == 0)
				walk = true;
		if (walk && S_ISDIR(st.st_mode))
			rc = ll_etc(ll, rs, path, access, depth + 1);
		else
			rc = ll_add_fd(ll, rs, fd, path, S_ISDIR(st.st_mode),
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

/* The rules of the profile, into the ruleset rs. */
static int
ll_rules(const struct sbx *sb, struct sbx_landlock *ll, int rs)
{
	const struct sandbox_report *r = sb->r;
	const struct sbx_paths *paths = &sb->st->paths;
	bool strict = sb->c->profile == SANDBOX_STRICT;
	bool priv = sbx_is_on(r, SANDBOX_M_MOUNTNS);
	uint64_t rw = LL_ALL & ~(strict ? LL_X : 0);
	uint64_t ro = LL_R | (strict ? 0 : LL_X);
	size_t i;

#define ADD(p, a) do { if (ll_add(ll, rs, (p), (a)) < 0) return -1; } \
	while (0)
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
			if (ll_etc(ll, rs, "/etc", LL_R, 0) < 0)
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
	for (i = 0; i < sbx_n_dev_nodes; i++) {
		char p[64];

		snprintf(p, sizeof p, "/dev/%s", sbx_dev_nodes[i]);
		ADD(p, LL_DEV);
	}
	if (priv) {
		ADD("/tmp", rw);
		ADD("/dev/shm", rw);
	}
	for (i = 0; i < paths->nb; i++)
		ADD(paths->b[i].path, paths->b[i].rw ? rw : ro);
#undef ADD
	return 0;
}

/* The machine gives no Landlock: say why, for each of its three parts. */
static void
ll_missing(struct sandbox_report *r, int e)
{
	r->landlock_abi = 0;
	sbx_mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_MISSING, e, "%s; %s",
	    strerror(e), e == EOPNOTSUPP ? "Landlock is built in but "
	    "off: add landlock to the lsm= boot parameter" :
	    "the kernel has no Landlock (5.13+)");
	sbx_mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_MISSING, e, "no "
	    "Landlock");
	sbx_mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_MISSING, e, "no "
	    "Landlock");
}

/* What the ruleset handles at this ABI (clamped to what coil knows);
 * returns the size of the attribute to pass. */
static size_t
ll_attr(int abi, bool net_off, struct coil_landlock_ruleset_attr *a)
{
	size_t asize = COIL_LANDLOCK_ATTR_SIZE_V1;

	a->handled_access_fs = coil_landlock_fs_by_abi[abi - 1];
	if (abi >= 4 && net_off) {
		a->handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
		    LANDLOCK_ACCESS_NET_CONNECT_TCP;
		asize = COIL_LANDLOCK_ATTR_SIZE_V4;
	}
	if (abi >= 6) {
		a->scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
		    LANDLOCK_SCOPE_SIGNAL;
		asize = COIL_LANDLOCK_ATTR_SIZE_V6;
	}
	return asize;
}

/* Create the ruleset, add the rules, restrict the worker: 0, or -1 with
 * errno and sb->err filled. */
static int
ll_enforce(struct sbx *sb, const struct coil_landlock_ruleset_attr *a,
    size_t asize)
{
	struct sbx_landlock *ll = &sb->st->ll;
	int rs, e;

	ll->handled = a->handled_access_fs;
	rs = coil_landlock_create_ruleset(a, asize, 0);
	if (rs < 0) {
		sbx_seterr(sb->err, sb->len, errno, NULL,
		    "landlock_create_ruleset");
		return -1;
	}
	if (ll_rules(sb, ll, rs) < 0) {
		e = errno;
		close(rs);
		errno = e;
		sbx_seterr(sb->err, sb->len, errno, NULL, "landlock_add_rule");
		return -1;
	}
	if (coil_landlock_restrict_self(rs, 0) < 0) {
		e = errno;
		close(rs);
		errno = e;
		sbx_seterr(sb->err, sb->len, errno, NULL,
		    "landlock_restrict_self");
		return -1;
	}
	close(rs);
	return 0;
}

/* In force: what each of the three parts gives at this (clamped) ABI. */
static void
ll_report(struct sbx *sb, int abi, bool net_off)
{
	const struct sbx_landlock *ll = &sb->st->ll;
	struct sandbox_report *r = sb->r;

	if (ll->hidden.n > 0 || sb->c->profile == SANDBOX_STRICT)
		sbx_mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_ON, 0, "ABI %d: %zu "
		    "rules; %zu secret%s of /etc left out", r->landlock_abi,
		    ll->n, ll->hidden.n, ll->hidden.n == 1 ? "" : "s");
	else
		sbx_mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_ON, 0, "ABI %d: %zu "
		    "rules; the secrets of /etc are not world-readable and "
		    "the worker owns none", r->landlock_abi, ll->n);
	if (!net_off)
		sbx_mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_OFF, 0,
		    "--allow-net");
	else if (abi >= 4)
		sbx_mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_ON, 0, "TCP bind "
		    "and connect denied");
	else
		sbx_mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_MISSING, 0, "ABI "
		    "%d < 4 (Linux 6.7)", abi);
	if (abi >= 6)
		sbx_mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_ON, 0, "no "
		    "signals or abstract unix sockets outside the worker");
	else
		sbx_mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_MISSING, 0, "ABI "
		    "%d < 6 (Linux 6.12)", abi);
}

/* The Landlock step. */
int
ll_apply(struct sbx *sb)
{
	const struct sandbox_conf *c = sb->c;
	struct sandbox_report *r = sb->r;
	struct coil_landlock_ruleset_attr a = { 0 };
	size_t asize;
	int abi, e;
	bool net_off = !c->allow_net || c->profile == SANDBOX_STRICT;

	if (sbx_skipped(c, r, SANDBOX_M_LANDLOCK_FS)) {
		sbx_mark(r, SANDBOX_M_LANDLOCK_NET, SANDBOX_MISSING, 0, "not "
		    "tried: skipped on request");
		sbx_mark(r, SANDBOX_M_LANDLOCK_SCOPE, SANDBOX_MISSING, 0, "not "
		    "tried: skipped on request");
		return 0;
	}
	abi = coil_landlock_abi();
	if (abi < 1) {
		ll_missing(r, errno);
		return 0;
	}
	r->landlock_abi = abi;
	if (abi > COIL_LANDLOCK_ABI_KNOWN)
		abi = COIL_LANDLOCK_ABI_KNOWN;
	asize = ll_attr(abi, net_off, &a);
	if (ll_enforce(sb, &a, asize) < 0) {
		e = errno;
		sbx_mark(r, SANDBOX_M_LANDLOCK_FS, SANDBOX_FAILED, e, "%s",
		    sb->err);
		return -1;
	}
	ll_report(sb, abi, net_off);
	return 0;
}

/* The access a rule gives, as the audit hook's letters: r, w, x. */
void
ll_letters(uint64_t access, char a[4])
{
	int n = 0;

	if (access & (LANDLOCK_ACCESS_FS_READ_FILE |
	    LANDLOCK_ACCESS_FS_READ_DIR))
		a[n++] = 'r';
	if (access & (LANDLOCK_ACCESS_FS_WRITE_FILE |
	    LANDLOCK_ACCESS_FS_MAKE_REG))
		a[n++] = 'w';
	if (access & LANDLOCK_ACCESS_FS_EXECUTE)
		a[n++] = 'x';
	a[n] = '\0';
}

int
sandbox_scope_self(char *why, size_t len)
{
	struct coil_landlock_ruleset_attr a;
	int abi = coil_landlock_abi(), rs, e;

	if (abi < 0) {
		snprintf(why, len, "the kernel has no Landlock (%s)",
		    strerror(errno));
		return -1;
	}
	if (abi < 6) {
		snprintf(why, len, "the kernel's Landlock (ABI %d) has no "
		    "scopes (ABI 6)", abi);
		return -1;
	}
	memset(&a, 0, sizeof a);
	a.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	rs = coil_landlock_create_ruleset(&a, COIL_LANDLOCK_ATTR_SIZE_V6, 0);
	if (rs < 0) {
		snprintf(why, len, "landlock_create_ruleset: %s",
		    strerror(errno));
		return -1;
	}
	if (coil_landlock_restrict_self(rs, 0) < 0) {
		e = errno;
		close(rs);
		snprintf(why, len, "landlock_restrict_self: %s%s", strerror(e),
		    e == E2BIG ? " (16 domains nested: a branch of a branch "
		    "of ... too deep)" : "");
		return -1;
	}
	close(rs);
	return 0;
}
