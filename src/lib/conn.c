/*
 * conn.c - a client connection: bounded line reader, bounded write queue
 * (see conn.h).
 *
 * Invariant of the reader: after conn_lines, c->in holds only the start
 * of one line, no newline in it, at most max_line bytes; a line growing
 * past that is no longer kept, only counted (skipping).  So memory is
 * bounded by max_line plus one read, whatever a client sends.
 *
 * Invariant of the queue: the bytes waiting are out.p[out_off..out.len);
 * the written ones before out_off are reclaimed when the queue empties,
 * or moved out once they are the larger part, so a long queue written a
 * little at a time costs linear time, not quadratic.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"

#define CONN_READ (64 * 1024)

static void __attribute__((format(printf, 2, 3)))
conn_drop(struct conn *c, const char *fmt, ...)
{
	va_list ap;

	if (c->dropped[0] != '\0')
		return;		/* the first reason is the one to tell */
	va_start(ap, fmt);
	vsnprintf(c->dropped, sizeof c->dropped, fmt, ap);
	va_end(ap);
	buf_free(&c->out);
	c->out_off = 0;
}

/* How a descriptor given to conn_init can be used without blocking. */
static enum conn_io
conn_io_of(int fd)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st) == 0) {
		if (S_ISSOCK(st.st_mode))
			return CONN_IO_SOCK;
		if (S_ISREG(st.st_mode))
			return CONN_IO_PLAIN;	/* a disk never blocks long */
	}
	fl = fcntl(fd, F_GETFL);
	if (fl != -1 && (fl & O_NONBLOCK))
		return CONN_IO_PLAIN;
	return CONN_IO_POLLED;
}

static void
conn_setup(struct conn *c, int rfd, int wfd, size_t max_line,
    size_t max_queue)
{
	memset(c, 0, sizeof *c);
	c->rfd = rfd;
	c->wfd = wfd;
	c->max_line = max_line;
	c->max_queue = max_queue;
	buf_init(&c->in);
	buf_init(&c->out);
	c->eof = rfd < 0;
	if (rfd >= 0)
		c->rio = conn_io_of(rfd);
	if (wfd >= 0)
		c->wio = conn_io_of(wfd);
}

void
conn_init(struct conn *c, int rfd, int wfd, size_t max_line,
    size_t max_queue)
{
	conn_setup(c, rfd, wfd, max_line, max_queue);
	c->own_rfd = rfd >= 0;
	c->own_wfd = wfd >= 0 && wfd != rfd;
}

int
conn_reopen(int fd, int mode)
{
	struct stat st;
	char path[64];

	if (fstat(fd, &st) == -1)
		return -1;
	if (!S_ISFIFO(st.st_mode) && !isatty(fd)) {
		errno = ENOTSUP;
		return -1;
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	/* fs(proc): our own stdin or stdout, opened anew through
	 * /proc/self/fd */
	return open(path, mode | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

void
conn_init_stdio(struct conn *c, size_t max_line, size_t max_queue)
{
	int rfd = conn_reopen(0, O_RDONLY), wfd = conn_reopen(1, O_WRONLY);

	/* Where opening anew failed, 0 or 1 itself: conn_io_of then finds
	 * a socket, a file, or a blocking descriptor it must poll. */
	conn_setup(c, rfd >= 0 ? rfd : 0, wfd >= 0 ? wfd : 1, max_line,
	    max_queue);
	c->own_rfd = rfd >= 0;
	c->own_wfd = wfd >= 0;
}

void
conn_free(struct conn *c)
{
	if (c->own_rfd && c->rfd >= 0)
		close(c->rfd);
	if (c->own_wfd && c->wfd >= 0 && c->wfd != c->rfd)
		close(c->wfd);
	c->rfd = c->wfd = -1;
	c->own_rfd = c->own_wfd = false;
	buf_free(&c->in);
	buf_free(&c->out);
	c->out_off = 0;
}

size_t
conn_pending(const struct conn *c)
{
	return c->out.len - c->out_off;
}

const char *
conn_dropped(const struct conn *c)
{
	return c->dropped[0] != '\0' ? c->dropped : NULL;
}

void
conn_pollfds(const struct conn *c, struct pollfd pfd[2])
{
	bool alive = c->dropped[0] == '\0';

	pfd[0].fd = alive && !c->eof ? c->rfd : -1;
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	pfd[1].fd = alive && conn_pending(c) > 0 ? c->wfd : -1;
	pfd[1].events = POLLOUT;
	pfd[1].revents = 0;
}

/* For CONN_IO_POLLED: would fd not block now?  An error or hang-up
 * counts as ready: the read or write then says what it is. */
static bool
conn_ready(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, 0) == 1 && p.revents != 0;
}

/* ---- input --------------------------------------------------------- */

static void
conn_serve(const struct conn_ops *ops, void *ctx, char *p, size_t n)
{
	if (n > 0 && p[n - 1] == '\r')
		n--;
	p[n] = '\0';
	ops->line(ctx, p, n);
}

/*
 * Serve the lines completed in c->in and keep the incomplete last one.
 * c->scanned bytes at its start are known to hold no newline (the line
 * that was incomplete last time), so a long line arriving in many reads
 * is searched once, not once a read.
 */
static void
conn_lines(struct conn *c, const struct conn_ops *ops, void *ctx)
{
	char *p = c->in.p, *end = c->in.p + c->in.len, *nl;
	size_t from = c->scanned, n;

	while (p < end && c->dropped[0] == '\0') {
		nl = memchr(p + from, '\n', (size_t)(end - p) - from);
		from = 0;
		n = (size_t)((nl != NULL ? nl : end) - p);
		if (!c->skipping && n > c->max_line) {
			c->skipping = true;
			c->skipped = 0;
			c->headlen = n < CONN_HEAD ? n : CONN_HEAD;
			memcpy(c->head, p, c->headlen);
		}
		if (c->skipping) {
			c->skipped += n;
			if (nl == NULL) {
				p = end;
				break;
			}
			c->skipping = false;
			ops->too_long(ctx, c->skipped, c->head, c->headlen);
		} else if (nl == NULL)
			break;
		else
			conn_serve(ops, ctx, p, n);
		p = nl + 1;
	}
	buf_consume(&c->in, (size_t)(p - c->in.p));
	c->scanned = c->in.len;
	if (!c->eof || c->dropped[0] != '\0')
		return;
	/* The end of input ends the last line too. */
	if (c->skipping) {
		c->skipping = false;
		ops->too_long(ctx, c->skipped, c->head, c->headlen);
	} else if (c->in.len > 0)
		conn_serve(ops, ctx, c->in.p, c->in.len);
	c->in.len = 0;
	c->scanned = 0;
}

int
conn_read(struct conn *c, const struct conn_ops *ops, void *ctx)
{
	ssize_t n;

	if (c->eof || c->dropped[0] != '\0')
		return -1;
	if (c->rio == CONN_IO_POLLED && !conn_ready(c->rfd, POLLIN))
		return 0;
	buf_reserve(&c->in, CONN_READ);
	do {
		if (c->rio == CONN_IO_SOCK)
			n = recv(c->rfd, c->in.p + c->in.len, CONN_READ,
			    MSG_DONTWAIT);
		else
			n = read(c->rfd, c->in.p + c->in.len, CONN_READ);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n < 0) {
		/* ECONNRESET, EIO of a hung-up terminal: the client is
		 * gone as surely as at end of file. */
		c->read_errno = errno;
		c->eof = true;
	} else if (n == 0)
		c->eof = true;
	else {
		c->in.len += (size_t)n;
		c->in.p[c->in.len] = '\0';
	}
	conn_lines(c, ops, ctx);
	return c->eof || c->dropped[0] != '\0' ? -1 : 0;
}

/* ---- output -------------------------------------------------------- */

static _Thread_local bool conn_sigpipe_held;

int
conn_hold_sigpipe(void)
{
	sigset_t pipe_set;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	if (pthread_sigmask(SIG_BLOCK, &pipe_set, NULL) != 0)
		return -1;
	conn_sigpipe_held = true;
	return 0;
}

/*
 * write(2) to a pipe or terminal without SIGPIPE, whatever the caller's
 * disposition: SIGPIPE is blocked around the write and, when the write
 * raised it (EPIPE, and it was not pending before), taken back.  When
 * it is held blocked for good (conn_hold_sigpipe), only taken back: one
 * pending then is always a write's of ours.
 */
static ssize_t
conn_write_nosig(int fd, const char *p, size_t n)
{
	sigset_t pipe_set, old, pending;
	struct timespec zero = { 0, 0 };
	bool was_pending;
	ssize_t w;
	int e;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	if (conn_sigpipe_held) {
		w = write(fd, p, n);
		e = errno;
		if (w < 0 && e == EPIPE)
			while (sigtimedwait(&pipe_set, NULL, &zero) == -1 &&
			    errno == EINTR)
				;
		errno = e;
		return w;
	}
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE) == 1;
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	w = write(fd, p, n);
	e = errno;
	if (w < 0 && e == EPIPE && !was_pending)
		while (sigtimedwait(&pipe_set, NULL, &zero) == -1 &&
		    errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}

/* Write some of p[0..n), n > 0, without blocking: the bytes written
 * (0: the descriptor takes nothing now), or -1 when c is dropped. */
static ssize_t
conn_write(struct conn *c, const char *p, size_t n)
{
	ssize_t w;

	if (c->wio == CONN_IO_POLLED) {
		/* A pipe that polls writable takes PIPE_BUF bytes at once. */
		if (!conn_ready(c->wfd, POLLOUT))
			return 0;
		if (n > PIPE_BUF)
			n = PIPE_BUF;
	}
	do {
		if (c->wio == CONN_IO_SOCK)
			w = send(c->wfd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			w = conn_write_nosig(c->wfd, p, n);
	} while (w < 0 && errno == EINTR);
	if (w >= 0)
		return w;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	if (errno == EPIPE || errno == ECONNRESET) {
		c->left = true;
		conn_drop(c, "the client went away (%s)", strerror(errno));
	} else
		conn_drop(c, "cannot write to the client: %s",
		    strerror(errno));
	return -1;
}

int
conn_flush(struct conn *c)
{
	ssize_t w;

	while (c->dropped[0] == '\0' && conn_pending(c) > 0) {
		w = conn_write(c, c->out.p + c->out_off, conn_pending(c));
		if (w <= 0)
			break;
		c->out_off += (size_t)w;
	}
	if (c->dropped[0] != '\0')
		return -1;
	if (c->out_off == c->out.len)
		c->out.len = c->out_off = 0;
	return 0;
}

/* Append to the queue, first moving out what was written if that is
 * the larger part (so each byte moves at most as often as it doubles
 * what stays: linear overall). */
static void
conn_queue(struct conn *c, const char *p, size_t n)
{
	if (n == 0)
		return;
	if (c->out_off > 0 && c->out_off >= conn_pending(c)) {
		memmove(c->out.p, c->out.p + c->out_off, conn_pending(c));
		c->out.len -= c->out_off;
		c->out_off = 0;
	}
	buf_add(&c->out, p, n);
}

int
conn_send(struct conn *c, const char *p, size_t n)
{
	size_t waiting, done = 0;
	ssize_t w;

	if (conn_flush(c) == -1)
		return -1;
	waiting = conn_pending(c);
	if (waiting > 0 && (waiting > c->max_queue ||
	    n > c->max_queue - waiting)) {
		conn_drop(c, "the client stopped reading: %zu bytes of "
		    "responses were waiting (limit %zu)", waiting + n,
		    c->max_queue);
		return -1;
	}
	/* Bytes already waiting mean the descriptor takes nothing now. */
	while (waiting == 0 && done < n) {
		w = conn_write(c, p + done, n - done);
		if (w < 0)
			return -1;
		if (w == 0)
			break;
		done += (size_t)w;
	}
	conn_queue(c, p + done, n - done);
	return 0;
}

int
conn_drain(struct conn *c, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms, left;
	struct pollfd p;

	while (conn_flush(c) == 0 && conn_pending(c) > 0) {
		left = deadline - now_ms();
		if (left <= 0) {
			conn_drop(c, "the client did not read the last %zu "
			    "bytes within %d ms", conn_pending(c), timeout_ms);
			break;
		}
		p.fd = c->wfd;
		p.events = POLLOUT;
		if (poll(&p, 1, (int)left) == -1 && errno != EINTR) {
			conn_drop(c, "cannot wait for the client: %s",
			    strerror(errno));
			break;
		}
	}
	return c->dropped[0] != '\0' ? -1 : 0;
}
