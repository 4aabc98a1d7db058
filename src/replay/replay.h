/*
 * replay.h - coil --replay FILE: a transcript, a notebook, a "# %%"
 * file or a chat log run again, cell by cell, in a fresh session (the
 * recorded options unless the command line gives others, and never one
 * that loosens the sandbox: options_replay), each cell
 * printed with its new outcome; with --check, compared with what the
 * file says it gave, a unified diff for each cell that differs.
 *
 * The cells run in the session's sandboxed worker, as any client's do:
 * the supervisor only reads the file.  Supervisor only.
 *
 * replay_prepare opens the file before anything else (its options may
 * change the sandbox) and keeps it for replay_main; the one replay of a
 * coil run.
 */
#ifndef COIL_REPLAY_H
#define COIL_REPLAY_H

#include "opts.h"

/* With --replay: open the file, and take its recorded options into o.
 * 0, or the exit status (2) of a file that cannot be read; a message
 * on stderr says why. */
int replay_prepare(struct coil_opts *o);

/* Run the prepared replay: 0 when it ran (with --check: and every cell
 * matched), 1 when a cell differed or the session failed, 2 when the
 * file went bad on the way. */
int replay_main(const struct coil_opts *o);

#endif
