/*
 * export-int.h - what export.c (the notebook's life: its cells as
 * events come, the keeper's temp files, the writing) shares with
 * export-cell.c (a response as the JSON of notebook cells).  Internal:
 * no other file includes it.
 *
 * Supervisor only; no Python.  Every json_t * returned is a new
 * reference, unless said otherwise.
 */
#ifndef COIL_EXPORT_INT_H
#define COIL_EXPORT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "export.h"
#include "util.h"

/* A cell opened by its request, waiting for its response; the stream
 * output that came last, not yet in its outputs. */
struct xcell {
	uint64_t seq;
	json_t *cell;
	int stream;		/* 1 or 2; 0: none pending */
	struct buf text;
};

/* A multiline string as nbformat keeps it: its lines, each with its
 * newline but the last. */
json_t *export_lines(const char *s);
/* A stream output of n bytes of text, stdout's or (err) stderr's,
 * appended to outs. */
void export_put_stream(json_t *outs, bool err, const char *text, size_t n);
/* The answer's stdout, then its stderr, one stream output each. */
void export_put_texts(json_t *outs, const struct response *r);
/* The figures of r that fit the bytes *left (which they use up), as
 * base64: {"INDEX": text}, or NULL when none does. */
json_t *export_figures64(const struct response *r, size_t *left);
/* The response closes its cell: displays (figs: export_figures64's, may
 * be NULL), then the result or error. */
void export_outputs(struct xcell *c, const struct response *r,
    json_t *figs);
/* A terminal REPL's probe of whether a line ends the cell: no cell. */
bool export_probe(const struct response *r);
/* The markdown cell of a rollback or reset, or NULL for any other
 * answer. */
json_t *export_mark_of(const struct response *r);
/* The notebook cell of an exec answer that did not stream. */
json_t *export_cell_of(const char *code, const struct response *r,
    json_t *runs, json_t *figs);
/* What export_cell_of needs, back from a response line (a keeper's):
 * a new response, the caller frees. */
struct response *export_response_of(json_t *o);

#endif
