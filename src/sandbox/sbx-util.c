/*
 * sbx-util.c: the small helpers every piece of the sandbox uses (see
 * sbx.h): allocation that ends the process only when memory is out, the
 * error buffer and the report's marks, whole-file reads and writes.
 *
 * Only out of memory ends a process here; everything else fails closed
 * through the caller.  Never the supervisor's teardown: the sandbox runs
 * in init and the worker.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit.h"
#include "util.h"

/* Device nodes bound into the new /dev (sbx-root.c), and allowed by
 * Landlock (sbx-landlock.c). */
const char *const sbx_dev_nodes[] = {
	"null", "zero", "full", "random", "urandom",
};
const size_t sbx_n_dev_nodes = sizeof sbx_dev_nodes / sizeof *sbx_dev_nodes;

static void
sbx_fatal(const char *what)
{
	coil_error("sandbox: %s: %s", what, strerror(errno));
	_exit(EXIT_NOMEM);
}

void *
sbx_realloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		sbx_fatal("out of memory");
	return p;
}

char *
sbx_strdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		sbx_fatal("out of memory");
	return p;
}

char *
sbx_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		sbx_fatal("out of memory");
	va_end(ap);
	return s;
}

void
sbx_strv_add(struct sbx_strv *sv, const char *s)
{
	sv->v = sbx_realloc(sv->v, (sv->n + 1) * sizeof *sv->v);
	sv->v[sv->n++] = sbx_strdup(s);
}

void
sbx_seterr(char *err, size_t len, int e, const char *hint, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (err == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (e != 0 && n < len)
		n += snprintf(err + n, len - n, ": %s", strerror(e));
	if (hint != NULL && n < len)
		snprintf(err + n, len - n, "; %s", hint);
}

void
sbx_mark(struct sandbox_report *r, enum sandbox_mech m, enum sandbox_state st,
    int e, const char *fmt, ...)
{
	va_list ap;

	r->m[m].state = st;
	r->m[m].err = e;
	va_start(ap, fmt);
	vsnprintf(r->m[m].detail, sizeof r->m[m].detail, fmt, ap);
	va_end(ap);
}

bool
sbx_is_on(const struct sandbox_report *r, enum sandbox_mech m)
{
	return r->m[m].state == SANDBOX_ON;
}

bool
sbx_skipped(const struct sandbox_conf *c, struct sandbox_report *r,
    enum sandbox_mech m)
{
	if (!(c->skip & (1U << m)))
		return false;
	sbx_mark(r, m, SANDBOX_MISSING, 0, "not tried: skipped on request");
	return true;
}

int
sbx_write_file(const char *path, const char *s)
{
	int fd, e;
	ssize_t n;

	/* fs(proc): /proc and cgroup files only (the callers') */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	if (n != (ssize_t)strlen(s)) {
		errno = n < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

ssize_t
sbx_read_file(const char *path, char *buf, size_t len)
{
	int fd;
	ssize_t n, got = 0;

	/* fs(proc): /proc and cgroup files only (the callers') */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

void
sbx_fmt_size(char *buf, size_t len, unsigned long long b)
{
	static const char u[] = "KMGTPE";
	int i = -1;

	if (b < 1024 || b % 1024 != 0) {
		snprintf(buf, len, "%llu", b);
		return;
	}
	while (b >= 1024 && b % 1024 == 0 && i < 5) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, "%llu%c", b, u[i]);
}

/*
 * The supervisor a session's name (coil.<N>, coil-<N>-XXXXXX) stands for:
 * N itself, or for the probe's sessions, numbered above any pid,
 * N - WORKER_UID_SPAN.  Is it gone?  Asked in the supervisor's own PID
 * namespace, where those pids were taken.  A pid reused since reads as
 * alive: the stale thing waits for a later sweep, never the reverse.
 */
bool
sbx_owner_dead(long n)
{
	if (n >= WORKER_UID_SPAN)
		n -= WORKER_UID_SPAN;
	if (n <= 0 || n >= WORKER_UID_SPAN)
		return false;
	return kill((pid_t)n, 0) < 0 && errno == ESRCH;
}
