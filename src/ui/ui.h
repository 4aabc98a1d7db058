/*
 * ui.h - the curses UI: `coil` on a terminal, and `coil --attach PATH`
 * on the session of a `coil --agent --listen PATH`.
 *
 * One screen shows the shared namespace, every cell's output (headed by
 * its number and origin, stdout and stderr told apart by a marker as
 * well as colour), the last result or error, a multi-line input edited
 * through readline's callback interface, and a status line.  The UI is
 * a client and an observer of the session (session.h): in-process with
 * its own session, or over the attach socket's protocol (listen.h),
 * where the same events arrive as JSON lines.  The person's cells carry
 * the origin "person"; the agent's next vars sees what they define.
 *
 * The terminal is restored on every way out: the normal end, Ctrl-D,
 * SIGTERM, SIGHUP (exit status 128 + the signal), a crash in coil
 * itself (ui_emergency_restore from the crash handlers and fatal's
 * teardown).  Supervisor only.
 */
#ifndef COIL_UI_H
#define COIL_UI_H

#include "opts.h"

/* Run the UI until the person leaves; the process's exit status. */
int ui_main(const struct coil_opts *opts);

/* Put the terminal back as it was, from any state: async-signal-safe
 * (termios and a fixed escape string), a no-op when the UI is not up. */
void ui_emergency_restore(void);

#endif
