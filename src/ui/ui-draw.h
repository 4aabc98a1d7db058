/*
 * ui-draw.h - ui-draw.c's drawing primitives, for the files that draw a
 * pane of their own (ui-panes.c).  Every text goes through ui_fit (see
 * ui-draw.c): measured in the terminal's columns, what cannot be shown
 * made visible, never past the width it is given.
 */
#ifndef COIL_UI_DRAW_H
#define COIL_UI_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include <ncurses.h>

#include "ui-int.h"

/* The attributes a line of kind k is drawn with. */
attr_t ui_attr(const struct ui *u, enum ui_kind k);
/* How much of s (n bytes) fits w columns: the bytes taken; out gets
 * *nout wide characters, *cols the columns they fill. */
size_t ui_fit(const char *s, size_t n, int w, wchar_t *out, int *nout,
    int *cols);
/* s at row y, column x, in at most w columns: the bytes drawn. */
size_t ui_put(int y, int x, int w, const char *s, size_t n, attr_t a);
/* The same, each byte with its own attributes a[i] (ui-paint.c's). */
size_t ui_put_attrs(int y, int x, int w, const char *s, size_t n,
    const attr_t *a);
size_t ui_puts(int y, int x, int w, const char *s, attr_t a);
/* A pane's title row, reversed, the rest of the row filled. */
void ui_title(const struct ui_rect *r, const char *title, bool focused);
/* Where a line breaks in w columns: the offsets of its rows (at most
 * max of them); returns how many rows it takes. */
int ui_wrap(const char *s, size_t len, int w, size_t *at, int max);
/* Lines of text from row y0 of r, wrapped; returns the rows used, and
 * in *whole (unless NULL) the lines drawn whole. */
int ui_draw_text(struct ui *u, const struct ui_rect *r, int y0,
    const char *s, enum ui_kind k, size_t *whole);
/* The same, the lines from code0 to code1 (NULL: none) Python code in
 * syntax colour, the tokenizer's state carried from code0 (a string may
 * span lines) through the lines before s too. */
int ui_draw_lines(struct ui *u, const struct ui_rect *r, int y0,
    const char *s, enum ui_kind k, size_t *whole, const char *code0,
    const char *code1);
/* The terminal takes UTF-8 (the box and ellipsis characters). */
bool ui_draw_utf8(void);

/* ui-panes.c */
void ui_draw_ns(struct ui *u);
void ui_draw_result(struct ui *u);
void ui_draw_overlay(struct ui *u);

#endif
