/*
 * worker.h - the worker process: the only part of coil that runs Python.
 *
 * worker_main runs in a child forked by init (init.c).  On entry fd 0 is
 * /dev/null, fd 1 and fd 2 are pipes the supervisor reads, and ctl_fd is
 * the control socket (chan.h frames), which it moves to a high
 * close-on-exec descriptor.  Under strict it first sends {"t":"gate"}
 * with seccomp's fork listener, before Python starts; it initialises the
 * interpreter, sends {"t":"hello"} with a pidfd of itself, then serves
 * requests until the socket closes.  It never returns.
 *
 * Requests are JSON objects with "op" (exec, vars, inspect, complete,
 * reset, ckpt), "seq" and the op's fields; exec also carries "cell".
 * Each gets one {"t":"reply", "seq", ...} frame with the request's seq
 * (taken off before Python sees the request).  The worker flushes
 * Python's and C's stdio before replying, so everything the cell wrote
 * to fd 1 and 2 is in the pipes before the reply is on the socket.
 *
 * Checkpoints (ckpt.h) are forked only when the supervisor orders one:
 * {"op":"ckpt", "kind", "cell", "seq"} (auto, pristine, rearm: answered
 * by the ckpt or ckpt_failed frame alone; explicit: and then a reply),
 * or an exec's "ckpt_first" (a "before" checkpoint, then the cell).  A
 * checkpoint that is resumed returns into the request loop as the new
 * worker: it says hello again, with "resumed": the cell.  What the
 * supervisor accepts of all this is in link.h.
 */
#ifndef COIL_WORKER_H
#define COIL_WORKER_H

#include <jansson.h>
#include <signal.h>

#include "sandbox.h"

/* init sends it to the worker alone right before an interrupt's SIGINT
 * to the worker's group, so that the worker knows when the interrupt
 * came (worker-stop.c); init and what it forks before worker_main
 * ignore it. */
#define WORKER_STOP_SIGNAL (SIGRTMIN + 5)

/* conf (borrowed): workdir, max_output, figure_dir, preload[] ... as the
 * supervisor's session_worker_conf builds it.  sbx and rep: the sandbox
 * in force (applied by init.c before this is called), for the audit hook
 * that words its denials and for hello, which carries the report. */
void worker_main(int ctl_fd, json_t *conf, const struct sandbox_conf *sbx,
    const struct sandbox_report *rep) __attribute__((noreturn));

#endif
