/*
 * ui-layout.c - the panes' rectangles (see ui-layout.h).
 */
#include "config.h"

#include <stdio.h>

#include "ui-layout.h"

static struct ui_rect
rect(int y, int x, int h, int w)
{
	struct ui_rect r = { y, x, h, w };

	if (h <= 0 || w <= 0)
		r.h = r.w = 0;
	return r;
}

/* The input area: the cell's lines and a separator row above them, at
 * most a third of the screen, so the output always keeps room. */
static int
layout_input_height(int rows, int input_lines)
{
	int most = rows / 3;

	if (input_lines < 1)
		input_lines = 1;
	return input_lines + 1 > most ? most : input_lines + 1;
}

/* The namespace pane's width: a third of a wide screen, between 26 and
 * 48 columns, so names, types and a summary fit on one row. */
static int
layout_ns_width(int cols)
{
	int w = cols / 3;

	return w < 26 ? 26 : w > 48 ? 48 : w;
}

void
ui_layout_compute(struct ui_layout *l, int cols, int rows, unsigned show,
    int input_lines)
{
	int top, in, nsw = 0, res = 0, right;

	*l = (struct ui_layout){ .too_small = cols < UI_MIN_COLS ||
	    rows < UI_MIN_ROWS };
	if (l->too_small)
		return;
	in = layout_input_height(rows, input_lines);
	top = rows - 1 - in;
	l->status = rect(rows - 1, 0, 1, cols);
	l->input = rect(top, 0, in, cols);
	if ((show & UI_SHOW_NS) && cols >= UI_NS_MIN_COLS) {
		nsw = layout_ns_width(cols);
		/* one column of rule between the panes */
		l->ns = rect(0, 0, top, nsw);
		nsw++;
	}
	right = cols - nsw;
	if (show & UI_SHOW_RESULT) {
		res = top / 3;
		if (res < 3)
			res = 3;
		l->result = rect(top - res, nsw, res, right);
	}
	l->out = rect(0, nsw, top - res, right);
}

void
ui_layout_message(char *buf, int len, int cols, int rows)
{
	snprintf(buf, (size_t)len, "terminal too small (%dx%d)\ncoil needs "
	    "%dx%d", cols, rows, UI_MIN_COLS, UI_MIN_ROWS);
}
