/*
 * request-test.c - request_parse on good and bad lines (TAP).
 */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "request.h"
#include "tap.h"
#include "util.h"

static bool
parses(const char *line, enum op want)
{
	json_t *req, *id;
	enum op op;
	char err[512];
	int rc = request_parse(line, strlen(line), &req, &id, &op, err,
	    sizeof err);
	bool ok = rc == 0 && op == want && json_is_object(req);

	if (rc != 0)
		printf("#   error: %s\n", err);
	json_decref(req);
	json_decref(id);
	return ok;
}

/* The error message must contain want; the id must be as given. */
static bool
rejects(const char *line, size_t len, const char *want, const char *want_id)
{
	json_t *req, *id;
	enum op op;
	char err[512] = "", *ids;
	bool ok;

	ok = request_parse(line, len, &req, &id, &op, err, sizeof err) == -1 &&
	    req == NULL && strstr(err, want) != NULL;
	ids = json_dumps(id, JSON_ENCODE_ANY);
	ok = ok && strcmp(ids, want_id) == 0;
	if (!ok)
		printf("#   got error '%s', id %s\n", err, ids);
	free(ids);
	json_decref(id);
	return ok;
}

#define REJECTS(line, want, id) rejects(line, strlen(line), want, id)

int
main(void)
{
	json_t *req, *id;
	enum op op;
	char err[256];

	tap_ok(parses("{\"code\": \"1+1\"}", OP_EXEC), "code alone is exec");
	tap_ok(parses("{\"op\": \"ping\", \"id\": 3}", OP_PING), "ping");
	tap_ok(parses("{\"op\": \"rollback\", \"to\": 4}", OP_ROLLBACK),
	    "rollback to a cell");
	tap_ok(parses("{\"op\": \"rollback\", \"to\": \"a\"}", OP_ROLLBACK),
	    "rollback to a name");
	tap_ok(parses("{\"op\": \"complete\", \"code\": \"x.\", \"cursor\": 2}",
	    OP_COMPLETE), "complete with cursor");
	tap_ok(parses("{\"code\": \"1\", \"future_field\": [1]}", OP_EXEC),
	    "unknown fields are ignored");
	tap_ok(parses("{\"code\": \"1\", \"timeout\": 0.25}", OP_EXEC),
	    "fractional timeout");
	tap_ok(parses("{\"op\": \"vars\", \"code\": 5}", OP_VARS),
	    "a field of another op is not checked");

	tap_ok(REJECTS("{", "not valid JSON", "null"), "truncated JSON");
	tap_ok(REJECTS("[]", "not an array", "null"), "an array");
	tap_ok(REJECTS("7", "not an integer", "null"), "a number");
	tap_ok(REJECTS("null", "not null", "null"), "null");
	tap_ok(REJECTS("{\"id\": [1], \"code\": \"1\"}", "'id' must be",
	    "null"), "id that is an array");
	tap_ok(REJECTS("{\"id\": 5, \"op\": \"nope\"}", "unknown op 'nope'",
	    "5"), "unknown op keeps the id");
	tap_ok(REJECTS("{\"id\": \"s\", \"code\": null}", "'code' must be a string, not null",
	    "\"s\""), "null code");
	tap_ok(REJECTS("{\"code\": \"1\", \"timeout\": 0}", "positive", "null"),
	    "zero timeout");
	tap_ok(REJECTS("{\"code\": \"1\", \"timeout\": true}",
	    "must be a number, not a boolean", "null"), "boolean timeout");
	tap_ok(REJECTS("{\"op\": \"complete\", \"code\": \"\", \"cursor\": -1}",
	    "'cursor' must be a whole number", "null"), "negative cursor");
	tap_ok(REJECTS("{\"op\": \"rollback\", \"to\": 1.5}", "'to' must be",
	    "null"), "fractional rollback target");
	tap_ok(REJECTS("{\"op\": \"rollback\"}", "needs 'to'", "null"),
	    "rollback without a target");
	tap_ok(rejects("{\"code\": \"\xff\"}", 13, "not valid JSON", "null"),
	    "invalid UTF-8");
	tap_ok(rejects("{\"code\": \"a\0b\"}", 15, "not valid JSON", "null"),
	    "raw NUL byte");

	tap_ok(request_parse("{\"code\": \"a\\u0000b\"}", 20, &req, &id, &op,
	    err, sizeof err) == 0 && json_string_length(json_object_get(req,
	    "code")) == 3, "escaped NUL kept in code");
	json_decref(req);
	json_decref(id);
	tap_ok(request_op_find("exec") != NULL && request_op_find("x") == NULL,
	    "op table lookup");

	/* Numbers that would overflow a deadline or a frame. */
	tap_ok(REJECTS("{\"code\": \"1\", \"timeout\": 1e300}", "at most "
	    "86400", "null"), "a timeout of 1e300");
	tap_ok(REJECTS("{\"code\": \"1\", \"timeout\": 86401}", "at most "
	    "86400", "null"), "a timeout over a day");
	tap_ok(parses("{\"code\": \"1\", \"timeout\": 86400}", OP_EXEC),
	    "a timeout of a day");
	tap_ok(REJECTS("{\"code\": \"1\", \"max_output\": 16777217}",
	    "from 1 to 16777216", "null"), "max_output over the frame's share");
	tap_ok(REJECTS("{\"code\": \"1\", \"max_output\": 0}",
	    "from 1 to", "null"), "max_output 0");
	tap_ok(parses("{\"code\": \"1\", \"max_output\": 100}", OP_EXEC),
	    "max_output 100");
	{
		static const char *const bad[] = { "nan", "NaN", "inf",
		    "-inf", "infinity", "-1", "-0.5k", "1e400", "", "k", "5x" };
		unsigned long long v;
		size_t i;

		for (i = 0; i < nitems(bad); i++)
			tap_ok(parse_size(bad[i], &v) == -1, "parse_size "
			    "refuses '%s'", bad[i]);
		tap_ok(parse_size("1.5K", &v) == 0 && v == 1536,
		    "parse_size '1.5K'");
		tap_ok(parse_size("16MiB", &v) == 0 && v == 16u << 20,
		    "parse_size '16MiB'");
	}
	return tap_done();
}
