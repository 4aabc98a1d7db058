/*
 * figure.c - figure files read without trusting their names (see
 * figure.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "figure.h"
#include "util.h"

static const char *figure_work, *figure_dir;
static int figure_dirfd = -1;	/* the figure dir as it was at start */

void
figure_dirs(const char *workdir, const char *dir)
{
	figure_work = workdir;
	figure_dir = dir;
	/* Before any cell runs, the path is the user's: links in it are
	 * theirs (a .coil on a bigger disk), followed once, here. */
	if (figure_dirfd < 0)
		figure_dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* s with prefix dir and a '/' after it: what follows; else NULL. */
static const char *
figure_under(const char *s, const char *dir)
{
	size_t n = dir != NULL ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 0 || strncmp(s, dir, n) != 0 || s[n] != '/')
		return NULL;
	return s + n + 1;
}

/* Open path for reading when it names a file right in the figure dir,
 * from a base the worker cannot swap (the work dir, or the figure dir
 * itself when it lies elsewhere): -1 with errno otherwise. */
static int
figure_open(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		    RESOLVE_NO_MAGICLINKS,
	};
	const char *name = figure_under(path, figure_dir), *base, *rel;
	int dfd, fd, e;

	if (name == NULL || *name == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, "..") == 0 || strcmp(name, ".") == 0) {
		errno = EPERM;
		return -1;
	}
	/* The dir held since start: swapped since, it is still that one. */
	if (figure_dirfd >= 0)
		return (int)syscall(SYS_openat2, figure_dirfd, name, &how,
		    sizeof how);
	rel = figure_under(path, figure_work);
	base = rel != NULL ? figure_work : figure_dir;
	if (rel == NULL)
		rel = name;
	if ((dfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof how);
	e = errno;
	close(dfd);
	errno = e;
	return fd;
}

char *
figure_read(const char *path, size_t max, size_t *len)
{
	struct stat st;
	struct buf b;
	char chunk[65536];
	ssize_t n;
	int fd = figure_open(path), e;

	if (fd == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if ((unsigned long long)st.st_size > max) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	buf_init(&b);
	/* The size may still change under us: read no more than max. */
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			e = errno;
			buf_free(&b);
			close(fd);
			errno = e;
			return NULL;
		}
		if (b.len + (size_t)n > max) {
			buf_free(&b);
			close(fd);
			errno = EFBIG;
			return NULL;
		}
		buf_add(&b, chunk, (size_t)n);
	}
	close(fd);
	*len = b.len;
	return b.p != NULL ? b.p : xstrdup("");
}
