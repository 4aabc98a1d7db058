/*
 * ui-image.h - figures on the curses UI's screen (ui-image.c, ui-term.c,
 * ui-decode.c).  The model keeps each figure's bytes (bounded: the
 * oldest go first, their line then shows text); a UL_IMAGE line after
 * a figure's display line is drawn, as tall as the pane's width and the
 * image's aspect make it, with the kitty graphics protocol or sixel
 * when the terminal answered for them at start, else with half-block
 * cells in colour, else as a box saying the figure's size.  Supervisor
 * only; single-threaded.
 */
#ifndef COIL_UI_IMAGE_H
#define COIL_UI_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "figure.h"
#include "response.h"
#include "util.h"

struct ui;
struct ui_line;

/* The largest side of pixels the decoder makes. */
#define UI_PIXMAP_MAX 4096
/* The bytes of figures (and their decoded pixels) a UI keeps. */
#define UI_IMAGE_KEEP ((size_t)48 << 20)

/* Decoded pixels, RGB; px is the owner's (free). */
struct ui_pixmap {
	unsigned w, h;		/* px's size */
	unsigned iw, ih;	/* the source image's */
	uint8_t *px;
};

/* ui-decode.c: png (n bytes, a cell's) decoded in a confined child and
 * scaled to fit bw x bh; fills pm (caller frees pm->px). */
int ui_decode(const void *png, size_t n, unsigned bw, unsigned bh,
    struct ui_pixmap *pm, char *err, size_t len);

/* In the decoder's child (and its test): CPU and memory limits, then a
 * seccomp filter that kills the process on any call but write to out,
 * anonymous memory and exit.  False when any step failed (the child
 * then exits without parsing). */
bool ui_decode_confine(int out);

/* How the terminal shows pixels, as it answered the query. */
enum ui_gfx { GFX_CELLS, GFX_KITTY, GFX_SIXEL };

/* ui-term.c: ask the terminal (fds 0 and 1) what it shows, before
 * curses starts; what was typed meanwhile is kept for ui_term_unget. */
void ui_term_query(void);
void ui_term_unget(void);	/* after initscr: the keys pushed back */
enum ui_gfx ui_term_gfx(void);
/* One cell's size in pixels (a guess when the terminal said nothing). */
void ui_term_cell(unsigned *w, unsigned *h);
/* Bytes to the terminal after curses' refresh, the cursor put back at
 * curses' own place afterwards. */
void ui_term_write(int y, int x, const char *p, size_t n);

/* ui-image.c */
void ui_image_free(struct ui *u);
/* The image line of r's display entry i, under the entry's own line
 * (ui-record.c), when it has bytes (or an attached UI's will come). */
void ui_image_entry(struct ui *u, const struct response *r, size_t i);
/* An attached UI's: the bytes of cell seq's figures, which came after
 * its answer (its display's image entries showed as lines to come). */
void ui_image_figures(struct ui *u, uint64_t seq, const struct figure *figs,
    size_t n);
/* An image line's rows in w columns, at most hmax. */
int ui_image_rows(struct ui *u, const struct ui_line *l, int w, int hmax);
/* Draw it with its top row at y (rows of it), rows above top not. */
void ui_image_draw(struct ui *u, const struct ui_line *l, int x, int y,
    int w, int rows, int top);
/* Before a frame's refresh: the rows of sixel pictures gone erased. */
void ui_image_erase(struct ui *u);
/* After a frame's refresh: the pixels kitty or sixel draw themselves. */
void ui_image_flush(struct ui *u);
/* The figure of the cell selected in F3 (cell true), else the newest,
 * written to a private file and opened with $COIL_VIEWER or xdg-open. */
void ui_image_open(struct ui *u, bool cell);
/* The keepers of viewers that ended reaped; true while any is open. */
bool ui_image_reap(struct ui *u);

#endif
