/*
 * session-ops.c - the ops the supervisor answers from the session's own
 * state and its checkpoints (see session-int.h): ping, snapshot,
 * snapshots and rollback.  session.c's table names them as the servers.
 *
 * Layer: ops, beside session-run.c (the ops the worker serves).  Calls
 * down into the worker's replacement (session-link.c), the checkpoint
 * policy (session-ckpt.c), the costs and the outbox; nothing above.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "session-int.h"

/* A snapshot name must not look like a cell number (the plain mode's
 * %rollback 3 means cell 3) and must print on one line. */
static bool
session_name_ok(const char *name, char *why, size_t len)
{
	size_t n = strlen(name), i, digits = 0;

	if (n == 0 || n > 64)
		return err_set(why, len, "a snapshot name must be 1 to 64 "
		    "characters long"), false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c == 0x7f || c == ' ')
			return err_set(why, len, "a snapshot name must not hold "
			    "spaces or control characters"), false;
		if (c >= '0' && c <= '9')
			digits++;
	}
	if (digits == n)
		return err_set(why, len, "'%s' is a cell number, not a snapshot "
		    "name: use a name with a letter in it", name), false;
	return true;
}

/* "snapshot 'base' (cell 3); cells 5, 6, 7; the pristine one (0)" */
static char *
session_ckpt_names(struct session *s)
{
	struct buf b;
	struct ckpt *ck;
	bool first = true, pristine = false;

	buf_init(&b);
	for (ck = s->ck.head; ck != NULL; ck = ck->next)
		if (ck->name != NULL && ck->sock >= 0)
			buf_printf(&b, "%ssnapshot '%s' (cell %d)", b.len ? ", " :
			    "", ck->name, ck->node->cell);
	for (ck = s->ck.head; ck != NULL; ck = ck->next) {
		if (ck->sock < 0 || ck->name != NULL)
			continue;
		if (ck->kind == CKPT_PRISTINE) {
			pristine = true;
			continue;
		}
		buf_printf(&b, "%s%d", first ? (b.len ? "; cells " : "cells ") :
		    ", ", ck->node->cell);
		first = false;
	}
	if (pristine)
		buf_printf(&b, "%sthe pristine one (0)", b.len ? "; " : "");
	if (b.len == 0)
		buf_addstr(&b, "none");
	return buf_take(&b);
}

void
session_snapshot(struct session *s, struct sreq *r)
{
	json_t *jn = json_object_get(r->req, "name");
	struct response *msg;
	struct ckpt *ck = s->current, *old;
	char why[200], gen[32];
	const char *name;

	if (json_is_string(jn)) {
		name = json_string_value(jn);
		if (strlen(name) != json_string_length(jn))
			err_set(why, sizeof why, "a snapshot name must not "
			    "hold NUL characters");
		if (strlen(name) != json_string_length(jn) ||
		    !session_name_ok(name, why, sizeof why)) {
			session_answer(r, response_invalid("%s", why));
			return;
		}
	} else {
		do
			snprintf(gen, sizeof gen, "snap%d", ++s->nsnap);
		while (ckpt_find_name(&s->ck, gen) != NULL);
		name = gen;
	}
	msg = response_new(ST_OK);
	response_set(msg, "name", json_string(name));
	if (r->waited_for > 0)
		response_set(msg, "waited_for_cell", json_integer(r->waited_for));
	if (ck != NULL && ckpt_alive(ck) && (ck->name == NULL ||
	    strcmp(ck->name, name) == 0)) {
		/* The worker has not changed since this one: pin it. */
		old = ckpt_find_name(&s->ck, name);
		if (old != NULL && old != ck) {
			response_set(msg, "replaced", json_integer(
			    old->node->cell));
			ckpt_drop(&s->ck, old);
		}
		if (ck->name == NULL)
			ck->name = xstrdup(name);
		if (ck->kind == CKPT_AUTO || ck->kind == CKPT_ATOMIC)
			ckpt_set_kind(&s->ck, ck, CKPT_PINNED);
		response_set(msg, "cell", json_integer(ck->node->cell));
		session_answer(r, msg);
		return;
	}
	/* Fork one now: the worker answers once it has. */
	r->pending = msg;
	r->t0 = now_ns();
	s->run = r;
	life_sent(&s->life);
	session_order_ckpt(s, LINK_CK_EXPLICIT, s->node->cell);
}

void
session_snapshots(struct session *s, struct sreq *r)
{
	struct response *msg = response_new(ST_OK);
	struct ckpt *ck;

	ckpt_prune(&s->ck, session_warnings(s));
	json_decref(msg->fields);
	msg->fields = ckpt_list(&s->ck, s->node, s->pidfd);
	response_set(msg, "cell", json_integer(s->node != NULL ?
	    s->node->cell : 0));
	/* What a crash now would lose: the cells since the newest
	 * checkpoint on this line (snapshots waits until none is owed). */
	ck = ckpt_nearest(&s->ck, s->node, session_warnings(s));
	response_set(msg, "unkept", session_lost(s, ck != NULL ? ck->node :
	    NULL));
	response_set(msg, "policy", json_string(ckpt_policy_names[
	    s->opts->checkpoint_policy]));
	/* What the policy weighs work against (null until timed once). */
	response_set(msg, "cost_ms", s->ckpt_cost_ms > 0 ? json_real(
	    round(s->ckpt_cost_ms * 100) / 100) : json_null());
	session_answer(r, msg);
}

void
session_rollback(struct session *s, struct sreq *r)
{
	json_t *to = json_object_get(r->req, "to"), *undone, *redone;
	struct response *msg;
	struct ckpt *ck = ckpt_find(&s->ck, to);
	struct ckpt_node *start;
	char what[96], *names;
	bool fresh;

	if (json_is_string(to))
		snprintf(what, sizeof what, "snapshot '%.64s'",
		    json_string_value(to));
	else if (json_integer_value(to) == 0)
		snprintf(what, sizeof what, "pristine checkpoint (cell 0)");
	else
		snprintf(what, sizeof what, "checkpoint at cell %lld",
		    (long long)json_integer_value(to));
	if (ck != NULL && !ckpt_alive(ck) && ck->kind == CKPT_PRISTINE) {
		ckpt_drop(&s->ck, ck);
		ck = NULL;
	} else if (ck != NULL && !ckpt_alive(ck)) {
		ckpt_drop(&s->ck, ck);
		names = session_ckpt_names(s);
		session_answer(r, response_invalid("the %s is gone: its process "
		    "was killed from outside coil; nothing changed; the "
		    "checkpoints are: %s", what, names));
		free(names);
		return;
	}
	/* Cell 0 with no pristine checkpoint (a cell came before the
	 * worker was up, or it was killed from outside): the start is a
	 * new interpreter, as for reset. */
	fresh = ck == NULL && json_is_integer(to) &&
	    json_integer_value(to) == 0;
	if (ck == NULL && !fresh) {
		names = session_ckpt_names(s);
		session_answer(r, response_invalid("there is no %s%s; nothing "
		    "changed; the checkpoints are: %s", what,
		    json_is_integer(to) && json_integer_value(to) > s->cells ?
		    " (no such cell has run)" : json_is_integer(to) ?
		    " (it was dropped, the cell ran no code, or it ran back to "
		    "back with the next: --checkpoint-policy every keeps each)" :
		    "", names));
		free(names);
		return;
	}
	for (start = s->node; fresh && start->parent != NULL;
	    start = start->parent)
		;
	ckpt_node_diff(s->node, fresh ? start : ck->node, &undone, &redone);
	msg = response_new(ST_OK);
	response_set(msg, "cell", json_integer(fresh ||
	    ck->kind == CKPT_PRISTINE ? 0 : ck->node->cell));
	if (fresh)
		response_set(msg, "from", json_string("new interpreter"));
	else if (ck->name != NULL)
		response_set(msg, "name", json_string(ck->name));
	response_set(msg, "rolled_back", undone);
	if (json_array_size(redone) > 0)
		response_set(msg, "redone", redone);
	else
		json_decref(redone);
	if (!s->noted_rollback) {
		s->noted_rollback = true;
		response_set(msg, "note", json_string("only the Python state "
		    "goes back: files the undone cells wrote and processes "
		    "they started stay as they are"));
	}
	if (r->waited_for > 0)
		response_set(msg, "waited_for_cell", json_integer(r->waited_for));
	r->pending = msg;
	r->target = ck;
	r->t0 = now_ns();
	session_replace(s, r, fresh ? AFTER_START : AFTER_ROLLBACK);
}

struct response *
session_ping(struct session *s)
{
	struct response *resp = response_new(ST_OK);

	/* ping is answered at once, so the smaps of every checkpoint are
	 * read at most once a second for it; snapshots reads them fresh. */
	if (s->ping_mem_at == 0 || now_ms() - s->ping_mem_at > 1000) {
		s->ping_mem = ckpt_memory(&s->ck, s->pidfd);
		s->ping_mem_at = now_ms();
	}
	response_set(resp, "version", json_string(PACKAGE_VERSION));
	if (s->python != NULL)
		response_set(resp, "python", json_string(s->python));
	response_set(resp, "sandbox", s->sandbox != NULL ?
	    session_gate_report(s) : json_pack("{s:s, s:b}", "profile",
	    sandbox_profile_name(s->opts->sbx.profile), "starting", 1));
	response_set(resp, "venv", s->opts->sbx.venv != NULL ?
	    json_string(s->opts->sbx.venv) : json_null());
	response_set(resp, "cell", json_integer(s->cells));
	/* --resume: how faithful the rebuilt state is, to any client */
	if (s->hub->resumed != NULL)
		response_set(resp, "resumed", json_incref(s->hub->resumed));
	response_set(resp, "running", json_boolean(s->run != NULL &&
	    s->run->op == OP_EXEC));
	response_set(resp, "totals", session_totals(s));
	response_set(resp, "checkpoints", json_pack("{s:i, s:o, s:i}",
	    "count", s->ck.count, "memory", s->ping_mem >= 0 ?
	    json_integer(s->ping_mem) : json_null(), "max_auto",
	    s->opts->checkpoints));
	/* the branches: how many, and (once there are some) the memory
	 * their workers own and share */
	response_set(resp, "sessions", s->hub->nall > 1 ?
	    session_branches_summary(s->hub) : json_pack("{s:i, s:i}",
	    "count", s->hub->nall, "max", s->hub->max_sessions));
	return resp;
}
