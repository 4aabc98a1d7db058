/*
 * fuzz-outbuf.c - libFuzzer harness for outbuf.c.
 *
 * Input: 2 bytes of cap (0..1024), 1 byte of largest chunk, 1 byte of seed
 * for the chunk sizes, then the bytes to capture. Every property that
 * fails calls abort(), which libFuzzer reports as a crash with the input.
 *
 * The validator below decodes code points and checks their range, unlike
 * outbuf.c, which checks byte ranges: the two must agree.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"
#include "../unit/utf8-ref.h"

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-outbuf: check failed: %s (line %d)\n", \
			    #cond, __LINE__);				\
			abort();					\
		}							\
	} while (0)


static void
fuzz_escape(const char *p, size_t n)
{
	size_t len;
	char *r = utf8_escape(p, n, &len);

	CHECK(r[len] == '\0');
	CHECK(ref_valid(r, len));
	CHECK(len >= n && len <= 4 * n);
	if (ref_valid(p, n))
		CHECK(len == n && memcmp(r, p, n) == 0);
	else
		CHECK(len > n);
	free(r);
}

static void
fuzz_prefix(const char *p, size_t n)
{
	size_t k = utf8_complete_prefix(p, n);

	CHECK(k <= n && k + 3 >= n);
	if (k < n) {
		/* held back: a lead byte that the rest does not complete */
		CHECK((unsigned char)p[k] >= 0xc2 && (unsigned char)p[k] <= 0xf4);
		CHECK(ref_char((const unsigned char *)p + k, n - k) == 0);
	}
	if (ref_valid(p, n))
		CHECK(k == n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outbuf ob;
	size_t cap, maxchunk, n, len, clen, k, i;
	unsigned long long trunc;
	struct outbuf_cut cut, ccut;
	const char *p;
	uint32_t seed;
	char *r, *c;

	if (size < 4)
		return 0;
	cap = ((size_t)data[0] << 8 | data[1]) % 1025;
	maxchunk = 1 + data[2];
	seed = data[3] | 1;
	p = (const char *)data + 4;
	n = size - 4;

	fuzz_escape(p, n);
	fuzz_prefix(p, n);

	outbuf_init(&ob, cap);
	for (i = 0; i < n; i += k) {
		seed = seed * 1103515245 + 12345;
		k = 1 + (seed >> 16) % maxchunk;
		if (k > n - i)
			k = n - i;
		outbuf_append(&ob, p + i, k);
	}
	CHECK(ob.total == n);
	CHECK(outbuf_empty(&ob) == (n == 0));
	CHECK(ob.head_len + ob.tail_len == (n < cap ? n : cap));
	CHECK(ob.head_len <= cap / 2 && ob.tail_len <= cap - cap / 2);
	CHECK(outbuf_dropped(&ob) == (n > cap ? n - cap : 0));
	trunc = outbuf_truncated(&ob);
	CHECK(trunc >= outbuf_dropped(&ob) && trunc <= n);
	CHECK((trunc == 0) == (outbuf_dropped(&ob) == 0));

	r = outbuf_render(&ob, &len, &cut);
	CHECK(cut.bytes == trunc && cut.lines <= cut.bytes);
	CHECK(r[len] == '\0');
	CHECK(ref_valid(r, len));
	CHECK(len <= 4 * cap + OUTBUF_MARKER_MAX);

	c = utf8_cap(p, n, cap, NULL, &clen, &ccut);
	CHECK(clen == len && memcmp(c, r, len) == 0);
	CHECK(ccut.bytes == trunc && ccut.lines == cut.lines);
	free(c);
	if (n <= cap) {
		c = utf8_escape(p, n, &clen);
		CHECK(clen == len && memcmp(c, r, len) == 0);
		free(c);
	} else {
		char marker[OUTBUF_MARKER_MAX];
		size_t mlen = outbuf_marker(marker, &cut);

		CHECK(memmem(r, len, marker, mlen) != NULL);
	}
	free(r);

	/* a reset outbuf renders as new, then captures afresh */
	outbuf_reset(&ob);
	r = outbuf_render(&ob, &len, NULL);
	CHECK(len == 0 && outbuf_empty(&ob));
	free(r);
	outbuf_append(&ob, p, n);
	r = outbuf_render(&ob, &len, NULL);
	c = utf8_cap(p, n, cap, NULL, &clen, NULL);
	CHECK(clen == len && memcmp(c, r, len) == 0);
	free(c);
	free(r);
	outbuf_free(&ob);
	return 0;
}
