/*
 * options-int.h - options.c's table of options, shared with
 * options-replay.c: a row's setter both parses the option and says what
 * kind of value it holds (a transcript writes the value back in that
 * kind, and a replay feeds it to the same setter).  Internal: only
 * options*.c include it.  Supervisor only, before any other process.
 */
#ifndef COIL_OPTIONS_INT_H
#define COIL_OPTIONS_INT_H

#include <stddef.h>

#include "options.h"

struct options_entry;

/* What a setter returns besides 0 and -1: the option did its work (it
 * printed --help, say) and coil exits 0. */
#define OPTIONS_DONE 1

/* Store arg (NULL for an option without one) in o, as e says: 0, -1
 * with a message in err, or OPTIONS_DONE. */
typedef int options_set_fn(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen);

struct options_entry {
	const char *name;	/* --name */
	int letter;		/* -x as well, or 0 */
	const char *arg;	/* its argument in --help, or NULL: none */
	options_set_fn *set;
	size_t off, width;	/* the field of struct coil_opts it sets */
	long long min, max;	/* a number's bounds; the value of --agent */
	const char *usage;
	unsigned flags;		/* OPT_* */
};

/* An option of the session itself: a transcript's header records it,
 * and a replay takes it from there unless the command line gives it. */
#define OPT_SESSION 0x01
/* One that holds cells in (the sandbox, what it lets cells reach, the
 * limits): a transcript is a file a cell may have written, so a replay
 * takes it from there only when that makes the session stricter
 * (options_replay). */
#define OPT_CONTAIN 0x02
#define OPT_HOLD (OPT_SESSION | OPT_CONTAIN)

/* The table, in --help's order; a row's index is its bit in
 * o->given. */
extern const struct options_entry options_table[];
extern const size_t options_count;

/* The field e names, as the type its setter knows it has. */
#define AT(o, e, type) ((type *)(void *)((char *)(o) + (e)->off))

/* The setters options-replay.c tells apart (e->set == opt_seconds):
 * each value kind of a session's option has its own. */
options_set_fn opt_flag, opt_seconds, opt_size, opt_count, opt_preload,
    opt_allow_import, opt_profile, opt_allow_read, opt_allow_write,
    opt_policy, opt_redo;

/* Store a whole number in e's field, an int or a 64-bit one (size_t,
 * long, unsigned long long): the bounds keep v within either. */
void opt_store(struct coil_opts *o, const struct options_entry *e,
    long long v);

/* The replay's options together (options-replay.c): --replay with
 * --agent or --mcp only with --from, --from and --then with what they
 * need.  0, or -1 with a message in err. */
int options_replay_check(const struct coil_opts *o, char *err,
    size_t errlen);

#endif
