/*
 * ui-decode.c - a figure's PNG bytes to pixels, in a confined child.
 *
 * The bytes are a cell's: hostile.  A bug in libpng or zlib, reached by
 * a crafted file, must not be a bug in the supervisor, which runs with
 * the user's rights.  So the supervisor forks, and the child, before it
 * parses a byte, limits its memory and CPU and installs a seccomp filter
 * that kills it on any system call but writing to the one pipe back,
 * managing its own memory and exiting.  It needs no read: fork gave it
 * the bytes.  It decodes with libpng's simplified API (alpha composed on
 * white), scales to the size asked, and writes a fixed header and the
 * pixels.  The parent believes nothing of it: it reads a header of known
 * size, checks the size against what it asked for, reads exactly that
 * many pixels within a deadline, and kills the child whatever happened.
 * Supervisor only; single-threaded (the fork copies one thread).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <png.h>

#include "ui-image.h"
#include "ui-pixels.h"

#define DECODE_MAGIC 0x636f696cU	/* "coil" */
#define DECODE_WAIT_MS 3000
/* The most pixels a source image may have (a 8k x 8k figure), and the
 * memory the child may add to what it inherited. */
#define DECODE_SRC_MAX ((unsigned long long)8192 * 8192)
#define DECODE_AS_MORE ((rlim_t)512 << 20)

struct decode_head {
	uint32_t magic;
	uint32_t ok;		/* 1: pixels follow */
	uint32_t iw, ih;	/* the source's size */
	uint32_t w, h;		/* the pixels' */
	char msg[96];		/* why not, when !ok */
};

bool
ui_decode_confine(int out)
{
	struct rlimit cpu = { 2, 2 }, as;
	scmp_filter_ctx ctx;
	unsigned long pages = 0;
	FILE *f;
	bool ok;

	/* fs(proc): this process's own size, the kernel's */
	f = fopen("/proc/self/statm", "re");
	if (f == NULL || fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	if (f != NULL)
		fclose(f);
	if (pages == 0)
		return false;
	as.rlim_cur = as.rlim_max = (rlim_t)pages *
	    (rlim_t)sysconf(_SC_PAGESIZE) + DECODE_AS_MORE;
	if (setrlimit(RLIMIT_CPU, &cpu) < 0 || setrlimit(RLIMIT_AS, &as) < 0)
		return false;
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (ctx == NULL)
		return false;
	ok = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
	    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)out)) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
	    SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS)) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(brk), 0) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(munmap), 0) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mremap), 0) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit_group),
	    0) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit), 0) == 0 &&
	    /* asked for by the sanitizers' runtime before a call that does
	     * not return (libpng's longjmp, _exit), and by its allocator
	     * for a large block: they name no file */
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sigaltstack),
	    0) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 0) == 0 &&
	    seccomp_load(ctx) == 0;
	seccomp_release(ctx);
	return ok;
}

/* In the child, confined: decode, scale, write.  Never returns. */
static void __attribute__((noreturn))
decode_child(int out, const void *png, size_t n, unsigned bw, unsigned bh)
{
	struct decode_head h = { .magic = DECODE_MAGIC };
	png_image im = { .version = PNG_IMAGE_VERSION };
	png_color white = { 255, 255, 255 };
	uint8_t *src = NULL, *dst = NULL;
	unsigned w, hh;

	if (!png_image_begin_read_from_memory(&im, png, n)) {
		snprintf(h.msg, sizeof h.msg, "not a PNG image (%s)",
		    im.message);
		goto out;
	}
	h.iw = im.width;
	h.ih = im.height;
	if ((unsigned long long)im.width * im.height > DECODE_SRC_MAX) {
		snprintf(h.msg, sizeof h.msg, "too big (%ux%u pixels)",
		    im.width, im.height);
		goto out;
	}
	im.format = PNG_FORMAT_RGB;
	src = malloc(PNG_IMAGE_SIZE(im));
	if (src == NULL || !png_image_finish_read(&im, &white, src, 0,
	    NULL)) {
		snprintf(h.msg, sizeof h.msg, "cannot decode (%s)", src ==
		    NULL ? "out of memory" : im.message);
		goto out;
	}
	pix_fit(im.width, im.height, bw, bh, &w, &hh);
	dst = malloc((size_t)w * hh * 3 + 1);
	if (dst == NULL) {
		snprintf(h.msg, sizeof h.msg, "out of memory");
		goto out;
	}
	pix_scale(src, im.width, im.height, dst, w, hh);
	h.ok = 1;
	h.w = w;
	h.h = hh;
out:
	if (write_all(out, &h, sizeof h) == 0 && h.ok)
		write_all(out, dst, (size_t)h.w * h.h * 3);
	_exit(0);
}

/* Read n bytes from fd by the deadline; false on end, error or time. */
static bool
decode_read(int fd, void *p, size_t n, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t k;
	int64_t left;

	while (got < n) {
		left = deadline - now_ms();
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return false;
		k = read(fd, (char *)p + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

int
ui_decode(const void *png, size_t n, unsigned bw, unsigned bh,
    struct ui_pixmap *pm, char *err, size_t len)
{
	struct decode_head h;
	int fd[2], rc = -1, st;
	pid_t pid;
	size_t size;

	memset(pm, 0, sizeof *pm);
	if (bw == 0 || bh == 0 || bw > UI_PIXMAP_MAX || bh > UI_PIXMAP_MAX)
		return err_set(err, len, "no room for the image");
	if (pipe2(fd, O_CLOEXEC) < 0)
		return err_set(err, len, "cannot decode: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return err_set(err, len, "cannot decode: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fd[0]);
		if (!ui_decode_confine(fd[1]))
			_exit(1);
		decode_child(fd[1], png, n, bw, bh);
	}
	close(fd[1]);
	if (!decode_read(fd[0], &h, sizeof h, now_ms() + DECODE_WAIT_MS) ||
	    h.magic != DECODE_MAGIC) {
		err_set(err, len, "the decoder failed");
		goto out;
	}
	if (!h.ok) {
		h.msg[sizeof h.msg - 1] = '\0';
		err_set(err, len, "%s", h.msg);
		goto out;
	}
	if (h.w == 0 || h.h == 0 || h.w > bw || h.h > bh) {
		err_set(err, len, "the decoder gave a wrong size");
		goto out;
	}
	size = (size_t)h.w * h.h * 3;
	pm->px = xmalloc(size);
	if (!decode_read(fd[0], pm->px, size, now_ms() + DECODE_WAIT_MS)) {
		free(pm->px);
		pm->px = NULL;
		err_set(err, len, "the decoder failed");
		goto out;
	}
	pm->w = h.w;
	pm->h = h.h;
	pm->iw = h.iw;
	pm->ih = h.ih;
	rc = 0;
out:
	close(fd[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return rc;
}
