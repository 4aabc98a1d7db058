/*
 * outbuf-test.c - unit tests of outbuf.c (capture, capping, escaping).
 *
 * A TAP program: exits 1 if any test failed. The expected strings are
 * written out by hand; the randomised tests check against a reference
 * decoder written here independently of outbuf.c (it decodes code points
 * and checks their range, where outbuf.c checks byte ranges).
 */
#define _GNU_SOURCE	/* memmem */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"
#include "utf8-ref.h"
#include "tap.h"

#define MARK(n) "\n[... coil: 0 lines, " #n " bytes cut ...]\n"
#define MARK_1 "\n[... coil: 0 lines, 1 byte cut ...]\n"
#define MARKL(l, n) "\n[... coil: " #l " lines, " #n " bytes cut ...]\n"

/* ---- reference decoder ---- */


/* Escape like Python's backslashreplace; returns a malloc'd buffer. */
static char *
ref_escape(const char *p, size_t n, size_t *outlen)
{
	const unsigned char *s = (const unsigned char *)p;
	char *out = malloc(4 * n + 1);
	size_t i = 0, o = 0, k;

	while (i < n) {
		if ((k = ref_char(s + i, n - i)) > 0) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else {
			o += (size_t)sprintf(out + o, "\\x%02x", s[i]);
			i++;
		}
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/*
 * The render of a valid text p[0..n) capped at cap, knowing the whole
 * text: the head keeps the characters that end within the first cap/2
 * bytes, the tail those that start within the last cap - cap/2.
 */
static char *
ref_cap_valid(const char *p, size_t n, size_t cap, size_t *outlen)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t hcap = cap / 2, tstart = n - (cap - cap / 2), i = 0, k;
	size_t o = 0, hend = 0, tbeg = n;
	char *out;

	if (n <= cap)
		return ref_escape(p, n, outlen);
	while (i < n) {
		k = ref_char(s + i, n - i);
		if (i + k <= hcap)
			hend = i + k;
		if (i >= tstart && tbeg == n)
			tbeg = i;
		i += k;
	}
	out = malloc(n + OUTBUF_MARKER_MAX + 1);
	memcpy(out, p, hend);
	o = hend;
	o += (size_t)sprintf(out + o, "\n[... coil: 0 lines, %zu byte%s cut "
	    "...]\n", tbeg - hend, tbeg - hend == 1 ? "" : "s");
	memcpy(out + o, p + tbeg, n - tbeg);
	o += n - tbeg;
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* ---- helpers ---- */

static unsigned long long
count_nl(const char *p, size_t n)
{
	unsigned long long k = 0;
	size_t i;

	for (i = 0; i < n; i++)
		k += p[i] == '\n';
	return k;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* Random bytes, mostly UTF-8-looking so that every path is taken. */
static void
rand_bytes(char *p, size_t n)
{
	static const unsigned char pick[] = {
		'a', 'b', '\n', 0, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xc3,
		0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, '\\',
	};
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = rng() % 3 == 0 ? (char)rng() : (char)pick[rng() % sizeof(pick)];
}

/* A random character (1 to 4 bytes) encoded into p; returns its length. */
static size_t
rand_char(char *p)
{
	static const uint32_t lo[] = { 0x20, 0x80, 0x800, 0x10000 };
	static const uint32_t span[] = { 0x5f, 0x780, 0xf800, 0x100000 };
	unsigned int kind = rng() % 4;
	uint32_t cp = lo[kind] + rng() % span[kind];

	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xe000;
	if (cp < 0x80) {
		p[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		p[0] = (char)(0xc0 | cp >> 6);
		p[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		p[0] = (char)(0xe0 | cp >> 12);
		p[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		p[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	p[0] = (char)(0xf0 | cp >> 18);
	p[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	p[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	p[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Render ob and compare with want; frees the render. */
static bool
render_is(struct outbuf *ob, const char *want, size_t wantlen, const char *desc)
{
	size_t len = (size_t)-1;
	char *r = outbuf_render(ob, &len, NULL);
	bool pass = tap_is_mem(r, len, want, wantlen, desc) && r[len] == '\0';

	free(r);
	return pass;
}

/* Append p in chunks of random sizes (1..maxchunk). */
static void
append_chunked(struct outbuf *ob, const char *p, size_t n, size_t maxchunk)
{
	size_t k;

	while (n > 0) {
		k = 1 + rng() % maxchunk;
		if (k > n)
			k = n;
		outbuf_append(ob, p, k);
		p += k;
		n -= k;
	}
}

/* ---- tests ---- */

static void
test_empty(void)
{
	struct outbuf ob;

	outbuf_init(&ob, 64);
	tap_ok(outbuf_empty(&ob), "new outbuf is empty");
	tap_ok(ob.head == NULL && ob.tail == NULL, "new outbuf allocates nothing");
	render_is(&ob, "", 0, "empty outbuf renders \"\"");
	outbuf_append(&ob, NULL, 0);
	tap_ok(outbuf_empty(&ob) && ob.head == NULL,
	    "appending 0 bytes leaves it empty, unallocated");
	outbuf_free(&ob);
	outbuf_free(&ob);
	tap_ok(ob.cap == 64 && ob.head == NULL, "outbuf_free twice is harmless, keeps cap");
}

static void
test_small(void)
{
	struct outbuf ob;

	outbuf_init(&ob, 64);
	outbuf_append(&ob, "hello, ", 7);
	outbuf_append(&ob, "w\xc3\xb6rld\n", 7);
	tap_ok(!outbuf_empty(&ob), "outbuf with text is not empty");
	render_is(&ob, "hello, w\xc3\xb6rld\n", 14, "small text renders untouched");
	tap_is_ull(outbuf_dropped(&ob), 0, "small text: nothing dropped");
	tap_is_ull(outbuf_truncated(&ob), 0, "small text: nothing truncated");
	tap_is_ull(ob.total, 14, "small text: total counted");
	outbuf_free(&ob);
}

static void
test_cap_boundary(void)
{
	struct outbuf ob;

	outbuf_init(&ob, 16);
	outbuf_append(&ob, "0123456789abcdef", 16);
	render_is(&ob, "0123456789abcdef", 16, "exactly cap bytes: kept whole");
	tap_ok(ob.head_len == 8 && ob.tail_len == 8,
	    "exactly cap bytes: head and tail full (%zu, %zu)", ob.head_len, ob.tail_len);
	tap_is_ull(outbuf_dropped(&ob), 0, "exactly cap bytes: nothing dropped");
	outbuf_append(&ob, "g", 1);
	tap_is_ull(outbuf_dropped(&ob), 1, "cap + 1 bytes: 1 dropped");
	render_is(&ob, "01234567" MARK_1 "9abcdefg", 8 + sizeof(MARK_1) - 1 + 8,
	    "cap + 1 bytes: head, marker, tail");
	outbuf_free(&ob);

	/* odd cap: head gets cap/2, the tail the rest */
	outbuf_init(&ob, 15);
	outbuf_append(&ob, "0123456789abcde", 15);
	render_is(&ob, "0123456789abcde", 15, "odd cap 15, 15 bytes: kept whole");
	outbuf_append(&ob, "f", 1);
	render_is(&ob, "0123456" MARK_1 "89abcdef", 7 + sizeof(MARK_1) - 1 + 8,
	    "odd cap 15, 16 bytes: 7 head, 8 tail");
	outbuf_free(&ob);
}

static void
test_marker_and_ring(void)
{
	struct outbuf ob;
	const char *want = "01234" MARK(6) "bcdef";

	outbuf_init(&ob, 10);
	outbuf_append(&ob, "0123456789", 10);
	outbuf_append(&ob, "ab", 2);
	outbuf_append(&ob, "cde", 3);
	outbuf_append(&ob, "f", 1);
	render_is(&ob, want, strlen(want), "ring wraps: marker text and last bytes in order");
	tap_is_ull(outbuf_dropped(&ob), 6, "ring wraps: dropped exact");
	tap_is_ull(outbuf_truncated(&ob), 6, "ring wraps: truncated equals dropped for ASCII");
	outbuf_free(&ob);
}

static void
test_huge_append(void)
{
	struct outbuf ob;
	size_t n = 1 << 20, i;
	char *big = malloc(n);
	const char *want;

	for (i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	/* 1 MiB of 'a' + i % 26 ends with "rstuv" (1048575 % 26 = 21) */
	outbuf_init(&ob, 10);
	outbuf_append(&ob, big, n);
	tap_ok(ob.head_len == 5 && ob.tail_len == 5, "huge append: keeps cap bytes");
	tap_is_mem(ob.head, 5, "abcde", 5, "huge append: head is its first bytes");
	tap_is_ull(outbuf_dropped(&ob), n - 10, "huge append: dropped exact");
	tap_ok(memcmp(ob.tail + ob.tail_pos, big + n - 5, 5 - ob.tail_pos) == 0 &&
	    memcmp(ob.tail, big + n - ob.tail_pos, ob.tail_pos) == 0,
	    "huge append: tail is its last bytes");
	want = "abcde" MARK(1048566) "rstuv";
	render_is(&ob, want, strlen(want), "huge append: render");
	outbuf_append(&ob, "012", 3);
	want = "abcde" MARK(1048569) "uv012";
	render_is(&ob, want, strlen(want), "huge append then small: ring continues");
	outbuf_free(&ob);
	free(big);
}

/*
 * 200 MB in odd-sized chunks, the byte at offset i being 'a' + i % 26:
 * memory stays at the cap and the counts are exact.
 */
static void
test_200mb(void)
{
	const size_t cap = 65536, chunk = 26 * 2521;
	const unsigned long long total = 200ULL * 1000 * 1000;
	struct outbuf ob;
	char *buf = malloc(chunk), *r, *want;
	unsigned long long done = 0;
	size_t i, len, k;
	bool okhead = true, oktail = true;

	for (i = 0; i < chunk; i++)
		buf[i] = (char)('a' + i % 26);
	outbuf_init(&ob, cap);
	while (done < total) {
		k = total - done < chunk ? (size_t)(total - done) : chunk;
		outbuf_append(&ob, buf, k);
		done += k;
	}
	tap_is_ull(ob.total, total, "200 MB: total counted");
	tap_ok(ob.head_len == cap / 2 && ob.tail_len == cap - cap / 2,
	    "200 MB: head and tail hold cap bytes");
	tap_is_ull(outbuf_dropped(&ob), total - cap, "200 MB: dropped exact");
	tap_ok(malloc_usable_size(ob.head) < cap / 2 + 64 &&
	    malloc_usable_size(ob.tail) < cap - cap / 2 + 64,
	    "200 MB: allocations are cap-sized (%zu + %zu bytes)",
	    malloc_usable_size(ob.head), malloc_usable_size(ob.tail));
	r = outbuf_render(&ob, &len, NULL);
	tap_ok(len <= 4 * cap + OUTBUF_MARKER_MAX, "200 MB: render bounded (%zu)", len);
	for (i = 0; i < cap / 2; i++)
		okhead = okhead && r[i] == (char)('a' + i % 26);
	tap_ok(okhead, "200 MB: head is the first bytes");
	want = malloc(OUTBUF_MARKER_MAX);
	k = (size_t)sprintf(want, "\n[... coil: 0 lines, %llu bytes cut ...]\n",
	    total - cap);
	tap_is_mem(r + cap / 2, k, want, k, "200 MB: marker gives dropped bytes");
	for (i = 0; i < cap - cap / 2; i++)
		oktail = oktail && r[cap / 2 + k + i] ==
		    (char)('a' + (total - (cap - cap / 2) + i) % 26);
	tap_ok(oktail && len == cap + k, "200 MB: tail is the last bytes");
	free(want);
	free(r);
	outbuf_free(&ob);
	free(buf);
}

/* Characters split by the head cut are dropped whole and counted. */
static void
test_head_cut(void)
{
	struct outbuf ob;
	const char *want;

	outbuf_init(&ob, 8);	/* head 4, tail 4 */
	outbuf_append(&ob, "abc\xc3\xa9" "0123456789wxyz", 19);
	want = "abc" MARK(12) "wxyz";
	render_is(&ob, want, strlen(want), "head cut splits a 2-byte char: dropped whole");
	tap_is_ull(outbuf_dropped(&ob), 11, "head cut 2-byte: raw dropped 11");
	tap_is_ull(outbuf_truncated(&ob), 12, "head cut 2-byte: marker counts 12");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "ab\xe2\x82\xac" "0123456789wxyz", 19);
	want = "ab" MARK(13) "wxyz";
	render_is(&ob, want, strlen(want), "head cut after 2 bytes of a 3-byte char");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "abc\xe2\x82\xac" "0123456789wxyz", 20);
	want = "abc" MARK(13) "wxyz";
	render_is(&ob, want, strlen(want), "head cut after 1 byte of a 3-byte char");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "a\xf0\x9f\x98\x80" "0123456789wxyz", 19);
	want = "a" MARK(14) "wxyz";
	render_is(&ob, want, strlen(want), "head cut after 3 bytes of a 4-byte char");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "ab\xc3\xa9" "0123456789wxyz", 18);
	want = "ab\xc3\xa9" MARK(10) "wxyz";
	render_is(&ob, want, strlen(want), "char ending exactly at the head cut is kept");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "abc\xff" "0123456789wxyz", 18);
	want = "abc\\xff" MARK(10) "wxyz";
	render_is(&ob, want, strlen(want), "invalid byte at the head cut is escaped, not dropped");
	outbuf_free(&ob);
}

/* Characters split by the tail start are dropped whole and counted. */
static void
test_tail_cut(void)
{
	struct outbuf ob;
	const char *want;

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "abcd0123456789\xc3\xa9xyz", 19);
	want = "abcd" MARK(12) "xyz";
	render_is(&ob, want, strlen(want), "tail starts inside a 2-byte char: dropped whole");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "abcd0123456789\xe2\x82\xacyz", 19);
	want = "abcd" MARK(13) "yz";
	render_is(&ob, want, strlen(want), "tail starts inside a 3-byte char");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "abcd0123456789\xf0\x9f\x98\x80z", 19);
	want = "abcd" MARK(14) "z";
	render_is(&ob, want, strlen(want), "tail starts inside a 4-byte char");
	tap_is_ull(outbuf_truncated(&ob), 14, "tail cut 4-byte: outbuf_truncated agrees");
	outbuf_free(&ob);

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "abcd0123456789\x80\x80\x80\x80", 18);
	want = "abcd" MARK(13) "\\x80";
	render_is(&ob, want, strlen(want),
	    "4 leading continuation bytes: 3 skipped, the 4th escaped");
	outbuf_free(&ob);

	/* cap 1: no head, a 1-byte tail */
	outbuf_init(&ob, 1);
	outbuf_append(&ob, "\xc3\xa9", 2);
	want = MARK(2);
	render_is(&ob, want, strlen(want), "cap 1: half a char in the tail is dropped");
	outbuf_free(&ob);
}

/* Every cap from 0 to 40, valid text of every character width: the render
 * is what a reference that sees the whole text gives. */
static void
test_cuts_exhaustive(void)
{
	char text[256], *r, *want;
	size_t n, cap, len, wantlen, round;
	struct outbuf_cut cut;
	int bad = 0, badcap = 0;
	struct outbuf ob;

	for (round = 0; round < 200; round++) {
		n = 0;
		while (n < 60)
			n += rand_char(text + n);
		for (cap = 0; cap <= 40; cap++) {
			outbuf_init(&ob, cap);
			append_chunked(&ob, text, n, 7);
			r = outbuf_render(&ob, &len, NULL);
			want = ref_cap_valid(text, n, cap, &wantlen);
			if (len != wantlen || memcmp(r, want, len) != 0) {
				if (bad++ == 0) {
					printf("# cap %zu\n", cap);
					tap_diag_bytes("got", r, len);
					tap_diag_bytes("want", want, wantlen);
				}
			}
			free(r);
			r = utf8_cap(text, n, cap, NULL, &len, &cut);
			if (len != wantlen || memcmp(r, want, len) != 0 ||
			    cut.bytes != outbuf_truncated(&ob))
				badcap++;
			free(r);
			free(want);
			outbuf_free(&ob);
		}
	}
	tap_ok(bad == 0, "valid text, caps 0..40: render cuts at char boundaries (%d bad)", bad);
	tap_ok(badcap == 0, "valid text, caps 0..40: utf8_cap agrees (%d bad)", badcap);
}

#define S(x) x, sizeof(x) - 1

static const struct {
	const char *in;
	size_t n;
	const char *want;
	size_t wantlen;
	const char *desc;
} escapes[] = {
	{ S("plain"), S("plain"), "ASCII unchanged" },
	{ S("\xff"), S("\\xff"), "0xff escaped" },
	{ S("a\xfe" "b"), S("a\\xfe" "b"), "0xfe escaped, neighbours kept" },
	{ S("\xc0\x80"), S("\\xc0\\x80"), "overlong C0 80 escaped" },
	{ S("\xc1\xbf"), S("\\xc1\\xbf"), "overlong C1 BF escaped" },
	{ S("\xe0\x80\x80"), S("\\xe0\\x80\\x80"), "overlong E0 80 80 escaped" },
	{ S("\xf0\x8f\xbf\xbf"), S("\\xf0\\x8f\\xbf\\xbf"), "overlong F0 8F BF BF escaped" },
	{ S("\xed\xa0\x80"), S("\\xed\\xa0\\x80"), "surrogate ED A0 80 escaped" },
	{ S("\xed\xbf\xbf"), S("\\xed\\xbf\\xbf"), "surrogate ED BF BF escaped" },
	{ S("\xed\x9f\xbf"), S("\xed\x9f\xbf"), "U+D7FF kept" },
	{ S("\xee\x80\x80"), S("\xee\x80\x80"), "U+E000 kept" },
	{ S("\xef\xbf\xbf"), S("\xef\xbf\xbf"), "U+FFFF kept" },
	{ S("\xf4\x8f\xbf\xbf"), S("\xf4\x8f\xbf\xbf"), "U+10FFFF kept" },
	{ S("\xf4\x90\x80\x80"), S("\\xf4\\x90\\x80\\x80"), "above U+10FFFF escaped" },
	{ S("\xf5\x80\x80\x80"), S("\\xf5\\x80\\x80\\x80"), "F5 lead escaped" },
	{ S("\xf8\x88\x80\x80\x80"), S("\\xf8\\x88\\x80\\x80\\x80"), "5-byte form escaped" },
	{ S("a\xe2\x82"), S("a\\xe2\\x82"), "truncated sequence at end escaped" },
	{ S("\xe2\x82" "A"), S("\\xe2\\x82" "A"), "truncated sequence mid-text escaped, next kept" },
	{ S("\xf0\x9f\x98"), S("\\xf0\\x9f\\x98"), "truncated 4-byte sequence escaped" },
	{ S("\x80"), S("\\x80"), "lone continuation escaped" },
	{ S("\xc3\xa9\xa9"), S("\xc3\xa9\\xa9"), "extra continuation escaped" },
	{ S("a\0b"), S("a\0b"), "NUL byte kept" },
	{ S("\\x41"), S("\\x41"), "backslash left as it is" },
	{ S(""), S(""), "empty input" },
};

static void
test_escape(void)
{
	size_t i, len, wantlen;
	char *r, desc[128];
	struct outbuf ob;

	for (i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		wantlen = escapes[i].wantlen;
		r = utf8_escape(escapes[i].in, escapes[i].n, &len);
		snprintf(desc, sizeof(desc), "utf8_escape: %s", escapes[i].desc);
		tap_is_mem(r, len, escapes[i].want, wantlen, desc);
		free(r);

		outbuf_init(&ob, 64);
		outbuf_append(&ob, escapes[i].in, escapes[i].n);
		snprintf(desc, sizeof(desc), "render: %s", escapes[i].desc);
		render_is(&ob, escapes[i].want, wantlen, desc);
		outbuf_free(&ob);
	}
	r = utf8_escape("abc", 3, NULL);
	tap_ok(strcmp(r, "abc") == 0, "utf8_escape takes a NULL outlen");
	free(r);
}

static void
test_cap0(void)
{
	struct outbuf ob;
	const char *want = MARK(100);
	char buf[100];

	memset(buf, 'x', sizeof(buf));
	outbuf_init(&ob, 0);
	render_is(&ob, "", 0, "cap 0, empty: renders \"\"");
	outbuf_append(&ob, buf, 60);
	outbuf_append(&ob, buf, 40);
	tap_ok(ob.head == NULL && ob.tail == NULL, "cap 0: nothing allocated");
	tap_ok(!outbuf_empty(&ob), "cap 0: not empty after appends");
	tap_is_ull(outbuf_dropped(&ob), 100, "cap 0: all bytes dropped");
	tap_is_ull(outbuf_truncated(&ob), 100, "cap 0: all bytes truncated");
	render_is(&ob, want, strlen(want), "cap 0: renders the marker alone");
	outbuf_free(&ob);
}

static void
test_reset(void)
{
	struct outbuf ob;
	char *head, *tail;

	outbuf_init(&ob, 8);
	outbuf_append(&ob, "0123456789abcdef", 16);
	head = ob.head;
	tail = ob.tail;
	outbuf_reset(&ob);
	tap_ok(outbuf_empty(&ob) && outbuf_dropped(&ob) == 0, "reset: empty again");
	render_is(&ob, "", 0, "reset: renders \"\"");
	outbuf_append(&ob, "xyz123456", 9);
	tap_ok(ob.head == head && ob.tail == tail && ob.cap == 8,
	    "reset: memory and cap kept");
	render_is(&ob, "xyz1" MARK_1 "3456", 4 + sizeof(MARK_1) - 1 + 4,
	    "reset: next render starts afresh");
	outbuf_free(&ob);
	outbuf_append(&ob, "again", 5);
	render_is(&ob, "again", 5, "outbuf usable after outbuf_free");
	outbuf_free(&ob);
}

static void
test_utf8_cap(void)
{
	struct outbuf_cut cut = { 99, 99 }, pre = { 100, 3 };
	const char *want;
	size_t len;
	char *r;

	r = utf8_cap("h\xc3\xa9llo", 6, 6, NULL, &len, &cut);
	tap_is_mem(r, len, "h\xc3\xa9llo", 6, "utf8_cap: text that fits is unchanged");
	tap_ok(cut.bytes == 0 && cut.lines == 0, "utf8_cap: fits, nothing cut");
	free(r);

	r = utf8_cap("0123456789abcdef", 16, 8, NULL, &len, &cut);
	want = "0123" MARK(8) "cdef";
	tap_is_mem(r, len, want, strlen(want), "utf8_cap: head, marker, tail");
	tap_is_ull(cut.bytes, 8, "utf8_cap: cut counts the middle");
	free(r);

	/* "a" + U+1F600 + 10 digits, cap 4: head "a\xf0" cut to "a" */
	r = utf8_cap("a\xf0\x9f\x98\x80" "0123456789", 15, 4, NULL, &len, &cut);
	want = "a" MARK(12) "89";
	tap_is_mem(r, len, want, strlen(want), "utf8_cap: 4-byte char split at head dropped whole");
	tap_is_ull(cut.bytes, 12, "utf8_cap: cut includes the split char");
	free(r);

	r = utf8_cap("Traceback\n\xff", 11, 100, NULL, NULL, NULL);
	tap_ok(strcmp(r, "Traceback\n\\xff") == 0,
	    "utf8_cap: invalid byte escaped, NULL outputs accepted");
	free(r);

	/* What the worker cut before is in the middle too: the marker and
	 * the count add it (issue 9, bug 7: they did not agree). */
	r = utf8_cap("0123\n56789abcdef", 16, 8, &pre, &len, &cut);
	want = "0123" MARKL(4, 108) "cdef";
	tap_is_mem(r, len, want, strlen(want), "utf8_cap: pre-cut bytes and lines in the marker");
	tap_ok(cut.bytes == 108 && cut.lines == 4, "utf8_cap: pre-cut counted (%llu, %llu)",
	    cut.bytes, cut.lines);
	free(r);
	r = utf8_cap("0123", 4, 8, &pre, &len, &cut);
	tap_ok(len == 4 && cut.bytes == 0, "utf8_cap: pre-cut ignored when the text fits");
	free(r);
}

/* Ten lines "line00\n" .. "line09\n", 70 bytes. */
static const char ten_lines[] = "line00\nline01\nline02\nline03\nline04\n"
    "line05\nline06\nline07\nline08\nline09\n";

/* Cuts move to a line boundary within OUTBUF_NEAR of them; the marker
 * counts the whole lines gone. */
static void
test_line_cuts(void)
{
	struct outbuf ob;
	struct outbuf_cut cut;
	const char *want;
	size_t len;
	char *r;

	tap_ok(OUTBUF_NEAR(4) == 2 && OUTBUF_NEAR(20) == 10 &&
	    OUTBUF_NEAR(1000) == 200 && OUTBUF_NEAR(32768) == 3276,
	    "near: a tenth or 200 bytes, at most half the part");

	/* cap 40: head 20 ends "line0", tail 20 starts "ine07\n" */
	want = "line00\nline01\n" MARKL(6, 42) "line08\nline09\n";
	r = utf8_cap(ten_lines, 70, 40, NULL, &len, &cut);
	tap_is_mem(r, len, want, strlen(want), "line cut: head and tail end on lines");
	tap_ok(cut.bytes == 42 && cut.lines == 6, "line cut: 6 lines, 42 bytes");
	free(r);
	outbuf_init(&ob, 40);
	append_chunked(&ob, ten_lines, 70, 9);
	render_is(&ob, want, strlen(want), "line cut: the outbuf agrees");
	tap_is_ull(outbuf_truncated(&ob), 42, "line cut: outbuf_truncated agrees");
	outbuf_free(&ob);

	/* cap 28: the head "line00\nline01\n" ends a line and the byte
	 * before the tail "line08\nline09\n" is a newline: neither moves,
	 * though the tail has a newline near its start. */
	want = "line00\nline01\n" MARKL(6, 42) "line08\nline09\n";
	outbuf_init(&ob, 28);
	append_chunked(&ob, ten_lines, 70, 5);
	r = outbuf_render(&ob, &len, &cut);
	tap_is_mem(r, len, want, strlen(want),
	    "line cut: a tail that starts a line is kept whole");
	tap_ok(cut.bytes == 42 && cut.lines == 6, "line cut: render gives its counts");
	free(r);
	outbuf_free(&ob);

	/* cap 20: near is 5, the newlines are further from the cuts */
	want = "ab\nxxxxxxx" MARK(26) "xxxxxxx\nyz";
	r = utf8_cap("ab\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nyz", 46, 20,
	    NULL, &len, &cut);
	tap_is_mem(r, len, want, strlen(want), "line cut: a newline not near is not used");
	tap_ok(cut.bytes == 26 && cut.lines == 0, "line cut: no newline cut, 0 lines");
	free(r);

	/* A line boundary wins over a split character, never inside one. */
	want = "\xc3\xa9\n" "\n[... coil: 1 line, 5 bytes cut ...]\n" "\xc3\xa9\n";
	r = utf8_cap("\xc3\xa9\n\xc3\xa9\xc3\xa9\n\xc3\xa9\n", 11, 6, NULL, &len,
	    &cut);
	tap_is_mem(r, len, want, strlen(want),
	    "line cut: multi-byte lines cut after their newline");
	tap_ok(cut.bytes == 5 && cut.lines == 1, "line cut: 1 line, 5 bytes");
	free(r);
}

static void
test_complete_prefix(void)
{
	static const char *chars[] = {
		"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\xe0\xa0\x80", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf",
	};
	static const struct {
		const char *in;
		size_t n;
		size_t want;
		const char *desc;
	} cases[] = {
		{ "", 0, 0, "empty" },
		{ "abc", 3, 3, "ASCII" },
		{ "ab\xff", 3, 3, "0xff is not held back" },
		{ "ab\x80", 3, 3, "lone continuation is not held back" },
		{ "ab\xc0", 3, 3, "C0 is not held back" },
		{ "ab\xf5", 3, 3, "F5 is not held back" },
		{ "ab\xe0\x80", 4, 4, "E0 80 (overlong so far) is not held back" },
		{ "ab\xed\xa0", 4, 4, "ED A0 (surrogate so far) is not held back" },
		{ "ab\xf4\x90", 4, 4, "F4 90 (above U+10FFFF) is not held back" },
		{ "ab\xf0\x8f", 4, 4, "F0 8F (overlong so far) is not held back" },
		{ "\x80\x80\x80", 3, 3, "three continuations are not held back" },
		{ "\xf0\x9f\x98\x80\x80", 5, 5, "complete char plus continuation" },
		{ "\xe2\x82" "a", 3, 3, "broken sequence before ASCII" },
		{ "\xe2" "\xe2\x82", 3, 1, "only the last partial sequence is held" },
	};
	char buf[16], desc[128];
	size_t i, k, len;

	for (i = 0; i < sizeof(chars) / sizeof(chars[0]); i++) {
		len = strlen(chars[i]);
		for (k = 0; k <= len; k++) {
			memcpy(buf, "ab", 2);
			memcpy(buf + 2, chars[i], k);
			snprintf(desc, sizeof(desc),
			    "complete_prefix: %zu of %zu bytes of char %zu", k, len, i);
			tap_is_ull(utf8_complete_prefix(buf, 2 + k),
			    k == len ? 2 + len : 2, desc);
		}
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(desc, sizeof(desc), "complete_prefix: %s", cases[i].desc);
		tap_is_ull(utf8_complete_prefix(cases[i].in, cases[i].n), cases[i].want, desc);
	}
}

/* Streaming with utf8_complete_prefix and escaping each piece gives what
 * escaping the whole gives, for valid input cut anywhere. */
static void
test_stream(void)
{
	char text[512], pending[600], *a, *b;
	size_t n, plen, i, k, emit, alen, blen, round;
	int bad = 0;

	for (round = 0; round < 300; round++) {
		n = 0;
		while (n < 200)
			n += rand_char(text + n);
		a = malloc(4 * n + 1);
		alen = plen = 0;
		for (i = 0; i < n; i += k) {
			k = 1 + rng() % 5;
			if (k > n - i)
				k = n - i;
			memcpy(pending + plen, text + i, k);
			plen += k;
			emit = utf8_complete_prefix(pending, plen);
			b = utf8_escape(pending, emit, &blen);
			memcpy(a + alen, b, blen);
			alen += blen;
			free(b);
			memmove(pending, pending + emit, plen - emit);
			plen -= emit;
		}
		if (plen != 0 || alen != n || memcmp(a, text, n) != 0)
			bad++;
		free(a);
	}
	tap_ok(bad == 0, "streaming valid text through complete_prefix loses nothing (%d bad)", bad);
}

/* Random bytes: escape agrees with the reference, renders are valid UTF-8,
 * bounded, and agree with utf8_cap; the counts are exact. */
static void
test_random(void)
{
	char in[300], *r, *w, *c;
	size_t n, cap, len, wlen, clen, round, i, o;
	struct outbuf_cut cut, ccut;
	int badlines = 0, badesc = 0, badvalid = 0, badbound = 0, badcount = 0, badcap = 0;
	int badvalidin = 0, badround = 0;
	struct outbuf ob;

	for (round = 0; round < 5000; round++) {
		n = rng() % sizeof(in);
		rand_bytes(in, n);
		cap = rng() % 80;

		r = utf8_escape(in, n, &len);
		w = ref_escape(in, n, &wlen);
		if (len != wlen || memcmp(r, w, len) != 0)
			badesc++;
		if (!ref_valid(r, len) || r[len] != '\0')
			badvalid++;
		if (ref_valid(in, n) && (len != n || memcmp(r, in, n) != 0))
			badvalidin++;
		/* without backslashes in the input, escaping is reversible */
		if (memchr(in, '\\', n) == NULL) {
			for (i = o = 0; i < len; o++) {
				if (r[i] == '\\') {
					w[o] = (char)strtol((char[]){ r[i + 2], r[i + 3], 0 }, NULL, 16);
					i += 4;
				} else
					w[o] = r[i++];
			}
			if (o != n || memcmp(w, in, n) != 0)
				badround++;
		}
		free(r);
		free(w);

		outbuf_init(&ob, cap);
		append_chunked(&ob, in, n, 1 + rng() % 40);
		r = outbuf_render(&ob, &len, &cut);
		if (!ref_valid(r, len) || r[len] != '\0')
			badvalid++;
		if (len > 4 * cap + OUTBUF_MARKER_MAX)
			badbound++;
		if (ob.total != n || outbuf_dropped(&ob) != (n > cap ? n - cap : 0) ||
		    ob.head_len + ob.tail_len != (n < cap ? n : cap) ||
		    outbuf_truncated(&ob) != cut.bytes ||
		    cut.bytes < outbuf_dropped(&ob) || cut.bytes > n)
			badcount++;
		/* Escaping makes no newline: those of the input not in the
		 * render (less the marker's two) are the lines cut. */
		if (count_nl(in, n) - (count_nl(r, len) - (cut.bytes > 0 ? 2 : 0))
		    != cut.lines)
			badlines++;
		c = utf8_cap(in, n, cap, NULL, &clen, &ccut);
		if (clen != len || memcmp(c, r, len) != 0 ||
		    ccut.bytes != cut.bytes || ccut.lines != cut.lines)
			badcap++;
		free(c);
		free(r);
		outbuf_free(&ob);
	}
	tap_ok(badesc == 0, "random bytes: utf8_escape agrees with the reference (%d bad)", badesc);
	tap_ok(badvalidin == 0, "random bytes: valid input comes back unchanged (%d bad)", badvalidin);
	tap_ok(badround == 0, "random bytes: escaping is reversible without backslashes (%d bad)", badround);
	tap_ok(badvalid == 0, "random bytes: escape and render are valid UTF-8 (%d bad)", badvalid);
	tap_ok(badbound == 0, "random bytes: render within 4 * cap + marker (%d bad)", badbound);
	tap_ok(badcount == 0, "random bytes: total, dropped, truncated exact (%d bad)", badcount);
	tap_ok(badlines == 0, "random bytes: lines cut exact (%d bad)", badlines);
	tap_ok(badcap == 0, "random bytes: render equals utf8_cap of the whole (%d bad)", badcap);
}

/* Valid text with lines of random lengths: the render is a prefix of the
 * text, the marker, a suffix, and the marker's counts are exactly what
 * lies between them; a cut falls after a newline when one is near. */
static void
test_lines_random(void)
{
	char text[600], *r, marker[OUTBUF_MARKER_MAX];
	size_t n, cap, len, mlen, round, h, t, near;
	struct outbuf_cut cut;
	struct outbuf ob;
	const char *m;
	int bad = 0, badnear = 0;

	for (round = 0; round < 3000; round++) {
		n = 0;
		while (n < 500)
			n += rng() % 6 == 0 ? (text[n] = '\n', 1) :
			    rand_char(text + n);
		cap = 8 + rng() % 300;
		outbuf_init(&ob, cap);
		append_chunked(&ob, text, n, 1 + rng() % 64);
		r = outbuf_render(&ob, &len, &cut);
		outbuf_free(&ob);
		if (cut.bytes == 0) {
			bad += len != n || memcmp(r, text, n) != 0;
			free(r);
			continue;
		}
		mlen = outbuf_marker(marker, &cut);
		m = memmem(r, len, marker, mlen);
		h = m != NULL ? (size_t)(m - r) : 0;
		t = m != NULL ? len - h - mlen : 0;
		if (m == NULL || h + t + cut.bytes != n ||
		    memcmp(r, text, h) != 0 ||
		    memcmp(m + mlen, text + n - t, t) != 0 ||
		    count_nl(text + h, n - h - t) != cut.lines)
			bad++;
		/* No newline within near of the head's cut was passed over. */
		near = OUTBUF_NEAR(cap / 2);
		if (m != NULL && (h == 0 || text[h - 1] != '\n') &&
		    memchr(text + (cap / 2 > near ? cap / 2 - near : 0), '\n',
		    cap / 2 - (cap / 2 > near ? cap / 2 - near : 0)) != NULL)
			badnear++;
		free(r);
	}
	tap_ok(bad == 0, "lines: head, marker, tail and counts exact (%d bad)", bad);
	tap_ok(badnear == 0, "lines: the head ends on a near newline (%d bad)", badnear);
}

/* outbuf_render_cap within a smaller cap renders what an outbuf of that
 * cap renders after the same appends: text, length and counts. */
static void
test_render_cap(void)
{
	static const char alpha[] = "ab\n\xc3\xa9\xe2\x82\xac\xff";
	struct outbuf big, small;
	struct outbuf_cut c1, c2;
	size_t l1, l2, cap, k, i, n;
	char chunk[300], *r1, *r2;
	int round, bad = 0;

	srand(24);
	for (round = 0; round < 3000; round++) {
		outbuf_init(&big, 1 + (size_t)rand() % 400);
		cap = (size_t)rand() % (big.cap + 1);
		outbuf_init(&small, cap);
		for (k = (size_t)rand() % 6; k > 0; k--) {
			n = (size_t)rand() % sizeof chunk;
			for (i = 0; i < n; i++)
				chunk[i] = alpha[rand() % (sizeof alpha - 1)];
			outbuf_append(&big, chunk, n);
			outbuf_append(&small, chunk, n);
		}
		r1 = outbuf_render_cap(&big, cap, &l1, &c1);
		r2 = outbuf_render(&small, &l2, &c2);
		if (l1 != l2 || memcmp(r1, r2, l1) != 0 ||
		    c1.bytes != c2.bytes || c1.lines != c2.lines)
			bad++;
		free(r1);
		free(r2);
		outbuf_free(&big);
		outbuf_free(&small);
	}
	tap_ok(bad == 0, "render_cap: as an outbuf of the smaller cap renders "
	    "(%d bad)", bad);
}

/* The reference validator itself must reject what it is meant to. */
static void
test_validator(void)
{
	tap_ok(ref_valid("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10) &&
	    !ref_valid("\xc0\x80", 2) && !ref_valid("\xed\xa0\x80", 3) &&
	    !ref_valid("\xf4\x90\x80\x80", 4) && !ref_valid("\xe2\x82", 2) &&
	    !ref_valid("\xff", 1),
	    "test's reference validator accepts and rejects as it should");
}

/* utf8_valid_prefix: the offset of the first byte that is not UTF-8. */
static void
test_valid_prefix(void)
{
	static const struct {
		const char *in;
		size_t n, want;
		const char *desc;
	} cases[] = {
		{ "abc", 3, 3, "ASCII is valid throughout" },
		{ "a\xc3\xa9b", 4, 4, "a two-byte character" },
		{ "ab\xffcd", 5, 2, "a stray byte" },
		{ "a\xed\xa0\x80", 4, 1, "a surrogate is not UTF-8" },
		{ "a\xc0\xafb", 4, 1, "an overlong form is not" },
		{ "ab\xe2\x82", 4, 2, "a sequence cut at the end is not" },
	};
	char desc[128];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(desc, sizeof desc, "utf8_valid_prefix: %s",
		    cases[i].desc);
		tap_is_ull(utf8_valid_prefix(cases[i].in, cases[i].n),
		    cases[i].want, desc);
	}
}

int
main(void)
{
	test_validator();
	test_empty();
	test_small();
	test_cap_boundary();
	test_marker_and_ring();
	test_huge_append();
	test_200mb();
	test_head_cut();
	test_tail_cut();
	test_cuts_exhaustive();
	test_escape();
	test_cap0();
	test_reset();
	test_utf8_cap();
	test_line_cuts();
	test_lines_random();
	test_complete_prefix();
	test_valid_prefix();
	test_stream();
	test_random();
	test_render_cap();
	return tap_done();
}
