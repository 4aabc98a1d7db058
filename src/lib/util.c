/*
 * util.c - allocation, errors, time, buffers and fd helpers.
 * Used by the supervisor, init and the worker alike; nothing here keeps
 * state between calls.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "termsafe.h"
#include "util.h"

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		fatal_code(EXIT_NOMEM, 0, "out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		fatal_code(EXIT_NOMEM, 0, "out of memory (%zu x %zu bytes)",
		    n, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		fatal_code(EXIT_NOMEM, 0, "out of memory (%zu bytes)", n);
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

int
xasprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(out, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal_code(EXIT_NOMEM, 0, "out of memory");
	return n;
}

static void (*fatal_teardown)(void);
static pid_t fatal_teardown_pid;

void
fatal_set_teardown(void (*teardown)(void))
{
	fatal_teardown = teardown;
	fatal_teardown_pid = getpid();
}

static const char *const exit_words[] = {
	[EXIT_NOMEM - EXIT_NOMEM] = "out of memory",
	[EXIT_SANDBOX - EXIT_NOMEM] = "the sandbox could not be set up",
	[EXIT_SETUP - EXIT_NOMEM] = "a descriptor, signal or prctl could "
	    "not be set up",
	[EXIT_PROTOCOL - EXIT_NOMEM] = "the conversation with the supervisor "
	    "broke",
	[EXIT_PYTHON - EXIT_NOMEM] = "python could not start",
	[EXIT_INTERNAL - EXIT_NOMEM] = "an internal error",
};

const char *
exit_describe(int code)
{
	if (code < EXIT_NOMEM || code > EXIT_INTERNAL)
		return NULL;
	return exit_words[code - EXIT_NOMEM];
}

static void __attribute__((noreturn))
vfatal(int code, int errnum, const char *fmt, va_list ap)
{
	char msg[2048];
	int n;

	/* One write: stderr may be a pipe the supervisor reads a line at a
	 * time, and a child's stdio must not be flushed twice. */
	n = snprintf(msg, sizeof msg, "coil: ");
	n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	if (n < (int)sizeof msg && errnum != 0)
		n += snprintf(msg + n, sizeof msg - (size_t)n, ": %s",
		    strerror(errnum));
	if (n >= (int)sizeof msg - 1)
		n = (int)sizeof msg - 2;
	msg[n++] = '\n';
	(void)!write(2, msg, (size_t)n);
	if (fatal_teardown != NULL && getpid() == fatal_teardown_pid) {
		void (*teardown)(void) = fatal_teardown;

		fatal_teardown = NULL;	/* a fatal inside it ends here */
		fflush(stdout);
		teardown();
		_exit(1);
	}
	_exit(code);
}

void
fatal_code(int code, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfatal(code, errnum, fmt, ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfatal(EXIT_INTERNAL, 0, fmt, ap);
}

void
fatal_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vfatal(EXIT_INTERNAL, e, fmt, ap);
}

/* A message may name what a cell or a transcript chose (a file, a
 * variable, a value): to a terminal it goes as termsafe shows a cell's
 * text, so that it cannot drive the terminal; to a pipe as it is. */
static void
coil_say_line(const char *line, size_t n)
{
	struct buf b;

	if (!isatty(2) || termsafe_clean(line, n)) {
		(void)write_all(2, line, n);
		return;
	}
	buf_init(&b);
	termsafe_text(line, n, 0, &b);
	(void)write_all(2, b.p, b.len);
	buf_free(&b);
}

/* One write, as vfatal's: a pipe read a line at a time gets it whole.
 * No allocation for a short message, so an out-of-memory path may say
 * it too. */
void
coil_say(const char *kind, const char *fmt, ...)
{
	char small[1024], *msg = small, *line = small;
	int e = errno, n, k;
	va_list ap;

	va_start(ap, fmt);
	k = snprintf(small, sizeof small, "coil: %s", kind);
	n = k + vsnprintf(small + k, sizeof small - (size_t)k, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof small - 1) {
		va_start(ap, fmt);
		if (vasprintf(&msg, fmt, ap) < 0)
			fatal_code(EXIT_NOMEM, 0, "out of memory");
		va_end(ap);
		n = xasprintf(&line, "coil: %s%s\n", kind, msg);
		free(msg);
	} else {
		small[n++] = '\n';
	}
	coil_say_line(line, (size_t)n);
	if (line != small)
		free(line);
	errno = e;
}

int
err_set(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t
now_ms(void)
{
	return (int64_t)(now_ns() / 1000000u);
}

char *
xstrndup_nul(const char *s, size_t n)
{
	struct buf b;
	size_t i;

	if (memchr(s, '\0', n) == NULL)
		return xstrndup(s, n);
	buf_init(&b);
	buf_addstr(&b, "");
	for (i = 0; i < n; i++) {
		if (s[i] == '\0')
			buf_addstr(&b, "\\x00");
		else
			buf_add(&b, s + i, 1);
	}
	return buf_take(&b);
}

void
buf_init(struct buf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	buf_init(b);
}

void
buf_reserve(struct buf *b, size_t extra)
{
	size_t want = b->len + extra + 1;

	if (want <= b->cap)
		return;
	if (b->cap * 2 > want)
		want = b->cap * 2;
	b->p = xrealloc(b->p, want);
	b->cap = want;
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal_code(EXIT_NOMEM, 0, "out of memory");
	buf_add(b, s, (size_t)n);
	free(s);
}

void
buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
	} else {
		memmove(b->p, b->p + n, b->len - n);
		b->len -= n;
	}
	if (b->p != NULL)
		b->p[b->len] = '\0';
}

char *
buf_take(struct buf *b)
{
	char *p;

	if (b->p == NULL)
		return xstrdup("");
	p = b->p;
	buf_init(b);
	return p;
}

int
set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl == -1)
		return -1;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl);
}

int
set_cloexec(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl == -1)
		return -1;
	fl = on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC);
	return fcntl(fd, F_SETFD, fl);
}

int
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };

				poll(&pfd, 1, -1);
				continue;
			}
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int
parse_size(const char *s, unsigned long long *bytes)
{
	char *end;
	long double v;
	unsigned long long mul = 1;

	errno = 0;
	v = strtold(s, &end);
	/* !(v >= 0) is also true of NaN, which compares false to all */
	if (end == s || errno != 0 || !(v >= 0) || isinf(v))
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 'k': mul = 1ULL << 10; end++; break;
	case 'm': mul = 1ULL << 20; end++; break;
	case 'g': mul = 1ULL << 30; end++; break;
	case 't': mul = 1ULL << 40; end++; break;
	case '\0': break;
	case 'b': break;
	default: return -1;
	}
	if (mul > 1 && tolower((unsigned char)*end) == 'i')
		end++;
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end != '\0')
		return -1;
	v *= mul;
	if (v > 1.8e19L)
		return -1;
	*bytes = (unsigned long long)v;
	return 0;
}

/* A kernel before 5.9 has no close_range: one close a descriptor still
 * open. */
static void
close_fds_proc(const int *keep, int n)
{
	DIR *d;
	struct dirent *e;
	int i;

	/* fs(proc): the kernel's */
	if ((d = opendir("/proc/self/fd")) != NULL) {
		while ((e = readdir(d)) != NULL) {
			int fd = atoi(e->d_name);
			bool keepit = fd < 3 || fd == dirfd(d);

			for (i = 0; i < n; i++)
				keepit = keepit || fd == keep[i];
			if (!keepit && e->d_name[0] != '.')
				close(fd);
		}
		closedir(d);
	}
}

void
close_fds_except(const int *keep, int n)
{
	unsigned int from = 3, k;
	int i, j, *sorted = xmalloc(sizeof(int) * (size_t)(n + 1));

	for (i = 0; i < n; i++) {
		/* insertion sort: n is 1 or 2 */
		for (j = i; j > 0 && sorted[j - 1] > keep[i]; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = keep[i];
	}
	for (i = 0; i <= n; i++) {
		k = i < n ? (unsigned int)sorted[i] : ~0U;
		if (i < n && sorted[i] < 3)
			continue;
		if (k > from && close_range(from, k - 1, 0) == -1) {
			close_fds_proc(keep, n);
			break;
		}
		from = k + 1;
	}
	free(sorted);
}

void
describe_wait(int status, char *out, size_t len)
{
	if (WIFEXITED(status) && exit_describe(WEXITSTATUS(status)) != NULL)
		snprintf(out, len, "exit status %d: %s", WEXITSTATUS(status),
		    exit_describe(WEXITSTATUS(status)));
	else if (WIFEXITED(status))
		snprintf(out, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, len, "signal %d (%s)%s", WTERMSIG(status),
		    strsignal(WTERMSIG(status)),
		    WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(out, len, "wait status %#x", status);
}
