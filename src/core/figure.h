/*
 * figure.h - the images a cell showed, as bytes the supervisor keeps:
 * read at once from the descriptors the worker handed over with its
 * reply (link.h), never from a path.
 *
 * The worker is hostile: the "path" of a display entry is whatever it
 * says, and a file the path names may be one the sandbox keeps from
 * cells, reached through a link a cell planted (in the work dir, in a
 * figure dir swapped for a link before this session started, in an
 * --allow-write dir).  So the supervisor opens no figure by its name.
 * The worker opens each image file itself, with the sandbox's rights,
 * and sends the descriptor (worker.c's worker_figures); the supervisor
 * shows only what a cell could have read anyway.  On each descriptor it
 * checks again what it can: a regular file open for reading (link.c),
 * with one link (not a second name of a file made elsewhere), on no
 * kernel pseudo file system (whose files may check the reader's rights
 * as they are read, and the reader is then the supervisor), of at most
 * max bytes, which it reads from offset 0 with pread (the worker may
 * hold the same open file and move its offset).  Anything else is
 * refused, and the entry stays a path.
 *
 * The bytes live in the response (response.h: figs); a notebook
 * (export.h) and an MCP image (mcp.c) are built from them.  Supervisor
 * only; single-threaded.  figure_take never closes the descriptors.
 */
#ifndef COIL_FIGURE_H
#define COIL_FIGURE_H

#include <jansson.h>
#include <stddef.h>

/* The most bytes of figures one reply's may hold in the supervisor. */
#define FIGURE_REPLY_MAX ((size_t)64 << 20)

/* The bytes of display entry at (len of them, NUL after); p is owned
 * by whoever holds the array (response_free frees them). */
struct figure {
	size_t at;
	char *p;
	size_t len;
};

/* The figures of a reply (its "figures": the display index of each of
 * fds, borrowed), read into a new array (*n of them; caller frees with
 * figure_free) while they fit max bytes in all, each within
 * CHAN_FIGURE_MAX; an index past ndisplay, or not above the one before,
 * is skipped.  NULL, *n 0, when there is none. */
struct figure *figure_take(json_t *figures, const int *fds, int nfds,
    size_t ndisplay, size_t max, size_t *n);

/* The figure of display entry at, or else that of an entry before it
 * naming the same path (the worker sends each file once); NULL when
 * none.  Which entry shows which bytes is the worker's word about its
 * own cell: the bytes are still only those it handed over. */
const struct figure *figure_find(const struct figure *figs, size_t n,
    json_t *display, size_t at);

void figure_free(struct figure *figs, size_t n);

#endif
