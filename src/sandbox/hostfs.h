/*
 * hostfs.h - the supervisor's way to the host's files: every path it
 * opens, makes, replaces or removes on the user's behalf (history,
 * transcripts, --record, --export, the UI's :save, --replay's source)
 * goes through here.  Supervisor only; no Python; single-threaded.
 *
 * The supervisor runs with the user's rights (root on servers), and the
 * places cells may write (the work dir and the --allow-write dirs: the
 * "cell-writable roots") may hold links, FIFOs or hard links a cell
 * planted, in this session or an earlier one.  So:
 *
 *  - A path is resolved a component at a time from "/" (hostfs_walk).
 *    A symbolic link is followed only in a directory no cell may write
 *    (it is the user's); one met at or below a cell-writable root is
 *    refused (ELOOP), and so is a magic link.  Directories are opened
 *    with O_NOFOLLOW, so the walk cannot be raced into following one.
 *  - What the walk gives is a directory descriptor, held from then on:
 *    the caller opens, makes, renames and removes names in it with the
 *    *at calls, never by path again, so a directory swapped later is
 *    still the one that was walked.
 *  - A file is opened with O_NOFOLLOW, and O_NONBLOCK where cells write
 *    (a FIFO they planted cannot block us), and checked with fstat: where cells may write, a regular file
 *    with a single link (not a hard link to a file made elsewhere).  New files are made O_EXCL.  A file is never
 *    truncated in place: hostfs_new_open makes a new file beside it and
 *    hostfs_new_commit renames it over the name (which replaces a link,
 *    never follows it).
 *
 * Under --sandbox none cells have the user's rights already: there are
 * no roots, and links the user made anywhere are followed.
 */
#ifndef COIL_HOSTFS_H
#define COIL_HOSTFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sandbox.h"

/* Before any cell runs: the cell-writable roots of c (none under
 * --sandbox none).  Their identities (device, inode) are kept, so a
 * root reached through another path is still known.  Called again, it
 * replaces them. */
void hostfs_roots(const struct sandbox_conf *c);

/* A directory hostfs_walk reached, and what it found on the way. */
struct hostfs_dir {
	int fd;			/* O_PATH | O_DIRECTORY; -1 when closed */
	bool cells;		/* cells may write in it */
	bool magic;		/* on /proc, and the name hostfs_walk gave is
				   a magic link (/dev/stdin's end): the
				   kernel follows it */
};

/* How hostfs_walk treats the path's last component. */
enum hostfs_last {
	HOSTFS_PARENT,		/* give its directory and its name (which
				   need not exist: a file to make) */
	HOSTFS_DIR,		/* it is a directory: give it, name "." */
	HOSTFS_MKDIRS		/* likewise, making missing directories on
				   the way (mode 0700) */
};

/*
 * Every error below is said in err as its reason alone ("No such file or
 * directory", or why coil will not use what is there): the caller puts
 * the path and what it was doing in front.
 *
 * Resolve path (absolute, or relative to the cwd) as above: fills *dir
 * (the caller closes dir->fd) and, for HOSTFS_PARENT, *name (a new
 * string; a last component that is the user's link is followed to its
 * target's name).  0, or -1 with err.
 */
int hostfs_walk(const char *path, enum hostfs_last last,
    struct hostfs_dir *dir, char **name, char *err, size_t errlen);

/* How hostfs_open opens a file. */
enum hostfs_mode {
	HOSTFS_READ,		/* O_RDONLY */
	HOSTFS_APPEND,		/* O_WRONLY | O_APPEND, made 0600 if
				   missing */
	HOSTFS_CREATE		/* O_WRONLY, made 0600; EEXIST if there */
};

/* name in dir, opened as mode said and checked as above.  A descriptor
 * (O_CLOEXEC, blocking), or -1 with err. */
int hostfs_open(const struct hostfs_dir *dir, const char *name,
    enum hostfs_mode mode, char *err, size_t errlen);

/* path resolved (hostfs_walk) and opened (hostfs_open) in one step. */
int hostfs_open_path(const char *path, enum hostfs_mode mode, char *err,
    size_t errlen);

/* A file that will replace name in dir: made beside it (O_EXCL, a name
 * no one had) and renamed over name by hostfs_new_commit, so a reader
 * never sees half of it and nothing at name is truncated or followed. */
struct hostfs_new {
	int fd;			/* write here; the caller closes it (or
				   the FILE it gave it to) before commit */
	char *tmp;		/* its name in dir */
};

/* Make the new file (mode 0666 less the umask, or name's mode when name
 * is a regular file).  0, or -1 with err. */
int hostfs_new_open(struct hostfs_new *n, const struct hostfs_dir *dir,
    const char *name, char *err, size_t errlen);
/* ok: rename it over name (0, or -1 with err); else remove it (0). */
int hostfs_new_commit(struct hostfs_new *n, const struct hostfs_dir *dir,
    const char *name, bool ok, char *err, size_t errlen);

/* Remove name from dir (never through a link: unlinkat removes the link
 * itself); 0, or -1 with errno. */
int hostfs_remove(const struct hostfs_dir *dir, const char *name);

void hostfs_close(struct hostfs_dir *dir);

/* Whether cells may write the directory path, or a link on the way to
 * it (so that it could be theirs).  False for a path that is not
 * there. */
bool hostfs_cells_reach(const char *path);

/* coil's own state dir, for history and transcripts: $XDG_STATE_HOME/coil,
 * else ~/.local/state/coil.  A new string, or NULL when neither variable
 * is an absolute path. */
char *hostfs_state_dir(void);

#endif
