/*
 * decode-test.c - the confinement of the figure decoder's child
 * (src/ui/ui-decode.c's ui_decode_confine), each case in a child of its
 * own that confines itself and then tries one thing: writing to its
 * pipe back works; opening a file, making a socket, writing to another
 * descriptor and mapping a file kill it with SIGSYS; its CPU time and
 * address space are limited (the kernel's /proc/PID/limits says so, an
 * endless loop is killed, a gigabyte is not given).  Then the decoder
 * itself: a PNG decodes, garbage is refused with a reason.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "tap.h"
#include "ui-image.h"

#if defined(__SANITIZE_ADDRESS__)
#define DECODE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DECODE_TEST_ASAN 1
#endif
#endif

enum try { T_WRITE, T_OPEN, T_SOCKET, T_OTHER_FD, T_MAP_FILE, T_SPIN,
	T_BIG };

static int other_fd = -1, file_fd = -1;

/* In the child: confine, then the one thing.  Never returns. */
static void __attribute__((noreturn))
child(int out, enum try t)
{
	char *p;

	if (!ui_decode_confine(out))
		_exit(3);
	switch (t) {
	case T_WRITE:
		(void)!write(out, "w", 1);
		_exit(0);
	case T_OPEN:
		(void)!open("/dev/null", O_RDONLY);
		break;
	case T_SOCKET:
		(void)!socket(AF_UNIX, SOCK_STREAM, 0);
		break;
	case T_OTHER_FD:
		(void)!write(other_fd, "x", 1);
		break;
	case T_MAP_FILE:
		(void)!mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, file_fd, 0);
		break;
	case T_SPIN:
		(void)!write(out, "r", 1);
		for (;;)
			;
	case T_BIG:
		p = malloc((size_t)1 << 30);
		(void)!write(out, p == NULL ? "n" : "y", 1);
		_exit(0);
	}
	_exit(4);		/* it went on: the filter let the call by */
}

/* Run case t; its wait status, and the first byte it wrote (or 0) in
 * *got.  A limits check runs on the spinning child before it is
 * killed by its CPU limit. */
static int
run(enum try t, char *got, bool (*spy)(pid_t))
{
	int fd[2], st = 0;
	struct pollfd pfd;
	pid_t pid;

	*got = 0;
	if (pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		child(fd[1], t);
	}
	close(fd[1]);
	pfd = (struct pollfd){ .fd = fd[0], .events = POLLIN };
	/* 30 s: far past the 2 s of CPU the child may have; a failure
	 * bound, never reached when the limits hold */
	if (poll(&pfd, 1, 30000) == 1 && read(fd[0], got, 1) == 1 &&
	    spy != NULL && !spy(pid))
		*got = '?';
	if (t == T_SPIN) {
		pfd.revents = 0;
		if (poll(&pfd, 1, 30000) != 1)
			kill(pid, SIGKILL);
	}
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static bool
killed_by(int st, int sig)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

/* The kernel's word on pid's limits: CPU 2 s, address space finite. */
static bool
limits_hold(pid_t pid)
{
	char path[64], line[256];
	bool cpu = false, as = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/limits", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "Max cpu time", 12) == 0)
			cpu = strstr(line, " 2 ") != NULL &&
			    strstr(line, "unlimited") == NULL;
		if (strncmp(line, "Max address space", 17) == 0)
			as = strstr(line, "unlimited") == NULL;
	}
	fclose(f);
	tap_ok(cpu, "the child's CPU time is limited to 2 s");
	tap_ok(as, "the child's address space is limited");
	return cpu && as;
}

/* One PNG chunk at p: its length, kind, data and CRC; past it. */
static unsigned char *
png_chunk(unsigned char *p, const char *kind, const unsigned char *d,
    size_t n)
{
	uLong crc;
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(n >> (24 - 8 * i));
	memcpy(p + 4, kind, 4);
	if (n > 0)
		memcpy(p + 8, d, n);
	crc = crc32(0, p + 4, (uInt)(4 + n));
	p += 8 + n;
	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(crc >> (24 - 8 * i));
	return p + 4;
}

/* A w x h (each below 16) RGB PNG of one colour, made here: out's
 * length. */
static size_t
png_make(unsigned char *out, unsigned w, unsigned h)
{
	unsigned char rows[16 * (1 + 3 * 16)], z[4096], ihdr[13] = { 0 };
	unsigned char *p = out;
	uLongf zn = sizeof z;
	size_t n = 0;
	unsigned y, x;

	for (y = 0; y < h; y++) {
		rows[n++] = 0;		/* filter: none */
		for (x = 0; x < w; x++) {
			rows[n++] = 200;
			rows[n++] = 10;
			rows[n++] = 20;
		}
	}
	if (compress(z, &zn, rows, n) != Z_OK)
		return 0;
	memcpy(p, "\x89PNG\r\n\x1a\n", 8);
	ihdr[3] = (unsigned char)w;
	ihdr[7] = (unsigned char)h;
	ihdr[8] = 8;		/* bits a sample */
	ihdr[9] = 2;		/* RGB */
	p = png_chunk(p + 8, "IHDR", ihdr, sizeof ihdr);
	p = png_chunk(p, "IDAT", z, zn);
	p = png_chunk(p, "IEND", NULL, 0);
	return (size_t)(p - out);
}

int
main(void)
{
	int other[2], st;
	char got, err[128], line[256];
	bool seccomp = false;
	struct ui_pixmap pm;
	unsigned char png[8192];
	size_t n;
	FILE *f;

	/* a kernel without seccomp truly lacks the feature */
	f = fopen("/proc/self/status", "r");
	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		seccomp = seccomp || strncmp(line, "Seccomp:", 8) == 0;
	if (f != NULL)
		fclose(f);
	if (!seccomp) {
		printf("1..0 # SKIP the kernel has no seccomp\n");
		return 77;
	}
	if (pipe(other) < 0)
		return 1;
	other_fd = other[1];
	file_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	st = run(T_WRITE, &got, NULL);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && got == 'w',
	    "confined, the child writes to its pipe and exits (status %#x)",
	    st);
	st = run(T_OPEN, &got, NULL);
	tap_ok(killed_by(st, SIGSYS), "open() kills it with SIGSYS "
	    "(status %#x)", st);
	st = run(T_SOCKET, &got, NULL);
	tap_ok(killed_by(st, SIGSYS), "socket() kills it with SIGSYS "
	    "(status %#x)", st);
	st = run(T_OTHER_FD, &got, NULL);
	tap_ok(killed_by(st, SIGSYS), "a write to another descriptor kills "
	    "it with SIGSYS (status %#x)", st);
	st = run(T_MAP_FILE, &got, NULL);
	tap_ok(file_fd >= 0 && killed_by(st, SIGSYS), "mapping a file kills "
	    "it with SIGSYS (status %#x)", st);
	st = run(T_SPIN, &got, limits_hold);
	tap_ok(got == 'r' && (killed_by(st, SIGXCPU) || killed_by(st,
	    SIGKILL)), "an endless loop is ended by the CPU limit (status "
	    "%#x)", st);
#ifdef DECODE_TEST_ASAN
	printf("ok %d # SKIP a gigabyte: AddressSanitizer's allocator dies "
	    "at the limit instead of failing\n", ++tap_count);
#else
	st = run(T_BIG, &got, NULL);
	tap_ok(got == 'n' && WIFEXITED(st), "a gigabyte is not given "
	    "(answer %c, status %#x)", got ? got : '-', st);
#endif

	n = png_make(png, 16, 8);
	tap_ok(ui_decode(png, n, 8, 8, &pm, err, sizeof err) == 0 &&
	    pm.iw == 16 && pm.ih == 8 && pm.w == 8 && pm.h == 4 &&
	    pm.px[0] == 200 && pm.px[1] == 10 && pm.px[2] == 20,
	    "a 16x8 PNG decodes, fitted to 8x4, its colour kept (%s)",
	    pm.px != NULL ? "decoded" : err);
	free(pm.px);
	tap_ok(ui_decode("\x89PNG\r\n\x1a\nnot a png at all", 24, 8, 8, &pm,
	    err, sizeof err) == -1 && strstr(err, "PNG") != NULL,
	    "garbage is refused with a reason: %s", err);
	return tap_done();
}
