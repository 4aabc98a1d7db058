/*
 * session-life.c - the worker's life: its state machine and the fields
 * that follow the worker (see session-life.h).  Supervisor only.
 *
 * Layer: a leaf, the lowest of the session's files.  Calls nothing of
 * the session's: util.h only.
 *
 * Invariant: the state moves only through life_rules, and a pair that
 * is not in it ends the process (a broken invariant, not the worker's
 * doing: link.c has already refused any frame that was not owed).
 */
#include "config.h"

#include <stddef.h>

#include "ckpt.h"
#include "session-life.h"
#include "util.h"

static const char *const life_state_names[LIFE_NSTATES] = {
	[LIFE_NONE] = "none", [LIFE_STARTING] = "starting",
	[LIFE_RESUMING] = "resuming", [LIFE_READY] = "ready",
	[LIFE_RUNNING] = "running", [LIFE_STOPPING] = "stopping",
	[LIFE_DYING] = "dying",
};

static const char *const life_ev_names[LIFE_NEVS] = {
	[LIFE_EV_SPAWNED] = "spawned", [LIFE_EV_RESUMED] = "resumed",
	[LIFE_EV_HELLO] = "hello", [LIFE_EV_SENT] = "sent",
	[LIFE_EV_DEADLINE] = "deadline", [LIFE_EV_REPLY] = "reply",
	[LIFE_EV_KILLED] = "killed", [LIFE_EV_DIED] = "died",
};

/*
 * The (state, event) -> state table: what each event does in each
 * state.  XX: the pair cannot happen (life_go ends the process); died
 * takes any state to none.
 */
#define NO	LIFE_NONE
#define ST	LIFE_STARTING
#define RS	LIFE_RESUMING
#define RD	LIFE_READY
#define RU	LIFE_RUNNING
#define SP	LIFE_STOPPING
#define DY	LIFE_DYING
#define XX	LIFE_NSTATES
static const enum life_state life_rules[LIFE_NSTATES][LIFE_NEVS] = {
	/*		  spawn resum hello sent  deadl reply kill  died */
	[LIFE_NONE]	= { ST,   RS,   XX,   XX,   XX,   XX,   XX,   NO },
	[LIFE_STARTING]	= { XX,   XX,   RD,   XX,   XX,   XX,   XX,   NO },
	[LIFE_RESUMING]	= { XX,   XX,   RD,   XX,   XX,   XX,   XX,   NO },
	[LIFE_READY]	= { XX,   XX,   XX,   RU,   XX,   XX,   DY,   NO },
	[LIFE_RUNNING]	= { XX,   XX,   XX,   XX,   SP,   RD,   XX,   NO },
	[LIFE_STOPPING]	= { XX,   XX,   XX,   XX,   SP,   RD,   XX,   NO },
	[LIFE_DYING]	= { XX,   XX,   XX,   XX,   XX,   XX,   XX,   NO },
};
#undef NO
#undef ST
#undef RS
#undef RD
#undef RU
#undef SP
#undef DY
#undef XX

const char *
life_state_name(enum life_state st)
{
	return st < LIFE_NSTATES ? life_state_names[st] : "?";
}

static void
life_go(struct life *l, enum life_ev ev)
{
	enum life_state to = life_rules[l->state][ev];

	if (to == LIFE_NSTATES)
		fatal("the worker's life cannot take '%s' when %s",
		    life_ev_names[ev], life_state_names[l->state]);
	l->state = to;
}

void
life_init(struct life *l)
{
	*l = (struct life){ .state = LIFE_NONE, .after = AFTER_NONE };
}

void
life_spawned(struct life *l)
{
	life_go(l, LIFE_EV_SPAWNED);
	l->spawns++;
}

void
life_resumed(struct life *l, struct ckpt *ck, int64_t ms)
{
	life_go(l, LIFE_EV_RESUMED);
	l->resuming = ck;
	l->resume_deadline = now_ms() + ms;
}

struct ckpt *
life_hello(struct life *l, bool want_pristine)
{
	struct ckpt *ck = l->resuming;

	life_go(l, LIFE_EV_HELLO);
	l->gate_spent = false;
	l->failed_starts = 0;
	l->resume_deadline = 0;
	l->resuming = NULL;
	/* A resumed state is most likely some cell's: not reset's. */
	l->pristine_owed = ck == NULL && want_pristine;
	/* Its process is the worker now: a replacement is due. */
	if (ck != NULL && ck->kind != CKPT_ATOMIC)
		l->rearm = ck;
	return ck;
}

void
life_sent(struct life *l)
{
	life_go(l, LIFE_EV_SENT);
}

void
life_deadline(struct life *l)
{
	life_go(l, LIFE_EV_DEADLINE);
}

void
life_replied(struct life *l)
{
	life_go(l, LIFE_EV_REPLY);
}

void
life_killed(struct life *l, enum life_after after)
{
	life_go(l, LIFE_EV_KILLED);
	l->after = after;
}

void
life_died(struct life *l)
{
	life_go(l, LIFE_EV_DIED);
}

bool
life_died_under(struct life *l)
{
	if (l->after != AFTER_NONE)
		return false;
	l->after = AFTER_DIED;
	return true;
}

void
life_answered(struct life *l)
{
	l->after = AFTER_NONE;
}

void
life_int_sent(struct life *l)
{
	l->ints_owed++;
}

void
life_int_done(struct life *l)
{
	if (l->ints_owed > 0)
		l->ints_owed--;
}

bool
life_spawn_done(struct life *l)
{
	return l->spawns > 0 && --l->spawns == 0;
}

int
life_init_gone(struct life *l)
{
	l->spawns = 0;
	l->ints_owed = 0;
	/* An init that dies before its first worker is up would be
	 * restarted for ever; one killed later is replaced as often as it
	 * takes. */
	if (life_starting(l))
		l->init_early_deaths++;
	else
		l->init_early_deaths = 0;
	return l->init_early_deaths;
}

int
life_start_failed(struct life *l)
{
	return ++l->failed_starts;
}

bool
life_resume_expired(struct life *l, int64_t now)
{
	if (l->resuming == NULL || l->resume_deadline == 0 ||
	    now < l->resume_deadline)
		return false;
	l->resume_deadline = 0;
	return true;
}

void
life_forget(struct life *l, const struct ckpt *ck)
{
	if (l->resuming == ck)
		l->resuming = NULL;
	if (l->rearm == ck)
		l->rearm = NULL;
}

struct ckpt *
life_rearm_take(struct life *l)
{
	struct ckpt *ck = l->rearm;

	l->rearm = NULL;
	return ck;
}

void
life_no_pristine(struct life *l)
{
	l->pristine_owed = false;
}

void
life_gate_pass(struct life *l)
{
	l->gate_spent = true;
}

bool
life_gate_close(struct life *l)
{
	bool spent = l->gate_spent;

	l->gate_spent = false;
	return spent;
}

bool
life_serving(const struct life *l)
{
	return l->state == LIFE_RUNNING || l->state == LIFE_STOPPING;
}

bool
life_busy(const struct life *l)
{
	return life_serving(l) || l->state == LIFE_DYING;
}

bool
life_starting(const struct life *l)
{
	return l->state == LIFE_STARTING || l->state == LIFE_RESUMING;
}

bool
life_ready(const struct life *l)
{
	return l->state == LIFE_READY;
}

bool
life_alive(const struct life *l)
{
	return l->state != LIFE_NONE;
}
