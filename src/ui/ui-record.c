/*
 * ui-record.c - the output pane as the session's record (see
 * ui-int.h): each cell's block holds, past its header, code, output and
 * stderr (ui-model.c puts those as they come), what its answer said, in
 * the answer's order: the result as "Out[N]: ...", the error with its
 * traceback and hint, the warnings, one line a display entry, the
 * answer's truncation and what "restored" said.  Whoever sent the cell
 * (agent, a person, a replay), the block says the same as the JSON
 * answer that client read.
 *
 * Long texts are capped at UI_REC_LINES lines: the head, a marker
 * saying how many lines it left out, and the last line (a frame's
 * "[100 rows x 2 columns]", a traceback's "KeyError"), so a cut always
 * shows.  Each line knows its cell and field, and the record's focus
 * (F5) opens that field whole in the pager (an overlay that stops at
 * its ends), searches the record and jumps from block to block.
 *
 * A restore that lost cells and a rollback or reset (any client's) mark
 * the cells they undid: their header, and a note line put under their
 * block; the namespace pane is asked for again at once, so it never
 * lists a name the restore took away.  Supervisor only.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ncurses.h>

#include "hostfs.h"
#include "ui-image.h"
#include "ui-int.h"

#define UI_REC_LINES 20	/* a field longer shows its head and last line */

void
ui_size(char *out, size_t len, unsigned long long n)
{
	if (n < 1024)
		snprintf(out, len, "%llu bytes", n);
	else if (n < 1048576)
		snprintf(out, len, "%.1f KiB", (double)n / 1024);
	else
		snprintf(out, len, "%.1f MiB", (double)n / 1048576);
}

/* One line of text, of kind, for field f. */
static struct ui_line *
rec_line(struct ui *u, enum ui_kind kind, enum ui_field f, const char *p,
    size_t n)
{
	struct ui_line *l;

	u->at_field = (unsigned char)f;
	l = ui_push(u, kind);
	ui_line_add(u, l, p, n);
	l->open = false;
	return l;
}

static void
rec_say(struct ui *u, enum ui_kind kind, enum ui_field f, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static void
rec_say(struct ui *u, enum ui_kind kind, enum ui_field f, const char *fmt,
    ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	rec_line(u, kind, f, msg, strlen(msg));
}

/* s's lines (first put before the first), at most UI_REC_LINES of
 * them: past that its head, a marker and its last line. */
static void
rec_text(struct ui *u, enum ui_kind kind, enum ui_field f,
    const char *first, const char *s, size_t n)
{
	size_t lines = 0, i, k, at = 0;
	struct buf b;

	while (n > 0 && s[n - 1] == '\n')
		n--;
	for (i = 0; i < n; i++)
		lines += s[i] == '\n';
	lines++;
	buf_init(&b);
	for (i = 0; at <= n; i++) {
		for (k = at; k < n && s[k] != '\n'; k++)
			;
		if (lines <= UI_REC_LINES || i < UI_REC_LINES - 2 ||
		    i == lines - 1) {
			b.len = 0;
			buf_addstr(&b, i == 0 ? first : "");
			buf_add(&b, s + at, k - at);
			rec_line(u, kind, f, b.p, b.len);
		} else if (i == UI_REC_LINES - 2) {
			rec_say(u, UL_NOTE, f, "\u2026 %zu more lines (F5, o "
			    "shows them whole)", lines - (UI_REC_LINES - 1));
		}
		at = k + 1;
	}
	buf_free(&b);
}

/* ---- the answer ------------------------------------------------------ */

static void
rec_error(struct ui *u, const struct response_error *e)
{
	const char *msg = e->message != NULL ? e->message : "";
	const char *tb = e->traceback, *last;
	size_t n = strcspn(msg, "\n"), tn;
	char *one;

	xasprintf(&one, "%s: %.*s", e->type, (int)n, msg);
	if (tb != NULL && *tb != '\0') {
		tn = strlen(tb);
		while (tn > 0 && tb[tn - 1] == '\n')
			tn--;
		rec_text(u, UL_FAIL, FD_ERROR, "", tb, tn);
		for (last = tb + tn; last > tb && last[-1] != '\n'; last--)
			;
		/* the traceback's last line is the error's, as a rule */
		if ((size_t)(tb + tn - last) == strlen(one) &&
		    memcmp(last, one, strlen(one)) == 0)
			goto hint;
	}
	rec_line(u, UL_FAIL, FD_ERROR, one, strlen(one));
hint:
	if (e->hint != NULL)
		rec_text(u, UL_HINT, FD_HINT, "hint: ", e->hint,
		    strlen(e->hint));
	free(one);
}

/* One display entry: its kind, size, an image's dimensions, its path
 * (or a text's first line). */
static void
rec_display(struct ui *u, json_t *d, int i)
{
	const char *type = json_string_value(json_object_get(d, "type"));
	const char *path = json_string_value(json_object_get(d, "path"));
	const char *text = json_string_value(json_object_get(d, "text"));
	const char *note = json_string_value(json_object_get(d, "note"));
	json_t *w = json_object_get(d, "width"), *h = json_object_get(d,
	    "height");
	unsigned long long n = json_is_integer(json_object_get(d, "bytes")) ?
	    (unsigned long long)json_integer_value(json_object_get(d,
	    "bytes")) : text != NULL ? strlen(text) : 0;
	char size[32], dim[48] = "";
	struct ui_line *l;

	ui_size(size, sizeof size, n);
	if (json_is_integer(w) && json_is_integer(h))
		snprintf(dim, sizeof dim, ", %lldx%lld", (long long)
		    json_integer_value(w), (long long)json_integer_value(h));
	u->at_field = FD_DISP;
	l = ui_push(u, UL_DISP);
	l->disp = i;
	l->open = false;
	{
		char *s;

		xasprintf(&s, "display: %s, %s%s%s%s%s%.*s%s%s", type != NULL ?
		    type : "?", size, dim, path != NULL ? ", " : "",
		    path != NULL ? path : "", text != NULL ? ": " : "",
		    text != NULL ? (int)strcspn(text, "\n") : 0, text != NULL ?
		    text : "", note != NULL ? " - " : "", note != NULL ?
		    note : "");
		ui_line_add(u, l, s, strlen(s));
		free(s);
	}
}

/* A list of cell numbers as "5, 6, 7". */
static void
rec_cells(json_t *a, const char *key, struct buf *b)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v) {
		json_t *n = key != NULL ? json_object_get(v, key) : v;

		buf_printf(b, "%s%lld", i > 0 ? ", " : "", (long long)
		    json_integer_value(n));
	}
}

static void rec_mark(struct ui *u, int cell, uint64_t before,
    enum ui_mark mark, const char *why);

/* What "restored" said, a line each part; the cells it lost marked. */
static void
rec_restored(struct ui *u, const struct ui_cell *c, json_t *r)
{
	json_t *cell = json_object_get(r, "cell"), *v;
	json_t *threads = json_object_get(r, "threads_lost");
	struct buf b;
	size_t i;

	if (json_is_null(r)) {
		rec_say(u, UL_NOTE, FD_RESTORED, "restored: null (the "
		    "interrupt sufficed: the namespace is as the cell left "
		    "it)");
		return;
	}
	if (json_is_integer(cell))
		rec_say(u, UL_NOTE, FD_RESTORED, "restored: the namespace is "
		    "back at the state after cell %lld", (long long)
		    json_integer_value(cell));
	else
		rec_say(u, UL_NOTE, FD_RESTORED, "restored: nothing could be "
		    "restored: a fresh namespace");
	buf_init(&b);
	if (json_array_size(json_object_get(r, "redone")) > 0) {
		rec_cells(json_object_get(r, "redone"), NULL, &b);
		rec_say(u, UL_NOTE, FD_RESTORED, "redone, answered as before: "
		    "cell %s", b.p);
	}
	json_array_foreach(json_object_get(r, "differs"), i, v) {
		char *first = json_dumps(json_object_get(v, "first"),
		    JSON_COMPACT);

		rec_say(u, UL_NOTE, FD_RESTORED, "redone, answered "
		    "differently: cell %lld, first %s", (long long)
		    json_integer_value(json_object_get(v, "cell")),
		    first != NULL ? first : "?");
		free(first);
	}
	json_array_foreach(json_object_get(r, "lost_why"), i, v) {
		const char *why = json_string_value(json_object_get(v, "why"));
		int n = (int)json_integer_value(json_object_get(v, "cell"));

		rec_say(u, UL_NOTE, FD_RESTORED, "lost: cell %d (%s)", n,
		    why != NULL ? why : "no reason given");
		rec_mark(u, n, c->seq, MK_LOST, why);
	}
	if (json_array_size(json_object_get(r, "lost_why")) == 0)
		json_array_foreach(json_object_get(r, "lost"), i, v) {
			rec_say(u, UL_NOTE, FD_RESTORED, "lost: cell %lld",
			    (long long)json_integer_value(v));
			rec_mark(u, (int)json_integer_value(v), c->seq,
			    MK_LOST, NULL);
		}
	if (json_integer_value(threads) > 0)
		rec_say(u, UL_NOTE, FD_RESTORED, "threads lost: %lld",
		    (long long)json_integer_value(threads));
	buf_free(&b);
}

/* The namespace as the worker has it now, asked for at once. */
static void
rec_vars(struct ui *u, int cell)
{
	u->vars_cell = cell;
	ui_submit(u, json_pack("{s:s}", "op", "vars"), W_VARS);
}

void
ui_record_answer(struct ui *u, struct ui_cell *c, const struct response *r)
{
	size_t i;
	char head[32], size[32];

	u->at_seq = c->seq;
	if (r->has & RESP_RESULT) {
		snprintf(head, sizeof head, "Out[%d]: ", c->cell);
		if (memchr(r->result, '\n', r->result_len) != NULL) {
			head[strlen(head) - 1] = '\0';
			rec_line(u, UL_RES, FD_RESULT, head, strlen(head));
			head[0] = '\0';
		}
		rec_text(u, UL_RES, FD_RESULT, head, r->result, r->result_len);
	}
	if (r->error != NULL)
		rec_error(u, r->error);
	for (i = 0; i < json_array_size(r->warnings); i++)
		rec_say(u, UL_NOTE, FD_WARN, "warning: %s", json_string_value(
		    json_array_get(r->warnings, i)) ?: "");
	for (i = 0; i < json_array_size(r->display); i++) {
		rec_display(u, json_array_get(r->display, i), (int)i);
		ui_image_entry(u, r, i);	/* an image hangs under it */
	}
	if (r->truncated > 0) {
		ui_size(size, sizeof size, r->truncated);
		rec_say(u, UL_NOTE, FD_NOTE, "truncated: %s left out of the "
		    "answer", size);
	}
	if (r->restored != NULL) {
		rec_restored(u, c, r->restored);
		if (json_is_object(r->restored))
			rec_vars(u, json_is_integer(json_object_get(
			    r->restored, "cell")) ? (int)json_integer_value(
			    json_object_get(r->restored, "cell")) : 0);
	}
	u->at_field = FD_NOTE;
}

/* ---- what became of a cell ------------------------------------------- */

/* A line put under line number after (the end of a block). */
static void
rec_insert(struct ui *u, size_t after, uint64_t seq, const char *text)
{
	struct ui_line *l;
	uint64_t was = u->at_seq;
	unsigned char field = u->at_field;
	size_t pos, i;

	ui_close_line(u);
	u->at_seq = seq;
	u->at_field = FD_NOTE;
	l = ui_push(u, UL_NOTE);
	ui_line_add(u, l, text, strlen(text));
	l->open = false;
	u->at_seq = was;
	u->at_field = field;
	if (after + 1 < u->dropped)
		return;		/* the block is gone: the note stays last */
	pos = after + 1 - u->dropped;
	if (pos >= u->nlines - 1)
		return;
	if (u->rec_sel > after)
		u->rec_sel++;
	ui_line_move(u, pos);
	for (i = 0; i < u->ncells; i++) {
		struct ui_cell *c = &u->cells[i];

		if (c->shown && c->head_no > after)
			c->head_no++;
		if (c->seq == seq)
			c->end_no = after + 1;
		else if (c->shown && c->end_no > after)
			c->end_no++;
	}
}

/* The newest answered cell numbered cell, sent before seq before, is
 * marked: its header, and a note under its block. */
static void
rec_mark(struct ui *u, int cell, uint64_t before, enum ui_mark mark,
    const char *why)
{
	static const char *const said[] = { "", "lost", "rolled back" };
	struct ui_cell *c = NULL;
	struct ui_line *h;
	char note[512], tag[32];
	size_t i;

	for (i = u->ncells; i-- > 0;)
		if (u->cells[i].cell == cell && u->cells[i].seq < before &&
		    u->cells[i].done) {
			c = &u->cells[i];
			break;
		}
	if (c == NULL || c->mark != MK_NONE)
		return;
	c->mark = (unsigned char)mark;
	if (!c->shown)
		return;
	if (c->head_no >= u->dropped) {
		h = ui_line_at(u, c->head_no - u->dropped);
		snprintf(tag, sizeof tag, " \u00b7 %s", said[mark]);
		ui_line_add(u, h, tag, strlen(tag));
	}
	snprintf(note, sizeof note, "cell %d was %s%s%s%s", cell, said[mark],
	    why != NULL ? " (" : "", why != NULL ? why : "", why != NULL ?
	    ")" : "");
	rec_insert(u, c->end_no, c->seq, note);
	u->dirty = true;
}

/* ---- rollbacks and resets, any client's ------------------------------ */

static int
rec_op_of(struct ui *u, uint64_t seq)
{
	int i;

	for (i = 0; i < u->nops; i++)
		if (u->ops[i].seq == seq)
			return i;
	return -1;
}

/* Its block's header: whatever it says next is under it. */
static void
rec_op_head(struct ui *u, int i, const struct session_event *ev)
{
	if (u->ops[i].to == -2)
		return;		/* shown */
	ui_close_line(u);
	u->at_seq = ev->seq;
	u->at_field = FD_NONE;
	if (strcmp(u->ops[i].op, "reset") == 0)
		ui_note_line(u, UL_HEAD, "reset %s", origin_names[ev->origin]);
	else
		ui_note_line(u, UL_HEAD, "rollback %s", origin_names[
		    ev->origin]);
	u->at_field = FD_NOTE;
	u->ops[i].to = -2;
}

static void
rec_op_answer(struct ui *u, int i, const struct session_event *ev)
{
	const struct response *r = ev->resp;
	bool reset = strcmp(u->ops[i].op, "reset") == 0;
	int cell = 0;
	size_t k;

	rec_op_head(u, i, ev);
	u->ops[i] = u->ops[--u->nops];
	if (r->status != ST_OK || (!reset && !ui_answer_cell(r, &cell))) {
		rec_say(u, UL_FAIL, FD_NOTE, "%s: %s", reset ? "reset failed" :
		    "rollback failed", r->error != NULL ? r->error->message :
		    status_names[r->status]);
		return;
	}
	if (reset)
		rec_say(u, UL_NOTE, FD_NOTE, "a fresh namespace");
	else
		rec_say(u, UL_NOTE, FD_NOTE, "the namespace is back at the "
		    "state after cell %d", cell);
	for (k = 0; k < u->ncells; k++)
		if (u->cells[k].done && u->cells[k].seq < ev->seq &&
		    u->cells[k].cell > cell && u->cells[k].mark == MK_NONE)
			rec_mark(u, u->cells[k].cell, ev->seq, MK_ROLLED,
			    reset ? "by a reset" : NULL);
	rec_vars(u, cell);
}

bool
ui_record_op(struct ui *u, const struct session_event *ev)
{
	const char *op;
	int i = rec_op_of(u, ev->seq);

	if (ev->kind == EV_QUEUED) {
		op = json_string_value(json_object_get(ev->req, "op"));
		if (op == NULL || (strcmp(op, "rollback") != 0 &&
		    strcmp(op, "reset") != 0))
			return false;
		if (u->nops == (int)nitems(u->ops))
			u->ops[0] = u->ops[--u->nops];
		i = u->nops++;
		u->ops[i].seq = ev->seq;
		u->ops[i].to = -1;
		snprintf(u->ops[i].op, sizeof u->ops[i].op, "%s", op);
		return true;
	}
	if (i < 0)
		return false;
	if (ev->kind == EV_STARTED)
		rec_op_head(u, i, ev);
	else if (ev->kind == EV_RESPONSE)
		rec_op_answer(u, i, ev);
	return true;
}

/* ---- a cell in full ---------------------------------------------------- */

static void
rec_detail_text(struct buf *b, const char *title, const char *s)
{
	if (s == NULL || *s == '\0')
		return;
	buf_printf(b, "\n%s:\n%s%s", title, s, s[strlen(s) - 1] == '\n' ?
	    "" : "\n");
}

/* An effect as a line: "write out.csv", "process ['ls'] (denied)". */
static void
rec_effect(struct buf *b, json_t *fx)
{
	const char *k;
	json_t *v;

	buf_printf(b, "  %s", json_string_value(json_object_get(fx, "kind")) ?:
	    "?");
	json_object_foreach(fx, k, v) {
		char *j;

		if (strcmp(k, "kind") == 0)
			continue;
		if (json_is_string(v)) {
			buf_printf(b, " %s%s", strcmp(k, "to") == 0 ? "-> " :
			    strcmp(k, "path") == 0 ? "" : k, strcmp(k, "path")
			    == 0 || strcmp(k, "to") == 0 ? "" : "=");
			buf_addstr(b, json_string_value(v));
		} else if (json_is_true(v)) {
			buf_printf(b, " (%s)", k);
		} else {
			j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
			buf_printf(b, " %s=%s", k, j != NULL ? j : "?");
			free(j);
		}
	}
	buf_addstr(b, "\n");
}

void
ui_cell_detail(const struct ui_cell *c, struct buf *b, size_t code[2])
{
	static const char *const said[] = { "", ", lost", ", rolled back" };
	const struct response *r = c->resp;
	const struct response_error *e = r != NULL ? r->error : NULL;
	size_t i;

	buf_printf(b, "cell %d, by the %s: %s%s\n", c->cell, c->origin,
	    r != NULL ? status_names[r->status] : "running", said[c->mark]);
	if (r != NULL)
		buf_printf(b, "duration %.1f ms, cpu %.1f ms, memory peak %.1f "
		    "MiB\n", r->duration_ms, ui_answer_cpu_ms(r),
		    ui_answer_mib(r));
	buf_addstr(b, "\ncode:\n");
	code[0] = b->len;
	buf_addstr(b, c->code);
	code[1] = b->len;
	buf_addstr(b, "\n");
	if (c->trimmed)
		buf_addstr(b, "\n(its output, result and traceback are no "
		    "longer kept: the cell list keeps the newest answers "
		    "whole, 1 KiB a line of --scrollback in all; --record "
		    "keeps them all)\n");
	if (r == NULL)
		return;
	rec_detail_text(b, "stdout", r->output);
	rec_detail_text(b, "stderr", r->stderr_text);
	rec_detail_text(b, "result", r->result);
	if (e != NULL) {
		/* a trimmed answer keeps the error's type alone */
		buf_printf(b, "\nerror: %s%s%s\n", e->type, e->message != NULL ?
		    ": " : "", e->message != NULL ? e->message : "");
		rec_detail_text(b, "hint", e->hint);
		rec_detail_text(b, "traceback", e->traceback);
	}
	if (json_array_size(r->effects) > 0) {
		buf_addstr(b, "\neffects:\n");
		for (i = 0; i < json_array_size(r->effects); i++)
			rec_effect(b, json_array_get(r->effects, i));
		if (r->effects_more > 0)
			buf_printf(b, "  and %llu more\n", r->effects_more);
	}
}
static const char *const rec_markers[] = {
	[UL_HEAD] = "", [UL_CODE] = "  ", [UL_OUT] = "  ", [UL_ERR] = "! ",
	[UL_FAIL] = "x ", [UL_NOTE] = "- ", [UL_RES] = "  ",
	[UL_HINT] = "? ", [UL_DISP] = "# ", [UL_IMAGE] = "  ",
};

/* ---- the output to a file ------------------------------------------ */

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

		fprintf(f, "%s%s%.*s\n", rec_markers[l->kind], l->kind ==
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
