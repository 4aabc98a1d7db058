/*
 * session-life.h - the worker's life, as the session sees it: one state
 * machine, and the fields that follow the worker from spawn to death.
 * Supervisor only; no Python.
 *
 * Layer: a leaf, the lowest of the session's files.  Called by the files above
 * it (session.c, the ops, the run's answer, the checkpoint policy, the worker's
 * process) and by session-link.c, which turns the worker's frames and init's
 * reports into these events.  It calls nothing above itself: it does no I/O,
 * and only moves the state along life_rules and keeps its counters.
 *
 * The states say what the worker is doing; the run in flight (s->run)
 * is the request layer's.  While a run waits for its worker to be
 * replaced (it died under it, or was killed on purpose for a rollback,
 * a reset or a failed atomic cell), `after` says what the run waits
 * for, and the worker goes NONE -> STARTING or RESUMING -> READY as for
 * any other start: the hello answers the run (session_restored).
 *
 *   state      the worker                    what is owed
 *   NONE       none (gone, or never up)      nothing
 *   STARTING   spawned fresh by init         hello
 *   RESUMING   a checkpoint resumed          hello (resume_deadline)
 *   READY      up and serving nothing        nothing
 *   RUNNING    serving s->run                its reply
 *   STOPPING   s->run sent SIGINT (its       its reply, or a SIGKILL at
 *              deadline, or an interrupt)    the run's kill_at
 *   DYING      killed on purpose under       init's report of its death
 *              s->run (after says why)
 *
 * Every field of struct life is written here only; the other parts
 * read it (s->life.x) or call the predicates below.
 */
#ifndef COIL_SESSION_LIFE_H
#define COIL_SESSION_LIFE_H

#include <stdbool.h>
#include <stdint.h>

struct ckpt;

enum life_state {
	LIFE_NONE, LIFE_STARTING, LIFE_RESUMING, LIFE_READY, LIFE_RUNNING,
	LIFE_STOPPING, LIFE_DYING, LIFE_NSTATES
};

/* The events: each moves the state as life_rules in session-life.c say;
 * a pair the table lacks is a broken invariant (fatal). */
enum life_ev {
	LIFE_EV_SPAWNED,	/* init was asked for a fresh worker */
	LIFE_EV_RESUMED,	/* a checkpoint was resumed as the worker */
	LIFE_EV_HELLO,		/* it said hello: up */
	LIFE_EV_SENT,		/* a request went to it, the run's */
	LIFE_EV_DEADLINE,	/* SIGINT went for the run: its deadline, or
				   an interrupt request */
	LIFE_EV_REPLY,		/* it answered the run */
	LIFE_EV_KILLED,		/* killed on purpose: the run waits for the
				   next worker */
	LIFE_EV_DIED,		/* gone: its channels are closed */
	LIFE_NEVS
};

/* What the run waits for once its worker is gone. */
enum life_after {
	AFTER_NONE,
	AFTER_DIED,		/* it died under the run: restore the newest */
	AFTER_ROLLBACK,		/* killed to resume run->target */
	AFTER_RESET,		/* killed to resume the pristine one, or
				   spawn */
	AFTER_START,		/* a rollback to cell 0 with no pristine one:
				   killed to spawn */
	AFTER_ATOMIC,		/* an atomic cell failed: resume run->pre */
};

struct life {
	enum life_state state;
	enum life_after after;
	struct ckpt *resuming;	/* becoming the worker (RESUMING);
				   NULL once dropped */
	int64_t resume_deadline;	/* ms: its hello by then */
	struct ckpt *rearm;	/* used up by a resume; replacement due */
	int spawns;		/* spawns init has not said "spawned" to */
	int ints_owed;		/* interrupts init has not said it sent */
	int failed_starts;	/* in a row, before a hello */
	int init_early_deaths;	/* in a row, before a worker said hello */
	/* A fresh worker's pristine checkpoint, ordered once the session
	 * is quiet; none is taken if a request that runs code reaches the
	 * worker first (session_start_run). */
	bool pristine_owed;
	/* strict: the gate let a fork through for the checkpoint owed,
	 * until the ckpt or ckpt_failed arrives (session-ckpt.c). */
	bool gate_spent;
};

const char *life_state_name(enum life_state st);

/* The state moves (and only these write struct life). */
void life_init(struct life *l);
void life_spawned(struct life *l);
/* ck is resumed; it has until now_ms() + ms to say hello. */
void life_resumed(struct life *l, struct ckpt *ck, int64_t ms);
/* It said hello.  Returns the checkpoint it was resumed from (NULL: a
 * fresh spawn); that one is due to be re-armed unless it is atomic. */
struct ckpt *life_hello(struct life *l, bool want_pristine);
void life_sent(struct life *l);
void life_deadline(struct life *l);
void life_replied(struct life *l);
void life_killed(struct life *l, enum life_after after);
void life_died(struct life *l);
/* The worker died under the run: true when the run did not already wait
 * for a replacement, and now waits for a restore (AFTER_DIED). */
bool life_died_under(struct life *l);
/* The run that waited for a new worker was answered. */
void life_answered(struct life *l);

/* init's reports and our orders to it. */
void life_int_sent(struct life *l);
void life_int_done(struct life *l);
/* init said "spawned": whether that was the newest spawn's answer. */
bool life_spawn_done(struct life *l);
/* init died: what it owed is gone with it.  Returns how many inits in
 * a row died before their worker said hello. */
int life_init_gone(struct life *l);
/* A worker that never said hello died: the count in a row. */
int life_start_failed(struct life *l);
/* The resumed worker's time to say hello ran out (once). */
bool life_resume_expired(struct life *l, int64_t now);

/* Checkpoints: ck goes; forget it. */
void life_forget(struct life *l, const struct ckpt *ck);
/* The re-arm arrived: the checkpoint it replaces (NULL: none due). */
struct ckpt *life_rearm_take(struct life *l);
void life_no_pristine(struct life *l);
void life_gate_pass(struct life *l);
/* The gate is closed again; whether it had let a fork through. */
bool life_gate_close(struct life *l);

/* Predicates. */
/* A live worker owes the run its reply (RUNNING or STOPPING). */
bool life_serving(const struct life *l);
/* The worker is given to the run: serving, or killed under it. */
bool life_busy(const struct life *l);
/* Spawned or resumed, and no hello yet. */
bool life_starting(const struct life *l);
bool life_ready(const struct life *l);
bool life_alive(const struct life *l);

#endif
