/*
 * request.h - one agent-protocol request line, parsed and checked.
 * Pure logic (no I/O, no processes): the front ends and the fuzzer call
 * it.  Two tables are the protocol's schema: request_ops, its
 * operations, and request_fields, the fields a request may carry, with
 * their JSON types, bounds and the ops that take them.  request_parse
 * checks a line against them, and --help (request_help) and the JSON
 * Schema (request_schema) are generated from them, so the three cannot
 * disagree.
 *
 * Ownership: request_parse returns a new reference to the request object
 * and a new reference to the id (json null when absent or unusable);
 * request_schema and request_schemas return new references.
 */
#ifndef COIL_REQUEST_H
#define COIL_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* The order of request_ops: request_ops[op] is op's entry. */
enum op {
	OP_EXEC, OP_VARS, OP_INSPECT, OP_COMPLETE, OP_SNAPSHOT, OP_SNAPSHOTS,
	OP_ROLLBACK, OP_RESET, OP_INTERRUPT, OP_PING, OP_SHUTDOWN, OP_INPUT,
	OP_FORK, OP_SESSIONS, OP_CLOSE, OP_ADOPT,
};

/* How a request is served: at once even while a cell runs, in order by
 * the supervisor alone, or in order by the worker. */
enum op_where { OP_IMMEDIATE, OP_SUPERVISOR, OP_WORKER };

/*
 * What a queued op waits for before it is served, a mask; the session's
 * one dispatcher (session.c) reads it, and its table of servers names
 * the function that serves each op.  An OP_IMMEDIATE op is never queued
 * and waits for nothing.
 *
 * OPF_QUIET: the worker up and idle, and every checkpoint it owes read.
 * An atomic cell must know whether the state before it is kept already;
 * a checkpoint's frame is checked against the worker as its parent,
 * which only a live worker can be, so nothing that may kill it goes
 * first; snapshot, rollback and reset work on a worker at rest.
 * OPF_RUN: a run of the worker under a deadline (the worker's ops, and
 * reset, whose deadline covers the fresh interpreter's start).  It waits
 * till an interrupt init still owes the worker is sent: that one was
 * meant for the request before, and would stop this one.
 */
enum { OPF_QUIET = 1, OPF_RUN = 2 };

struct request_op {
	const char *name;
	enum op op;
	enum op_where where;
	unsigned flags;		/* OPF_* */
	const char *usage;	/* what it does, one line (--help, schema) */
};

/* The longest timeout a request may ask for: a day, in seconds.  A
 * deadline is kept in milliseconds; this keeps it finite and exact. */
#define REQUEST_MAX_SECONDS 86400

/* The JSON types a field takes, a mask.  T_NUMBER is any number,
 * T_INTEGER a number written without fraction or exponent, T_MIMES an
 * array of at most REQUEST_MIMES_MAX MIME types ("text/html"), T_LABEL
 * a short printable string: 1 to REQUEST_LABEL_MAX characters, none
 * a control character (a name shown to people and models). */
enum { T_STRING = 1, T_INTEGER = 2, T_NUMBER = 4, T_BOOL = 8, T_NULL = 16,
    T_MIMES = 32, T_LABEL = 64 };
#define REQUEST_MIMES_MAX 16
#define REQUEST_LABEL_MAX 64

/* Which bounds of a number field hold, a mask.  Bounds apply to the
 * field's numbers only (a name in "to" has none). */
enum { B_MIN = 1, B_MIN_EXCL = 2, B_MAX = 4 };

/* Masks of ops: OPS_ALL is every op. */
#define OP_BIT(op) (1u << (op))
#define OPS_ALL (~0u)

struct request_field {
	const char *name;
	unsigned types;		/* T_* mask */
	const char *want;	/* the types in words: "'x' must be <want>" */
	unsigned bounds;	/* B_* mask */
	long long min, max;	/* the bounds B_* says hold */
	const char *unit;	/* of the number, in messages, or NULL */
	const char *note;	/* after the bounds in messages, or NULL */
	unsigned ops;		/* OP_BIT mask of the ops that take it */
	unsigned required;	/* of those, the ops that need it */
	bool envelope;		/* id, op: read before the op is known */
	const char *about;	/* one line for --help and the schema */
};

extern const struct request_op request_ops[];
extern const size_t request_nops;
extern const struct request_field request_fields[];
extern const size_t request_nfields;

/* Parse one line.  On success returns 0 with *req (the object, "op" filled
 * in) and *op.  On failure returns -1 with a message in err; *id is set in
 * both cases when the line was an object with a usable id, and when a
 * line that is not valid JSON shows one after its outer object's "id".
 * Fields the op does not take, and unknown fields, are not checked. */
int request_parse(const char *line, size_t len, json_t **req, json_t **id,
    enum op *op, char *err, size_t errlen);

/* request_parse for a request already parsed (MCP's arguments): v
 * (stolen) is checked as a line holding it would be, with the same
 * results and messages.  On success *req is v.  A rollback's "to" that
 * is a string of digits becomes the cell number it spells (no snapshot
 * name is all digits): MCP clients send one for the schema's string or
 * integer. */
int request_from_json(json_t *v, json_t **req, json_t **id, enum op *op,
    char *err, size_t errlen);

const struct request_op *request_op_find(const char *name);
/* The id of a request line of which only the head is known (a line too
 * long to be read whole), when it shows one before its first other
 * field's value; else NULL.  New reference. */
json_t *request_head_id(const char *head, size_t len);
/* Where the value after the "id" key of a line's outer object starts
 * (blanks skipped), valid JSON or not; len when the line shows none. */
size_t request_id_at(const char *line, size_t len);

/* coil's own checkpoint magics, when an exec's code is one of them and
 * nothing else: "%snapshot [NAME]", "%snapshots" or "%rollback
 * NAME|CELL" (one line, blanks around it allowed).  Then req becomes
 * that op's request in place ("code" gone, "name" or "to" set, "op"
 * changed) and *op the op, and it returns true.  Checkpoints are the
 * supervisor's, so the front ends rewrite these before a worker could
 * see them; inside a larger cell the worker refuses them. */
bool request_magic(json_t *req, enum op *op);

/* A warning for each field of req that op does not take: unknown ones
 * name the closest known field when one is near.  A new array of
 * strings, or NULL when every field is known. */
json_t *request_warnings(json_t *req, enum op op);

/* The name in a table of structs that start with their name (ops,
 * fields) closest to name by edit distance, if it is near enough to be
 * a slip; else NULL. */
#define REQUEST_NAME_MAX 32
const char *request_closest(const void *table, size_t n, size_t size,
    const char *name);

/* Whether op takes field f, and whether it needs it. */
bool request_takes(const struct request_field *f, enum op op);
bool request_needs(const struct request_field *f, enum op op);

/* A JSON Schema (draft 2020-12, no "$schema" key, so it can be embedded:
 * an MCP tool's inputSchema) of the fields op takes beyond "id" and
 * "op": type object, properties with type, bounds and description, and
 * the required ones.  Unknown properties are allowed, as request_parse
 * ignores them.  Returns a new reference. */
json_t *request_schema(const struct request_op *op);

/* {op name: request_schema(op)} for every op, in table order.  Returns a
 * new reference. */
json_t *request_schemas(void);

/* Append the "Requests" part of coil --help: the ops, the fields each
 * takes, and every field's type, bounds and meaning, in lines of at most
 * 79 columns. */
void request_help(struct buf *b);

#endif
