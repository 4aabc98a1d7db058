/*
 * ui-model.c - what the curses UI shows, as data (see ui-int.h): the
 * scrollback (a ring of at most --scrollback lines, each cut at
 * UI_LINE_MAX bytes, so a flood of any size holds bounded memory),
 * every cell of the session with its answer (whole for the newest ones,
 * up to UI_KEEP_PER_LINE bytes a scrollback line: a long session holds
 * bounded memory too), and the namespace.
 *
 * Events come as the session's structs (session.h's session_event, response.h's
 * response), whichever back end delivered them: the in-process session's as it
 * made them, an attached one's as ui-wire.c read them from the socket's lines,
 * so both are drawn alike by one reader.  What JSON is left is the structs'
 * own: a request, an op's fields, an event's info.  A cell's header goes into
 * the scrollback with its first output or its answer, never before: a line that
 * only proves a block incomplete leaves no trace.
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
#include "ui-image.h"
#include "ui-int.h"

static const char *const ui_markers[] = {
	[UL_HEAD] = "", [UL_CODE] = "  ", [UL_OUT] = "  ", [UL_ERR] = "! ",
	[UL_FAIL] = "x ", [UL_NOTE] = "- ", [UL_IMAGE] = "- ",
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
		response_free(u->cells[i].resp);
	}
	free(u->cells);
	json_decref(u->vars);
	ui_image_free(u);
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
	response_free(c->resp);
	memmove(c, c + 1, (u->ncells - i - 1) * sizeof *c);
	u->ncells--;
	if (u->last > i)
		u->last--;
	if (u->cell_sel >= u->ncells && u->cell_sel > 0)
		u->cell_sel--;
}

/* What the cell list can let go of in an answer it keeps: its texts. */
static size_t
ui_answer_weight(const struct response *r)
{
	const struct response_error *e = r->error;

	return r->output_len + r->stderr_len + r->result_len +
	    (e != NULL && e->message != NULL ? strlen(e->message) : 0) +
	    (e != NULL && e->traceback != NULL ? strlen(e->traceback) : 0) +
	    UI_KEEP_PER_EFFECT * json_array_size(r->effects);
}

/*
 * What the cell list keeps of an answer r: a new response holding what
 * the list, the status line, the result pane and a cell's detail show
 * (exec's members only an exec's answer has).  A copy, not a reference:
 * r is the session's, also holding the images' bytes and its encoded
 * lines, which nothing here shows and no trim would let go of.  Whole:
 * its texts, error and effects too; else (a trim) its status, times
 * and the error's type alone.
 */
static struct response *
ui_answer_keep(const struct response *r, bool whole)
{
	struct response *k = response_new(r->status);
	const struct response_error *e = r->error;

	if (e != NULL) {
		k->error = xcalloc(1, sizeof *k->error);
		k->error->type = xstrdup(e->type);
		k->error->message = whole ? xstrdup(e->message) : NULL;
		if (whole && e->traceback != NULL)
			k->error->traceback = xstrdup(e->traceback);
	}
	if (!(r->has & RESP_EXEC))
		return k;
	k->has = r->has & (RESP_EXEC | RESP_CELL | RESP_COST);
	k->cell = r->cell;
	k->duration_ms = r->duration_ms;
	k->cpu_ms = r->cpu_ms;
	k->memory_peak = r->memory_peak;
	if (!whole)
		return k;
	if (r->output != NULL)
		response_set_output(k, r->output, r->output_len);
	if (r->stderr_text != NULL)
		response_set_stderr(k, r->stderr_text, r->stderr_len);
	if (r->has & RESP_RESULT)
		response_set_result(k, r->result, r->result_len);
	k->effects = json_incref(r->effects);
	return k;
}

bool
ui_answer_cell(const struct response *r, int *cell)
{
	json_t *f = json_object_get(r->fields, "cell");

	/* response_json writes an op's fields over exec's own */
	if (f != NULL) {
		if (json_is_integer(f))
			*cell = (int)json_integer_value(f);
		return json_is_integer(f);
	}
	if (r->has & RESP_CELL)
		*cell = r->cell;
	return (r->has & RESP_CELL) != 0;
}

double
ui_answer_cpu_ms(const struct response *r)
{
	return (r->has & RESP_EXEC) && (r->has & RESP_COST) ? r->cpu_ms : 0;
}

double
ui_answer_mib(const struct response *r)
{
	return (r->has & RESP_EXEC) && (r->has & RESP_COST) &&
	    r->memory_peak >= 0 ? (double)r->memory_peak / 1048576 : 0;
}

/* Keep of c's answer what the list and the status line show. */
static void
ui_cell_trim(struct ui *u, struct ui_cell *c)
{
	struct response *slim = ui_answer_keep(c->resp, false);

	response_free(c->resp);
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

/* An exec request was queued (ev->req, the request object). */
static void
ui_queued(struct ui *u, const struct session_event *ev)
{
	const char *op = json_string_value(json_object_get(ev->req, "op"));
	const char *code = json_string_value(json_object_get(ev->req, "code"));
	struct ui_cell *c;

	if (op == NULL || strcmp(op, "exec") != 0 || code == NULL ||
	    ui_cell_of(u, ev->seq) != NULL)
		return;
	u->cells = xrealloc(u->cells, (u->ncells + 1) * sizeof *u->cells);
	c = &u->cells[u->ncells++];
	*c = (struct ui_cell){ .seq = ev->seq, .code = xstrdup(code) };
	/* an event of no request's has no origin */
	snprintf(c->origin, sizeof c->origin, "%s", ev->seq > 0 ?
	    origin_names[ev->origin] : "?");
}

/* One line of an error for the scrollback: "Type: message". */
static void
ui_fail_line(struct ui *u, const struct response_error *e)
{
	const char *msg = e->message != NULL ? e->message : "";
	const char *nl = strchr(msg, '\n');

	ui_note_line(u, UL_FAIL, "%s: %.*s", e->type, nl != NULL ?
	    (int)(nl - msg) : 200, msg);
}

static void
ui_answer_output(struct ui *u, const char *text, size_t len,
    enum ui_kind kind)
{
	if (len == 0)
		return;
	ui_close_line(u);
	ui_append(u, kind, text, len);
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
ui_answer_streams(struct ui *u, const struct response *r, json_t *order)
{
	bool exec = r->has & RESP_EXEC;
	const char *const text[2] = {
	    exec ? (r->output != NULL ? r->output : "") : NULL,
	    exec ? (r->stderr_text != NULL ? r->stderr_text : "") : NULL };
	const size_t len[2] = { r->output_len, r->stderr_len };

	if (order != NULL && exec) {
		ui_close_line(u);
		if (export_split(order, text, len, ui_answer_run, u))
			return;
	}
	ui_answer_output(u, text[0], len[0], UL_OUT);
	ui_answer_output(u, text[1], len[1], UL_ERR);
}

/* The answer r to cell c; order, for a cell from before we attached,
 * the order its streams came in (or NULL). */
static void
ui_answered(struct ui *u, struct ui_cell *c, const struct response *r,
    json_t *order)
{
	if (u->running == c->seq) {
		u->running = 0;
		/* k_ctrl_c's note is about this cell, which is over */
		if (strcmp(u->note, UI_NOTE_INTERRUPTING) == 0)
			u->note[0] = '\0';
	}
	if (r->status == ST_INCOMPLETE || (r->status == ST_INVALID &&
	    !c->shown)) {
		ui_cell_drop(u, c);
		return;
	}
	ui_answer_cell(r, &c->cell);
	if (!c->shown) {
		/* no output came as events (a cell from before we attached,
		 * or one that printed nothing): the answer's, if any */
		ui_cell_show(u, c);
		ui_answer_streams(u, r, order);
	}
	ui_close_line(u);
	ui_image_answer(u, r);
	c->done = true;
	c->resp = ui_answer_keep(r, true);
	ui_cells_bound(u, c);
	if (r->error != NULL)
		ui_fail_line(u, r->error);
	u->last = (size_t)(c - u->cells) + 1;
}

/* The answer to one of our own requests, by what it was for. */
static void
ui_own_answer(struct ui *u, struct response *r)
{
	json_t *id = r->id;
	int i;

	if (!json_is_integer(id))
		return;
	for (i = 0; i < u->npend; i++)
		if (u->pend[i].id == json_integer_value(id))
			break;
	if (i == u->npend)
		return;
	if (u->want_id == u->pend[i].id) {
		response_free(u->reply);
		u->reply = response_ref(r);
	} else {
		ui_own_reply(u, u->pend[i].why, r);
	}
	u->pend[i] = u->pend[--u->npend];
}

/* The events whose fields are info's. */
static void
ui_info(struct ui *u, const struct session_event *ev)
{
	json_t *o = ev->info;
	const char *what, *how;

	switch (ev->kind) {
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
ui_event(struct ui *u, const struct session_event *ev, bool own)
{
	struct ui_cell *c = ev->seq > 0 ? ui_cell_of(u, ev->seq) : NULL;

	if (ev->kind == EV_OUTPUT || ev->kind == EV_BACKGROUND) {
		/* the raw bytes here (SESSION_RAW), a line's data attached;
		 * none at the end of a stream with nothing held back */
		if (ev->data != NULL)
			ui_output(u, ev->kind, ev->seq, ev->stream, ev->data,
			    ev->len);
		return;
	}
	u->dirty = true;
	switch (ev->kind) {
	case EV_QUEUED:
		ui_queued(u, ev);
		break;
	case EV_STARTED:
		if (c == NULL)
			break;
		c->cell = ev->cell;
		c->started_ms = now_ms();
		u->running = ev->seq;
		break;
	case EV_RESPONSE:
		if (c != NULL)
			ui_answered(u, c, ev->resp, NULL);
		if (own)
			ui_own_answer(u, ev->resp);
		break;
	case EV_CANCELLED:
		if (c != NULL)
			ui_cell_drop(u, c);
		break;
	case EV_INPUT:
		if (own)
			ui_input_asked(u, ev);
		break;
	default:
		ui_info(u, ev);
		break;
	}
}

/* A cell that finished before we attached (listen.c's history line):
 * in the list and the output as if we had seen it run. */
void
ui_history(struct ui *u, const struct session_event *ev, json_t *order)
{
	struct ui_cell *c;

	ui_queued(u, ev);
	c = ui_cell_of(u, ev->seq);
	if (c != NULL && !c->done && ev->resp != NULL)
		ui_answered(u, c, ev->resp, order);
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
ui_detail_text(struct buf *b, const char *title, const char *s)
{
	if (s == NULL || *s == '\0')
		return;
	buf_printf(b, "\n%s:\n%s%s", title, s, s[strlen(s) - 1] == '\n' ?
	    "" : "\n");
}

void
ui_cell_detail(const struct ui_cell *c, struct buf *b)
{
	const struct response *r = c->resp;
	const struct response_error *e = r != NULL ? r->error : NULL;
	char *fx;

	buf_printf(b, "cell %d, by the %s: %s\n", c->cell, c->origin,
	    r != NULL ? status_names[r->status] : "running");
	if (r != NULL)
		buf_printf(b, "duration %.1f ms, cpu %.1f ms, memory peak %.1f "
		    "MiB\n", r->duration_ms, ui_answer_cpu_ms(r),
		    ui_answer_mib(r));
	buf_printf(b, "\ncode:\n%s\n", c->code);
	if (c->trimmed)
		buf_addstr(b, "\n(its output, result and traceback are no "
		    "longer kept: the cell list keeps the newest answers "
		    "whole, 1 KiB a line of --scrollback in all; --record "
		    "keeps them all)\n");
	if (r == NULL)
		return;
	ui_detail_text(b, "stdout", r->output);
	ui_detail_text(b, "stderr", r->stderr_text);
	ui_detail_text(b, "result", r->result);
	if (e != NULL) {
		/* a trimmed answer keeps the error's type alone */
		buf_printf(b, "\nerror: %s%s%s\n", e->type, e->message != NULL ?
		    ": " : "", e->message != NULL ? e->message : "");
		ui_detail_text(b, "traceback", e->traceback);
	}
	if (json_array_size(r->effects) > 0) {
		fx = json_dumps(r->effects, JSON_INDENT(1));
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
