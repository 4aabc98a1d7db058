/*
 * ui-branch.c - the session's branches in the curses UI (see
 * ui-int.h): fork the live session here, see which branch one is on,
 * go from branch to branch as tmux goes from window to window (Esc n,
 * Esc p, and F6's picker from the sessions op), and two branches'
 * namespaces side by side (:compare, from two vars requests).
 *
 * The UI is one client of the hub, which an agent may share (attached):
 * it never adopts a branch, whose default the agent's own requests do
 * not share anyway, but once the session has branches every request of
 * the person's names the one they are on ("session").  A %switch typed
 * as a cell adopts in the core; its answer moves the view there too, so
 * what the person sees and where their cells go stay one branch.  The
 * cells of every branch stay in the record, each header naming its
 * branch: a person on a branch sees the agent go on with main.
 * Supervisor only; single-threaded.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncurses.h>

#include "ui-int.h"

#define UI_MAIN "main"

void
ui_branch_init(struct ui *u)
{
	snprintf(u->sess, sizeof u->sess, "%s", UI_MAIN);
	u->cmp[0].cell = u->cmp[1].cell = -1;
}

static void
ui_cmp_clear(struct ui *u)
{
	int i;

	for (i = 0; i < 2; i++) {
		json_decref(u->cmp[i].vars);
		u->cmp[i].vars = NULL;
		u->cmp[i].id = 0;
		u->cmp[i].cell = -1;
	}
}

void
ui_branch_free(struct ui *u)
{
	ui_cmp_clear(u);
	json_decref(u->branches);
	u->branches = NULL;
}

/* A member "session" that is a branch's name, else NULL. */
static const char *
ui_session_of(json_t *o)
{
	const char *s = json_string_value(json_object_get(o, "session"));

	return s != NULL && *s != '\0' && strlen(s) <= UI_SESSION_MAX ? s :
	    NULL;
}

const char *
ui_ev_session(const struct session_event *ev)
{
	const char *s = ev->session;

	if (s != NULL && *s != '\0' && strlen(s) <= UI_SESSION_MAX)
		return s;
	/* a line of an older listener's, or a history line */
	s = ui_session_of(ev->info);

	if (s == NULL && ev->kind == EV_QUEUED)
		s = ui_session_of(ev->req);
	if (s == NULL && ev->resp != NULL)
		s = ui_session_of(ev->resp->fields);
	return s;
}

bool
ui_branch_here(const struct ui *u, const char *name)
{
	if (name == NULL || *name == '\0')
		name = UI_MAIN;
	return strcmp(name, u->sess) == 0;
}

void
ui_branch_request(struct ui *u, json_t *req)
{
	if (u->branched && json_object_get(req, "session") == NULL)
		json_object_set_new(req, "session", json_string(u->sess));
}

void
ui_branch_event(struct ui *u, const struct session_event *ev)
{
	const char *s = ui_ev_session(ev);

	if (s != NULL && strcmp(s, UI_MAIN) != 0)
		u->branched = true;
}

const char *
ui_branch_status(const struct ui *u)
{
	return u->branched || strcmp(u->sess, UI_MAIN) != 0 ? u->sess : "";
}

/*
 * The core sums a branch's namespace up for observers only when the
 * branch itself counts them (session-run.c reads the branch's own
 * ns_observers, which the hub keeps on main): until it does, a cell
 * of the person's branch whose namespace event did not come before
 * its answer (main's always does) is followed by a vars request.
 */
void
ui_branch_answered(struct ui *u, const struct ui_cell *c)
{
	if (c->session[0] == '\0' || !ui_branch_here(u, c->session) ||
	    !c->done || c->cell <= u->vars_cell || c->resp == NULL ||
	    !(c->resp->has & RESP_EXEC))
		return;
	u->vars_cell = c->cell;
	ui_submit(u, json_pack("{s:s}", "op", "vars"), W_VARS);
}

/* ---- going to a branch ------------------------------------------------- */

void
ui_branch_start(struct ui *u, const char *name)
{
	snprintf(u->sess, sizeof u->sess, "%s", name);
	u->branched = true;
}

/* The person is on name from now on: its namespace, its running cell. */
static void
ui_go(struct ui *u, const char *name)
{
	size_t i;

	snprintf(u->sess, sizeof u->sess, "%s", name);
	u->branched = true;
	u->running = 0;
	for (i = 0; i < u->ncells; i++) {
		const struct ui_cell *c = &u->cells[i];

		if (c->started_ms != 0 && !c->done &&
		    ui_branch_here(u, c->session))
			u->running = c->seq;
	}
	u->checkpoints = -1;
	u->vars_cell = -1;
	ui_submit(u, json_pack("{s:s}", "op", "vars"), W_VARS);
	u->dirty = true;
}

static void
ui_ask_sessions(struct ui *u, enum ui_br_want want, const char *target)
{
	u->br_want = want;
	snprintf(u->br_target, sizeof u->br_target, "%s", target != NULL ?
	    target : "");
	ui_submit(u, json_pack("{s:s}", "op", "sessions"), W_SESSIONS);
}

void
ui_branch_switch(struct ui *u, const char *name)
{
	if (*name == '\0') {
		snprintf(u->note, sizeof u->note, "usage: :switch NAME (F6 "
		    "lists the branches)");
		return;
	}
	ui_ask_sessions(u, BR_SWITCH, name);
}

void ui_branch_pick(struct ui *u) { ui_ask_sessions(u, BR_PICK, NULL); }
void ui_branch_next(struct ui *u) { ui_ask_sessions(u, BR_NEXT, NULL); }
void ui_branch_prev(struct ui *u) { ui_ask_sessions(u, BR_PREV, NULL); }

static const char *
ui_br_name(json_t *b)
{
	const char *s = json_string_value(json_object_get(b, "name"));

	return s != NULL ? s : "?";
}

/* The index of the branch the person is on in u->branches, or 0. */
static size_t
ui_br_here_at(struct ui *u)
{
	size_t i;

	for (i = 0; i < json_array_size(u->branches); i++)
		if (ui_branch_here(u, ui_br_name(json_array_get(u->branches,
		    i))))
			return i;
	return 0;
}

/* ---- the picker ------------------------------------------------------ */

/* The picker's text, the picked line marked '>', the person's '*'. */
static void
ui_picker_draw(struct ui *u)
{
	struct buf b;
	size_t i;
	char mem[24], from[16];
	json_t *s;
	int nw = 6;		/* "parent" */

	json_array_foreach(u->branches, i, s)
		if ((int)strlen(ui_br_name(s)) > nw)
			nw = (int)strlen(ui_br_name(s));
	nw = nw > 24 ? 24 : nw;
	buf_init(&b);
	buf_printf(&b, "   %-*s %-*s %5s %5s %-9s %s\n", nw, "name", nw,
	    "parent", "fork", "cell", "state", "memory");
	json_array_foreach(u->branches, i, s) {
		json_t *parent = json_object_get(s, "parent");
		json_t *fc = json_object_get(s, "from_cell");
		json_t *cell = json_object_get(s, "cell");
		json_t *priv = json_object_get(json_object_get(s, "memory"),
		    "private");
		const char *state = json_string_value(json_object_get(s,
		    "state"));

		if (json_is_integer(priv))
			ui_size(mem, sizeof mem, (unsigned long long)
			    json_integer_value(priv));
		else
			snprintf(mem, sizeof mem, "?");
		if (json_is_integer(fc))
			snprintf(from, sizeof from, "%lld", (long long)
			    json_integer_value(fc));
		else
			snprintf(from, sizeof from, "-");
		buf_printf(&b, "%c%c %-*.*s %-*.*s %5s %5lld %-9s %s private\n",
		    i == u->br_sel ? '>' : ' ', ui_branch_here(u,
		    ui_br_name(s)) ? '*' : ' ', nw, nw, ui_br_name(s), nw, nw,
		    json_is_string(parent) ? json_string_value(parent) : "-",
		    from, (long long)json_integer_value(cell), state != NULL ?
		    state : "?", mem);
	}
	buf_addstr(&b, "\nEnter: go there   c: compare with yours (*)   "
	    "x: close it   f: fork yours   Esc: back\n");
	ui_overlay(u, " branches (F6): Up/Down pick", b.p);
	buf_free(&b);
	u->picking = true;
}

static void
ui_picker_close(struct ui *u)
{
	u->picking = false;
	u->focus = u->back == F_OVERLAY ? F_INPUT : u->back;
	u->dirty = true;
}

static void
y_close(struct ui *u, const char *name)
{
	ui_submit(u, json_pack("{s:s, s:s}", "op", "close", "session", name),
	    W_CLOSE);
}

void
ui_branch_close(struct ui *u, const char *name)
{
	char *q;

	if (*name == '\0') {
		snprintf(u->note, sizeof u->note, "usage: :close NAME");
		return;
	}
	xasprintf(&q, " close the branch '%.64s'? its running cell is "
	    "killed (y/n) ", name);
	ui_ask(u, y_close, name, q);
}

bool
ui_branch_key(struct ui *u, int key)
{
	size_t n = json_array_size(u->branches);
	const char *name;

	if (!u->picking || u->focus != F_OVERLAY)
		return false;
	name = u->br_sel < n ? ui_br_name(json_array_get(u->branches,
	    u->br_sel)) : NULL;
	switch (key) {
	case KEY_UP:
	case 'k':
		if (u->br_sel > 0)
			u->br_sel--;
		ui_picker_draw(u);
		return true;
	case KEY_DOWN:
	case 'j':
		if (u->br_sel + 1 < n)
			u->br_sel++;
		ui_picker_draw(u);
		return true;
	case '\n':
	case '\r':
	case KEY_ENTER:
		ui_picker_close(u);
		if (name != NULL && !ui_branch_here(u, name)) {
			ui_go(u, name);
			snprintf(u->note, sizeof u->note, "on branch '%s' "
			    "(Esc n, Esc p: the next, the previous)", name);
		}
		return true;
	case 'c':
		ui_picker_close(u);
		if (name != NULL)
			ui_branch_compare(u, u->sess, name);
		return true;
	case 'x':
		ui_picker_close(u);
		if (name != NULL)
			ui_branch_close(u, name);
		return true;
	case 'f':
		ui_picker_close(u);
		ui_branch_fork(u, "");
		return true;
	case 27:
	case 'q':
		ui_picker_close(u);
		return true;
	default:
		return false;
	}
}

/* The sessions answer, for what it was asked. */
static void
ui_sessions_reply(struct ui *u, const struct response *r)
{
	json_t *list = json_object_get(r->fields, "sessions");
	size_t n = json_array_size(list), i, at;
	enum ui_br_want want = u->br_want;

	u->br_want = BR_NONE;
	if (!json_is_array(list) || n == 0) {
		snprintf(u->note, sizeof u->note, "the session named no "
		    "branches");
		return;
	}
	json_decref(u->branches);
	u->branches = json_incref(list);
	if (n > 1)
		u->branched = true;
	at = ui_br_here_at(u);
	switch (want) {
	case BR_PICK:
		u->br_sel = at;
		ui_picker_draw(u);
		break;
	case BR_NEXT:
	case BR_PREV:
		if (n == 1) {
			snprintf(u->note, sizeof u->note, "no other branch: "
			    "Esc f or :fork makes one");
			break;
		}
		at = want == BR_NEXT ? (at + 1) % n : (at + n - 1) % n;
		ui_go(u, ui_br_name(json_array_get(list, at)));
		snprintf(u->note, sizeof u->note, "on branch '%s' (%zu of "
		    "%zu; F6 lists them)", u->sess, at + 1, n);
		break;
	case BR_SWITCH:
		for (i = 0; i < n; i++)
			if (strcmp(ui_br_name(json_array_get(list, i)),
			    u->br_target) == 0)
				break;
		if (i == n) {
			struct buf b;

			buf_init(&b);
			for (i = 0; i < n; i++)
				buf_printf(&b, "%s%s", i > 0 ? ", " : "",
				    ui_br_name(json_array_get(list, i)));
			snprintf(u->note, sizeof u->note, "no branch '%s' "
			    "(the branches are: %s)", u->br_target, b.p);
			buf_free(&b);
			break;
		}
		ui_go(u, u->br_target);
		snprintf(u->note, sizeof u->note, "on branch '%s'", u->sess);
		break;
	case BR_HOME:
		/* the person's branch was closed: the first open one
		 * (main while it is) */
		ui_go(u, ui_br_name(json_array_get(list, 0)));
		snprintf(u->note, sizeof u->note, "your branch was closed: "
		    "you are on '%s'", u->sess);
		break;
	case BR_NONE:
		break;
	}
}

/* ---- fork ------------------------------------------------------------ */

void
ui_branch_fork(struct ui *u, const char *name)
{
	json_t *req = json_pack("{s:s}", "op", "fork");

	if (*name != '\0')
		json_object_set_new(req, "name", json_string(name));
	/* the source: the branch the person is on */
	json_object_set_new(req, "session", json_string(u->sess));
	ui_submit(u, req, W_FORK);
	snprintf(u->note, sizeof u->note, "forking '%s' (after its running "
	    "cell, if any)", u->sess);
}

/* "forked 'b1' from 'main' at cell 5; the work directory is shared" */
static void
ui_forked_note(struct ui *u, const struct response *r, const char *then)
{
	json_t *names = json_object_get(r->fields, "sessions");
	const char *parent = json_string_value(json_object_get(r->fields,
	    "parent"));
	const char *files = json_string_value(json_object_get(r->fields,
	    "files"));
	json_t *cell = json_object_get(r->fields, "cell");
	struct buf b;
	size_t i;

	buf_init(&b);
	for (i = 0; i < json_array_size(names); i++)
		buf_printf(&b, "%s'%.64s'", i > 0 ? ", " : "",
		    json_string_value(json_array_get(names, i)) != NULL ?
		    json_string_value(json_array_get(names, i)) : "?");
	snprintf(u->note, sizeof u->note, "forked %s from '%s' at cell %lld; "
	    "the work directory is %s%s", b.p, parent != NULL ? parent : "?",
	    (long long)json_integer_value(cell), files != NULL ? files :
	    "shared", then);
	buf_free(&b);
}

static void
ui_fork_reply(struct ui *u, const struct response *r)
{
	const char *first = json_string_value(json_array_get(json_object_get(
	    r->fields, "sessions"), 0));
	char then[UI_SESSION_MAX + 32];

	if (first == NULL || strlen(first) > UI_SESSION_MAX) {
		snprintf(u->note, sizeof u->note, "the fork's answer named no "
		    "branch");
		return;
	}
	snprintf(then, sizeof then, ": you are on '%s'", first);
	ui_go(u, first);
	ui_forked_note(u, r, then);
}

/* An exec of ours whose answer is an op's: %fork, %switch, %close. */
void
ui_branch_magic(struct ui *u, const struct response *r)
{
	const char *adopted = ui_session_of(r->fields);
	json_t *was = json_object_get(r->fields, "was");
	const char *gone = json_string_value(json_object_get(r->fields,
	    "closed"));

	if (r->status != ST_OK)
		return;
	if (gone != NULL && ui_branch_here(u, gone)) {
		ui_ask_sessions(u, BR_HOME, NULL);	/* %close of ours */
		return;
	}
	if (json_is_array(json_object_get(r->fields, "sessions")) &&
	    json_is_string(json_object_get(r->fields, "parent"))) {
		u->branched = true;
		ui_forked_note(u, r, " (F6, :switch NAME go there)");
	} else if (adopted != NULL && json_is_string(was)) {
		/* the core made it our default: the view follows */
		ui_go(u, adopted);
		snprintf(u->note, sizeof u->note, "on branch '%s'", u->sess);
	}
}

/* ---- compare ----------------------------------------------------------- */

void
ui_branch_compare(struct ui *u, const char *a, const char *b)
{
	const char *two[2];
	int i;

	if (*a == '\0')
		a = u->sess;
	if (*b == '\0') {
		b = a;
		a = strcmp(b, u->sess) == 0 ? UI_MAIN : u->sess;
	}
	if (strcmp(a, b) == 0) {
		snprintf(u->note, sizeof u->note, "usage: :compare [A] B: two "
		    "branches (you are on '%s')", u->sess);
		return;
	}
	if (strlen(a) > UI_SESSION_MAX || strlen(b) > UI_SESSION_MAX) {
		snprintf(u->note, sizeof u->note, "a branch's name has at "
		    "most %d characters", UI_SESSION_MAX);
		return;
	}
	ui_cmp_clear(u);
	two[0] = a;
	two[1] = b;
	for (i = 0; i < 2; i++) {
		snprintf(u->cmp[i].name, sizeof u->cmp[i].name, "%s", two[i]);
		u->cmp[i].id = ui_submit(u, json_pack("{s:s, s:s}", "op",
		    "vars", "session", two[i]), W_CMP);
	}
	snprintf(u->note, sizeof u->note, "comparing '%s' and '%s' (each "
	    "after its running cell, if any)", a, b);
}

static json_t *
ui_cmp_find(json_t *vars, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(vars, i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")) !=
		    NULL ? json_string_value(json_object_get(v, "name")) : "",
		    name) == 0)
			return v;
	return NULL;
}

static const char *
ui_cmp_repr(json_t *v)
{
	const char *r = json_string_value(json_object_get(v, "repr"));

	return v == NULL ? "-" : r != NULL ? r : "?";
}

/* One row: the name, then a's and b's repr, each cut to w columns at
 * its first line (the pager is for the whole of one: F2, Enter). */
static void
ui_cmp_row(struct buf *b, int nw, int w, const char *name, const char *x,
    const char *y)
{
	buf_printf(b, "  %-*.*s  %-*.*s  %.*s\n", nw, nw, name, w,
	    (int)strcspn(x, "\n") < w ? (int)strcspn(x, "\n") : w, x,
	    (int)strcspn(y, "\n") < w ? (int)strcspn(y, "\n") : w, y);
}

/* Both namespaces came: the overlay, names in one only, then names
 * whose repr differs, then how many are the same. */
static void
ui_cmp_show(struct ui *u)
{
	json_t *va = u->cmp[0].vars, *vb = u->cmp[1].vars, *v, *o;
	const char *name;
	struct buf b;
	char title[2 * UI_SESSION_MAX + 64];
	size_t i, same = 0, only = 0, diff = 0;
	int nw = 4, w, pass;

	json_array_foreach(va, i, v)
		if ((int)json_string_length(json_object_get(v, "name")) > nw)
			nw = (int)json_string_length(json_object_get(v,
			    "name"));
	json_array_foreach(vb, i, v)
		if ((int)json_string_length(json_object_get(v, "name")) > nw)
			nw = (int)json_string_length(json_object_get(v,
			    "name"));
	nw = nw > 20 ? 20 : nw;
	w = (u->cols - nw - 10) / 2;
	w = w < 8 ? 8 : w;
	buf_init(&b);
	buf_printf(&b, "  %-*s  %-*.*s  %.*s\n", nw, "name", w, w,
	    u->cmp[0].name, w, u->cmp[1].name);
	/* pass 0: in one only; pass 1: in both, the reprs differ */
	for (pass = 0; pass < 2; pass++) {
		buf_addstr(&b, pass == 0 ? "only in one\n" : "different\n");
		json_array_foreach(va, i, v) {
			name = json_string_value(json_object_get(v, "name"));
			if (name == NULL)
				continue;
			o = ui_cmp_find(vb, name);
			if (pass == 0 && o == NULL) {
				ui_cmp_row(&b, nw, w, name, ui_cmp_repr(v),
				    "-");
				only++;
			} else if (pass == 1 && o != NULL && strcmp(
			    ui_cmp_repr(v), ui_cmp_repr(o)) != 0) {
				ui_cmp_row(&b, nw, w, name, ui_cmp_repr(v),
				    ui_cmp_repr(o));
				diff++;
			} else if (pass == 1 && o != NULL) {
				same++;
			}
		}
		json_array_foreach(vb, i, v) {
			name = json_string_value(json_object_get(v, "name"));
			if (pass == 0 && name != NULL &&
			    ui_cmp_find(va, name) == NULL) {
				ui_cmp_row(&b, nw, w, name, "-",
				    ui_cmp_repr(v));
				only++;
			}
		}
	}
	buf_printf(&b, "\n%zu in one only, %zu different, %zu the same\n",
	    only, diff, same);
	snprintf(title, sizeof title, " compare '%s' | '%s' (q closes)",
	    u->cmp[0].name, u->cmp[1].name);
	ui_overlay(u, title, b.p);
	buf_free(&b);
	ui_cmp_clear(u);
	u->note[0] = '\0';	/* "comparing ...": done */
}

static void
ui_cmp_reply(struct ui *u, const struct response *r)
{
	int i, k = -1;

	for (i = 0; i < 2; i++)
		if (u->cmp[i].id != 0 && json_is_integer(r->id) &&
		    json_integer_value(r->id) == u->cmp[i].id)
			k = i;
	if (k < 0)
		return;		/* a comparison given up */
	if (r->status != ST_OK) {
		snprintf(u->note, sizeof u->note, "cannot compare: %s",
		    r->error != NULL && r->error->message != NULL ?
		    r->error->message : status_names[r->status]);
		ui_cmp_clear(u);
		return;
	}
	u->cmp[k].id = 0;
	u->cmp[k].vars = json_incref(json_object_get(r->fields, "vars"));
	if (!json_is_array(u->cmp[k].vars)) {
		json_decref(u->cmp[k].vars);
		u->cmp[k].vars = json_array();
	}
	if (u->cmp[1 - k].vars != NULL)
		ui_cmp_show(u);
}

void
ui_branch_reply(struct ui *u, enum ui_why why, const struct response *r)
{
	if (why == W_CMP) {
		ui_cmp_reply(u, r);
		return;
	}
	if (r->status != ST_OK) {
		if (why == W_SESSIONS)
			u->br_want = BR_NONE;
		snprintf(u->note, sizeof u->note, "%s", r->error != NULL &&
		    r->error->message != NULL ? r->error->message :
		    status_names[r->status]);
		return;
	}
	if (why == W_SESSIONS)
		ui_sessions_reply(u, r);
	else if (why == W_FORK)
		ui_fork_reply(u, r);
	else if (why == W_CLOSE) {
		const char *gone = json_string_value(json_object_get(r->fields,
		    "closed"));

		snprintf(u->note, sizeof u->note, "closed '%s'", gone != NULL ?
		    gone : "?");
		if (gone != NULL && ui_branch_here(u, gone))
			ui_ask_sessions(u, BR_HOME, NULL);
	}
}
