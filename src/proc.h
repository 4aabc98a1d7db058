/*
 * proc.h - init, the process that owns the session's processes.
 *
 * The supervisor forks init once (proc_start).  init is a small C loop,
 * no Python: it enters the sandbox's namespaces, becomes a child
 * subreaper in a session of its own (so a terminal's Ctrl-C never
 * reaches a cell directly), forks each worker the
 * supervisor asks for, reaps every process of the session and reports
 * each exit as {"t":"exit","pid","status"}.  It dies with the supervisor
 * (PR_SET_PDEATHSIG) and takes the session's processes with it.
 *
 * Supervisor side: proc_spawn hands init the three descriptors of a new
 * worker (control socket, stdout and stderr pipes); init answers
 * {"t":"spawned","pid"}.  If init cannot enter the sandbox or set
 * itself up it sends {"t":"fatal","error","code"} and _exits with that
 * code (exit.h).  Messages from init arrive on proc.chan.
 *
 * The janitor (proc_janitor) is the one process of coil outside the
 * session: forked by the supervisor before init, it waits for the
 * supervisor's end and removes what a killed supervisor could not.
 *
 * Pids in init's messages are in init's PID namespace: the supervisor
 * never passes them to kill().  It signals through pidfds, or asks init
 * (proc_signal), which is in that namespace.
 */
#ifndef COIL_PROC_H
#define COIL_PROC_H

#include <jansson.h>
#include <sys/types.h>

#include "chan.h"
#include "sandbox.h"

struct proc {
	pid_t pid;		/* init, as the supervisor sees it */
	struct chan chan;	/* reports from init; non-blocking */
};

/* Fork init (through sandbox_spawn: PID 1 of a new PID namespace when
 * the sandbox gives one).  worker_conf and sbx (borrowed, and alive as
 * long as the session) are what init and each worker get: init enters
 * the sandbox's namespaces, each worker applies the rest before Python
 * starts. */
int proc_start(struct proc *p, json_t *worker_conf,
    const struct sandbox_conf *sbx, char *err, size_t len);
/* Ask init for a worker on these descriptors (borrowed: the caller
 * closes its copies). */
int proc_spawn(struct proc *p, int ctl, int out, int errfd);
/* Ask init to send sig (SIGINT or SIGKILL) to pid, a pid in init's
 * namespace; init only obeys for a child it has not reaped.  0 or -1. */
int proc_signal(struct proc *p, pid_t pid, int sig);
/* Kill init and, through it, every process of the session. */
void proc_stop(struct proc *p);
/* Supervisor, at start: fork the janitor, which outlives the supervisor
 * by the moment it takes to run sandbox_cleanup(sbx) (borrowed: the
 * child's copy) after the supervisor ends, however it ends.  0, or -1
 * with errno (no pidfd_open: then only the next coil's sweep cleans). */
int proc_janitor(const struct sandbox_conf *sbx);
/* The fatal teardown's: kill and reap the init that runs now, if any,
 * without touching its struct proc. */
void proc_abort(void);

#endif
