/*
 * session-redo.c - the cells a restore lost, run again (see
 * session-int.h).
 *
 * A checkpoint is taken when the session is idle (the default policy),
 * so after cells sent back to back a crash goes back further than the
 * last cell.  The supervisor keeps what it needs to run those cells
 * again: each finished cell's request and what it first answered (its
 * status, output, stderr, result and error), and whether it may be run
 * twice.  One may not when it did something outside the namespace,
 * which its effects say (a file written or deleted, a process started,
 * a connection; a refused one did nothing), read input, or was stopped
 * part way (interrupted, past its timeout): running it again would
 * do that thing twice, or not do what the first run did.
 *
 * After a restore, the lost cells that may be run again, in order up to
 * the first that may not, go to the head of the queue as requests of no
 * client (sreq.redo: their cell's number), and the answer of the run
 * the worker died under waits (redo.held) until they are done.  Each is
 * compared with what it first answered (check.h, as --replay --check
 * compares): the same, or listed in "differs" with the first line that
 * differs.  A redo that is stopped (a crash, an interrupt, its timeout)
 * ends the redo there: the rest is lost.  "restored" then says
 * "redone", "differs", "lost" and, for each lost cell, why
 * ("lost_why").  Nobody hears a redone cell's events: it is no one's
 * request, and no transcript or notebook records it twice.
 *
 * The cells kept are a ring of REDO_KEEP_CELLS slots, each reusing its
 * buffer, so that keeping a cell allocates nothing once the ring is warm
 * (a cell's bookkeeping is on every answer's path); a cell heavier than
 * REDO_REC_MAX is kept as too large, and a lost cell no longer kept is
 * lost, saying so.
 *
 * Layer: under the run's answer (session-reply.c, which hands it each
 * finished cell, a restore and each redone cell's answer) and the
 * worker's link (a death between requests); calls down into the
 * checkpoint policy (a fresh interpreter's pristine checkpoint, ordered
 * before the cells), the worker's life, the outbox, and check.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "session-int.h"

/* The most a kept cell's request and texts may weigh: 256 slots of it
 * are 32 MiB at most. */
#define REDO_REC_MAX ((size_t)128 << 10)
/* Redos in a row, no cell of anyone's between, before the next is
 * refused. */
#define REDO_STREAK_MAX 2

/* ---- what a cell first answered ------------------------------------- */

/* Why r, answered resp, may not be run twice, into why; "" when it may:
 * check.h's rule, which --resume keeps too. */
static void
redo_why_not(const struct sreq *r, const struct response *resp, char *why,
    size_t len)
{
	check_once(status_names[resp->status], resp->effects,
	    resp->effects_more, r->asked_input, why, len);
}

/* Keep what cell r first answered, should a restore lose it, in the
 * ring's next slot: its request as JSON and its texts, copied into the
 * slot's own buffer, which the next cell in that slot reuses. */
void
session_redo_keep(struct session *s, const struct sreq *r,
    const struct response *resp)
{
	const struct response_error *e = resp->error;
	const char *part[REDO_PARTS] = { NULL, resp->output,
	    resp->stderr_text, resp->result, e != NULL ? e->type : NULL,
	    e != NULL ? e->message : NULL };
	struct redo_rec *k;
	size_t need, i;

	if (s->opts->no_redo || r->redo > 0 || r->cell <= 0)
		return;
	s->redo_refused = NULL;		/* a cell of someone's ran */
	s->redo_streak = 0;
	if (s->recs == NULL)
		s->recs = xcalloc(REDO_KEEP_CELLS, sizeof *s->recs);
	k = &s->recs[s->rec_next];
	s->rec_next = (s->rec_next + 1) % REDO_KEEP_CELLS;
	k->cell = r->cell;
	k->origin = r->origin;
	k->status = resp->status;
	k->has_result = resp->result != NULL;
	k->has_error = e != NULL;
	k->len[REDO_REQ] = json_dumpb(r->req, NULL, 0, JSON_COMPACT);
	k->len[REDO_OUT] = resp->output_len;
	k->len[REDO_ERR] = resp->stderr_len;
	k->len[REDO_RESULT] = resp->result_len;
	for (i = REDO_ETYPE; i < REDO_PARTS; i++)
		k->len[i] = part[i] != NULL ? strlen(part[i]) : 0;
	for (need = 0, i = 0; i < REDO_PARTS; i++)
		need += k->len[i];
	redo_why_not(r, resp, k->why_not, sizeof k->why_not);
	k->b.len = 0;
	if (need > REDO_REC_MAX)
		snprintf(k->why_not, sizeof k->why_not, "its request and "
		    "answer, %zu bytes, were too large to keep", need);
	if (k->why_not[0] != '\0')
		s->ckpt_unredoable = true;	/* the lazy policy keeps it */
	if (need > REDO_REC_MAX) {
		if (k->b.cap > REDO_REC_MAX)
			buf_free(&k->b);
		return;
	}
	buf_reserve(&k->b, need);
	k->b.len = json_dumpb(r->req, k->b.p, k->len[REDO_REQ],
	    JSON_COMPACT);
	for (i = REDO_OUT; i < REDO_PARTS; i++)
		buf_add(&k->b, part[i] != NULL ? part[i] : "", k->len[i]);
}

static struct redo_rec *
redo_rec_of(struct session *s, int cell)
{
	size_t i;

	for (i = 0; s->recs != NULL && i < REDO_KEEP_CELLS; i++)
		if (s->recs[i].cell == cell)
			return &s->recs[i];
	return NULL;
}

/* Part p of k's buffer, and its length into *n. */
static const char *
redo_part(const struct redo_rec *k, int p, size_t *n)
{
	size_t at = 0;
	int i;

	for (i = 0; i < p; i++)
		at += k->len[i];
	*n = k->len[p];
	return k->b.p + at;
}

/* What k first answered, as the fields check_view compares. */
static json_t *
redo_first(const struct redo_rec *k)
{
	const char *p, *q;
	size_t n, m;
	json_t *o = json_pack("{s:s}", "status", status_names[k->status]);

	p = redo_part(k, REDO_OUT, &n);
	json_object_set_new(o, "output", json_stringn(p, n));
	p = redo_part(k, REDO_ERR, &n);
	json_object_set_new(o, "stderr", json_stringn(p, n));
	p = redo_part(k, REDO_RESULT, &n);
	json_object_set_new(o, "result", k->has_result ? json_stringn(p, n) :
	    json_null());
	p = redo_part(k, REDO_ETYPE, &n);
	q = redo_part(k, REDO_EMSG, &m);
	json_object_set_new(o, "error", k->has_error ? json_pack("{s:s%, "
	    "s:s%}", "type", p, n, "message", q, m) : json_null());
	return o;
}

/* ---- the redo's outcome, cell by cell -------------------------------- */

static void
redo_add(struct redo *rd, int cell, enum redo_state state, char *why)
{
	rd->cells = xrealloc(rd->cells, (rd->ncells + 1) * sizeof *rd->cells);
	rd->cells[rd->ncells++] = (struct redo_cell){ .cell = cell,
	    .state = state, .why = why };
}

static struct redo_cell *
redo_cell_of(struct redo *rd, int cell)
{
	size_t i;

	for (i = 0; i < rd->ncells; i++)
		if (rd->cells[i].cell == cell)
			return &rd->cells[i];
	return NULL;
}

/* Every cell still to be run is lost, for why; those waiting in the
 * queue leave it. */
static void
redo_stop(struct session *s, const char *why)
{
	struct redo *rd = &s->redo;
	struct sreq *r;
	size_t i;

	while ((r = s->queue) != NULL && r->redo > 0) {
		s->queue = r->next;
		sreq_free(r);
	}
	if (s->queue == NULL)
		s->queue_tail = &s->queue;
	for (i = 0; i < rd->ncells; i++)
		if (rd->cells[i].state == REDO_PLANNED) {
			rd->cells[i].state = REDO_LOST;
			rd->cells[i].why = xstrdup(why);
		}
}

/* ---- a redo begun, run, ended ---------------------------------------- */

static struct sreq *
redo_sreq(struct session *s, const struct redo_rec *k)
{
	struct sreq *r = sreq_alloc(s, json_loadb(k->b.p, k->len[REDO_REQ],
	    JSON_ALLOW_NUL, NULL), json_null(), OP_EXEC);

	r->origin = k->origin;
	r->redo = k->cell;
	return r;
}

/*
 * A restore lost the cells restored's "lost" lists (held: the run the
 * worker died under, whose answer waits; NULL: it died between
 * requests).  Queue those that may be run again, in order up to the
 * first that may not, and say why for every other: true when any was
 * queued (the redo is under way, and held is the redo's until
 * session_redo_end), false when none was (restored says why).
 */
bool
session_redo_begin(struct session *s, struct sreq *held, json_t *restored)
{
	struct redo *rd = &s->redo;
	json_t *lost = json_object_get(restored, "lost"), *v;
	struct sreq *first = NULL, **tail = &first;
	int stop = 0;
	char *why;
	size_t i;

	if (s->opts->no_redo || json_array_size(lost) == 0)
		return false;
	json_array_foreach(lost, i, v) {
		int cell = (int)json_integer_value(v);
		struct redo_rec *k = redo_rec_of(s, cell);

		if (s->redo_refused != NULL) {
			redo_add(rd, cell, REDO_LOST, xstrdup(s->redo_refused));
			continue;
		}
		if (stop > 0) {
			xasprintf(&why, "it ran after cell %d, which was not "
			    "run again", stop);
			redo_add(rd, cell, REDO_LOST, why);
			continue;
		}
		if (k == NULL || k->why_not[0] != '\0') {
			redo_add(rd, cell, REDO_LOST, xstrdup(k == NULL ?
			    "coil no longer kept its code" : k->why_not));
			stop = cell;
			continue;
		}
		redo_add(rd, cell, REDO_PLANNED, NULL);
		*tail = redo_sreq(s, k);
		tail = &(*tail)->next;
	}
	s->redo_refused = NULL;
	rd->restored = json_incref(restored);
	if (first == NULL) {
		json_decref(session_redo_end(s, &held));
		return false;
	}
	*tail = s->queue;
	if (s->queue == NULL)
		s->queue_tail = tail;
	s->queue = first;
	/* A fresh interpreter takes its pristine checkpoint when the
	 * session is quiet, which the redo is not: now, before the cells,
	 * or a reset would start a new interpreter. */
	if (s->life.pristine_owed && life_ready(&s->life) &&
	    !link_ckpt_owed(&s->ctl)) {
		life_no_pristine(&s->life);
		session_order_ckpt(s, LINK_CK_PRISTINE, 0);
	}
	rd->held = held;
	return true;
}

/* Compare the redone cell r's answer with its first, on the fields
 * --replay --check compares: status, the texts, the error's type and
 * message. */
static void
redo_compare(struct session *s, struct redo_cell *c, struct response *resp)
{
	struct redo_rec *k = redo_rec_of(s, c->cell);
	json_t *now = response_json(resp, 0), *then = redo_first(k),
	    *fields = json_pack("{s:b, s:b, s:b, s:b, s:{s:b}}", "status", 1,
	    "output", 1, "stderr", 1, "result", 1, "error", "message", 1);
	struct buf was, got;
	char err[256];

	if (!s->redo.noise_ok) {
		if (check_noise_init(&s->redo.noise, NULL, err, sizeof err) ==
		    -1)
			fatal("%s", err);	/* the built-in patterns */
		s->redo.noise_ok = true;
	}
	buf_init(&was);
	buf_init(&got);
	buf_addstr(&was, "");
	buf_addstr(&got, "");
	check_view(&s->redo.noise, fields, then, &was);
	check_view(&s->redo.noise, fields, now, &got);
	json_decref(then);
	json_decref(fields);
	c->state = strcmp(was.p, got.p) == 0 ? REDO_SAME : REDO_DIFFERS;
	if (c->state == REDO_DIFFERS)
		c->diff = check_first_diff(was.p, got.p);
	buf_free(&was);
	buf_free(&got);
	json_decref(now);
}

/* A redone cell r answered resp (both taken): true when the redo is
 * over (session_redo_end says how it went). */
bool
session_redo_took(struct session *s, struct sreq *r, struct response *resp)
{
	struct redo_cell *c = redo_cell_of(&s->redo, r->redo);

	if (c != NULL && (resp->status == ST_TIMEOUT ||
	    resp->status == ST_INTERRUPTED)) {
		c->state = REDO_LOST;
		xasprintf(&c->why, "run again, it %s, so the redo stopped "
		    "there", resp->status == ST_TIMEOUT ? "ran past its "
		    "timeout" : "was interrupted");
		redo_stop(s, "it ran after a cell whose redo was stopped");
	} else if (c != NULL) {
		redo_compare(s, c, resp);
	}
	response_free(resp);
	sreq_free(r);
	return s->queue == NULL || s->queue->redo == 0;
}

/* The worker died under the redone cell r (how) and was restored as
 * restored says: the redo ends there, and what it had redone after the
 * new restore's cell is lost again. */
void
session_redo_broke(struct session *s, struct sreq *r, json_t *restored)
{
	struct redo *rd = &s->redo;
	json_t *cell = json_object_get(restored, "cell"), *v;
	struct redo_cell *c = redo_cell_of(rd, r->redo);
	size_t i;

	c->state = REDO_LOST;
	xasprintf(&c->why, "run again, it %s too (%s), so the redo stopped "
	    "there", r->killed ? "was killed" : "crashed", r->how);
	redo_stop(s, "it ran after a cell whose redo crashed");
	for (i = 0; i < rd->ncells; i++) {
		c = &rd->cells[i];
		if ((c->state == REDO_SAME || c->state == REDO_DIFFERS) &&
		    (!json_is_integer(cell) || c->cell >
		    json_integer_value(cell))) {
			c->state = REDO_LOST;
			c->why = xstrdup("run again, then lost again when a "
			    "later cell's redo crashed");
		}
	}
	json_array_foreach(json_object_get(restored, "lost"), i, v)
		if (redo_cell_of(rd, (int)json_integer_value(v)) == NULL)
			redo_add(rd, (int)json_integer_value(v), REDO_LOST,
			    xstrdup("lost when a redone cell crashed"));
	json_object_set(rd->restored, "cell", cell);
	json_object_set(rd->restored, "threads_lost", json_object_get(
	    restored, "threads_lost"));
	sreq_free(r);
}

static int
redo_by_cell(const void *a, const void *b)
{
	const struct redo_cell *x = a, *y = b;

	return (x->cell > y->cell) - (x->cell < y->cell);
}

/* The redo is over: restored completed with what became of each lost
 * cell (a new reference), and the run whose answer waited for it
 * (NULL: none) into *held. */
json_t *
session_redo_end(struct session *s, struct sreq **held)
{
	struct redo *rd = &s->redo;
	json_t *redone = json_array(), *differs = json_array();
	json_t *lost = json_array(), *why = json_array(), *o = rd->restored;
	size_t i;

	qsort(rd->cells, rd->ncells, sizeof *rd->cells, redo_by_cell);
	for (i = 0; i < rd->ncells; i++) {
		struct redo_cell *c = &rd->cells[i];
		json_t *n = json_integer(c->cell);

		if (c->state == REDO_SAME)
			json_array_append(redone, n);
		else if (c->state == REDO_DIFFERS)
			json_array_append_new(differs, json_pack("{s:O, s:O}",
			    "cell", n, "first", c->diff));
		else {
			json_array_append(lost, n);
			json_array_append_new(why, json_pack("{s:O, s:s}",
			    "cell", n, "why", c->why != NULL ? c->why : "?"));
		}
		json_decref(n);
		free(c->why);
		json_decref(c->diff);
	}
	json_object_set_new(o, "redone", redone);
	json_object_set_new(o, "differs", differs);
	json_object_set_new(o, "lost", lost);
	json_object_set_new(o, "lost_why", why);
	/* Should the worker die again and again before a cell of anyone's
	 * has run, the cells run again may be why: not a third time. */
	if (json_array_size(redone) + json_array_size(differs) > 0 &&
	    ++s->redo_streak >= REDO_STREAK_MAX)
		s->redo_refused = "the worker died each time right after it was "
		    "run again, before any other cell ran";
	*held = rd->held;
	free(rd->cells);
	rd->cells = NULL;
	rd->ncells = 0;
	rd->restored = NULL;
	rd->held = NULL;
	return o;
}

void
session_redo_free(struct session *s)
{
	size_t i;

	for (i = 0; s->recs != NULL && i < REDO_KEEP_CELLS; i++)
		buf_free(&s->recs[i].b);
	free(s->recs);
	if (s->redo.noise_ok)
		check_noise_free(&s->redo.noise);
	for (i = 0; i < s->redo.ncells; i++) {
		free(s->redo.cells[i].why);
		json_decref(s->redo.cells[i].diff);
	}
	free(s->redo.cells);
	json_decref(s->redo.restored);
	if (s->redo.held != NULL)
		sreq_free(s->redo.held);
}
