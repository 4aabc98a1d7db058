/*
 * plain.h - plain mode: a line REPL like python's own (coil --plain, and
 * coil without a mode option when stdin or stdout is not a
 * terminal).  On a terminal it edits lines with
 * readline (history.h's history, completion from the
 * worker's namespace, a cell one entry however many lines it has);
 * Ctrl-C interrupts the running cell, Ctrl-D exits (at a continuation it
 * drops the cell), as do exit and quit.  A terminal's cells have no
 * deadline unless --timeout gives one, and see its size.
 * Without a terminal it reads cells from stdin without prompts and exits
 * 1 if any cell failed.  Returns the process exit status.
 */
#ifndef COIL_PLAIN_H
#define COIL_PLAIN_H

#include "opts.h"

int plain_main(const struct coil_opts *opts);

/* A readline match list: out[1..n] (n >= 1) the matches; fills out[0]
 * with their common prefix, and with one match leaves it alone, as
 * readline wants.  Returns out. */
char **plain_matches_done(char **out, size_t n);
/* readline's match list for the complete op's answer (fields: its
 * "matches", each replacing rl_line_buffer from its "start"), in place
 * of readline's word at byte start, text: NULL when it has none. */
char **plain_matches(json_t *fields, const char *text, int start);

#endif
