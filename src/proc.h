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
 * {"t":"spawned","pid"}.  If init cannot enter the sandbox it sends
 * {"t":"fatal","error"} and exits.  Messages from init arrive on
 * proc.chan.
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
/* Kill init and, through it, every process of the session. */
void proc_stop(struct proc *p);

#endif
