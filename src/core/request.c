/*
 * request.c - parse and check agent-protocol request lines, and say
 * what they may hold: --help's part and the JSON Schema (request.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan.h"
#include "jsonline.h"
#include "magic.h"
#include "request.h"
#include "util.h"

/* The JSON types of a T_* mask, for JSON Schema and --help. */
static const struct {
	unsigned type;
	const char *name;
} request_types[] = {
	{ T_STRING, "string" }, { T_INTEGER, "integer" },
	{ T_NUMBER, "number" }, { T_BOOL, "boolean" }, { T_NULL, "null" },
	{ T_MIMES, "array" }, { T_LABEL, "string" },
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

/* The entry of a table of structs that start with their name. */
static const void *
request_lookup(const void *table, size_t n, size_t size, const char *name)
{
	const char *p = table;
	size_t i;

	for (i = 0; i < n; i++, p += size)
		if (strcmp(*(const char *const *)(const void *)p, name) == 0)
			return p;
	return NULL;
}

/* The edit distance of a and b (insert, delete, substitute, swap two
 * neighbours), for "did you mean": both are short names. */
static size_t
request_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t d[REQUEST_NAME_MAX + 1][REQUEST_NAME_MAX + 1];

	if (la > REQUEST_NAME_MAX || lb > REQUEST_NAME_MAX)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *
request_closest(const void *table, size_t n, size_t size, const char *name)
{
	const char *p = table, *best = NULL;
	size_t i, dist, min = SIZE_MAX, len = strlen(name);

	for (i = 0; i < n; i++, p += size) {
		const char *cand = *(const char *const *)(const void *)p;

		dist = request_distance(name, cand);
		if (dist < min) {
			min = dist;
			best = cand;
		}
	}
	/* One slip in a short name, a third of a longer one. */
	return min <= (len < 6 ? 1 : len / 3) ? best : NULL;
}

const struct request_op *
request_op_find(const char *name)
{
	return request_lookup(request_ops, request_nops, sizeof *request_ops,
	    name);
}

bool
request_magic(json_t *req, enum op *op)
{
	struct magic_call c;
	const char *code;
	json_t *m;

	code = json_string_value(json_object_get(req, "code"));
	if (*op != OP_EXEC || code == NULL || strlen(code) !=
	    json_string_length(json_object_get(req, "code")))
		return false;
	if (!magic_parse(code, &c) || !magic_arg_ok(&c))
		return false;	/* the worker says how to write it */
	m = magic_request(c.m->name, c.arg, c.len);
	json_object_del(req, "code");
	json_object_update(req, m);
	json_decref(m);
	*op = request_op_find(magic_op_name(c.m->name))->op;
	return true;
}

bool
request_takes(const struct request_field *f, enum op op)
{
	return (f->ops & OP_BIT(op)) != 0;
}

bool
request_needs(const struct request_field *f, enum op op)
{
	return (f->required & OP_BIT(op)) != 0;
}

/* Whether v is an array of at most REQUEST_MIMES_MAX MIME types: a
 * type, a slash and a subtype, short and without blanks. */
static bool
request_mimes_ok(json_t *v)
{
	const char *m, *slash;
	json_t *e;
	size_t i;

	if (!json_is_array(v) || json_array_size(v) > REQUEST_MIMES_MAX)
		return false;
	json_array_foreach(v, i, e) {
		if ((m = json_string_value(e)) == NULL ||
		    json_string_length(e) > 100 ||
		    strlen(m) != json_string_length(e) ||
		    (slash = strchr(m, '/')) == NULL || slash == m ||
		    slash[1] == '\0' || strchr(slash + 1, '/') != NULL ||
		    strpbrk(m, " \t\r\n") != NULL)
			return false;
	}
	return true;
}

/* Why the string v is no T_LABEL, or NULL when it is one: 1 to
 * REQUEST_LABEL_MAX characters as JSON Schema counts them (code
 * points), none a control character (C0, DEL, or C1: U+0080 to U+009F,
 * C2 80 to C2 9F in UTF-8), so that a message can hold it as it is. */
static const char *
request_label_why(json_t *v)
{
	const unsigned char *p = (const unsigned char *)json_string_value(v);
	size_t n = json_string_length(v), i, chars = 0;

	for (i = 0; i < n; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 && i + 1 < n &&
		    p[i + 1] < 0xa0))
			return "one with a control character";
		chars += (p[i] & 0xc0) != 0x80;
	}
	return n == 0 ? "an empty one" : chars > REQUEST_LABEL_MAX ?
	    "a longer one" : NULL;
}

static bool
request_type_ok(const struct request_field *f, json_t *v)
{
	return ((f->types & T_MIMES) && request_mimes_ok(v)) ||
	    ((f->types & T_LABEL) && json_is_string(v) &&
	    request_label_why(v) == NULL) ||
	    ((f->types & T_STRING) && json_is_string(v)) ||
	    ((f->types & T_INTEGER) && json_is_integer(v)) ||
	    ((f->types & T_NUMBER) && json_is_number(v)) ||
	    ((f->types & T_BOOL) && json_is_boolean(v)) ||
	    ((f->types & T_NULL) && json_is_null(v));
}

/* Whether the number v is within f's bounds.  Integers compare exactly;
 * a real as a double, which holds every bound exactly. */
static bool
request_in_bounds(const struct request_field *f, json_t *v)
{
	if (json_is_integer(v)) {
		long long n = json_integer_value(v);

		return !((f->bounds & B_MIN) && (n < f->min ||
		    ((f->bounds & B_MIN_EXCL) && n == f->min))) &&
		    !((f->bounds & B_MAX) && n > f->max);
	} else {
		double d = json_number_value(v);

		return !((f->bounds & B_MIN) && (d < (double)f->min ||
		    ((f->bounds & B_MIN_EXCL) && d == (double)f->min))) &&
		    !((f->bounds & B_MAX) && d > (double)f->max);
	}
}

/* f's bounds in words, for "'x' must be <range>, not 7": "a positive
 * number of seconds, at most 86400 (a day)", "from 1 to 16 bytes", "a
 * whole number >= 0". */
static void
request_range(const struct request_field *f, struct buf *b)
{
	const char *unit = f->unit != NULL ? f->unit : "";
	const char *sp = f->unit != NULL ? " " : "";

	if ((f->bounds & B_MIN_EXCL) && f->min == 0)
		buf_printf(b, "a positive number%s%s", *unit ? " of " : "", unit);
	else if (f->bounds & B_MIN_EXCL)
		buf_printf(b, "more than %lld%s%s", f->min, sp, unit);
	else if ((f->bounds & B_MIN) && (f->bounds & B_MAX))
		buf_printf(b, "from %lld to %lld%s%s", f->min, f->max, sp, unit);
	else if (f->bounds & B_MIN)
		buf_printf(b, "%s >= %lld%s%s", f->types & T_NUMBER ?
		    "a number" : "a whole number", f->min, sp, unit);
	if ((f->bounds & B_MAX) && (f->bounds & B_MIN_EXCL))
		buf_printf(b, ", at most %lld", f->max);
	else if ((f->bounds & B_MAX) && !(f->bounds & B_MIN))
		buf_printf(b, "at most %lld%s%s", f->max, sp, unit);
	if (f->note != NULL)
		buf_printf(b, " (%s)", f->note);
}

/* 0 when v is a value field f may hold, else -1 with a message naming
 * the field, what it must be and what it is. */
static int
request_check(const struct request_field *f, json_t *v, char *err,
    size_t errlen)
{
	struct buf range;
	const char *why;

	if ((f->types & T_LABEL) && json_is_string(v) &&
	    (why = request_label_why(v)) != NULL)
		return err_set(err, errlen, "'%s' must be %s, not %s",
		    f->name, f->want, why);
	if (!request_type_ok(f, v))
		return err_set(err, errlen, "'%s' must be %s, not %s",
		    f->name, f->want, request_type_name(v));
	if (f->bounds == 0 || !json_is_number(v) || request_in_bounds(f, v))
		return 0;
	buf_init(&range);
	request_range(f, &range);
	if (json_is_integer(v))
		err_set(err, errlen, "'%s' must be %s, not %lld", f->name,
		    range.p, (long long)json_integer_value(v));
	else
		err_set(err, errlen, "'%s' must be %s, not %g", f->name,
		    range.p, json_number_value(v));
	buf_free(&range);
	return -1;
}

static const struct request_field *
request_field_find(const char *name)
{
	return request_lookup(request_fields, request_nfields,
	    sizeof *request_fields, name);
}

/* The op a request asks for: its "op", else exec when it has code. */
static const struct request_op *
request_op_of(json_t *o, char *err, size_t errlen)
{
	json_t *opv = json_object_get(o, "op");
	const struct request_op *rop;
	const char *like;
	struct buf names;
	size_t i;

	if (opv == NULL) {
		if (json_object_get(o, "code") == NULL) {
			err_set(err, errlen, "the request has neither 'op' nor "
			    "'code': send {\"code\": \"...\"} to run a cell");
			return NULL;
		}
		json_object_set_new(o, "op", json_string("exec"));
		return &request_ops[OP_EXEC];
	}
	if (request_check(request_field_find("op"), opv, err, errlen) == -1)
		return NULL;
	if ((rop = request_op_find(json_string_value(opv))) != NULL)
		return rop;
	buf_init(&names);
	like = request_closest(request_ops, request_nops, sizeof *request_ops,
	    json_string_value(opv));
	if (like != NULL)
		buf_printf(&names, "did you mean '%s'? ", like);
	buf_printf(&names, "the ops are ");
	for (i = 0; i < request_nops; i++)
		buf_printf(&names, "%s%s", i ? ", " : "", request_ops[i].name);
	err_set(err, errlen, "unknown op '%.64s': %s",
	    json_string_value(opv), names.p);
	buf_free(&names);
	return NULL;
}

/* Check the fields rop takes: 0, or -1 with a message. */
static int
request_check_fields(json_t *o, const struct request_op *rop, char *err,
    size_t errlen)
{
	const struct request_field *f;
	json_t *v;

	for (f = request_fields; f < request_fields + request_nfields; f++) {
		if (f->envelope || !request_takes(f, rop->op))
			continue;
		v = json_object_get(o, f->name);
		if (v == NULL && request_needs(f, rop->op))
			return err_set(err, errlen, "op '%s' needs '%s'",
			    rop->name, f->name);
		if (v == NULL || (json_is_null(v) && !request_needs(f, rop->op)))
			continue;
		if (request_check(f, v, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* Where the value after the "id" key of the outermost object of a line
 * starts, when the line shows one (valid JSON or not); else len. */
size_t
request_id_at(const char *line, size_t len)
{
	size_t i, depth = 0;
	bool key = false;

	for (i = 0; i < len; i++) {
		char c = line[i];

		if (c == '"') {
			size_t start = ++i;

			while (i < len && line[i] != '"')
				i += line[i] == '\\' ? 2 : 1;
			if (i >= len)
				return len;
			if (!key || depth != 1 || i - start != 2 ||
			    memcmp(line + start, "id", 2) != 0) {
				key = false;
				continue;
			}
			for (i++; i < len && strchr(" \t\r\n", line[i]); i++)
				;
			if (i >= len || line[i] != ':')
				return len;
			for (i++; i < len && strchr(" \t\r\n", line[i]); i++)
				;
			return i;
		}
		if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && depth > 0)
			depth--;
		key = depth == 1 && (c == '{' || c == ',' || (key &&
		    strchr(" \t\r\n", c) != NULL));
	}
	return len;
}

/* The id of a line that is not valid JSON, when one can be read after
 * its outer object's "id" and is an id a request may carry; else NULL.
 * A tool loop that matches answers by id then hears about its broken
 * line instead of waiting for it. */
static json_t *
request_salvage_id(const char *line, size_t len)
{
	size_t i = request_id_at(line, len);
	json_t *v;

	if (i >= len)
		return NULL;
	v = jsonline_load(line + i, len - i, JSON_DECODE_ANY |
	    JSON_DISABLE_EOF_CHECK, NULL);
	if (v != NULL && request_type_ok(request_field_find("id"), v))
		return v;
	json_decref(v);
	return NULL;
}

json_t *
request_head_id(const char *head, size_t len)
{
	return request_salvage_id(head, len);
}

int
request_parse(const char *line, size_t len, json_t **req, json_t **id,
    enum op *op, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *o;

	o = jsonline_load(line, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, &jerr);
	if (o != NULL)
		return request_from_json(o, req, id, op, err, errlen);
	*req = NULL;
	if ((*id = request_salvage_id(line, len)) == NULL)
		*id = json_null();
	return err_set(err, errlen, "the request is not valid JSON: %s "
	    "(column %d)", jerr.text, jerr.column);
}

/* o's key when it is a string of digits, as the number they spell.
 * Eighteen digits fit in any json_int_t; more are no cell anyway, and
 * stay a name the answer quotes. */
static void
request_cell_number(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);
	size_t n = s != NULL ? json_string_length(v) : 0;

	if (n == 0 || n > 18 || strspn(s, "0123456789") != n)
		return;
	json_object_set_new(o, key, json_integer(strtoll(s, NULL, 10)));
}

int
request_from_json(json_t *o, json_t **req, json_t **id, enum op *op,
    char *err, size_t errlen)
{
	const struct request_op *rop;
	json_t *v;

	*req = NULL;
	*id = json_null();
	if (!json_is_object(o)) {
		err_set(err, errlen, "the request must be a JSON object, not %s",
		    request_type_name(o));
		goto out;
	}
	if ((v = json_object_get(o, "id")) != NULL) {
		if (request_check(request_field_find("id"), v, err,
		    errlen) == -1)
			goto out;
		json_decref(*id);
		*id = json_incref(v);
	}
	if ((rop = request_op_of(o, err, errlen)) == NULL)
		goto out;
	if (rop->op == OP_ROLLBACK)
		request_cell_number(o, "to");
	if (rop->op == OP_FORK)
		request_cell_number(o, "from");
	if (request_check_fields(o, rop, err, errlen) == -1)
		goto out;
	*req = o;
	*op = rop->op;
	return 0;
out:
	json_decref(o);
	return -1;
}

json_t *
request_warnings(json_t *req, enum op op)
{
	const struct request_field *f;
	json_t *w = NULL, *v;
	const char *key, *like;
	char msg[300];

	json_object_foreach(req, key, v) {
		if ((f = request_field_find(key)) != NULL) {
			if (request_takes(f, op))
				continue;
			snprintf(msg, sizeof msg, "'%s' is not a field of op "
			    "'%s'; it was ignored", key, request_ops[op].name);
		} else {
			like = request_closest(request_fields, request_nfields,
			    sizeof *request_fields, key);
			snprintf(msg, sizeof msg, "unknown field '%.64s' was "
			    "ignored%s%s%s", key, like ? "; did you mean '" : "",
			    like ? like : "", like ? "'?" : "");
		}
		if (w == NULL)
			w = json_array();
		json_array_append_new(w, json_string(msg));
	}
	return w;
}

/* ---- what a request may hold, for people and for tools ------------- */

/* The JSON Schema "type" of a T_* mask: a string, or an array of them. */
static json_t *
request_schema_type(unsigned types)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < nitems(request_types); i++)
		if (types & request_types[i].type)
			json_array_append_new(a, json_string(
			    request_types[i].name));
	if (json_array_size(a) == 1) {
		json_t *one = json_incref(json_array_get(a, 0));

		json_decref(a);
		return one;
	}
	return a;
}

static json_t *
request_schema_field(const struct request_field *f)
{
	json_t *p = json_object();

	json_object_set_new(p, "type", request_schema_type(f->types));
	if (f->types & T_MIMES) {
		json_object_set_new(p, "items", json_pack("{s:s, s:s}",
		    "type", "string", "pattern", "^[^/\\s]+/[^/\\s]+$"));
		json_object_set_new(p, "maxItems",
		    json_integer(REQUEST_MIMES_MAX));
	}
	if (f->types & T_LABEL) {
		json_object_set_new(p, "minLength", json_integer(1));
		json_object_set_new(p, "maxLength",
		    json_integer(REQUEST_LABEL_MAX));
		json_object_set_new(p, "pattern", json_string(
		    "^[^\\u0000-\\u001f\\u007f-\\u009f]+$"));
	}
	if ((f->bounds & B_MIN) && (f->bounds & B_MIN_EXCL))
		json_object_set_new(p, "exclusiveMinimum",
		    json_integer(f->min));
	else if (f->bounds & B_MIN)
		json_object_set_new(p, "minimum", json_integer(f->min));
	if (f->bounds & B_MAX)
		json_object_set_new(p, "maximum", json_integer(f->max));
	json_object_set_new(p, "description", json_string(f->about));
	return p;
}

json_t *
request_schema(const struct request_op *op)
{
	json_t *props = json_object(), *req = json_array();
	const struct request_field *f;

	for (f = request_fields; f < request_fields + request_nfields; f++) {
		if (f->envelope || !request_takes(f, op->op))
			continue;
		json_object_set_new(props, f->name, request_schema_field(f));
		if (request_needs(f, op->op))
			json_array_append_new(req, json_string(f->name));
	}
	/* An empty "required" is left out: older validators refuse it. */
	if (json_array_size(req) == 0) {
		json_decref(req);
		req = NULL;
	}
	return json_pack("{s:s, s:s, s:o, s:o*}", "type", "object",
	    "description", op->usage, "properties", props, "required", req);
}

json_t *
request_schemas(void)
{
	json_t *all = json_object();
	size_t i;

	for (i = 0; i < request_nops; i++)
		json_object_set_new(all, request_ops[i].name,
		    request_schema(&request_ops[i]));
	return all;
}

#define HELP_WIDTH 79

/* One row of --help: "  left text", left padded to width, text wrapped
 * at HELP_WIDTH and its further lines under its first. */
static void
request_help_row(struct buf *b, int width, const char *left,
    const char *text)
{
	const int margin = 2 + width + 1;
	const char *p = text;
	int col = margin, n;

	buf_printf(b, "  %-*s ", width, left);
	if ((int)strlen(left) > width)
		buf_printf(b, "\n%*s", margin, "");
	while (*p != '\0') {
		n = (int)strcspn(p, " ");
		if (col > margin && col + 1 + n > HELP_WIDTH) {
			buf_printf(b, "\n%*s", margin, "");
			col = margin;
		}
		buf_printf(b, "%s%.*s", col > margin ? " " : "", n, p);
		col += (col > margin) + n;
		p += n;
		p += strspn(p, " ");
	}
	buf_addstr(b, "\n");
}

/* "run a cell: code [timeout max_output]": what op does and the fields
 * it takes, the optional ones in brackets. */
static void
request_help_op(struct buf *b, const struct request_op *op)
{
	const struct request_field *f;
	struct buf line;
	size_t nopt = 0;
	int pass;

	buf_init(&line);
	buf_addstr(&line, op->usage);
	/* The needed fields first, then the optional ones. */
	for (pass = 0; pass < 2; pass++)
		for (f = request_fields; f < request_fields + request_nfields;
		    f++) {
			if (f->envelope || !request_takes(f, op->op) ||
			    request_needs(f, op->op) != (pass == 0))
				continue;
			buf_printf(&line, "%s%s%s", line.len == strlen(
			    op->usage) ? ":" : "", pass == 1 && nopt == 0 ?
			    " [" : " ", f->name);
			nopt += pass;
		}
	if (nopt > 0)
		buf_addstr(&line, "]");
	request_help_row(b, 10, op->name, line.p);
	buf_free(&line);
}

/* "number > 0, <= 86400: seconds it may run": a field's types, bounds
 * and meaning. */
static void
request_help_field(struct buf *b, const struct request_field *f)
{
	bool lo = f->bounds & B_MIN, excl = f->bounds & B_MIN_EXCL,
	    hi = f->bounds & B_MAX;
	struct buf line;
	size_t i, k = 0, n = 0;

	buf_init(&line);
	for (i = 0; i < nitems(request_types); i++)
		n += (f->types & request_types[i].type) != 0;
	/* "string", "string or integer", "string, number or null" */
	for (i = 0; i < nitems(request_types); i++) {
		if (!(f->types & request_types[i].type))
			continue;
		buf_printf(&line, "%s%s", k == 0 ? "" : k + 1 == n ? " or " :
		    ", ", request_types[i].name);
		k++;
	}
	if (lo && hi && !excl) {
		buf_printf(&line, " from %lld to %lld", f->min, f->max);
	} else {
		if (lo)
			buf_printf(&line, " %s %lld", excl ? ">" : ">=", f->min);
		if (hi)
			buf_printf(&line, "%s <= %lld", lo ? "," : "", f->max);
	}
	buf_printf(&line, ": %s", f->about);
	request_help_row(b, 11, f->name, line.p);
	buf_free(&line);
}

void
request_help(struct buf *b)
{
	size_t i;

	buf_addstr(b, "Requests (--agent) are JSON objects, one a line: "
	    "{\"id\": 1, \"code\": \"1+1\"}.\n"
	    "The ops, and the fields each takes ([optional]):\n");
	for (i = 0; i < request_nops; i++)
		request_help_op(b, &request_ops[i]);
	buf_addstr(b, "The fields:\n");
	for (i = 0; i < request_nfields; i++)
		request_help_field(b, &request_fields[i]);
	buf_addstr(b, "See coil(1) for the responses, --request-schema for "
	    "the JSON Schema.\n");
}
