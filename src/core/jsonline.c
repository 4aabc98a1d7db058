/*
 * jsonline.c - a client's line of JSON, read forgivingly (jsonline.h).
 *
 * The second reading works on a copy the first one failed on: the
 * copy differs from the line only where jansson would refuse what JSON
 * allows, so a line that is broken for any other reason fails again,
 * and says so in the first attempt's words.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonline.h"
#include "util.h"

/* The value of the four hex digits at p, or -1. */
static long
jsonline_hex4(const char *p, size_t n)
{
	long v = 0;
	size_t i;

	if (n < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

bool
jsonline_big_int(const char *p, size_t n, size_t *end)
{
	/* JSON has no leading zeros, so digits compare as numbers. */
	static const char max[] = "9223372036854775807",
	    min[] = "9223372036854775808";
	size_t i = 0, digits;
	bool neg = false;

	if (i < n && p[i] == '-') {
		neg = true;
		i++;
	}
	for (digits = 0; i + digits < n && p[i + digits] >= '0' &&
	    p[i + digits] <= '9'; digits++)
		;
	if (end != NULL)
		*end = i + digits;
	if (digits == 0 || (i + digits < n && strchr(".eE",
	    p[i + digits]) != NULL))
		return false;
	if (digits != sizeof max - 1)
		return digits > sizeof max - 1;
	return memcmp(p + i, neg ? min : max, digits) > 0;
}

/* The escape at p (a backslash) inside a string, copied to b with what
 * it needs: a lone surrogate's backslash doubled.  Returns its length
 * in the line. */
static size_t
jsonline_escape(const char *p, size_t n, struct buf *b, bool *changed)
{
	long v = n >= 2 && p[1] == 'u' ? jsonline_hex4(p + 2, n - 2) : -1,
	    lo;

	if (v < 0) {
		buf_add(b, p, n >= 2 ? 2 : n);
		return n >= 2 ? 2 : n;
	}
	if (v >= 0xd800 && v <= 0xdbff && n >= 12 && p[6] == '\\' &&
	    p[7] == 'u' && (lo = jsonline_hex4(p + 8, n - 8)) >= 0xdc00 &&
	    lo <= 0xdfff) {
		buf_add(b, p, 12);	/* a pair: jansson takes it */
		return 12;
	}
	if (v >= 0xd800 && v <= 0xdfff) {
		buf_addstr(b, "\\");
		*changed = true;
	}
	buf_add(b, p, 6);
	return 6;
}

/* The line as jansson can take it, or NULL when it is that already. */
static char *
jsonline_tame(const char *line, size_t len, size_t *outlen)
{
	struct buf b;
	bool in_str = false, changed = false;
	size_t i = 0, n;

	buf_init(&b);
	while (i < len) {
		char c = line[i];

		if (in_str && c == '\\') {
			i += jsonline_escape(line + i, len - i, &b, &changed);
			continue;
		}
		if (c == '"')
			in_str = !in_str;
		if (in_str || (c != '-' && (c < '0' || c > '9'))) {
			buf_add(&b, &c, 1);
			i++;
			continue;
		}
		/* A number, whole: its digits are not read again as one. */
		if (jsonline_big_int(line + i, len - i, &n)) {
			buf_add(&b, line + i, n);
			buf_addstr(&b, ".0");
			changed = true;
		} else {
			for (n = 1; i + n < len && strchr("0123456789.eE+-",
			    line[i + n]) != NULL && line[i + n] != '\0'; n++)
				;
			buf_add(&b, line + i, n);
		}
		i += n;
	}
	if (!changed) {
		buf_free(&b);
		return NULL;
	}
	*outlen = b.len;
	return buf_take(&b);
}

json_t *
jsonline_load(const char *line, size_t len, size_t flags,
    json_error_t *err)
{
	json_t *v = json_loadb(line, len, flags, err);
	json_error_t again;
	size_t n;
	char *copy;

	if (v != NULL || (copy = jsonline_tame(line, len, &n)) == NULL)
		return v;
	v = json_loadb(copy, n, flags, &again);
	free(copy);
	return v;
}
