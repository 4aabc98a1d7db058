/*
 * sbx-root.c: the mount namespace and the worker's new root, holding only
 * the system dirs (read-only), the work dir, the private tmp and the
 * --allow-* dirs: the rest of the machine, its unix sockets included, is
 * not there to be reached.  Credentials kept in a bound home are covered.
 * Run by init, in sandbox_enter's order: root_mountns, (the root user
 * namespace, sbx-ns.c), root_build, then sbx-tmp.c's root_tmp.
 *
 * fs(newroot), the file-system inventory's mark (tests/unit/
 * fs-inventory.py): a call of init's, building the worker's root in its
 * own mount namespace before the worker exists; nothing it does is seen
 * outside that namespace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* System dirs bound read-only into the new root, when they are real dirs;
 * when they are symlinks (merged /usr) the link is copied instead. */
static const char *const root_dirs[] = {
	"usr", "etc", "opt", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
};

#define NEWROOT "/tmp"		/* mount point of the new root while it is
				   built; any dir works, /tmp always exists */

/* Bind src on dst read-only, nosuid, and nodev unless it is a device. */
static int
bind_flags_ro(const char *src, const char *dst, bool rec, bool dev)
{
	struct mount_attr a = { 0 };

	/* fs(newroot) */
	if (mount(src, dst, NULL, MS_BIND | (rec ? MS_REC : 0), NULL) < 0)
		return -1;
	a.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
	    (dev ? 0 : MOUNT_ATTR_NODEV);
	if (mount_setattr(AT_FDCWD, dst, rec ? AT_RECURSIVE : 0, &a,
	    sizeof a) == 0)
		return 0;
	/* mount_setattr is 5.12+; a remount covers the top mount only */
	/* fs(newroot) */
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
		/* fs(newroot) */
		if (access(path, F_OK) == 0 && bind_ro(path, path, true) < 0)
			return -1;
	}
	return 0;
}

/* nosuid, nodev, and read-only unless the bind is writable; recursive. */
static int
bind_flags(const struct sbx_bind *b)
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
bind_idmap(struct sbx_bind *b, const struct sbx *sb, struct owner *own,
    size_t *nown, size_t maxown)
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
			fd = sb->userns;
		else if ((fd = ns_userns_mapped(st.st_uid, sb->outside,
		    st.st_gid, sb->outside)) < 0)
			return -1;
		if (*nown < maxown)
			own[(*nown)++] = (struct owner){ st.st_uid, st.st_gid,
			    fd };
	}
	a.attr_set = MOUNT_ATTR_IDMAP;
	a.userns_fd = fd;
	return mount_setattr(b->fd, "", AT_EMPTY_PATH, &a, sizeof a);
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
			/* fs(newroot) */
			if (mkdir(buf, mode) < 0 && errno != EEXIST)
				return -1;
			*p = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
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

static bool
named_bind(const struct sbx_paths *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->nb; i++)
		if (strcmp(p->b[i].path, path) == 0)
			return true;
	return false;
}

/* Cover real (a dir or a file, as dir says) if it is there and not named
 * by a bind; record it in st->masked. */
static int
mask_one(struct sbx_state *st, const char *real, bool dir)
{
	char dst[PATH_MAX + 32];
	struct stat lst;

	if (named_bind(&st->paths, real))
		return 0;
	snprintf(dst, sizeof dst, NEWROOT "%s", real);
	/* fs(newroot) */
	if (lstat(dst, &lst) < 0 || (dir ? !S_ISDIR(lst.st_mode) :
	    !S_ISREG(lst.st_mode)))
		return 0;
	if (dir) {
		/* fs(newroot) */
		if (mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID |
		    MS_NODEV | MS_NOEXEC, "mode=0,size=4k") < 0)
			return -1;
	} else if (bind_ro(NEWROOT "/.coil-masked", dst, false) < 0) {
		return -1;
	}
	sbx_strv_add(&st->masked, real);
	return 0;
}

static int
mask_credentials(struct sbx_state *st)
{
	const struct sbx_paths *p = &st->paths;
	char real[PATH_MAX * 2];
	size_t i, k;
	int fd;

	/* fs(newroot) */
	fd = open(NEWROOT "/.coil-masked", O_CREAT | O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	close(fd);
	for (i = 0; i < p->nb; i++) {
		for (k = 0; k < sizeof cred_dirs / sizeof *cred_dirs; k++) {
			snprintf(real, sizeof real, "%s/%s", p->b[i].path,
			    cred_dirs[k]);
			if (strlen(real) < PATH_MAX &&
			    mask_one(st, real, true) < 0)
				return -1;
		}
		for (k = 0; k < sizeof cred_files / sizeof *cred_files; k++) {
			snprintf(real, sizeof real, "%s/%s", p->b[i].path,
			    cred_files[k]);
			if (strlen(real) < PATH_MAX &&
			    mask_one(st, real, false) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * coil's own state (c->state_dir: history, transcripts) when it lies in a
 * bind, as it does for a person who starts coil in their home: covered
 * like a credential dir, and each dir on the way to it from the bind made
 * a mount point of its own (a bind on itself: the flags and id-map of the
 * bind it is in are kept), which a cell can neither rename nor remove
 * (EBUSY; mount and umount are not the worker's to call), so that no cell
 * can move the real one away and put one of its making where the next
 * coil looks.  state is the dir's real path (main_state), as the binds'
 * are: it lies in a bind the cells read or write, or they never see it.
 * Anything but a dir on the way (changed since the supervisor walked
 * it) fails the sandbox closed.
 */
static int
mask_state(struct sbx_state *st, const char *state)
{
	const struct sbx_paths *p = &st->paths;
	char dst[PATH_MAX + 32];
	const char *q;
	struct stat lst;
	size_t i, n, best = 0;

	if (state == NULL || strlen(state) >= PATH_MAX)
		return 0;
	for (i = 0; i < p->nb; i++) {
		n = strlen(p->b[i].path);
		if (n > best && strncmp(state, p->b[i].path, n) == 0 &&
		    state[n] == '/')
			best = n;
	}
	if (best == 0)
		return 0;
	for (q = state + best + 1; (q = strchr(q, '/')) != NULL; q++) {
		snprintf(dst, sizeof dst, NEWROOT "%.*s", (int)(q - state),
		    state);
		/* fs(newroot); swapped since the supervisor walked it:
		 * fail closed */
		if (lstat(dst, &lst) < 0 || !S_ISDIR(lst.st_mode)) {
			errno = ENOTDIR;
			return -1;
		}
		/* fs(newroot) */
		if (mount(dst, dst, NULL, MS_BIND, NULL) < 0)
			return -1;
	}
	return mask_one(st, state, true);
}

/*
 * The worker's root, built in parts by build_root below; each part returns
 * 0, or -1 with errno and `what` saying what failed.
 */
#define TRY(x, ...) do { if ((x) < 0) { \
		snprintf(what, wlen, __VA_ARGS__); return -1; } } while (0)

/* The owners of the binds and the user namespaces that id-map them. */
struct owners {
	struct owner v[8];
	size_t n;
};

/* Clone the binds first, detached: NEWROOT covers /tmp, where some may
 * be.  Root: id-map each, or if the filesystem cannot, give the worker's
 * user namespace up (it stays uid 0) and clone them all again. */
static int
clone_binds(struct sbx *sb, struct owners *own, char *what, size_t wlen)
{
	struct sbx_paths *p = &sb->st->paths;
	size_t i;

	for (i = 0; i < p->nb; i++) {
		struct sbx_bind *b = &p->b[i];

		/* fs(newroot); fs(held): the venv's dir, held since the
		 * start, not its path again */
		TRY(b->fd = open_tree(b->src >= 0 ? b->src : AT_FDCWD,
		    b->src >= 0 ? "" : b->path, OPEN_TREE_CLONE |
		    OPEN_TREE_CLOEXEC | AT_RECURSIVE |
		    (b->src >= 0 ? AT_EMPTY_PATH : 0)), "cloning '%s'",
		    b->path);
		if (sb->userns >= 0 && bind_idmap(b, sb, own->v, &own->n,
		    sizeof own->v / sizeof *own->v) < 0) {
			/* not fatal: the worker stays uid 0 instead */
			sbx_mark(sb->r, SANDBOX_M_USERNS, SANDBOX_MISSING,
			    errno, "id-mapped mount of '%s': %s; the "
			    "filesystem may not support it: the worker stays "
			    "uid 0, without capabilities", b->path,
			    strerror(errno));
			close(sb->userns);
			sb->userns = -1;
			/* an id-mapped clone cannot be un-mapped: redo */
			for (i = 0; i <= (size_t)(b - p->b); i++) {
				close(p->b[i].fd);
				p->b[i].fd = -1;
			}
			i = (size_t)-1;
			continue;
		}
		TRY(bind_flags(b), "flags of '%s'", b->path);
	}
	return 0;
}

/* The new root's tmpfs and the system dirs in it. */
static int
root_system(char *what, size_t wlen)
{
	char path[PATH_MAX + 32], link[PATH_MAX], src[64];
	struct stat st;
	ssize_t n;
	size_t i;

	/* fs(newroot) */
	TRY(mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=0755,size=1m"), "mounting the new root on '%s'", NEWROOT);
	for (i = 0; i < sizeof root_dirs / sizeof *root_dirs; i++) {
		snprintf(src, sizeof src, "/%s", root_dirs[i]);
		snprintf(path, sizeof path, NEWROOT "/%s", root_dirs[i]);
		/* fs(newroot) */
		if (lstat(src, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			/* fs(newroot) */
			n = readlink(src, link, sizeof link - 1);
			if (n < 0)
				continue;
			link[n] = '\0';
			/* fs(newroot) */
			TRY(symlink(link, path), "symlink '%s'", path);
		} else if (S_ISDIR(st.st_mode)) {
			/* fs(newroot) */
			TRY(mkdir(path, 0755), "mkdir '%s'", path);
			TRY(bind_ro(src, path, true), "binding '%s'", src);
		}
	}
	return 0;
}

/* /sys read-only, the /proc root_mountns made, a /dev of a few nodes. */
static int
root_kernel(const struct sbx *sb, char *what, size_t wlen)
{
	char path[PATH_MAX + 32], src[64];
	size_t i;
	int fd;

	/* /sys read-only: the CPU topology OpenBLAS and os.cpu_count
	 * read; Landlock narrows what is readable in it. */
	/* fs(newroot) */
	TRY(mkdir(NEWROOT "/sys", 0755), "mkdir /sys");
	TRY(bind_ro("/sys", NEWROOT "/sys", true), "binding /sys");
	/* with a PID namespace, root_mountns put the session's own there */
	/* fs(proc): the session's own /proc */
	TRY(mkdir(NEWROOT "/proc", 0555), "mkdir /proc");
	TRY(mount("/proc", NEWROOT "/proc", NULL, MS_BIND | MS_REC, NULL),
	    "binding /proc");
	if (sb->userns < 0 && sb->root)
		TRY(proc_ro(NEWROOT "/proc"), "read-only /proc/sys");
	/* fs(newroot) */
	TRY(mkdir(NEWROOT "/dev", 0755), "mkdir /dev");
	TRY(mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
	    "mode=0755,size=64k"), "mounting /dev");
	for (i = 0; i < sbx_n_dev_nodes; i++) {
		snprintf(src, sizeof src, "/dev/%s", sbx_dev_nodes[i]);
		snprintf(path, sizeof path, NEWROOT "/dev/%s",
		    sbx_dev_nodes[i]);
		/* fs(newroot) */
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		TRY(fd, "creating '%s'", path);
		close(fd);
		/* Read-only stops chmod of the host's node; reads and
		 * writes of a device still go to its driver. */
		TRY(bind_flags_ro(src, path, false, true), "binding '%s'",
		    src);
	}
	/* fs(newroot) */
	TRY(symlink("/proc/self/fd", NEWROOT "/dev/fd"), "symlink /dev/fd");
	TRY(symlink("/proc/self/fd/0", NEWROOT "/dev/stdin"), "/dev/stdin");
	/* fs(newroot) */
	TRY(symlink("/proc/self/fd/1", NEWROOT "/dev/stdout"), "/dev/stdout");
	TRY(symlink("/proc/self/fd/2", NEWROOT "/dev/stderr"), "/dev/stderr");
	return 0;
}

/* Private /dev/shm and /tmp: the worker's pages there are charged to its
 * memory cgroup and vanish with the session. */
static int
root_scratch(const struct sandbox_conf *c, char *what, size_t wlen)
{
	char opts[64];

	snprintf(opts, sizeof opts, "mode=1777,size=%lluk",
	    c->memory / 1024 ? c->memory / 1024 : 1);
	/* fs(newroot) */
	TRY(mkdir(NEWROOT "/dev/shm", 01777), "mkdir /dev/shm");
	TRY(mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
	    opts), "mounting /dev/shm");
	/* fs(newroot) */
	TRY(mkdir(NEWROOT "/tmp", 01777), "mkdir /tmp");
	TRY(mount("tmpfs", NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
	    opts), "mounting /tmp");
	/* fs(newroot) */
	TRY(mkdir(NEWROOT "/run", 0755), "mkdir /run");
	/* /var/tmp exists, empty and read-only: TMPDIR is where to write.
	 * (Not a symlink to /tmp: a bind under /var/tmp would follow it.) */
	/* fs(newroot) */
	TRY(mkdir(NEWROOT "/var", 0755), "mkdir /var");
	TRY(mkdir(NEWROOT "/var/tmp", 0755), "mkdir /var/tmp");
	return 0;
}

/* The binds at their own paths, parents before children (sorted). */
static int
root_binds(struct sbx_paths *p, char *what, size_t wlen)
{
	char path[PATH_MAX + 32];
	size_t i;

	for (i = 0; i < p->nb; i++) {
		struct sbx_bind *b = &p->b[i];

		snprintf(path, sizeof path, NEWROOT "%s", b->path);
		if (mkdir_p(path, 0755) < 0 && errno != EROFS)
			TRY(-1, "mkdir '%s'", path);
		/* fs(newroot) */
		TRY(move_mount(b->fd, "", AT_FDCWD, path,
		    MOVE_MOUNT_F_EMPTY_PATH), "mounting '%s'", b->path);
		close(b->fd);
		b->fd = -1;
	}
	return 0;
}

/* Hide the credentials and coil's state, seal the new root and pivot
 * into it. */
static int
root_enter(struct sbx_state *st, const char *state, char *what, size_t wlen)
{
	TRY(mask_credentials(st), "hiding credentials");
	TRY(mask_state(st, state), "hiding coil's state dir '%s'", state);
	/* Nothing may be created at the top of the new root. */
	/* fs(newroot) */
	TRY(mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV, NULL), "making the new root read-only");
	/* fs(newroot) */
	TRY(chdir(NEWROOT), "chdir to the new root");
	TRY(syscall(SYS_pivot_root, ".", "."), "pivot_root");
	/* fs(newroot) */
	TRY(umount2(".", MNT_DETACH), "detaching the old root");
	TRY(chdir("/"), "chdir /");
	return 0;
}
#undef TRY

/*
 * The worker's root: a read-only tmpfs holding the system dirs (read-only
 * binds), /sys read-only, a /dev of five nodes, private /tmp and /dev/shm,
 * a /proc of the session's own, and the binds (work dir, tmp, --allow-*)
 * at their own paths.  Everything else of the machine, its unix sockets
 * included, is not there to be named.  `what` says which part failed.
 */
static int
build_root(struct sbx *sb, char *what, size_t wlen)
{
	struct sbx_paths *p = &sb->st->paths;
	struct owners own = { .n = 0 };
	size_t i;
	int rc;

	rc = clone_binds(sb, &own, what, wlen) < 0 ||
	    root_system(what, wlen) < 0 ||
	    root_kernel(sb, what, wlen) < 0 ||
	    root_scratch(sb->c, what, wlen) < 0 ||
	    root_binds(p, what, wlen) < 0 ||
	    root_enter(sb->st, sb->c->state_dir, what, wlen) < 0 ? -1 : 0;
	for (i = 0; i < own.n; i++)
		if (own.v[i].fd != sb->userns)
			close(own.v[i].fd);
	for (i = 0; i < p->nb; i++) {
		if (p->b[i].fd >= 0)
			close(p->b[i].fd);
		p->b[i].fd = -1;
	}
	return rc;
}

/* The mount namespace failed half-way: fail closed, saying what. */
static int
mount_failed(struct sbx *sb, int e, const char *what)
{
	sbx_seterr(sb->err, sb->len, e, "report this with `coil "
	    "--sandbox-report`", "mount namespace: %s", what);
	sbx_mark(sb->r, SANDBOX_M_MOUNTNS, SANDBOX_FAILED, e, "%s", sb->err);
	errno = e;
	return -1;
}

/* The venv's bind, which sandbox.c's venv_bind made, takes its dir from
 * the cwd, which unshare moved to the new namespace's copy of the held
 * dir. */
static int
venv_here(struct sbx_paths *p, int held)
{
	size_t i;
	int fd;

	/* fs(held): the venv's dir, held since the start, entered by
	 * fchdir and moved into this namespace by unshare */
	if ((fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	for (i = 0; i < p->nb; i++)
		if (p->b[i].src == held) {
			p->b[i].src = fd;
			return 0;
		}
	close(fd);
	return 0;
}

/* A mount namespace of our own, and in it, when init is PID 1, a /proc
 * that shows the session only.  Before anything else that reads /proc:
 * the host's would show other processes under the pids we know. */
int
root_mountns(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;
	const char *what;
	int e;

	if (sbx_skipped(sb->c, r, SANDBOX_M_MOUNTNS))
		return 0;
	/* The venv's held dir is a mount of the host's namespace, which
	 * open_tree cannot clone from ours (EINVAL): but unshare moves the
	 * cwd to its copy in the new one, so enter the dir first and take
	 * it from there (init enters the work dir at its end). */
	if (sb->c->venv_fd >= 0 && fchdir(sb->c->venv_fd) < 0) {
		e = errno;
		return mount_failed(sb, e, "entering the venv's dir");
	}
	if (unshare(CLONE_NEWNS) < 0) {
		sbx_mark(r, SANDBOX_M_MOUNTNS, SANDBOX_MISSING, errno, "%s; "
		    "needs a user namespace or root: the work dir is enforced "
		    "by Landlock alone", strerror(errno));
		return 0;
	}
	/* Nothing done here may propagate back to the host. */
	what = "making / private";
	/* fs(proc): init's mount namespace, made private first */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		goto out;
	what = "taking the venv's dir into the mount namespace";
	if (sb->c->venv_fd >= 0 && venv_here(&sb->st->paths, sb->c->venv_fd)
	    < 0)
		goto out;
	what = "mounting the session's /proc";
	/* fs(proc): the session's own /proc */
	if (sb->pid1 && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) < 0)
		goto out;
	return 0;
out:
	e = errno;
	return mount_failed(sb, e, what);
}

/* The worker's root.  A kernel that lacks a piece of the mount API (the
 * new one is 5.2+, id-mapped mounts 5.12+) leaves the host's tree as it
 * was, and Landlock alone keeps the files. */
int
root_build(struct sbx *sb)
{
	struct sandbox_report *r = sb->r;
	const struct sbx_state *st = sb->st;
	char what[PATH_MAX + 64];
	int e;

	if (r->m[SANDBOX_M_MOUNTNS].state == SANDBOX_MISSING)
		return 0;
	if (build_root(sb, what, sizeof what) == 0) {
		sbx_mark(r, SANDBOX_M_MOUNTNS, SANDBOX_ON, 0, "new root: "
		    "system dirs read-only, %zu bind%s, private /tmp and "
		    "/dev/shm%s%s", st->paths.nb, st->paths.nb == 1 ? "" : "s",
		    sb->pid1 ? ", the session's /proc" : "", st->masked.n ?
		    "; credentials in the binds hidden" : "");
		return 0;
	}
	e = errno;
	/* fs(newroot) */
	umount2(NEWROOT, MNT_DETACH);
	if (e == ENOSYS || e == EPERM || e == EINVAL || e == EOPNOTSUPP) {
		sbx_mark(r, SANDBOX_M_MOUNTNS, SANDBOX_MISSING, e, "%s: %s; "
		    "the work dir is enforced by Landlock alone", what,
		    strerror(e));
		return 0;
	}
	return mount_failed(sb, e, what);
}
