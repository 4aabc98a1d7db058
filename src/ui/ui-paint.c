/*
 * ui-paint.c - the curses UI's colours as curses attributes (see
 * ui-int.h): a cell's SGR state and Python's classes (ui-color.c, pure)
 * turned into attr_t, a byte at a time, for ui-draw.c to draw in runs.
 *
 * Colour pairs are few (COLOR_PAIRS, as little as 64): one is made the
 * first time a pair of colours is wanted and kept; when none is left
 * the text keeps its attributes (bold, underline...) in the pane's own
 * colour.  Palette colours the terminal lacks are taken to the nearest
 * it has.  Without colour (NO_COLOR, --no-color, a monochrome terminal)
 * nothing here is called: ui_fit drops SGR sequences, so text shows
 * plain, with no residue of them.  Supervisor only; single-threaded.
 */
#include "config.h"

#include <string.h>

#include <ncurses.h>

#include "ui-color.h"
#include "ui-int.h"
#include "ui-paint.h"

#define UI_PAIRS_MAX 240

static struct { short fg, bg; } ui_pairs[UI_PAIRS_MAX];
static int ui_npairs;

/* The pair of fg on bg, made on first use; 0 when none is left. */
static short
ui_pair(short fg, short bg)
{
	int i;

	for (i = 0; i < ui_npairs; i++)
		if (ui_pairs[i].fg == fg && ui_pairs[i].bg == bg)
			return (short)(UI_PAIR_FIRST + i);
	if (ui_npairs == UI_PAIRS_MAX || UI_PAIR_FIRST + ui_npairs >=
	    COLOR_PAIRS || init_pair((short)(UI_PAIR_FIRST + ui_npairs), fg,
	    bg) == ERR)
		return 0;
	ui_pairs[ui_npairs].fg = fg;
	ui_pairs[ui_npairs].bg = bg;
	return (short)(UI_PAIR_FIRST + ui_npairs++);
}

/* An SGR state over the pane's attribute base: its colours replace the
 * base's, its attributes add to them. */
static attr_t
ui_paint_attr(const struct ui_sgr *s, attr_t base)
{
	static const struct { unsigned sgr; attr_t a; } map[] = {
		{ UI_SGR_BOLD, A_BOLD }, { UI_SGR_DIM, A_DIM },
		{ UI_SGR_ITALIC, A_ITALIC }, { UI_SGR_UNDERLINE, A_UNDERLINE },
		{ UI_SGR_REVERSE, A_REVERSE },
	};
	short fg = (short)ui_color_nearest(s->fg, COLORS);
	short bg = (short)ui_color_nearest(s->bg, COLORS), pair;
	attr_t a = base;
	size_t i;

	for (i = 0; i < sizeof map / sizeof *map; i++)
		if (s->attrs & map[i].sgr)
			a |= map[i].a;
	if (fg != -1 || bg != -1) {
		pair = ui_pair(fg, bg);
		if (pair != 0)
			a = (a & ~A_COLOR) | COLOR_PAIR(pair);
	}
	return a;
}

bool
ui_paint_sgr(const char *s, size_t n, attr_t base, attr_t *out)
{
	struct ui_sgr st;
	size_t i = 0, k, j;
	attr_t a = base;

	if (memchr(s, 0x1b, n) == NULL)
		return false;
	ui_sgr_reset(&st);
	while (i < n) {
		k = s[i] == 0x1b ? ui_sgr_len(s + i, n - i) : 0;
		if (k == 0) {
			out[i++] = a;
			continue;
		}
		/* the sequence's bytes take the state it makes: they are
		 * no width, and a run of one attribute never splits one */
		ui_sgr_apply(&st, s + i, k);
		a = ui_paint_attr(&st, base);
		for (j = 0; j < k; j++)
			out[i++] = a;
	}
	return true;
}

void
ui_paint_code(const char *s, size_t n, int *state, attr_t *out)
{
	static const struct { short fg; attr_t a; } tok[] = {
		[UT_PLAIN] = { -1, A_NORMAL },
		[UT_KEYWORD] = { COLOR_MAGENTA, A_BOLD },
		[UT_BUILTIN] = { COLOR_CYAN, A_NORMAL },
		[UT_STRING] = { COLOR_YELLOW, A_NORMAL },
		[UT_COMMENT] = { COLOR_BLUE, A_DIM },
		[UT_NUMBER] = { COLOR_GREEN, A_NORMAL },
		[UT_DECORATOR] = { COLOR_CYAN, A_BOLD },
	};
	unsigned char cls[UI_LINE_MAX];
	attr_t a[sizeof tok / sizeof *tok];
	size_t i;
	short pair;

	if (n > UI_LINE_MAX)
		n = UI_LINE_MAX;
	for (i = 0; i < sizeof tok / sizeof *tok; i++) {
		pair = tok[i].fg != -1 ? ui_pair(tok[i].fg, -1) : 0;
		a[i] = tok[i].a | COLOR_PAIR(pair);
	}
	ui_color_python(s, n, cls, state);
	for (i = 0; i < n; i++)
		out[i] = a[cls[i]];
}
