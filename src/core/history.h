/*
 * history.h - the cells a person typed, kept across sessions: readline's
 * in-memory history, and the history file behind it (--history FILE,
 * else $XDG_STATE_HOME/coil/history, or ~/.local/state/coil/history).
 * Shared by the plain REPL and the curses UI.  Supervisor only.
 *
 * The file's directory is walked once, at the start, before any cell
 * runs (hostfs.h: no link is followed where cells may write), and held;
 * the file is opened by name in it, O_NOFOLLOW and checked, for each
 * append, and locked (flock) against another coil's trim, which writes
 * a new file renamed over it.
 * Each entry follows a "#<seconds>" line, so that the lines up to the
 * next one are one entry and a multi-line cell stays whole.
 */
#ifndef COIL_HISTORY_H
#define COIL_HISTORY_H

#include <stddef.h>

#include "opts.h"

#define HISTORY_LINES 10000	/* the file's lines kept at the end */

/* The history file's path (--history, else the state dir's, which is
 * made): a new string, or NULL for none (--history ""). */
char *history_path(const struct coil_opts *o);
/* Set readline's history up and load the file at path (NULL: none).
 * -1 with err when the file cannot be used (the history is then this
 * session's only); 0 otherwise. */
int history_start(const char *path, char *err, size_t errlen);
/* Keep a finished cell as one entry (its trailing blanks cut), in
 * memory and in the file. */
void history_keep(const char *cell);
/* Trim the file to its last HISTORY_LINES lines and close it. */
void history_end(void);

#endif
