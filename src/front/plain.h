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

#endif
