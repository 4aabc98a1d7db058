/*
 * ui-pager.c - the record's own focus (F5, see ui-int.h): a picked
 * line in the output pane, moved by Up/Down/PgUp/PgDn, by a search
 * (/, n, N) or from one cell's block to the next ([, ]); o or Enter
 * opens the field the line shows, whole, in the pager (an overlay,
 * which ui-draw.c keeps within its text).  The whole is the cell's kept
 * answer, as its client got it: a result the record cut to its head
 * and last line, a 1 MB line cut to its head and tail, all of it is
 * there.  The input line keeps its keys: the record's are only taken
 * in this focus, reached with F5 (or Esc 5) and left with Esc.
 * Supervisor only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ui-int.h"

static struct ui_line *
pg_line(struct ui *u, size_t *idx)
{
	if (u->nlines == 0)
		return NULL;
	if (u->rec_sel < u->dropped)
		u->rec_sel = u->dropped;
	if (u->rec_sel - u->dropped >= u->nlines)
		u->rec_sel = ui_line_no(u, u->nlines - 1);
	*idx = u->rec_sel - u->dropped;
	return ui_line_at(u, *idx);
}

void
ui_record_focus(struct ui *u)
{
	size_t back = u->scroll < u->nlines ? u->scroll : 0;

	u->finding = false;
	u->dirty = true;
	if (u->focus == F_RECORD) {
		u->focus = F_INPUT;
		u->note[0] = '\0';
		return;
	}
	u->focus = F_RECORD;
	u->rec_sel = u->nlines > 0 ? ui_line_no(u, u->nlines - 1 - back) :
	    u->dropped;
	snprintf(u->note, sizeof u->note, "record: / searches, n N again, "
	    "[ ] cells, o opens whole, Esc back");
}

void
ui_record_move(struct ui *u, long d)
{
	size_t idx;

	if (pg_line(u, &idx) == NULL)
		return;
	if (d < 0)
		idx = idx > (size_t)-d ? idx - (size_t)-d : 0;
	else
		idx = idx + (size_t)d < u->nlines ? idx + (size_t)d :
		    u->nlines - 1;
	u->rec_sel = ui_line_no(u, idx);
	if (idx == u->nlines - 1)
		u->scroll = 0;
	u->dirty = true;
}

/* Whether l holds s, case aside. */
static bool
pg_match(const struct ui_line *l, const char *s)
{
	size_t n = strlen(s), i;

	for (i = 0; n > 0 && i + n <= l->len; i++)
		if (strncasecmp(l->text + i, s, n) == 0)
			return true;
	return false;
}

/* The nearest line holding the search, dir -1 above, 1 below, from
 * the picked one (itself too when self). */
static void
pg_find(struct ui *u, int dir, bool self)
{
	size_t idx, i;

	if (u->find[0] == '\0') {
		snprintf(u->note, sizeof u->note, "no search yet: / types "
		    "one");
		return;
	}
	if (pg_line(u, &idx) == NULL)
		return;
	for (i = self ? idx : idx + (size_t)dir; i < u->nlines;
	    i += (size_t)dir)
		if (pg_match(ui_line_at(u, i), u->find)) {
			u->rec_sel = ui_line_no(u, i);
			snprintf(u->note, sizeof u->note, "/%s: line %zu of "
			    "%zu (n: above, N: below)", u->find, i + 1,
			    u->nlines);
			u->dirty = true;
			return;
		}
	snprintf(u->note, sizeof u->note, "/%s: no more %s (%s goes the "
	    "other way)", u->find, dir < 0 ? "above" : "below", dir < 0 ?
	    "N" : "n");
	u->dirty = true;
}

void
ui_record_find(struct ui *u)
{
	u->finding = true;
	u->find[0] = '\0';
	snprintf(u->note, sizeof u->note, "/");
	u->dirty = true;
}

void ui_record_again(struct ui *u) { pg_find(u, -1, false); }
void ui_record_back(struct ui *u) { pg_find(u, 1, false); }

bool
ui_record_key(struct ui *u, int key)
{
	if (!u->finding)
		return false;
	if (key == '\n' || key == '\r') {
		u->finding = false;
		pg_find(u, -1, true);
		return true;
	}
	if (key == 27) {
		u->finding = false;
		u->find[0] = '\0';
		u->note[0] = '\0';
	} else if (!ui_edit_key(u->find, sizeof u->find, key)) {
		return true;	/* typing a search: no key is a binding */
	}
	if (u->finding)
		snprintf(u->note, sizeof u->note, "/%s", u->find);
	u->dirty = true;
	return true;
}

/* The header of the block dir (-1 above, 1 below) of the picked line. */
static void
pg_cell(struct ui *u, int dir)
{
	size_t idx, i;

	if (pg_line(u, &idx) == NULL)
		return;
	for (i = idx + (size_t)dir; i < u->nlines; i += (size_t)dir)
		if (ui_line_at(u, i)->kind == UL_HEAD) {
			u->rec_sel = ui_line_no(u, i);
			u->dirty = true;
			return;
		}
	snprintf(u->note, sizeof u->note, "no cell %s", dir < 0 ? "above" :
	    "below");
	u->dirty = true;
}

void ui_record_prev_cell(struct ui *u) { pg_cell(u, -1); }
void ui_record_next_cell(struct ui *u) { pg_cell(u, 1); }

static void
pg_json(struct buf *b, json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);

	buf_addstr(b, s != NULL ? s : "null");
	free(s);
}

/* What field f of c's answer r says, whole; false when r has none.
 * code[0] to code[1]: the bytes of b that are Python code. */
static bool
pg_field(const struct ui_cell *c, const struct response *r,
    const struct ui_line *l, struct buf *b, size_t code[2])
{
	const struct response_error *e = r->error;
	size_t i;

	switch (l->field) {
	case FD_OUT:
		buf_add(b, r->output ?: "", r->output_len);
		return r->output != NULL;
	case FD_ERR:
		buf_add(b, r->stderr_text ?: "", r->stderr_len);
		return r->stderr_text != NULL;
	case FD_RESULT:
		buf_add(b, r->result ?: "", r->result_len);
		return (r->has & RESP_RESULT) != 0;
	case FD_ERROR:
		if (e == NULL || e->message == NULL)
			return false;
		buf_printf(b, "%s: %s\n\n%s", e->type, e->message,
		    e->traceback ?: "");
		return true;
	case FD_HINT:
		buf_addstr(b, e != NULL && e->hint != NULL ? e->hint : "");
		return e != NULL && e->hint != NULL;
	case FD_WARN:
		for (i = 0; i < json_array_size(r->warnings); i++)
			buf_printf(b, "%s\n", json_string_value(json_array_get(
			    r->warnings, i)) ?: "");
		return r->warnings != NULL;
	case FD_DISP:
		pg_json(b, json_array_get(r->display, (size_t)l->disp));
		return r->display != NULL;
	case FD_RESTORED:
		pg_json(b, r->restored);
		return r->restored != NULL;
	default:
		ui_cell_detail(c, b, code);
		return true;
	}
}

void
ui_record_open(struct ui *u)
{
	static const char *const what[] = { "", "code", "output", "stderr",
	    "result", "error", "hint", "warnings", "display", "restored",
	    "" };
	struct ui_line *l;
	struct ui_cell *c;
	char title[128];
	struct buf b;
	size_t idx, code[2] = { 0, 0 };
	uint64_t seq;

	if ((l = pg_line(u, &idx)) == NULL)
		return;
	seq = ui_line_seq(u, idx);
	c = seq > 0 ? ui_cell_of(u, seq) : NULL;
	buf_init(&b);
	buf_addstr(&b, "");
	snprintf(title, sizeof title, " %s%s", what[l->field], l->field ==
	    FD_NONE || l->field == FD_NOTE ? "the line" : "");
	if (c != NULL)
		snprintf(title, sizeof title, " cell %d%s%s, whole", c->cell,
		    what[l->field][0] != '\0' ? ": " : "", what[l->field]);
	if (c != NULL && l->field == FD_CODE) {
		buf_addstr(&b, c->code);
		code[1] = b.len;
	} else if (c == NULL || c->resp == NULL || c->trimmed ||
	    !pg_field(c, c->resp, l, &b, code)) {
		/* no answer (yet, or kept): what the line holds */
		b.len = 0;
		code[0] = code[1] = 0;
		buf_add(&b, l->text ?: "", l->len);
		if (c != NULL && c->trimmed)
			buf_addstr(&b, "\n\n(the cell's answer is no longer "
			    "kept whole: --record keeps them all)");
	}
	ui_overlay_code(u, title, b.p, code[0], code[1]);
	buf_free(&b);
}
