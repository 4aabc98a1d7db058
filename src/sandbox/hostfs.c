/*
 * hostfs.c - the supervisor's way to the host's files (see hostfs.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostfs.h"
#include "util.h"

#define HOSTFS_LINKS 40		/* links followed in one walk, as the
				   kernel's MAXSYMLINKS */

/* The cell-writable roots, by identity: set before any cell runs. */
static struct hostfs_root {
	dev_t dev;
	ino_t ino;
} *hostfs_root;
static size_t hostfs_nroots;

static void
hostfs_add_root(const char *path)
{
	struct stat st;

	/* The user named it before any cell ran: links on the way are
	 * theirs. */
	/* fs(user): a root the user named, before any cell ran */
	if (path == NULL || stat(path, &st) == -1 || !S_ISDIR(st.st_mode))
		return;
	hostfs_root = xrealloc(hostfs_root,
	    (hostfs_nroots + 1) * sizeof *hostfs_root);
	hostfs_root[hostfs_nroots].dev = st.st_dev;
	hostfs_root[hostfs_nroots].ino = st.st_ino;
	hostfs_nroots++;
}

void
hostfs_roots(const struct sandbox_conf *c)
{
	size_t i;

	hostfs_nroots = 0;
	if (c->profile == SANDBOX_NONE)
		return;
	/* A work dir of "/" is refused when the sandbox starts
	 * (sandbox.c): no session, so nothing for cells to write. */
	if (c->workdir == NULL || strcmp(c->workdir, "/") != 0)
		hostfs_add_root(c->workdir != NULL ? c->workdir : ".");
	for (i = 0; i < c->n_allow_write; i++)
		hostfs_add_root(c->allow_write[i]);
}

static bool
hostfs_is_root(const struct stat *st)
{
	size_t i;

	for (i = 0; i < hostfs_nroots; i++)
		if (hostfs_root[i].dev == st->st_dev &&
		    hostfs_root[i].ino == st->st_ino)
			return true;
	return false;
}

void
hostfs_close(struct hostfs_dir *dir)
{
	if (dir->fd >= 0)
		close(dir->fd);
	dir->fd = -1;
}

/* ---- the walk --------------------------------------------------------- */

/* The directories walked so far, "/" first: ".." goes back one. */
struct hostfs_stack {
	struct hostfs_dir *d;
	size_t n, cap;
};

static void
hostfs_push(struct hostfs_stack *s, int fd, bool cells)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->d = xrealloc(s->d, s->cap * sizeof *s->d);
	}
	s->d[s->n].fd = fd;
	s->d[s->n].cells = cells;
	s->d[s->n].magic = false;
	s->n++;
}

/* Back to the first n directories. */
static void
hostfs_pop(struct hostfs_stack *s, size_t n)
{
	while (s->n > n)
		hostfs_close(&s->d[--s->n]);
}

/* The link fd (O_PATH | O_NOFOLLOW) names, spliced in front of what is
 * left of the walk (rest): *rest is replaced.  An absolute target starts
 * again from "/".  -1 with errno. */
static int
hostfs_follow(struct hostfs_stack *s, int fd, char **rest)
{
	char target[PATH_MAX], *joined;
	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	ssize_t n = readlinkat(fd, "", target, sizeof target - 1);

	if (n < 0)
		return -1;
	if (n == 0) {
		errno = ENOENT;
		return -1;
	}
	target[n] = '\0';
	if (target[0] == '/')
		hostfs_pop(s, 1);
	xasprintf(&joined, "%s/%s", target, *rest);
	free(*rest);
	*rest = joined;
	return 0;
}

/* The next component of *rest, cut off in place ("" when none is left). */
static char *
hostfs_next(char **rest)
{
	char *c = *rest, *slash;

	while (*c == '/')
		c++;
	slash = strchr(c, '/');
	if (slash != NULL) {
		*slash = '\0';
		*rest = slash + 1;
	} else {
		*rest = c + strlen(c);
	}
	return c;
}

static bool
hostfs_more(const char *rest)
{
	while (*rest == '/')
		rest++;
	return *rest != '\0';
}

/* Whether dir is on procfs, where no cell writes and links are magic. */
static bool
hostfs_proc(int dir)
{
	struct statfs sf;

	return fstatfs(dir, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* One step from the top of s to c: 0 (a directory pushed, or for the
 * last component of a HOSTFS_PARENT walk, *name set), 1 (a link
 * followed: *buf, the walk's text, is replaced and *rest points in it),
 * or -1 with errno (and *planted 1 for a link where cells may write on
 * the way, 2 for the last component). */
static int
hostfs_step(struct hostfs_stack *s, const char *c, bool lastc,
    enum hostfs_last last, char **buf, char **rest, char **name,
    int *planted)
{
	struct hostfs_dir *top = &s->d[s->n - 1];
	struct stat st;
	char *left;
	int fd, rc;

	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	fd = openat(top->fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT && last == HOSTFS_MKDIRS) {
		/* 0700: whatever coil keeps there is the user's alone */
		/* fs(walked): the walk itself: a component at a time,
		 * O_NOFOLLOW, from a descriptor */
		if (mkdirat(top->fd, c, 0700) == -1 && errno != EEXIST)
			return -1;
		/* fs(walked): the walk itself: a component at a time,
		 * O_NOFOLLOW, from a descriptor */
		fd = openat(top->fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd == -1) {
		if (errno == ENOENT && lastc && last == HOSTFS_PARENT) {
			*name = xstrdup(c);	/* a file to make */
			return 0;
		}
		return -1;
	}
	if (fstat(fd, &st) == -1)
		goto out;
	if (S_ISLNK(st.st_mode)) {
		/* A link a cell may have planted is never followed. */
		if (top->cells) {
			*planted = lastc ? 2 : 1;
			errno = ELOOP;
			goto out;
		}
		/* /proc's links (/dev/stdin's end, a shell's <(...)) name
		 * what their text does not: the kernel follows them, when
		 * the file is opened. */
		if (lastc && last == HOSTFS_PARENT && hostfs_proc(top->fd)) {
			close(fd);
			top->magic = true;
			*name = xstrdup(c);
			return 0;
		}
		left = xstrdup(*rest);
		rc = hostfs_follow(s, fd, &left);
		close(fd);
		free(*buf);
		*buf = *rest = left;
		return rc == 0 ? 1 : -1;
	}
	if (lastc && last == HOSTFS_PARENT) {
		close(fd);
		*name = xstrdup(c);
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		goto out;
	}
	hostfs_push(s, fd, top->cells || hostfs_is_root(&st));
	return 0;
out:
	rc = errno;
	close(fd);
	errno = rc;
	return -1;
}

/* path made absolute against the supervisor's working directory: a new
 * string, or NULL with err filled. */
static char *
hostfs_absolute(const char *path, char *err, size_t errlen)
{
	char *cwd, *buf;

	if (*path == '/')
		return xstrdup(path);
	if ((cwd = getcwd(NULL, 0)) == NULL) {
		err_set(err, errlen, "getcwd: %s", strerror(errno));
		return NULL;
	}
	xasprintf(&buf, "%s/%s", cwd, path);
	free(cwd);
	return buf;
}

int
hostfs_walk(const char *path, enum hostfs_last last, struct hostfs_dir *dir,
    char **name, char *err, size_t errlen)
{
	struct hostfs_stack s = { NULL, 0, 0 };
	struct stat st;
	char *buf, *rest, *c, *got = NULL;
	int planted = 0, links = 0, fd, rc, e;

	dir->fd = -1;
	dir->cells = dir->magic = false;
	if ((buf = hostfs_absolute(path, err, errlen)) == NULL)
		return -1;
	rest = buf;
	/* "file/" names a directory, as the kernel reads it: no file */
	if (last == HOSTFS_PARENT && buf[strlen(buf) - 1] == '/') {
		errno = EISDIR;
		goto out;
	}
	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		goto out;
	if (fstat(fd, &st) == -1) {
		e = errno;
		close(fd);
		errno = e;
		goto out;
	}
	hostfs_push(&s, fd, hostfs_is_root(&st));
	while (got == NULL) {
		c = hostfs_next(&rest);
		if (*c == '\0')
			break;
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			hostfs_pop(&s, s.n > 1 ? s.n - 1 : 1);
			continue;
		}
		rc = hostfs_step(&s, c, !hostfs_more(rest), last, &buf, &rest,
		    &got, &planted);
		if (rc == -1)
			goto out;
		if (rc == 1 && ++links > HOSTFS_LINKS) {
			errno = ELOOP;
			goto out;
		}
	}
	if (last == HOSTFS_PARENT && got == NULL) {
		errno = EISDIR;
		goto out;
	}
	*dir = s.d[--s.n];
	hostfs_pop(&s, 0);
	free(s.d);
	free(buf);
	if (name != NULL)
		*name = got;
	else
		free(got);
	return 0;
out:
	e = errno;
	free(got);
	hostfs_pop(&s, 0);
	free(s.d);
	free(buf);
	errno = e;		/* ELOOP for a link the cells could have made */
	if (planted == 2)
		return err_set(err, errlen, "a symbolic link where cells may "
		    "write: coil does not follow it; give the real path");
	if (planted)
		return err_set(err, errlen, "a symbolic link on the way lies "
		    "where cells may write, and coil does not follow it there: "
		    "give the real path");
	return err_set(err, errlen, "%s", strerror(e));
}

/* ---- files ------------------------------------------------------------- */

/* Check what fd (opened O_NOFOLLOW, and O_NONBLOCK where cells write)
 * is: 0, and blocking; or -1 with err, fd closed. */
static int
hostfs_check(int fd, const struct hostfs_dir *dir, char *err, size_t errlen)
{
	struct stat st;
	int flags, rc = -1;

	if (fstat(fd, &st) == -1)
		err_set(err, errlen, "%s", strerror(errno));
	/* Where cells write, a FIFO or a device is one they made; the
	 * user's own (--record /dev/stderr) are theirs to name. */
	else if (dir->cells && !S_ISREG(st.st_mode))
		err_set(err, errlen, "not a regular file, where cells may "
		    "write: coil does not use it; give another path");
	else if (S_ISDIR(st.st_mode))
		err_set(err, errlen, "%s", strerror(EISDIR));
	/* Another name for a file made elsewhere: a cell could have made
	 * it to have us read or write that file. */
	else if (dir->cells && st.st_nlink != 1)
		err_set(err, errlen, "it has %ju hard links, where cells may "
		    "write: coil does not use it; give another path",
		    (uintmax_t)st.st_nlink);
	else if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
		err_set(err, errlen, "%s", strerror(errno));
	else
		rc = 0;
	if (rc == -1)
		close(fd);
	return rc;
}

int
hostfs_open(const struct hostfs_dir *dir, const char *name,
    enum hostfs_mode mode, char *err, size_t errlen)
{
	static const int how[] = {
		[HOSTFS_READ] = O_RDONLY,
		[HOSTFS_APPEND] = O_WRONLY | O_APPEND | O_CREAT,
		[HOSTFS_CREATE] = O_WRONLY | O_CREAT | O_EXCL,
	};
	int fd;

	/* O_NONBLOCK: a FIFO planted at name cannot hold us up. */
	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	/* fs(walked): name in a directory hostfs_walk gave.  O_NONBLOCK
	 * where cells write: a FIFO planted at name cannot hold us up (the
	 * user's own FIFO is theirs to wait on). */
	fd = openat(dir->fd, name, how[mode] | (dir->magic ? 0 : O_NOFOLLOW) |
	    (dir->cells ? O_NONBLOCK : 0) | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd == -1 && errno == ELOOP && dir->cells)
		return err_set(err, errlen, "a symbolic link where cells may "
		    "write: coil does not follow it; give the real path");
	if (fd == -1 && errno == ELOOP)
		return err_set(err, errlen, "it became a symbolic link since "
		    "coil looked: give the real path");
	/* a FIFO with no reader, opened to write without blocking */
	if (fd == -1 && errno == ENXIO && dir->cells)
		return err_set(err, errlen, "not a regular file, where cells "
		    "may write: coil does not use it; give another path");
	if (fd == -1)
		return err_set(err, errlen, "%s", strerror(errno));
	return hostfs_check(fd, dir, err, errlen) == -1 ? -1 : fd;
}

int
hostfs_open_path(const char *path, enum hostfs_mode mode, char *err,
    size_t errlen)
{
	struct hostfs_dir dir;
	char *name;
	int fd;

	if (hostfs_walk(path, HOSTFS_PARENT, &dir, &name, err, errlen) == -1)
		return -1;
	fd = hostfs_open(&dir, name, mode, err, errlen);
	free(name);
	hostfs_close(&dir);
	return fd;
}

int
hostfs_new_open(struct hostfs_new *n, const struct hostfs_dir *dir,
    const char *name, char *err, size_t errlen)
{
	struct stat st;
	unsigned r;
	int tries;

	n->fd = -1;
	n->tmp = NULL;
	for (tries = 0; tries < 100 && n->fd == -1; tries++) {
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (unsigned)now_ns();
		free(n->tmp);
		xasprintf(&n->tmp, ".%.200s.coil-%08x", name, r);
		/* A name a cell made first is simply not ours: O_EXCL. */
		/* fs(walked): the walk itself: a component at a time,
		 * O_NOFOLLOW, from a descriptor */
		n->fd = openat(dir->fd, n->tmp, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0666);
		if (n->fd == -1 && errno != EEXIST)
			break;
	}
	if (n->fd == -1) {
		free(n->tmp);
		n->tmp = NULL;
		return err_set(err, errlen, "%s", strerror(errno));
	}
	/* the old file's permissions, never its set-id bits: the new file
	 * is the supervisor's (root's, on servers), and a set-uid one would
	 * be set-uid on the host */
	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode))
		(void)fchmod(n->fd, st.st_mode & 0777);
	return 0;
}

int
hostfs_new_commit(struct hostfs_new *n, const struct hostfs_dir *dir,
    const char *name, bool ok, char *err, size_t errlen)
{
	int rc = 0;

	if (n->tmp == NULL)
		return 0;
	/* renameat replaces whatever name is, a link included, and follows
	 * nothing; a directory there makes it fail. */
	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	if (ok && renameat(dir->fd, n->tmp, dir->fd, name) == -1)
		rc = err_set(err, errlen, "%s", strerror(errno));
	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	if (!ok || rc == -1)
		unlinkat(dir->fd, n->tmp, 0);
	free(n->tmp);
	n->tmp = NULL;
	return rc;
}

int
hostfs_remove(const struct hostfs_dir *dir, const char *name)
{
	/* fs(walked): the walk itself: a component at a time, O_NOFOLLOW,
	 * from a descriptor */
	return unlinkat(dir->fd, name, 0);
}

char *
hostfs_state_dir(void)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char *dir;

	/* The XDG rule: a relative XDG_STATE_HOME is to be ignored. */
	if (state != NULL && *state == '/')
		xasprintf(&dir, "%s/coil", state);
	else if (home != NULL && *home == '/')
		xasprintf(&dir, "%s/.local/state/coil", home);
	else
		return NULL;
	return dir;
}

bool
hostfs_cells_reach(const char *path)
{
	struct hostfs_dir d;
	char err[256];

	if (path == NULL || *path != '/')
		return false;
	/* refused: a link of the cells' own on the way, so theirs too */
	if (hostfs_walk(path, HOSTFS_DIR, &d, NULL, err, sizeof err) == -1)
		return errno != ENOENT && errno != ENOTDIR && errno != EACCES;
	hostfs_close(&d);
	return d.cells;
}
