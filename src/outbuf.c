/*
 * outbuf.c - bounded head/tail capture of output, and UTF-8 escaping.
 *
 * The contract is in outbuf.h. This file depends on libc only, so the unit
 * test and the fuzzer build it alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit.h"
#include "outbuf.h"

/* util.c's, when linked in (coil): out of memory then runs the
 * supervisor's teardown, or _exits a child with EXIT_NOMEM.  The unit
 * test and the fuzzer link this file alone, and abort. */
extern void fatal_code(int code, int errnum, const char *fmt, ...)
	__attribute__((weak, format(printf, 3, 4), noreturn));

static void *
outbuf_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		if (fatal_code != NULL)
			fatal_code(EXIT_NOMEM, 0, "out of memory (%zu bytes)",
			    n);
		fputs("coil: out of memory\n", stderr);
		abort();
	}
	return p;
}

/*
 * Length of the valid, shortest-form UTF-8 sequence at s[0..n), n >= 1, or
 * 0 if s[0] does not start one. When 0 is returned because the bytes ran
 * out on a prefix that is valid so far, *partial is set.
 *
 * The ranges of the second byte are what exclude overlong forms (E0, F0),
 * surrogates (ED) and code points above U+10FFFF (F4); C0, C1 and F5..FF
 * never start a sequence (Unicode 15, table 3-7).
 */
static size_t
utf8_seq_len(const unsigned char *s, size_t n, bool *partial)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	*partial = false;
	if (b < 0x80)
		return 1;
	if (b < 0xc2)
		return 0;
	if (b < 0xe0)
		len = 2;
	else if (b < 0xf0) {
		len = 3;
		if (b == 0xe0)
			lo = 0xa0;
		else if (b == 0xed)
			hi = 0x9f;
	} else if (b < 0xf5) {
		len = 4;
		if (b == 0xf0)
			lo = 0x90;
		else if (b == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	for (i = 1; i < len; i++) {
		if (i >= n) {
			*partial = true;
			return 0;
		}
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

/*
 * Escape p[0..n) into out, or only count when out is NULL; returns the
 * length written. Done in two passes (count, then write) so a result is
 * allocated at its exact size, not 4 * n.
 */
static size_t
utf8_put(const char *p, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, o = 0, len, run;
	bool partial;

	while (i < n) {
		if (s[i] < 0x80) {
			for (run = i + 1; run < n && s[run] < 0x80; run++)
				;
			if (out != NULL)
				memcpy(out + o, s + i, run - i);
			o += run - i;
			i = run;
			continue;
		}
		len = utf8_seq_len(s + i, n - i, &partial);
		if (len > 0) {
			if (out != NULL)
				memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			if (out != NULL) {
				out[o] = '\\';
				out[o + 1] = 'x';
				out[o + 2] = hex[s[i] >> 4];
				out[o + 3] = hex[s[i] & 0xf];
			}
			o += 4;
			i++;
		}
	}
	return o;
}

size_t
utf8_complete_prefix(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = n;
	bool partial;

	/* A sequence is at most 4 bytes: its lead is among the last 3. */
	while (i > 0 && n - i < 3 && (s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || n - i >= 3 || s[i - 1] < 0xc0)
		return n;
	i--;
	if (utf8_seq_len(s + i, n - i, &partial) == 0 && partial)
		return i;
	return n;
}

char *
utf8_escape(const char *p, size_t n, size_t *outlen)
{
	size_t len = utf8_put(p, n, NULL);
	char *out = outbuf_xmalloc(len + 1);

	utf8_put(p, n, out);
	out[len] = '\0';
	if (outlen != NULL)
		*outlen = len;
	return out;
}

/*
 * Where the cuts fall, given the raw head h[0..hl), the raw tail
 * t[0..tl) and the gone bytes between them (gone > 0): the head keeps
 * *hkeep bytes and the tail starts at *tskip. Returns the N of the marker.
 *
 * A trailing incomplete sequence of the head is what the cut split (or
 * was invalid anyway: we cannot tell, the rest is gone). Leading
 * continuation bytes of the tail are the end of a split character; more
 * than 3 cannot all belong to one, so at most 3 are skipped and the others
 * are escaped as the invalid bytes they are.
 */
static unsigned long long
outbuf_cuts(const char *h, size_t hl, const char *t, size_t tl,
    unsigned long long gone, size_t *hkeep, size_t *tskip)
{
	size_t k = 0;

	*hkeep = utf8_complete_prefix(h, hl);
	while (k < tl && k < 3 && ((unsigned char)t[k] & 0xc0) == 0x80)
		k++;
	*tskip = k;
	return gone + (hl - *hkeep) + k;
}

/* Head, marker, tail, escaped; the same for outbuf_render and utf8_cap. */
static char *
outbuf_compose(const char *h, size_t hl, const char *t, size_t tl,
    unsigned long long gone, size_t *outlen, unsigned long long *shown)
{
	char marker[OUTBUF_MARKER_MAX], *out;
	size_t hkeep, tskip, mlen, len, o;
	unsigned long long n;

	n = outbuf_cuts(h, hl, t, tl, gone, &hkeep, &tskip);
	mlen = (size_t)snprintf(marker, sizeof(marker), OUTBUF_MARKER_FMT, n);
	len = utf8_put(h, hkeep, NULL) + mlen + utf8_put(t + tskip, tl - tskip, NULL);
	out = outbuf_xmalloc(len + 1);
	o = utf8_put(h, hkeep, out);
	memcpy(out + o, marker, mlen);
	o += mlen;
	o += utf8_put(t + tskip, tl - tskip, out + o);
	out[o] = '\0';
	if (outlen != NULL)
		*outlen = o;
	if (shown != NULL)
		*shown = n;
	return out;
}

char *
utf8_cap(const char *p, size_t n, size_t cap, size_t *outlen,
    unsigned long long *dropped)
{
	size_t hcap = cap / 2, tcap = cap - cap / 2;

	if (n <= cap) {
		if (dropped != NULL)
			*dropped = 0;
		return utf8_escape(p, n, outlen);
	}
	return outbuf_compose(p, hcap, p + n - tcap, tcap, n - cap, outlen,
	    dropped);
}

void
outbuf_init(struct outbuf *ob, size_t cap)
{
	memset(ob, 0, sizeof(*ob));
	ob->cap = cap;
}

void
outbuf_free(struct outbuf *ob)
{
	free(ob->head);
	free(ob->tail);
	outbuf_init(ob, ob->cap);
}

void
outbuf_reset(struct outbuf *ob)
{
	ob->head_len = 0;
	ob->tail_pos = 0;
	ob->tail_len = 0;
	ob->total = 0;
}

/*
 * Invariant: the tail holds bytes only once the head is full, so head and
 * tail never overlap, and total = head_len + (bytes given to the tail).
 * The ring holds the last tail_len of those; its oldest byte is at
 * (tail_pos - tail_len) mod tcap.
 */
void
outbuf_append(struct outbuf *ob, const char *p, size_t n)
{
	size_t hcap = ob->cap / 2, tcap = ob->cap - ob->cap / 2, k;

	ob->total += n;
	if (hcap > ob->head_len && n > 0) {
		if (ob->head == NULL)
			ob->head = outbuf_xmalloc(hcap);
		k = hcap - ob->head_len < n ? hcap - ob->head_len : n;
		memcpy(ob->head + ob->head_len, p, k);
		ob->head_len += k;
		p += k;
		n -= k;
	}
	if (n == 0 || tcap == 0)
		return;
	if (ob->tail == NULL)
		ob->tail = outbuf_xmalloc(tcap);
	if (n >= tcap) {
		memcpy(ob->tail, p + n - tcap, tcap);
		ob->tail_pos = 0;
		ob->tail_len = tcap;
		return;
	}
	k = tcap - ob->tail_pos < n ? tcap - ob->tail_pos : n;
	memcpy(ob->tail + ob->tail_pos, p, k);
	memcpy(ob->tail, p + k, n - k);
	ob->tail_pos = (ob->tail_pos + n) % tcap;
	ob->tail_len = ob->tail_len + n < tcap ? ob->tail_len + n : tcap;
}

bool
outbuf_empty(const struct outbuf *ob)
{
	return ob->total == 0;
}

unsigned long long
outbuf_dropped(const struct outbuf *ob)
{
	return ob->total - ob->head_len - ob->tail_len;
}

/* Copy the ring out in order, oldest byte first; caller frees. */
static char *
outbuf_tail_copy(const struct outbuf *ob)
{
	size_t tcap = ob->cap - ob->cap / 2, start, k;
	char *t = outbuf_xmalloc(ob->tail_len);

	if (ob->tail_len == 0)
		return t;
	start = (ob->tail_pos + tcap - ob->tail_len) % tcap;
	k = tcap - start < ob->tail_len ? tcap - start : ob->tail_len;
	memcpy(t, ob->tail + start, k);
	memcpy(t + k, ob->tail, ob->tail_len - k);
	return t;
}

unsigned long long
outbuf_truncated(const struct outbuf *ob)
{
	unsigned long long gone = outbuf_dropped(ob);
	size_t tcap = ob->cap - ob->cap / 2, hkeep, tskip, i, tl;
	char t[3];

	if (gone == 0)
		return 0;
	/* outbuf_cuts looks at no more than the first 3 bytes of the tail. */
	tl = ob->tail_len < 3 ? ob->tail_len : 3;
	for (i = 0; i < tl; i++)
		t[i] = ob->tail[(ob->tail_pos + tcap - ob->tail_len + i) % tcap];
	return outbuf_cuts(ob->head, ob->head_len, t, tl, gone, &hkeep, &tskip);
}

char *
outbuf_render(const struct outbuf *ob, size_t *len)
{
	unsigned long long gone = outbuf_dropped(ob);
	char *t, *all, *out;

	t = outbuf_tail_copy(ob);
	if (gone > 0) {
		out = outbuf_compose(ob->head, ob->head_len, t, ob->tail_len,
		    gone, len, NULL);
		free(t);
		return out;
	}
	/* Nothing dropped: a character may straddle head and tail. */
	all = outbuf_xmalloc(ob->head_len + ob->tail_len);
	if (ob->head_len > 0)
		memcpy(all, ob->head, ob->head_len);
	if (ob->tail_len > 0)
		memcpy(all + ob->head_len, t, ob->tail_len);
	out = utf8_escape(all, ob->head_len + ob->tail_len, len);
	free(all);
	free(t);
	return out;
}
