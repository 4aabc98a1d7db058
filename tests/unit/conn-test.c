/*
 * conn-test.c - a client connection (TAP): lines as a client sends
 * them, in any pieces, bounded by max_line; answers queued behind a
 * client that reads slowly or not at all, bounded by max_queue; a client
 * that goes away.  On real socketpairs and pipes, never blocking: an
 * alarm ends the test if anything does.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conn.h"
#include "tap.h"
#include "util.h"

/* What the conn served, as "line|" and "<too long: N>|" in order. */
static struct buf got;

static void
on_line(void *ctx, const char *p, size_t n)
{
	buf_add(&got, p, n);
	if (p[n] != '\0')
		buf_addstr(&got, "<not NUL-terminated>");
	buf_addstr(&got, "|");
}

static void
on_too_long(void *ctx, size_t bytes, const char *head, size_t headlen)
{
	buf_printf(&got, "<too long: %zu, %.*s>|", bytes, headlen > 16 ? 16 :
	    (int)headlen, head);
	if (headlen > 16)
		buf_printf(&got, "<head %zu>|", headlen);
}

static const struct conn_ops ops = { on_line, on_too_long };

static void
pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		abort();
}

static void
put(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		abort();
}

static bool
got_is(const char *want, const char *desc)
{
	bool ok = tap_is_mem(got.p != NULL ? got.p : "", got.len, want,
	    strlen(want), desc);

	buf_free(&got);
	return ok;
}

/* Each piece written, then read by the conn; then end of input if eof. */
static int
feed(struct conn *c, int peer, const char *const *pieces, bool eof)
{
	int rc = 0;

	for (; *pieces != NULL; pieces++) {
		put(peer, *pieces);
		rc = conn_read(c, &ops, NULL);
	}
	if (eof) {
		shutdown(peer, SHUT_WR);
		rc = conn_read(c, &ops, NULL);
	}
	return rc;
}

static void
test_lines(void)
{
	static const char *split[] = { "ab", "c\nde", "f\n", "g", NULL };
	static const char *crlf[] = { "x\r\n\r\na\rb\n", "\n", "y\r", "\n",
		NULL };
	struct conn c;
	int sv[2];

	pair(sv);
	conn_init(&c, sv[0], sv[0], 100, 1000);
	tap_is_ull(feed(&c, sv[1], split, false), 0, "a read in mid-input "
	    "returns 0");
	got_is("abc|def|", "lines split across reads come whole; the "
	    "incomplete one waits");
	tap_is_ull(feed(&c, sv[1], (const char *[]){ NULL }, true),
	    (unsigned long long)-1, "end of input returns -1");
	got_is("g|", "at end of input the last line is served without "
	    "its newline");
	tap_ok(c.eof && c.read_errno == 0 && conn_dropped(&c) == NULL,
	    "end of input is eof, not an error or a drop");
	tap_ok(conn_read(&c, &ops, NULL) == -1 && got.len == 0,
	    "reading after the end serves nothing");
	conn_free(&c);
	close(sv[1]);

	pair(sv);
	conn_init(&c, sv[0], sv[0], 100, 1000);
	feed(&c, sv[1], crlf, true);
	got_is("x||a\rb||y|", "CRLF: one trailing \\r is stripped, inner ones "
	    "kept; blank lines are delivered");
	conn_free(&c);
	close(sv[1]);
}

static void
test_too_long(void)
{
	static const char *exact[] = { "12345678\n", "123456789\n", "ok\n",
		NULL };
	static const char *pieces[] = { "1234", "5678", "9", "abc\nok",
		"\n", NULL };
	static const char *at_eof[] = { "fine\n0123456789abcdef", NULL };
	struct conn c;
	char *big;
	int sv[2], i;
	size_t peak = 0;

	pair(sv);
	conn_init(&c, sv[0], sv[0], 8, 1000);
	feed(&c, sv[1], exact, false);
	got_is("12345678|<too long: 9, 123456789>|ok|", "a line of max_line "
	    "bytes is served, one more is skipped and counted (its head kept), "
	    "the next one served");
	feed(&c, sv[1], pieces, false);
	got_is("<too long: 12, 123456789>|ok|", "a line that passes the limit in "
	    "pieces is counted whole once its end is seen");
	feed(&c, sv[1], (const char *[]){ "1234567\r\n", NULL }, false);
	got_is("1234567|", "max_line counts the \\r (8 bytes before "
	    "the newline)");
	feed(&c, sv[1], at_eof, true);
	got_is("fine|<too long: 16, 0123456789abcdef>|", "an over-long last line is reported "
	    "at end of input");
	conn_free(&c);
	close(sv[1]);

	/* 4 MiB in one line, limit 1 KiB: the buffer stays one read big. */
	pair(sv);
	conn_init(&c, sv[0], sv[0], 1024, 1000);
	big = xmalloc(64 * 1024 + 1);
	memset(big, 'x', 64 * 1024);
	big[64 * 1024] = '\0';
	for (i = 0; i < 64; i++) {
		put(sv[1], big);
		while (conn_read(&c, &ops, NULL) == 0 && c.in.len > 0 &&
		    !c.skipping)
			;
		if (c.in.cap > peak)
			peak = c.in.cap;
	}
	put(sv[1], "\nafter\n");
	conn_read(&c, &ops, NULL);
	got_is("<too long: 4194304, xxxxxxxxxxxxxxxx>|<head 4096>|after|",
	    "a 4 MiB line is skipped and counted, its first 4 KiB kept");
	tap_ok(peak <= 2 * (64 * 1024 + 1024 + 1), "and never held: the "
	    "input buffer peaked at %zu bytes", peak);
	free(big);
	conn_free(&c);
	close(sv[1]);
}

/* A message of n bytes: "<k>:" then letters, ending in '\n'. */
static char *
message(int k, size_t n)
{
	char *m = xmalloc(n + 1);
	size_t i;
	int h = snprintf(m, n + 1, "%d:", k);

	for (i = (size_t)h; i < n; i++)
		m[i] = (char)('a' + (k + i) % 26);
	m[n - 1] = '\n';
	m[n] = '\0';
	return m;
}

/* Send 1 KiB messages to a peer that never reads, until the conn is
 * dropped or max messages went; how many went. */
static int
flood(struct conn *c, int max)
{
	char *m = message(0, 1024);
	int k;

	for (k = 0; k < max; k++)
		if (conn_send(c, m, 1024) == -1)
			break;
	free(m);
	return k;
}

static void
test_pollfds(void)
{
	struct pollfd pfd[2];
	struct conn c;
	int sv[2];

	pair(sv);
	conn_init(&c, sv[0], sv[0], 100, 100 << 20);
	conn_pollfds(&c, pfd);
	tap_ok(pfd[0].fd == sv[0] && pfd[0].events == POLLIN &&
	    pfd[1].fd == -1, "nothing waiting: POLLIN only");
	while (conn_pending(&c) == 0)
		flood(&c, 1);
	conn_pollfds(&c, pfd);
	tap_ok(pfd[0].fd == sv[0] && pfd[1].fd == sv[0] &&
	    pfd[1].events == POLLOUT, "bytes waiting: POLLOUT too");
	tap_ok(poll(&pfd[1], 1, 0) == 0, "and the socket is really full");
	conn_free(&c);
	close(sv[1]);
}

static void
test_never_reads(void)
{
	struct pollfd pfd[2];
	struct conn c;
	int64_t t0 = now_ms();
	int sv[2], k;
	const char *why;

	pair(sv);
	conn_init(&c, sv[0], sv[0], 100, 64 * 1024);
	k = flood(&c, 100000);
	why = conn_dropped(&c);
	tap_ok(k < 100000 && why != NULL, "a client that never reads is "
	    "dropped after %d messages", k);
	tap_ok(why != NULL && strstr(why, "the client stopped reading: ") ==
	    why && strstr(why, "(limit 65536)") != NULL, "saying why: %s",
	    why != NULL ? why : "(nothing)");
	tap_ok(now_ms() - t0 < 2000, "without blocking (%lld ms)",
	    (long long)(now_ms() - t0));
	tap_ok(conn_pending(&c) == 0 && c.out.p == NULL, "its queue is "
	    "freed");
	conn_pollfds(&c, pfd);
	put(sv[1], "late\n");
	tap_ok(pfd[0].fd == -1 && pfd[1].fd == -1 &&
	    conn_read(&c, &ops, NULL) == -1 && got.len == 0 &&
	    conn_send(&c, "x\n", 2) == -1 && conn_flush(&c) == -1,
	    "a dropped conn polls, reads and writes nothing");
	conn_free(&c);
	close(sv[1]);
}

/* Messages of every size around the socket's buffer, the peer reading
 * a little less than is sent: the queue grows slowly, is written in
 * pieces and compacted often, and what the peer reads is what was
 * sent, in order. */
static void
test_slow_reader(void)
{
	struct buf want, read_back;
	struct pollfd pfd[2];
	struct conn c;
	char chunk[700];
	int sv[2], i, k, small = 4096;
	ssize_t n;
	bool queued = false;

	pair(sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
	conn_init(&c, sv[0], sv[0], 100, 8 << 20);
	buf_init(&want);
	buf_init(&read_back);
	for (k = 0; k < 3000; k++) {
		char *m = message(k, 20 + (size_t)(k * 37) % 3000);

		buf_addstr(&want, m);
		conn_send(&c, m, strlen(m));
		free(m);
		queued |= conn_pending(&c) > 0;
		for (i = 0; i < 2; i++)
			if ((n = recv(sv[1], chunk, sizeof chunk, MSG_DONTWAIT)) > 0)
				buf_add(&read_back, chunk, (size_t)n);
		conn_pollfds(&c, pfd);
		if (pfd[1].fd != -1 && poll(&pfd[1], 1, 0) == 1)
			conn_flush(&c);
	}
	while (conn_pending(&c) > 0 && conn_dropped(&c) == NULL) {
		if ((n = recv(sv[1], chunk, sizeof chunk, MSG_DONTWAIT)) > 0)
			buf_add(&read_back, chunk, (size_t)n);
		conn_flush(&c);
	}
	conn_free(&c);
	while ((n = read(sv[1], chunk, sizeof chunk)) > 0)
		buf_add(&read_back, chunk, (size_t)n);
	tap_ok(queued, "the queue was used");
	tap_ok(read_back.len == want.len && memcmp(read_back.p, want.p,
	    want.len) == 0, "a slow reader gets all %zu bytes, in order "
	    "(got %zu)", want.len, read_back.len);
	buf_free(&want);
	buf_free(&read_back);
	close(sv[1]);
}

/* One read a call: a client sending without pause cannot keep the
 * loop in its conn_read. */
static void
test_bounded_read(void)
{
	struct conn c;
	char *lines = xmalloc(80001);
	size_t i, served = 0;
	int sv[2];

	for (i = 0; i < 80000; i += 2)
		memcpy(lines + i, "x\n", 2);
	lines[80000] = '\0';
	pair(sv);
	conn_init(&c, sv[0], sv[0], 100, 1000);
	put(sv[1], lines);
	conn_read(&c, &ops, NULL);
	for (i = 0; i < got.len; i++)
		served += got.p[i] == '|';
	buf_free(&got);
	tap_is_ull(served, 65536 / 2, "one conn_read serves one read's "
	    "lines (64 KiB)");
	conn_read(&c, &ops, NULL);
	for (i = 0; i < got.len; i++)
		served += got.p[i] == '|';
	buf_free(&got);
	tap_is_ull(served, 40000, "the next one the rest");
	free(lines);
	conn_free(&c);
	close(sv[1]);
}

/* max_queue bounds a backlog, not a message: one big answer to a
 * client that reads is queued whole; anything behind it must fit. */
static void
test_big_message(void)
{
	struct conn c;
	char *big = message(1, 300 * 1024);
	int sv[2], small = 4096;

	pair(sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
	conn_init(&c, sv[0], sv[0], 100, 1000);
	tap_ok(conn_send(&c, big, 300 * 1024) == 0 && conn_pending(&c) > 1000,
	    "a 300 KiB answer into an empty queue is taken (limit 1000)");
	tap_ok(conn_send(&c, "next\n", 5) == -1 && conn_dropped(&c) != NULL,
	    "a message behind it that passes the limit drops the client");
	free(big);
	conn_free(&c);
	close(sv[1]);
}

static void
test_peer_gone(void)
{
	struct conn c;
	const char *why;
	int sv[2];

	pair(sv);
	conn_init(&c, sv[0], sv[0], 100, 1000);
	close(sv[1]);
	tap_ok(conn_send(&c, "hello\n", 6) == -1, "a socket whose peer "
	    "closed: the send fails");
	why = conn_dropped(&c);
	tap_ok(why != NULL && strstr(why, "the client went away") == why,
	    "the conn is dropped, no SIGPIPE: %s", why != NULL ? why : "");
	conn_free(&c);
}

static bool
same_flags(int fd, int before)
{
	return fcntl(fd, F_GETFL) == before && !(before & O_NONBLOCK);
}

static void
test_reopen(void)
{
	struct conn c;
	char back[8];
	int p[2], sv[2], fd, before, k;
	FILE *f = tmpfile();

	if (pipe2(p, O_CLOEXEC) == -1 || f == NULL)
		abort();
	before = fcntl(p[1], F_GETFL);
	fd = conn_reopen(p[1], O_WRONLY);
	tap_ok(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK) &&
	    (fcntl(fd, F_GETFD) & FD_CLOEXEC), "conn_reopen of a pipe: a "
	    "non-blocking, close-on-exec descriptor");
	tap_ok(same_flags(p[1], before), "the pipe's own descriptor keeps "
	    "its flags (blocking)");
	tap_ok(write(fd, "via\n", 4) == 4 && read(p[0], back, 4) == 4 &&
	    memcmp(back, "via\n", 4) == 0, "and writes through the new one "
	    "reach the reader");
	close(fd);
	pair(sv);
	errno = 0;
	tap_ok(conn_reopen(sv[0], O_WRONLY) == -1 && errno == ENOTSUP &&
	    conn_reopen(fileno(f), O_WRONLY) == -1 && errno == ENOTSUP,
	    "a socket or a file is not opened anew (ENOTSUP)");
	close(sv[0]);
	close(sv[1]);
	fclose(f);

	/* A blocking pipe nobody reads, kept as it is: polled. */
	conn_init(&c, -1, p[1], 100, 64 * 1024);
	tap_ok(c.wio == CONN_IO_POLLED && c.eof && c.rfd == -1,
	    "a blocking pipe given as it is is polled; no input: eof");
	k = flood(&c, 100000);
	tap_ok(conn_dropped(&c) != NULL && same_flags(p[1], before),
	    "a full blocking pipe: dropped after %d messages, never blocked, "
	    "flags unchanged", k);
	conn_free(&c);
	close(p[0]);

	if (pipe2(p, O_CLOEXEC) == -1)
		abort();
	conn_init(&c, -1, p[1], 100, 1000);
	close(p[0]);
	tap_ok(conn_send(&c, "hello\n", 6) == -1 && conn_dropped(&c) != NULL &&
	    strstr(conn_dropped(&c), "Broken pipe") != NULL, "a pipe whose "
	    "reader closed: dropped, and SIGPIPE never reached us");
	conn_free(&c);
}

/* Standard input and output on pipes, as under a tool loop. */
static void
test_stdio(void)
{
	struct conn c;
	char back[16];
	int in[2], out[2], save0 = dup(0), save1, fl0, fl1, k;
	bool own, plain, served, open01, flags, resp;

	fflush(stdout);
	save1 = dup(1);
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    save0 < 0 || save1 < 0 || dup2(in[0], 0) == -1 ||
	    dup2(out[1], 1) == -1)
		abort();
	fl0 = fcntl(0, F_GETFL);
	fl1 = fcntl(1, F_GETFL);
	conn_init_stdio(&c, 100, 64 * 1024);
	own = c.own_rfd && c.own_wfd && c.rfd > 2 && c.wfd > 2;
	plain = c.rio == CONN_IO_PLAIN && c.wio == CONN_IO_PLAIN;
	put(in[1], "req\n");
	close(in[1]);
	served = conn_read(&c, &ops, NULL) == 0 &&
	    conn_read(&c, &ops, NULL) == -1 && c.eof;
	conn_send(&c, "resp\n", 5);
	k = flood(&c, 100000);
	flags = same_flags(0, fl0) && same_flags(1, fl1);
	conn_free(&c);
	open01 = fcntl(0, F_GETFD) != -1 && fcntl(1, F_GETFD) != -1;
	resp = read(out[0], back, 5) == 5 && memcmp(back, "resp\n", 5) == 0;
	dup2(save0, 0);
	dup2(save1, 1);
	close(save0);
	close(save1);
	tap_ok(own && plain, "stdio on pipes: both opened anew, "
	    "non-blocking, owned");
	got_is("req|", "a request on standard input is served");
	tap_ok(served, "then end of input");
	tap_ok(resp, "the response reaches standard output");
	tap_ok(conn_dropped(&c) != NULL && k < 100000, "a full stdout pipe "
	    "drops the conn, never blocks (%d messages)", k);
	tap_ok(flags, "fd 0 and 1 keep their flags (no O_NONBLOCK leaks to "
	    "the parent)");
	tap_ok(open01, "conn_free leaves fd 0 and 1 open");
	close(in[0]);
	close(out[0]);
	close(out[1]);
}

static void
test_drain(void)
{
	struct conn c;
	char chunk[4096];
	const char *why;
	int sv[2], k, status, small = 4096;
	size_t total = 0;
	int64_t t0;
	pid_t pid;
	ssize_t n;

	pair(sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
	conn_init(&c, sv[0], sv[0], 100, 4 << 20);
	memset(chunk, 'd', sizeof chunk);
	for (k = 0; k < 1024; k++)
		conn_send(&c, chunk, sizeof chunk / 4);
	tap_ok(conn_pending(&c) > 0, "%zu bytes queued at the end",
	    conn_pending(&c));
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		while ((n = read(sv[1], chunk, sizeof chunk)) > 0) {
			total += (size_t)n;
			usleep(100);
		}
		_exit(total == 1024 * sizeof chunk / 4 ? 0 : 1);
	}
	close(sv[1]);
	tap_ok(conn_drain(&c, 10000) == 0 && conn_pending(&c) == 0,
	    "conn_drain writes them all to a slow reader");
	conn_free(&c);
	tap_ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0, "which got every byte");

	pair(sv);
	conn_init(&c, sv[0], sv[0], 100, 4 << 20);
	while (conn_pending(&c) == 0)
		flood(&c, 1);
	t0 = now_ms();
	k = conn_drain(&c, 100);
	why = conn_dropped(&c);
	tap_ok(k == -1 && why != NULL &&
	    strstr(why, "the client did not read the last ") == why,
	    "a client that does not read: conn_drain gives up: %s",
	    why != NULL ? why : "");
	tap_ok(now_ms() - t0 >= 100 && now_ms() - t0 < 1000, "after its "
	    "timeout (%lld ms)", (long long)(now_ms() - t0));
	conn_free(&c);
	close(sv[1]);
}

int
main(void)
{
	/* The default: a SIGPIPE would kill the test, which is the point. */
	signal(SIGPIPE, SIG_DFL);
	alarm(20);
	buf_init(&got);
	test_lines();
	test_too_long();
	test_pollfds();
	test_never_reads();
	test_slow_reader();
	test_bounded_read();
	test_big_message();
	test_peer_gone();
	test_reopen();
	test_stdio();
	test_drain();
	return tap_done();
}
