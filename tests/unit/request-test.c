/*
 * request-test.c - request_parse on good and bad lines, and the
 * request tables: every field's bounds and types as request_parse holds
 * them, the schema and the --help rows made from them, what the
 * session's dispatcher reads, request_from_json against
 * request_parse, and jsonline_load on what JSON allows and jansson
 * alone refuses (TAP).
 */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "jsonline.h"
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

/* The warnings request_warnings gives for line, joined by " | ", must
 * be want ("" for none). */
static bool
warns(const char *line, const char *want)
{
	json_t *req, *id, *w;
	enum op op;
	char err[512];
	struct buf got;
	size_t i;
	bool ok;

	if (request_parse(line, strlen(line), &req, &id, &op, err,
	    sizeof err) == -1) {
		printf("#   error: %s\n", err);
		json_decref(id);
		return false;
	}
	w = request_warnings(req, op);
	buf_init(&got);
	buf_printf(&got, "%s", "");
	for (i = 0; i < json_array_size(w); i++)
		buf_printf(&got, "%s%s", i ? " | " : "",
		    json_string_value(json_array_get(w, i)));
	ok = strcmp(got.p, want) == 0 && (w == NULL) == (*want == '\0');
	if (!ok)
		printf("#   got '%s'\n", got.p);
	buf_free(&got);
	json_decref(w);
	json_decref(req);
	json_decref(id);
	return ok;
}

/* A request line of op with a sample of each field it needs and f set to
 * v (stolen); NULL f: none.  Caller frees. */
static char *
request_line(const struct request_op *op, const struct request_field *f,
    json_t *v)
{
	json_t *o = json_pack("{s:s}", "op", op->name);
	const struct request_field *g;
	char *line;

	for (g = request_fields; g < request_fields + request_nfields; g++)
		if (request_needs(g, op->op))
			json_object_set_new(o, g->name, g->types & T_STRING ?
			    json_string("x") : json_integer(g->min));
	if (f != NULL)
		json_object_set_new(o, f->name, v);
	line = json_dumps(o, JSON_ENCODE_ANY);
	json_decref(o);
	return line;
}

/* Whether request_parse refuses the line for field f ("'f' must be"),
 * as it should when refuse is set, and takes it otherwise. */
static bool
judged(char *line, const struct request_field *f, bool refuse)
{
	json_t *req, *id;
	enum op op;
	char err[512] = "", want[64];
	int rc = request_parse(line, strlen(line), &req, &id, &op, err,
	    sizeof err);
	bool ok;

	snprintf(want, sizeof want, "'%s' must be ", f->name);
	ok = refuse ? rc == -1 && strncmp(err, want, strlen(want)) == 0 :
	    rc == 0;
	if (!ok)
		printf("#   %s: rc %d, error '%s'\n", line, rc, err);
	json_decref(req);
	json_decref(id);
	free(line);
	return ok;
}

static json_t *
number(bool real, double x)
{
	return real ? json_real(x) : json_integer((json_int_t)x);
}

/* Each bound of f, for op, from just inside and just outside: a number
 * field by a millionth, an integer one by one. */
static void
check_bounds(const struct request_op *op, const struct request_field *f)
{
	bool real = (f->types & T_NUMBER) != 0;
	double step = real ? 1e-6 : 1;
	double lo = (double)f->min, hi = (double)f->max;

	if (f->bounds & B_MIN_EXCL) {
		tap_ok(judged(request_line(op, f, number(real, lo + step)), f,
		    false), "%s: %s just over its minimum", op->name, f->name);
		tap_ok(judged(request_line(op, f, number(real, lo)), f, true),
		    "%s: %s at its exclusive minimum", op->name, f->name);
	} else if (f->bounds & B_MIN) {
		tap_ok(judged(request_line(op, f, number(real, lo)), f, false),
		    "%s: %s at its minimum", op->name, f->name);
		tap_ok(judged(request_line(op, f, number(real, lo - step)), f,
		    true), "%s: %s under its minimum", op->name, f->name);
	}
	if (f->bounds & B_MAX) {
		tap_ok(judged(request_line(op, f, number(real, hi)), f, false),
		    "%s: %s at its maximum", op->name, f->name);
		tap_ok(judged(request_line(op, f, number(real, hi + step)), f,
		    true), "%s: %s over its maximum", op->name, f->name);
	}
}

/* op's schema lists exactly the fields it takes, with the table's
 * bounds, and the ones it needs as required. */
static bool
schema_agrees(const struct request_op *op)
{
	json_t *s = request_schema(op), *props, *p, *req;
	const struct request_field *f;
	size_t nprops = 0, nreq = 0;
	bool ok;

	props = json_object_get(s, "properties");
	req = json_object_get(s, "required");
	ok = json_is_object(props) && strcmp(json_string_value(
	    json_object_get(s, "type")), "object") == 0;
	for (f = request_fields; ok && f < request_fields + request_nfields;
	    f++) {
		if (f->envelope || !request_takes(f, op->op)) {
			ok = json_object_get(props, f->name) == NULL;
			continue;
		}
		p = json_object_get(props, f->name);
		nprops++;
		nreq += request_needs(f, op->op);
		ok = p != NULL && json_is_string(json_object_get(p,
		    "description")) &&
		    ((f->bounds & B_MAX) ? json_integer_value(json_object_get(p,
		    "maximum")) == f->max : json_object_get(p, "maximum") ==
		    NULL) &&
		    json_integer_value(json_object_get(p, (f->bounds &
		    B_MIN_EXCL) ? "exclusiveMinimum" : "minimum")) ==
		    ((f->bounds & B_MIN) ? f->min : 0);
	}
	ok = ok && json_object_size(props) == nprops &&
	    (nreq == 0 ? req == NULL : json_array_size(req) == nreq);
	json_decref(s);
	return ok;
}

/* Whether help has a line "  name  text...", text (if given) following
 * the name's padding. */
static bool
help_has_row(const char *help, const char *name, const char *text)
{
	char head[64];
	const char *p;

	snprintf(head, sizeof head, "\n  %s ", name);
	for (p = strstr(help, head); p != NULL; p = strstr(p + 1, head)) {
		p += strlen(head);
		p += strspn(p, " ");
		if (text == NULL || strncmp(p, text, strlen(text)) == 0)
			return true;
	}
	return false;
}

static void
check_table(void)
{
	const struct request_op *op;
	const struct request_field *f;
	struct buf help;
	const char *line, *nl;
	bool fits = true;

	for (op = request_ops; op < request_ops + request_nops; op++) {
		tap_ok(op == &request_ops[op->op], "request_ops[%s] is its "
		    "entry", op->name);
		for (f = request_fields; f < request_fields + request_nfields;
		    f++) {
			if (f->envelope)
				continue;
			if (!request_takes(f, op->op)) {
				tap_ok(judged(request_line(op, f, json_object()),
				    f, false), "%s does not check %s",
				    op->name, f->name);
				continue;
			}
			tap_ok(judged(request_line(op, f, json_object()), f,
			    true), "%s: %s that is an object", op->name,
			    f->name);
			check_bounds(op, f);
		}
		tap_ok(schema_agrees(op), "%s: the schema is the table's",
		    op->name);
	}
	buf_init(&help);
	request_help(&help);
	for (line = help.p; *line != '\0'; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl == NULL || nl - line > 79)
			fits = false;
		if (nl == NULL)
			break;
	}
	tap_ok(fits, "--help's requests: lines of 79 columns at most, each "
	    "ended");
	for (op = request_ops; op < request_ops + request_nops; op++)
		tap_ok(help_has_row(help.p, op->name, op->usage),
		    "--help has a row for op %s", op->name);
	for (f = request_fields; f < request_fields + request_nfields; f++)
		tap_ok(help_has_row(help.p, f->name, NULL),
		    "--help has a row for field %s", f->name);
	buf_free(&help);
}

#define REJECTS(line, want, id) rejects(line, strlen(line), want, id)

/* An exec of code, through request_magic: the op it became and the
 * request as JSON, compact, keys sorted. */
static bool
magic(const char *code, enum op want, const char *json)
{
	json_t *req = json_pack("{s:s, s:s, s:i}", "op", "exec", "code", code,
	    "timeout", 5);
	enum op op = OP_EXEC;
	bool changed = request_magic(req, &op);
	char *got = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
	bool ok = op == want && changed == (want != OP_EXEC) &&
	    strcmp(got, json) == 0;

	if (!ok)
		printf("# %s: got op %d, %s\n", code, (int)op, got);
	free(got);
	json_decref(req);
	return ok;
}

/* coil's checkpoint magics become the supervisor's ops; anything else
 * stays a cell, for the worker to run or refuse. */
static void
check_magics(void)
{
	tap_ok(magic("%snapshot a", OP_SNAPSHOT,
	    "{\"name\":\"a\",\"op\":\"snapshot\",\"timeout\":5}"),
	    "%%snapshot NAME is the snapshot op");
	tap_ok(magic("  %snapshot\n", OP_SNAPSHOT,
	    "{\"op\":\"snapshot\",\"timeout\":5}"),
	    "%%snapshot alone: a generated name");
	tap_ok(magic("%rollback 12", OP_ROLLBACK,
	    "{\"op\":\"rollback\",\"timeout\":5,\"to\":12}"),
	    "%%rollback CELL: a number");
	tap_ok(magic("%rollback before-fit ", OP_ROLLBACK,
	    "{\"op\":\"rollback\",\"timeout\":5,\"to\":\"before-fit\"}"),
	    "%%rollback NAME: a string");
	tap_ok(magic("%snapshots", OP_SNAPSHOTS,
	    "{\"op\":\"snapshots\",\"timeout\":5}"), "%%snapshots");
	tap_ok(magic("%rollback", OP_EXEC, "{\"code\":\"%rollback\","
	    "\"op\":\"exec\",\"timeout\":5}"),
	    "%%rollback without a target is left to the worker's usage");
	tap_ok(magic("x = 1\n%snapshot a", OP_EXEC, "{\"code\":\"x = 1\\n"
	    "%snapshot a\",\"op\":\"exec\",\"timeout\":5}"),
	    "inside a larger cell: left to the worker");
	tap_ok(magic("%snapshotx", OP_EXEC, "{\"code\":\"%snapshotx\","
	    "\"op\":\"exec\",\"timeout\":5}"), "another magic's name");
	tap_ok(magic("%timeit x", OP_EXEC, "{\"code\":\"%timeit x\","
	    "\"op\":\"exec\",\"timeout\":5}"), "the worker's magics");
}

/* What the session's dispatcher reads of each op agrees with the rest
 * of the table: an op answered at once waits for nothing, the worker's
 * ops wait for a quiet worker and run under a deadline, and the ops
 * that run are the ones that take a timeout. */
static void
check_serving(void)
{
	const struct request_op *op;
	const struct request_field *f = NULL;
	unsigned runs = 0;
	size_t i;

	for (i = 0; i < request_nfields; i++)
		if (strcmp(request_fields[i].name, "timeout") == 0)
			f = &request_fields[i];
	for (op = request_ops; op < request_ops + request_nops; op++) {
		if (op->where == OP_IMMEDIATE)
			tap_ok(op->flags == 0, "%s, answered at once, waits "
			    "for nothing", op->name);
		if (op->where == OP_WORKER)
			tap_ok(op->flags == (OPF_QUIET | OPF_RUN), "%s waits "
			    "for a quiet worker and runs", op->name);
		if (op->flags & OPF_RUN)
			runs |= OP_BIT(op->op);
	}
	tap_ok(f != NULL && f->ops == runs, "the ops that run take a timeout");
}

/* request_from_json on line's value gives what request_parse gives on
 * line: the same result, message, id, op and request. */
static bool
same_from_json(const char *line)
{
	json_t *req[2], *id[2], *v;
	enum op op[2] = { OP_PING, OP_PING };
	char err[2][512] = { "", "" }, *s[4];
	int rc[2];
	bool ok;

	rc[0] = request_parse(line, strlen(line), &req[0], &id[0], &op[0],
	    err[0], sizeof err[0]);
	v = json_loads(line, JSON_DECODE_ANY, NULL);
	if (v == NULL)
		return false;
	rc[1] = request_from_json(v, &req[1], &id[1], &op[1], err[1],
	    sizeof err[1]);
	s[0] = json_dumps(id[0], JSON_ENCODE_ANY);
	s[1] = json_dumps(id[1], JSON_ENCODE_ANY);
	s[2] = rc[0] == 0 ? json_dumps(req[0], 0) : strdup("");
	s[3] = rc[1] == 0 ? json_dumps(req[1], 0) : strdup("");
	ok = rc[0] == rc[1] && strcmp(err[0], err[1]) == 0 &&
	    strcmp(s[0], s[1]) == 0 && strcmp(s[2], s[3]) == 0 &&
	    (rc[0] == -1 || op[0] == op[1]);
	if (!ok)
		printf("#   line: %s\n#   '%s' %s, '%s' %s\n", line, err[0],
		    s[0], err[1], s[1]);
	for (rc[0] = 0; rc[0] < 4; rc[0]++)
		free(s[rc[0]]);
	json_decref(req[0]);
	json_decref(req[1]);
	json_decref(id[0]);
	json_decref(id[1]);
	return ok;
}

static void
check_from_json(void)
{
	static const char *const lines[] = {
		"{\"code\": \"1+1\"}",
		"{\"id\": 2, \"op\": \"rollback\", \"to\": \"a\"}",
		"{\"op\": \"vars\", \"code\": 5, \"x\": [1]}",
		"[]", "7", "null", "\"exec\"",
		"{\"id\": [1], \"code\": \"1\"}",
		"{\"id\": 5, \"op\": \"snapshts\"}",
		"{\"id\": \"s\", \"code\": null}",
		"{\"code\": \"1\", \"timeout\": 1e300}",
		"{\"code\": \"1\", \"max_output\": 0}",
		"{\"op\": \"rollback\"}",
		"{\"id\": 1}",
		"{\"op\": 3}",
	};
	size_t i;

	for (i = 0; i < nitems(lines); i++)
		tap_ok(same_from_json(lines[i]), "request_from_json as "
		    "request_parse: %s", lines[i]);
}

/* Good and bad lines, and the messages they get. */
static void
check_lines(void)
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
}

/* Numbers that would overflow a deadline or a frame. */
/* An interrupt's "by": a short printable string, counted in characters
 * as the schema's maxLength counts them. */
static void
check_labels(void)
{
	struct buf line;
	int i;

	tap_ok(parses("{\"op\": \"interrupt\", \"by\": \"alice@pts/3\"}",
	    OP_INTERRUPT), "interrupt by a name");
	tap_ok(REJECTS("{\"op\": \"interrupt\", \"by\": \"\"}", "'by' must be "
	    "a string of 1 to 64", "null"), "an empty by");
	tap_ok(REJECTS("{\"op\": \"interrupt\", \"by\": \"a\\nb\"}",
	    "'by' must be", "null"), "a by with a newline");
	tap_ok(REJECTS("{\"op\": \"interrupt\", \"by\": \"a\\u001b[31m\"}",
	    "'by' must be", "null"), "a by with an escape");
	tap_ok(REJECTS("{\"op\": \"interrupt\", \"by\": \"a\\u0085\"}",
	    "'by' must be", "null"), "a by with a C1 control");
	tap_ok(REJECTS("{\"op\": \"interrupt\", \"by\": 7}",
	    "'by' must be", "null"), "a by that is a number");
	buf_init(&line);
	buf_addstr(&line, "{\"op\": \"interrupt\", \"by\": \"");
	for (i = 0; i < 64; i++)
		buf_addstr(&line, "\xe5\x90\x8d");	/* U+540D, 3 bytes */
	buf_addstr(&line, "\"}");
	tap_ok(parses(line.p, OP_INTERRUPT), "a by of 64 characters, 192 "
	    "bytes");
	buf_free(&line);
	buf_init(&line);
	buf_addstr(&line, "{\"op\": \"interrupt\", \"by\": \"");
	for (i = 0; i < 65; i++)
		buf_addstr(&line, "x");
	buf_addstr(&line, "\"}");
	tap_ok(REJECTS(line.p, "'by' must be", "null"), "a by of 65 "
	    "characters");
	buf_free(&line);
}

static void
check_numbers(void)
{
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
	check_labels();
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
}

/* A line that is not JSON keeps the id its outer object shows. */
static void
check_cut(void)
{
	{
		static const struct {
			const char *line, *want, *id, *what;
		} cut[] = {
			{ "{\"id\": 4, \"code\": \"1", "not valid JSON", "4",
			  "a cut line keeps its id" },
			{ "{\"code\": \"\\\"id\\\": 1\", \"id\": \"b\",",
			  "not valid JSON", "\"b\"",
			  "an id after a string holding \"id\"" },
			{ "{\"a\": {\"id\": 2}, \"x\": [", "not valid JSON",
			  "null", "an inner object's id is not the request's" },
			{ "{\"x\": \"id\", \"y\": 1,", "not valid JSON", "null",
			  "a value \"id\" is not a key" },
			{ "{\"id\": {\"a\": 1}, \"code\"", "not valid JSON",
			  "null", "an id that is no id is not taken" },
			{ "{\"id\": 3, \"code\": \"1\", \"code\": \"2\"}",
			  "duplicate", "3", "a duplicate key keeps the id" },
		};
		size_t i;

		for (i = 0; i < nitems(cut); i++)
			tap_ok(REJECTS(cut[i].line, cut[i].want, cut[i].id),
			    "%s", cut[i].what);
	}
}

/* Fields an op does not take are named, with the closest known. */
static void
check_warnings(void)
{
	tap_ok(warns("{\"code\": \"1\", \"timeout\": 1}", ""),
	    "no warning for known fields");
	tap_ok(warns("{\"code\": \"1\", \"timout\": 1}", "unknown field "
	    "'timout' was ignored; did you mean 'timeout'?"), "a slip in a "
	    "field's name");
	tap_ok(warns("{\"code\": \"1\", \"tiemout\": 1}", "unknown field "
	    "'tiemout' was ignored; did you mean 'timeout'?"),
	    "two letters swapped");
	tap_ok(warns("{\"code\": \"1\", \"banana\": 1}", "unknown field "
	    "'banana' was ignored"), "nothing close: no guess");
	tap_ok(warns("{\"op\": \"ping\", \"to\": 1}", "'to' is not a field "
	    "of op 'ping'; it was ignored"), "a field of another op");
	tap_ok(request_closest(request_ops, request_nops, sizeof *request_ops,
	    "snapshts") != NULL && strcmp(request_closest(request_ops,
	    request_nops, sizeof *request_ops, "snapshts"), "snapshots") == 0,
	    "the closest op to 'snapshts'");
	tap_ok(request_closest(request_ops, request_nops, sizeof *request_ops,
	    "a-name-longer-than-any-table-holds-by-far") == NULL,
	    "a long name is near nothing");
}

/* A rollback's "to" of digits is the cell number they spell. */
static bool
rollback_to(const char *line, const char *want)
{
	json_t *req, *id;
	enum op op;
	char err[512], *got = NULL;
	bool ok;

	ok = request_parse(line, strlen(line), &req, &id, &op, err,
	    sizeof err) == 0 && (got = json_dumps(json_object_get(req, "to"),
	    JSON_ENCODE_ANY)) != NULL && strcmp(got, want) == 0;
	if (!ok)
		printf("#   %s: got %s\n", line, got != NULL ? got : err);
	free(got);
	json_decref(req);
	json_decref(id);
	return ok;
}

/* jsonline_load(line) dumped compactly must be want ("" for NULL). */
static bool
loads_as(const char *line, const char *want)
{
	json_error_t jerr;
	json_t *v = jsonline_load(line, strlen(line), JSON_DECODE_ANY, &jerr);
	char *got = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) :
	    NULL;
	bool ok = strcmp(got != NULL ? got : "", want) == 0;

	if (!ok)
		printf("#   %s: got %s (%s)\n", line, got != NULL ? got :
		    "NULL", v == NULL ? jerr.text : "");
	free(got);
	json_decref(v);
	return ok;
}

/* Lone surrogates keep their escape; integers beyond 64 bits are
 * reals; nothing else changes, and a broken line stays broken, in its
 * own words. */
static void
check_jsonline(void)
{
	json_error_t jerr;
	size_t end;

	tap_ok(loads_as("[\"\\ud800\"]", "[\"\\\\ud800\"]"),
	    "a lone high surrogate is the text of its escape");
	tap_ok(loads_as("\"a\\udc00b\"", "\"a\\\\udc00b\""),
	    "a lone low surrogate too");
	tap_ok(loads_as("\"\\ud800\\ud83d\\ude00\"",
	    "\"\\\\ud800\xf0\x9f\x98\x80\""),
	    "a pair after a lone one is one character");
	tap_ok(loads_as("\"\\\\ud800\\ud800\"",
	    "\"\\\\ud800\\\\ud800\""),
	    "an escaped backslash is no escape");
	tap_ok(loads_as("{\"id\": 123456789012345678901234567890}",
	    "{\"id\":1.2345678901234568e29}"), "a big integer is a real");
	tap_ok(loads_as("[9223372036854775807, -9223372036854775808, "
	    "9223372036854775808, \"99999999999999999999\", 1e5, 2]",
	    "[9223372036854775807,-9223372036854775808,"
	    "9.2233720368547758e18,\"99999999999999999999\",100000.0,2]"),
	    "64 bits are an integer, one more a real; strings untouched");
	tap_ok(jsonline_load("{\"a\": 99999999999999999999,", 26, 0,
	    &jerr) == NULL && jerr.column == 26 &&
	    strstr(jerr.text, "too big integer") != NULL,
	    "a broken line stays broken, the first reading's error said");
	tap_ok(jsonline_big_int("-9223372036854775809,", 21, &end) &&
	    end == 20 && !jsonline_big_int("99999999999999999999.5", 22,
	    NULL) && !jsonline_big_int("-", 1, NULL),
	    "jsonline_big_int: integers only, their length");
	tap_ok(rollback_to("{\"op\": \"rollback\", \"to\": \"0\"}", "0") &&
	    rollback_to("{\"op\": \"rollback\", \"to\": \"007\"}", "7") &&
	    rollback_to("{\"op\": \"rollback\", \"to\": \"a1\"}",
	    "\"a1\"") && rollback_to("{\"op\": \"rollback\", \"to\": "
	    "\"1234567890123456789\"}", "\"1234567890123456789\"") &&
	    rollback_to("{\"op\": \"rollback\", \"to\": \"-1\"}", "\"-1\""),
	    "a rollback to a string of digits is to that cell");
}

int
main(void)
{
	check_lines();
	check_numbers();
	check_cut();
	check_warnings();
	check_magics();
	check_table();
	check_serving();
	check_from_json();
	check_jsonline();
	return tap_done();
}
