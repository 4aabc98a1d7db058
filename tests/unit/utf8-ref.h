/*
 * utf8-ref.h - a reference UTF-8 decoder for the tests, written apart
 * from src/lib/outbuf.c so that a bug there is not mirrored here.  Header
 * only: include it in one test program.
 */
#ifndef COIL_UTF8_REF_H
#define COIL_UTF8_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid character at s[0..n), or 0 if not one. */
static size_t
ref_char(const unsigned char *s, size_t n)
{
	uint32_t cp, min;
	size_t need, k;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		need = 1;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		need = 2;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		need = 3;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else
		return 0;
	if (n < need + 1)
		return 0;
	for (k = 1; k <= need; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need + 1;
}

/* Whether p[0..n) is valid UTF-8. */
static bool
ref_valid(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, k;

	while (i < n) {
		if ((k = ref_char(s + i, n - i)) == 0)
			return false;
		i += k;
	}
	return true;
}

#endif
