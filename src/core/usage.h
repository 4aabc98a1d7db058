/*
 * usage.h - what the worker has used, read from outside it: its CPU
 * time and its peak resident memory.
 *
 * Supervisor only.  The worker is untrusted, so these figures are never
 * its word: they come from the kernel, through /proc/PID of the worker
 * (PID in our namespace, from its pidfd) and the process's CPU clock.
 * A cell can lower its own figures (it may reset its high-water mark
 * itself) but nothing else; a lie spoils only its own cell's answer.
 *
 * A struct usage_proc is one worker's: its /proc files are opened once
 * and read again each cell (a seq file reads afresh from offset 0), as
 * opening them costs more than reading them.  They stay bound to that
 * process: once it has died they fail, whoever has its pid then.
 */
#ifndef COIL_USAGE_H
#define COIL_USAGE_H

#include <stdbool.h>
#include <sys/types.h>

struct usage {
	double self_ms;		/* user+sys of the process, all its threads */
	double kids_ms;		/* and of the children it waited for */
	bool kids_read;		/* kids_ms was read (else 0: not asked) */
	long long peak;		/* bytes: VmHWM, the resident high-water mark */
	bool ok;		/* read, of the live process */
};

struct usage_proc {
	pid_t pid;		/* 0: none (closed, or not found) */
	int pidfd;		/* borrowed */
	int stat, status, clear_refs;	/* /proc/PID/..., or -1 */
	double last_ms;		/* self_ms at the last read; 0 before */
};

/* Before first use, and after usage_close. */
void usage_init(struct usage_proc *u);
/* Open the worker's files, pidfd's process (borrowed: it must outlive
 * u's use).  False when its pid cannot be found. */
bool usage_open(struct usage_proc *u, int pidfd);
void usage_close(struct usage_proc *u);

/* Reset the process's high-water mark to its present size (write "5" to
 * clear_refs), so that the next peak read is what came after.  False
 * when it cannot be (not permitted, or it died).  The write waits while
 * the process holds its memory map's lock (a fork does): call it when
 * the worker is idle. */
bool usage_reset_peak(struct usage_proc *u);

/* Read the figures now; out->ok false when they cannot be read, or the
 * process has died.  The children's CPU (a /proc read more) only when
 * kids is true. */
void usage_read(struct usage_proc *u, struct usage *out, bool kids);

#endif
