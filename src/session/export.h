/*
 * export.h - --export FILE.ipynb: the session written as a Jupyter
 * notebook (nbformat 4.5) when it ends, every exec cell with its
 * outputs: the streams in the order they came, display_data (images
 * as base64 of the bytes the worker's descriptors held, figure.h; never
 * a file read by its path), then the execute_result, or the
 * error with its traceback.  A cell that never ran (incomplete, invalid)
 * has no execution count.
 *
 * Like the transcript writer (record.h) it is a hub observer attached
 * by session_new, so any front end exports.  The notebook is written
 * whole by export_close, through a new file renamed over FILE in the
 * directory held since the start (hostfs_new_open), so a reader never
 * sees half of one and a link a cell put at FILE is replaced, never
 * followed; if coil is killed nothing is written.
 *
 * Without --export a session keeps one all the same (export_keeper),
 * so that %save FILE.ipynb can have the session so far (export_dump):
 * the supervisor builds the bytes, and the worker writes them (link.h).
 * That one is no observer (observers make every event, which costs each
 * cell): the session hands it each exec answer (export_keep) with the
 * order the streams' bytes came in (struct export_runs), which splits
 * the answer's output and stderr back into the streams as they came,
 * unless the answer's texts were cut or are not the bytes the runs
 * counted (then they are one stream each).  It keeps in an unlinked
 * temp file what it had at hand, each cell's code and the answer's text
 * as its client got it, and in a second one its figures' bytes (while
 * the 64 MiB a notebook holds last, each line of the first naming their
 * place in the second), and builds the cells from them when asked: a
 * long session's notebook costs no memory, and a cell no encoding.
 *
 * Supervisor only; no Python.  export_close frees what export_new
 * made.
 */
#ifndef COIL_EXPORT_H
#define COIL_EXPORT_H

#include "session.h"

struct export;

/* An observer writing path at the end, or NULL with err when a notebook
 * could not be written there: its directory is walked and held now,
 * before any cell runs (hostfs.h), and a file is made beside path and
 * removed (path is no directory).  A session checks at its start, not
 * after all its cells. */
struct export *export_new(const char *path, char *err, size_t errlen);
/* How the markdown cell marking a rollback or a reset begins, where it
 * happened ("... the state after cell N" or "... its start" follows the
 * rollback's): coil --replay of the notebook does it again. */
#define EXPORT_MARK_ROLLBACK "*coil: the namespace was rolled back to "
#define EXPORT_MARK_RESET "*coil: the namespace was reset;"
/* A keeper, written nowhere, fed by export_keep. */
struct export *export_keeper(void);
/* The order an exec's stdout (1) and stderr (2) came in: runs of
 * bytes, at most EXPORT_RUNS_MAX of them (past that, over). */
#define EXPORT_RUNS_MAX 1024
struct export_runs {
	unsigned char stream[EXPORT_RUNS_MAX];
	size_t len[EXPORT_RUNS_MAX];
	size_t n;
	bool over;
};
void export_runs_add(struct export_runs *o, int stream, size_t n);
/* The runs worth showing, as JSON ([[stream, bytes], ...]): only when
 * the streams took turns (else the two texts say it all); NULL
 * otherwise, or when there were too many to count. */
json_t *export_runs_json(const struct export_runs *o);
/* Split text[0] (stdout) and text[1] (stderr) by runs as
 * export_runs_json gives them, in the order they came:
 * put(ctx, 1 or 2, piece, n) for each piece, never cutting a UTF-8
 * character in two.  False, and nothing put, when the runs do not
 * count exactly the texts' bytes (an answer cut, or background output
 * mixed in). */
bool export_split(json_t *runs, const char *const text[2],
    const size_t len[2], void (*put)(void *, int, const char *, size_t),
    void *ctx);

/* A request (borrowed) and its answer: a cell, if it is an exec; runs
 * (may be NULL), the order of its streams. */
void export_keep(struct export *x, json_t *req, struct response *r,
    const struct export_runs *runs);
/* The hub callback (ctx: the export). */
void export_event(void *ctx, const struct session_event *ev);
/* Write the notebook and free; -1 (said on stderr) when it could not
 * be written. */
int export_close(struct export *x);
/* Free without writing anything. */
void export_free(struct export *x);

/* The bytes of figures x may still take (of the 64 MiB a notebook
 * holds): 0 when none, or x is NULL.  The session reads no more of a
 * reply's figures than someone will use. */
size_t export_figures_left(const struct export *x);

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
