/*
 * fuzz-termsafe.c - libFuzzer harness for termsafe.c.
 *
 * Input: 1 byte of largest chunk, 1 byte of seed for the chunk sizes,
 * then the bytes a cell printed.  Every property that fails calls
 * abort(), which libFuzzer reports as a crash with the input: what comes
 * out is valid UTF-8 (checked by the reference decoder, not termsafe.c's
 * own) with no control byte but newline, tab, backspace, carriage return
 * and the ESC of an SGR sequence; the chunks do not change it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "termsafe.h"
#include "../unit/utf8-ref.h"

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-termsafe: check failed: %s " \
			    "(line %d)\n", #cond, __LINE__);		\
			abort();					\
		}							\
	} while (0)

static void
fuzz_safe(const unsigned char *s, size_t n)
{
	size_t i, j;

	CHECK(ref_valid((const char *)s, n));
	for (i = 0; i < n; i++) {
		CHECK(!(s[i] == 0xc2 && i + 1 < n && s[i + 1] < 0xa0));
		CHECK(s[i] != 0x7f);
		if (s[i] == 0x1b) {
			CHECK(i + 1 < n && s[i + 1] == '[');
			for (j = i + 2; j < n && memchr("0123456789;:", s[j],
			    12) != NULL; j++)
				;
			CHECK(j < n && s[j] == 'm');
			CHECK(j - i <= TERMSAFE_SGR_MAX);
			i = j;
		} else if (s[i] < 0x20) {
			CHECK(memchr("\n\t\b\r", s[i], 4) != NULL);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct termsafe t;
	struct buf whole, cut;
	size_t maxchunk, n, i, k;
	const char *p;
	uint32_t seed;

	if (size < 2)
		return 0;
	maxchunk = 1 + data[0];
	seed = data[1] | 1;
	p = (const char *)data + 2;
	n = size - 2;

	buf_init(&whole);
	termsafe_text(p, n, 0, &whole);
	fuzz_safe((const unsigned char *)whole.p, whole.len);

	buf_init(&cut);
	termsafe_init(&t, 0);
	for (i = 0; i < n; i += k) {
		seed = seed * 1103515245 + 12345;
		k = 1 + (seed >> 16) % maxchunk;
		if (k > n - i)
			k = n - i;
		termsafe_feed(&t, p + i, k, &cut);
		/* held back: never more than one SGR's worth */
		CHECK(t.nheld <= TERMSAFE_SGR_MAX);
	}
	termsafe_flush(&t, &cut);
	CHECK(cut.len == whole.len &&
	    (whole.len == 0 || memcmp(cut.p, whole.p, whole.len) == 0));
	CHECK(termsafe_clean(p, n) == (whole.len == n &&
	    (n == 0 || memcmp(whole.p, p, n) == 0)));
	buf_free(&whole);
	buf_free(&cut);
	return 0;
}
