/*
 * hot-test.c - the worker's copy-ahead after a checkpoint's fork
 * (ckpt-hot.c), and the request it must give way to (TAP).
 *
 * On this process's own memory: after a fork (a child holds the pages
 * too) the copy-ahead makes the pages it was given this process's alone
 * again (pagemap's exclusive bit): all of them and no other when nothing
 * waits, across runs many copy steps long; none when a request waits on
 * the watched descriptor.  And chan_pending, by which
 * the worker sees a request that came in one read with the checkpoint's
 * order (the socket then shows nothing, and the first cell of every
 * session waited for the whole interpreter to be copied).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "ckpt.h"
#include "tap.h"
#include "util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23		/* Linux 5.14 */
#endif
#define PM_EXCLUSIVE	(1ULL << 56)
#define PAGES		1024
#define RANGES		4		/* each many copy steps long */

static size_t psize;

/* How many of the n pages at p are mapped by this process alone. */
static size_t
exclusive(const char *p, size_t n)
{
	uint64_t e;
	size_t i, count = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		return 0;
	for (i = 0; i < n; i++) {
		uintptr_t a = (uintptr_t)(p + i * psize);

		if (pread(fd, &e, sizeof e, (off_t)(a / psize * sizeof e)) ==
		    (ssize_t)sizeof e && (e & PM_EXCLUSIVE))
			count++;
	}
	close(fd);
	return count;
}

/* A child that holds every page shared until killed. */
static pid_t
share(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void
unshare_done(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The region written, then shared with a child; *h holds it as RANGES
 * runs of pages, as a scan would have found them (a scan covers the
 * whole process: under a sanitizer, terabytes of shadow).  False when
 * the fork fails. */
static bool
setup(char *p, struct ckpt_hot *h, pid_t *kid)
{
	size_t i, len = PAGES / RANGES * psize;

	memset(p, 1, PAGES * psize);
	memset(h, 0, sizeof *h);
	h->psize = (long)psize;
	h->start = xmalloc(RANGES * sizeof *h->start);
	h->len = xmalloc(RANGES * sizeof *h->len);
	for (i = 0; i < RANGES; i++) {
		/* a page left out between runs, so that they are apart */
		h->start[i] = (uintptr_t)p + i * len;
		h->len[i] = len - psize;
		h->pages += PAGES / RANGES - 1;
	}
	h->n = h->cap = RANGES;
	*kid = share();
	return *kid > 0;
}

static void
test_copy(char *p)
{
	struct ckpt_hot h;
	pid_t kid;

	size_t want = PAGES - RANGES;

	if (!tap_ok(setup(p, &h, &kid), "fork a child to share the pages"))
		return;
	tap_ok(exclusive(p, PAGES) == 0, "after the fork they are shared");
	ckpt_hot_prefault(&h, -1);
	tap_ok(exclusive(p, PAGES) == want, "with nothing to wait for, "
	    "every page of the runs is copied ahead, in steps, and no "
	    "other: %zu of %zu", exclusive(p, PAGES), want);
	tap_ok(h.n == 0 && h.pages == 0, "and the set is spent");
	unshare_done(kid);
	ckpt_hot_free(&h);
}

static void
test_waiting(char *p)
{
	struct ckpt_hot h;
	int fds[2];
	pid_t kid;

	if (pipe(fds) == -1 || write(fds[1], "x", 1) != 1 ||
	    !setup(p, &h, &kid)) {
		tap_ok(false, "set up the waiting request");
		return;
	}
	ckpt_hot_prefault(&h, fds[0]);
	tap_ok(exclusive(p, PAGES) == 0, "a request waiting: no page is "
	    "copied (%zu were)", exclusive(p, PAGES));
	unshare_done(kid);
	ckpt_hot_free(&h);
	close(fds[0]);
	close(fds[1]);
}

/* Two frames in one read: one taken, the other pending in the buffer
 * while the socket is empty. */
static void
test_pending(void)
{
	struct chan c;
	json_t *a = json_pack("{s:s}", "op", "ckpt");
	json_t *b = json_pack("{s:s}", "op", "exec");
	json_t *m;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    chan_send(sv[1], a, NULL, 0) == -1 ||
	    chan_send(sv[1], b, NULL, 0) == -1) {
		tap_ok(false, "set up two frames");
		return;
	}
	chan_init(&c, sv[0]);
	tap_ok(!chan_pending(&c), "nothing pending before a read");
	m = chan_recv(&c, NULL, NULL);
	tap_ok(m != NULL && json_equal(m, a) && chan_pending(&c),
	    "after the first frame, the second is pending");
	json_decref(m);
	m = chan_recv(&c, NULL, NULL);
	tap_ok(m != NULL && json_equal(m, b) && !chan_pending(&c),
	    "after the second, nothing is");
	json_decref(m);
	json_decref(a);
	json_decref(b);
	chan_close(&c);
	close(sv[1]);
}

int
main(void)
{
	char *p;

	psize = (size_t)sysconf(_SC_PAGESIZE);
	alarm(60);
	test_pending();
	p = mmap(NULL, PAGES * psize, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return tap_ok(false, "mmap: %s", strerror(errno)), tap_done();
	/* 4 KiB pages, whatever the machine's transparent huge pages */
	(void)madvise(p, PAGES * psize, MADV_NOHUGEPAGE);
	/* The copy is MADV_POPULATE_WRITE (Linux 5.14). */
	if (madvise(p, psize, MADV_POPULATE_WRITE) == -1 && errno == EINVAL) {
		printf("1..0 # SKIP no MADV_POPULATE_WRITE in this kernel\n");
		return 77;
	}
	test_copy(p);
	test_waiting(p);
	munmap(p, PAGES * psize);
	return tap_done();
}
