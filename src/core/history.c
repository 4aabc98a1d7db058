/*
 * history.c - the history file (see history.h).
 *
 * The file is readline's format, an entry after a "#<seconds>" line and
 * its lines up to the next such line, with one difference: a line of a
 * cell that would read as a timestamp ("#1 load the data", a comment a
 * cell may well hold) is written after a backslash, and so is one that
 * begins with a backslash.  readline's own reader splits the entry
 * there and loses the line, so coil reads and writes the file itself.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <readline/history.h>

#include "history.h"
#include "hostfs.h"
#include "util.h"

/* The file's directory and name, as history_start found them: held for
 * the whole session.  The file itself is opened anew by name in that
 * directory for each append and for the trim, so that two coils sharing
 * it see each other's trims (the trim renames a new file over it). */
static struct {
	struct hostfs_dir dir;
	char *name;
} history = { { -1, false, false }, NULL };

#define HISTORY_LOCK_TRIES 20	/* of 10 ms: another coil's trim */

static bool
history_stamp(const char *line)
{
	return line[0] == '#' && isdigit((unsigned char)line[1]);
}

/* The file as it is at its name now, opened as mode says, and locked
 * against another coil's trim (flock): the descriptor, or -1.  A lock
 * held too long (a coil stuck mid-trim, or whoever else) is not waited
 * for: *locked says whether it was had. */
static int
history_open(enum hostfs_mode mode, bool *locked)
{
	struct stat a, b;
	char err[256];
	int fd, tries;

	*locked = false;
	fd = hostfs_open(&history.dir, history.name, mode, err, sizeof err);
	if (fd == -1)
		return -1;
	for (tries = 0; tries < HISTORY_LOCK_TRIES; tries++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*locked = true;
			break;
		}
		if (errno != EWOULDBLOCK)
			break;
		usleep(10000);
	}
	/* fs(walked): trimmed while we waited: the name is a new file now */
	if (*locked && fstat(fd, &a) == 0 && fstatat(history.dir.fd,
	    history.name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
		close(fd);
		return history_open(mode, locked);
	}
	return fd;
}

static void
history_append(const char *entry)
{
	struct buf b;
	const char *p = entry, *nl;
	bool locked;
	int fd;

	if ((fd = history_open(HOSTFS_APPEND, &locked)) == -1)
		return;
	buf_init(&b);
	buf_printf(&b, "#%lld\n", (long long)time(NULL));
	do {
		nl = strchr(p, '\n');
		if (history_stamp(p) || p[0] == '\\')
			buf_addstr(&b, "\\");
		buf_add(&b, p, nl != NULL ? (size_t)(nl - p) : strlen(p));
		buf_addstr(&b, "\n");
		p = nl + 1;
	} while (nl != NULL);
	/* One write: O_APPEND puts it whole at the end. */
	(void)write_all(fd, b.p, b.len);
	buf_free(&b);
	close(fd);
}

static void
history_add_entry(struct buf *entry, const char *stamp)
{
	if (entry->len == 0)
		return;
	add_history(entry->p);
	if (stamp[0] != '\0')
		add_history_time(stamp);
	buf_free(entry);
	buf_init(entry);
}

/* Load the entries of f. */
static void
history_read(FILE *f)
{
	char *line = NULL, stamp[32] = "";
	size_t cap = 0;
	ssize_t n;
	struct buf entry;
	bool first = true;

	buf_init(&entry);
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (history_stamp(line)) {
			history_add_entry(&entry, stamp);
			snprintf(stamp, sizeof stamp, "%.31s", line);
			first = true;
			continue;
		}
		if (!first)
			buf_addstr(&entry, "\n");
		buf_addstr(&entry, line[0] == '\\' ? line + 1 : line);
		first = false;
		/* before any timestamp (a file without them): a line each */
		if (stamp[0] == '\0') {
			history_add_entry(&entry, stamp);
			first = true;
		}
	}
	history_add_entry(&entry, stamp);
	buf_free(&entry);
	free(line);
}

int
history_start(const char *path, char *err, size_t errlen)
{
	char why[256];
	FILE *f;
	int fd;

	using_history();
	/* Entries are written after a "#<time>" line, and the lines up to
	 * the next one are read back as one entry: a cell stays whole. */
	history_write_timestamps = 1;
	history_multiline_entries = 1;
	history_comment_char = '#';
	if (path == NULL)
		return 0;
	if (hostfs_walk(path, HOSTFS_PARENT, &history.dir, &history.name,
	    why, sizeof why) == -1)
		return err_set(err, errlen, "'%s': %s", path, why);
	/* made if missing, and checked, before anything is kept there */
	if ((fd = hostfs_open(&history.dir, history.name, HOSTFS_APPEND, why,
	    sizeof why)) != -1) {
		close(fd);
		fd = hostfs_open(&history.dir, history.name, HOSTFS_READ, why,
		    sizeof why);
	}
	if (fd == -1) {
		hostfs_close(&history.dir);
		free(history.name);
		history.name = NULL;
		return err_set(err, errlen, "'%s': %s", path, why);
	}
	if ((f = fdopen(fd, "r")) != NULL) {
		history_read(f);
		fclose(f);
	} else {
		close(fd);
	}
	return 0;
}

/* A finished cell is one history entry, however many lines it has, so
 * that Up brings it back whole (and so does the next session: the file
 * keeps multi-line entries between timestamps). */
void
history_keep(const char *cell)
{
	char *entry;
	size_t n = strlen(cell);

	while (n > 0 && strchr(" \t\n", cell[n - 1]) != NULL)
		n--;
	if (n == 0)
		return;
	entry = xstrndup(cell, n);
	add_history(entry);
	/* kept after the line was read (the UI keeps a cell once it is
	 * answered): Up starts from the newest again */
	using_history();
	if (history.name != NULL)
		history_append(entry);
	free(entry);
}

/* The file's last HISTORY_LINES lines, from an entry's first line, as
 * readline's history_truncate_file keeps them, written anew and renamed
 * over it: the file as it was is never cut in place. */
static void
history_trim(void)
{
	struct hostfs_new nf;
	struct buf all;
	char chunk[65536], err[512];
	size_t lines = 0, i, from = 0, cut, skip;
	bool locked;
	ssize_t n;
	int fd;

	/* read and replaced under the lock, so no coil's append in between
	 * is lost; without it, left for a later trim */
	if ((fd = history_open(HOSTFS_READ, &locked)) == -1)
		return;
	if (!locked) {
		close(fd);
		return;
	}
	buf_init(&all);
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		buf_add(&all, chunk, (size_t)n);
	for (i = 0; i < all.len; i++)
		lines += all.p[i] == '\n';
	if (lines > HISTORY_LINES) {
		/* Past the first lines - HISTORY_LINES lines, then on to a
		 * timestamp, so no entry is kept in part. */
		for (skip = lines - HISTORY_LINES; from < all.len && skip > 0;
		    from++)
			skip -= all.p[from] == '\n';
		cut = from;
		while (from < all.len && !(history_stamp(all.p + from) &&
		    all.p[from - 1] == '\n'))
			from++;
		if (from == all.len)	/* no timestamps: by lines */
			from = cut;
		if (hostfs_new_open(&nf, &history.dir, history.name, err,
		    sizeof err) == 0) {
			bool ok = write_all(nf.fd, all.p + from,
			    all.len - from) == 0;

			ok = close(nf.fd) == 0 && ok;
			hostfs_new_commit(&nf, &history.dir, history.name, ok,
			    err, sizeof err);
		}
	}
	buf_free(&all);
	close(fd);
}

void
history_end(void)
{
	if (history.name == NULL)
		return;
	history_trim();
	hostfs_close(&history.dir);
	free(history.name);
	history.name = NULL;
}

char *
history_path(const struct coil_opts *o)
{
	struct hostfs_dir d;
	char *dir, *path, err[512];

	if (o->history != NULL)
		return *o->history ? xstrdup(o->history) : NULL;
	if ((dir = hostfs_state_dir()) == NULL)
		return NULL;
	/* mkdir -p: $HOME/.local may not exist yet either; a walk that
	 * fails leaves the path for history_start to say why. */
	if (hostfs_walk(dir, HOSTFS_MKDIRS, &d, NULL, err, sizeof err) == 0)
		hostfs_close(&d);
	xasprintf(&path, "%s/history", dir);
	free(dir);
	return path;
}
