/*
 * plain.h - plain mode: a line REPL like python's own (coil --plain, and
 * coil without a mode option).  On a terminal it edits lines with
 * readline (history in $XDG_STATE_HOME/coil/history, completion from the
 * worker's namespace); Ctrl-C interrupts the running cell, Ctrl-D exits.
 * Without a terminal it reads cells from stdin without prompts and exits
 * 1 if any cell failed.  Returns the process exit status.
 */
#ifndef COIL_PLAIN_H
#define COIL_PLAIN_H

#include "opts.h"

int plain_main(const struct coil_opts *opts);

#endif
