/*
 * wording.h - a cell's answer as text for a model: what it printed,
 * its "[stderr]" block, the traceback, "Out[N]: " and the result, the
 * display's texts.  The one wording of it: coil --mcp's tool result
 * (front/mcp-tools.c, which adds the figures and their images) and
 * the example loops word an answer so, and --replay --check (check.c)
 * words a replayed cell so to compare it with a chat log's result.
 * Pure: no I/O.
 */
#ifndef COIL_WORDING_H
#define COIL_WORDING_H

#include <stddef.h>

#include "response.h"
#include "util.h"

/* A newline, unless b is empty or ends in one. */
void wording_line_end(struct buf *b);
/* p[0..n), ended by a newline, under a "[label]" line when label is
 * not NULL; nothing when n is 0. */
void wording_block(struct buf *b, const char *label, const char *p,
    size_t n);
/* An error (NULL: nothing): its traceback, "type: message" unless the
 * traceback says the message already, and its hint. */
void wording_error(struct buf *b, const struct response_error *e);
/* An exec answer's text, all but its figures. */
void wording_exec(const struct response *r, struct buf *b);

/* coil --resume's report (the "resumed" object, borrowed) as lines for
 * a person or a model: what was run again, what answered differently
 * (the first line that differs), what was not run again and why, the
 * errors and notes.  The plain REPL, the UI, stderr and MCP's
 * instructions and first tool result all say it so. */
void wording_resumed(json_t *resumed, struct buf *b);

#endif
