/*
 * pixels-test.c - the curses UI's pixel work (src/ui/ui-pixels.c), pure:
 * a size fitted keeps the aspect within the box; scaling averages the
 * pixels a target covers; the terminal colours of known RGB values;
 * a sixel image parsed back (its raster size, its colours' runs) gives
 * the pixels it was made of.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ui-pixels.h"

/* A sixel image read back into palette indices (w x h), as a terminal
 * would paint it; false when it does not parse. */
static bool
sixel_read(const char *s, unsigned w, unsigned h, int *out)
{
	unsigned x = 0, y = 0, n, rw, rh, k;
	int col = 0, ch;
	const char *p = strchr(s, 'q');

	if (p == NULL || sscanf(p + 1, "\"1;1;%u;%u", &rw, &rh) != 2 ||
	    rw != w || rh != h)
		return false;
	for (p++; *p != '\0' && !(p[0] == '\033' && p[1] == '\\'); p++) {
		n = 1;
		if (*p == '"') {
			while (p[1] != '#' && p[1] != '\0')
				p++;
			continue;
		}
		if (*p == '#') {
			col = (int)strtol(p + 1, (char **)&p, 10);
			while (*p == ';')
				strtol(p + 1, (char **)&p, 10);
			p--;
			continue;
		}
		if (*p == '$') {
			x = 0;
			continue;
		}
		if (*p == '-') {
			x = 0;
			y += 6;
			continue;
		}
		if (*p == '!')
			n = (unsigned)strtol(p + 1, (char **)&p, 10);
		ch = *p - 63;
		if (ch < 0 || ch > 63)
			return false;
		for (; n > 0; n--, x++)
			for (k = 0; k < 6; k++)
				if (ch & 1 << k && x < w && y + k < h)
					out[(y + k) * w + x] = col;
	}
	return true;
}

int
main(void)
{
	unsigned w, h, i;
	uint8_t src[4 * 2 * 3], dst[2 * 3];
	uint8_t img[10 * 13 * 3];
	int got[10 * 13];
	struct buf b;
	bool same = true;

	pix_fit(800, 200, 98, 60, &w, &h);
	tap_ok(w == 98 && h == 25, "800x200 in 98x60: width-limited (%ux%u)",
	    w, h);
	pix_fit(300, 400, 100, 40, &w, &h);
	tap_ok(w == 30 && h == 40, "300x400 in 100x40: height-limited "
	    "(%ux%u)", w, h);
	pix_fit(1, 10000, 50, 50, &w, &h);
	tap_ok(w == 1 && h == 50, "a sliver keeps one pixel (%ux%u)", w, h);
	pix_fit(0, 10, 50, 50, &w, &h);
	tap_ok(w == 0 && h == 0, "no pixels, no size");

	/* 4x2: left half black, right half white -> 2x1: black, white */
	for (i = 0; i < 8; i++)
		memset(src + 3 * i, i % 4 < 2 ? 0 : 255, 3);
	pix_scale(src, 4, 2, dst, 2, 1);
	tap_ok(dst[0] == 0 && dst[3] == 255, "scaling averages what each "
	    "pixel covers (%u, %u)", dst[0], dst[3]);
	memset(src, 0, sizeof src);
	src[0] = 200;
	pix_scale(src, 1, 1, dst, 2, 1);
	tap_ok(dst[0] == 200 && dst[3] == 200, "scaling up repeats a pixel");

	tap_ok(pix_xterm256(255, 0, 0) == 196, "red is xterm's 196 (%d)",
	    pix_xterm256(255, 0, 0));
	tap_ok(pix_xterm256(255, 255, 255) == 231, "white is 231");
	tap_ok(pix_xterm256(128, 128, 128) == 244, "mid gray from the ramp "
	    "(%d)", pix_xterm256(128, 128, 128));
	tap_ok(pix_ansi8(250, 10, 10) == 1 && pix_ansi8(0, 0, 255) == 4 &&
	    pix_ansi8(255, 255, 255) == 7, "the 8 ANSI colours");

	/* 10x13: red above, blue below row 7 (not a band's edge) */
	for (i = 0; i < 10 * 13; i++) {
		img[3 * i] = i / 10 < 7 ? 255 : 0;
		img[3 * i + 1] = 0;
		img[3 * i + 2] = i / 10 < 7 ? 0 : 255;
	}
	buf_init(&b);
	pix_sixel(img, 10, 13, &b);
	buf_add(&b, "", 1);
	memset(got, -1, sizeof got);
	tap_ok(b.len > 4 && memcmp(b.p, "\033P", 2) == 0 &&
	    strcmp(b.p + b.len - 3, "\033\\") == 0, "a sixel image is one DCS "
	    "to ST");
	tap_ok(sixel_read(b.p, 10, 13, got), "it parses, raster 10x13");
	for (i = 0; i < 10 * 13; i++)
		if (got[i] != (i / 10 < 7 ? 180 : 5))
			same = false;
	tap_ok(same, "every pixel painted its colour (red 180, blue 5)");
	tap_ok(strstr(b.p, "#180;2;100;0;0") != NULL, "register 180 is red");
	tap_ok(strstr(b.p, "!10") != NULL, "runs are compressed");
	buf_free(&b);
	return tap_done();
}
