/*
 * response.c - one answer to one request (see response.h).
 *
 * The serializer writes the fields in the order the protocol's examples
 * show them: id, status, then what the op and the status carry.  The
 * parser (response_from_json) takes those members back one by one, by
 * a table, and leaves every other member to the op's fields.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "response.h"
#include "util.h"

const char *const status_names[] = {
	[ST_OK] = "ok", [ST_ERROR] = "error", [ST_INCOMPLETE] = "incomplete",
	[ST_TIMEOUT] = "timeout", [ST_INTERRUPTED] = "interrupted",
	[ST_CRASHED] = "crashed", [ST_INVALID] = "invalid",
};

const char *const origin_names[] = {
	[ORIGIN_AGENT] = "agent", [ORIGIN_PERSON] = "person",
	[ORIGIN_REPLAY] = "replay",
};

struct response *
response_new(enum status status)
{
	struct response *r = xcalloc(1, sizeof *r);

	r->status = status;
	r->id = json_null();
	r->fields = json_object();
	r->refs = 1;
	return r;
}

struct response *
response_ref(struct response *r)
{
	r->refs++;
	return r;
}

void
response_free(struct response *r)
{
	int i;

	if (r == NULL || --r->refs > 0)
		return;
	json_decref(r->id);
	free(r->output);
	free(r->stderr_text);
	free(r->result);
	response_error_free(r->error);
	json_decref(r->display);
	figure_free(r->figs, r->nfigs);
	json_decref(r->effects);
	json_decref(r->restored);
	json_decref(r->background);
	json_decref(r->warnings);
	json_decref(r->fields);
	for (i = 0; i < RESPONSE_FLAGS; i++)
		free(r->text[i]);
	free(r);
}

static char *
vformat(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		fatal_code(EXIT_NOMEM, 0, "out of memory");
	return s;
}

struct response_error *
response_error(const char *type, const char *fmt, ...)
{
	struct response_error *e = xcalloc(1, sizeof *e);
	va_list ap;

	e->type = xstrdup(type);
	va_start(ap, fmt);
	e->message = vformat(fmt, ap);
	va_end(ap);
	return e;
}

void
response_error_free(struct response_error *e)
{
	if (e == NULL)
		return;
	free(e->type);
	free(e->message);
	free(e->traceback);
	free(e->hint);
	free(e);
}

static int
positive(json_t *v)
{
	json_int_t n = json_integer_value(v);

	return json_is_integer(v) && n > 0 && n <= 1 << 30 ? (int)n : 0;
}

/* A string of the worker's, as a C string.  A NUL byte cannot pass
 * there: it is written \x00, as Python's repr shows one, so that what
 * follows it is not lost (ValueError('a\x00b') is "a\x00b"). */
static char *
worker_string(json_t *v)
{
	return xstrndup_nul(json_string_value(v), json_string_length(v));
}

struct response_error *
response_error_from_json(json_t *o)
{
	json_t *type = json_object_get(o, "type");
	json_t *msg = json_object_get(o, "message");
	json_t *tb = json_object_get(o, "traceback");
	json_t *hint = json_object_get(o, "hint");
	struct response_error *e;

	if (!json_is_string(type) || !json_is_string(msg) ||
	    !(tb == NULL || json_is_null(tb) || json_is_string(tb)) ||
	    !(hint == NULL || json_is_null(hint) || json_is_string(hint)))
		return NULL;
	e = xcalloc(1, sizeof *e);
	e->type = worker_string(type);
	e->message = worker_string(msg);
	if (json_is_string(tb))
		e->traceback = worker_string(tb);
	if (json_is_string(hint))
		e->hint = worker_string(hint);
	e->line = positive(json_object_get(o, "line"));
	e->column = positive(json_object_get(o, "column"));
	return e;
}

struct response *
response_invalid(const char *fmt, ...)
{
	struct response *r = response_new(ST_INVALID);
	struct response_error *e = xcalloc(1, sizeof *e);
	va_list ap;

	e->type = xstrdup("InvalidRequest");
	va_start(ap, fmt);
	e->message = vformat(fmt, ap);
	va_end(ap);
	r->error = e;
	return r;
}

struct response *
response_failed(struct response_error *e)
{
	struct response *r = response_new(ST_ERROR);

	r->error = e;
	return r;
}

static void
set_text(char **dst, size_t *dlen, const char *p, size_t n)
{
	free(*dst);
	*dst = xmalloc(n + 1);
	memcpy(*dst, p, n);
	(*dst)[n] = '\0';
	*dlen = n;
}

void
response_set_output(struct response *r, const char *p, size_t n)
{
	set_text(&r->output, &r->output_len, p, n);
}

void
response_set_stderr(struct response *r, const char *p, size_t n)
{
	set_text(&r->stderr_text, &r->stderr_len, p, n);
}

void
response_set_result(struct response *r, const char *p, size_t n)
{
	set_text(&r->result, &r->result_len, p, n);
	r->has |= RESP_RESULT;
}

void
response_set(struct response *r, const char *key, json_t *v)
{
	json_object_set_new(r->fields, key, v);
}

void
response_warn(struct response *r, const char *msg)
{
	if (r->warnings == NULL)
		r->warnings = json_array();
	json_array_append_new(r->warnings, json_string(msg));
}

json_t *
response_error_json(const struct response_error *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(e->type));
	json_object_set_new(o, "message", json_string(e->message));
	json_object_set_new(o, "traceback", e->traceback != NULL ?
	    json_string(e->traceback) : json_null());
	json_object_set_new(o, "line", e->line > 0 ? json_integer(e->line) :
	    json_null());
	if (e->column > 0)
		json_object_set_new(o, "column", json_integer(e->column));
	if (e->hint != NULL)
		json_object_set_new(o, "hint", json_string(e->hint));
	return o;
}

static void
put_text(json_t *o, const char *key, const char *p, size_t n)
{
	json_object_set_new(o, key, json_stringn(p != NULL ? p : "", n));
}

/* exec's own fields, in the protocol's order. */
static void
exec_fields(json_t *o, const struct response *r)
{
	put_text(o, "output", r->output, r->output_len);
	put_text(o, "stderr", r->stderr_text, r->stderr_len);
	json_object_set_new(o, "result", r->has & RESP_RESULT ?
	    json_stringn(r->result, r->result_len) : json_null());
	json_object_set_new(o, "error", r->error != NULL ?
	    response_error_json(r->error) : json_null());
	json_object_set_new(o, "display", r->display != NULL ?
	    json_incref(r->display) : json_array());
	json_object_set_new(o, "duration_ms", json_real(r->duration_ms));
	json_object_set_new(o, "cpu_ms", r->has & RESP_COST ?
	    json_real(r->cpu_ms) : json_null());
	json_object_set_new(o, "memory_peak", r->has & RESP_COST &&
	    r->memory_peak >= 0 ? json_integer(r->memory_peak) : json_null());
	/* Absent when the cell touched nothing, as truncated is. */
	if (json_array_size(r->effects) > 0)
		json_object_set(o, "effects", r->effects);
	if (r->effects_more > 0)
		json_object_set_new(o, "effects_more",
		    json_integer((json_int_t)r->effects_more));
	if (r->truncated > 0)
		json_object_set_new(o, "truncated",
		    json_integer((json_int_t)r->truncated));
}

/* Whether v says nothing: null, "", [] or {}. */
static bool
response_empty(json_t *v)
{
	return json_is_null(v) || (json_is_string(v) &&
	    json_string_length(v) == 0) || (json_is_array(v) &&
	    json_array_size(v) == 0) || (json_is_object(v) &&
	    json_object_size(v) == 0);
}

/* RESPONSE_BRIEF: drop o's empty members but those named in keep. */
static void
response_prune(json_t *o, const char *const *keep)
{
	const char *k, *const *p;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(o, tmp, k, v) {
		for (p = keep; *p != NULL && strcmp(*p, k) != 0; p++)
			;
		if (*p == NULL && response_empty(v))
			json_object_del(o, k);
	}
}

json_t *
response_json(const struct response *r, unsigned flags)
{
	static const char *const keep[] = { "id", "status", NULL };
	json_t *o = json_object();

	json_object_set(o, "id", r->id);
	if (flags & RESPONSE_SEQ) {
		json_object_set_new(o, "seq", json_integer((json_int_t)r->seq));
		json_object_set_new(o, "origin",
		    json_string(origin_names[r->origin]));
	}
	json_object_set_new(o, "status", json_string(status_names[r->status]));
	if (r->has & RESP_EXEC) {
		json_object_set_new(o, "cell", r->has & RESP_CELL ?
		    json_integer(r->cell) : json_null());
		exec_fields(o, r);
	} else {
		if (r->has & RESP_CELL)
			json_object_set_new(o, "cell", json_integer(r->cell));
		if (r->error != NULL)
			json_object_set_new(o, "error",
			    response_error_json(r->error));
	}
	json_object_update(o, r->fields);
	if (r->restored != NULL)
		json_object_set(o, "restored", r->restored);
	if (r->background != NULL)
		json_object_set(o, "background", r->background);
	if (r->warnings != NULL && json_array_size(r->warnings) > 0)
		json_object_set(o, "warnings", r->warnings);
	if (flags & RESPONSE_BRIEF) {
		response_prune(o, keep);
		if (json_is_object(json_object_get(o, "error")))
			response_prune(json_object_get(o, "error"), keep + 2);
	}
	return o;
}

const char *
response_text(struct response *r, unsigned flags, size_t *len)
{
	char *line;
	json_t *o;

	flags &= RESPONSE_FLAGS - 1;
	if (r->text[flags] == NULL) {
		o = response_json(r, flags);
		line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
		json_decref(o);
		if (line == NULL)
			fatal("cannot encode a response");
		r->text_len[flags] = strlen(line);
		r->text[flags] = xrealloc(line, r->text_len[flags] + 2);
		memcpy(r->text[flags] + r->text_len[flags]++, "\n", 2);
	}
	*len = r->text_len[flags];
	return r->text[flags];
}

/* ---- the inverse: a line back into the struct ----------------------- */

/* The index of v's string in names[0..n), or -1. */
static int
response_name_of(const char *const *names, int n, json_t *v)
{
	const char *s = json_string_value(v);
	int i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static bool
take_id(struct response *r, json_t *v)
{
	json_decref(r->id);
	r->id = json_incref(v);
	return true;
}

/* A count: an integer from 0 up. */
static bool
take_count(json_t *v, unsigned long long *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (unsigned long long)json_integer_value(v);
	return true;
}

static bool
take_seq(struct response *r, json_t *v)
{
	unsigned long long n;

	if (!take_count(v, &n))
		return false;
	r->seq = n;
	return true;
}

static bool
take_origin(struct response *r, json_t *v)
{
	int i = response_name_of(origin_names, ORIGIN_REPLAY + 1, v);

	if (i >= 0)
		r->origin = (enum origin)i;
	return i >= 0;
}

static bool
take_status(struct response *r, json_t *v)
{
	int i = response_name_of(status_names, ST_INVALID + 1, v);

	if (i >= 0)
		r->status = (enum status)i;
	return i >= 0;
}

static bool
take_cell(struct response *r, json_t *v)
{
	if (json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < INT_MIN ||
	    json_integer_value(v) > INT_MAX)
		return false;
	r->cell = (int)json_integer_value(v);
	r->has |= RESP_CELL;
	return true;
}

/* A string member into one of r's texts, as set (response_set_output,
 * ...) puts it. */
static bool
take_text(struct response *r, json_t *v,
    void (*set)(struct response *, const char *, size_t))
{
	if (json_is_string(v))
		set(r, json_string_value(v), json_string_length(v));
	return json_is_string(v);
}

static bool
take_output(struct response *r, json_t *v)
{
	return take_text(r, v, response_set_output);
}

static bool
take_stderr(struct response *r, json_t *v)
{
	return take_text(r, v, response_set_stderr);
}

static bool
take_result(struct response *r, json_t *v)
{
	return json_is_null(v) || take_text(r, v, response_set_result);
}

static bool
take_error(struct response *r, json_t *v)
{
	if (json_is_null(v))
		return true;
	r->error = response_error_from_json(v);
	return r->error != NULL;
}

static bool
take_display(struct response *r, json_t *v)
{
	if (json_is_array(v))
		r->display = json_incref(v);
	return json_is_array(v);
}

static bool
take_duration(struct response *r, json_t *v)
{
	r->duration_ms = json_number_value(v);
	return json_is_number(v);
}

static bool
take_cpu(struct response *r, json_t *v)
{
	if (json_is_number(v)) {
		r->cpu_ms = json_number_value(v);
		r->has |= RESP_COST;
	}
	return json_is_number(v) || json_is_null(v);
}

static bool
take_memory(struct response *r, json_t *v)
{
	unsigned long long n;

	if (json_is_null(v))
		return true;
	if (!take_count(v, &n))
		return false;
	r->memory_peak = (long long)n;
	return true;
}

static bool
take_effects(struct response *r, json_t *v)
{
	if (json_is_array(v))
		r->effects = json_incref(v);
	return json_is_array(v);
}

static bool
take_effects_more(struct response *r, json_t *v)
{
	return take_count(v, &r->effects_more);
}

static bool
take_truncated(struct response *r, json_t *v)
{
	return take_count(v, &r->truncated);
}

static bool
take_restored(struct response *r, json_t *v)
{
	r->restored = json_incref(v);
	return true;
}

static bool
take_background(struct response *r, json_t *v)
{
	if (json_is_object(v))
		r->background = json_incref(v);
	return json_is_object(v);
}

static bool
take_warnings(struct response *r, json_t *v)
{
	size_t i;
	json_t *w;

	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, w)
		if (!json_is_string(w))
			return false;
	r->warnings = json_incref(v);
	return true;
}

/*
 * The members response_json writes from the struct's own fields; any
 * other is an op's (r->fields).  exec's members are its only when the
 * response is exec's ("output" is there): in another op's answer a
 * "cell" or "result" is that op's field, as the supervisor sets them
 * (a rollback's "cell").
 */
static const struct response_member {
	const char *key;
	bool exec;
	const char *what;
	bool (*take)(struct response *r, json_t *v);
} response_members[] = {
	{ "id", false, "", take_id },
	{ "seq", false, "a count", take_seq },
	{ "origin", false, "agent, person or replay", take_origin },
	{ "status", false, "a status's name", take_status },
	{ "cell", true, "a cell's number or null", take_cell },
	{ "output", true, "a string", take_output },
	{ "stderr", true, "a string", take_stderr },
	{ "result", true, "a string or null", take_result },
	{ "error", false, "an error object or null", take_error },
	{ "display", true, "an array", take_display },
	{ "duration_ms", true, "a number", take_duration },
	{ "cpu_ms", true, "a number or null", take_cpu },
	{ "memory_peak", true, "a count or null", take_memory },
	{ "effects", true, "an array", take_effects },
	{ "effects_more", true, "a count", take_effects_more },
	{ "truncated", true, "a count", take_truncated },
	{ "restored", false, "", take_restored },
	{ "background", false, "an object", take_background },
	{ "warnings", false, "an array of strings", take_warnings },
};

struct response *
response_from_json(json_t *o, char *err, size_t errlen)
{
	const struct response_member *m;
	struct response *r;
	const char *k;
	bool exec;
	json_t *v;

	if (!json_is_object(o) || json_object_get(o, "status") == NULL) {
		err_set(err, errlen, "a response is a JSON object with a "
		    "'status'");
		return NULL;
	}
	exec = json_object_get(o, "output") != NULL;
	r = response_new(ST_OK);
	r->has = exec ? RESP_EXEC : 0;
	r->memory_peak = -1;	/* absent: unknown, as null */
	json_object_foreach(o, k, v) {
		for (m = response_members; m < response_members +
		    nitems(response_members); m++)
			if (strcmp(m->key, k) == 0 && (exec || !m->exec))
				break;
		if (m == response_members + nitems(response_members)) {
			response_set(r, k, json_incref(v));
		} else if (!m->take(r, v)) {
			err_set(err, errlen, "a response's '%s' is not %s", k,
			    m->what);
			response_free(r);
			return NULL;
		}
	}
	return r;
}
