/*
 * ui-layout.h - where the curses UI's panes go: a pure function of the
 * terminal's size, the panes the person has toggled on and the height
 * the input wants.  No curses, no I/O, so it is tested alone
 * (tests/unit/layout-test.c).
 *
 * The screen, top to bottom: the namespace pane on the left and, on
 * the right, the output pane over the result pane; then the input area
 * (it grows with a multi-line cell, up to a third of the screen); the
 * status line last.  Each pane's rectangle includes its one-row title.
 * Below UI_MIN_COLS x UI_MIN_ROWS nothing is drawn but a message that
 * says the terminal is too small; a narrow terminal (under
 * UI_NS_MIN_COLS) drops the namespace pane rather than squeeze it.
 */
#ifndef COIL_UI_LAYOUT_H
#define COIL_UI_LAYOUT_H

#include <stdbool.h>

#define UI_MIN_COLS	60
#define UI_MIN_ROWS	16
#define UI_NS_MIN_COLS	80	/* the namespace pane beside the output */

/* Panes the person can toggle (:ns, :result). */
#define UI_SHOW_NS	0x01
#define UI_SHOW_RESULT	0x02

struct ui_rect {
	int y, x, h, w;		/* h == 0: not shown */
};

struct ui_layout {
	bool too_small;		/* draw layout_message instead */
	struct ui_rect ns, out, result, input, status;
};

/* Fill l for a cols x rows terminal; input_lines is how many lines the
 * cell being typed has (at least 1). */
void ui_layout_compute(struct ui_layout *l, int cols, int rows,
    unsigned show, int input_lines);

/* The too-small message for a cols x rows terminal, in buf: two lines
 * (a newline between them), so it fits 30 columns. */
void ui_layout_message(char *buf, int len, int cols, int rows);

#endif
