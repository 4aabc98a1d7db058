/*
 * ckpt.h - checkpoints: fork()ed copies of the worker, asleep, that can
 * become the worker again.
 *
 * Three processes take part, and this file serves two of them:
 *
 *  - The worker (worker.c, the only Python side) forks a checkpoint when
 *    the supervisor orders one: after it has answered a cell that ran
 *    user code (automatic: at once or once the session is quiet, as
 *    --checkpoint-policy says), after start-up once nothing waits (the
 *    pristine one, for reset: none when a cell came first), when a
 *    snapshot or an atomic cell asks for one, and right after it was
 *    itself resumed (the re-arm: resuming uses a checkpoint's process
 *    up, so its replacement is forked before the worker serves
 *    anything).  It sends
 *        {"t":"ckpt", "kind", "cell", "pid", "threads", "fork_ms", "seq"}
 *    with two descriptors: the supervisor's end of a socketpair private to
 *    that checkpoint, and a pidfd of it.  When fork fails it sends
 *    {"t":"ckpt_failed", "kind", "cell", "error", "seq"} instead.  The
 *    supervisor takes either only as the answer to its order (link.h).
 *
 *  - The checkpoint process runs ckpt_wait (no Python): it sleeps until
 *    the supervisor sends {"t":"resume"} with the three descriptors of a
 *    new worker, or closes the private socket (then it exits).  Asked
 *    {"t":"clone"}, it makes a copy of itself for a new branch (a
 *    checkpoint like it, init's child) and sleeps on.
 *
 *  - The supervisor (session.c) keeps the checkpoints in a ckpt_set: it
 *    decides which to drop (--checkpoints, --checkpoint-memory), which to
 *    resume (ckpt_nearest, ckpt_find), what they cost (ckpt_mem_read),
 *    and sends the resume (ckpt_resume).  It never runs Python.
 *
 * A checkpoint's state is named by a lineage node: one node for each cell
 * that ran user code, pointing at the state it ran in.  The worker's
 * current state is a node too, so "the newest checkpoint" is the nearest
 * ancestor that still has a process, and a rollback can list the cells it
 * undoes.
 *
 * Ownership: a ckpt_set owns its records, their descriptors and the
 * processes behind them: ckpt_drop kills the process and frees the
 * record, after calling the set's on_drop so the caller can forget any
 * pointer it kept.  Nodes are reference counted: ckpt_node_new returns a
 * new reference and takes one on its parent.
 */
#ifndef COIL_CKPT_H
#define COIL_CKPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "chan.h"

/* ---- lineage ------------------------------------------------------- */

struct ckpt_node {
	int cell;			/* 0 for the state at start-up */
	int depth;			/* 0 for a root */
	int refs;
	struct ckpt_node *parent;	/* owned reference, NULL for a root */
};

/* A new reference; takes a reference on parent (may be NULL: a root). */
struct ckpt_node *ckpt_node_new(int cell, struct ckpt_node *parent);
struct ckpt_node *ckpt_node_ref(struct ckpt_node *n);
void ckpt_node_unref(struct ckpt_node *n);
/* Cells in from (undone) and in to (redone) but not in their common
 * ancestor, each in the order they ran.  New arrays. */
void ckpt_node_diff(struct ckpt_node *from, struct ckpt_node *to,
    json_t **undone, json_t **redone);

/* ---- the supervisor's set ------------------------------------------ */

enum ckpt_kind {
	CKPT_AUTO,		/* after a cell; the oldest are dropped */
	CKPT_PINNED,		/* a snapshot: kept until replaced */
	CKPT_PRISTINE,		/* right after start-up: reset */
	CKPT_ATOMIC,		/* before an atomic cell, --checkpoints 0 */
};

struct ckpt {
	struct ckpt *prev, *next;	/* oldest first, by last use */
	enum ckpt_kind kind;
	char *name;			/* owned; NULL unless named */
	struct ckpt_node *node;		/* owned reference: the state */
	int sock;			/* private socket; -1 once resumed */
	int pidfd;			/* -1 once resumed or when unknown */
	pid_t pid;			/* as the worker saw it: a label */
	int threads;			/* threads the fork left behind */
	int64_t born_ms;		/* when the state was taken */
	double fork_ms;			/* what the fork cost the worker */
	bool held;			/* a run counts on it: never evicted */
	bool own_domain;		/* taken by a worker in a Landlock
					   domain of its session's own: a
					   resume need not nest another */
};

struct ckpt_set;
typedef void (*ckpt_drop_fn)(void *ctx, struct ckpt *ck);

struct ckpt_set {
	struct ckpt *head, *tail;
	int count, nauto;
	int max_auto;			/* --checkpoints */
	unsigned long long max_memory;	/* --checkpoint-memory, 0: none */
	ckpt_drop_fn on_drop;
	void *ctx;
};

void ckpt_set_init(struct ckpt_set *set, int max_auto,
    unsigned long long max_memory, ckpt_drop_fn on_drop, void *ctx);
/* Drop every checkpoint: their processes die. */
void ckpt_set_free(struct ckpt_set *set);

/* Record a checkpoint that arrived; takes sock and pidfd, a new
 * reference to node.  It becomes the newest. */
struct ckpt *ckpt_add(struct ckpt_set *set, enum ckpt_kind kind,
    struct ckpt_node *node, int sock, int pidfd, pid_t pid, int threads,
    double fork_ms);
/* Kill the process, close the descriptors, free the record. */
void ckpt_drop(struct ckpt_set *set, struct ckpt *ck);
/* Make ck the newest (it was just used). */
void ckpt_touch(struct ckpt_set *set, struct ckpt *ck);
void ckpt_set_kind(struct ckpt_set *set, struct ckpt *ck, enum ckpt_kind k);
const char *ckpt_kind_name(enum ckpt_kind k);

/* True when the process is there, asleep and resumable. */
bool ckpt_alive(const struct ckpt *ck);
/* The newest checkpoint of this state, alive or not. */
struct ckpt *ckpt_of_node(struct ckpt_set *set, struct ckpt_node *node);
/* The checkpoint named by a rollback's "to": a string names a snapshot,
 * a number is a cell (0: the pristine one).  NULL when none is. */
struct ckpt *ckpt_find(struct ckpt_set *set, json_t *to);
struct ckpt *ckpt_find_name(struct ckpt_set *set, const char *name);
struct ckpt *ckpt_pristine(struct ckpt_set *set);
/* The alive checkpoint nearest to node on its line (node itself first,
 * then its ancestors).  Dead ones met on the way are dropped and a
 * warning for each is appended to warnings (may be NULL). */
struct ckpt *ckpt_nearest(struct ckpt_set *set, struct ckpt_node *node,
    json_t *warnings);
/* Drop every dead checkpoint, appending a warning for each. */
void ckpt_prune(struct ckpt_set *set, json_t *warnings);
/* Enforce --checkpoints and --checkpoint-memory, oldest automatic ones
 * first; keep is never dropped.  worker_pidfd (may be -1) is used to
 * count the memory the checkpoints hold beyond the worker's own.  -1 when
 * that memory cannot be read, so the cap could not be enforced. */
int ckpt_limit(struct ckpt_set *set, struct ckpt *keep, int worker_pidfd);

/* Send the resume: ctl, out and errfd (borrowed) become the checkpoint's
 * control socket, fd 1 and fd 2.  rearm asks it to fork its replacement
 * once it is up; isolate, to enter a Landlock domain of its own before
 * anything runs (sandbox_scope_self: a branch's worker).  Closes
 * ck->sock either way.  0 or -1 (errno). */
int ckpt_resume(struct ckpt *ck, int ctl, int out, int errfd, bool rearm,
    bool isolate);

/* A copy of a checkpoint (ckpt_clone_next): its private socket, its pidfd,
 * and its pid in the worker's namespace (a label). */
struct ckpt_copy {
	int sock, pidfd;
	pid_t pid;
};

/* Descriptors ckpt_clone_next watches while it waits: fn(ctx, fd) is called
 * for each that is readable (a strict sandbox's fork gate, which must
 * let the copy's forks through). */
#define CKPT_WATCH_MAX 8
struct ckpt_watch {
	int fd[CKPT_WATCH_MAX];
	int n;
	void (*fn)(void *ctx, int fd);
	void *ctx;
};

/*
 * Copies of ck's process for branches: each a new checkpoint of the same
 * state, adopted by init (not ck's child).  ckpt_clone_ask orders n at
 * once, and ck makes them one after the other while the caller takes
 * each as it comes (ckpt_clone_next), so that the first can be resumed
 * while the next is forked.  ckpt_clone_end lets go of those not taken,
 * and kills ck when it did not answer all it was asked (a later answer
 * would be taken for the copy of another order).
 */
struct ckpt_cloning {
	struct ckpt *ck;
	struct chan c;		/* on ck's socket, not owned */
	int left;		/* copies ordered and not yet answered */
	bool broken;		/* an answer failed: no more are read */
};
/* 0, or -1 with err (then nothing is owed). */
int ckpt_clone_ask(struct ckpt *ck, int n, struct ckpt_cloning *cl,
    char *err, size_t len);
/* The next copy: waits at most timeout_ms for it, watching w (may be
 * NULL).  0 with *out filled (the caller owns its descriptors), or -1
 * with err. */
int ckpt_clone_next(struct ckpt_cloning *cl, const struct ckpt_watch *w,
    int timeout_ms, struct ckpt_copy *out, char *err, size_t len);
void ckpt_clone_end(struct ckpt_cloning *cl, const struct ckpt_watch *w,
    int timeout_ms);

/* Memory of a process from /proc/PID/smaps_rollup, in bytes. */
struct ckpt_mem {
	long long rss, pss, pss_anon, anon, priv;
};
int ckpt_mem_read(int pidfd, pid_t fallback_pid, struct ckpt_mem *m);
/* Bytes the checkpoints hold that the worker does not (each page they
 * share with it is free): the sum of their Pss_Anon plus the worker's
 * Pss_Anon minus its own anonymous memory.  -1 when unreadable. */
long long ckpt_memory(struct ckpt_set *set, int worker_pidfd);
/* The snapshots op's answer: {"checkpoints": [...], "memory": N}. */
json_t *ckpt_list(struct ckpt_set *set, struct ckpt_node *current,
    int worker_pidfd);
/* {"cell", "threads_lost"} for a restore from ck; pristine is cell null.
 * The session adds "lost" (session_lost): it knows the cells, not ck. */
json_t *ckpt_restored(const struct ckpt *ck);

/* ---- the worker, around the fork ----------------------------------- */

/*
 * Copy-on-write moves the cost of a fork to the first write of each
 * shared page, and the interpreter itself writes a few hundred pages in
 * every cell (reference counts, frames, the allocator): paid by the next
 * cell, that is what the agent would see.  So the worker breaks the
 * sharing of those pages at once, in the time after its reply: the pages
 * it wrote since the previous fork (mapped by it alone, now) are the ones
 * it will write again.  MADV_POPULATE_WRITE does it without touching the
 * data and fails quietly on a range a thread has just unmapped.
 */
struct ckpt_hot {
	uintptr_t *start;		/* page-aligned runs */
	size_t *len;			/* bytes */
	size_t n, cap, pages;
	long psize;
	/* The pages of the last scan, ascending, and for each how many
	 * scans in a row it has been copied ahead (so its sharing was
	 * broken by us, whether the cell wrote it or not). */
	uintptr_t *seen;
	unsigned char *age;
	size_t nseen, seencap;
};

/* Before the fork: find the pages written since the last one.  false
 * (and nothing to do) when there are more than max_pages of them: the
 * cell then rewrote data, and copying it again ahead of need would only
 * cost memory.
 * A page copied ahead is written by then whether a cell wrote it or not,
 * so without a limit the set would only grow: every page any cell once
 * wrote, copied again after every fork.  Each page is copied ahead a few
 * scans running (4 to 12, spread by its address so that they do not all
 * stop at once), then left until a cell writes it again. */
bool ckpt_hot_scan(struct ckpt_hot *h, size_t max_pages);
/* After the fork, in the worker: copy them now, stopping as soon as
 * watch_fd (the control socket; -1: none) has a request waiting. */
void ckpt_hot_prefault(struct ckpt_hot *h, int watch_fd);
void ckpt_hot_free(struct ckpt_hot *h);

/* ---- the checkpoint process ---------------------------------------- */

struct ckpt_resume {
	int ctl, out, err;		/* the new worker's descriptors */
	int cell;
	bool rearm;
	bool isolate;			/* a branch's: a Landlock domain of
					   its own first */
};

/* Sleep in poll() on sock until the supervisor resumes this process
 * (returns with res filled and sock closed) or goes away (_exit 0).
 * Calls nothing but C and the kernel: no Python runs in a checkpoint. */
void ckpt_wait(int sock, struct ckpt_resume *res);

/* The pid of a pidfd's process in our own PID namespace (0 if gone). */
pid_t ckpt_pid_of(int pidfd);

#endif
