/*
 * magic.h - coil's checkpoint magics, "%snapshot [NAME]", "%snapshots"
 * and "%rollback NAME|CELL": their one table and their one parser.
 * Checkpoints are the supervisor's, so each front end turns these into
 * the protocol's ops before a worker could see them: the request layer
 * an exec whose code is one (request_magic), plain mode a line
 * (plain-ckpt.c), the UI its :snapshot and :rollback commands
 * (ui-keys.c).  The worker's magic table (magictab.py) gets them from
 * this one (magic_list, in worker.py's setup conf), to list them and to
 * refuse them inside a larger cell.
 */
#ifndef COIL_MAGIC_H
#define COIL_MAGIC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

enum magic_arg {
	MAGIC_ARG_NONE,			/* %snapshots */
	MAGIC_ARG_OPTIONAL,		/* %snapshot [NAME] */
	MAGIC_ARG_NEEDED,		/* %rollback NAME|CELL */
};

struct magic {
	const char *name;		/* the op's name too */
	enum magic_arg arg;
	const char *usage;		/* "%snapshot [NAME]" */
	const char *help;
};

/* One magic as written: which, and its argument. */
struct magic_call {
	const struct magic *m;
	const char *arg;		/* points into the text parsed */
	size_t len;			/* blanks trimmed at both ends */
};

/* Is s one of the magics ('%', its name, blanks and its argument, with
 * blanks (spaces, tabs, newlines) around it allowed)?  Then c says
 * which, and where its argument is (it may hold a newline). */
bool magic_parse(const char *s, struct magic_call *c);

/* Does c's argument fit its magic (none for %snapshots, one for
 * %rollback, on one line)? */
bool magic_arg_ok(const struct magic_call *c);

/* The request of the op called name ("snapshot", "snapshots" or
 * "rollback") for the argument arg (len bytes): "name" for a snapshot
 * with one; "to" for a rollback: a cell number when it is 1 to 9
 * digits, else the text.  New reference. */
json_t *magic_request(const char *name, const char *arg, size_t len);

/* The op a magic's request is ("switch" is "adopt"; the others are
 * their own). */
const char *magic_op_name(const char *name);

/* The table for the worker: [[name, usage, help], ...].  New
 * reference. */
json_t *magic_list(void);

#endif
