/*
 * wording.c - a cell's answer as text for a model (see wording.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "wording.h"

void
wording_line_end(struct buf *b)
{
	if (b->len > 0 && b->p[b->len - 1] != '\n')
		buf_addstr(b, "\n");
}

void
wording_block(struct buf *b, const char *label, const char *p, size_t n)
{
	if (n == 0)
		return;
	if (label != NULL)
		buf_printf(b, "[%s]\n", label);
	buf_add(b, p, n);
	wording_line_end(b);
}

void
wording_error(struct buf *b, const struct response_error *e)
{
	if (e == NULL)
		return;
	if (e->traceback != NULL && *e->traceback != '\0')
		buf_addstr(b, e->traceback);
	wording_line_end(b);
	/* A stop's message is the supervisor's (who interrupted, which
	 * timeout), not in the traceback's bare KeyboardInterrupt. */
	if (e->traceback == NULL || *e->traceback == '\0' ||
	    (e->message != NULL && strstr(e->traceback, e->message) == NULL))
		buf_printf(b, "%s: %s\n", e->type, e->message != NULL ?
		    e->message : "");
	if (e->hint != NULL)
		buf_printf(b, "hint: %s\n", e->hint);
}

/* display's texts other than text/plain (display() printed that in the
 * output already): display(Markdown(...)) and the like, a block each. */
static void
wording_display_texts(const struct response *r, struct buf *b)
{
	const char *type, *text;
	json_t *v;
	size_t i;

	json_array_foreach(r->display, i, v) {
		type = json_string_value(json_object_get(v, "type"));
		text = json_string_value(json_object_get(v, "text"));
		if (type == NULL || text == NULL ||
		    strcmp(type, "text/plain") == 0)
			continue;
		buf_printf(b, "[%s]\n%s", type, text);
		wording_line_end(b);
	}
}

void
wording_exec(const struct response *r, struct buf *b)
{
	json_t *v;

	/* A restore after a crash is the error's to tell: it names the
	 * cell the namespace is back at and the cells lost. */
	v = r->background;
	if (v != NULL) {
		const char *o = json_string_value(json_object_get(v, "output")),
		    *e = json_string_value(json_object_get(v, "stderr"));

		if (o != NULL)
			wording_block(b, "printed between cells", o, strlen(o));
		if (e != NULL)
			wording_block(b, "stderr between cells", e, strlen(e));
	}
	wording_block(b, NULL, r->output, r->output_len);
	wording_block(b, "stderr", r->stderr_text, r->stderr_len);
	wording_error(b, r->error);
	if (r->has & RESP_RESULT)
		buf_printf(b, "Out[%d]: %s\n", r->cell, r->result);
	wording_display_texts(r, b);
}

/* One entry of a report's list: "cell N" or "line L (OP)". */
static void
wording_where(struct buf *b, json_t *v)
{
	json_t *cell = json_object_get(v, "cell");

	if (json_is_integer(cell))
		buf_printf(b, "cell %lld", (long long)json_integer_value(cell));
	else
		buf_printf(b, "line %lld (%s)", (long long)json_integer_value(
		    json_object_get(v, "line")), json_string_value(
		    json_object_get(v, "op")) ?: "request");
}

void
wording_resumed(json_t *resumed, struct buf *b)
{
	json_t *differs = json_object_get(resumed, "differs"),
	    *not_rerun = json_object_get(resumed, "not_rerun"),
	    *errors = json_object_get(resumed, "errors"),
	    *notes = json_object_get(resumed, "notes"), *v, *first;
	long long cells = json_integer_value(json_object_get(resumed,
	    "cells")), same = json_integer_value(json_object_get(resumed,
	    "same"));
	size_t i;

	buf_printf(b, "resumed from '%s': %lld cell%s; %lld ran again as "
	    "recorded, %zu answered differently, %zu not run again%s\n",
	    json_string_value(json_object_get(resumed, "from")) ?: "?",
	    cells, cells == 1 ? "" : "s", same, json_array_size(differs),
	    json_array_size(not_rerun), json_is_true(json_object_get(resumed,
	    "faithful")) ? ": the state is the recording's" :
	    ": the state may not be the recording's");
	json_array_foreach(differs, i, v) {
		first = json_object_get(v, "first");
		buf_addstr(b, "  ");
		wording_where(b, v);
		buf_printf(b, " differs: %s was \"%s\", now \"%s\"\n",
		    json_string_value(json_object_get(first, "field")) ?: "",
		    json_string_value(json_object_get(first, "was")) ?: "",
		    json_string_value(json_object_get(first, "now")) ?: "");
	}
	json_array_foreach(not_rerun, i, v) {
		buf_addstr(b, "  ");
		wording_where(b, v);
		buf_printf(b, " not run again: %s\n", json_string_value(
		    json_object_get(v, "why")) ?: "?");
	}
	json_array_foreach(json_object_get(resumed, "rerun_anyway"), i, v) {
		buf_addstr(b, "  ");
		wording_where(b, v);
		buf_printf(b, " run again all the same (--resume-all): %s\n",
		    json_string_value(json_object_get(v, "why")) ?: "?");
	}
	json_array_foreach(errors, i, v) {
		buf_addstr(b, "  ");
		wording_where(b, v);
		buf_printf(b, ": %s\n", json_string_value(json_object_get(v,
		    "message")) ?: "?");
	}
	json_array_foreach(notes, i, v)
		buf_printf(b, "  note: %s\n", json_string_value(v) ?: "");
}
