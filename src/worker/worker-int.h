/*
 * worker-int.h - what the parts of the worker share (worker.h is the
 * contract; this is the inside).  Worker only.
 *
 *   worker.c      the interpreter, the audit hook, the request loop,
 *                 checkpoints
 *   worker-ask.c  what a cell asks the supervisor mid-cell: a line
 *                 (input(), pdb), the notebook so far (%save)
 *   worker-fds.c  the descriptors: fd 1 and 2 (the pipes the supervisor
 *                 reads), the copies kept of them, the control socket's
 *                 high number
 *   worker-mem.c  the memory Python's start writes, made present in bulk
 *   worker-send.c a reply back to the supervisor, with its images'
 *                 descriptors
 *   worker-stop.c when an interrupt reached the worker
 *   pycode.c      coil's Python files, built in, run (pycode.h)
 *   pyjson.c      requests to Python and replies back to JSON (pyjson.h)
 *
 * A cell may close or replace fd 1 and 2.  worker_save_fds keeps copies
 * of them at high, close-on-exec descriptors before Python starts, and
 * those copies keep their numbers for the worker's life (worker.py is
 * told them, as "saved_fds", to repair a stream mid-cell): a resumed
 * checkpoint points them at its new pipes (worker_point_fds).
 */
#ifndef COIL_WORKER_INT_H
#define COIL_WORKER_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "chan.h"

/* The control socket, and the seq of the request being served (the
 * frames a cell sends mid-cell echo it). */
extern struct chan worker_ctl;
extern json_int_t worker_seq;

/* Send reply (consumed) to the request numbered seq, with the image
 * files its display names as descriptors; one too large for the
 * supervisor's limits goes as an error saying so.  Ends the worker when
 * the supervisor is gone. */
void worker_send(json_t *reply, json_int_t seq);

/* worker-stop.c: catch WORKER_STOP_SIGNAL (worker.h), before the
 * worker says hello; forget the one caught for the request before, as
 * a request begins; and put in reply, as "interrupt_ns"
 * (CLOCK_MONOTONIC), when the first one since came, if one did. */
void worker_stop_arm(void);
void worker_stop_clear(void);
void worker_stop_tell(json_t *reply);

/* Put _ask and _notebook into the "_coil" module's dict (a PyObject,
 * named by its struct so that this header needs no Python.h): 0, or -1
 * with a Python error set. */
struct _object;
int worker_ask_install(struct _object *dict);

/* worker-fork.c: bind, before any cell runs, the interpreter's own
 * functions a checkpoint's fork uses, and worker.py's _ckpt dict (in the
 * "_coil" module's dict): 0, or -1 with a Python error set. */
int worker_fork_bind(struct _object *dict);

/* Before a checkpoint's fork, with no code of the cells': count the
 * threads the copy will lack (returned), keep random's state, freeze the
 * heap, turn the collector off; then worker_fork_before takes the import
 * lock, right before fork, and worker_fork_after puts both back: in the
 * worker right after the fork, in the copy (child) once
 * PyOS_AfterFork_Child ran.  What prepare kept stays in C until
 * worker_fork_publish stores it in _ckpt, which may run a cell's code
 * (a __del__): in the worker once the checkpoint's frame is sent, in
 * the copy before ckpt_resumed. */
int worker_fork_prepare(void);
void worker_fork_publish(void);
/* How many threads of Python live besides this one, read from the
 * interpreter's thread states (no code of the cells' runs). */
int worker_threads(void);
void worker_fork_before(void);
void worker_fork_after(bool child);

/* {"status": "error", "error": {"type", "message", "traceback": null,
 * "line": null}}, a new reference: an error of coil's own in the
 * worker, as a reply's body.  The one place the worker builds the error
 * object (the supervisor's is response_error_json). */
json_t *worker_error(const char *type, const char *msg);

/* The hooked build (tests/coil-hooked): whether to leave the order of
 * the checkpoint after cell unanswered, as a worker the cells took over
 * may (COIL_TEST_IGNORE_CKPT_CELL; tests/hostile/ckpt-ignored.py). */
#ifdef COIL_TEST_HOOKS
bool worker_test_ckpt_ignored(int cell);
#else
#define worker_test_ckpt_ignored(cell) false
#endif

/* Keep copies of fd 1 and 2; ends the process when it cannot. */
void worker_save_fds(void);

/* The copy worker_save_fds keeps of fd (1 or 2). */
int worker_kept_fd(int fd);

/* Put the kept pipes back on fd 1 and 2 where a cell closed or replaced
 * them.  Returns how many were put back. */
int worker_repair_fds(void);

/* Make fd 1 and 2, and the copies of them, refer to out and err (still
 * the caller's to close); ends the process when it cannot. */
void worker_point_fds(int out, int err);
/* The same without noting what they now are (for worker_repair_fds): a
 * checkpoint on its way to sleep touches no more memory than it must. */
void worker_aim_fds(int out, int err);

/* fd moved to a high close-on-exec descriptor (fd itself closed), or fd
 * when there is no room up there.  Returns the descriptor to use. */
int worker_high_fd(int fd);

/* Before Python starts: make libpython's static data present, and each
 * arena of Python's object allocator as it is made, in one call each
 * instead of a page fault a page. */
void worker_mem_prepare(void);
/* Once it has (coil's own Python run too): later arenas fault in as
 * they are used. */
void worker_mem_started(void);

/* worker-sbx.c.  Install audit.py's hook, which puts the sandbox's
 * denials into words (the kernel enforces them whatever it does) and
 * records what each cell touches, under every profile.  Returns its
 * Effects object (a new reference), for worker.py. */
struct sandbox_conf;
struct sandbox_report;
struct _object *worker_audit(const struct sandbox_conf *sbx,
    const struct sandbox_report *rep);
/* A resumed branch's own Landlock domain (sandbox_scope_self): "yes"
 * or "no: why" into out. */
void worker_isolate(char *out, size_t len);

#endif
