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
 *
 * With --from N the replay is the start of a live session instead: the
 * front end (agent, MCP, plain REPL, curses UI) makes its session,
 * attaches its client and calls replay_handover, which runs the file's
 * first N cells on main, forks a branch there, runs --then's cells on
 * the branch and makes the branch the client's default; main keeps the
 * state after cell N.  With --check as well, replay_main compares the
 * two continuations instead (replay-fork.c).
 *
 * With --resume FILE the same call rebuilds the session instead: every
 * cell of the transcript that may be run twice runs again on main,
 * compared with its recording, and the client stays on main
 * (replay-resume.c).
 */
#ifndef COIL_REPLAY_H
#define COIL_REPLAY_H

#include <stddef.h>

#include "opts.h"

struct session;

/* With --replay or --resume: open the file, and take its recorded
 * options into o (with --resume, the file is also the transcript the
 * session goes on in, unless --record or --no-record says otherwise).
 * 0, or the exit status (2) of a file that cannot be read or, for
 * --resume, is no coil transcript; a message on stderr says why. */
int replay_prepare(struct coil_opts *o);

/* Run the prepared replay: 0 when it ran (with --check: and every cell
 * matched), 1 when a cell differed or the session failed, 2 when the
 * file went bad on the way. */
int replay_main(const struct coil_opts *o);

/* With --from N (else nothing: 0, branch ""): bring the front end's new
 * session s to the fork point and hand the branch to client (see
 * above), its name into branch (blen bytes: 65 hold any), so that the
 * front end shows it.  Notes on stderr, nothing on stdout.  0, or -1
 * with why in err (a cell up to N that did not end as recorded, --from
 * past the file's cells, a fork refused, a signal): the front end says
 * it and ends, exit 1. */
int replay_handover(const struct coil_opts *o, struct session *s,
    int client, char *branch, size_t blen, char *err, size_t errlen);

/* With --resume FILE: rebuild s from the file (see above), its report
 * kept by the session (session_resumed) and said on stderr.  0, or -1
 * with why in err (the file went bad on the way, a signal, the session
 * failed): the front end says it and ends, exit 1, and nothing was
 * added to the file.  replay_handover calls it; mcp-http.c, which
 * serves no single client, calls it itself. */
int replay_resume(const struct coil_opts *o, struct session *s, char *err,
    size_t errlen);

#endif
