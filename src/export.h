/*
 * export.h - --export FILE.ipynb: the session written as a Jupyter
 * notebook (nbformat 4.5) when it ends, every exec cell with its
 * outputs: the streams in the order they came, display_data (images
 * read from the figure files, base64), then the execute_result, or the
 * error with its traceback.  A cell that never ran (incomplete, invalid)
 * has no execution count.
 *
 * Like the transcript writer (record.h) it is a hub observer attached
 * by session_new, so any front end exports.  The notebook is written
 * whole by export_close, through a temp file renamed over FILE, so a
 * reader never sees half of one; if coil is killed nothing is written.
 *
 * Without --export a session keeps one all the same (export_keeper),
 * so that %save FILE.ipynb can have the session so far (export_dump):
 * the supervisor builds the bytes, and the worker writes them (link.h).
 * That one is no observer (observers make every event, which costs each
 * cell): the session hands it each exec answer (export_keep), whose
 * output and stderr become one stream each.  It keeps in an unlinked
 * temp file what it had at hand, each cell's code and the answer's text
 * as its client got it, and builds the cells from them when asked: a
 * long session's notebook costs no memory, and a cell no encoding.
 *
 * Supervisor only; no Python.  export_close frees what export_new
 * made.
 */
#ifndef COIL_EXPORT_H
#define COIL_EXPORT_H

#include "session.h"

struct export;

/* An observer writing path at the end. */
struct export *export_new(const char *path);
/* A keeper, written nowhere, fed by export_keep. */
struct export *export_keeper(void);
/* A request (borrowed) and its answer: a cell, if it is an exec. */
void export_keep(struct export *x, json_t *req, struct response *r);
/* The hub callback (ctx: the export). */
void export_event(void *ctx, const struct session_event *ev);
/* Write the notebook and free; -1 (said on stderr) when it could not
 * be written. */
int export_close(struct export *x);

/* The notebook of the cells answered so far, as JSON text: a new
 * string; *ncells gets their count. */
char *export_dump(const struct export *x, size_t *ncells);

/* The same bytes in a sealed memfd (no write, grow or shrink: what the
 * worker reads is what was built), at offset 0: the caller closes it.
 * -1 with errno (EMSGSIZE over max bytes, EIO when cells were lost
 * to a failed write of the temp file). */
int export_memfd(const struct export *x, size_t max, size_t *ncells);

/* base64 (RFC 4648, no line breaks) of n bytes: a new string. */
char *export_base64(const unsigned char *p, size_t n);

#endif
