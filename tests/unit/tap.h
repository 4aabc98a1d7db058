/*
 * tap.h - the least TAP a unit test needs, for automake's tap-driver.
 *
 * Header only (every function static, the helpers a program may not use
 * marked unused): include it in one test program.
 * tap_ok() prints "ok K - desc" or "not ok K - desc"; tap_done() prints
 * the plan "1..N" last (TAP allows a trailing plan) and returns the exit
 * status: 0 only if every test passed and at least one ran.
 */
#ifndef COIL_TAP_H
#define COIL_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failed;

static bool __attribute__((format(printf, 2, 3)))
tap_ok(bool pass, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return pass;
}

/* Print a byte string as a TAP diagnostic, C-escaped so it fits a line. */
static void __attribute__((unused))
tap_diag_bytes(const char *what, const char *p, size_t n)
{
	size_t i;

	printf("#   %s (%zu bytes): \"", what, n);
	for (i = 0; i < n && i < 200; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\\' || c == '"')
			printf("\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("\\x%02x", c);
	}
	printf("\"%s\n", n > 200 ? "..." : "");
}

/* ok if got[0..gotlen) equals the NUL-terminated want; diagnoses if not. */
static bool __attribute__((unused))
tap_is_mem(const char *got, size_t gotlen, const char *want, size_t wantlen,
    const char *desc)
{
	bool pass = gotlen == wantlen && memcmp(got, want, wantlen) == 0;

	tap_ok(pass, "%s", desc);
	if (!pass) {
		tap_diag_bytes("got", got, gotlen);
		tap_diag_bytes("want", want, wantlen);
	}
	return pass;
}

static bool __attribute__((unused))
tap_is_ull(unsigned long long got, unsigned long long want, const char *desc)
{
	bool pass = got == want;

	tap_ok(pass, "%s", desc);
	if (!pass)
		printf("#   got %llu, want %llu\n", got, want);
	return pass;
}

static int
tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_failed > 0)
		printf("# %d of %d failed\n", tap_failed, tap_count);
	return tap_failed > 0 || tap_count == 0 ? 1 : 0;
}

#endif
