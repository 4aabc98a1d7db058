/*
 * request.c - parse and check agent-protocol request lines (request.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "chan.h"
#include "request.h"
#include "util.h"

const struct request_op request_ops[] = {
	{ "exec", OP_EXEC, OP_WORKER,
	  "run \"code\" [timeout, atomic, stream]" },
	{ "vars", OP_VARS, OP_WORKER,
	  "list the user's variables [all]" },
	{ "inspect", OP_INSPECT, OP_WORKER,
	  "type, repr, doc and signature of \"name\"" },
	{ "complete", OP_COMPLETE, OP_WORKER,
	  "completions of \"code\" at \"cursor\"" },
	{ "snapshot", OP_SNAPSHOT, OP_SUPERVISOR,
	  "pin the current state as \"name\"" },
	{ "snapshots", OP_SNAPSHOTS, OP_SUPERVISOR,
	  "list the checkpoints" },
	{ "rollback", OP_ROLLBACK, OP_SUPERVISOR,
	  "go back \"to\" a snapshot name or a cell number" },
	{ "reset", OP_RESET, OP_SUPERVISOR,
	  "start over with a fresh namespace" },
	{ "interrupt", OP_INTERRUPT, OP_IMMEDIATE,
	  "stop the running cell" },
	{ "ping", OP_PING, OP_IMMEDIATE,
	  "version, sandbox and state, answered at once" },
	{ "shutdown", OP_SHUTDOWN, OP_SUPERVISOR,
	  "end the session" },
};
const size_t request_nops = nitems(request_ops);

/* Fields the protocol knows: their JSON types and the ops they go with.
 * Unknown fields are ignored so newer clients keep working. */
enum ftype { F_STRING, F_SECONDS, F_BOOL, F_INT, F_NAME_OR_INT, F_SIZE };
static const struct {
	const char *name;
	enum ftype type;
	unsigned ops;		/* bit mask of enum op; 0: every op */
	unsigned required;	/* bit mask of ops that need it */
} request_fields[] = {
	{ "code", F_STRING, (1u << OP_EXEC) | (1u << OP_COMPLETE),
	  (1u << OP_EXEC) | (1u << OP_COMPLETE) },
	{ "timeout", F_SECONDS, 0, 0 },
	{ "max_output", F_SIZE, 1u << OP_EXEC, 0 },
	{ "atomic", F_BOOL, 1u << OP_EXEC, 0 },
	{ "stream", F_BOOL, 1u << OP_EXEC, 0 },
	{ "cursor", F_INT, 1u << OP_COMPLETE, 0 },
	{ "name", F_STRING, (1u << OP_INSPECT) | (1u << OP_SNAPSHOT),
	  (1u << OP_INSPECT) },
	{ "to", F_NAME_OR_INT, 1u << OP_ROLLBACK, 1u << OP_ROLLBACK },
	{ "all", F_BOOL, 1u << OP_VARS, 0 },
};

static const char *
request_type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

const struct request_op *
request_op_find(const char *name)
{
	size_t i;

	for (i = 0; i < request_nops; i++)
		if (strcmp(request_ops[i].name, name) == 0)
			return &request_ops[i];
	return NULL;
}

static int
request_check_field(json_t *v, enum ftype t, const char *name, char *err,
    size_t errlen)
{
	static const char *want[] = {
		[F_STRING] = "a string", [F_SECONDS] = "a number",
		[F_BOOL] = "true or false", [F_INT] = "a whole number >= 0",
		[F_NAME_OR_INT] = "a snapshot name or a cell number",
		[F_SIZE] = "a whole number of bytes",
	};
	bool ok;

	switch (t) {
	case F_STRING: ok = json_is_string(v); break;
	case F_SECONDS:
		ok = json_is_number(v) && json_number_value(v) > 0 &&
		    json_number_value(v) <= REQUEST_MAX_SECONDS;
		if (json_is_number(v) && !ok)
			return err_set(err, errlen, "'%s' must be a positive "
			    "number of seconds, at most %d (a day), not %g",
			    name, REQUEST_MAX_SECONDS, json_number_value(v));
		break;
	case F_SIZE:
		ok = json_is_integer(v) && json_integer_value(v) > 0 &&
		    json_integer_value(v) <= CHAN_MAX_OUTPUT;
		if (json_is_integer(v) && !ok)
			return err_set(err, errlen, "'%s' must be from 1 to %u "
			    "bytes, not %lld", name, CHAN_MAX_OUTPUT,
			    (long long)json_integer_value(v));
		break;
	case F_BOOL: ok = json_is_boolean(v); break;
	case F_INT: ok = json_is_integer(v) && json_integer_value(v) >= 0; break;
	case F_NAME_OR_INT:
		ok = json_is_string(v) ||
		    (json_is_integer(v) && json_integer_value(v) >= 0);
		break;
	default: ok = false;
	}
	if (!ok)
		return err_set(err, errlen, "'%s' must be %s, not %s", name,
		    want[t], request_type_name(v));
	return 0;
}

int
request_parse(const char *line, size_t len, json_t **req, json_t **id,
    enum op *op, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *o, *v, *opv;
	const struct request_op *rop;
	size_t i;

	*req = NULL;
	*id = json_null();
	o = json_loadb(line, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
	    &jerr);
	if (o == NULL)
		return err_set(err, errlen, "the request is not valid JSON: %s "
		    "(column %d)", jerr.text, jerr.column);
	if (!json_is_object(o)) {
		err_set(err, errlen, "the request must be a JSON object, not %s",
		    request_type_name(o));
		goto bad;
	}
	v = json_object_get(o, "id");
	if (v != NULL && !json_is_string(v) && !json_is_number(v) &&
	    !json_is_null(v)) {
		err_set(err, errlen, "'id' must be a string or a number, not %s",
		    request_type_name(v));
		goto bad;
	}
	if (v != NULL) {
		json_decref(*id);
		*id = json_incref(v);
	}
	opv = json_object_get(o, "op");
	if (opv == NULL) {
		if (json_object_get(o, "code") == NULL) {
			err_set(err, errlen, "the request has neither 'op' nor "
			    "'code': send {\"code\": \"...\"} to run a cell");
			goto bad;
		}
		rop = request_op_find("exec");
		json_object_set_new(o, "op", json_string("exec"));
	} else if (!json_is_string(opv)) {
		err_set(err, errlen, "'op' must be a string, not %s",
		    request_type_name(opv));
		goto bad;
	} else if ((rop = request_op_find(json_string_value(opv))) == NULL) {
		struct buf names;

		buf_init(&names);
		for (i = 0; i < request_nops; i++)
			buf_printf(&names, "%s%s", i ? ", " : "",
			    request_ops[i].name);
		err_set(err, errlen, "unknown op '%.64s': the ops are %s",
		    json_string_value(opv), names.p);
		buf_free(&names);
		goto bad;
	}
	for (i = 0; i < nitems(request_fields); i++) {
		unsigned bit = 1u << rop->op;

		v = json_object_get(o, request_fields[i].name);
		if (v == NULL || (json_is_null(v) &&
		    !(request_fields[i].required & bit))) {
			if (request_fields[i].required & bit) {
				err_set(err, errlen, "op '%s' needs '%s'",
				    rop->name, request_fields[i].name);
				goto bad;
			}
			continue;
		}
		if (request_fields[i].ops != 0 &&
		    !(request_fields[i].ops & bit))
			continue;
		if (request_check_field(v, request_fields[i].type,
		    request_fields[i].name, err, errlen) == -1)
			goto bad;
	}
	*req = o;
	*op = rop->op;
	return 0;
bad:
	json_decref(o);
	return -1;
}
