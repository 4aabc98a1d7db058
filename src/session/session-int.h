/*
 * session-int.h - what the parts of the session share (session.h is the
 * contract; this is the inside).  Supervisor only.
 *
 * The files, top down; each calls only the ones below it (README
 * has the list that tests/unit/layers.py checks).  Nothing calls up:
 * what a lower file has to say to a client waits in the outbox's queue
 * until the hub delivers it, and what the worker sends is handed down
 * by session-link.c to the file that consumes it.
 *
 *   session.c         the requests: the queue, its dispatcher, cancel
 *                     and interrupt, the loop (descriptors, deadlines)
 *   session-start.c   main's start and end, and its state asked
 *   session-branch.c  the branches: fork, sessions, close, adopt, and
 *                     the session that serves a request
 *   session-hub.c     the clients: attach, detach, the queue delivered,
 *                     the history an attaching client is given
 *   session-run.c     a request's run: what the worker is sent, an
 *                     exec's cell, its caps, the checkpoint before it
 *   session-ops.c     ping, snapshot, snapshots, rollback: the ops the
 *                     supervisor answers from its own state
 *   session-link.c    the worker's frames (a table of handlers after
 *                     link.c's checks), its death and its replacement,
 *                     init's reports
 *   session-reply.c   the answer to the run in flight: from the
 *                     worker's reply, or from what a new worker holds,
 *                     with the words for a restore
 *   session-redo.c    the cells a restore lost run again, if they
 *                     did nothing outside the namespace, and compared
 *                     with what they first answered
 *   session-ckpt.c    checkpoint policy: ordering one and when (idle or
 *                     every), what a restore lost, the strict fork gate
 *   session-answer.c  an answer's parts: exec responses from the
 *                     captured streams and the worker's reply, capped
 *   session-cost.c    what a cell costs: the worker's usage, the totals
 *   session-proc.c    the worker as a process: channels, spawn and
 *                     resume, sends, signals, its output drained
 *   session-post.c    the outbox: events made and queued, warnings
 *                     routed to their cause, output shaped for JSON,
 *                     answers posted, the session's failure
 *   session-life.c    the worker's life: one state machine, and the
 *                     fields that follow the worker (session-life.h)
 *   session-event.c   an event as a protocol line, from the event
 *                     alone (for the hub and its observers)
 *
 * One request is in flight at a time (s->run).  A worker-bound request
 * is written to the control socket; the worker's reply comes back on it.
 * The worker flushes its stdio before replying, so when the reply is
 * read, draining the stdout and stderr pipes until they are empty gives
 * exactly the output of that cell: nothing written before the reply can
 * still be missing, and anything read later belongs to the background.
 */
#ifndef COIL_SESSION_INT_H
#define COIL_SESSION_INT_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "ckpt.h"
#include "init.h"
#include "link.h"
#include "outbuf.h"
#include "session-life.h"
#include "session.h"
#include "usage.h"

struct export_runs;
#include "util.h"

/* Output shaped for JSON as it streams: bytes held back because they
 * may start a UTF-8 character, and how much went out (capped). */
struct shaper {
	struct buf carry;
	size_t sent, cap;
	bool stopped;
};

struct session;

struct sreq {
	struct sreq *next;
	struct session *s;
	json_t *req, *id;
	enum op op;
	uint64_t seq;
	int client;
	enum origin origin;
	json_t *by;		/* its client's name (a string), or NULL */
	bool stream;		/* the request asked for output events */
	int waited_for;		/* the cell running when this came, or 0 */
	/* set when it runs */
	int cell;
	uint64_t t0;
	int64_t deadline, kill_at;	/* ms, 0 when unset */
	double timeout;
	bool timed_out, interrupted, killed;
	uint64_t stop_ns;	/* when the SIGINT of either went (now_ns) */
	/* who sent the interrupt, in words for its answer ("person
	 * \"alice@pts/3\" (an attached UI)"); "": an interrupt request */
	char stop_by[REQUEST_LABEL_MAX * 4 + 64];
	bool atomic;
	bool broke;		/* its worker broke protocol (how says so) */
	struct ckpt *pre;	/* exec: a checkpoint of the state before it */
	struct ckpt *target;	/* what to resume (held) */
	struct response *pending;	/* the answer, once the new worker is up */
	struct response *ready;	/* answered as is in its turn (invalid) */
	json_t *warnings;	/* about the request itself, or NULL */
	char how[400];		/* how the worker died */
	/* exec: the worker's usage at the end (read by us, never its
	 * word: usage.h), while it lives; its CPU clock when we read it
	 * last before the cell, the least the cell's start can be */
	struct usage u1;
	double floor_ms;
	bool peak_reset;	/* the high-water mark was the cell's own */
	struct shaper shape[2];	/* stdout, stderr */
	int redo;		/* a lost cell run again after a restore
				   (session-redo.c): its number; 0: none */
	bool asked_input;	/* exec: the cell read a line */
	bool fork_waited;	/* fork: a checkpoint of the state was
				   ordered for it once */
};

/* The parts of a kept cell (session-redo.c): its request, output,
 * stderr, result, and error's type and message. */
enum { REDO_REQ, REDO_OUT, REDO_ERR, REDO_RESULT, REDO_ETYPE, REDO_EMSG,
	REDO_PARTS };
#define REDO_KEEP_CELLS 256

/* A finished cell, kept should a restore lose it (session-redo.c): one
 * slot of a ring, its buffer reused, so that keeping costs a cell no
 * allocation once the ring is warm. */
struct redo_rec {
	int cell;		/* 0: an empty slot */
	enum origin origin;
	enum status status;	/* what it first answered: the status, */
	struct buf b;		/* its request as JSON, then the texts */
	size_t len[REDO_PARTS];	/* the length of each in b */
	bool has_error, has_result;
	char why_not[160];	/* why it may not be run twice; "": it may */
};

/* What became of a lost cell in a redo. */
enum redo_state { REDO_PLANNED, REDO_SAME, REDO_DIFFERS, REDO_LOST };

struct redo_cell {
	int cell;
	enum redo_state state;
	char *why;		/* REDO_LOST: why */
	json_t *diff;		/* REDO_DIFFERS: its first line that differs */
};

/* A redo under way (session-redo.c). */
struct redo {
	struct sreq *held;	/* the run whose answer waits; NULL: the
				   worker died between requests */
	json_t *restored;	/* the restore's word, completed at the end */
	struct redo_cell *cells;
	size_t ncells;
	struct check_noise noise;	/* made the first time it is needed */
	bool noise_ok;
};

struct sclient {
	int id;
	enum origin origin;
	json_t *name;		/* session_name's (a string), or NULL */
	unsigned flags;
	session_fn fn;
	void *ctx;
	bool gone;
	json_t *warnings;	/* for its next response */
	json_t *restored;	/* a restore between its requests, for its
				   next answer; or NULL */
	struct outbuf bg_out, bg_err;	/* background, for its next exec */
	struct shaper bg_shape[2];
	char *home;		/* its default session (adopt); NULL: main */
	char *only;		/* an observer of that session's events
				   alone (a branch's transcript), or NULL */
};

struct sevent {
	struct sevent *next;
	struct session_event ev;
	char *data, *text;	/* owned copies */
	json_t *by;		/* ev.by's string, a reference */
	json_t *hist_req;	/* EV_RESPONSE of a cell to keep in the
				   history once delivered: its request */
	json_t *hist_order;	/* and the order its streams came in
				   (export_runs_json), or NULL */
	char *sname;		/* ev.session's string: the branch's name */
};

struct session {
	const struct coil_opts *opts;
	json_t *worker_conf;
	struct init init;

	/* the hub */
	struct sclient **clients;
	int nclients;
	int next_client;
	bool delivering;	/* in session_deliver */
	int observers;		/* clients with SESSION_OBSERVE */
	int raw_observers;	/* and SESSION_RAW */
	int ns_observers;	/* and not SESSION_NO_NS */
	struct record *rec;	/* --record's writer, an observer; or NULL */
	json_t *resumed;	/* --resume's report (session_set_resumed),
				   or NULL */
	struct export *export;	/* the notebook so far: --export's observer,
				   or a keeper (export_fed) */
	bool export_fed;	/* the keeper: each answer is handed to it */
	uint64_t next_seq;
	struct sevent *events, **events_tail;
	int cause;		/* the client of the newest run: owns its
				   warnings and the background output */
	json_t *orphan_warnings;	/* a cause that left: the next answer's */
	json_t *history;	/* --listen: the finished cells, as history
				   lines, oldest first (session_history) */
	size_t history_bytes;
	json_t *history_figs;	/* and their figures, as "figures" lines
				   (session_history_figures) */
	size_t history_fig_bytes;

	struct life life;	/* the worker's state and what follows it
				   (session-life.h: written there only) */
	pid_t pid;		/* worker, in init's view */
	int pidfd;
	struct usage_proc usage;	/* the worker's, opened when first
					   asked; closed with pidfd */
	bool hwm_clean;		/* its high-water mark was reset after its
				   last reply, or it is new since */
	bool hwm_due;		/* that reset is owed (session_reset_peak) */
	struct link ctl;	/* what the worker owes, and its socket */
	char broke[320];	/* the worker's protocol violation, if any */
	int out, err;		/* read ends of the worker's fd 1 and 2 */
	struct buf start_err;	/* stderr of a worker that has not said hello */

	struct sreq *run;	/* in flight */
	struct sreq *queue, **queue_tail;
	int cells;		/* cells run so far */
	struct redo_rec *recs;	/* the last cells: a ring of REDO_KEEP_CELLS */
	size_t rec_next;	/* the slot the next cell takes */
	struct redo redo;
	const char *redo_refused;	/* why the next restore's lost cells
					   are not run again, or NULL */
	int redo_streak;		/* redos since a cell of anyone's */
	char *python;		/* the worker's Py_GetVersion, first word */

	struct outbuf ob_out, ob_err;	/* the running cell's streams */
	struct export_runs *runs;	/* their order (export.h) */
	bool done;

	struct ckpt_set ck;
	struct ckpt_node *node;	/* the state the worker is in */
	struct ckpt *current;	/* a checkpoint of exactly that state */
	bool reap_orphans;	/* init died: its orphans are our children */
	/* The policy (session-ckpt.c): the worker's state has no automatic
	 * checkpoint yet and wants one, ckpt_due ms (0: not before the
	 * session is quiet); the wall time of the cells run since the
	 * state was last kept; what the newest automatic checkpoint cost
	 * (ordered to arrived, ms, our clock) and when it arrived. */
	bool ckpt_wanted;
	int64_t ckpt_due;
	double ckpt_work_ms;
	/* Since then (the lazy policy): how many cells ran, their CPU
	 * (what running them again would cost, which a loaded machine
	 * does not inflate as it does their wall time), and whether one
	 * of them may not be run twice (session-redo.c says). */
	int ckpt_unkept;
	double ckpt_cpu_ms;
	bool ckpt_unredoable;
	int64_t ckpt_ran_ms;	/* when the last of those cells ended */
	uint64_t ckpt_ordered_ns;
	double ckpt_cost_ms;
	int64_t ckpt_taken_ms;
	/* strict: seccomp hands every fork of the worker to us (gate_fd).
	 * One is let through for each checkpoint we ordered and the worker
	 * still owes (link_ckpt_owed: our record, never its word), and only
	 * from its main thread, which runs no cell code until the checkpoint
	 * is taken; life.gate_spent until the ckpt or ckpt_failed arrives. */
	int gate_fd;
	/* What went wrong with the gate, for the next answer and ping's
	 * sandbox report: the passes that went to a fork of the cells'
	 * instead of our checkpoint, the last of them told, and why the
	 * listener failed ("" while it works). */
	unsigned gate_lost;
	char gate_note[200];
	char gate_broken[120];
	pid_t dropped[64];	/* strict: checkpoints killed lately (ours) */
	unsigned ndropped;
	json_t *sandbox;	/* the worker's report, for ping */
	char *died_idle;	/* how a worker died between requests */
	/* The request at the queue's head waits for a checkpoint ordered
	 * (session_may_serve): the worker is killed if it has not handed
	 * it over by then, the request's own timeout after the wait
	 * began (0: no wait; -1: a request without a timeout). */
	int64_t hold_deadline;
	bool noted_rollback;
	bool warned_memory;	/* --checkpoint-memory cannot be enforced */
	int nsnap;		/* for generated snapshot names */
	/* What the cells cost, summed (CPU) or the highest (memory): ping
	 * and vars report it as "totals". */
	double total_cpu_ms, total_duration_ms;
	long long total_peak;
	long long ping_mem;	/* ping's memory figure, and when it was read */
	int64_t ping_mem_at;
	/* The session cannot go on (init cannot be started or reached, the
	 * worker never starts): session_run returns -1 from now on and the
	 * front end tears down; failure says why. */
	bool failed;
	char failure[2048];

	/* Branches (session-branch.c).  Every session but main is a branch
	 * of it: its own worker, queue, cells, checkpoints and deadlines,
	 * all the fields above, but the hub's (clients, events, history,
	 * the transcript, init and its spawns), which are main's: a
	 * branch's events go to main's queue with its name, and init's
	 * reports are routed from there by pid. */
	struct session *hub;	/* main: itself */
	char *name;		/* "main", or the branch's */
	char *parent;		/* the session it came from; NULL: main */
	int fork_cell;		/* the cell it started at */
	double fork_ms;		/* what making it cost, ms */
	bool closed;		/* main, closed: the hub goes on */
	/* its worker is in a Landlock domain of its own ("yes"), or why
	 * not; "" when none was asked (main, until it is resumed) */
	char isolation[200];
	int pfd_at;		/* its place in session_fds' array; -1 */
	/* the hub's: every open session, main first (while open) */
	struct session **all;
	int nall;
	int next_branch;	/* for the names b1, b2, ... */
	int max_sessions;	/* --max-sessions, or sized to --memory */
	struct session **spawns;	/* the sessions init owes "spawned",
					   oldest first */
	int nspawns;
	pid_t cloning;		/* the checkpoint copied now (our pid), for
				   the strict gate; 0: none */
	int cloning_passes;	/* the forks the gate still lets it make:
				   its child's, and the copy's */
	/* strict: fork gates whose worker is gone (a reset, a closed
	 * session) but whose copies may live on, in branches or
	 * checkpoints: still answered, closed once the kernel says no
	 * process uses the filter (POLLHUP); where session_fds put them */
	int *gates;
	int ngates, gates_at;
	/* the branches' own transcripts (--record or the default one:
	 * beside it), kept to the end; and whether a branch has one */
	struct record **brecs;
	int nbrecs;
	bool recorded;
	/* requests naming a session a fork still to be served may make:
	 * held, in order, until it is (session_limbo_release) */
	struct sreq *limbo, **limbo_tail;
};

/* How long a resumed checkpoint has to say hello: it is already running
 * Python, so this is only ever reached when it was stopped or wedged. */
#define SESSION_RESUME_MS 5000

/* What one turn of the loop reads of a flooding cell's pipe before it
 * delivers what it read and looks at its deadlines and clients again. */
#define SESSION_DRAIN_BUDGET (1 << 20)
/* The worker's stdout and stderr pipes: 1 MiB, the drain budget. */
#define SESSION_PIPE_SIZE (1 << 20)

/*
 * The files below call down this list, never up it (the order in
 * README; tests/unit/layers.py checks each call): session.c, the hub,
 * the ops, the worker's link, the run's answer, the checkpoint policy,
 * the answers' parts, the costs, the worker's process, the outbox.
 */

/* session.c: the queue and its dispatcher */
void session_dispatch(struct session *s);

/* session-hub.c: clients and delivery */
/* An observer client hears only the events of session name. */
void session_only(struct session *s, int client, const char *name);
void sclient_free(struct sclient *c);
void session_drop(struct session *s, struct sreq *r, const char *reason);

/* session-branch.c: the branches, and the ops that make and end them */
/* The session that serves req of client's: its "session", or the
 * client's default; NULL with why when there is none by that name. */
struct session *session_route(struct session *hub, int client, json_t *req,
    enum op op, char *why, size_t len);
void session_fork(struct session *s, struct sreq *r);
void session_sessions(struct session *s, struct sreq *r);
void session_close(struct session *s, struct sreq *r);
void session_adopt(struct session *s, struct sreq *r);
/* ping's "sessions" (new reference). */
json_t *session_branches_summary(struct session *hub);
/* Whether a fork waits or runs in any session. */
bool session_fork_pending(const struct session *hub);
/* Hold r (its session named but not there yet, a fork pending). */
void session_limbo_hold(struct session *hub, struct sreq *r);
/* The branches that failed (session_fail: their worker cannot start)
 * end, their requests answered with why; main's failure is coil's. */
void session_branches_reap(struct session *hub);
/* Free a branch (not main): its worker and checkpoints die. */
void session_branch_free(struct session *b);
/* Shared by session_new and the branches: a session's own fields. */
void session_init_fields(struct session *s, const struct coil_opts *opts);
void session_free_fields(struct session *s);

/* session-run.c and session-ops.c: ops, the worker's and the session's */
/* A request's timeout in seconds: its own, or the session's (0: none). */
double session_timeout_of(const struct session *s, json_t *req);
void session_start_run(struct session *s, struct sreq *r);
/* the servers of snapshot, snapshots and rollback (session.c's table) */
void session_snapshot(struct session *s, struct sreq *r);
void session_snapshots(struct session *s, struct sreq *r);
void session_rollback(struct session *s, struct sreq *r);
struct response *session_ping(struct session *s);

/* session-link.c: the worker's frames, its death, init's reports */
void session_from_worker(struct session *s);
void session_from_init(struct session *s);
void session_worker_died(struct session *s, int status);
void session_restore(struct session *s);
void session_replace(struct session *s, struct sreq *r,
    enum life_after after);

/* session-reply.c: the answer to the run in flight */
void session_reply(struct session *s, struct link_frame *f);
void session_run_died(struct session *s, const char *how, bool broke,
    bool starting);
void session_restored(struct session *s, struct ckpt *ck,
    json_t *restored);
/* Where a restore left the namespace, in words, into buf. */
#define SESSION_WHERE_MAX 800
const char *session_where(json_t *restored, char *buf, size_t len);
void session_idle_restored(struct session *s, json_t *restored);

/* session-redo.c: lost cells run again */
void session_redo_keep(struct session *s, const struct sreq *r,
    const struct response *resp);
bool session_redo_begin(struct session *s, struct sreq *held,
    json_t *restored);
bool session_redo_took(struct session *s, struct sreq *r,
    struct response *resp);
void session_redo_broke(struct session *s, struct sreq *r,
    json_t *restored);
json_t *session_redo_end(struct session *s, struct sreq **held);
void session_redo_free(struct session *s);

/* session-ckpt.c: checkpoints */
void session_order_ckpt(struct session *s, enum link_ckpt kind, int cell);
void session_ckpt_after(struct session *s, const struct sreq *r,
    const struct response *resp);
void session_ckpt_kept(struct session *s);
void session_ckpt_tick(struct session *s);
int64_t session_ckpt_deadline(const struct session *s);
json_t *session_lost(struct session *s, struct ckpt_node *to);
void session_gate(struct session *s);
/* A fork waits at gate fd, a session's or a retired one. */
void session_gate_fd(struct session *hub, int fd);
/* The worker's gate goes to the hub's retired ones (s->gate_fd -1). */
void session_gate_retire(struct session *s);
/* The retired gates, as poll filled pfd (session_fds put them at
 * hub->gates_at). */
void session_gates_retired(struct session *hub, const struct pollfd *pfd,
    int n);
void session_gate_arrived(struct session *s, struct link_frame *f);
/* ping's sandbox report: the worker's, and what befell the gate since
 * (new reference). */
json_t *session_gate_report(struct session *s);
void session_ckpt_arrived(struct session *s, struct link_frame *f);
void session_ckpt_failed(struct session *s, struct link_frame *f);
void session_ckpt_dropped(void *ctx, struct ckpt *ck);
void session_set_node(struct session *s, struct ckpt_node *n);

/* session-answer.c: an answer's parts */
struct response *session_exec_response(struct session *s, struct sreq *r,
    enum status status, json_t *reply, struct response_error *error,
    json_t *restored);
enum status session_stop_status(const struct sreq *r);
/* The worker's answer to a vars, inspect, complete or reset (op), or to
 * a snapshot that took none. */
struct response *session_worker_answer(json_t *reply, enum op op);
/* A reply's status: ok, incomplete or error. */
enum status session_status_of(json_t *reply);
/*
 * Every list in a reply (display, vars, matches, warnings, the
 * observers' namespace) is the worker's word, and every front end,
 * transcript and notebook walks it: at most SESSION_LIST_MAX entries of
 * each are kept (the worker keeps as many, worker.py's _LIST_MAX), and
 * what was left out is counted, with the worker's own count of what it
 * left out, in the answer's "<list>_more" (as effects_more counts
 * effects), never dropped silently.
 */
#define SESSION_LIST_MAX 1000
/* The first max entries of list (a new reference); *more gets how many
 * were left out, plus what the reply says it left out before. */
json_t *session_cap_list(json_t *reply, const char *key, json_t *list,
    size_t max, unsigned long long *more);

/* session-fields.c: the fields the worker may answer, per op */
/* Whether the worker's field key of op's answer is one, of its type;
 * *v (a reference the caller owns) is replaced by its list's entries
 * checked.  What is left out is said in resp's warnings. */
bool session_fields_check(struct response *resp, enum op op,
    const char *key, json_t **v);
/* A list of vars' entries (the observers' namespace) checked: a new
 * reference for list, stolen; what is left out is said in resp's
 * warnings when resp is not NULL. */
json_t *session_fields_vars(struct response *resp, const char *what,
    json_t *list);

/* session-cost.c: what a cell costs */
struct usage_proc *session_usage(struct session *s);
void session_usage_end(struct session *s, struct sreq *r, json_t *reply);
/* The reset of the worker's high-water mark owed since its reply:
 * before the worker is sent anything (a fork in the worker would make
 * the write wait), else once the answer is out, off its path. */
void session_reset_peak(struct session *s);
json_t *session_totals(const struct session *s);
/* What the cell of r cost, into resp; added to the totals. */
void session_take_usage(struct session *s, struct sreq *r, json_t *reply,
    struct response *resp);

/* session-proc.c: the worker's process */
void session_spawn(struct session *s);
/* Resume ck as the worker; it answers with hello.  -1 when it is gone. */
int session_resume(struct session *s, struct ckpt *ck);
void session_signal(struct session *s, int sig);
void session_send(struct session *s, json_t *msg);
void session_close_worker(struct session *s);
bool session_drain(struct session *s, bool is_err, size_t budget);
void session_drain_both(struct session *s, size_t budget);
/* init's {"t":"fatal"}: it could not set up the sandbox or itself. */
void session_init_fatal(struct session *s, json_t *m);
/* The line (NULL: the end of input) for the cell of s reading one:
 * session_input without its search of the branches.  -1 when none is
 * asked for. */
int session_give_input(struct session *s, const char *line);
/* The run a live worker owes its reply, or NULL (session-life.h). */
struct sreq *session_serving(const struct session *s);

/* session-post.c: the outbox */
void session_fail(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct sreq *sreq_alloc(struct session *s, json_t *req, json_t *id,
    enum op op);
void sreq_free(struct sreq *r);
struct sclient *session_client(const struct session *s, int id);
/* The open session whose live worker init knows as pid, or NULL. */
struct session *session_of_pid(struct session *hub, pid_t pid);
void session_warn(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
json_t *session_warnings(struct session *s);
bool session_watched(const struct session *s);
struct sevent *session_event_new(enum session_ev kind, const struct sreq *r);
void session_post(struct session *s, struct sevent *e);
void session_note(struct session *s, enum session_ev kind, json_t *info);
void session_note_for(struct session *s, const struct sreq *r,
    enum session_ev kind, json_t *info);
void sevent_free(struct sevent *e);
void session_output(struct session *s, int stream, const char *p, size_t n);
void session_answer(struct sreq *r, struct response *resp);

#endif
