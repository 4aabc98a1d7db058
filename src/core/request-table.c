/*
 * request-table.c - the protocol's two tables (see request.h): its
 * operations and the fields a request may carry.  request.c checks
 * lines against them; --help, the JSON Schema and MCP's tools/list
 * are made from them.
 */
#include "config.h"

#include "chan.h"
#include "request.h"
#include "util.h"

#define OPF_WORKER (OPF_QUIET | OPF_RUN)

const struct request_op request_ops[] = {
	{ "exec", OP_EXEC, OP_WORKER, OPF_WORKER, "run a cell" },
	{ "vars", OP_VARS, OP_WORKER, OPF_WORKER,
	  "list the user's variables" },
	{ "inspect", OP_INSPECT, OP_WORKER, OPF_WORKER,
	  "type, repr, doc and signature of a name" },
	{ "complete", OP_COMPLETE, OP_WORKER, OPF_WORKER,
	  "completions of code at cursor" },
	{ "snapshot", OP_SNAPSHOT, OP_SUPERVISOR, OPF_QUIET,
	  "pin the current state under a name" },
	{ "snapshots", OP_SNAPSHOTS, OP_SUPERVISOR, OPF_QUIET,
	  "list the checkpoints" },
	{ "rollback", OP_ROLLBACK, OP_SUPERVISOR, OPF_QUIET,
	  "go back to a snapshot or a cell" },
	{ "reset", OP_RESET, OP_SUPERVISOR, OPF_QUIET | OPF_RUN,
	  "start over with a fresh namespace" },
	{ "interrupt", OP_INTERRUPT, OP_IMMEDIATE, 0, "stop the running cell" },
	{ "ping", OP_PING, OP_IMMEDIATE, 0,
	  "version, sandbox and state, answered at once" },
	{ "shutdown", OP_SHUTDOWN, OP_SUPERVISOR, 0, "end the session" },
	{ "input", OP_INPUT, OP_IMMEDIATE, 0,
	  "the line your running cell's input() reads" },
	{ "fork", OP_FORK, OP_SUPERVISOR, OPF_QUIET,
	  "branch the session: new sessions that start from its state" },
	{ "sessions", OP_SESSIONS, OP_IMMEDIATE, 0,
	  "list the sessions (branches), their state and memory" },
	{ "close", OP_CLOSE, OP_IMMEDIATE, 0, "end one session (branch)" },
	{ "adopt", OP_ADOPT, OP_IMMEDIATE, 0,
	  "make a session your default (keep a branch)" },
};
const size_t request_nops = nitems(request_ops);

/* The ops that run with a deadline: request_ops' OPF_RUN ones
 * (request-test checks the two agree). */
#define OPS_TIMED (OP_BIT(OP_EXEC) | OP_BIT(OP_VARS) | OP_BIT(OP_INSPECT) | \
	OP_BIT(OP_COMPLETE) | OP_BIT(OP_RESET))

/*
 * Every field the protocol knows.  A field an op does not take is not
 * checked for it, and unknown fields are ignored, so newer clients keep
 * working.  A null is as if the field were absent, unless the op needs
 * the field.  id and op come first: the id is kept even when the rest
 * of the line is wrong, and op says which of the others apply.
 */
const struct request_field request_fields[] = {
	{ "id", T_STRING | T_NUMBER | T_NULL, "a string or a number", 0, 0, 0,
	  NULL, NULL, OPS_ALL, 0, true,
	  "echoed back in the response" },
	{ "op", T_STRING, "a string", 0, 0, 0, NULL, NULL, OPS_ALL, 0, true,
	  "what to do; exec when there is code and no op" },
	{ "code", T_STRING, "a string", 0, 0, 0, NULL, NULL,
	  OP_BIT(OP_EXEC) | OP_BIT(OP_COMPLETE),
	  OP_BIT(OP_EXEC) | OP_BIT(OP_COMPLETE), false,
	  "Python source to run, or the text to complete" },
	{ "timeout", T_NUMBER, "a number", B_MIN | B_MIN_EXCL | B_MAX, 0,
	  REQUEST_MAX_SECONDS, "seconds", "a day", OPS_TIMED, 0, false,
	  "seconds it may run (default --timeout)" },
	{ "max_output", T_INTEGER, "a whole number of bytes", B_MIN | B_MAX, 1,
	  CHAN_MAX_OUTPUT, "bytes", NULL, OP_BIT(OP_EXEC), 0, false,
	  "bytes of text the whole answer keeps, shared by error, result, "
	  "output, stderr and display in that order, each cut marked "
	  "(default --max-output)" },
	{ "display", T_MIMES, "an array of MIME types such as \"text/html\"",
	  0, 0, 0, NULL, NULL, OP_BIT(OP_EXEC), 0, false,
	  "MIME types display keeps besides its usual ones: text/html is "
	  "left out where an object's text/plain is its own, unless asked "
	  "for here" },
	{ "atomic", T_BOOL, "true or false", 0, 0, 0, NULL, NULL,
	  OP_BIT(OP_EXEC), 0, false,
	  "if true and the cell raises, what it did is undone" },
	{ "stream", T_BOOL, "true or false", 0, 0, 0, NULL, NULL,
	  OP_BIT(OP_EXEC), 0, false,
	  "if true, output events arrive while it runs" },
	{ "input", T_BOOL, "true or false", 0, 0, 0, NULL, NULL,
	  OP_BIT(OP_EXEC), 0, false,
	  "if true, a socket client answers the cell's input() (input "
	  "event, input op); else input() raises EOFError" },
	{ "text", T_STRING, "a string", 0, 0, 0, NULL, NULL,
	  OP_BIT(OP_INPUT), 0, false,
	  "the line, without its newline; absent or null: end of input" },
	{ "cursor", T_INTEGER, "a whole number", B_MIN, 0, 0, NULL, NULL,
	  OP_BIT(OP_COMPLETE), 0, false,
	  "where in code to complete (default: its end)" },
	{ "name", T_STRING, "a string", 0, 0, 0, NULL, NULL,
	  OP_BIT(OP_INSPECT) | OP_BIT(OP_SNAPSHOT) | OP_BIT(OP_FORK),
	  OP_BIT(OP_INSPECT), false,
	  "the expression to inspect, a snapshot's name, or a new branch's" },
	{ "to", T_STRING | T_INTEGER, "a snapshot name or a cell number",
	  B_MIN, 0, 0, NULL, NULL, OP_BIT(OP_ROLLBACK), OP_BIT(OP_ROLLBACK),
	  false, "a snapshot name or a cell number" },
	{ "all", T_BOOL, "true or false", 0, 0, 0, NULL, NULL,
	  OP_BIT(OP_VARS), 0, false, "if true, modules and _names too" },
	{ "columns", T_INTEGER, "a whole number", B_MIN | B_MAX, 1, 10000,
	  NULL, NULL, OP_BIT(OP_EXEC), 0, false,
	  "the client's terminal width: the cell's COLUMNS" },
	{ "lines", T_INTEGER, "a whole number", B_MIN | B_MAX, 1, 10000,
	  NULL, NULL, OP_BIT(OP_EXEC), 0, false,
	  "the client's terminal height: the cell's LINES" },
	{ "session", T_STRING, "a string", 0, 0, 0, NULL, NULL, OPS_ALL,
	  OP_BIT(OP_CLOSE) | OP_BIT(OP_ADOPT), false,
	  "the session (branch) to serve it (default: yours, main until "
	  "you adopt another); the one to close or adopt" },
	{ "n", T_INTEGER, "a whole number", B_MIN | B_MAX, 1, 64, NULL, NULL,
	  OP_BIT(OP_FORK), 0, false, "how many branches to make (default 1)" },
	{ "from", T_STRING | T_INTEGER, "a snapshot name or a cell number",
	  B_MIN, 0, 0, NULL, NULL, OP_BIT(OP_FORK), 0, false,
	  "the state to branch from: a snapshot or the state after a cell "
	  "(default: the state after the last finished cell)" },
	{ "files", T_STRING, "\"shared\" or \"private\"", 0, 0, 0, NULL,
	  NULL, OP_BIT(OP_FORK), 0, false,
	  "shared: the branches share the work directory (default)" },
	{ "by", T_LABEL, "a string of 1 to 64 characters, none a control "
	  "character", 0, 0, 0, NULL, NULL, OP_BIT(OP_INTERRUPT), 0, false,
	  "who asks (a person's name): the interrupted cell's answer names "
	  "them" },
};
const size_t request_nfields = nitems(request_fields);
