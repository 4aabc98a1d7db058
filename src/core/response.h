/*
 * response.h - one answer to one request, as data.
 *
 * Every answer the session gives (to a cell, to any other op, to a line
 * that was not a request at all) is a struct response: a status, the
 * request's id, sequence number and origin, and the fields that status
 * and op carry.  Front ends read the fields; response_json is the one
 * serializer, so the agent protocol's lines, the attach socket's events,
 * the MCP results' structuredContent and the replay's comparisons agree
 * on every name.  The error object of the protocol, {type, message,
 * traceback, line}, is built here and nowhere else in the supervisor
 * (errors.py's _error is its one other builder).
 *
 * Supervisor only.  Pure: no I/O.  Strings are NUL-terminated, valid
 * UTF-8, owned by the response and freed with it.
 */
#ifndef COIL_RESPONSE_H
#define COIL_RESPONSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "figure.h"
#include "request.h"

enum status {
	ST_OK, ST_ERROR, ST_INCOMPLETE, ST_TIMEOUT, ST_INTERRUPTED,
	ST_CRASHED, ST_INVALID,
};

/* Who sent a request: the model, the person at a terminal, a replay. */
enum origin { ORIGIN_AGENT, ORIGIN_PERSON, ORIGIN_REPLAY };

extern const char *const status_names[];
extern const char *const origin_names[];

struct response_error {
	char *type;
	char *message;
	char *traceback;	/* NULL: none */
	char *hint;		/* the likely next move; NULL: none */
	int line, column;	/* 0: none */
};

/* Which optional parts a response carries. */
#define RESP_CELL	0x01	/* cell (else null, for exec) */
#define RESP_EXEC	0x02	/* output, stderr, result, display, duration */
#define RESP_RESULT	0x04	/* result is a value (else null) */
#define RESP_COST	0x08	/* cpu_ms and memory_peak measured (else null) */

/* The combinations of response_json's flags (RESPONSE_SEQ, ..._BRIEF). */
#define RESPONSE_FLAGS 4

struct response {
	enum status status;
	enum op op;
	json_t *id;		/* echoed back: any JSON value, null when none */
	uint64_t seq;		/* the session's number for the request */
	enum origin origin;
	int client;		/* the session's tag for who sent it */
	unsigned has;		/* RESP_* */
	int cell;
	char *output, *stderr_text, *result;
	size_t output_len, stderr_len, result_len;
	struct response_error *error;	/* NULL: none */
	json_t *display;	/* exec: array */
	struct figure *figs;	/* exec: the bytes of display's images that
				   the worker handed over (figure.h), NULL:
				   none; owned */
	size_t nfigs;
	double duration_ms;
	double cpu_ms;		/* RESP_COST: the supervisor's measures */
	long long memory_peak;	/* bytes; -1: unknown (null) */
	json_t *effects;	/* exec: array of effect objects, or NULL */
	unsigned long long effects_more;	/* effects not listed */
	unsigned long long truncated;	/* bytes left out; 0: none */
	json_t *restored;	/* NULL: absent; json null: the interrupt sufficed */
	json_t *background;	/* {output, stderr} written between cells */
	json_t *warnings;	/* array of strings, or NULL */
	json_t *fields;		/* the op's own fields (vars, matches, ...) */
	int refs;
	/* response_text's lines, one for each set of flags: the recorder,
	 * a --brief agent and the socket's clients each want their own */
	char *text[RESPONSE_FLAGS];
	size_t text_len[RESPONSE_FLAGS];
};

struct response *response_new(enum status status);
/* Keep r beyond the callback that lent it; response_free drops one. */
struct response *response_ref(struct response *r);
void response_free(struct response *r);

/* A new error; fmt is the message. */
struct response_error *response_error(const char *type, const char *fmt,
    ...) __attribute__((format(printf, 2, 3)));
void response_error_free(struct response_error *e);
/* The worker's error object, checked: type and message must be strings,
 * traceback a string or null, line and column positive integers or
 * absent.  NULL when e is not such an object. */
struct response_error *response_error_from_json(json_t *e);

/* An "invalid" answer whose error says what was wrong. */
struct response *response_invalid(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* status "error" carrying e (stolen). */
struct response *response_failed(struct response_error *e);

/* Set the response's text fields (copied). */
void response_set_output(struct response *r, const char *p, size_t n);
void response_set_stderr(struct response *r, const char *p, size_t n);
void response_set_result(struct response *r, const char *p, size_t n);
/* Add one op field (value stolen), and a warning. */
void response_set(struct response *r, const char *key, json_t *v);
void response_warn(struct response *r, const char *msg);

/* The response as a protocol object.  RESPONSE_SEQ adds "seq" and
 * "origin" (attach clients and observers; the agent on stdin does not
 * pay for them in its context). */
#define RESPONSE_SEQ 0x01
/* RESPONSE_BRIEF leaves out what says nothing: a field (id and status
 * aside) or an error's member that is null, "", [] or {}.  An absent
 * field then reads as its empty value; for a model, whose context pays
 * for every byte. */
#define RESPONSE_BRIEF 0x02
json_t *response_json(const struct response *r, unsigned flags);
/* The same as one compact line ending in a newline (len counts it),
 * encoded once for each flags and kept in r until it is freed: the
 * transcript and the client it answers write the same bytes. */
const char *response_text(struct response *r, unsigned flags, size_t *len);
json_t *response_error_json(const struct response_error *e);

/* The inverse of response_json (without RESPONSE_BRIEF): a protocol
 * object read back, by a client of the session (coil --attach), into a new
 * response whose response_json is the object again.  o is untrusted: a member
 * of the wrong type, a status or origin of no known name, or no "status" at all
 * is refused (NULL, err says which member); members response_json does not
 * write from fields of its own go to r->fields in their order (so does the
 * "cell" of an answer not exec's: the supervisor sets RESP_CELL on exec's
 * answers alone).  What no line carries stays as response_new leaves it: op,
 * client, figs; an error's strings are C strings, a NUL in them written \x00
 * (response_error_from_json). */
struct response *response_from_json(json_t *o, char *err, size_t errlen);

#endif
