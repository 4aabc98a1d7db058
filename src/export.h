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
 * Supervisor only; no Python.  export_close frees what export_new
 * made.
 */
#ifndef COIL_EXPORT_H
#define COIL_EXPORT_H

#include "session.h"

struct export;

struct export *export_new(const char *path);
/* The hub callback (ctx: the export). */
void export_event(void *ctx, const struct session_event *ev);
/* Write the notebook and free; -1 (said on stderr) when it could not
 * be written. */
int export_close(struct export *x);

/* base64 (RFC 4648, no line breaks) of n bytes: a new string. */
char *export_base64(const unsigned char *p, size_t n);

#endif
