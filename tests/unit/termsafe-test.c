/*
 * termsafe-test.c - unit tests of termsafe.c: what a cell's bytes look
 * like on a person's terminal.
 *
 * A TAP program.  The expected strings are written out by hand; the
 * randomised tests check properties against code written here apart
 * from termsafe.c: the output is valid UTF-8 (utf8-ref.h), it holds no
 * control byte but newline, tab, backspace, carriage return and the ESC
 * of an SGR sequence, and it is the same however the input was cut.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "termsafe.h"
#include "utf8-ref.h"
#include "tap.h"

/* Whether out could drive a terminal: a control byte other than the
 * four kept, an ESC not starting ESC [ [0-9;:]* m, a C1 control as
 * UTF-8. */
static bool
safe(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i, j;

	if (!ref_valid(p, n))
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] == 0xc2 && i + 1 < n && s[i + 1] < 0xa0)
			return false;
		if (s[i] == 0x1b) {
			if (i + 1 >= n || s[i + 1] != '[')
				return false;
			for (j = i + 2; j < n && memchr("0123456789;:",
			    s[j], 12) != NULL; j++)
				;
			if (j >= n || s[j] != 'm')
				return false;
			i = j;
			continue;
		}
		if ((s[i] < 0x20 && memchr("\n\t\b\r", s[i], 4) == NULL) ||
		    s[i] == 0x7f)
			return false;
	}
	return true;
}

/* p[0..n) through one stream in chunks of at most chunk bytes (0: all
 * at once), then flushed; caller frees out. */
static void
run(const char *p, size_t n, size_t chunk, int flags, struct buf *out)
{
	struct termsafe t;
	size_t i, k;

	buf_init(out);
	termsafe_init(&t, flags);
	for (i = 0; i < n; i += k) {
		k = chunk == 0 || n - i < chunk ? n - i : chunk;
		termsafe_feed(&t, p + i, k, out);
	}
	termsafe_flush(&t, out);
	buf_addstr(out, "");
}

struct tcase {
	const char *desc, *in, *want;
	size_t inlen;		/* 0: strlen(in) */
};

static const struct tcase cases[] = {
	{ "plain text passes", "hello, world", "hello, world", 0 },
	{ "newline, tab, backspace, CR pass", "a\tb\r\nc\bd\n",
	    "a\tb\r\nc\bd\n", 0 },
	{ "UTF-8 text passes", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d",
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d", 0 },
	{ "SGR colours pass", "\x1b[31mred\x1b[0m \x1b[1;38;5;208mx\x1b[m",
	    "\x1b[31mred\x1b[0m \x1b[1;38;5;208mx\x1b[m", 0 },
	{ "SGR with colons passes, reset at the end", "\x1b[38:2::1:2:3mx",
	    "\x1b[38:2::1:2:3mx\x1b[m", 0 },
	{ "conceal left set is reset at the end", "\x1b[8mhidden",
	    "\x1b[8mhidden\x1b[m", 0 },
	{ "black on black left set is reset at the end", "\x1b[30;40mx",
	    "\x1b[30;40mx\x1b[m", 0 },
	{ "ESC[m and ESC[0m reset: nothing added",
	    "\x1b[1ma\x1b[mb\x1b[4mc\x1b[0md\x1b[7me\x1b[;m",
	    "\x1b[1ma\x1b[mb\x1b[4mc\x1b[0md\x1b[7me\x1b[;m", 0 },
	{ "0;31 resets then sets", "\x1b[0;31mx", "\x1b[0;31mx\x1b[m", 0 },
	{ "31;0 sets then resets", "\x1b[31;0mx", "\x1b[31;0mx", 0 },
	{ "a trailing empty parameter resets", "\x1b[31;mx",
	    "\x1b[31;mx", 0 },
	{ "a set after a reset is still in effect", "\x1b[0m\x1b[2mx",
	    "\x1b[0m\x1b[2mx\x1b[m", 0 },
	{ "colour 0 of 38;5 is no reset", "\x1b[38;5;0mx",
	    "\x1b[38;5;0mx\x1b[m", 0 },
	{ "black of 48;2 is no reset", "\x1b[1;48;2;0;0;0mx",
	    "\x1b[1;48;2;0;0;0mx\x1b[m", 0 },
	{ "after 38;5;N a 0 resets", "\x1b[38;5;9;0mx",
	    "\x1b[38;5;9;0mx", 0 },
	{ "a reset cut short does not reset", "\x1b[8mx\x1b[0",
	    "\x1b[8mx^[[0\x1b[m", 0 },
	{ "a reset that is no SGR does not reset", "\x1b[8mx\x1b[0t",
	    "\x1b[8mx^[[0t\x1b[m", 0 },
	{ "a huge parameter sets", "\x1b[00000000000000000000001m",
	    "\x1b[00000000000000000000001m\x1b[m", 0 },
	{ "OSC 52 (clipboard) is shown escaped",
	    "\x1b]52;c;aGk=\x07", "^[]52;c;aGk=^G", 0 },
	{ "OSC 0 / 2 (title) with ST is shown escaped",
	    "\x1b]0;pwned\x1b\\\x1b]2;x\x1b\\", "^[]0;pwned^[\\^[]2;x^[\\", 0 },
	{ "CSI 21t (title report) is shown escaped", "\x1b[21t",
	    "^[[21t", 0 },
	{ "DA and cursor moves are shown escaped", "\x1b[c\x1b[2J\x1b[H",
	    "^[[c^[[2J^[[H", 0 },
	{ "private CSI ending in m is no SGR", "\x1b[?1m\x1b[>4;2m",
	    "^[[?1m^[[>4;2m", 0 },
	{ "DCS (DECRQSS) is shown escaped", "\x1bP$qm\x1b\\",
	    "^[P$qm^[\\", 0 },
	{ "APC and PM are shown escaped", "\x1b_x\x1b\\\x1b^y\x1b\\",
	    "^[_x^[\\^[^y^[\\", 0 },
	{ "other C0 controls and DEL in caret notation",
	    "\x01\x07\x0b\x0c\x0e\x1f\x7f", "^A^G^K^L^N^_^?", 0 },
	{ "NUL is ^@", "a\0b", "a^@b", 3 },
	{ "C1 controls as UTF-8 are shown escaped",
	    "\xc2\x9b" "31m\xc2\x9d" "0;x\xc2\x9c\xc2\x85",
	    "<U+009B>31m<U+009D>0;x<U+009C><U+0085>", 0 },
	{ "U+00A0 and up pass", "\xc2\xa0\xc2\xbf", "\xc2\xa0\xc2\xbf", 0 },
	{ "raw 8-bit CSI is not UTF-8", "\x9b" "21t", "<9B>21t", 0 },
	{ "bytes that are not UTF-8 are shown escaped",
	    "a\xff" "b\xc0\xaf" "c", "a<FF>b<C0><AF>c", 0 },
	{ "a character cut short is shown escaped", "\xe2\x82x",
	    "<E2><82>x", 0 },
	{ "a surrogate is not UTF-8", "\xed\xa0\x80", "<ED><A0><80>", 0 },
	{ "an overlong form is not UTF-8", "\xe0\x80\xaf",
	    "<E0><80><AF>", 0 },
	{ "past U+10FFFF is not UTF-8", "\xf4\x90\x80\x80",
	    "<F4><90><80><80>", 0 },
	{ "a lone ESC at the end is shown escaped", "x\x1b", "x^[", 0 },
	{ "an SGR cut short at the end is shown escaped", "\x1b[31",
	    "^[[31", 0 },
	{ "an ESC inside an SGR starts afresh", "\x1b[3\x1b[1m",
	    "^[[3\x1b[1m\x1b[m", 0 },
	{ "a character cut short at the end is shown escaped",
	    "ok\xf0\x9f\x90", "ok<F0><9F><90>", 0 },
	{ "an overlong SGR is shown escaped",
	    "\x1b[" "1111111111111111111111111111111111111111111111111111"
	    "1111111111111111m",
	    "^[[" "1111111111111111111111111111111111111111111111111111"
	    "1111111111111111m", 0 },
};

/* Each case whole, in 1-byte chunks and cut at every point in two. */
static void
test_cases(void)
{
	size_t i, cut, n;
	struct buf out, part;
	struct termsafe t;
	bool same;

	for (i = 0; i < nitems(cases); i++) {
		const struct tcase *c = &cases[i];

		n = c->inlen ? c->inlen : strlen(c->in);
		run(c->in, n, 0, 0, &out);
		tap_is_mem(out.p, out.len, c->want, strlen(c->want), c->desc);
		buf_free(&out);
		run(c->in, n, 1, 0, &out);
		same = out.len == strlen(c->want) &&
		    memcmp(out.p, c->want, out.len) == 0;
		for (cut = 1; cut < n && same; cut++) {
			buf_init(&part);
			termsafe_init(&t, 0);
			termsafe_feed(&t, c->in, cut, &part);
			termsafe_feed(&t, c->in + cut, n - cut, &part);
			termsafe_flush(&t, &part);
			same = part.len == out.len &&
			    memcmp(part.p, out.p, out.len) == 0;
			buf_free(&part);
		}
		tap_ok(same, "%s, whatever the chunks", c->desc);
		buf_free(&out);
	}
}

static void
test_prompt(void)
{
	static const char in[] = "\x1b[1mname\x1b[0m\x1b]0;t\x07: ";
	static const char want[] = "\001\x1b[1m\002name\001\x1b[0m\002"
	    "^[]0;t^G: ";
	struct buf out;

	run(in, strlen(in), 0, TERMSAFE_PROMPT, &out);
	tap_is_mem(out.p, out.len, want, strlen(want),
	    "a prompt's SGR is marked for readline, the rest escaped");
	buf_free(&out);
	run("\x1b[8mname: ", 10, 0, TERMSAFE_PROMPT, &out);
	tap_is_mem(out.p, out.len, "\001\x1b[8m\002name: \001\x1b[m\002",
	    17,
	    "a prompt that leaves an SGR set ends with a marked reset");
	buf_free(&out);
	run("\001\002", 2, 0, TERMSAFE_PROMPT, &out);
	tap_is_mem(out.p, out.len, "^A^B", 4,
	    "a prompt's own readline marks are shown escaped");
	buf_free(&out);
}

static void
test_clean(void)
{
	tap_ok(termsafe_clean("os.path", 7) &&
	    termsafe_clean("caf\xc3\xa9", 5) && termsafe_clean("", 0),
	    "text without controls is clean");
	tap_ok(!termsafe_clean("a\x1b]0;x\x07", 7) &&
	    !termsafe_clean("\xc2\x9b", 2) && !termsafe_clean("\xff", 1),
	    "a control, a C1 control or a bad byte is not clean");
	tap_ok(!termsafe_clean("\x1b[8mx", 5) &&
	    termsafe_clean("\x1b[8mx\x1b[m", 8),
	    "an SGR left set is not clean, one reset is");
}

/* The reset comes once, at the flush that ends what set it: a stream
 * goes on after it as if new. */
static void
test_flush_resets(void)
{
	struct termsafe t;
	struct buf out;

	buf_init(&out);
	termsafe_init(&t, 0);
	termsafe_feed(&t, "\x1b[30;40m", 8, &out);
	termsafe_feed(&t, "a", 1, &out);
	termsafe_flush(&t, &out);
	termsafe_feed(&t, "b", 1, &out);
	termsafe_flush(&t, &out);
	termsafe_flush(&t, &out);
	buf_addstr(&out, "");
	tap_is_mem(out.p, out.len, "\x1b[30;40ma\x1b[mb", 13,
	    "a flush resets an SGR once; the stream then starts clean");
	buf_free(&out);
}

static uint32_t rng = 2463534242u;

static uint32_t
rand32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* Random bytes, biased to what makes sequences and characters. */
static void
fill(char *p, size_t n)
{
	static const char pick[] = "\x1b[]m;:0123456789\x07\\P\n\r\t\b"
	    "\xc2\x9b\xe2\x82\xac\xf0\x9f\x90\x8d\xed\xa0\xff\x80";
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = rand32() % 3 ? pick[rand32() % (sizeof pick - 1)] :
		    (char)rand32();
}

static void
test_random(void)
{
	char in[512];
	struct buf whole, cut;
	size_t n, chunk;
	int i, unsafe = 0, differ = 0, changed = 0, reset = 0;

	for (i = 0; i < 20000; i++) {
		n = rand32() % sizeof in;
		chunk = 1 + rand32() % 17;
		fill(in, n);
		run(in, n, 0, 0, &whole);
		run(in, n, chunk, 0, &cut);
		unsafe += !safe(whole.p, whole.len);
		differ += whole.len != cut.len ||
		    memcmp(whole.p, cut.p, cut.len) != 0;
		/* what is safe already is shown as it is, but for the
		 * reset at its end of an SGR it left set */
		changed += safe(in, n) && (whole.len < n ||
		    memcmp(whole.p, in, n) != 0 || (whole.len != n &&
		    (whole.len != n + 3 || memcmp(whole.p + n, "\x1b[m", 3))));
		/* and after a reset of its own, nothing is added */
		if (safe(in, n) && n + 3 <= sizeof in) {
			memcpy(in + n, "\x1b[m", 3);
			buf_free(&whole);
			run(in, n + 3, 0, 0, &whole);
			reset += whole.len != n + 3 ||
			    memcmp(whole.p, in, n + 3) != 0;
		}
		buf_free(&whole);
		buf_free(&cut);
	}
	tap_ok(unsafe == 0, "random bytes come out safe (%d not)", unsafe);
	tap_ok(differ == 0, "random chunks change nothing (%d did)", differ);
	tap_ok(changed == 0, "safe input comes out unchanged, or with one "
	    "reset added (%d did not)", changed);
	tap_ok(reset == 0, "safe input that ends with a reset comes out "
	    "unchanged (%d did not)", reset);
}

int
main(void)
{
	test_cases();
	test_prompt();
	test_clean();
	test_flush_resets();
	test_random();
	return tap_done();
}
