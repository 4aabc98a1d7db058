/*
 * ui-color.h - colour for the curses UI, as pure functions (no curses,
 * no I/O, tested alone by tests/unit/color-test.c):
 *
 *   - a cell's SGR sequences (ESC [ params m) read into a state of
 *     attributes and palette colours, which ui-draw.c turns into curses
 *     attributes; nothing else of a sequence is ever passed on;
 *   - a small tokenizer of Python that classes each byte of a line
 *     (keyword, builtin, string, comment, number, decorator), a state
 *     carrying a string left open across lines;
 *   - the indentation IPython gives the line after one typed.
 */
#ifndef COIL_UI_COLOR_H
#define COIL_UI_COLOR_H

#include <stdbool.h>
#include <stddef.h>

#define UI_SGR_MAX 64		/* bytes of one sequence, ESC to 'm' */

enum {
	UI_SGR_BOLD = 0x01, UI_SGR_DIM = 0x02, UI_SGR_ITALIC = 0x04,
	UI_SGR_UNDERLINE = 0x08, UI_SGR_REVERSE = 0x10,
};

/* What SGR sequences leave in effect: fg and bg are -1 (the terminal's
 * own) or an xterm palette index 0..255, truecolour taken to the
 * nearest entry of the palette. */
struct ui_sgr {
	short fg, bg;
	unsigned attrs;
};

void ui_sgr_reset(struct ui_sgr *s);
/* The length of the SGR sequence at p[0..n), 0 when p holds none (only
 * ESC [ digits ; : then m, at most UI_SGR_MAX bytes, counts). */
size_t ui_sgr_len(const char *p, size_t n);
/* Apply the sequence p[0..n) (as ui_sgr_len measured it) to s; what it
 * does not know (blink, conceal, fonts) it leaves alone. */
void ui_sgr_apply(struct ui_sgr *s, const char *p, size_t n);
/* The palette index nearest to r, g, b (0..255 each). */
int ui_color_rgb(int r, int g, int b);
/* Palette index c as one of ncolors colours (8, 16, 88 or 256 and
 * more), the nearest by the xterm palette's RGB values. */
int ui_color_nearest(int c, int ncolors);

/* The classes of Python's bytes. */
enum ui_tok {
	UT_PLAIN, UT_KEYWORD, UT_BUILTIN, UT_STRING, UT_COMMENT, UT_NUMBER,
	UT_DECORATOR,
};

/* Class each byte of the line s[0..n) into cls[0..n).  *state is 0 at
 * a cell's first line and carries a string left open (a triple-quoted
 * one, or one continued by a backslash) to the next line. */
void ui_color_python(const char *s, size_t n, unsigned char *cls,
    int *state);

/* The indentation (in columns) of the line after s[0..n), which
 * *state (as ui_color_python) says begins where: 4 more after a ':'
 * (a comment after it aside), 4 fewer after return, pass, raise, break
 * or continue, the same otherwise.  Advances *state past the line. */
int ui_color_indent(const char *s, size_t n, int *state);

#endif
