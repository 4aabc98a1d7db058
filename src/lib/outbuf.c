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
utf8_valid_prefix(const char *p, size_t n)
{
	size_t i = 0, len;
	bool partial;

	while (i < n && (len = utf8_seq_len((const unsigned char *)p + i,
	    n - i, &partial)) > 0)
		i += len;
	return i;
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

/* Newlines in p[0..n). */
static unsigned long long
outbuf_nl(const char *p, size_t n)
{
	const char *end = p + n, *q;
	unsigned long long k = 0;

	while (p < end && (q = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		k++;
		p = q + 1;
	}
	return k;
}

size_t
outbuf_marker(char *buf, const struct outbuf_cut *cut)
{
	return (size_t)snprintf(buf, OUTBUF_MARKER_MAX,
	    "\n[... coil: %llu line%s, %llu byte%s cut ...]\n", cut->lines,
	    cut->lines == 1 ? "" : "s", cut->bytes, cut->bytes == 1 ? "" : "s");
}

/*
 * Where the cuts fall, given the raw head h[0..hl), the raw tail t[0..tl)
 * and bytes gone between them: the head keeps *hkeep bytes and the tail
 * starts at *tskip. at_line: the byte before t was a newline.
 *
 * First a line boundary near the cut (outbuf.h). Else: a trailing
 * incomplete sequence of the head is what the cut split (or was invalid
 * anyway: we cannot tell, the rest is gone). Leading continuation bytes
 * of the tail are the end of a split character; more than 3 cannot all
 * belong to one, so at most 3 are skipped and the others are escaped as
 * the invalid bytes they are. A newline is never part of a character, so
 * a cut just after one splits none.
 */
static void
outbuf_cuts(const char *h, size_t hl, const char *t, size_t tl,
    bool at_line, size_t *hkeep, size_t *tskip)
{
	size_t near, k;
	const char *nl;

	*hkeep = utf8_complete_prefix(h, hl);
	near = OUTBUF_NEAR(hl);
	for (k = hl; k > 0 && hl - k < near; k--)
		if (h[k - 1] == '\n') {
			*hkeep = k;
			break;
		}
	*tskip = 0;
	if (at_line)
		return;
	near = OUTBUF_NEAR(tl);
	if (near > 0 && (nl = memchr(t, '\n', near)) != NULL) {
		*tskip = (size_t)(nl - t) + 1;
		return;
	}
	while (*tskip < tl && *tskip < 3 &&
	    ((unsigned char)t[*tskip] & 0xc0) == 0x80)
		(*tskip)++;
}

/* What the marker between h and t says: the gone middle and the cuts. */
static void
outbuf_count(const char *h, size_t hl, const char *t,
    const struct outbuf_cut *gone, size_t hkeep, size_t tskip,
    struct outbuf_cut *cut)
{
	cut->bytes = gone->bytes + (hl - hkeep) + tskip;
	cut->lines = gone->lines + outbuf_nl(t, tskip);
	if (hkeep < hl)
		cut->lines += outbuf_nl(h + hkeep, hl - hkeep);
}

/* Head, marker, tail, escaped; the same for outbuf_render and utf8_cap.
 * gone: the bytes and newlines between h and t, at least one byte. */
static char *
outbuf_compose(const char *h, size_t hl, const char *t, size_t tl,
    bool at_line, const struct outbuf_cut *gone, size_t *outlen,
    struct outbuf_cut *shown)
{
	char marker[OUTBUF_MARKER_MAX], *out;
	size_t hkeep, tskip, mlen, len, o;
	struct outbuf_cut cut;

	outbuf_cuts(h, hl, t, tl, at_line, &hkeep, &tskip);
	outbuf_count(h, hl, t, gone, hkeep, tskip, &cut);
	mlen = outbuf_marker(marker, &cut);
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
		*shown = cut;
	return out;
}

char *
utf8_cap(const char *p, size_t n, size_t cap, const struct outbuf_cut *pre,
    size_t *outlen, struct outbuf_cut *cut)
{
	size_t hcap = cap / 2, tcap = cap - cap / 2;
	struct outbuf_cut gone;

	if (n <= cap) {
		if (cut != NULL)
			cut->bytes = cut->lines = 0;
		return utf8_escape(p, n, outlen);
	}
	gone.bytes = n - cap;
	gone.lines = outbuf_nl(p + hcap, n - cap);
	if (pre != NULL) {
		gone.bytes += pre->bytes;
		gone.lines += pre->lines;
	}
	return outbuf_compose(p, hcap, p + n - tcap, tcap,
	    p[n - tcap - 1] == '\n', &gone, outlen, cut);
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
	ob->lines = 0;
	ob->tail_at_line = false;
}

/* The newest byte kept, as a char; 0 when none. */
static char
outbuf_newest(const struct outbuf *ob)
{
	size_t tcap = ob->cap - ob->cap / 2;

	if (ob->tail_len > 0)
		return ob->tail[(ob->tail_pos + tcap - 1) % tcap];
	return ob->head_len > 0 ? ob->head[ob->head_len - 1] : 0;
}

/*
 * Invariant: the tail holds bytes only once the head is full, so head and
 * tail never overlap, and total = head_len + (bytes given to the tail).
 * The ring holds the last tail_len of those; its oldest byte is at
 * (tail_pos - tail_len) mod tcap. tail_at_line says whether the byte
 * before that one, the last the ring dropped, was a newline: it is read
 * before being overwritten.
 */
void
outbuf_append(struct outbuf *ob, const char *p, size_t n)
{
	size_t hcap = ob->cap / 2, tcap = ob->cap - ob->cap / 2, k, over;

	ob->total += n;
	ob->lines += outbuf_nl(p, n);
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
		ob->tail_at_line = n > tcap ? p[n - tcap - 1] == '\n' :
		    outbuf_newest(ob) == '\n';
		memcpy(ob->tail, p + n - tcap, tcap);
		ob->tail_pos = 0;
		ob->tail_len = tcap;
		return;
	}
	over = ob->tail_len + n > tcap ? ob->tail_len + n - tcap : 0;
	if (over > 0)
		ob->tail_at_line = ob->tail[(ob->tail_pos + tcap -
		    ob->tail_len + over - 1) % tcap] == '\n';
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

/* The bytes and newlines between head and the ring's copy t. */
static void
outbuf_gone(const struct outbuf *ob, const char *t, struct outbuf_cut *gone)
{
	gone->bytes = outbuf_dropped(ob);
	gone->lines = ob->lines - outbuf_nl(t, ob->tail_len);
	if (ob->head_len > 0)
		gone->lines -= outbuf_nl(ob->head, ob->head_len);
}

unsigned long long
outbuf_truncated(const struct outbuf *ob)
{
	struct outbuf_cut gone, cut;
	size_t hkeep, tskip;
	char *t;

	if (outbuf_dropped(ob) == 0)
		return 0;
	t = outbuf_tail_copy(ob);
	outbuf_gone(ob, t, &gone);
	outbuf_cuts(ob->head, ob->head_len, t, ob->tail_len, ob->tail_at_line,
	    &hkeep, &tskip);
	outbuf_count(ob->head, ob->head_len, t, &gone, hkeep, tskip, &cut);
	free(t);
	return cut.bytes;
}

/* outbuf_render, less the last held bytes when nothing was dropped. */
static char *
outbuf_render_less(const struct outbuf *ob, size_t held, size_t *len,
    struct outbuf_cut *cut)
{
	struct outbuf_cut gone;
	char *t, *all, *out;
	size_t n = ob->head_len + ob->tail_len;

	t = outbuf_tail_copy(ob);
	if (outbuf_dropped(ob) > 0) {
		outbuf_gone(ob, t, &gone);
		out = outbuf_compose(ob->head, ob->head_len, t, ob->tail_len,
		    ob->tail_at_line, &gone, len, cut);
		free(t);
		return out;
	}
	if (cut != NULL)
		cut->bytes = cut->lines = 0;
	/* Nothing dropped: a character may straddle head and tail. */
	all = outbuf_xmalloc(n);
	if (ob->head_len > 0)
		memcpy(all, ob->head, ob->head_len);
	if (ob->tail_len > 0)
		memcpy(all + ob->head_len, t, ob->tail_len);
	out = utf8_escape(all, held < n ? n - held : 0, len);
	free(all);
	free(t);
	return out;
}

char *
outbuf_render(const struct outbuf *ob, size_t *len, struct outbuf_cut *cut)
{
	return outbuf_render_less(ob, 0, len, cut);
}

/*
 * Within a smaller cap than ob's, as if ob had kept only cap bytes: its
 * first cap/2 and its last cap - cap/2.  The head ob kept is at least
 * cap/2 bytes and its tail at least cap - cap/2 whenever it dropped
 * any, so both parts are in hand; what lies between them, kept or not,
 * is gone and counted.
 */
char *
outbuf_render_cap(const struct outbuf *ob, size_t cap, size_t *len,
    struct outbuf_cut *cut)
{
	size_t hl = cap / 2, tl = cap - cap / 2, n;
	struct outbuf_cut gone;
	char *t, *all, *out;

	if (cap >= ob->cap || ob->total <= cap)
		return outbuf_render(ob, len, cut);
	t = outbuf_tail_copy(ob);
	if (outbuf_dropped(ob) == 0) {
		n = ob->head_len + ob->tail_len;
		all = outbuf_xmalloc(n);
		memcpy(all, ob->head, ob->head_len);
		if (ob->tail_len > 0)
			memcpy(all + ob->head_len, t, ob->tail_len);
		out = utf8_cap(all, n, cap, NULL, len, cut);
		free(all);
		free(t);
		return out;
	}
	gone.bytes = ob->total - cap;
	gone.lines = ob->lines - outbuf_nl(ob->head, hl) -
	    outbuf_nl(t + ob->tail_len - tl, tl);
	out = outbuf_compose(ob->head, hl, t + ob->tail_len - tl, tl,
	    tl < ob->tail_len ? t[ob->tail_len - tl - 1] == '\n' :
	    ob->tail_at_line, &gone, len, cut);
	free(t);
	return out;
}

char *
outbuf_render_held(const struct outbuf *ob, size_t held, size_t *len)
{
	return outbuf_render_less(ob, held, len, NULL);
}
