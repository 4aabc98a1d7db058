/*
 * layout-test.c - the curses UI's layout (src/ui/ui-layout.c) as the pure
 * function it is: every pane inside the screen, none overlapping, the
 * whole screen covered, at the sizes the issue names and the ones at
 * the edges; the too-small message below the minimum.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ui-layout.h"

/* Each cell of the screen belongs to one pane, or is the rule between
 * the namespace pane and the others. */
static bool
covers(const struct ui_layout *l, int cols, int rows)
{
	const struct ui_rect *r[] = { &l->ns, &l->out, &l->result, &l->input,
	    &l->status };
	char *owner = calloc((size_t)(cols * rows), 1);
	bool ok = true;
	int i, y, x;

	for (i = 0; i < 5; i++)
		for (y = r[i]->y; y < r[i]->y + r[i]->h; y++)
			for (x = r[i]->x; x < r[i]->x + r[i]->w; x++) {
				if (y < 0 || y >= rows || x < 0 || x >= cols ||
				    owner[y * cols + x]) {
					ok = false;
					continue;
				}
				owner[y * cols + x] = (char)(i + 1);
			}
	for (y = 0; y < rows; y++)
		for (x = 0; x < cols; x++)
			if (!owner[y * cols + x] && !(l->ns.h > 0 &&
			    x == l->ns.w && y < l->ns.h))
				ok = false;
	free(owner);
	return ok;
}

static void
sizes(void)
{
	static const int sz[][2] = { { 80, 24 }, { 120, 40 }, { 60, 16 },
	    { 79, 24 }, { 300, 100 }, { 81, 17 } };
	struct ui_layout l;
	unsigned show;
	size_t i;

	for (i = 0; i < sizeof sz / sizeof sz[0]; i++)
		for (show = 0; show < 4; show++) {
			ui_layout_compute(&l, sz[i][0], sz[i][1], show, 1);
			tap_ok(!l.too_small && covers(&l, sz[i][0], sz[i][1]),
			    "%dx%d, panes %u: tiles the screen", sz[i][0],
			    sz[i][1], show);
		}
}

static void
panes(void)
{
	struct ui_layout l;

	ui_layout_compute(&l, 80, 24, UI_SHOW_NS | UI_SHOW_RESULT, 1);
	tap_ok(l.status.y == 23 && l.status.h == 1, "status is the last row");
	tap_ok(l.input.h == 2 && l.input.y == 21, "one input line and its "
	    "rule above the status");
	tap_ok(l.ns.w == 26 && l.out.x == 27, "namespace 26 wide at 80 "
	    "columns, output after the rule");
	tap_ok(l.result.h >= 3 && l.result.y + l.result.h == l.input.y,
	    "result pane above the input");
	tap_ok(l.out.h >= 10, "output keeps most rows (%d)", l.out.h);
	ui_layout_compute(&l, 79, 24, UI_SHOW_NS | UI_SHOW_RESULT, 1);
	tap_ok(l.ns.h == 0 && l.out.x == 0 && l.out.w == 79,
	    "no namespace pane under 80 columns");
	ui_layout_compute(&l, 80, 24, UI_SHOW_NS | UI_SHOW_RESULT, 5);
	tap_ok(l.input.h == 6, "five input lines grow the input area");
	ui_layout_compute(&l, 80, 24, UI_SHOW_NS | UI_SHOW_RESULT, 40);
	tap_ok(l.input.h == 8 && l.out.h > 0, "a long cell takes at most "
	    "a third of the screen");
	ui_layout_compute(&l, 120, 40, UI_SHOW_NS, 1);
	tap_ok(l.result.h == 0 && l.out.h == 40 - 1 - 2, "result pane "
	    "toggled off gives its rows to the output");
	ui_layout_compute(&l, 200, 40, UI_SHOW_NS, 1);
	tap_ok(l.ns.w == 48, "namespace width capped at 48");
}

static void
small(void)
{
	struct ui_layout l;
	char msg[128];

	ui_layout_compute(&l, 40, 12, UI_SHOW_NS | UI_SHOW_RESULT, 1);
	tap_ok(l.too_small && l.out.h == 0, "40x12 is too small");
	ui_layout_compute(&l, 60, 15, 0, 1);
	tap_ok(l.too_small, "60x15 is too small");
	ui_layout_compute(&l, 0, 0, 0, 0);
	tap_ok(l.too_small, "0x0 is too small");
	ui_layout_message(msg, sizeof msg, 40, 12);
	tap_ok(strcmp(msg, "terminal too small (40x12)\ncoil needs 60x16") ==
	    0, "the message names both sizes");
}

int
main(void)
{
	sizes();
	panes();
	small();
	return tap_done();
}
