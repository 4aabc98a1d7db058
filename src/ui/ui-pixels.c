/*
 * ui-pixels.c - pure work on decoded pixels (see ui-pixels.h).
 *
 * The palette is the 6x6x6 cube xterm's 256 colours hold (levels 0, 95,
 * 135, ..., 255): the half-block cells and the sixel images quantize to
 * the same colours, so a figure looks alike whichever way it is shown,
 * and a sixel image needs no palette of its own to be computed.  No
 * dithering: figures are mostly flat colours and lines, which dithering
 * only blurs at a cell's size.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ui-pixels.h"

static const uint8_t pix_level[6] = { 0, 95, 135, 175, 215, 255 };

void
pix_fit(unsigned iw, unsigned ih, unsigned bw, unsigned bh, unsigned *w,
    unsigned *h)
{
	unsigned long long x, y;

	if (iw == 0 || ih == 0 || bw == 0 || bh == 0) {
		*w = *h = 0;
		return;
	}
	/* the width that fills bw, unless the height then passes bh */
	x = bw;
	y = ((unsigned long long)ih * bw + iw / 2) / iw;
	if (y > bh) {
		y = bh;
		x = ((unsigned long long)iw * bh + ih / 2) / ih;
	}
	*w = x > 0 ? (unsigned)x : 1;
	*h = y > 0 ? (unsigned)y : 1;
}

void
pix_scale(const uint8_t *src, unsigned sw, unsigned sh, uint8_t *dst,
    unsigned dw, unsigned dh)
{
	unsigned dx, dy, x, y, x0, x1, y0, y1, c;
	unsigned long long sum[3], n;

	for (dy = 0; dy < dh; dy++) {
		y0 = (unsigned)((unsigned long long)dy * sh / dh);
		y1 = (unsigned)((unsigned long long)(dy + 1) * sh / dh);
		if (y1 <= y0)
			y1 = y0 + 1;
		for (dx = 0; dx < dw; dx++) {
			x0 = (unsigned)((unsigned long long)dx * sw / dw);
			x1 = (unsigned)((unsigned long long)(dx + 1) * sw / dw);
			if (x1 <= x0)
				x1 = x0 + 1;
			sum[0] = sum[1] = sum[2] = 0;
			for (y = y0; y < y1; y++)
				for (x = x0; x < x1; x++)
					for (c = 0; c < 3; c++)
						sum[c] += src[((size_t)y * sw +
						    x) * 3 + c];
			n = (unsigned long long)(x1 - x0) * (y1 - y0);
			for (c = 0; c < 3; c++)
				dst[((size_t)dy * dw + dx) * 3 + c] =
				    (uint8_t)((sum[c] + n / 2) / n);
		}
	}
}

/* The cube's level nearest to v. */
static int
pix_cube_at(uint8_t v)
{
	int i, best = 0, d, bd = 256;

	for (i = 0; i < 6; i++) {
		d = v > pix_level[i] ? v - pix_level[i] : pix_level[i] - v;
		if (d < bd) {
			bd = d;
			best = i;
		}
	}
	return best;
}

static long
pix_dist(int r, int g, int b, int r2, int g2, int b2)
{
	return (long)(r - r2) * (r - r2) + (long)(g - g2) * (g - g2) +
	    (long)(b - b2) * (b - b2);
}

/* The index in the 216-colour cube (0..215). */
static int
pix_cube(uint8_t r, uint8_t g, uint8_t b)
{
	return 36 * pix_cube_at(r) + 6 * pix_cube_at(g) + pix_cube_at(b);
}

int
pix_xterm256(uint8_t r, uint8_t g, uint8_t b)
{
	int c = pix_cube(r, g, b), avg = (r + g + b) / 3, k, gv;
	long dc, dg;

	dc = pix_dist(r, g, b, pix_level[c / 36], pix_level[c / 6 % 6],
	    pix_level[c % 6]);
	k = avg < 8 ? 0 : avg > 238 ? 23 : (avg - 8 + 5) / 10;
	gv = 8 + 10 * k;
	dg = pix_dist(r, g, b, gv, gv, gv);
	return dg < dc ? 232 + k : 16 + c;
}

int
pix_ansi8(uint8_t r, uint8_t g, uint8_t b)
{
	/* curses' COLOR_RED is 1, GREEN 2, BLUE 4 */
	return (r >= 128) | (g >= 128) << 1 | (b >= 128) << 2;
}

/* One colour's row of sixels in a band: runs of one character as "!N". */
static void
pix_sixel_run(struct buf *b, int ch, unsigned n)
{
	if (n > 3)
		buf_printf(b, "!%u%c", n, ch);
	else
		while (n-- > 0)
			buf_add(b, &(char){ (char)ch }, 1);
}

/* The band of 6 rows from y0: each colour in it, one pass each. */
static void
pix_sixel_band(const uint8_t *q, unsigned w, unsigned h, unsigned y0,
    struct buf *b)
{
	bool used[216] = { false };
	unsigned x, y, n;
	int c, ch, last;
	bool first = true;

	for (y = y0; y < y0 + 6 && y < h; y++)
		for (x = 0; x < w; x++)
			used[q[(size_t)y * w + x]] = true;
	for (c = 0; c < 216; c++) {
		if (!used[c])
			continue;
		if (!first)
			buf_addstr(b, "$");
		first = false;
		buf_printf(b, "#%d", c);
		last = -1;
		n = 0;
		for (x = 0; x < w; x++) {
			ch = 0;
			for (y = y0; y < y0 + 6 && y < h; y++)
				if (q[(size_t)y * w + x] == c)
					ch |= 1 << (y - y0);
			ch += 63;
			if (ch != last && n > 0) {
				pix_sixel_run(b, last, n);
				n = 0;
			}
			last = ch;
			n++;
		}
		pix_sixel_run(b, last, n);
	}
	buf_addstr(b, "-");
}

void
pix_sixel(const uint8_t *px, unsigned w, unsigned h, struct buf *b)
{
	uint8_t *q = xmalloc((size_t)w * h + 1);
	size_t i;
	unsigned y;
	int c;

	for (i = 0; i < (size_t)w * h; i++)
		q[i] = (uint8_t)pix_cube(px[3 * i], px[3 * i + 1],
		    px[3 * i + 2]);
	/* P2 = 1: pixels no colour set stay as they were */
	buf_printf(b, "\033P0;1;0q\"1;1;%u;%u", w, h);
	for (c = 0; c < 216; c++)
		buf_printf(b, "#%d;2;%d;%d;%d", c,
		    pix_level[c / 36] * 100 / 255,
		    pix_level[c / 6 % 6] * 100 / 255,
		    pix_level[c % 6] * 100 / 255);
	for (y = 0; y < h; y += 6)
		pix_sixel_band(q, w, h, y, b);
	buf_addstr(b, "\033\\");
	free(q);
}
