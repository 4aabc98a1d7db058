/*
 * exit.h - the exit codes of coil's processes, one list for all of them.
 * Included by util.h; the sandbox (sbx-*.c), which keeps its own
 * allocators, includes it alone.  exit_describe is in util.c.
 */
#ifndef COIL_EXIT_H
#define COIL_EXIT_H

/*
 * How a process of coil ends when it cannot go on.  A child of the
 * supervisor (init, the worker, a checkpoint, a helper of the sandbox)
 * _exits with one of these codes, so no atexit handler or stdio buffer
 * of the supervisor's runs twice; the supervisor puts the code into words
 * (exit_describe, describe_wait) in its messages.  The codes sit above
 * what programs usually use (sysexits.h stops at 78), so a cell's own
 * os._exit(N) is rarely taken for one of them.
 */
enum coil_exit {
	EXIT_NOMEM = 240,	/* out of memory */
	EXIT_SANDBOX,		/* 241: the sandbox could not be set up */
	EXIT_SETUP,		/* 242: a descriptor, signal or prctl failed */
	EXIT_PROTOCOL,		/* 243: the talk with the supervisor broke */
	EXIT_PYTHON,		/* 244: the interpreter or coil's half failed */
	EXIT_INTERNAL,		/* 245: a broken invariant (fatal) */
};

/* The words for a code of enum coil_exit; NULL for any other. */
const char *exit_describe(int code);

#endif
