/*
 * usage.c - the worker's CPU time and peak memory, read by the
 * supervisor (see usage.h).
 *
 * CPU: the process's CPU clock has nanoseconds and counts every thread,
 * dead ones too; the children it reaped come from /proc/PID/stat
 * (cutime, cstime), in clock ticks.  Peak: VmHWM from /proc/PID/status,
 * which clear_refs resets.
 *
 * Each read is a system call on the round trip of every cell (about
 * 1.5 us each here, more while the worker runs on the other CPU), so a
 * reading makes as few as it can: the clock, status, and stat only when
 * asked (the caller knows when no child can have been reaped).  Status
 * comes last and stands for the process's life: it has VmHWM only while
 * the process still has its memory, so a reading that found it was of
 * the live process all along, and no pidfd poll is needed.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "usage.h"

void
usage_init(struct usage_proc *u)
{
	u->pid = 0;
	u->pidfd = -1;
	u->stat = u->status = u->clear_refs = -1;
	u->last_ms = 0;
}

static int
usage_file(pid_t pid, const char *name, int flags)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, name);
	/* fs(proc): the session's own processes */
	return open(path, flags | O_CLOEXEC);
}

/* The pidfd turns readable when its process exits. */
static bool
usage_dead(const struct usage_proc *u)
{
	struct pollfd p = { .fd = u->pidfd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

bool
usage_open(struct usage_proc *u, int pidfd)
{
	usage_close(u);
	if (pidfd < 0 || (u->pid = ckpt_pid_of(pidfd)) <= 0) {
		u->pid = 0;
		return false;
	}
	u->pidfd = pidfd;
	u->stat = usage_file(u->pid, "stat", O_RDONLY);
	u->status = usage_file(u->pid, "status", O_RDONLY);
	u->clear_refs = usage_file(u->pid, "clear_refs", O_WRONLY);
	/* Opened after its death, they could be another process's. */
	if (usage_dead(u)) {
		usage_close(u);
		return false;
	}
	return true;
}

void
usage_close(struct usage_proc *u)
{
	if (u->stat >= 0)
		close(u->stat);
	if (u->status >= 0)
		close(u->status);
	if (u->clear_refs >= 0)
		close(u->clear_refs);
	usage_init(u);
}

bool
usage_reset_peak(struct usage_proc *u)
{
	return u->clear_refs >= 0 && pwrite(u->clear_refs, "5", 1, 0) == 1;
}

/* A whole /proc file into buf (NUL-terminated), read afresh. */
static bool
usage_slurp(int fd, char *buf, size_t len)
{
	ssize_t n = fd >= 0 ? pread(fd, buf, len - 1, 0) : -1;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* The CPU its reaped children used, in ms, from stat: fields 16 and 17,
 * counted after the command's closing parenthesis (the command itself
 * may hold spaces and parentheses). */
static bool
usage_children_ms(const struct usage_proc *u, double *ms)
{
	char buf[1024], *p;
	unsigned long long cu, cs;
	long tick = sysconf(_SC_CLK_TCK);

	if (tick <= 0 || !usage_slurp(u->stat, buf, sizeof buf) ||
	    (p = strrchr(buf, ')')) == NULL)
		return false;
	/* state is field 3; cutime and cstime are 16 and 17 */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	    "%*u %*u %llu %llu", &cu, &cs) != 2)
		return false;
	*ms = (double)(cu + cs) * 1000.0 / (double)tick;
	return true;
}

/* VmHWM from status, in bytes. */
static bool
usage_peak(const struct usage_proc *u, long long *bytes)
{
	char buf[4096], *p;
	long long kb;

	if (!usage_slurp(u->status, buf, sizeof buf) ||
	    (p = strstr(buf, "\nVmHWM:")) == NULL ||
	    sscanf(p + 7, " %lld kB", &kb) != 1)
		return false;
	*bytes = kb * 1024;
	return true;
}

void
usage_read(struct usage_proc *u, struct usage *out, bool kids)
{
	struct timespec ts;
	/* The clock's id as clock_getcpuclockid makes it (the kernel's
	 * MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)), without its check,
	 * a system call that clock_gettime makes anyway. */
	clockid_t clk = (clockid_t)((~(unsigned)u->pid) << 3) | 2;

	memset(out, 0, sizeof *out);
	if (u->pid <= 0 || clock_gettime(clk, &ts) == -1)
		return;
	out->self_ms = (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
	u->last_ms = out->self_ms;
	if (kids && !usage_children_ms(u, &out->kids_ms))
		return;
	out->kids_read = kids;
	/* last: its VmHWM vouches for the readings before it */
	out->ok = usage_peak(u, &out->peak);
}
