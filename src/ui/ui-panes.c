/*
 * ui-panes.c - the namespace and result panes (see ui-int.h), drawn
 * with ui-draw.c's primitives: the namespace as columns of name, type
 * and summary; the result pane as the last answer's result or error,
 * capped with a marker and its last line when it does not fit, or the
 * completions as a menu in aligned columns; and the overlays (help,
 * inspect, a cell or a field whole), which stop at their ends.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <ncurses.h>

#include "ui-draw.h"
#include "ui-int.h"
#include "ui-paint.h"

/* The type as the pane shows it: without its module. */
static const char *
ui_short_type(json_t *v)
{
	const char *type = json_string_value(json_object_get(v, "type"));
	const char *dot = type != NULL ? strrchr(type, '.') : NULL;

	return dot != NULL ? dot + 1 : type != NULL ? type : "";
}

/* The name and type columns as wide as their longest entry, at most a
 * third and a quarter of the pane: the summary gets the rest. */
static void
ui_ns_columns(struct ui *u, const size_t *idx, size_t n, int w, int *nw,
    int *tw)
{
	size_t i, len;
	int most_n = 1, most_t = 1;

	for (i = 0; i < n; i++) {
		json_t *v = json_array_get(u->vars, idx[i]);
		const char *name = json_string_value(json_object_get(v,
		    "name"));

		len = name != NULL ? strlen(name) : 0;
		if ((int)len + 1 > most_n)
			most_n = len >= (size_t)w ? w : (int)len + 1;
		len = strlen(ui_short_type(v));
		if ((int)len + 1 > most_t)
			most_t = len >= (size_t)w ? w : (int)len + 1;
	}
	*nw = most_n < w / 3 ? most_n : w / 3;
	*tw = most_t < w / 4 ? most_t : w / 4;
}

void
ui_draw_ns(struct ui *u)
{
	const struct ui_rect *r = &u->lay.ns;
	size_t idx[4096], n, i, top;
	int nw, tw, y;
	char title[128], sum[256];

	if (r->h == 0)
		return;
	snprintf(title, sizeof title, " namespace%s%.0d%s%s%s",
	    u->vars_cell > 0 ? ", cell " : "", u->vars_cell > 0 ?
	    u->vars_cell : 0, u->filter[0] || u->filtering ? "  /" : "",
	    u->filter, u->filtering ? "_" : "");
	ui_title(r, title, u->focus == F_NS);
	attrset(A_NORMAL);
	mvvline(r->y, r->x + r->w, ACS_VLINE, r->h);
	n = ui_vars_shown(u, idx, 4096);
	ui_ns_columns(u, idx, n, r->w, &nw, &tw);
	if (u->ns_sel >= n)
		u->ns_sel = n > 0 ? n - 1 : 0;
	top = u->ns_sel + 2 > (size_t)r->h ? u->ns_sel + 2 - (size_t)r->h : 0;
	for (i = top, y = r->y + 1; i < n && y < r->y + r->h; i++, y++) {
		json_t *v = json_array_get(u->vars, idx[i]);
		attr_t a = u->focus == F_NS && i == u->ns_sel ? A_REVERSE :
		    A_NORMAL;

		if (a != A_NORMAL) {
			attrset(a);
			mvhline(y, r->x, ' ', r->w);
		}
		ui_puts(y, r->x, nw - 1, json_string_value(json_object_get(v,
		    "name")), a | A_BOLD);
		ui_puts(y, r->x + nw, tw - 1, ui_short_type(v), a | A_DIM);
		ui_vars_summary(v, sum, sizeof sum);
		ui_puts(y, r->x + nw + tw, r->w - nw - tw, sum, a);
	}
	if (n == 0)
		ui_puts(r->y + 1, r->x + 1, r->w - 1, u->filter[0] ?
		    "(no name matches)" : "(no names yet)", A_DIM);
}


/* Completions in a menu: columns as wide as the longest name, filled
 * down then across as readline lists them, a name never cut between
 * rows; the last place counts those that did not fit. */
static void
ui_draw_matches(struct ui *u, const struct ui_rect *r)
{
	wchar_t buf[1024];
	size_t n, i, shown;
	int most = 1, colw, ncol, nrow, o, c;
	char title[64], more[64];

	for (n = 0; u->matches[n] != NULL; n++) {
		ui_fit(u->matches[n], strlen(u->matches[n]), 1024, buf, &o, &c);
		most = c > most ? c : most;
	}
	snprintf(title, sizeof title, " completions: %zu (any key closes)",
	    n);
	ui_title(r, title, false);
	colw = most + 2 < r->w - 1 ? most + 2 : r->w - 1;
	ncol = colw > 0 && (r->w - 1) / colw > 0 ? (r->w - 1) / colw : 1;
	nrow = (int)((n + (size_t)ncol - 1) / (size_t)ncol);
	shown = n;
	if (nrow > r->h - 1) {
		nrow = r->h - 1 > 0 ? r->h - 1 : 1;
		shown = (size_t)(nrow * ncol) - 1;
	}
	for (i = 0; i < shown; i++)
		ui_puts(r->y + 1 + (int)i % nrow, r->x + 1 + (int)i / nrow *
		    colw, colw - 1, u->matches[i], A_NORMAL);
	if (shown < n) {
		snprintf(more, sizeof more, "%s %zu more", ui_draw_utf8() ?
		    "\u2026" : "...", n - shown);
		ui_puts(r->y + 1 + (int)shown % nrow, r->x + 1 + (int)shown /
		    nrow * colw, r->w - 1 - (int)shown / nrow * colw, more,
		    A_DIM);
	}
}

/* The rows s takes wrapped in w columns, counted up to most. */
static int
ui_text_rows(const char *s, int w, int most)
{
	size_t at[UI_LINE_MAX + 1], len;
	const char *nl;
	int rows = 0;

	while (s != NULL && *s != '\0' && rows < most) {
		nl = strchr(s, '\n');
		len = nl != NULL ? (size_t)(nl - s) : strlen(s);
		if (len > UI_LINE_MAX)
			len = UI_LINE_MAX;
		rows += ui_wrap(s, len, w, at, UI_LINE_MAX + 1);
		s = nl != NULL ? nl + 1 : NULL;
	}
	return rows;
}

/* s in the body of r (its title row aside); when it does not fit, its
 * head, a marker saying how much is left out, and its last line. */
static void
ui_draw_capped(struct ui *u, const struct ui_rect *r, const char *s,
    enum ui_kind k)
{
	struct ui_rect body = { r->y + 1, r->x, r->h - 1, r->w };
	size_t n, total = 0, whole;
	const char *last, *end;
	char mark[96];
	int rows;

	for (n = strlen(s); n > 0 && s[n - 1] == '\n'; n--)
		;
	for (end = s; end < s + n; end++)
		total += *end == '\n';
	total++;
	rows = ui_text_rows(s, r->w - 1, body.h + 1);
	if (rows <= body.h || body.h < 3) {
		ui_draw_text(u, &body, body.y, s, k, NULL);
		return;
	}
	body.h -= 2;
	ui_draw_text(u, &body, body.y, s, k, &whole);
	for (last = s + n; last > s && last[-1] != '\n'; last--)
		;
	snprintf(mark, sizeof mark, "\u2026 %zu more lines (F5, o opens "
	    "it whole)", total - whole - 1);
	ui_puts(body.y + body.h, r->x + 1, r->w - 1, mark, ui_attr(u,
	    UL_NOTE) | A_BOLD);
	ui_put(body.y + body.h + 1, r->x + 1, r->w - 1, last, (size_t)(s + n -
	    last), ui_attr(u, k));
}

void
ui_draw_result(struct ui *u)
{
	const struct ui_rect *r = &u->lay.result;
	const struct ui_cell *c = ui_last_answer(u);
	const struct response_error *e;
	char title[128];

	if (r->h == 0)
		return;
	if (u->matches != NULL) {
		ui_draw_matches(u, r);
		return;
	}
	if (c == NULL) {
		ui_title(r, " result", false);
		return;
	}
	snprintf(title, sizeof title, " result of cell %d (%s): %s, %.0f ms",
	    c->cell, c->origin, status_names[c->resp->status],
	    c->resp->duration_ms);
	ui_title(r, title, false);
	e = c->resp->error;
	if (e != NULL) {
		if (e->traceback != NULL && *e->traceback != '\0')
			ui_draw_capped(u, r, e->traceback, UL_FAIL);
		else
			ui_draw_capped(u, r, e->message, UL_FAIL);
	} else if (c->resp->has & RESP_RESULT) {
		ui_draw_capped(u, r, c->resp->result, UL_OUT);
	} else if (json_array_size(c->resp->display) > 0) {
		ui_draw_text(u, r, r->y + 1, "(no result: see its display "
		    "lines)", UL_NOTE, NULL);
	} else {
		ui_draw_text(u, r, r->y + 1, "(no result)", UL_NOTE, NULL);
	}
}

/* ---- overlays -------------------------------------------------------- */

/* The overlay's text; a line past UI_LINE_MAX (which ui_draw_text
 * would cut) is broken in pieces of a row or less (on a character's
 * first byte), so the pager shows it whole and scrolls it row by row. */
void
ui_overlay(struct ui *u, const char *title, char *text)
{
	ui_overlay_code(u, title, text, 0, 0);
}

void
ui_overlay_code(struct ui *u, const char *title, char *text, size_t from,
    size_t to)
{
	size_t run, piece = u->cols > 8 ? (size_t)u->cols - 2 : 8;
	const char *p, *nl;
	bool code;

	free(u->ov_title);
	u->ov_title = xstrdup(title);
	buf_free(&u->ov);
	buf_addstr(&u->ov, "");
	u->ov_code[0] = u->ov_code[1] = 0;
	for (p = text; *p != '\0'; p = nl) {
		/* the code's bounds moved by a long line's pieces */
		code = from < to && (size_t)(p - text) < to &&
		    (size_t)(p - text) >= from;
		if (code && u->ov_code[0] == u->ov_code[1])
			u->ov_code[0] = u->ov.len;
		nl = p + strcspn(p, "\n");
		if (*nl == '\n')
			nl++;
		if ((size_t)(nl - p) <= UI_LINE_MAX)
			buf_add(&u->ov, p, (size_t)(nl - p));
		else
			for (run = 0; p < nl; p++, run++) {
				if (run >= piece && (*p & 0xc0) != 0x80 &&
				    *p != '\n') {
					buf_add(&u->ov, "\n", 1);
					run = 0;
				}
				buf_add(&u->ov, p, 1);
			}
		if (code)
			u->ov_code[1] = u->ov.len;
	}
	u->ov_scroll = 0;
	u->picking = false;	/* ui-branch.c's picker says so after */
	if (u->focus != F_OVERLAY)
		u->back = u->focus;
	u->focus = F_OVERLAY;
	u->dirty = true;
}

/* The most ov_scroll may be: the text's last line on the last row of
 * h rows w wide, so no key scrolls past the end into blank pages. */
static size_t
ui_overlay_end(struct ui *u, int h, int w)
{
	const char *p = u->ov.p, *end, *q, *b;
	size_t lines = 1, i, at[UI_LINE_MAX + 1];
	int rows = 0;

	if (p == NULL || u->ov.len == 0)
		return 0;
	end = p + u->ov.len;
	if (end[-1] == '\n')
		end--;
	for (q = p; q < end; q++)
		lines += *q == '\n';
	for (q = end, i = lines; i-- > 0; q = b - 1) {
		for (b = q; b > p && b[-1] != '\n'; b--)
			;
		rows += ui_wrap(b, (size_t)(q - b), w, at, UI_LINE_MAX + 1);
		if (rows > h)
			return i + 1;
		if (b == p)
			break;
	}
	return 0;
}

void
ui_draw_overlay(struct ui *u)
{
	struct ui_rect r = { 0, 0, u->lay.input.y - 1, u->cols };
	const char *p = u->ov.p;
	size_t k, most;
	int y;

	most = ui_overlay_end(u, r.h - 1, r.w - 1);
	if (u->ov_scroll > most)
		u->ov_scroll = most;
	for (k = 0; k < u->ov_scroll && p != NULL; k++) {
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	for (y = r.y; y < r.y + r.h; y++) {
		move(y, r.x);
		attrset(A_NORMAL);
		hline(' ', r.w);
	}
	attrset(A_NORMAL);
	mvhline(r.y + r.h, r.x, ACS_HLINE, r.w);
	ui_title(&r, u->ov_title, true);
	r.y++;
	r.h -= 1;
	ui_draw_lines(u, &r, r.y, p, UL_OUT, NULL, u->ov_code[0] <
	    u->ov_code[1] ? u->ov.p + u->ov_code[0] : NULL, u->ov.p +
	    u->ov_code[1]);
	ui_puts(r.y + r.h, r.x + 2, r.w - 4, most == 0 ? " Esc or q closes " :
	    u->ov_scroll == 0 ? " top: Down/PgDn scroll, Esc or q closes " :
	    u->ov_scroll >= most ? " end: Up/PgUp scroll, Esc or q closes " :
	    " Up/Down/PgUp/PgDn scroll, Esc or q closes ", A_BOLD);
}
