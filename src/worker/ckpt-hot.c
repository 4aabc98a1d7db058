/*
 * ckpt-hot.c - the worker's side of a checkpoint (see ckpt.h): before a
 * fork it finds the pages it wrote since the last one (pagemap), and
 * after it copies them ahead while the session is idle, so that the
 * next cell does not pay their copy-on-write faults.  Runs in the
 * worker.  No Python.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ckpt.h"
#include "util.h"

/* ---- the worker, around the fork ----------------------------------- */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23		/* Linux 5.14 */
#endif
#define PM_PRESENT	(1ULL << 63)
#define PM_FILE		(1ULL << 61)	/* file page or shared anonymous */
#define PM_EXCLUSIVE	(1ULL << 56)	/* mapped by this process alone */
/* Past this much private writable memory the scan is not worth it. */
#define CKPT_HOT_SCAN_MAX (1UL << 20)	/* pages: 4 GiB */
/* Pages copied between two looks for a request (ckpt_hot_prefault). */
#define CKPT_HOT_STEP	64

/* How many scans running a page is copied ahead: 4 to 12, by a hash of
 * its address. */
static unsigned
ckpt_hot_life(uintptr_t page, size_t psize)
{
	return 4 + (unsigned)(((page / psize) * 0x9E3779B97F4A7C15ULL) >> 59) %
	    9;
}

/* The page's age in the last scan's set (*j walks it, ascending), plus
 * one; 0 when it was not there: then a cell wrote it. */
static unsigned
ckpt_hot_age(const uintptr_t *old, const unsigned char *oldage, size_t nold,
    size_t *j, uintptr_t page)
{
	while (*j < nold && old[*j] < page)
		(*j)++;
	return *j < nold && old[*j] == page ? oldage[*j] + 1U : 0;
}

static void
ckpt_hot_remember(struct ckpt_hot *h, uintptr_t page, unsigned age)
{
	if (h->nseen == h->seencap) {
		h->seencap = h->seencap ? 2 * h->seencap : 256;
		h->seen = xrealloc(h->seen, h->seencap * sizeof *h->seen);
		h->age = xrealloc(h->age, h->seencap * sizeof *h->age);
	}
	h->seen[h->nseen] = page;
	h->age[h->nseen++] = (unsigned char)age;
}

static void
ckpt_hot_add(struct ckpt_hot *h, uintptr_t page, size_t psize)
{
	if (h->n > 0 && h->start[h->n - 1] + h->len[h->n - 1] == page) {
		h->len[h->n - 1] += psize;
	} else {
		if (h->n == h->cap) {
			h->cap = h->cap ? 2 * h->cap : 64;
			h->start = xrealloc(h->start, h->cap * sizeof *h->start);
			h->len = xrealloc(h->len, h->cap * sizeof *h->len);
		}
		h->start[h->n] = page;
		h->len[h->n++] = psize;
	}
	h->pages++;
}

bool
ckpt_hot_scan(struct ckpt_hot *h, size_t max_pages)
{
	uint64_t pm[512];
	size_t psize = (size_t)sysconf(_SC_PAGESIZE), scanned = 0, j = 0;
	size_t nold = h->nseen;
	uintptr_t *old = h->seen;
	unsigned char *oldage = h->age;
	char line[512], perms[8];
	unsigned long lo, hi, a;
	unsigned age;
	FILE *maps;
	int fd;
	bool ok = true;

	h->n = h->pages = 0;
	h->psize = (long)psize;
	h->seen = NULL;
	h->age = NULL;
	h->nseen = h->seencap = 0;
	/* fs(proc): the process's own /proc/self, in the worker or its
	 * checkpoint */
	maps = fopen("/proc/self/maps", "re");
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (maps == NULL || fd == -1) {
		ok = false;
		goto out;
	}
	while (ok && fgets(line, sizeof line, maps) != NULL) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    perms[1] != 'w' || perms[3] != 'p')
			continue;
		for (a = lo; ok && a < hi; ) {
			size_t want = (hi - a) / psize, i;
			ssize_t got;

			if (want > nitems(pm))
				want = nitems(pm);
			got = pread(fd, pm, want * sizeof *pm,
			    (off_t)(a / psize * sizeof *pm));
			if (got <= 0)
				break;
			want = (size_t)got / sizeof *pm;
			for (i = 0; i < want; i++, a += psize) {
				if ((pm[i] & (PM_PRESENT | PM_FILE |
				    PM_EXCLUSIVE)) != (PM_PRESENT | PM_EXCLUSIVE))
					continue;
				age = ckpt_hot_age(old, oldage, nold, &j, a);
				if (age > ckpt_hot_life(a, psize))
					continue;	/* left to the cells */
				ckpt_hot_add(h, a, psize);
				ckpt_hot_remember(h, a, age);
			}
			scanned += want;
			if (h->pages > max_pages || scanned > CKPT_HOT_SCAN_MAX)
				ok = false;
		}
	}
out:
	if (fd != -1)
		close(fd);
	if (maps != NULL)
		fclose(maps);
	if (!ok)
		h->n = h->pages = h->nseen = 0;
	free(old);
	free(oldage);
	return ok;
}

/* Threads of this process, from /proc/self/stat; 0 when unknown. */
static long
ckpt_threads(void)
{
	char buf[1024], *p;
	ssize_t n;
	long v = 0;
	/* fs(proc): the process's own /proc/self, in the worker or its
	 * checkpoint */
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), i;

	if (fd == -1)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* Field 20; the command name (field 2) may hold spaces. */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (i = 2; i < 20 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p != NULL)
		v = strtol(p + 1, NULL, 10);
	return v;
}

/*
 * Read one byte of each page through this process's own mapping, so that
 * a hypervisor that shadows page tables fills its entries now: under one,
 * the first access after a fork costs a hidden fault of its own, whether
 * the page was populated or not.  Alone, the worker reads them itself;
 * with other threads about, one of which might unmap a range meanwhile,
 * it has the kernel read them (writev into a pipe: an EFAULT, never a
 * SIGSEGV), which helps less where user and kernel mappings are shadowed
 * apart.
 */
static void
ckpt_hot_touch(struct ckpt_hot *h, size_t from, size_t to, bool alone)
{
	static int pipefd[2] = { -1, -1 };
	struct iovec iov[256];
	char sink[256];
	size_t i, o;
	int n = 0;

	if (alone) {
		for (i = from; i < to; i++)
			for (o = 0; o < h->len[i]; o += (size_t)h->psize)
				(void)*(volatile const char *)(h->start[i] + o);
		return;
	}
	if (pipefd[0] < 0 && pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) == -1)
		return;
	for (i = from; i < to; i++) {
		for (o = 0; o < h->len[i]; o += (size_t)h->psize) {
			iov[n].iov_base = (void *)(h->start[i] + o);
			iov[n++].iov_len = 1;
			if (n < (int)nitems(iov))
				continue;
			if (writev(pipefd[1], iov, n) > 0)
				while (read(pipefd[0], sink, sizeof sink) > 0)
					;
			n = 0;
		}
	}
	if (n > 0 && writev(pipefd[1], iov, n) > 0)
		while (read(pipefd[0], sink, sizeof sink) > 0)
			;
}

/* Copy range i ahead from offset *off, at most CKPT_HOT_STEP pages of
 * it; *off moves on.  False when the kernel cannot (then nothing more
 * can be). */
static bool
ckpt_hot_copy(struct ckpt_hot *h, size_t i, size_t *off)
{
	size_t step = CKPT_HOT_STEP * (size_t)h->psize, n = h->len[i] - *off;

	if (n > step)
		n = step;
	if (madvise((void *)(h->start[i] + *off), n,
	    MADV_POPULATE_WRITE) == -1) {
		if (errno == EINVAL)
			return false;	/* a kernel without it */
		/* Unmapped meanwhile: not to be read either. */
		h->len[i] = 0;
		*off = 0;
		return true;
	}
	*off += n;
	if (*off >= h->len[i])
		*off = 0;
	return true;
}

/*
 * The watch is looked at every CKPT_HOT_STEP pages copied, however the
 * pages fall into ranges: one range can be the whole heap (thousands of
 * pages, 100 ms on a loaded 2-CPU VM), and a request that came during it
 * would wait for all of it.
 */
void
ckpt_hot_prefault(struct ckpt_hot *h, int watch_fd)
{
	struct pollfd p = { .fd = watch_fd, .events = POLLIN };
	size_t i = 0, off = 0, done = 0;
	bool alone;

	if (h->n == 0)
		return;
	alone = ckpt_threads() == 1;
	while (i < h->n) {
		if (watch_fd >= 0 && poll(&p, 1, 0) == 1)
			break;
		if (!ckpt_hot_copy(h, i, &off))
			break;
		if (off == 0) {
			i++;
			if (i - done >= 16) {
				ckpt_hot_touch(h, done, i, alone);
				done = i;
			}
		}
	}
	ckpt_hot_touch(h, done, i, alone);
	h->n = h->pages = 0;
}

void
ckpt_hot_free(struct ckpt_hot *h)
{
	free(h->start);
	free(h->len);
	free(h->seen);
	free(h->age);
	memset(h, 0, sizeof *h);
}
