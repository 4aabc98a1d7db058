/*
 * ui-term.c - what the terminal can show of pixels, asked once before
 * curses starts, and the bytes of pictures written to it afterwards.
 *
 * The question is the terminal's, not $TERM's (tmux says xterm and
 * shows no sixel; kitty runs under many names): a kitty graphics query
 * (a=q, answered only by a terminal that has the protocol), the cell's
 * size in pixels (CSI 16 t), then a primary device attributes request,
 * which every terminal answers, last.  Its answer ends the wait; it
 * lists 4 when sixel is there.  What the person typed meanwhile is not
 * an answer: it is kept and given back to curses (ungetch) once it
 * starts.  A terminal that answers nothing costs UI_TERM_WAIT_MS once.
 * Supervisor only; single-threaded.
 */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <ncurses.h>

#include "ui-image.h"

#define UI_TERM_WAIT_MS 1000

static enum ui_gfx term_gfx = GFX_CELLS;
static unsigned term_cw, term_ch;	/* a cell in pixels; 0: unknown */
static char term_typed[256];		/* keys that came with the answers */
static size_t term_ntyped;

enum ui_gfx
ui_term_gfx(void)
{
	return term_gfx;
}

void
ui_term_cell(unsigned *w, unsigned *h)
{
	struct winsize ws;

	*w = term_cw;
	*h = term_ch;
	if ((*w == 0 || *h == 0) && ioctl(1, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col > 0 && ws.ws_row > 0 && ws.ws_xpixel > 0 &&
	    ws.ws_ypixel > 0) {
		*w = ws.ws_xpixel / ws.ws_col;
		*h = ws.ws_ypixel / ws.ws_row;
	}
	if (*w < 2 || *w > 64 || *h < 4 || *h > 128) {
		*w = 10;
		*h = 20;
	}
}

/* One answer at p (n bytes, from ESC): its length when whole, 0 when
 * more may come, -1 when it is no answer of ours. */
static int
ui_term_answer(const char *p, size_t n, bool *da)
{
	size_t i;
	unsigned a, b, c;
	char num[64];

	if (n < 2)
		return 0;
	if (p[1] == '_') {	/* APC: the kitty answer, up to ST */
		for (i = 2; i + 1 < n; i++)
			if (p[i] == '\033' && p[i + 1] == '\\') {
				if (memmem(p, i, ";OK", 3) != NULL)
					term_gfx = GFX_KITTY;
				return (int)i + 2;
			}
		return n > 200 ? -1 : 0;
	}
	if (p[1] != '[')
		return -1;
	for (i = 2; i < n && i < 64; i++) {
		if (p[i] == 'c' && p[2] == '?') {	/* DA1 */
			*da = true;
			for (a = 3; a < i; a = (unsigned)(strchr(p + a, ';') -
			    p) + 1) {
				if (atoi(p + a) == 4 && term_gfx == GFX_CELLS)
					term_gfx = GFX_SIXEL;
				if (memchr(p + a, ';', i - a) == NULL)
					break;
			}
			return (int)i + 1;
		}
		if (p[i] == 't') {	/* 6;h;w t: the cell's size */
			/* read from a copy that ends: the answer is no
			 * string, and sscanf would look past it for a NUL */
			memcpy(num, p + 2, i - 1);
			num[i - 1] = '\0';
			if (sscanf(num, "6;%u;%ut", &b, &c) == 2) {
				term_ch = b;
				term_cw = c;
			}
			return (int)i + 1;
		}
		if ((p[i] < '0' || p[i] > '9') && p[i] != ';' && p[i] != '?')
			return -1;
	}
	return i < 64 ? 0 : -1;
}

void
ui_term_query(void)
{
	static const char q[] = "\033_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\033\\"
	    "\033[16t\033[c";
	struct termios tio, raw;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char in[512];
	size_t n = 0, i;
	int64_t end;
	ssize_t k;
	bool da = false;
	int a;

	if (!isatty(0) || !isatty(1) || tcgetattr(0, &tio) < 0)
		return;
	raw = tio;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSANOW, &raw) < 0 || write_all(1, q,
	    sizeof q - 1) < 0)
		goto out;
	end = now_ms() + UI_TERM_WAIT_MS;
	while (!da && n < sizeof in && now_ms() < end &&
	    poll(&pfd, 1, (int)(end - now_ms())) > 0) {
		k = read(0, in + n, sizeof in - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		/* answers out, the rest kept as typed */
		for (i = 0; i < n;) {
			a = in[i] == '\033' ? ui_term_answer(in + i, n - i,
			    &da) : -1;
			if (a == 0)
				break;
			if (a > 0) {
				memmove(in + i, in + i + a, n - i - (size_t)a);
				n -= (size_t)a;
				continue;
			}
			if (term_ntyped < sizeof term_typed)
				term_typed[term_ntyped++] = in[i];
			memmove(in + i, in + i + 1, n - i - 1);
			n--;
		}
	}
out:
	tcsetattr(0, TCSANOW, &tio);
}

void
ui_term_unget(void)
{
	/* ungetch is a stack: the last key first */
	while (term_ntyped > 0)
		ungetch((unsigned char)term_typed[--term_ntyped]);
}

void
ui_term_write(int y, int x, const char *p, size_t n)
{
	char cup[32];
	int k;

	/* curses' cursor and attributes, saved and put back (DECSC) */
	write_all(1, "\0337", 2);
	if (y >= 0) {
		k = snprintf(cup, sizeof cup, "\033[%d;%dH", y + 1, x + 1);
		write_all(1, cup, (size_t)k);
	}
	write_all(1, p, n);
	write_all(1, "\0338", 2);
}
