/*
 * chan-test.c - what a frame from the sandbox may cost (TAP): chan_scan
 * counts a frame's depth and items exactly as jansson would build them,
 * without being fooled by brackets and quotes inside strings, and stops
 * at the first limit passed; a channel with limits refuses a frame over
 * them before parsing it (a header over the byte limit before its body
 * is even buffered), and the sender's side refuses to send one.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "tap.h"
#include "util.h"

static const struct chan_limits roomy = {
	.frame = 1u << 30, .depth = 1u << 30, .items = (size_t)1 << 40,
	.key = 1u << 30, .string = 1u << 30,
};

/* Scan text without limits: its depth and items, checked. */
static void
counts(const char *text, unsigned depth, size_t items, const char *desc)
{
	struct chan_weight w;
	char why[96] = "";
	int rc = chan_scan(text, strlen(text), &roomy, &w, why, sizeof why);

	if (!tap_ok(rc == 0 && w.depth == depth && w.items == items, "%s",
	    desc))
		printf("#   rc %d, depth %u, items %zu (%s)\n", rc, w.depth,
		    w.items, why);
}

/* Scan text with lim: refused, why holding want. */
static void
refused(const char *text, const struct chan_limits *lim, const char *want,
    const char *desc)
{
	struct chan_weight w;
	char why[96] = "";
	int rc = chan_scan(text, strlen(text), lim, &w, why, sizeof why);

	if (!tap_ok(rc == -1 && strstr(why, want) != NULL, "%s", desc))
		printf("#   rc %d, why '%s'\n", rc, why);
}

/* Scan text with lim: within it. */
static void
passes(const char *text, const struct chan_limits *lim, const char *desc)
{
	struct chan_weight w;
	char why[96] = "";
	int rc = chan_scan(text, strlen(text), lim, &w, why, sizeof why);

	if (!tap_ok(rc == 0, "%s", desc))
		printf("#   why '%s'\n", why);
}

/* n copies of unit joined by commas in open ... close (caller frees). */
static char *
repeat(const char *open, const char *unit, size_t n, const char *close)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	buf_addstr(&b, open);
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_add(&b, ",", 1);
		buf_addstr(&b, unit);
	}
	buf_addstr(&b, close);
	return buf_take(&b);
}

/* text of n bytes: open, n - strlen(open) - strlen(close) copies of
 * fill, close (caller frees). */
static char *
padded(const char *open, char fill, size_t n, const char *close)
{
	size_t a = strlen(open), b = strlen(close);
	char *text = xmalloc(n + 1);

	memcpy(text, open, a);
	memset(text + a, fill, n - a - b);
	memcpy(text + n - b, close, b);
	text[n] = '\0';
	return text;
}

/* Strings: an object key and a string value, each bounded as written. */
static void
test_strings(void)
{
	struct chan_limits lim = chan_peer_limits;
	char *text;

	lim.key = 4;
	lim.string = 6;
	passes("{\"abcd\" : \"abcdef\"}", &lim,
	    "a key and a string each as long as allowed");
	refused("{\"abcde\": 1}", &lim, "an object key of over 4 bytes",
	    "a key one byte over its limit");
	refused("{\"abcde\"\n\t :1}", &lim, "an object key of over 4",
	    "a key over its limit, white space before its colon");
	refused("[\"abcdefg\"]", &lim, "a string of over 6 bytes",
	    "a string value one byte over its limit");
	refused("{\"a\": \"\\u00e9\\n\"}", &lim, "a string of over 6",
	    "a string's escapes count as written");
	refused("[\"abcdefg", &lim, "a string of over 6",
	    "a string the bytes end inside");
	passes("[\"abcde\", \"abcdef\", {\"k\": \"abcdef\"}]", &lim,
	    "values longer than a key may be are not keys");

	/* at the peer limits: a key of 64 MiB, a string of 64 MiB */
	text = padded("{\"", 'k', CHAN_PEER_FRAME, "\": 1}");
	refused(text, &chan_peer_limits, "an object key of over 4096 bytes",
	    "an object key of 64 MiB");
	free(text);
	text = padded("{\"k\": \"", 's', CHAN_PEER_FRAME, "\"}");
	refused(text, &chan_peer_limits, "a string of over 25165824 bytes",
	    "a string value of 64 MiB");
	free(text);
	text = padded("{\"", 'k', CHAN_PEER_KEY + 6, "\": 1}");
	counts(text, 1, 3, "an object key as long as allowed");
	free(text);
	text = padded("[\"", 's', CHAN_PEER_STRING + 4, "\"]");
	counts(text, 1, 2, "a string value as long as allowed");
	free(text);
}

static void
test_scan(void)
{
	struct chan_limits lim = chan_peer_limits;
	char *text, *deep;
	size_t i;

	counts("{}", 1, 1, "an empty object: one item, one level");
	counts("{\"t\": \"reply\", \"seq\": 7, \"status\": \"ok\"}", 1, 7,
	    "a reply: the object, three keys, three values");
	counts("[1, -2.5e+10, true, false, null]", 1, 6,
	    "numbers and literals are one item each");
	counts("{\"a\": [[], {}, [[1]]]}", 4, 8,
	    "depth is the deepest nesting");
	counts("[\"[[[{{{\", \"\\\"]]]\", \"\\\\\"]", 1, 4,
	    "brackets and escaped quotes inside strings count for nothing");
	counts("[\"caf\\u00e9\", \"\\u0000\"]", 1, 3,
	    "escapes inside a string");
	counts(" \t\n[ 1 ,2\n]\r", 1, 3, "white space between items");
	counts("[\"unterminated \\", 1, 2,
	    "bytes that stop inside a string end the scan");

	/* the limits, each one past by exactly one */
	lim.depth = 3;
	counts("[[[1]]]", 3, 4, "three levels");
	refused("[[[[1]]]]", &lim, "nested over 3 levels",
	    "four levels where three are allowed");
	lim.items = 4;
	refused("[1, 2, 3, 4]", &lim, "over 4 values",
	    "five items where four are allowed");
	refused("[\"a\", \"b\", \"c\", \"d\"]", &lim, "over 4 values",
	    "five strings where four are allowed");
	lim.items = 5;
	lim.depth = 8;
	text = repeat("[", "1", 4, "]");
	counts(text, 1, 5, "five items where five are allowed");
	free(text);

	/* The worst cases for jansson, at the peer limits. */
	text = repeat("[", "{}", CHAN_PEER_ITEMS, "]");
	refused(text, &chan_peer_limits, "values",
	    "a flood of empty objects over the item limit");
	free(text);
	text = repeat("[", "{}", CHAN_PEER_ITEMS - 1, "]");
	counts(text, 2, CHAN_PEER_ITEMS, "as many empty objects as allowed");
	free(text);
	deep = xmalloc(2 * CHAN_PEER_DEPTH + 3);
	for (i = 0; i <= CHAN_PEER_DEPTH; i++) {
		deep[i] = '[';
		deep[2 * CHAN_PEER_DEPTH + 1 - i] = ']';
	}
	deep[2 * CHAN_PEER_DEPTH + 2] = '\0';
	refused(deep, &chan_peer_limits, "levels",
	    "arrays nested one level over the limit");
	deep[CHAN_PEER_DEPTH] = ' ';
	deep[CHAN_PEER_DEPTH + 1] = ' ';
	counts(deep, CHAN_PEER_DEPTH, CHAN_PEER_DEPTH,
	    "arrays nested as deep as allowed");
	free(deep);
	test_strings();
}

/* A frame of text with a header saying len, written on fd. */
static void
send_raw(int fd, const char *text, uint32_t len)
{
	uint32_t h[2] = { len, 0 };

	if (write_all(fd, h, sizeof h) == -1 ||
	    write_all(fd, text, strlen(text)) == -1)
		abort();
}

static void
test_chan(void)
{
	struct chan c;
	int sv[2];
	bool bad;
	json_t *m;
	char *text;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) == -1)
		abort();
	chan_init(&c, sv[0]);
	chan_limit(&c, &chan_peer_limits);

	send_raw(sv[1], "{\"t\": \"reply\"}", 14);
	while (chan_fill(&c) > 0)
		;
	m = chan_next(&c, NULL, NULL, &bad);
	tap_ok(m != NULL && !bad, "a frame within the limits is parsed");
	json_decref(m);

	/* only the header: refused before 64 MiB are buffered */
	send_raw(sv[1], "", CHAN_PEER_FRAME + 1);
	while (chan_fill(&c) > 0)
		;
	m = chan_next(&c, NULL, NULL, &bad);
	tap_ok(m == NULL && bad && strstr(c.why, "over the limits of 67108864") != NULL,
	    "a header over the frame limit is refused before its body "
	    "(%s)", c.why);
	chan_close(&c);
	close(sv[1]);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) == -1)
		abort();
	chan_init(&c, sv[0]);
	chan_limit(&c, &chan_peer_limits);
	text = repeat("[", "[]", 200000, "]");
	if (fork() == 0) {
		close(sv[0]);
		set_nonblock(sv[1], false);
		send_raw(sv[1], text, (uint32_t)strlen(text));
		_exit(0);
	}
	do {
		while (chan_fill(&c) > 0)
			;
		m = chan_next(&c, NULL, NULL, &bad);
	} while (m == NULL && !bad);
	tap_ok(m == NULL && bad && strstr(c.why, "values") != NULL,
	    "200000 empty arrays are refused unparsed (%s)", c.why);
	chan_close(&c);
	close(sv[1]);
	while (wait(NULL) > 0)
		;

	/* the sender weighs its frame with the same limits */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) == -1)
		abort();
	free(text);
	/* small in bytes (a socket buffer holds it), over the depth limit */
	text = xmalloc(2 * CHAN_PEER_DEPTH + 3);
	memset(text, '[', CHAN_PEER_DEPTH + 1);
	memset(text + CHAN_PEER_DEPTH + 1, ']', CHAN_PEER_DEPTH + 1);
	text[2 * CHAN_PEER_DEPTH + 2] = '\0';
	m = json_loads(text, 0, NULL);
	errno = 0;
	tap_ok(m != NULL && chan_send_within(sv[1], m, NULL, 0,
	    &chan_peer_limits) == -1 && errno == EMSGSIZE,
	    "a frame over the limits is not sent (EMSGSIZE)");
	tap_ok(recv(sv[0], text, 1, MSG_DONTWAIT) == -1 && errno == EAGAIN,
	    "and nothing of it was written");
	tap_ok(chan_send(sv[1], m, NULL, 0) == 0,
	    "a trusted sender's frame has only the byte limit");
	json_decref(m);
	free(text);
	/* a key and a string over theirs, small enough to be sent */
	text = padded("", 'k', CHAN_PEER_KEY + 1, "");
	m = json_pack("{s:i}", text, 1);
	errno = 0;
	tap_ok(m != NULL && chan_send_within(sv[1], m, NULL, 0,
	    &chan_peer_limits) == -1 && errno == EMSGSIZE,
	    "an object key over its limit is not sent (EMSGSIZE)");
	json_decref(m);
	free(text);
	text = padded("", 's', CHAN_PEER_STRING + 1, "");
	m = json_pack("{s:s}", "result", text);
	errno = 0;
	tap_ok(m != NULL && chan_send_within(sv[1], m, NULL, 0,
	    &chan_peer_limits) == -1 && errno == EMSGSIZE,
	    "a string over its limit is not sent (EMSGSIZE)");
	json_decref(m);
	free(text);
	close(sv[0]);
	close(sv[1]);
}

int
main(void)
{
	test_scan();
	test_chan();
	return tap_done();
}
