/*
 * export-cell.c - a response as notebook cells (see export.h): the JSON
 * nbformat 4.5 keeps, from an exec answer's streams, displays, figures'
 * bytes, result and error, and the markdown cell marking a rollback or
 * a reset.  No file is touched here: the keeper's temp files and the
 * notebook's writing are export.c's.
 *
 * Supervisor only; no Python.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-int.h"
#include "util.h"

void
export_runs_add(struct export_runs *o, int stream, size_t n)
{
	if (n == 0 || o->over)
		return;
	if (o->n > 0 && o->stream[o->n - 1] == stream) {
		o->len[o->n - 1] += n;
	} else if (o->n == EXPORT_RUNS_MAX) {
		o->over = true;
	} else {
		o->stream[o->n] = (unsigned char)stream;
		o->len[o->n++] = n;
	}
}

char *
export_base64(const unsigned char *p, size_t n)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789+/";
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		*o++ = abc[p[i] >> 2];
		*o++ = abc[(p[i] & 3) << 4 | p[i + 1] >> 4];
		*o++ = abc[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
		*o++ = abc[p[i + 2] & 63];
	}
	if (i < n) {
		*o++ = abc[p[i] >> 2];
		*o++ = abc[(p[i] & 3) << 4 | (i + 1 < n ? p[i + 1] >> 4 : 0)];
		*o++ = i + 1 < n ? abc[(p[i + 1] & 15) << 2] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* A multiline string as nbformat keeps it: its lines, each with its
 * newline but the last. */
json_t *
export_lines(const char *s)
{
	json_t *a = json_array();
	const char *nl;

	for (; s != NULL && *s != '\0'; s = nl + 1) {
		if ((nl = strchr(s, '\n')) == NULL) {
			json_array_append_new(a, json_string(s));
			break;
		}
		json_array_append_new(a, json_stringn(s, (size_t)(nl - s + 1)));
	}
	return a;
}

/* A stream output of n bytes of text, stdout's or (err) stderr's. */
void
export_put_stream(json_t *outs, bool err, const char *text, size_t n)
{
	json_array_append_new(outs, json_pack("{s:s, s:s, s:s%}",
	    "output_type", "stream", "name", err ? "stderr" : "stdout",
	    "text", text, n));
}

/* The answer's stdout, then its stderr, one stream output each. */
void
export_put_texts(json_t *outs, const struct response *r)
{
	if (r->output_len > 0)
		export_put_stream(outs, false, r->output, r->output_len);
	if (r->stderr_len > 0)
		export_put_stream(outs, true, r->stderr_text, r->stderr_len);
}

/* The figures of r that fit the bytes left, as base64: {"INDEX": text}
 * for the display entries they belong to (a new reference), or NULL
 * when none does.  The bytes are those the worker's descriptors held
 * (figure.h): no file is read here. */
json_t *
export_figures64(const struct response *r, size_t *left)
{
	const struct figure *f;
	json_t *o = NULL;
	char key[24], *b64;
	size_t i, n = r->nfigs > 0 ? json_array_size(r->display) : 0;

	for (i = 0; i < n; i++) {
		f = figure_find(r->figs, r->nfigs, r->display, i);
		if (f == NULL || f->len > *left)
			continue;
		*left -= f->len;
		if (o == NULL)
			o = json_object();
		snprintf(key, sizeof key, "%zu", i);
		b64 = export_base64((const unsigned char *)f->p, f->len);
		json_object_set_new(o, key, json_string(b64));
		free(b64);
	}
	return o;
}

/* One entry of a response's display as display_data, b64 (may be NULL)
 * its figure's bytes; NULL when there is nothing to show (a plain text
 * form, which the cell's stdout or result holds already).  A figure
 * without bytes is its path. */
static json_t *
export_display(json_t *d, json_t *b64)
{
	const char *type = json_string_value(json_object_get(d, "type")),
	    *path = json_string_value(json_object_get(d, "path"));
	json_t *data = json_object(), *meta = json_object(), *v;

	if (type == NULL)
		type = "text/plain";
	if ((v = json_object_get(d, "data")) != NULL)
		json_object_set(data, type, v);
	else if (json_is_string(v = json_object_get(d, "text")) &&
	    strcmp(type, "text/plain") != 0)
		json_object_set(data, type, v);	/* HTML, Markdown, LaTeX... */
	else if (path != NULL && json_is_string(b64))
		json_object_set(data, type, b64);
	if (path != NULL && json_object_size(data) == 0)
		json_object_set_new(data, "text/plain", json_string(path));
	if (json_object_size(data) == 0) {
		json_decref(data);
		json_decref(meta);
		return NULL;
	}
	if (json_is_integer(json_object_get(d, "width")))
		json_object_set_new(meta, type, json_pack("{s:O, s:O}", "width",
		    json_object_get(d, "width"), "height", json_object_get(d,
		    "height")));
	if (path != NULL && !json_object_get(data, "text/plain"))
		json_object_set_new(data, "text/plain", json_string(path));
	return json_pack("{s:s, s:o, s:o}", "output_type", "display_data",
	    "data", data, "metadata", meta);
}

/* The response closes its cell: displays (figs: export_figures64's, may
 * be NULL), then the result or error. */
void
export_outputs(struct xcell *c, const struct response *r, json_t *figs)
{
	json_t *outs = json_object_get(c->cell, "outputs"), *d, *n;
	const char *type;
	char key[24];
	size_t i;

	n = r->status != ST_INCOMPLETE && r->status != ST_INVALID &&
	    (r->has & RESP_CELL) ? json_integer(r->cell) : json_null();
	json_object_set(c->cell, "execution_count", n);
	json_array_foreach(r->display, i, d) {
		snprintf(key, sizeof key, "%zu", i);
		if ((d = export_display(d, figs != NULL ?
		    json_object_get(figs, key) : NULL)) != NULL)
			json_array_append_new(outs, d);
	}
	if (r->has & RESP_RESULT)
		json_array_append_new(outs, json_pack("{s:s, s:O, s:{s:s%}, "
		    "s:{}}", "output_type", "execute_result", "execution_count",
		    n, "data", "text/plain", r->result, r->result_len,
		    "metadata"));
	if (r->error != NULL) {
		/* Jupyter's ename is the class's name alone */
		type = strrchr(r->error->type, '.') ? strrchr(r->error->type,
		    '.') + 1 : r->error->type;
		json_array_append_new(outs, json_pack("{s:s, s:s, s:s, s:o}",
		    "output_type", "error", "ename", type, "evalue",
		    r->error->message, "traceback", r->error->traceback ?
		    export_lines(r->error->traceback) : json_array()));
	}
	json_decref(n);
}

/* A terminal's REPL asks whether each line it reads ends the cell by
 * running what it has so far, which answers incomplete until it does:
 * no cell of the person's.  (An agent's incomplete code stays, with no
 * execution count: it was sent as a cell.) */
bool
export_probe(const struct response *r)
{
	return r->status == ST_INCOMPLETE && r->origin == ORIGIN_PERSON;
}

/* A markdown cell saying what a rollback or reset did to the namespace
 * the cells above it built, or NULL for any other answer: a notebook
 * run top to bottom would not do it, so it says so where it happened. */
json_t *
export_mark_of(const struct response *r)
{
	json_t *undone = json_object_get(r->fields, "rolled_back"), *v;
	const char *name = json_string_value(json_object_get(r->fields,
	    "name"));
	int to = (int)json_integer_value(json_object_get(r->fields, "cell"));
	struct buf b;
	size_t i, n = json_array_size(undone);
	json_t *cell;

	if (r->status != ST_OK || (r->op != OP_ROLLBACK && r->op != OP_RESET))
		return NULL;
	buf_init(&b);
	if (r->op == OP_RESET) {
		buf_addstr(&b, EXPORT_MARK_RESET " what the cells above "
		    "defined is gone.*");
	} else {
		buf_addstr(&b, EXPORT_MARK_ROLLBACK);
		if (to > 0)
			buf_printf(&b, "the state after cell %d", to);
		else
			buf_addstr(&b, "its start");
		if (name != NULL)
			buf_printf(&b, " (snapshot \"%s\")", name);
		if (n > 0) {
			buf_printf(&b, "; what cell%s", n > 1 ? "s" : "");
			json_array_foreach(undone, i, v)
				buf_printf(&b, "%s %lld", i == 0 ? "" :
				    i + 1 == n ? " and" : ",",
				    (long long)json_integer_value(v));
			buf_addstr(&b, " did to it is undone");
		}
		buf_addstr(&b, ".*");
	}
	cell = json_pack("{s:s, s:{}, s:[s%]}", "cell_type", "markdown",
	    "metadata", "source", b.p, b.len);
	buf_free(&b);
	return cell;
}

/* The start of the UTF-8 character holding text[at] (at <= n). */
static size_t
export_char_start(const char *text, size_t n, size_t at)
{
	while (at > 0 && at < n && ((unsigned char)text[at] & 0xC0) == 0x80)
		at--;
	return at;
}

bool
export_split(json_t *runs, const char *const text[2], const size_t len[2],
    void (*put)(void *, int, const char *, size_t), void *ctx)
{
	size_t sum[2] = { 0, 0 }, at[2] = { 0, 0 }, i, k, to;
	json_t *run;

	if (!json_is_array(runs))
		return false;
	json_array_foreach(runs, i, run) {
		json_int_t st = json_integer_value(json_array_get(run, 0));
		json_int_t n = json_integer_value(json_array_get(run, 1));

		if ((st != 1 && st != 2) || n <= 0 ||
		    (uint64_t)n > SIZE_MAX - sum[st - 1])
			return false;
		sum[st - 1] += (size_t)n;
	}
	if (sum[0] != len[0] || sum[1] != len[1])
		return false;
	sum[0] = sum[1] = 0;	/* now the bytes of each stream so far */
	json_array_foreach(runs, i, run) {
		k = (size_t)json_integer_value(json_array_get(run, 0)) - 1;
		sum[k] += (size_t)json_integer_value(json_array_get(run, 1));
		to = export_char_start(text[k], len[k], sum[k]);
		if (to > at[k])
			put(ctx, (int)k + 1, text[k] + at[k], to - at[k]);
		at[k] = to;
	}
	for (k = 0; k < 2; k++)	/* a character cut at the very end */
		if (at[k] < len[k])
			put(ctx, (int)k + 1, text[k] + at[k], len[k] - at[k]);
	return true;
}

/* export_split's put: a stream output in the cell's outputs (ctx). */
static void
export_put_run(void *ctx, int stream, const char *text, size_t n)
{
	export_put_stream(ctx, stream == 2, text, n);
}

/* The notebook cell (new) of an exec answer that did not stream; runs
 * (may be NULL) as export_split takes them, figs (may be NULL) as
 * export_figures64 gives them. */
json_t *
export_cell_of(const char *code, const struct response *r, json_t *runs,
    json_t *figs)
{
	const char *const text[2] = { r->output, r->stderr_text };
	const size_t len[2] = { r->output_len, r->stderr_len };
	struct xcell c = { 0, NULL, 0, { NULL, 0, 0 } };
	json_t *outs;

	c.cell = json_pack("{s:s, s:{}, s:n, s:o, s:[]}", "cell_type", "code",
	    "metadata", "execution_count", "source", export_lines(code),
	    "outputs");
	outs = json_object_get(c.cell, "outputs");
	if (!export_split(runs, text, len, export_put_run, outs))
		export_put_texts(outs, r);
	export_outputs(&c, r, figs);
	return c.cell;
}

json_t *
export_runs_json(const struct export_runs *o)
{
	json_t *a;
	size_t i;

	if (o == NULL || o->over || o->n < 3)
		return NULL;
	a = json_array();
	for (i = 0; i < o->n; i++)
		json_array_append_new(a, json_pack("[i, I]", o->stream[i],
		    (json_int_t)o->len[i]));
	return a;
}

/* A JSON string's bytes (a NUL among them too), or NULL. */
static char *
export_bytes(json_t *v, size_t *len)
{
	char *p;

	*len = 0;
	if (!json_is_string(v))
		return NULL;
	*len = json_string_length(v);
	p = xmalloc(*len + 1);
	memcpy(p, json_string_value(v), *len + 1);
	return p;
}

/* What export_cell_of needs, back from a response line. */
struct response *
export_response_of(json_t *o)
{
	const char *st = json_string_value(json_object_get(o, "status"));
	json_t *v;
	struct response *r;
	int i;

	for (i = 0; st != NULL && i <= (int)ST_INVALID; i++)
		if (strcmp(status_names[i], st) == 0)
			break;
	r = response_new(st != NULL && i <= (int)ST_INVALID ?
	    (enum status)i : ST_ERROR);
	r->has = RESP_EXEC;
	if (json_is_integer(v = json_object_get(o, "cell"))) {
		r->cell = (int)json_integer_value(v);
		r->has |= RESP_CELL;
	}
	r->output = export_bytes(json_object_get(o, "output"), &r->output_len);
	r->stderr_text = export_bytes(json_object_get(o, "stderr"),
	    &r->stderr_len);
	r->result = export_bytes(json_object_get(o, "result"), &r->result_len);
	if (r->result != NULL)
		r->has |= RESP_RESULT;
	if (json_is_object(v = json_object_get(o, "error")))
		r->error = response_error_from_json(v);
	if (json_is_array(v = json_object_get(o, "display")))
		r->display = json_incref(v);
	return r;
}
