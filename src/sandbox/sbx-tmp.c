/*
 * sbx-tmp.c: the cells' private temp dir (sbx.h), chosen by init in
 * sandbox_enter's order after root_build, and its removal by the
 * supervisor (sandbox_cleanup, sandbox_sweep).
 *
 * The dir is removed through descriptors, O_NOFOLLOW, never off its
 * device: a cell may have planted links and mounts in it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The cells' private temp dir.  With the new root it is that root's own
 * /tmp: a tmpfs of the session's mount namespace, gone with the namespace
 * however coil ends (SIGKILL included), and nothing is made on the host.
 * Without it, a dir coil-<session>-XXXXXX under conf->tmp_base, locked
 * (flock) by init while the session lives: sandbox_cleanup removes it,
 * and sandbox_sweep the ones whose coil died before it could.
 */
int
root_tmp(struct sbx *sb)
{
	const char *base = sb->c->tmp_base != NULL ? sb->c->tmp_base : "/tmp";
	struct sbx_paths *p = &sb->st->paths;
	int *lock = &sb->st->tmp_lock_fd;
	char tmpl[PATH_MAX];

	if (sbx_is_on(sb->r, SANDBOX_M_MOUNTNS)) {
		snprintf(p->tmpdir, sizeof p->tmpdir, "/tmp");
		return 0;
	}
	if (snprintf(tmpl, sizeof tmpl, "%s/coil-%ld-XXXXXX", base,
	    (long)sb->session) >= (int)sizeof tmpl) {
		sbx_seterr(sb->err, sb->len, ENAMETOOLONG, "set TMPDIR to a "
		    "shorter path", "temporary directory under '%s'", base);
		return -1;
	}
	/* fs(private): the cells' temp dir, made 0700 in $TMPDIR by mkdtemp */
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, p->tmpdir) == NULL) {
		sbx_seterr(sb->err, sb->len, errno, "set TMPDIR to a writable "
		    "directory", "creating a temporary directory '%s'", tmpl);
		return -1;
	}
	*lock = open(p->tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*lock < 0 || flock(*lock, LOCK_EX | LOCK_NB) < 0) {
		sbx_seterr(sb->err, sb->len, errno, NULL, "locking the "
		    "temporary directory '%s'", p->tmpdir);
		return -1;
	}
	return sbx_paths_add(p, "tmpdir", p->tmpdir, true, sb->err, sb->len);
}

/*
 * Remove the tree under the directory fd `dir` (consumed), then nothing
 * else: every step is relative to an fd opened with O_NOFOLLOW, so a
 * symlink planted by a cell is removed, never followed, and another
 * filesystem mounted inside is left alone.  fs(private): the cells' temp
 * dir, by descriptor.
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
		/* fs(private): the cells' temp dir, removed through
		 * descriptors, O_NOFOLLOW, never off its device */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
				/* fs(private): the cells' temp dir, removed
				 * through descriptors, O_NOFOLLOW, never
				 * off its device */
				unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (st.st_dev != dev || depth > 64)
			continue;
		/* fs(private): the cells' temp dir, removed through
		 * descriptors, O_NOFOLLOW, never off its device */
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		/* A cell may have taken its own rights away: ours to give
		 * back.  AT_SYMLINK_NOFOLLOW: should the entry have become
		 * a symlink since fstatat, its target is not touched. */
		/* fs(private): the cells' temp dir, removed through
		 * descriptors, never off its device */
		if (sub < 0 && errno == EACCES && st.st_uid == geteuid() &&
		    /* fs(private): the cells' temp dir, removed through
		     * descriptors, O_NOFOLLOW, never off its device */
		    fchmodat(dirfd(d), e->d_name, 0700,
		    AT_SYMLINK_NOFOLLOW) == 0)
			sub = openat(dirfd(d), e->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			rm_under(sub, dev, depth + 1);
		/* fs(private): the cells' temp dir, removed through
		 * descriptors, O_NOFOLLOW, never off its device */
		unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* base/name and all under it, if it is a directory of ours; with
 * only_unlocked, only if no init holds it (root_tmp's flock). */
static void
tmp_remove(const char *base, const char *name, bool only_unlocked)
{
	struct stat st;
	int b, fd, tries;

	/* fs(private): $TMPDIR, where coil makes its temp dirs; the dir's
	 * name is opened O_NOFOLLOW */
	b = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b < 0)
		return;
	/* fs(private): a temp dir of coil's in $TMPDIR, O_NOFOLLOW */
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
	/* fs(private): a temp dir of coil's in $TMPDIR, by name */
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
void
root_tmp_sweep(const char *base, pid_t session)
{
	/* fs(private): $TMPDIR, listed for coil's temp dirs */
	DIR *d = opendir(base);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		long n = tmp_owner(e->d_name);

		if (n <= 0)
			continue;
		if (session != 0 ? n == (long)session : sbx_owner_dead(n))
			tmp_remove(base, e->d_name, session == 0);
	}
	closedir(d);
}
