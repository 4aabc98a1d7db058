/*
 * ui-model.c - what the curses UI shows, as data (see ui-int.h): the
 * scrollback (a ring of at most --scrollback lines, each cut at
 * UI_LINE_MAX bytes, so a flood of any size holds bounded memory),
 * every cell of the session with its answer (whole for the newest ones,
 * up to UI_KEEP_PER_LINE bytes a scrollback line: a long session holds
 * bounded memory too), and the namespace.
 *
 * Events come in the shape of the attach socket's lines (listen.h:
 * {"event", "seq", "origin", ...}), whichever back end delivered them,
 * so the in-process session and an attached one are drawn alike.  A
 * cell's header goes into the scrollback with its first output or its
 * answer, never before: a line that only proves a block incomplete
 * leaves no trace.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "hostfs.h"
#include "ui-int.h"

static const char *const ui_markers[] = {
	[UL_HEAD] = "", [UL_CODE] = "  ", [UL_OUT] = "  ", [UL_ERR] = "! ",
	[UL_FAIL] = "x ", [UL_NOTE] = "- ",
};

void
ui_model_init(struct ui *u, size_t scrollback)
{
	u->cap = scrollback > 0 ? scrollback : 1;
	u->keep = u->cap * UI_KEEP_PER_LINE;
	u->lines = xcalloc(u->cap, sizeof *u->lines);
	u->vars = json_array();
	u->vars_cell = -1;
	u->checkpoints = -1;
}

void
ui_model_free(struct ui *u)
{
	size_t i;

	for (i = 0; i < u->nlines; i++)
		free(ui_line_at(u, i)->text);
	free(u->lines);
	for (i = 0; i < u->ncells; i++) {
		free(u->cells[i].code);
		json_decref(u->cells[i].resp);
	}
	free(u->cells);
	json_decref(u->vars);
}

/* ---- the scrollback ------------------------------------------------ */

struct ui_line *
ui_line_at(struct ui *u, size_t i)
{
	return &u->lines[(u->head + i) % u->cap];
}

static struct ui_line *
ui_last_line(struct ui *u)
{
	return u->nlines > 0 ? ui_line_at(u, u->nlines - 1) : NULL;
}

/* A new line at the end; the oldest goes when the ring is full.  A view
 * scrolled up stays on the lines it shows. */
static struct ui_line *
ui_push(struct ui *u, enum ui_kind kind)
{
	struct ui_line *l;

	if (u->nlines == u->cap) {
		free(u->lines[u->head].text);
		u->head = (u->head + 1) % u->cap;
		u->nlines--;
	}
	l = ui_line_at(u, u->nlines++);
	*l = (struct ui_line){ .kind = (unsigned char)kind, .open = true };
	if (u->scroll > 0 && u->scroll + 1 < u->nlines)
		u->scroll++;
	u->dirty = true;
	return l;
}

static void
ui_line_add(struct ui_line *l, const char *p, size_t n)
{
	if (l->len + n > UI_LINE_MAX) {
		n = UI_LINE_MAX - l->len;
		l->cut = true;
	}
	if (n == 0)
		return;
	l->text = xrealloc(l->text, l->len + n);
	memcpy(l->text + l->len, p, n);
	l->len += n;
}

static void
ui_close_line(struct ui *u)
{
	struct ui_line *l = ui_last_line(u);

	if (l != NULL)
		l->open = false;
}

/* Bytes of one stream: lines end at '\n'; a lone '\r' starts its line
 * again, as a terminal would show a progress bar. */
static void
ui_append(struct ui *u, enum ui_kind kind, const char *p, size_t n)
{
	struct ui_line *l = ui_last_line(u);
	size_t k;

	if (l == NULL || !l->open || l->kind != kind)
		l = ui_push(u, kind);
	while (n > 0) {
		for (k = 0; k < n && p[k] != '\n' && p[k] != '\r'; k++)
			;
		ui_line_add(l, p, k);
		if (k == n)
			break;
		if (p[k] == '\r' && !(k + 1 < n && p[k + 1] == '\n')) {
			l->len = 0;
			l->cut = false;
			p += k + 1;
			n -= k + 1;
			continue;
		}
		k += p[k] == '\r' ? 2 : 1;
		l->open = false;
		p += k;
		n -= k;
		if (n > 0)
			l = ui_push(u, kind);
	}
	u->dirty = true;
}

void
ui_note_line(struct ui *u, enum ui_kind kind, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	struct ui_line *l;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ui_close_line(u);
	l = ui_push(u, kind);
	ui_line_add(l, msg, strlen(msg));
	l->open = false;
}

/* ---- cells --------------------------------------------------------- */

static struct ui_cell *
ui_cell_of(struct ui *u, uint64_t seq)
{
	size_t i;

	for (i = u->ncells; i-- > 0;)
		if (u->cells[i].seq == seq)
			return &u->cells[i];
	return NULL;
}

static void
ui_cell_drop(struct ui *u, struct ui_cell *c)
{
	size_t i = (size_t)(c - u->cells);

	u->kept -= c->weight;
	if (u->untrimmed > i)
		u->untrimmed--;
	free(c->code);
	json_decref(c->resp);
	memmove(c, c + 1, (u->ncells - i - 1) * sizeof *c);
	u->ncells--;
	if (u->last > i)
		u->last--;
	if (u->cell_sel >= u->ncells && u->cell_sel > 0)
		u->cell_sel--;
}

/* What the cell list can let go of in an answer: its texts. */
static size_t
ui_answer_weight(json_t *r)
{
	json_t *e = json_object_get(r, "error");

	return json_string_length(json_object_get(r, "output")) +
	    json_string_length(json_object_get(r, "stderr")) +
	    json_string_length(json_object_get(r, "result")) +
	    json_string_length(json_object_get(e, "message")) +
	    json_string_length(json_object_get(e, "traceback")) +
	    UI_KEEP_PER_EFFECT * json_array_size(json_object_get(r,
	    "effects"));
}

/* Keep of c's answer what the list and the status line show: a new
 * object (r may be shared with other clients of the session). */
static void
ui_cell_trim(struct ui *u, struct ui_cell *c)
{
	json_t *r = c->resp, *e = json_object_get(r, "error"), *slim;

	slim = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "status",
	    json_object_get(r, "status"), "cell", json_object_get(r, "cell"),
	    "duration_ms", json_object_get(r, "duration_ms"), "cpu_ms",
	    json_object_get(r, "cpu_ms"), "memory_peak", json_object_get(r,
	    "memory_peak"));
	if (json_is_object(e))
		json_object_set_new(slim, "error", json_pack("{s:O?}", "type",
		    json_object_get(e, "type")));
	json_decref(r);
	c->resp = slim;
	c->trimmed = true;
	u->kept -= c->weight;
	c->weight = 0;
}

/* c was answered: count it, and trim the oldest whole answers while
 * more than u->keep bytes are kept (never c's own). */
static void
ui_cells_bound(struct ui *u, struct ui_cell *c)
{
	size_t mine = (size_t)(c - u->cells);

	c->weight = ui_answer_weight(c->resp);
	u->kept += c->weight;
	for (; u->kept > u->keep && u->untrimmed < u->ncells;
	    u->untrimmed++) {
		struct ui_cell *old = &u->cells[u->untrimmed];

		if (u->untrimmed == mine || !old->done)
			break;
		if (!old->trimmed)
			ui_cell_trim(u, old);
	}
}

/* The header and the source, once the cell has something to show. */
static void
ui_cell_show(struct ui *u, struct ui_cell *c)
{
	const char *p, *nl;

	if (c->shown)
		return;
	c->shown = true;
	if (c->cell > 0)
		ui_note_line(u, UL_HEAD, "[%d] %s", c->cell, c->origin);
	else
		ui_note_line(u, UL_HEAD, "[?] %s", c->origin);
	for (p = c->code; p != NULL && *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		if (nl > p || *nl == '\n') {
			struct ui_line *l = ui_push(u, UL_CODE);

			ui_line_add(l, p, (size_t)(nl - p));
			l->open = false;
		}
		if (*nl == '\0')
			break;
	}
}

static void
ui_queued(struct ui *u, json_t *o)
{
	json_t *req = json_object_get(o, "request");
	const char *op = json_string_value(json_object_get(req, "op"));
	const char *code = json_string_value(json_object_get(req, "code"));
	struct ui_cell *c;

	if (op == NULL || strcmp(op, "exec") != 0 || code == NULL ||
	    ui_cell_of(u, (uint64_t)json_integer_value(json_object_get(o,
	    "seq"))) != NULL)
		return;
	u->cells = xrealloc(u->cells, (u->ncells + 1) * sizeof *u->cells);
	c = &u->cells[u->ncells++];
	*c = (struct ui_cell){ .seq = (uint64_t)json_integer_value(
	    json_object_get(o, "seq")), .code = xstrdup(code) };
	snprintf(c->origin, sizeof c->origin, "%s", json_string_value(
	    json_object_get(o, "origin")) != NULL ? json_string_value(
	    json_object_get(o, "origin")) : "?");
}

/* One line of an error for the scrollback: "Type: message". */
static void
ui_fail_line(struct ui *u, json_t *err)
{
	const char *type = json_string_value(json_object_get(err, "type"));
	const char *msg = json_string_value(json_object_get(err, "message"));
	const char *nl = msg != NULL ? strchr(msg, '\n') : NULL;

	ui_note_line(u, UL_FAIL, "%s: %.*s", type != NULL ? type : "error",
	    nl != NULL ? (int)(nl - msg) : 200, msg != NULL ? msg : "");
}

static void
ui_answer_output(struct ui *u, json_t *text, enum ui_kind kind)
{
	if (json_string_length(text) == 0)
		return;
	ui_close_line(u);
	ui_append(u, kind, json_string_value(text), json_string_length(text));
}

/* export_split's put: a piece of the answer's stdout (1) or stderr. */
static void
ui_answer_run(void *ctx, int stream, const char *text, size_t n)
{
	ui_append(ctx, stream == 2 ? UL_ERR : UL_OUT, text, n);
}

/* The answer's streams, in the order they came when order (a history
 * line's) says so; else its stdout, then its stderr. */
static void
ui_answer_streams(struct ui *u, json_t *r, json_t *order)
{
	json_t *out = json_object_get(r, "output");
	json_t *err = json_object_get(r, "stderr");
	const char *const text[2] = { json_string_value(out),
	    json_string_value(err) };
	const size_t len[2] = { json_string_length(out),
	    json_string_length(err) };

	if (order != NULL && text[0] != NULL && text[1] != NULL) {
		ui_close_line(u);
		if (export_split(order, text, len, ui_answer_run, u))
			return;
	}
	ui_answer_output(u, out, UL_OUT);
	ui_answer_output(u, err, UL_ERR);
}

/* The answer r to cell c; order, for a cell from before we attached,
 * the order its streams came in (or NULL). */
static void
ui_answered(struct ui *u, struct ui_cell *c, json_t *r, json_t *order)
{
	const char *st = json_string_value(json_object_get(r, "status"));
	json_t *cell = json_object_get(r, "cell");

	if (u->running == c->seq) {
		u->running = 0;
		/* k_ctrl_c's note is about this cell, which is over */
		if (strcmp(u->note, UI_NOTE_INTERRUPTING) == 0)
			u->note[0] = '\0';
	}
	if (st == NULL || strcmp(st, "incomplete") == 0 ||
	    (strcmp(st, "invalid") == 0 && !c->shown)) {
		ui_cell_drop(u, c);
		return;
	}
	if (json_is_integer(cell))
		c->cell = (int)json_integer_value(cell);
	if (!c->shown) {
		/* no output came as events (a cell from before we attached,
		 * or one that printed nothing): the answer's, if any */
		ui_cell_show(u, c);
		ui_answer_streams(u, r, order);
	}
	ui_close_line(u);
	c->done = true;
	c->resp = json_incref(r);
	ui_cells_bound(u, c);
	if (json_is_object(json_object_get(r, "error")))
		ui_fail_line(u, json_object_get(r, "error"));
	u->last = (size_t)(c - u->cells) + 1;
}

/* The answer to one of our own requests, by what it was for. */
static void
ui_own_answer(struct ui *u, json_t *r)
{
	json_t *id = json_object_get(r, "id");
	int i;

	if (!json_is_integer(id))
		return;
	for (i = 0; i < u->npend; i++)
		if (u->pend[i].id == json_integer_value(id))
			break;
	if (i == u->npend)
		return;
	if (u->want_id == u->pend[i].id) {
		json_decref(u->reply);
		u->reply = json_incref(r);
	} else {
		ui_own_reply(u, u->pend[i].why, r);
	}
	u->pend[i] = u->pend[--u->npend];
}

static void
ui_info(struct ui *u, enum session_ev kind, json_t *o)
{
	const char *what, *how;

	switch (kind) {
	case EV_WORKER:
		what = json_string_value(json_object_get(o, "state"));
		how = json_string_value(json_object_get(o, "how"));
		if (what != NULL && strcmp(what, "died") == 0)
			ui_note_line(u, UL_NOTE, "the worker died (%s)",
			    how != NULL ? how : "?");
		break;
	case EV_CHECKPOINT:
		what = json_string_value(json_object_get(o, "state"));
		if (what != NULL && strcmp(what, "taken") == 0)
			u->checkpoints = (int)json_integer_value(
			    json_object_get(o, "cell"));
		else if (what != NULL && strcmp(what, "failed") == 0)
			ui_note_line(u, UL_NOTE, "a checkpoint failed: %s",
			    json_string_value(json_object_get(o, "error")) !=
			    NULL ? json_string_value(json_object_get(o,
			    "error")) : "?");
		break;
	case EV_NAMESPACE:
		ui_set_vars(u, json_object_get(o, "vars"), (int)
		    json_integer_value(json_object_get(o, "cell")));
		break;
	case EV_WARNING:
		ui_note_line(u, UL_NOTE, "warning: %s", json_string_value(
		    json_object_get(o, "message")) != NULL ? json_string_value(
		    json_object_get(o, "message")) : "");
		break;
	default:
		break;
	}
}

void
ui_output(struct ui *u, enum session_ev kind, uint64_t seq, int stream,
    const char *data, size_t len)
{
	struct ui_cell *c = seq > 0 ? ui_cell_of(u, seq) : NULL;

	u->dirty = true;
	if (kind == EV_OUTPUT && c != NULL)
		ui_cell_show(u, c);
	ui_append(u, stream == 2 ? UL_ERR : UL_OUT, data, len);
}

void
ui_event(struct ui *u, enum session_ev kind, json_t *o, const char *data,
    size_t len, bool own)
{
	uint64_t seq = (uint64_t)json_integer_value(json_object_get(o, "seq"));
	const char *stream = json_string_value(json_object_get(o, "stream"));
	json_t *r = json_object_get(o, "response");
	struct ui_cell *c = seq > 0 ? ui_cell_of(u, seq) : NULL;

	u->dirty = true;
	switch (kind) {
	case EV_QUEUED:
		ui_queued(u, o);
		break;
	case EV_STARTED:
		if (c == NULL)
			break;
		c->cell = (int)json_integer_value(json_object_get(o, "cell"));
		c->started_ms = now_ms();
		u->running = seq;
		break;
	case EV_OUTPUT:
	case EV_BACKGROUND:
		ui_output(u, kind, seq, stream != NULL && strcmp(stream,
		    "stderr") == 0 ? 2 : 1, data, len);
		break;
	case EV_RESPONSE:
		if (c != NULL)
			ui_answered(u, c, r, NULL);
		if (own)
			ui_own_answer(u, r);
		break;
	case EV_CANCELLED:
		if (c != NULL)
			ui_cell_drop(u, c);
		break;
	case EV_INPUT:
		if (own)
			ui_input_asked(u, o);
		break;
	default:
		ui_info(u, kind, o);
		break;
	}
}

/* A cell that finished before we attached (listen.c's history line):
 * in the list and the output as if we had seen it run. */
void
ui_history(struct ui *u, json_t *o)
{
	uint64_t seq = (uint64_t)json_integer_value(json_object_get(o, "seq"));
	struct ui_cell *c;

	ui_queued(u, o);
	c = ui_cell_of(u, seq);
	if (c != NULL && !c->done && json_is_object(json_object_get(o,
	    "response")))
		ui_answered(u, c, json_object_get(o, "response"),
		    json_object_get(o, "order"));
	/* the vars asked for at attach are as of the last of them */
	if (c != NULL && c->cell > u->vars_cell)
		u->vars_cell = c->cell;
	u->dirty = true;
}

const struct ui_cell *
ui_last_answer(struct ui *u)
{
	return u->last > 0 && u->last <= u->ncells ? &u->cells[u->last - 1] :
	    NULL;
}

/* ---- the namespace ------------------------------------------------- */

static int
ui_var_cmp(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a,
	    "name")), *y = json_string_value(json_object_get(
	    *(json_t *const *)b, "name"));

	return strcmp(x != NULL ? x : "", y != NULL ? y : "");
}

void
ui_set_vars(struct ui *u, json_t *vars, int cell)
{
	size_t i, n = json_array_size(vars);
	json_t **v;

	if (!json_is_array(vars))
		return;
	v = xcalloc(n + 1, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = json_array_get(vars, i);
	qsort(v, n, sizeof *v, ui_var_cmp);
	json_decref(u->vars);
	u->vars = json_array();
	for (i = 0; i < n; i++)
		json_array_append(u->vars, v[i]);
	free(v);
	u->vars_cell = cell;
	if (u->ns_sel >= n)
		u->ns_sel = n > 0 ? n - 1 : 0;
	u->dirty = true;
}

/* The indices of the names the filter lets through, at most max. */
size_t
ui_vars_shown(struct ui *u, size_t *idx, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < json_array_size(u->vars) && n < max; i++) {
		const char *name = json_string_value(json_object_get(
		    json_array_get(u->vars, i), "name"));

		if (u->filter[0] == '\0' || (name != NULL &&
		    strstr(name, u->filter) != NULL))
			idx[n++] = i;
	}
	return n;
}

/* One line about a value: the shape and dtype of arrays and frames,
 * the length of containers, the signature of functions and classes,
 * else (scalars, strings, a 0-d array) its repr's first line. */
void
ui_vars_summary(json_t *v, char *out, size_t len)
{
	json_t *shape = json_object_get(v, "shape"), *n = json_object_get(v,
	    "len");
	const char *repr = json_string_value(json_object_get(v, "repr"));
	const char *dtype = json_string_value(json_object_get(v, "dtype"));
	const char *sig = json_string_value(json_object_get(v, "signature"));
	const char *type = json_string_value(json_object_get(v, "type"));
	bool text = type != NULL && (strcmp(type, "str") == 0 ||
	    strcmp(type, "bytes") == 0);
	size_t i, k = 0;

	if (json_array_size(shape) > 0) {
		k += (size_t)snprintf(out, len, "(");
		for (i = 0; i < json_array_size(shape) && k < len; i++)
			k += (size_t)snprintf(out + k, len - k, "%s%lld",
			    i > 0 ? ", " : "", (long long)json_integer_value(
			    json_array_get(shape, i)));
		if (k < len)
			snprintf(out + k, len - k, "%s)%s%s",
			    json_array_size(shape) == 1 ? "," : "",
			    dtype != NULL ? " " : "", dtype != NULL ? dtype :
			    "");
	} else if (json_is_integer(n) && !text) {
		snprintf(out, len, "len %lld",
		    (long long)json_integer_value(n));
	} else if (sig != NULL) {
		snprintf(out, len, "%s", sig);
	} else {
		snprintf(out, len, "%.*s", repr != NULL ? (int)strcspn(repr,
		    "\n") : 0, repr != NULL ? repr : "");
	}
}

/* ---- a cell in full, and the output to a file ----------------------- */

static void
ui_detail_text(struct buf *b, const char *title, json_t *v)
{
	const char *s = json_string_value(v);

	if (s == NULL || *s == '\0')
		return;
	buf_printf(b, "\n%s:\n%s%s", title, s, s[strlen(s) - 1] == '\n' ?
	    "" : "\n");
}

void
ui_cell_detail(const struct ui_cell *c, struct buf *b)
{
	json_t *r = c->resp, *e = json_object_get(r, "error");
	json_t *mem = json_object_get(r, "memory_peak");
	char *fx;

	buf_printf(b, "cell %d, by the %s: %s\n", c->cell, c->origin,
	    r != NULL ? json_string_value(json_object_get(r, "status")) :
	    "running");
	if (r != NULL)
		buf_printf(b, "duration %.1f ms, cpu %.1f ms, memory peak %.1f "
		    "MiB\n", json_number_value(json_object_get(r,
		    "duration_ms")), json_number_value(json_object_get(r,
		    "cpu_ms")),
		    json_is_integer(mem) ? (double)json_integer_value(mem) /
		    1048576 : 0.0);
	buf_printf(b, "\ncode:\n%s\n", c->code);
	if (c->trimmed)
		buf_addstr(b, "\n(its output, result and traceback are no "
		    "longer kept: the cell list keeps the newest answers "
		    "whole, 1 KiB a line of --scrollback in all; --record "
		    "keeps them all)\n");
	ui_detail_text(b, "stdout", json_object_get(r, "output"));
	ui_detail_text(b, "stderr", json_object_get(r, "stderr"));
	ui_detail_text(b, "result", json_object_get(r, "result"));
	if (json_is_object(e)) {
		buf_printf(b, "\nerror: %s: %s\n", json_string_value(
		    json_object_get(e, "type")), json_string_value(
		    json_object_get(e, "message")));
		ui_detail_text(b, "traceback", json_object_get(e, "traceback"));
	}
	if (json_array_size(json_object_get(r, "effects")) > 0) {
		fx = json_dumps(json_object_get(r, "effects"), JSON_INDENT(1));
		buf_printf(b, "\neffects:\n%s\n", fx);
		free(fx);
	}
}

void
ui_save_output(struct ui *u, const char *path, char *msg, size_t len)
{
	struct hostfs_dir dir = { -1, false, false };
	struct hostfs_new nf;
	char *name = NULL, why[256];
	size_t i;
	FILE *f;
	bool ok, saved = false;

	/* Typed while cells run: walked now, so no link a cell put in the
	 * work dir is followed, and written as a new file renamed over
	 * the name, so nothing there is truncated (hostfs.h). */
	if (hostfs_walk(path, HOSTFS_PARENT, &dir, &name, why,
	    sizeof why) == -1 ||
	    hostfs_new_open(&nf, &dir, name, why, sizeof why) == -1)
		goto out;
	if ((f = fdopen(nf.fd, "w")) == NULL) {
		snprintf(why, sizeof why, "%s", strerror(errno));
		close(nf.fd);
		hostfs_new_commit(&nf, &dir, name, false, NULL, 0);
		goto out;
	}
	for (i = 0; i < u->nlines; i++) {
		struct ui_line *l = ui_line_at(u, i);

		fprintf(f, "%s%s%.*s\n", ui_markers[l->kind], l->kind ==
		    UL_HEAD ? "-- " : "", (int)l->len, l->text != NULL ?
		    l->text : "");
	}
	ok = fclose(f) != EOF;
	if (!ok)
		snprintf(why, sizeof why, "%s", strerror(errno));
	if (hostfs_new_commit(&nf, &dir, name, ok, why, sizeof why) == -1 ||
	    !ok)
		goto out;
	snprintf(msg, len, "saved %zu lines to '%s'", u->nlines, path);
	saved = true;
out:
	if (!saved)
		snprintf(msg, len, "cannot write '%s': %s", path, why);
	free(name);
	hostfs_close(&dir);
}

/* FILE.ipynb: the session as a notebook, through %save in a cell of
 * ours, so the worker writes it under the sandbox's rights (link.h). */
void
ui_save_notebook(struct ui *u, const char *path)
{
	struct buf b;
	const char *p;

	if (strchr(path, '\n') != NULL) {
		snprintf(u->note, sizeof u->note, "a notebook's name has no "
		    "newline");
		return;
	}
	buf_init(&b);
	buf_addstr(&b, "%save -f '");
	for (p = path; *p != '\0'; p++)
		if (*p == '\'')
			buf_addstr(&b, "'\"'\"'");	/* shlex's quoting */
		else
			buf_add(&b, p, 1);
	buf_addstr(&b, "'");
	ui_submit(u, json_pack("{s:s, s:s}", "op", "exec", "code", b.p),
	    W_OP);
	buf_free(&b);
}
