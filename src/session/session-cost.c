/*
 * session-cost.c - what a cell costs (see session-int.h): the worker's
 * CPU and memory read by us, never its word (usage.h), its word about
 * where the cell began used only within bounds, and the session's
 * totals for ping and vars.  Supervisor only.
 *
 * Layer: the costs, under the answers.  Calls the worker's usage
 * handle (usage.h) and fills the run's response; called by
 * session-run.c as a cell starts and by session-answer.c and
 * session-reply.c as it is answered.
 */
#include "config.h"

#include <math.h>

#include "session-int.h"

/* The worker's usage handle, opened once a worker.  A new worker's
 * high-water mark is its own: it began when it was forked. */
struct usage_proc *
session_usage(struct session *s)
{
	if (s->usage.pid == 0 && usage_open(&s->usage, s->pidfd))
		s->hwm_clean = true;
	return &s->usage;
}

/* Whether the worker's reply says it reaped no child during the cell:
 * its count of their CPU the same at both ends.  Its word, so only its
 * own cell's figure can suffer from a lie: it could zero that figure
 * with cpu0_kids_ns anyway. */
static bool
session_no_kids(json_t *reply)
{
	json_t *k0 = json_object_get(reply, "cpu0_kids_ns");
	json_t *k1 = json_object_get(reply, "cpu1_kids_ns");

	return json_is_integer(k0) && json_is_integer(k1) &&
	    json_integer_value(k0) == json_integer_value(k1);
}

/* The worker's usage at the end of run r, read while it still lives:
 * when it replied (reply), or right before we kill it (NULL). */
void
session_usage_end(struct session *s, struct sreq *r, json_t *reply)
{
	if (r->op == OP_EXEC && !r->u1.ok)
		usage_read(session_usage(s), &r->u1,
		    reply == NULL || !session_no_kids(reply));
}

void
session_reset_peak(struct session *s)
{
	if (!s->hwm_due)
		return;
	s->hwm_due = false;
	s->hwm_clean = usage_reset_peak(session_usage(s));
}

/* A figure of the worker's (ns), as ms brought within [lo, hi]; lo
 * when it gave none. */
static double
session_bounded(json_t *v, double lo, double hi)
{
	double ms = (double)json_integer_value(v) / 1e6;

	if (!json_is_integer(v) || ms < lo)
		return lo;
	return ms > hi ? hi : ms;
}

/* What the cell cost; added to the totals.  Nothing when the worker
 * died before the end could be read.  The end is our reading (usage.h);
 * where the cell began is the worker's word, read when it took the
 * request (cpu0_ns, cpu0_kids_ns: what it did before, a checkpoint's
 * fork, is not the cell's), used only within bounds: from our last
 * reading of its clock (at the end of the cell before; reading it at
 * every start would cost each round trip 20 us), its children's from 0.
 * So a lie can only move this cell's figure between 0 and the worker's
 * real totals.  The children's total is read only when the worker's
 * figures at the cell's two ends differ (cpu1_kids_ns: one /proc read
 * less a cell); a lie there, too, only leaves them out of this cell. */
void
session_take_usage(struct session *s, struct sreq *r, json_t *reply,
    struct response *resp)
{
	double ms;

	resp->memory_peak = -1;
	s->total_duration_ms += resp->duration_ms;
	if (!r->u1.ok)
		return;
	ms = r->u1.self_ms - session_bounded(json_object_get(reply,
	    "cpu0_ns"), r->floor_ms, r->u1.self_ms);
	if (r->u1.kids_read)
		ms += r->u1.kids_ms - session_bounded(json_object_get(reply,
		    "cpu0_kids_ns"), 0, r->u1.kids_ms);
	resp->has |= RESP_COST;
	resp->cpu_ms = ms > 0 ? round(ms * 100) / 100.0 : 0;
	s->total_cpu_ms += resp->cpu_ms;
	/* Without a reset the mark is the worker's life's, not the cell's:
	 * unknown, rather than a figure that misleads. */
	if (r->peak_reset) {
		resp->memory_peak = r->u1.peak;
		if (r->u1.peak > s->total_peak)
			s->total_peak = r->u1.peak;
	}
}

/* The session's totals, for ping and vars: time and CPU summed over the
 * cells, the highest peak of any (null before one was measured). */
json_t *
session_totals(const struct session *s)
{
	return json_pack("{s:i, s:f, s:f, s:o}", "cells", s->cells,
	    "duration_ms", round(s->total_duration_ms * 100) / 100.0,
	    "cpu_ms", round(s->total_cpu_ms * 100) / 100.0, "memory_peak",
	    s->total_peak > 0 ? json_integer(s->total_peak) : json_null());
}
