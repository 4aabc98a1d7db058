/*
 * util.h - small helpers shared by every process of coil.
 *
 * Out of memory and broken invariants end the process with a message
 * (fatal), so callers never check the x* allocators for NULL.  Time is
 * CLOCK_MONOTONIC in milliseconds or nanoseconds.
 */
#ifndef COIL_UTIL_H
#define COIL_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "exit.h"

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
int xasprintf(char **out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Print "coil: MSG" (plus ": strerror(errnum)" when errnum is not 0) and
 * end the process.  In the supervisor (the process that called
 * fatal_set_teardown) the teardown runs first and the status is 1; any
 * other process _exits with code.  fatal and fatal_errno use
 * EXIT_INTERNAL and errno; the x* allocators EXIT_NOMEM.
 */
void fatal_code(int code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatal_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * Tell the person at the terminal, on stderr in one write: "coil: "
 * KIND MSG.  coil_error says "coil: MSG", coil_warn "coil: warning:
 * MSG", coil_note "coil: note: MSG".  Every message of coil's own to
 * stderr goes through these or fatal*; errno is kept.
 */
void coil_say(const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define coil_error(...)	coil_say("", __VA_ARGS__)
#define coil_warn(...)	coil_say("warning: ", __VA_ARGS__)
#define coil_note(...)	coil_say("note: ", __VA_ARGS__)

/* Supervisor, once: what fatal runs before the supervisor ends (kill the
 * session, remove its cgroup and temp dir).  Bound to the calling pid, so
 * a child forked later never runs it, even if it forgets to clear it. */
void fatal_set_teardown(void (*teardown)(void));

/* Fill an error buffer; always returns -1 so callers can "return err_set(...)". */
int err_set(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

uint64_t now_ns(void);
int64_t now_ms(void);

/* A C string of the n bytes at s; a NUL among them is written \x00,
 * as Python's repr shows one, so that what follows it is kept. */
char *xstrndup_nul(const char *s, size_t n);

/* A growable byte buffer.  buf_free releases the memory; buf_take hands
 * it (NUL-terminated) to the caller and leaves the buffer empty. */
struct buf {
	char *p;
	size_t len, cap;
};
void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_addstr(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_consume(struct buf *b, size_t n);	/* drop the first n bytes */
char *buf_take(struct buf *b);

int set_nonblock(int fd, bool on);
int set_cloexec(int fd, bool on);
/* write all of p, retrying on EINTR/EAGAIN (polls on EAGAIN); 0 or -1 */
int write_all(int fd, const void *p, size_t n);

/* Close every descriptor from 3 up except the n in keep: what a new
 * process of coil must not inherit from the one that forked it. */
void close_fds_except(const int *keep, int n);

/* Parse "512M", "4G", "1.5GiB", "100k", "1024" (bytes); 0 or -1, also
 * for a negative, infinite or NaN number or one past 2^64. */
int parse_size(const char *s, unsigned long long *out);
/* Describe a wait status: "exit status 3", "signal 11 (Segmentation fault)". */
void describe_wait(int status, char *out, size_t len);

#endif
