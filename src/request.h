/*
 * request.h - one agent-protocol request line, parsed and checked.
 * Pure logic (no I/O, no processes): the front ends and the fuzzer call
 * it.  The ops table is the protocol's list of operations; its usage
 * strings are also the help text.
 *
 * Ownership: request_parse returns a new reference to the request object
 * and a new reference to the id (json null when absent or unusable).
 */
#ifndef COIL_REQUEST_H
#define COIL_REQUEST_H

#include <jansson.h>
#include <stddef.h>

enum op {
	OP_EXEC, OP_VARS, OP_INSPECT, OP_COMPLETE, OP_SNAPSHOT, OP_SNAPSHOTS,
	OP_ROLLBACK, OP_RESET, OP_INTERRUPT, OP_PING, OP_SHUTDOWN,
};

/* How a request is served: at once even while a cell runs, in order by
 * the supervisor alone, or in order by the worker. */
enum op_where { OP_IMMEDIATE, OP_SUPERVISOR, OP_WORKER };

struct request_op {
	const char *name;
	enum op op;
	enum op_where where;
	const char *usage;
};

/* The longest timeout a request may ask for: a day, in seconds.  A
 * deadline is kept in milliseconds; this keeps it finite and exact. */
#define REQUEST_MAX_SECONDS 86400

extern const struct request_op request_ops[];
extern const size_t request_nops;

/* Parse one line.  On success returns 0 with *req (the object, "op" filled
 * in) and *op.  On failure returns -1 with a message in err; *id is set in
 * both cases when the line was an object with a usable id. */
int request_parse(const char *line, size_t len, json_t **req, json_t **id,
    enum op *op, char *err, size_t errlen);

const struct request_op *request_op_find(const char *name);

#endif
