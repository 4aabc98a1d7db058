/*
 * figure.h - the image files a cell's display entries name, read back
 * by the supervisor (a notebook's outputs, an MCP image) without
 * trusting the name.
 *
 * The worker is hostile: the "path" of a display entry is whatever it
 * says, and the supervisor may read what the sandbox keeps from the
 * worker.  So a figure is read only when its path is a file directly in
 * the figure dir (--figure-dir), opened beneath that dir as it was when
 * coil started (held open since; links the user made on the way to it
 * are followed then), or, when it did not exist yet, reached from the
 * work dir without following a symbolic link (openat2's RESOLVE_BENEATH
 * and RESOLVE_NO_SYMLINKS: the worker may have swapped .coil for a
 * link); a regular file with one link (not a hard link to a file made
 * elsewhere), and of at most max bytes.
 * Anything else is refused, and the entry stays a path.  Supervisor
 * only; single-threaded.
 */
#ifndef COIL_FIGURE_H
#define COIL_FIGURE_H

#include <stddef.h>

/* Where figures may be: called once, with the session's options. */
void figure_dirs(const char *workdir, const char *figure_dir);

/* The bytes of the figure at path (*len of them, NUL-terminated), or
 * NULL with errno set: EPERM for a path outside the figure dir, ELOOP
 * for a link on the way, EFBIG over max, EINVAL for anything but a
 * regular file with one link, and open's and read's own. */
char *figure_read(const char *path, size_t max, size_t *len);

#endif
