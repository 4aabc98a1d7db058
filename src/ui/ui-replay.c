/*
 * ui-replay.c - coil --replay FILE on a terminal: the file's cells
 * stepped through in the curses UI (see ui-int.h; replay.h is the line
 * front end).  Supervisor only.
 *
 * The UI's own session is fresh (with the recorded options, as
 * replay_prepare took them); the replay is one more client of it, of
 * origin "replay", so its cells show in the panes as any client's do,
 * and the person may still type cells of their own between steps.  The
 * keys (F4 focuses them; they are ui-keys.c's table, so F1 lists them):
 * n runs the next cell, a every cell left, g N goes to cell N.  Going
 * back restores the checkpoint of the session's state after cell N (a
 * rollback to the session cell that cell N's answer named); when that
 * checkpoint is gone the session is reset and the cells run again from
 * the first.  "Cell i of n" means the session stands after the file's
 * cell i.
 *
 * Each answer is compared with what the file expects as --check does
 * (check.c: the same fields, the same normalised noise); a cell
 * that differs is shown as its recorded and new outcomes side by side,
 * or one above the other on a narrow terminal.
 *
 * One request of the replay's is in flight at a time, so each cell
 * meets the state the recording's met.  The file is read through at the
 * start, so that n is known for the status line and g can go anywhere;
 * its cells go to an unlinked temp file, one line each, and each is read
 * back when it runs: a transcript of any size holds a few bytes of
 * memory a cell.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <ncurses.h>

#include "replay-int.h"
#include "ui-int.h"

enum rp_wait { RW_NONE, RW_CELL, RW_PIN, RW_ROLLBACK, RW_RESET };

struct rp_cell {
	long off;		/* its line in the spill; -1: in mem */
	int n, line;		/* as struct rcell's */
	int after;		/* the session's cell after it ran; 0: not
				   known (not run, or no cell) */
	char *was, *now;	/* the compared views when it differed */
	char *pin;		/* as struct rcell's */
};

struct ui_replay {
	struct rp_cell *cells;
	int n;
	FILE *spill;		/* [req, expect] a line, unlinked */
	bool spill_full;	/* a write failed: no more go there */
	json_t *mem;		/* the same in memory, with no temp file */
	int first_mem;		/* mem's first cell; all later are too */
	int client;
	struct check_noise noise;
	int done;		/* the session stands after this many */
	int target;		/* run until done is this */
	int go;			/* g N's N, while its rollback is out */
	enum rp_wait wait;
	int *differ;		/* the cells (indexes) that differed in the
				   run going on, to show at its end */
	int ndiffer;
	bool typing;		/* g's N is being typed */
	char num[12];
};

static void rp_advance(struct ui *u);

/* ---- the cells, kept aside ------------------------------------------- */

/* Keep c (cleared after) as the replay's next cell. */
static void
rp_keep(struct ui_replay *rp, struct rcell *c)
{
	struct rp_cell *k;
	json_t *both = json_pack("[O?, O?]", c->req, c->expect);

	rp->cells = xrealloc(rp->cells, (size_t)(rp->n + 1) *
	    sizeof *rp->cells);
	k = &rp->cells[rp->n++];
	*k = (struct rp_cell){ .off = -1, .n = c->n, .line = c->line,
	    .pin = c->pin };
	c->pin = NULL;
	if (rp->spill != NULL && !rp->spill_full) {
		k->off = ftell(rp->spill);
		if (k->off == -1 || json_dumpf(both, rp->spill,
		    JSON_COMPACT) == -1 || putc('\n', rp->spill) == EOF) {
			/* the disk is full: this cell and the rest in memory;
			 * those before stay readable where they are */
			rp->spill_full = true;
			k->off = -1;
		}
	}
	if (k->off == -1) {
		if (json_array_size(rp->mem) == 0)
			rp->first_mem = rp->n - 1;
		json_array_append(rp->mem, both);
	}
	json_decref(both);
	rcell_clear(c);
}

/* Cell i as rsrc_next gave it, into c (the caller clears it); false
 * when the temp file cannot give it back. */
static bool
rp_cell_load(struct ui_replay *rp, int i, struct rcell *c)
{
	struct rp_cell *k = &rp->cells[i];
	json_t *both = NULL;
	char *line = NULL;
	size_t cap = 0;

	if (k->off >= 0) {
		if (rp->spill != NULL && fseek(rp->spill, k->off, SEEK_SET) ==
		    0 && getline(&line, &cap, rp->spill) > 0)
			both = json_loads(line, JSON_ALLOW_NUL, NULL);
		free(line);
	} else {
		both = json_incref(json_array_get(rp->mem, (size_t)(i -
		    rp->first_mem)));
	}
	if (!json_is_array(both)) {
		json_decref(both);
		return false;
	}
	c->n = k->n;
	c->line = k->line;
	c->req = json_incref(json_array_get(both, 0));
	c->expect = json_is_null(json_array_get(both, 1)) ? NULL :
	    json_incref(json_array_get(both, 1));
	json_decref(both);
	return true;
}

/* ---- the side-by-side view ------------------------------------------- */

/* Up to w columns of s (a line, NUL-ended) padded with blanks to w. */
static void
rp_column(struct buf *b, const char *s, int w)
{
	mbstate_t st;
	wchar_t wc;
	size_t k;
	int cw, used = 0;

	memset(&st, 0, sizeof st);
	while (*s != '\0') {
		k = mbrtowc(&wc, s, strlen(s), &st);
		if (k == (size_t)-1 || k == (size_t)-2) {
			memset(&st, 0, sizeof st);
			wc = L'?';
			k = 1;
		}
		cw = wcwidth(wc);
		if (cw < 0)
			cw = 1;
		if (used + cw > w)
			break;
		if (wc == L'?' && *s != '?')
			buf_add(b, "?", 1);
		else
			buf_add(b, s, k);
		used += cw;
		s += k;
	}
	buf_printf(b, "%*s", w - used, "");
}

/* The lines of a view from *p on that belong to one field: its header
 * (not indented) and its indented lines.  Returns their count, and
 * moves *p past them. */
static int
rp_section(char ***p, char **end)
{
	char **q = *p, **start = *p;

	if (q == end)
		return 0;
	for (q++; q < end && strncmp(*q, "  ", 2) == 0; q++)
		;
	*p = q;
	return (int)(q - start);
}

/* text split into its lines (in place): their count; *v the caller's
 * to free. */
static int
rp_lines(char *text, char ***v)
{
	int n = 0;
	char *nl;

	*v = NULL;
	for (; *text != '\0'; text = nl + 1) {
		*v = xrealloc(*v, (size_t)(n + 1) * sizeof **v);
		(*v)[n++] = text;
		if ((nl = strchr(text, '\n')) == NULL)
			break;
		*nl = '\0';
	}
	return n;
}

/* Both views a field at a time, the rows that differ marked "!". */
static void
rp_side(struct buf *b, const char *was, const char *now, int cols)
{
	char *a = xstrdup(was), *z = xstrdup(now), **la, **lz, **pa, **pz;
	int na = rp_lines(a, &la), nz = rp_lines(z, &lz), w = (cols - 5) / 2;
	int ka, kz, i;
	char **sa, **sz;

	buf_printf(b, "  ");
	rp_column(b, "recorded", w);
	buf_printf(b, "   replayed\n");
	for (pa = la, pz = lz; pa < la + na || pz < lz + nz; ) {
		sa = pa;
		sz = pz;
		ka = rp_section(&pa, la + na);
		kz = rp_section(&pz, lz + nz);
		for (i = 0; i < ka || i < kz; i++) {
			const char *l = i < ka ? sa[i] : "", *r = i < kz ?
			    sz[i] : "";

			buf_addstr(b, strcmp(l, r) != 0 ? "! " : "  ");
			rp_column(b, l, w);
			buf_printf(b, " | %s\n", r);
		}
	}
	free(la);
	free(lz);
	free(a);
	free(z);
}

/* The cells that differ (idx[0..n)): each cell's outcomes side by
 * side, or one above the other on a narrow terminal. */
static void
rp_show(struct ui *u, const int *idx, int n)
{
	struct ui_replay *rp = u->rp;
	struct buf b;
	char title[96];
	int i;

	buf_init(&b);
	buf_addstr(&b, "");
	for (i = 0; i < n; i++) {
		struct rp_cell *c = &rp->cells[idx[i]];
		struct rcell rc = { 0 };

		if (c->line > 0)
			buf_printf(&b, "%scell %d of %d (line %d of the file) "
			    "differs:\n", i > 0 ? "\n" : "", idx[i] + 1,
			    rp->n, c->line);
		else
			buf_printf(&b, "%scell %d of %d (cell %d of the file) "
			    "differs:\n", i > 0 ? "\n" : "", idx[i] + 1,
			    rp->n, c->n);
		if (rp_cell_load(rp, idx[i], &rc))
			buf_printf(&b, "code:\n%s\n", json_string_value(
			    json_object_get(rc.req, "code")) ?: "(none)");
		rcell_clear(&rc);
		if (u->cols >= 72)
			rp_side(&b, c->was, c->now, u->cols - 2);
		else
			buf_printf(&b, "recorded:\n%sreplayed:\n%s", c->was,
			    c->now);
	}
	snprintf(title, sizeof title, " replay: %d cell%s differ%s from the "
	    "recording", n, n == 1 ? "" : "s", n == 1 ? "s" : "");
	ui_overlay(u, title, b.p);
	buf_free(&b);
}

/* ---- the steps ------------------------------------------------------- */

/* Compare cell i's new outcome with the file's; keep the views when
 * they differ. */
static void
rp_compare(struct ui *u, int i, json_t *got)
{
	struct ui_replay *rp = u->rp;
	struct rp_cell *c = &rp->cells[i];
	struct rcell rc = { 0 };
	struct buf was, now;

	free(c->was);
	free(c->now);
	c->was = c->now = NULL;
	if (!rp_cell_load(rp, i, &rc) || !json_is_object(rc.expect)) {
		rcell_clear(&rc);
		return;
	}
	buf_init(&was);
	buf_init(&now);
	buf_addstr(&was, "");
	buf_addstr(&now, "");
	check_view(&rp->noise, rc.expect, rc.expect, &was);
	check_view(&rp->noise, rc.expect, got, &now);
	rcell_clear(&rc);
	if (strcmp(was.p, now.p) != 0) {
		c->was = xstrdup(was.p);
		c->now = xstrdup(now.p);
		rp->differ = xrealloc(rp->differ, (size_t)(rp->ndiffer + 1) *
		    sizeof *rp->differ);
		rp->differ[rp->ndiffer++] = i;
		ui_note_line(u, UL_NOTE, "replay: cell %d of %d differs from "
		    "the recording", i + 1, rp->n);
	}
	buf_free(&was);
	buf_free(&now);
}

/* The request {"op": op, key: val} (key NULL: none; val is taken). */
static void
rp_submit_op(struct ui *u, const char *op, const char *key, json_t *val,
    enum rp_wait w)
{
	json_t *req = json_pack("{s:s}", "op", op);
	const struct request_op *o = request_op_find(op);

	if (key != NULL)
		json_object_set_new(req, key, val);
	u->rp->wait = w;
	session_submit(u->s, u->rp->client, req, json_null(), o->op);
}

/* The run is over: say where it stands, show what differed. */
static void
rp_stop(struct ui *u)
{
	struct ui_replay *rp = u->rp;

	rp->wait = RW_NONE;
	rp->target = rp->done;
	if (rp->done == rp->n)
		snprintf(u->note, sizeof u->note, "replay: at the end of %s",
		    u->opts->replay);
	else
		snprintf(u->note, sizeof u->note, "replay: after cell %d; n "
		    "runs the next", rp->done);
	if (rp->ndiffer > 0)
		rp_show(u, rp->differ, rp->ndiffer);
	rp->ndiffer = 0;
	u->dirty = true;
}

/* Submit the cells until one is in flight or the target is reached;
 * a cell that is no request is skipped, said in the output. */
static void
rp_advance(struct ui *u)
{
	struct ui_replay *rp = u->rp;
	char err[512];
	json_t *req;
	int op;

	while (rp->done < rp->target && u->ended == NULL) {
		struct rp_cell *c = &rp->cells[rp->done];
		struct rcell rc = { 0 };
		int got;

		if (!rp_cell_load(rp, rp->done, &rc)) {
			snprintf(err, sizeof err, "it could not be read back "
			    "from the temp file: %s", strerror(errno));
			got = -1;
		} else {
			got = replay_request(&rc, &req, &op, err, sizeof err);
		}
		if (got == 0) {
			rp->wait = RW_CELL;
			session_submit(u->s, rp->client, req,
			    json_integer(rc.n), (enum op)op);
			rcell_clear(&rc);
			return;
		}
		rcell_clear(&rc);
		ui_note_line(u, UL_NOTE, "replay: cell %d skipped: %s",
		    rp->done + 1, err);
		c->after = 0;
		rp->done++;
	}
	rp_stop(u);
}

/* The answer to the replay's request in flight. */
static void
rp_event(void *ctx, const struct session_event *ev)
{
	struct ui *u = ctx;
	struct ui_replay *rp = u->rp;
	json_t *got;
	bool ok;

	if (ev->kind == EV_CANCELLED) {
		/* dropped before it ran (the session is going down) */
		rp_stop(u);
		return;
	}
	if (ev->kind != EV_RESPONSE)
		return;
	got = response_json(ev->resp, 0);
	ok = strcmp(json_string_value(json_object_get(got, "status")) ?: "",
	    "ok") == 0;
	if (rp->wait == RW_CELL) {
		rp->cells[rp->done].after = (int)json_integer_value(
		    json_object_get(got, "cell"));
		if (ev->resp->status == ST_INTERRUPTED &&
		    ev->resp->seq == u->stopped)
			/* the person stopped it: no difference of the file's */
			ui_note_line(u, UL_NOTE, "replay: cell %d of %d was "
			    "interrupted by you: not compared", rp->done + 1,
			    rp->n);
		else
			rp_compare(u, rp->done, got);
		rp->done++;
		if (rp->cells[rp->done - 1].pin != NULL) {
			/* the state a rollback later in the file goes back
			 * to, kept before the next cell runs */
			rp_submit_op(u, "snapshot", "name", json_string(
			    rp->cells[rp->done - 1].pin), RW_PIN);
			json_decref(got);
			return;
		}
	} else if (rp->wait == RW_PIN && !ok) {
		ui_note_line(u, UL_NOTE, "replay: the state after cell %d "
		    "could not be kept for the rollback after it: %s",
		    rp->done, json_string_value(json_object_get(json_object_get(
		    got, "error"), "message")) ?: "no reason given");
	} else if (rp->wait == RW_ROLLBACK && ok) {
		/* the record asks for the namespace (ui-record.c's
		 * rec_op_answer), as after any client's rollback */
		rp->done = rp->target = rp->go;
	} else if (rp->wait == RW_ROLLBACK) {
		/* its checkpoint is gone: from the start again */
		ui_note_line(u, UL_NOTE, "replay: no checkpoint after cell "
		    "%d; running cells 1 to %d again", rp->go, rp->go);
		rp->target = rp->go;
		json_decref(got);
		rp_submit_op(u, "reset", NULL, NULL, RW_RESET);
		return;
	} else if (rp->wait == RW_RESET) {
		rp->done = 0;	/* the record asks for the namespace */
	}
	json_decref(got);
	rp_advance(u);
}

/* ---- the keys -------------------------------------------------------- */

static bool
rp_idle(struct ui *u)
{
	if (u->rp == NULL) {
		snprintf(u->note, sizeof u->note, "no replay: start coil "
		    "--replay FILE on a terminal");
		return false;
	}
	if (u->rp->wait != RW_NONE) {
		snprintf(u->note, sizeof u->note, "replay: cell %d is running",
		    u->rp->done + 1);
		return false;
	}
	return u->ended == NULL;
}

void
ui_replay_next(struct ui *u)
{
	if (!rp_idle(u))
		return;
	if (u->rp->done == u->rp->n) {
		snprintf(u->note, sizeof u->note, "replay: at the end; g N "
		    "goes back to cell N");
		return;
	}
	u->rp->target = u->rp->done + 1;
	rp_advance(u);
}

/* Ctrl-C: interrupt the running cell; a run stops once it answers. */
void
ui_replay_stop(struct ui *u)
{
	if (u->rp == NULL || u->rp->wait == RW_NONE) {
		snprintf(u->note, sizeof u->note, "no cell of the replay runs");
		return;
	}
	if (u->rp->wait == RW_CELL) {
		u->rp->target = u->rp->done + 1;
		u->stopped = u->running;
		ui_interrupt(u);
	}
	/* keeping the state of the cell that ran (done counts it): the
	 * run stops after it */
	if (u->rp->wait == RW_PIN)
		u->rp->target = u->rp->done;
	snprintf(u->note, sizeof u->note, "replay: interrupting; the run "
	    "stops after cell %d", u->rp->wait == RW_PIN ? u->rp->done :
	    u->rp->done + 1);
}

void
ui_replay_all(struct ui *u)
{
	if (!rp_idle(u))
		return;
	u->rp->target = u->rp->n;
	rp_advance(u);
}

/* Go to the state after cell n: forward by running, back by the
 * checkpoint of that state (or from the start without one). */
static void
rp_goto(struct ui *u, int n)
{
	struct ui_replay *rp = u->rp;

	if (n < 0 || n > rp->n) {
		snprintf(u->note, sizeof u->note, "replay: no cell %d (the "
		    "file has %d; g 0 starts again)", n, rp->n);
		return;
	}
	if (n >= rp->done) {
		rp->target = n;
		rp_advance(u);
		return;
	}
	rp->go = n;
	rp->target = n;
	if (n > 0 && rp->cells[n - 1].after > 0)
		rp_submit_op(u, "rollback", "to", json_integer(rp->cells[n -
		    1].after), RW_ROLLBACK);
	else
		rp_submit_op(u, "reset", NULL, NULL, RW_RESET);
	snprintf(u->note, sizeof u->note, "replay: going back to cell %d", n);
}

void
ui_replay_goto(struct ui *u)
{
	if (!rp_idle(u))
		return;
	u->rp->typing = true;
	u->rp->num[0] = '\0';
	u->dirty = true;
}

/* g's number as it is typed: digits, Backspace, Enter, Esc.  Over the
 * replay's comparison, a step key closes it and steps on. */
bool
ui_replay_key(struct ui *u, int key)
{
	struct ui_replay *rp = u->rp;
	size_t n;

	if (rp != NULL && u->focus == F_OVERLAY) {
		if (key < 0x80 && key > 0 && strchr("nagd", key) != NULL) {
			u->focus = F_REPLAY;
			u->dirty = true;
		}
		return false;
	}
	if (rp == NULL || !rp->typing)
		return false;
	n = strlen(rp->num);
	if (key >= '0' && key <= '9' && n + 1 < sizeof rp->num) {
		rp->num[n] = (char)key;
		rp->num[n + 1] = '\0';
	} else if ((key == KEY_BACKSPACE || key == 127 || key == 8) && n > 0) {
		rp->num[n - 1] = '\0';
	} else if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		rp->typing = false;
		if (n > 0)
			rp_goto(u, atoi(rp->num));
	} else if (key == 27) {
		rp->typing = false;
	}
	u->dirty = true;
	return true;
}

void
ui_replay_diffs(struct ui *u)
{
	struct ui_replay *rp = u->rp;
	int *idx, n = 0, i;

	if (rp == NULL)
		return;
	idx = xmalloc((size_t)(rp->n + 1) * sizeof *idx);
	for (i = 0; i < rp->done; i++)
		if (rp->cells[i].was != NULL)
			idx[n++] = i;
	if (n == 0)
		snprintf(u->note, sizeof u->note, "replay: no cell run so far "
		    "differs from the recording");
	else
		rp_show(u, idx, n);
	free(idx);
}

void
ui_replay_focus(struct ui *u)
{
	if (u->rp == NULL) {
		rp_idle(u);
		return;
	}
	u->focus = u->focus == F_REPLAY ? F_INPUT : F_REPLAY;
	u->dirty = true;
}

void
ui_replay_status(struct ui *u, char *s, size_t len)
{
	struct ui_replay *rp = u->rp;
	char *rest;

	if (rp == NULL)
		return;
	rest = xstrdup(s);
	if (rp->typing)
		snprintf(s, len, " replay: go to cell: %s_ (Enter goes, Esc "
		    "drops) |%s", rp->num, rest);
	else
		snprintf(s, len, " replay: cell %d of %d%s |%s", rp->done,
		    rp->n, rp->wait != RW_NONE ? ", running" : "", rest);
	free(rest);
}

/* ---- start and end --------------------------------------------------- */

int
ui_replay_open(struct ui *u, char *err, size_t len)
{
	struct ui_replay *rp = xcalloc(1, sizeof *rp);
	struct rsrc *src = replay_take();
	int rc;

	struct rcell c = { 0 };

	u->rp = rp;
	rp->mem = json_array();
	if (check_noise_init(&rp->noise, u->opts->ignore, err, len) == -1) {
		rsrc_close(src);
		return -1;
	}
	/* fs(private): an unlinked file of libc's tmpfile, made O_EXCL (or
	 * O_TMPFILE) in the supervisor's /tmp */
	rp->spill = tmpfile();
	if (rp->spill != NULL && fcntl(fileno(rp->spill), F_SETFD,
	    FD_CLOEXEC) == -1) {
		fclose(rp->spill);
		rp->spill = NULL;
	}
	while ((rc = rsrc_next(src, &c, err, len)) == 1)
		rp_keep(rp, &c);
	rcell_clear(&c);
	if (rc == -1)
		ui_note_line(u, UL_NOTE, "replay: %s; the cells before it are "
		    "here", err);
	if (rsrc_note(src) != NULL)
		ui_note_line(u, UL_NOTE, "replay: %s", rsrc_note(src));
	ui_note_line(u, UL_NOTE, "replay of %s (%s): %d cell%s; n runs the "
	    "next, a all, g N goes to cell N, F4 the input", u->opts->replay,
	    rsrc_kind_names[rsrc_kind(src)], rp->n, rp->n == 1 ? "" : "s");
	rsrc_close(src);
	rp->client = session_attach(u->s, ORIGIN_REPLAY, 0, rp_event, u);
	u->focus = F_REPLAY;
	return 0;
}

void
ui_replay_free(struct ui *u)
{
	struct ui_replay *rp = u->rp;
	int i;

	if (rp == NULL)
		return;
	for (i = 0; i < rp->n; i++) {
		free(rp->cells[i].was);
		free(rp->cells[i].now);
		free(rp->cells[i].pin);
	}
	free(rp->cells);
	if (rp->spill != NULL)
		fclose(rp->spill);
	json_decref(rp->mem);
	free(rp->differ);
	check_noise_free(&rp->noise);
	free(rp);
	u->rp = NULL;
}
