/*
 * ui-paint.h - colours as curses attributes (ui-paint.c), for
 * ui-draw.c alone: it is the one file of the UI that draws.
 */
#ifndef COIL_UI_PAINT_H
#define COIL_UI_PAINT_H

#include <stdbool.h>
#include <stddef.h>

#include <ncurses.h>

/* Pairs below this are ui-draw.c's own (its P_ names). */
#define UI_PAIR_FIRST 8

/* out[0..n): base changed as the SGR sequences in s[0..n) say, the
 * state reset at s; false (out untouched) when s holds no ESC. */
bool ui_paint_sgr(const char *s, size_t n, attr_t base, attr_t *out);
/* out[0..n), n <= UI_LINE_MAX: Python's classes in s as colours;
 * *state as ui_color_python's. */
void ui_paint_code(const char *s, size_t n, int *state, attr_t *out);

#endif
