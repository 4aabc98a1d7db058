/*
 * termsafe.c - a cell's bytes made safe for a terminal (see termsafe.h).
 *
 * A byte at a time through a small state machine: plain text, inside a
 * UTF-8 character, after ESC, inside what may still be an SGR sequence.
 * Only the last two and the character hold bytes back, and every byte
 * decides at once whether the held ones are kept or shown escaped, so
 * the result is the same however the stream was cut into chunks.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "termsafe.h"

enum {
	TS_TEXT,		/* nothing held */
	TS_UTF8,		/* a character's first bytes */
	TS_ESC,			/* ESC */
	TS_CSI,			/* ESC [ and parameter bytes: maybe SGR */
};

#define TS_ESCAPE 0x1b

void
termsafe_init(struct termsafe *t, int flags)
{
	memset(t, 0, sizeof *t);
	t->flags = flags;
}

/* A byte that is no part of valid UTF-8, as less shows it. */
static void
ts_bad_byte(struct buf *out, unsigned char c)
{
	buf_printf(out, "<%02X>", c);
}

/* A C0 control or DEL in caret notation. */
static void
ts_caret(struct buf *out, unsigned char c)
{
	char s[2] = { '^', c == 0x7f ? '?' : (char)(c + '@') };

	buf_add(out, s, 2);
}

/* What is held, shown escaped: a lone ESC or a CSI that is no SGR is
 * "^[" and the printable bytes after it; a character cut short, each
 * byte as not UTF-8. */
static void
ts_release(struct termsafe *t, struct buf *out)
{
	size_t i;

	if (t->state == TS_ESC || t->state == TS_CSI) {
		ts_caret(out, TS_ESCAPE);
		buf_add(out, t->held + 1, t->nheld - 1);
	} else if (t->state == TS_UTF8) {
		for (i = 0; i < t->nheld; i++)
			ts_bad_byte(out, t->held[i]);
	}
	t->nheld = 0;
	t->need = 0;
	t->state = TS_TEXT;
}

/* How many continuation bytes lead c announces; 0 if it leads none. */
static unsigned
ts_lead(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return 1;
	if (c >= 0xe0 && c <= 0xef)
		return 2;
	if (c >= 0xf0 && c <= 0xf4)
		return 3;
	return 0;
}

/* Whether c may follow what is held: the second byte's range excludes
 * overlong forms, surrogates and code points past U+10FFFF. */
static bool
ts_continues(const struct termsafe *t, unsigned char c)
{
	unsigned char lo = 0x80, hi = 0xbf;

	if (t->nheld == 1) {
		switch (t->held[0]) {
		case 0xe0: lo = 0xa0; break;
		case 0xed: hi = 0x9f; break;
		case 0xf0: lo = 0x90; break;
		case 0xf4: hi = 0x8f; break;
		}
	}
	return c >= lo && c <= hi;
}

/* A whole character: C1 controls (U+0080..U+009F, C2 80..C2 9F) are
 * shown escaped, since some terminals obey them; the rest is text. */
static void
ts_char(struct termsafe *t, struct buf *out)
{
	if (t->held[0] == 0xc2 && t->held[1] <= 0x9f)
		buf_printf(out, "<U+%04X>", t->held[1]);
	else
		buf_add(out, t->held, t->nheld);
	t->nheld = 0;
	t->state = TS_TEXT;
}

/*
 * Whether the SGR held (ESC [ params) leaves one in effect: its
 * parameters in order, each 0 (or empty) a full reset and every other
 * one setting something, so "0;31" sets and "31;0" resets.  The numbers
 * that 38, 48 and 58 take (";5;N", ";2;R;G;B") are arguments, not
 * resets.  One that undoes an attribute (22, 39, 49...) counts as
 * setting: the cost of that is one reset more, never one less.
 */
static void
ts_sgr_effect(struct termsafe *t)
{
	const unsigned char *s = t->held + 2, *end = t->held + t->nheld;
	unsigned v, args = 0;
	bool colon, kind = false;

	for (;;) {
		v = 0;
		colon = false;
		for (; s < end && *s != ';'; s++) {
			if (*s == ':')
				colon = true;
			else if (v < 1000)
				v = v * 10 + (unsigned)(*s - '0');
		}
		if (args > 0) {
			args--;
		} else if (kind) {
			/* 38;5;N and 38;2;R;G;B: what follows are numbers */
			kind = false;
			args = v == 5 ? 1 : v == 2 ? 3 : 0;
		} else if (v == 0 && !colon) {
			t->sgr = false;
		} else {
			t->sgr = true;
			kind = !colon && (v == 38 || v == 48 || v == 58);
		}
		if (s >= end)
			break;
		s++;		/* the ';' */
	}
}

static void
ts_sgr(struct termsafe *t, struct buf *out)
{
	bool prompt = t->flags & TERMSAFE_PROMPT;

	ts_sgr_effect(t);
	if (prompt)
		buf_add(out, "\001", 1);
	buf_add(out, t->held, t->nheld);
	buf_add(out, "m", 1);
	if (prompt)
		buf_add(out, "\002", 1);
	t->nheld = 0;
	t->state = TS_TEXT;
}

static void
ts_text(struct termsafe *t, unsigned char c, struct buf *out)
{
	if (c == TS_ESCAPE) {
		t->held[0] = c;
		t->nheld = 1;
		t->state = TS_ESC;
	} else if (c == '\n' || c == '\t' || c == '\b' || c == '\r' ||
	    (c >= 0x20 && c < 0x7f)) {
		buf_add(out, &c, 1);
	} else if (c < 0x80) {
		ts_caret(out, c);
	} else if ((t->need = ts_lead(c)) > 0) {
		t->held[0] = c;
		t->nheld = 1;
		t->state = TS_UTF8;
	} else {
		ts_bad_byte(out, c);
	}
}

/* One byte; the held ones are kept, extended or released first. */
static void
ts_byte(struct termsafe *t, unsigned char c, struct buf *out)
{
	switch (t->state) {
	case TS_UTF8:
		if (!ts_continues(t, c))
			break;
		t->held[t->nheld++] = c;
		if (--t->need == 0)
			ts_char(t, out);
		return;
	case TS_ESC:
		if (c != '[')
			break;
		t->held[t->nheld++] = c;
		t->state = TS_CSI;
		return;
	case TS_CSI:
		if (c == 'm') {
			ts_sgr(t, out);
			return;
		}
		if (((c >= '0' && c <= '9') || c == ';' || c == ':') &&
		    t->nheld < sizeof t->held) {
			t->held[t->nheld++] = c;
			return;
		}
		break;
	default:
		ts_text(t, c, out);
		return;
	}
	/* c ends what was held without completing it: that shows escaped
	 * and c starts afresh */
	ts_release(t, out);
	ts_text(t, c, out);
}

void
termsafe_feed(struct termsafe *t, const char *p, size_t n, struct buf *out)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i, run;

	buf_reserve(out, n);
	out->p[out->len] = '\0';	/* a text as buf_add leaves one */
	for (i = 0; i < n; i += run) {
		/* the common case, a run of plain ASCII text, in one go */
		run = 0;
		if (t->state == TS_TEXT)
			while (i + run < n && s[i + run] >= 0x20 &&
			    s[i + run] < 0x7f)
				run++;
		if (run > 0) {
			buf_add(out, s + i, run);
			continue;
		}
		ts_byte(t, s[i], out);
		run = 1;
	}
}

void
termsafe_flush(struct termsafe *t, struct buf *out)
{
	ts_release(t, out);
	if (!t->sgr)
		return;
	if (t->flags & TERMSAFE_PROMPT)
		buf_addstr(out, "\001\x1b[m\002");
	else
		buf_addstr(out, "\x1b[m");
	t->sgr = false;
}

void
termsafe_text(const char *p, size_t n, int flags, struct buf *out)
{
	struct termsafe t;

	termsafe_init(&t, flags);
	termsafe_feed(&t, p, n, out);
	termsafe_flush(&t, out);
}

bool
termsafe_clean(const char *p, size_t n)
{
	struct buf b;
	bool same;

	buf_init(&b);
	termsafe_text(p, n, 0, &b);
	same = b.len == n && (n == 0 || memcmp(b.p, p, n) == 0);
	buf_free(&b);
	return same;
}
