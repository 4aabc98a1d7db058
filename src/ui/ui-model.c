/*
 * ui-model.c - what the curses UI shows, as data (see ui-int.h): the
 * scrollback (ui-lines.c's ring of at most --scrollback lines, each cut
 * at UI_LINE_MAX bytes, so a flood of any size holds bounded memory),
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
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "hostfs.h"
#include "ui-image.h"
#include "ui-int.h"


/* Bytes of output after which an answer gives freed memory back. */
#define UI_TRIM_AFTER ((size_t)8 << 20)

void
ui_model_init(struct ui *u, size_t scrollback)
{
	ui_lines_init(u, scrollback);
	u->keep = u->cap * UI_KEEP_PER_LINE;
	u->vars = json_array();
	u->vars_cell = -1;
	u->checkpoints = -1;
}

void
ui_model_free(struct ui *u)
{
	size_t i;

	ui_lines_free(u);
	for (i = 0; i < u->ncells; i++) {
		free(u->cells[i].code);
		response_free(u->cells[i].resp);
	}
	free(u->cells);
	json_decref(u->vars);
	ui_image_free(u);
}

/* ---- the scrollback ------------------------------------------------ */

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
		ui_line_add(u, l, p, k);
		if (k == n)
			break;
		if (p[k] == '\r' && !(k + 1 < n && p[k + 1] == '\n')) {
			ui_line_clear(u, l);
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
	ui_line_add(u, l, msg, strlen(msg));
	l->open = false;
}

/* ---- cells --------------------------------------------------------- */

struct ui_cell *
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
		if (whole && e->hint != NULL)
			k->error->hint = xstrdup(e->hint);
	}
	if (whole) {
		k->restored = json_incref(r->restored);
		k->warnings = json_incref(r->warnings);
		json_decref(k->fields);		/* response_new's own */
		k->fields = json_incref(r->fields);
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
	k->effects_more = r->effects_more;
	k->display = json_incref(r->display);
	k->truncated = r->truncated;
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

/* The header and the source, once the cell has something to show:
 * the lines after them are of the cell until another's come. */
void
ui_cell_show(struct ui *u, struct ui_cell *c)
{
	const char *p, *nl;

	u->at_seq = c->seq;
	u->at_field = FD_NONE;
	if (c->shown)
		return;
	ui_close_line(u);
	/* once there are branches, every header names its own: cell
	 * numbers repeat from branch to branch */
	if (c->cell > 0)
		ui_note_line(u, UL_HEAD, "[%d] %s%s%s", c->cell, c->origin,
		    u->branched ? " on " : "", u->branched ? (c->session[0] ?
		    c->session : "main") : "");
	else
		ui_note_line(u, UL_HEAD, "[?] %s%s%s", c->origin,
		    u->branched ? " on " : "", u->branched ? (c->session[0] ?
		    c->session : "main") : "");
	c->shown = true;
	c->head_no = c->end_no = ui_line_no(u, u->nlines - 1);
	u->at_field = FD_CODE;
	for (p = c->code; p != NULL && *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		if (nl > p || *nl == '\n') {
			struct ui_line *l = ui_push(u, UL_CODE);

			ui_line_add(u, l, p, (size_t)(nl - p));
			l->open = false;
		}
		if (*nl == '\0')
			break;
	}
	u->at_field = FD_NONE;
}

/* An exec request was queued (ev->req, the request object). */
static void
ui_queued(struct ui *u, const struct session_event *ev)
{
	const char *op = json_string_value(json_object_get(ev->req, "op"));
	const char *code = json_string_value(json_object_get(ev->req, "code"));
	const char *branch = ui_ev_session(ev);
	struct ui_cell *c;

	if (ui_cell_of(u, ev->seq) != NULL)
		return;
	if (op == NULL || strcmp(op, "exec") != 0 || code == NULL) {
		ui_record_op(u, ev);
		return;
	}
	u->cells = xrealloc(u->cells, (u->ncells + 1) * sizeof *u->cells);
	c = &u->cells[u->ncells++];
	*c = (struct ui_cell){ .seq = ev->seq, .code = xstrdup(code) };
	if (branch != NULL && strcmp(branch, "main") != 0)
		snprintf(c->session, sizeof c->session, "%s", branch);
	/* an event of no request's has no origin; an attached person's
	 * says which person */
	snprintf(c->origin, sizeof c->origin, "%s%s%.64s", ev->seq > 0 ?
	    origin_names[ev->origin] : "?", ev->by != NULL ? " " : "",
	    ev->by != NULL ? ev->by : "");
}

static void
ui_answer_output(struct ui *u, const char *text, size_t len,
    enum ui_kind kind)
{
	if (len == 0)
		return;
	ui_close_line(u);
	u->at_field = kind == UL_ERR ? FD_ERR : FD_OUT;
	ui_append(u, kind, text, len);
}

/* export_split's put: a piece of the answer's stdout (1) or stderr. */
static void
ui_answer_run(void *ctx, int stream, const char *text, size_t n)
{
	struct ui *u = ctx;

	u->at_field = stream == 2 ? FD_ERR : FD_OUT;
	ui_append(u, stream == 2 ? UL_ERR : UL_OUT, text, n);
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
	c->done = true;
	c->resp = ui_answer_keep(r, true);
	ui_cells_bound(u, c);
	ui_cell_show(u, c);
	ui_record_answer(u, c, r);
	u->last = (size_t)(c - u->cells) + 1;
	/* after a flood, what its buffers held goes back to the system:
	 * malloc keeps freed pages that lie below blocks still in use */
	if (u->streamed > UI_TRIM_AFTER) {
		malloc_trim(0);
		u->streamed = 0;
	}
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
		if (what == NULL || strcmp(what, "died") != 0)
			break;
		/* under the block of the cell it ran, not the last one's */
		if (u->running != 0 && ui_cell_of(u, u->running) != NULL)
			ui_cell_show(u, ui_cell_of(u, u->running));
		u->at_field = FD_NOTE;
		ui_note_line(u, UL_NOTE, "the worker died (%s)", how != NULL ?
		    how : "?");
		break;
	case EV_CHECKPOINT:
		what = json_string_value(json_object_get(o, "state"));
		/* newest: the one held when we attached, if any */
		if (what != NULL && (strcmp(what, "taken") == 0 ||
		    strcmp(what, "newest") == 0))
			u->checkpoints = json_is_integer(json_object_get(o,
			    "cell")) ? (int)json_integer_value(json_object_get(
			    o, "cell")) : -1;
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
	else if (u->at_seq != 0) {
		/* between cells: no cell's */
		ui_close_line(u);
		u->at_seq = 0;
	}
	u->at_field = stream == 2 ? FD_ERR : FD_OUT;
	u->streamed += len;
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
	ui_branch_event(u, ev);
	switch (ev->kind) {
	case EV_QUEUED:
		ui_queued(u, ev);
		break;
	case EV_STARTED:
		if (c == NULL) {
			ui_record_op(u, ev);
			break;
		}
		c->cell = ev->cell;
		/* a cell that ran before we attached: from its start */
		c->started_ms = now_ms() - json_integer_value(json_object_get(
		    ev->info, "elapsed_ms"));
		/* the status line's clock: the person's branch's cell */
		if (ui_branch_here(u, c->session))
			u->running = ev->seq;
		break;
	case EV_RESPONSE:
		if (c != NULL) {
			ui_answered(u, c, ev->resp, NULL);
			ui_branch_answered(u, c);
		} else
			ui_record_op(u, ev);
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
	case EV_NAMESPACE:
	case EV_CHECKPOINT:
		/* the panes show the person's branch */
		if (ui_branch_here(u, ui_ev_session(ev)))
			ui_info(u, ev);
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

	ui_branch_event(u, ev);
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
