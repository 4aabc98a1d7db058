/*
 * ui-draw.c - the curses UI's screen (see ui-int.h): the panes where
 * ui-layout.c puts them, the overlays (help, inspect, a cell in full)
 * and the status line, drawn from the model with ncursesw.
 *
 * Every text goes through ui_fit, which measures it in columns as the
 * terminal will (wcwidth: CJK and emoji take two), turns what cannot be
 * shown (control characters, bytes that are not UTF-8) into one visible
 * character, and never lets a character straddle a pane's edge: a pane
 * never spills into the next whatever a cell prints.  stderr lines are
 * marked "!" and errors "x" besides their colour, so NO_COLOR and
 * monochrome terminals tell them apart too.
 */
#include "config.h"

#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <ncurses.h>
#include <readline/readline.h>

#include "ui-image.h"
#include "ui-int.h"

enum { P_ERR = 1, P_HEAD, P_FAIL, P_NOTE, P_CODE };

static bool ui_utf8;

void
ui_draw_setup(struct ui *u)
{
	const char *nc = getenv("NO_COLOR");

	ui_utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	u->color = has_colors() && (nc == NULL || *nc == '\0');
	if (!u->color)
		return;
	start_color();
	use_default_colors();
	init_pair(P_ERR, COLOR_RED, -1);
	init_pair(P_HEAD, COLOR_CYAN, -1);
	init_pair(P_FAIL, COLOR_RED, -1);
	init_pair(P_NOTE, COLOR_YELLOW, -1);
	init_pair(P_CODE, COLOR_GREEN, -1);
}

static attr_t
ui_attr(const struct ui *u, enum ui_kind k)
{
	static const short pair[] = { [UL_HEAD] = P_HEAD, [UL_CODE] = P_CODE,
	    [UL_OUT] = 0, [UL_ERR] = P_ERR, [UL_FAIL] = P_FAIL,
	    [UL_NOTE] = P_NOTE, [UL_IMAGE] = 0 };
	attr_t a = k == UL_HEAD || k == UL_FAIL ? A_BOLD : A_NORMAL;

	if (k == UL_NOTE)
		a |= A_DIM;
	return u->color ? a | COLOR_PAIR(pair[k]) : a;
}

/*
 * Convert up to n bytes of s that fit in w columns into out (room for w
 * wide characters); returns the bytes taken, and the columns and
 * characters in *cols and *nout.  Always takes at least one byte when
 * n > 0 and w > 1, so a wrap loop ends.
 */
static size_t
ui_fit(const char *s, size_t n, int w, wchar_t *out, int *nout, int *cols)
{
	mbstate_t st = { 0 };
	size_t i = 0, k;
	int c = 0, o = 0, cw;
	wchar_t wc;

	while (i < n) {
		k = mbrtowc(&wc, s + i, n - i, &st);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&st, 0, sizeof st);
			wc = ui_utf8 ? 0xfffd : L'?';
			k = 1;
		}
		if (wc == L'\t') {
			cw = 8 - c % 8;
			if (c + cw > w)
				break;
			while (cw-- > 0)
				out[o++] = L' ', c++;
			i += k;
			continue;
		}
		cw = wcwidth(wc);
		if (cw < 0) {
			wc = ui_utf8 ? 0xfffd : L'?';
			cw = 1;
		}
		if (c + cw > w)
			break;
		out[o++] = wc;
		c += cw;
		i += k;
	}
	*nout = o;
	*cols = c;
	return i;
}

/* Draw s at (y, x) in at most w columns; returns the bytes drawn. */
static size_t
ui_put(int y, int x, int w, const char *s, size_t n, attr_t a)
{
	wchar_t buf[1024];
	int o, c;
	size_t k;

	if (w <= 0)
		return 0;
	if (w > 1024)
		w = 1024;
	k = ui_fit(s, n, w, buf, &o, &c);
	attrset(a);
	mvaddnwstr(y, x, buf, o);
	attrset(A_NORMAL);
	return k;
}

static size_t
ui_puts(int y, int x, int w, const char *s, attr_t a)
{
	return ui_put(y, x, w, s, strlen(s), a);
}

/* A pane's title row, reversed, the rest of the row filled. */
static void
ui_title(const struct ui_rect *r, const char *title, bool focused)
{
	attr_t a = A_REVERSE | (focused ? A_BOLD : A_NORMAL);

	attrset(a);
	mvhline(r->y, r->x, ' ', r->w);
	ui_puts(r->y, r->x, r->w, title, a);
}

/* ---- the output pane ------------------------------------------------ */

/* Where a line breaks in w columns: the offsets of its rows (at most
 * max of them); returns how many rows it takes. */
static int
ui_wrap(const struct ui_line *l, int w, size_t *at, int max)
{
	wchar_t buf[1024];
	size_t off = 0, k;
	int n = 0, o, c;

	if (w > 1024)
		w = 1024;
	do {
		at[n++] = off;
		k = ui_fit(l->text + off, l->len - off, w, buf, &o, &c);
		off += k > 0 ? k : l->len - off;
	} while (off < l->len && n < max && w > 1);
	return n;
}

static void
ui_draw_head(struct ui *u, int y, const struct ui_rect *r,
    const struct ui_line *l)
{
	attr_t a = ui_attr(u, UL_HEAD);
	int x;

	attrset(a);
	mvhline(y, r->x, ui_utf8 ? 0 : '-', r->w);
	if (ui_utf8)
		for (x = 0; x < r->w; x++)
			mvaddwstr(y, r->x + x, L"\u2500");
	ui_put(y, r->x + 2, r->w - 4, l->text, l->len, a);
}

static void
ui_draw_line(struct ui *u, const struct ui_rect *r, int y,
    const struct ui_line *l, size_t from, size_t to, bool first)
{
	static const char *const mark[] = { [UL_HEAD] = "", [UL_CODE] = "> ",
	    [UL_OUT] = "  ", [UL_ERR] = "! ", [UL_FAIL] = "x ",
	    [UL_NOTE] = "- ", [UL_IMAGE] = "" };
	attr_t a = ui_attr(u, (enum ui_kind)l->kind);

	if (l->kind == UL_HEAD) {
		ui_draw_head(u, y, r, l);
		return;
	}
	ui_puts(y, r->x, 2, first ? mark[l->kind] : l->kind == UL_ERR ? "!" :
	    "  ", a);
	ui_put(y, r->x + 2, r->w - 2, l->text + from, to - from, a);
}

/* The session's cells, in place of the output (F3). */
static void
ui_draw_cells(struct ui *u)
{
	const struct ui_rect *r = &u->lay.out;
	size_t i, top;
	int y;
	char row[512];

	ui_title(r, " cells: Enter shows one, e edits, r rolls back, Esc "
	    "returns", u->focus == F_CELLS);
	top = u->cell_sel + 2 > (size_t)r->h ? u->cell_sel + 2 - (size_t)r->h :
	    0;
	for (i = top, y = r->y + 1; i < u->ncells && y < r->y + r->h; i++,
	    y++) {
		const struct ui_cell *c = &u->cells[i];
		attr_t a = i == u->cell_sel ? A_REVERSE : A_NORMAL;
		int n;

		n = snprintf(row, sizeof row, "[%d] %-6s %-11s %7.0f ms  ",
		    c->cell, c->origin, c->resp != NULL ?
		    status_names[c->resp->status] : "running",
		    c->resp != NULL ? c->resp->duration_ms : 0.0);
		snprintf(row + n, sizeof row - (size_t)n, "%.*s", (int)strcspn(
		    c->code, "\n"), c->code);
		if (a != A_NORMAL) {
			attrset(a);
			mvhline(y, r->x, ' ', r->w);
		}
		ui_puts(y, r->x + 1, r->w - 1, row, a);
	}
	if (u->ncells == 0)
		ui_puts(r->y + 1, r->x + 1, r->w - 1, "(no cells yet)", A_DIM);
}

static void
ui_draw_output(struct ui *u)
{
	const struct ui_rect *r = &u->lay.out;
	size_t at[UI_LINE_MAX + 1], i;
	int y = r->y + r->h - 1, n, k;
	char title[64];

	if (r->h == 0)
		return;
	if (u->focus == F_CELLS || (u->focus == F_OVERLAY &&
	    u->back == F_CELLS)) {
		ui_draw_cells(u);
		return;
	}
	snprintf(title, sizeof title, " output%s", u->scroll > 0 ?
	    "  (scrolled: PgDn returns)" : "");
	ui_title(r, title, false);
	for (i = u->nlines - (u->scroll < u->nlines ? u->scroll : u->nlines);
	    i-- > 0 && y > r->y;) {
		struct ui_line *l = ui_line_at(u, i);

		if (l->kind == UL_IMAGE) {
			/* room above it for its display line and more */
			n = ui_image_rows(u, l, r->w - 2, (r->h - 1) * 3 / 4);
			ui_image_draw(u, l, r->x + 2, y - n + 1, r->w - 2, n,
			    r->y + 1);
			y -= n;
			continue;
		}
		n = l->kind == UL_HEAD ? 1 : ui_wrap(l, r->w - 2, at,
		    UI_LINE_MAX + 1);
		at[n] = l->len;
		for (k = n; k-- > 0 && y > r->y; y--)
			ui_draw_line(u, r, y, l, at[k], at[k + 1], k == 0);
	}
}

/* ---- the namespace and result panes --------------------------------- */

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

static void
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

/* Lines of text from the top of r's body, wrapped; returns rows used. */
static int
ui_draw_text(struct ui *u, const struct ui_rect *r, int y0, const char *s,
    enum ui_kind k)
{
	struct ui_line l = { .kind = (unsigned char)k };
	size_t at[UI_LINE_MAX + 1];
	const char *nl;
	int y = y0, n, i;

	while (s != NULL && *s != '\0' && y < r->y + r->h) {
		nl = strchr(s, '\n');
		l.text = (char *)s;
		l.len = nl != NULL ? (size_t)(nl - s) : strlen(s);
		if (l.len > UI_LINE_MAX)
			l.len = UI_LINE_MAX;
		n = ui_wrap(&l, r->w - 1, at, UI_LINE_MAX + 1);
		at[n] = l.len;
		for (i = 0; i < n && y < r->y + r->h; i++, y++)
			ui_put(y, r->x + 1, r->w - 1, l.text + at[i],
			    at[i + 1] - at[i], ui_attr(u, k));
		s = nl != NULL ? nl + 1 : NULL;
	}
	return y - y0;
}

static void
ui_draw_result(struct ui *u)
{
	const struct ui_rect *r = &u->lay.result;
	const struct ui_cell *c = ui_last_answer(u);
	const struct response_error *e;
	char title[128];
	struct buf b;
	int i;

	if (r->h == 0)
		return;
	if (u->matches != NULL) {
		ui_title(r, " completions (any key closes)", false);
		buf_init(&b);
		for (i = 0; u->matches[i] != NULL; i++)
			buf_printf(&b, "%s%s", i > 0 ? "  " : "",
			    u->matches[i]);
		ui_draw_text(u, r, r->y + 1, b.p, UL_OUT);
		buf_free(&b);
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
			ui_draw_text(u, r, r->y + 1, e->traceback, UL_FAIL);
		else
			ui_draw_text(u, r, r->y + 1, e->message, UL_FAIL);
	} else if (c->resp->has & RESP_RESULT) {
		ui_draw_text(u, r, r->y + 1, c->resp->result, UL_OUT);
	} else {
		ui_draw_text(u, r, r->y + 1, "(no result)", UL_NOTE);
	}
}

/* ---- the input area and status line -------------------------------- */

/* The rows of the cell being typed: the lines so far, then readline's
 * buffer (a paste may hold newlines).  The cursor's row and column. */
static void
ui_draw_cell(struct ui *u, const struct ui_rect *r, int *cy, int *cx)
{
	int nrows = ui_input_lines(u), skip = nrows - (r->h - 1), row = 0;
	const char *p = u->cell.len > 0 ? u->cell.p : NULL, *nl;
	const char *line = rl_line_buffer != NULL ? rl_line_buffer : "";
	int y = r->y + 1, point = rl_point, o, c, x0, pw = 4;
	wchar_t buf[1024];

	/* input()'s prompt is the cell's: as wide as it is, to half a row */
	if (u->reading != NULL)
		ui_fit(ui_prompt(u), strlen(ui_prompt(u)), r->w / 2, buf, &o,
		    &pw);
	*cy = y;
	*cx = pw;
	for (; p != NULL; p = nl + 1, row++) {
		nl = strchr(p, '\n');
		if (row >= skip && y < r->y + r->h) {
			ui_puts(y, r->x, 4, row == 0 ? ">>> " : "... ", A_BOLD);
			ui_put(y++, r->x + 4, r->w - 4, p, nl != NULL ?
			    (size_t)(nl - p) : strlen(p), A_NORMAL);
		}
		if (nl == NULL)
			break;
	}
	for (p = line; ; p = nl + 1, row++) {
		size_t len, off = 0;

		nl = strchr(p, '\n');
		len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		/* keep the cursor in sight on a line wider than the pane */
		if (point >= p - line && point <= (int)(p - line + len)) {
			ui_fit(p, (size_t)point - (size_t)(p - line), 1024, buf,
			    &o, &c);
			while (c > r->w - pw - 2 && off < len) {
				off++;
				while (off < len && (p[off] & 0xc0) == 0x80)
					off++;
				ui_fit(p + off, (size_t)point - (size_t)(p -
				    line) - off, 1024, buf, &o, &c);
			}
			*cy = y;
			*cx = pw + c;
		}
		if (row >= skip && y < r->y + r->h) {
			x0 = r->x;
			ui_puts(y, x0, pw, row == 0 ? ui_prompt(u) : "... ",
			    A_BOLD);
			ui_put(y++, x0 + pw, r->w - pw, p + off, len - off,
			    A_NORMAL);
		}
		if (nl == NULL)
			break;
	}
}

static void
ui_draw_status(struct ui *u)
{
	const struct ui_rect *r = &u->lay.status;
	const struct ui_cell *c = ui_last_answer(u);
	char s[512], ckpt[32] = "no ckpt";
	int n = 0;

	if (u->checkpoints >= 0)
		snprintf(ckpt, sizeof ckpt, "ckpt %d", u->checkpoints);
	if (u->ended != NULL)
		n = snprintf(s, sizeof s, " session ended: %s | Ctrl-D leaves",
		    u->ended);
	else if (u->running != 0) {
		size_t i;
		int64_t start = 0, cell = 0;

		for (i = 0; i < u->ncells; i++)
			if (u->cells[i].seq == u->running) {
				start = u->cells[i].started_ms;
				cell = u->cells[i].cell;
			}
		n = snprintf(s, sizeof s, " cell %lld %s %.1fs | %s",
		    (long long)cell, u->reading != NULL ? "reads a line" :
		    "running", (double)(now_ms() - start) / 1000,
		    u->reading != NULL ? "Ctrl-D: end of input, Ctrl-C "
		    "interrupts" : "Ctrl-C interrupts");
	} else if (c != NULL) {
		n = snprintf(s, sizeof s, " cell %d %s %.2fs cpu %.2fs "
		    "mem %.0fM", c->cell, status_names[c->resp->status],
		    c->resp->duration_ms / 1000, ui_answer_cpu_ms(c->resp) /
		    1000, ui_answer_mib(c->resp));
	} else {
		n = snprintf(s, sizeof s, " ready");
	}
	if (n >= 0 && (size_t)n < sizeof s && u->ended == NULL)
		snprintf(s + n, sizeof s - (size_t)n, " | %s%s | %s | F1 help",
		    u->remote ? "attached, " : "", u->profile[0] ?
		    u->profile : "?", ckpt);
	ui_replay_status(u, s, sizeof s);
	attrset(A_REVERSE);
	mvhline(r->y, r->x, ' ', r->w);
	ui_puts(r->y, r->x, r->w, s, A_REVERSE);
}

void
ui_draw_input(struct ui *u)
{
	const struct ui_rect *r = &u->lay.input;
	int cy, cx, y;

	if (u->lay.too_small)
		return;
	for (y = r->y; y < r->y + r->h; y++) {
		move(y, 0);
		clrtoeol();
	}
	attrset(A_DIM);
	mvhline(r->y, r->x, ACS_HLINE, r->w);
	attrset(A_NORMAL);
	if (u->ask != NULL)
		ui_puts(r->y, 1, r->w - 2, u->ask, A_BOLD | A_REVERSE);
	else if (u->note[0] != '\0')
		ui_puts(r->y, 1, r->w - 2, u->note, A_BOLD);
	ui_draw_cell(u, r, &cy, &cx);
	ui_draw_status(u);
	curs_set(u->focus == F_INPUT && u->ask == NULL ? 1 : 0);
	move(cy, cx < r->w ? cx : r->w - 1);
	refresh();
}

/* ---- overlays -------------------------------------------------------- */

void
ui_overlay(struct ui *u, const char *title, char *text)
{
	free(u->ov_title);
	u->ov_title = xstrdup(title);
	buf_free(&u->ov);
	buf_addstr(&u->ov, text);
	u->ov_scroll = 0;
	if (u->focus != F_OVERLAY)
		u->back = u->focus;
	u->focus = F_OVERLAY;
	u->dirty = true;
}

static void
ui_draw_overlay(struct ui *u)
{
	struct ui_rect r = { 0, 0, u->lay.input.y - 1, u->cols };
	const char *p = u->ov.p;
	size_t k;
	int y;

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
	ui_draw_text(u, &r, r.y, p, UL_OUT);
	ui_puts(r.y + r.h, r.x + 2, r.w - 4, " Up/Down/PgUp/PgDn scroll, Esc "
	    "or q closes ", A_BOLD);
}

void
ui_draw(struct ui *u)
{
	char msg[128];

	erase();
	u->dirty = false;
	u->drawn_ms = now_ms();
	ui_layout_compute(&u->lay, u->cols, u->rows, u->show,
	    ui_input_lines(u));
	if (u->lay.too_small) {
		struct ui_rect all = { 0, 0, u->rows, u->cols };

		ui_layout_message(msg, sizeof msg, u->cols, u->rows);
		curs_set(0);
		ui_draw_text(u, &all, u->rows / 2 - 1, msg, UL_HEAD);
		refresh();
		return;
	}
	ui_draw_ns(u);
	ui_draw_output(u);
	ui_draw_result(u);
	if (u->focus == F_OVERLAY)
		ui_draw_overlay(u);
	ui_image_erase(u);
	ui_draw_input(u);
	ui_image_flush(u);
}
