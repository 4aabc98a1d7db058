/*
 * ui-draw.c - the curses UI's screen (see ui-int.h): the drawing
 * primitives (ui-draw.h), the output pane, the input area and the
 * status line, drawn from the model with ncursesw, and the frame that
 * puts them where ui-layout.c says with ui-panes.c's panes and
 * overlays and ui-image.c's figures.
 *
 * Every text goes through ui_fit, which measures it in columns as the
 * terminal will (wcwidth: CJK and emoji take two), turns what cannot be
 * shown (control characters, bytes that are not UTF-8) into one visible
 * character, and never lets a character straddle a pane's edge: a pane
 * never spills into the next whatever a cell prints.  A cell's SGR
 * sequences (colours and attributes) are the one thing of a control
 * sequence kept: ui_fit gives them no width, so a line wraps on what is
 * seen, and ui_put_attrs draws the colours they set (ui-paint.c), which
 * carry across a line's wrapped rows and end with it.  stderr lines are
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

#include "ui-color.h"
#include "ui-draw.h"
#include "ui-image.h"
#include "ui-int.h"
#include "ui-paint.h"

enum { P_ERR = 1, P_HEAD, P_FAIL, P_NOTE, P_CODE };

static bool ui_utf8;

bool
ui_draw_utf8(void)
{
	return ui_utf8;
}

void
ui_draw_setup(struct ui *u)
{
	const char *nc = getenv("NO_COLOR");

	ui_utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	u->color = has_colors() && (nc == NULL || *nc == '\0') &&
	    !u->opts->no_color;
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

attr_t
ui_attr(const struct ui *u, enum ui_kind k)
{
	static const short pair[] = { [UL_HEAD] = P_HEAD, [UL_CODE] = P_CODE,
	    [UL_OUT] = 0, [UL_ERR] = P_ERR, [UL_FAIL] = P_FAIL,
	    [UL_NOTE] = P_NOTE, [UL_RES] = 0, [UL_HINT] = P_NOTE,
	    [UL_DISP] = P_HEAD, [UL_IMAGE] = 0 };
	attr_t a = k == UL_HEAD || k == UL_FAIL || k == UL_HINT ? A_BOLD :
	    A_NORMAL;

	if (k == UL_NOTE)
		a |= A_DIM;
	return u->color ? a | COLOR_PAIR(pair[k]) : a;
}

/*
 * Convert up to n bytes of s that fit in w columns, from column c0 (a
 * tab's stop counts from 0), into out (room for w wide characters);
 * returns the bytes taken, and the column reached and the characters
 * in *cols and *nout.  SGR sequences take no column and are skipped,
 * one after the last character too.  Always takes at least one byte
 * when n > 0 and w > c0 + 1, so a wrap loop ends.
 */
static size_t
ui_fit_at(const char *s, size_t n, int c0, int w, wchar_t *out, int *nout,
    int *cols)
{
	mbstate_t st = { 0 };
	size_t i = 0, k;
	int c = c0, o = 0, cw;
	wchar_t wc;

	while (i < n) {
		if (s[i] == 0x1b && (k = ui_sgr_len(s + i, n - i)) > 0) {
			i += k;
			continue;
		}
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

size_t
ui_fit(const char *s, size_t n, int w, wchar_t *out, int *nout, int *cols)
{
	return ui_fit_at(s, n, 0, w, out, nout, cols);
}

/* Draw s at (y, x) in at most w columns; returns the bytes drawn. */
size_t
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

/* The same, each byte in its attribute a[i] (ui-paint.c's), drawn in
 * runs of one attribute. */
size_t
ui_put_attrs(int y, int x, int w, const char *s, size_t n, const attr_t *a)
{
	wchar_t buf[1024];
	size_t i = 0, j, k;
	int o, c = 0;

	if (w > 1024)
		w = 1024;
	move(y, x);
	while (i < n && c < w) {
		for (j = i + 1; j < n && a[j] == a[i]; j++)
			;
		k = ui_fit_at(s + i, j - i, c, w, buf, &o, &c);
		attrset(a[i]);
		addnwstr(buf, o);
		i += k;
		if (i < j)
			break;	/* the row is full */
	}
	attrset(A_NORMAL);
	return i;
}

/* Code in one line, coloured as Python when colours are on; *state
 * carries a string open from the line before. */
static void
ui_put_code(struct ui *u, int y, int x, int w, const char *s, size_t n,
    size_t off, int *state)
{
	attr_t a[UI_LINE_MAX];

	if (!u->color || n > UI_LINE_MAX) {
		ui_put(y, x, w, s + off, n - off, A_NORMAL);
		return;
	}
	ui_paint_code(s, n, state, a);
	ui_put_attrs(y, x, w, s + off, n - off, a + off);
}

size_t
ui_puts(int y, int x, int w, const char *s, attr_t a)
{
	return ui_put(y, x, w, s, strlen(s), a);
}

/* A pane's title row, reversed, the rest of the row filled. */
void
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
int
ui_wrap(const char *s, size_t len, int w, size_t *at, int max)
{
	wchar_t buf[1024];
	size_t off = 0, k;
	int n = 0, o, c;

	if (w > 1024)
		w = 1024;
	do {
		at[n++] = off;
		k = ui_fit(s + off, len - off, w, buf, &o, &c);
		off += k > 0 ? k : len - off;
	} while (off < len && n < max && w > 1);
	return n;
}

static void
ui_draw_head(struct ui *u, int y, const struct ui_rect *r,
    const struct ui_line *l, attr_t a)
{
	int x;

	attrset(a);
	mvhline(y, r->x, ui_utf8 ? 0 : '-', r->w);
	if (ui_utf8)
		for (x = 0; x < r->w; x++)
			mvaddwstr(y, r->x + x, L"\u2500");
	ui_put(y, r->x + 2, r->w - 4, l->text, l->len, a);
}

/* The attributes of line i's bytes into la: its SGR colours, or its
 * Python's if it is code; false when it is drawn in one attribute. */
static bool
ui_line_paint(struct ui *u, size_t i, const struct ui_line *l, attr_t *la)
{
	const struct ui_line *p;
	size_t j;
	int state = 0;

	if (!u->color || l->kind == UL_HEAD || l->len == 0)
		return false;
	if (l->kind != UL_CODE)
		return ui_paint_sgr(l->text, l->len, ui_attr(u,
		    (enum ui_kind)l->kind), la);
	/* a string left open by a line before: from the cell's first */
	for (j = i; j > 0 && i - j < 200 && ui_line_at(u, j - 1)->kind ==
	    UL_CODE; j--)
		;
	for (; j < i; j++) {
		p = ui_line_at(u, j);
		ui_paint_code(p->text, p->len, &state, la);
	}
	ui_paint_code(l->text, l->len, &state, la);
	return true;
}

static void
ui_draw_line(struct ui *u, const struct ui_rect *r, int y,
    const struct ui_line *l, size_t from, size_t to, bool first,
    const attr_t *la)
{
	static const char *const mark[] = { [UL_HEAD] = "", [UL_CODE] = "> ",
	    [UL_OUT] = "  ", [UL_ERR] = "! ", [UL_FAIL] = "x ",
	    [UL_NOTE] = "- ", [UL_RES] = "  ", [UL_HINT] = "? ",
	    [UL_DISP] = "# ", [UL_IMAGE] = "" };
	attr_t a = ui_attr(u, (enum ui_kind)l->kind);

	if (u->focus == F_RECORD && l == ui_line_at(u, u->rec_sel -
	    u->dropped))
		a |= A_REVERSE;
	if (l->kind == UL_HEAD) {
		ui_draw_head(u, y, r, l, a);
		return;
	}
	ui_puts(y, r->x, 2, first ? mark[l->kind] : l->kind == UL_ERR ? "!" :
	    "  ", a);
	if (la != NULL)
		ui_put_attrs(y, r->x + 2, r->w - 2, l->text + from, to - from,
		    la + from);
	else
		ui_put(y, r->x + 2, r->w - 2, l->text + from, to - from, a);
}

/* The session's cells, in place of the output (F3). */
static void
ui_draw_cells(struct ui *u)
{
	const struct ui_rect *r = &u->lay.out;
	size_t i, top;
	int y, ow = 6;
	char row[512];

	ui_title(r, " cells: Enter shows one, e edits, r rolls back, Esc "
	    "returns", u->focus == F_CELLS);
	/* the origins in a column as wide as the widest ("person
	 * alice@pts/3"), within reason */
	for (i = 0; i < u->ncells; i++)
		if ((int)strlen(u->cells[i].origin) > ow)
			ow = (int)strlen(u->cells[i].origin);
	ow = ow > 24 ? 24 : ow;
	top = u->cell_sel + 2 > (size_t)r->h ? u->cell_sel + 2 - (size_t)r->h :
	    0;
	for (i = top, y = r->y + 1; i < u->ncells && y < r->y + r->h; i++,
	    y++) {
		const struct ui_cell *c = &u->cells[i];
		attr_t a = i == u->cell_sel ? A_REVERSE : A_NORMAL;
		int n;

		n = snprintf(row, sizeof row, "[%d] %-*.*s %-11s %7.0f ms %s ",
		    c->cell, ow, ow, c->origin, c->resp != NULL ?
		    status_names[c->resp->status] : "running",
		    c->resp != NULL ? c->resp->duration_ms : 0.0, c->mark ==
		    MK_LOST ? "LOST" : c->mark == MK_ROLLED ? "ROLLED BACK" :
		    "");
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

static int
ui_rows(struct ui *u, size_t i, int w)
{
	size_t at[UI_LINE_MAX + 1];
	struct ui_line *l = ui_line_at(u, i);

	return l->kind == UL_HEAD ? 1 : ui_wrap(l->text, l->len, w, at,
	    UI_LINE_MAX + 1);
}

/* Scroll so the record's picked line is in the h rows of width w. */
static void
ui_follow(struct ui *u, int h, int w)
{
	size_t sel, bottom, i;
	int rows = 0;

	if (u->nlines == 0)
		return;
	if (u->rec_sel < u->dropped || u->rec_sel - u->dropped >= u->nlines)
		u->rec_sel = ui_line_no(u, u->nlines - 1);
	sel = u->rec_sel - u->dropped;
	if (u->scroll >= u->nlines)
		u->scroll = u->nlines - 1;
	bottom = u->nlines - 1 - u->scroll;
	if (sel > bottom) {
		u->scroll = u->nlines - 1 - sel;
		return;
	}
	for (i = bottom; ; i--) {
		rows += ui_rows(u, i, w);
		if (rows > h || i == sel || i == 0)
			break;
	}
	if (i == sel && rows <= h)
		return;
	/* above the view: it goes to the top row */
	for (rows = 0, i = sel; i < u->nlines; i++) {
		rows += ui_rows(u, i, w);
		if (rows > h)
			break;
	}
	u->scroll = u->nlines - (i > sel ? i : sel + 1);
}

static void
ui_draw_output(struct ui *u)
{
	static attr_t la[UI_LINE_MAX];
	const struct ui_rect *r = &u->lay.out;
	size_t at[UI_LINE_MAX + 1], i;
	int y = r->y + r->h - 1, n, k;
	char title[64];
	bool painted;

	if (r->h == 0)
		return;
	if (u->focus == F_CELLS || (u->focus == F_OVERLAY &&
	    u->back == F_CELLS)) {
		ui_draw_cells(u);
		return;
	}
	if (u->focus == F_RECORD)
		ui_follow(u, r->h - 1, r->w - 2);
	snprintf(title, sizeof title, " output%s", u->focus == F_RECORD ?
	    " (F5: record) / n N [ ] o, Esc back" : u->scroll > 0 ?
	    "  (scrolled: PgDn returns, F5 searches)" : "");
	ui_title(r, title, u->focus == F_RECORD);
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
		painted = ui_line_paint(u, i, l, la);
		n = l->kind == UL_HEAD ? 1 : ui_wrap(l->text, l->len, r->w - 2,
		    at, UI_LINE_MAX + 1);
		at[n] = l->len;
		for (k = n; k-- > 0 && y > r->y; y--)
			ui_draw_line(u, r, y, l, at[k], at[k + 1], k == 0,
			    painted ? la : NULL);
	}
}

/* ---- text in a pane -------------------------------------------------- */
/* Lines of text from row y0 of r, wrapped; returns the rows used, and
 * in *whole (unless NULL) the lines drawn whole. */
int
ui_draw_lines(struct ui *u, const struct ui_rect *r, int y0, const char *s,
    enum ui_kind k, size_t *whole, const char *code0, const char *code1)
{
	static attr_t la[UI_LINE_MAX];
	struct ui_line l = { .kind = (unsigned char)k };
	size_t at[UI_LINE_MAX + 1], done = 0, len;
	const char *nl, *q;
	int y = y0, n, i, st = 0;
	bool painted;

	for (q = code0; u->color && q != NULL && q < s && q < code1; q = nl) {
		nl = q + strcspn(q, "\n");
		if ((size_t)(nl - q) <= UI_LINE_MAX)
			ui_paint_code(q, (size_t)(nl - q), &st, la);
		nl += *nl == '\n';
	}
	while (s != NULL && *s != '\0' && y < r->y + r->h) {
		nl = strchr(s, '\n');
		l.text = (char *)s;
		len = nl != NULL ? (size_t)(nl - s) : strlen(s);
		l.len = (uint16_t)(len < UI_LINE_MAX ? len : UI_LINE_MAX);
		n = ui_wrap(l.text, l.len, r->w - 1, at, UI_LINE_MAX + 1);
		at[n] = l.len;
		painted = u->color && k == UL_OUT && l.len > 0 &&
		    ui_paint_sgr(l.text, l.len, ui_attr(u, k), la);
		if (u->color && code0 != NULL && s >= code0 && s < code1) {
			ui_paint_code(l.text, l.len, &st, la);
			painted = true;
		}
		for (i = 0; i < n && y < r->y + r->h; i++, y++)
			if (painted)
				ui_put_attrs(y, r->x + 1, r->w - 1, l.text +
				    at[i], at[i + 1] - at[i], la + at[i]);
			else
				ui_put(y, r->x + 1, r->w - 1, l.text + at[i],
				    at[i + 1] - at[i], ui_attr(u, k));
		done += i == n;
		s = nl != NULL ? nl + 1 : NULL;
	}
	if (whole != NULL)
		*whole = done;
	return y - y0;
}

int
ui_draw_text(struct ui *u, const struct ui_rect *r, int y0, const char *s,
    enum ui_kind k, size_t *whole)
{
	return ui_draw_lines(u, r, y0, s, k, whole, NULL, NULL);
}

/* ---- the input area and status line -------------------------------- */

/* Lines typed ahead while our cell runs, dim, at most UI_QUEUED_ROWS
 * rows: the last of them says how many more wait. */
static void
ui_draw_queued(struct ui *u, const struct ui_rect *r, int *y, int *row,
    int skip)
{
	const char *p = u->typed.p, *end = p + u->typed.len, *nl;
	size_t n = ui_typed_ahead(u), i;
	char more[64];

	for (i = 0; u->typed.len > 0 && p < end && i < UI_QUEUED_ROWS; i++,
	    (*row)++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (*row >= skip && *y < r->y + r->h) {
			if (i + 1 == UI_QUEUED_ROWS && n > UI_QUEUED_ROWS) {
				snprintf(more, sizeof more, "queued: and %zu "
				    "more lines", n - i);
				ui_puts(*y, r->x, r->w, more, A_DIM);
			} else {
				ui_puts(*y, r->x, 8, "queued: ", A_DIM);
				ui_put(*y, r->x + 8, r->w - 8, p, (size_t)(nl -
				    p), A_DIM);
			}
			(*y)++;
		}
		p = nl + 1;
	}
}

/* The rows of the cell being typed: the lines so far, the lines typed
 * ahead, then readline's buffer (a paste may hold newlines) after its
 * prompt (">>> ", a search's, input()'s).  The cursor's row and
 * column. */
static void
ui_draw_cell(struct ui *u, const struct ui_rect *r, int *cy, int *cx)
{
	int nrows = ui_input_lines(u), skip = nrows - (r->h - 1), row = 0;
	const char *p = u->cell.len > 0 ? u->cell.p : NULL, *nl;
	const char *line = rl_line_buffer != NULL ? rl_line_buffer : "";
	int y = r->y + 1, point = rl_point, o, c, x0, pw, st = 0;
	unsigned pa;
	const char *pr = ui_input_prompt(u, &pa);
	wchar_t buf[1024];

	/* a prompt is as wide as it is, to half a row */
	ui_fit(pr, strlen(pr), r->w / 2, buf, &o, &pw);
	*cy = y;
	*cx = pw;
	for (; p != NULL; p = nl + 1, row++) {
		nl = strchr(p, '\n');
		c = nl != NULL ? (int)(nl - p) : (int)strlen(p);
		if (row >= skip && y < r->y + r->h) {
			ui_puts(y, r->x, 4, row == 0 ? ">>> " : "... ", A_BOLD);
			ui_put_code(u, y++, r->x + 4, r->w - 4, p, (size_t)c,
			    0, &st);
		} else {
			ui_color_indent(p, (size_t)c, &st);
		}
		if (nl == NULL)
			break;
	}
	ui_draw_queued(u, r, &y, &row, skip);
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
			ui_puts(y, x0, pw, p == line ? pr : "... ", pa);
			ui_put_code(u, y++, x0 + pw, r->w - pw, p, len, off,
			    &st);
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
	/* the branch first: the line's end is cut on a narrow terminal */
	if (ui_branch_status(u)[0] != '\0' && u->ended == NULL) {
		char t[sizeof s];
		int k = snprintf(t, sizeof t, " on %s |",
		    ui_branch_status(u));

		if (k > 0 && (size_t)k < sizeof t) {
			snprintf(t + k, sizeof t - (size_t)k, "%.*s",
			    (int)(sizeof t - (size_t)k - 1), s);
			memcpy(s, t, sizeof s);
		}
	}
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
		ui_draw_text(u, &all, u->rows / 2 - 1, msg, UL_HEAD, NULL);
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
