/*
 * init.h - init, the process that owns the session's processes.
 *
 * The supervisor forks init once (init_start).  init is a small C loop,
 * no Python: it enters the sandbox's namespaces, becomes a child
 * subreaper in a session of its own (so a terminal's Ctrl-C never
 * reaches a cell directly), forks each worker the
 * supervisor asks for, reaps every process of the session and reports
 * each exit as {"t":"exit","pid","status"}.  It dies with the supervisor
 * (PR_SET_PDEATHSIG) and takes the session's processes with it.
 *
 * Each worker leads a process group of its own, which holds what its
 * cells start (checkpoints leave it as they are forked): an interrupt
 * goes to the whole group, as a terminal's Ctrl-C goes to its foreground
 * job, and when init reaps a worker it kills the group first, so what a
 * worker started ends with it, PID namespace or not.
 *
 * Supervisor side: init_spawn hands init the three descriptors of a new
 * worker (control socket, stdout and stderr pipes); init answers
 * {"t":"spawned","pid"}.  If init cannot enter the sandbox or set
 * itself up it sends {"t":"fatal","error","code"} and _exits with that
 * code (exit.h).  Messages from init arrive on init.chan.
 *
 * The janitor (init_janitor) is the one process of coil outside the
 * session: forked by the supervisor before init, it sweeps what coils
 * killed before it left (sandbox_sweep) while the session starts, then
 * waits for the supervisor's end and removes what a killed supervisor
 * could not.
 *
 * Pids in init's messages are in init's PID namespace: the supervisor
 * never passes them to kill().  It signals through pidfds, or asks init
 * (init_signal), which is in that namespace.
 */
#ifndef COIL_INIT_H
#define COIL_INIT_H

#include <jansson.h>
#include <sys/types.h>

#include "chan.h"
#include "sandbox.h"

struct init {
	pid_t pid;		/* init, as the supervisor sees it */
	struct chan chan;	/* reports from init; non-blocking */
};

/* Fork init (through sandbox_spawn: PID 1 of a new PID namespace when
 * the sandbox gives one).  worker_conf and sbx (borrowed, and alive as
 * long as the session) are what init and each worker get: init enters
 * the sandbox's namespaces, each worker applies the rest before Python
 * starts. */
int init_start(struct init *p, json_t *worker_conf,
    const struct sandbox_conf *sbx, char *err, size_t len);
/* Ask init for a worker on these descriptors (borrowed: the caller
 * closes its copies). */
int init_spawn(struct init *p, int ctl, int out, int errfd);
/* Ask init to send sig to pid, a pid in init's namespace: SIGKILL only
 * to a child it has not reaped, SIGINT to the process group pid leads
 * (to pid alone if it leads none) if pid is of init's session.  0 or
 * -1. */
int init_signal(struct init *p, pid_t pid, int sig);
/* End init and, through it, every process of the session: init is
 * asked first (its socket is shut down) and given a moment to end them
 * (without a PID namespace it must find them), then killed. */
void init_stop(struct init *p);
/* Supervisor, at start: fork the janitor, which runs sandbox_sweep(sbx)
 * (borrowed: the child's copy) at once, and outlives the supervisor by
 * the moment it takes to run sandbox_cleanup(sbx) after the supervisor
 * ends, however it ends.  0, or -1 with errno (no pidfd_open: then only
 * the next coil's sweep cleans, and the caller sweeps itself). */
int init_janitor(const struct sandbox_conf *sbx);
/* The fatal teardown's: kill and reap the init that runs now, if any,
 * without touching its struct init. */
void init_abort(void);

#endif
