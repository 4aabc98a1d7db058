/*
 * ui-pixels.h - pure work on decoded pixels for the curses UI's images
 * (ui-image.c): fitting a size, scaling, the terminal's colours of a
 * pixel and a sixel image of a picture.  No I/O, no curses: each takes
 * pixels the sandboxed decoder (ui-decode.c) gave and the parent
 * checked, and is unit-tested (tests/unit/pixels-test.c).
 * Pixels are RGB, 3 bytes each, rows packed.  Supervisor only.
 */
#ifndef COIL_UI_PIXELS_H
#define COIL_UI_PIXELS_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The size of an iw x ih picture scaled to fit bw x bh, aspect kept,
 * each side at least 1 (a picture of no pixels stays 0 x 0). */
void pix_fit(unsigned iw, unsigned ih, unsigned bw, unsigned bh,
    unsigned *w, unsigned *h);

/* src (sw x sh) scaled into dst (dw x dh): each dst pixel the average
 * of the src pixels it covers (the nearest one when it covers less
 * than one). */
void pix_scale(const uint8_t *src, unsigned sw, unsigned sh, uint8_t *dst,
    unsigned dw, unsigned dh);

/* The xterm 256-colour index nearest to r, g, b: the 6x6x6 cube
 * (16..231) or the gray ramp (232..255). */
int pix_xterm256(uint8_t r, uint8_t g, uint8_t b);

/* The nearest of the 8 ANSI colours (COLOR_BLACK..COLOR_WHITE). */
int pix_ansi8(uint8_t r, uint8_t g, uint8_t b);

/* A sixel image of w x h pixels appended to b, from DCS to ST: the
 * 6x6x6 cube as palette (216 registers), runs compressed. */
void pix_sixel(const uint8_t *px, unsigned w, unsigned h, struct buf *b);

#endif
