/*
 * ui-keys.c - the curses UI's bindings and :-commands (see ui-int.h):
 * one table of keys, each with the panes it works in and its help
 * line, and one table of commands with their usage.  ui_help_text
 * (F1, :help) is generated from both, so the help cannot disagree with
 * what the keys do.  Keys no entry takes go to readline (ui-input.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncurses.h>
#include <readline/readline.h>

#include "magic.h"
#include "ui-image.h"
#include "ui-int.h"

#define UI_ESC(c)	(0x10000 | (c))	/* Esc, then c */
#define ANY		0x3f
#define IN		(1u << F_INPUT)
#define NS		(1u << F_NS)
#define CELLS		(1u << F_CELLS)
#define OV		(1u << F_OVERLAY)
#define RP		(1u << F_REPLAY)
#define REC		(1u << F_RECORD)
#define LISTS		(NS | CELLS | OV)

/* ---- the bindings ---------------------------------------------------- */

static void
k_help(struct ui *u)
{
	struct buf b;

	buf_init(&b);
	ui_help_text(&b);
	ui_overlay(u, " keys and commands (F1)", b.p);
	buf_free(&b);
}

static void
k_names(struct ui *u)
{
	u->focus = u->focus == F_NS ? F_INPUT : F_NS;
	if (u->focus == F_NS)
		u->show |= UI_SHOW_NS;
	u->dirty = true;
}

static void
k_cells(struct ui *u)
{
	u->focus = u->focus == F_CELLS ? F_INPUT : F_CELLS;
	u->cell_sel = u->ncells > 0 ? u->ncells - 1 : 0;
	u->dirty = true;
}

static void
k_back(struct ui *u)
{
	u->focus = u->focus == F_OVERLAY ? u->back : F_INPUT;
	if (u->focus == F_OVERLAY)
		u->focus = F_INPUT;
	u->filtering = false;
	u->dirty = true;
}

static size_t
ui_page(struct ui *u)
{
	return u->lay.out.h > 3 ? (size_t)u->lay.out.h - 2 : 1;
}

static void
ui_move(struct ui *u, long d)
{
	size_t *sel = u->focus == F_NS ? &u->ns_sel : u->focus == F_CELLS ?
	    &u->cell_sel : &u->ov_scroll;
	size_t n = u->focus == F_CELLS ? u->ncells : u->focus == F_NS ?
	    json_array_size(u->vars) : (size_t)-1;

	if (d < 0)
		*sel = *sel > (size_t)-d ? *sel - (size_t)-d : 0;
	else if (n > 0)
		*sel = *sel + (size_t)d < n ? *sel + (size_t)d : n - 1;
	u->dirty = true;
}

static void k_up(struct ui *u) { ui_move(u, -1); }
static void k_down(struct ui *u) { ui_move(u, 1); }
static void r_up(struct ui *u) { ui_record_move(u, -1); }
static void r_down(struct ui *u) { ui_record_move(u, 1); }

static void
k_pgup(struct ui *u)
{
	if (u->focus == F_RECORD) {
		ui_record_move(u, -(long)ui_page(u));
		return;
	}
	if (u->focus != F_INPUT) {
		ui_move(u, -(long)ui_page(u));
		return;
	}
	u->scroll += ui_page(u);
	if (u->scroll >= u->nlines)
		u->scroll = u->nlines > 0 ? u->nlines - 1 : 0;
	u->dirty = true;
}

static void
k_pgdn(struct ui *u)
{
	if (u->focus == F_RECORD) {
		ui_record_move(u, (long)ui_page(u));
		return;
	}
	if (u->focus != F_INPUT) {
		ui_move(u, (long)ui_page(u));
		return;
	}
	u->scroll = u->scroll > ui_page(u) ? u->scroll - ui_page(u) : 0;
	u->dirty = true;
}

static void
k_mouse(struct ui *u)
{
	MEVENT m;

	if (getmouse(&m) != OK)
		return;
	if (m.bstate & BUTTON4_PRESSED)
		u->scroll = u->scroll + 3 < u->nlines ? u->scroll + 3 :
		    u->nlines > 0 ? u->nlines - 1 : 0;
#ifdef BUTTON5_PRESSED
	else if (m.bstate & BUTTON5_PRESSED)
		u->scroll = u->scroll > 3 ? u->scroll - 3 : 0;
#endif
	u->dirty = true;
}

static void
k_ctrl_c(struct ui *u)
{
	if (u->running != 0) {
		ui_interrupt_running(u);
		ui_input_cancel(u);
		return;
	}
	ui_input_cancel(u);
	rl_replace_line("", 0);
	buf_free(&u->cell);
	u->incomplete = false;
	snprintf(u->note, sizeof u->note, "KeyboardInterrupt: the input "
	    "was cleared");
	u->dirty = true;
}

static const char *
ui_sel_name(struct ui *u)
{
	size_t idx[4096], n = ui_vars_shown(u, idx, 4096);

	return u->ns_sel < n ? json_string_value(json_object_get(
	    json_array_get(u->vars, idx[u->ns_sel]), "name")) : NULL;
}

static void
k_inspect(struct ui *u)
{
	const char *name = ui_sel_name(u);

	if (name != NULL)
		ui_submit(u, json_pack("{s:s, s:s}", "op", "inspect", "name",
		    name), W_INSPECT);
}

void
ui_ask(struct ui *u, ui_yes_fn fn, const char *arg, char *question)
{
	free(u->ask);
	free(u->ask_arg);
	u->ask = question;
	u->ask_fn = fn;
	u->ask_arg = xstrdup(arg);
	u->dirty = true;
}

static void
y_delete(struct ui *u, const char *name)
{
	ui_submit(u, json_pack("{s:s, s:s+}", "op", "exec", "code", "del ",
	    name), W_OP);
}

static void
k_delete(struct ui *u)
{
	const char *name = ui_sel_name(u);

	char *q;

	if (name == NULL)
		return;
	xasprintf(&q, " delete '%s' from the namespace? (y/n) ", name);
	ui_ask(u, y_delete, name, q);
}

static void
k_filter(struct ui *u)
{
	u->filtering = true;
	u->filter[0] = '\0';
	u->dirty = true;
}

static void
k_show_cell(struct ui *u)
{
	struct buf b;
	char title[64];
	size_t code[2];

	if (u->cell_sel >= u->ncells)
		return;
	buf_init(&b);
	ui_cell_detail(&u->cells[u->cell_sel], &b, code);
	snprintf(title, sizeof title, " cell %d", u->cells[u->cell_sel].cell);
	ui_overlay_code(u, title, b.p, code[0], code[1]);
	buf_free(&b);
}

static void
k_edit_cell(struct ui *u)
{
	if (u->cell_sel >= u->ncells)
		return;
	buf_free(&u->cell);
	u->incomplete = false;
	rl_replace_line(u->cells[u->cell_sel].code, 0);
	rl_point = rl_end;
	u->focus = F_INPUT;
	u->dirty = true;
}

static void
y_rollback(struct ui *u, const char *to)
{
	ui_submit(u, json_pack("{s:s, s:i}", "op", "rollback", "to", atoi(to)),
	    W_OP);
}

static void
k_rollback_cell(struct ui *u)
{
	char to[16], *q;

	if (u->cell_sel >= u->ncells || u->cells[u->cell_sel].cell < 1)
		return;
	snprintf(to, sizeof to, "%d", u->cells[u->cell_sel].cell - 1);
	xasprintf(&q, " roll the session back to before cell %d? (y/n) ",
	    u->cells[u->cell_sel].cell);
	ui_ask(u, y_rollback, to, q);
}

static void k_fork(struct ui *u) { ui_branch_fork(u, ""); }
static void k_view(struct ui *u) { ui_image_open(u, false); }
static void k_view_cell(struct ui *u) { ui_image_open(u, true); }

static const struct ui_binding {
	int key;
	const char *name;
	unsigned where;
	void (*fn)(struct ui *);
	const char *help;
} ui_bindings[] = {
	{ KEY_F(1), "F1", ANY, k_help, "this help" },
	{ UI_ESC('1'), "Esc 1", ANY, k_help, "this help, without F-keys" },
	{ KEY_F(2), "F2", ANY, k_names, "focus the namespace (again: back)" },
	{ UI_ESC('2'), "Esc 2", ANY, k_names, "the same, without F-keys" },
	{ KEY_F(3), "F3", ANY, k_cells, "the session's cells (again: back)" },
	{ UI_ESC('3'), "Esc 3", ANY, k_cells, "the same, without F-keys" },
	{ KEY_F(4), "F4", ANY, ui_replay_focus, "the replay's keys (again: "
	  "the input)" },
	{ UI_ESC('4'), "Esc 4", ANY, ui_replay_focus, "the same, without "
	  "F-keys" },
	{ KEY_F(5), "F5", ANY, ui_record_focus, "the record: search it, go "
	  "from cell to cell, open a field whole (again: back)" },
	{ UI_ESC('5'), "Esc 5", ANY, ui_record_focus, "the same, without "
	  "F-keys" },
	{ UI_ESC('v'), "Esc v", ANY, k_view, "open the newest figure in "
	  "$COIL_VIEWER (else xdg-open), from a private copy" },
	{ KEY_PPAGE, "PgUp", ANY, k_pgup, "scroll the output (or a list) up" },
	{ KEY_NPAGE, "PgDn", ANY, k_pgdn, "scroll down" },
	{ KEY_MOUSE, "wheel", ANY, k_mouse, "scroll the output" },
	{ 3, "Ctrl-C", IN, k_ctrl_c, "interrupt the running cell (attached: "
	  "another's only once you say y) and drop the lines queued, or "
	  "clear the input" },
	{ 0, "Enter", IN, NULL, "run the cell; an unfinished block goes on "
	  "on the next line, indented (4 more after ':')" },
	{ 0, "Ctrl-D", IN, NULL, "leave (an attached UI detaches; the "
	  "session goes on); at ... drop the cell" },
	{ 0, "Tab", IN, NULL, "complete from the namespace (no space "
	  "added; several: a menu)" },
	{ 0, "Ctrl-R", IN, NULL, "search the history (shared with --plain); "
	  "Ctrl-C ends it" },
	{ 0, "other keys", IN, NULL, "readline's, as ~/.inputrc sets them "
	  "(emacs or vi)" },
	{ KEY_F(6), "F6", IN, ui_branch_pick, "the branches, to go to one, "
	  "compare or close it" },
	{ UI_ESC('6'), "Esc 6", IN, ui_branch_pick, "the same, without "
	  "F-keys" },
	{ UI_ESC('f'), "Esc f", IN, k_fork, "fork your branch here and go "
	  "to the copy (the agent stays where it is)" },
	{ UI_ESC('n'), "Esc n", IN, ui_branch_next, "the next branch, as "
	  "tmux's next window" },
	{ UI_ESC('p'), "Esc p", IN, ui_branch_prev, "the previous branch" },
	{ KEY_UP, "Up", LISTS, k_up, "previous name, cell or line" },
	{ KEY_DOWN, "Down", LISTS, k_down, "next one" },
	{ '\n', "Enter", NS, k_inspect, "inspect the name: type, signature, "
	  "doc, repr" },
	{ 'd', "d", NS, k_delete, "delete the name (asks first)" },
	{ '/', "/", NS, k_filter, "filter the names (Enter keeps, Esc drops)" },
	{ '\n', "Enter", CELLS, k_show_cell, "the cell in full: code, output, "
	  "result or error, cost, effects" },
	{ 'v', "v", CELLS, k_view_cell, "open its newest figure in "
	  "$COIL_VIEWER (else xdg-open), from a private copy" },
	{ 'e', "e", CELLS, k_edit_cell, "load its code into the input" },
	{ 'r', "r", CELLS, k_rollback_cell, "roll back to before it (asks "
	  "first)" },
	{ 'n', "n", RP, ui_replay_next, "run the next recorded cell" },
	{ 'a', "a", RP, ui_replay_all, "run every cell left, to the end" },
	{ 'g', "g N Enter", RP, ui_replay_goto, "go to cell N: back by its "
	  "checkpoint (else from the start), forward by running" },
	{ 3, "Ctrl-C", RP, ui_replay_stop, "interrupt the running cell; "
	  "a run stops after it" },
	{ 'd', "d", RP, ui_replay_diffs, "the cells that differ from the "
	  "recording, old and new side by side" },
	{ 'i', "i", RP, k_back, "the input, to type a cell of your own" },
	{ KEY_UP, "Up", REC, r_up, "the line above (PgUp: a page)" },
	{ KEY_DOWN, "Down", REC, r_down, "the line below (PgDn: a page)" },
	{ '/', "/", REC, ui_record_find, "search the record, case aside "
	  "(Enter: the nearest match at or above the line)" },
	{ 'n', "n", REC, ui_record_again, "the next match above" },
	{ 'N', "N", REC, ui_record_back, "the next match below" },
	{ '[', "[", REC, ui_record_prev_cell, "the header of the cell "
	  "above" },
	{ ']', "]", REC, ui_record_next_cell, "the header of the cell "
	  "below" },
	{ 'o', "o", REC, ui_record_open, "open the line's field whole in "
	  "the pager: code, output, stderr, result, error, hint, warnings, "
	  "display, restored; on a header, the whole cell" },
	{ '\n', "Enter", REC, ui_record_open, "the same as o" },
	{ 27, "Esc", LISTS | RP | REC, k_back, "back to the input" },
	{ 'q', "q", NS | CELLS | REC, k_back, "the same" },
	{ 'q', "q", OV, k_back, "close" },
};

/* ---- :-commands -------------------------------------------------------- */

static void c_help(struct ui *u, const char *a) { (void)a; k_help(u); }
static void c_cells(struct ui *u, const char *a) { (void)a; k_cells(u); }

static void
c_quit(struct ui *u, const char *a)
{
	(void)a;
	u->quit = true;
}

static void
c_ns(struct ui *u, const char *a)
{
	(void)a;
	u->show ^= UI_SHOW_NS;
	u->dirty = true;
}

static void
c_result(struct ui *u, const char *a)
{
	(void)a;
	u->show ^= UI_SHOW_RESULT;
	u->dirty = true;
}

static void
c_snapshot(struct ui *u, const char *a)
{
	ui_submit(u, magic_request("snapshot", a, strlen(a)), W_OP);
}

static void
c_rollback(struct ui *u, const char *a)
{
	ui_submit(u, magic_request("rollback", a, strlen(a)), W_OP);
}

static void
y_reset(struct ui *u, const char *a)
{
	(void)a;
	ui_submit(u, json_pack("{s:s}", "op", "reset"), W_OP);
}

static void
c_reset(struct ui *u, const char *a)
{
	(void)a;
	ui_ask(u, y_reset, "", xstrdup(" reset the namespace? (y/n) "));
}

static void
c_save(struct ui *u, const char *a)
{
	size_t n = strlen(a);

	if (*a == '\0')
		snprintf(u->note, sizeof u->note, "usage: :save FILE");
	else if (n > 6 && strcmp(a + n - 6, ".ipynb") == 0)
		ui_save_notebook(u, a);
	else
		ui_save_output(u, a, u->note, sizeof u->note);
}

static void c_fork(struct ui *u, const char *a) { ui_branch_fork(u, a); }
static void c_switch(struct ui *u, const char *a) { ui_branch_switch(u, a); }
static void c_close(struct ui *u, const char *a) { ui_branch_close(u, a); }

static void
c_sessions(struct ui *u, const char *a)
{
	(void)a;
	ui_branch_pick(u);
}

/* :compare [A] B: two names split at the first blank */
static void
c_compare(struct ui *u, const char *a)
{
	char one[UI_SESSION_MAX + 2] = "";
	const char *two;
	size_t n = strcspn(a, " \t");

	two = a + n;
	while (*two == ' ' || *two == '\t')
		two++;
	if (n > UI_SESSION_MAX) {
		snprintf(u->note, sizeof u->note, "a branch's name has at "
		    "most %d characters", UI_SESSION_MAX);
		return;
	}
	memcpy(one, a, n);
	one[n] = '\0';
	if (*two == '\0')
		ui_branch_compare(u, "", one);
	else
		ui_branch_compare(u, one, two);
}

static const struct ui_command {
	const char *name;
	void (*fn)(struct ui *, const char *);
	const char *usage;
} ui_commands[] = {
	{ "help", c_help, ":help  the keys and commands" },
	{ "snapshot", c_snapshot, ":snapshot [NAME]  pin the current state" },
	{ "rollback", c_rollback, ":rollback NAME|CELL  go back to a "
	  "snapshot, or to the state after a cell" },
	{ "reset", c_reset, ":reset  a fresh namespace (asks first)" },
	{ "ns", c_ns, ":ns  show or hide the namespace pane" },
	{ "result", c_result, ":result  show or hide the result pane" },
	{ "cells", c_cells, ":cells  the session's cells, as F3" },
	{ "fork", c_fork, ":fork [NAME]  fork the branch you are on and go "
	  "to the copy (as Esc f; %fork in a cell forks and stays)" },
	{ "switch", c_switch, ":switch NAME  go to a branch (your cells "
	  "run there; the agent's stay where they were)" },
	{ "sessions", c_sessions, ":sessions  the branches, as F6" },
	{ "compare", c_compare, ":compare [[A] B]  two branches' namespaces "
	  "side by side: names in one only, names whose repr differs (no "
	  "names: main and yours; one: yours and it)" },
	{ "close", c_close, ":close NAME  end a branch (asks first)" },
	{ "save", c_save, ":save FILE  write the output pane to FILE; "
	  "FILE.ipynb: the session as a notebook (%save)" },
	{ "quit", c_quit, ":quit  leave, as Ctrl-D" },
};

void
ui_command(struct ui *u, const char *line)
{
	size_t n = strcspn(line, " \t"), i;
	const char *arg = line + n;

	while (*arg == ' ' || *arg == '\t')
		arg++;
	for (i = 0; i < nitems(ui_commands); i++)
		if (strlen(ui_commands[i].name) == n &&
		    strncmp(ui_commands[i].name, line, n) == 0) {
			ui_commands[i].fn(u, arg);
			return;
		}
	snprintf(u->note, sizeof u->note, "unknown command ':%.*s' (F1 lists "
	    "them)", (int)n, line);
}

void
ui_help_text(struct buf *b)
{
	static const char *const where[] = { "input", "namespace (F2)",
	    "cells (F3)", "overlays (the pager: they stop at their ends; "
	    "F6's branches: Up/Down, Enter, c, x, f)",
	    "replay (F4, coil --replay FILE)", "record (F5)" };
	size_t i;
	int f;

	for (f = -1; f < (int)nitems(where); f++) {
		buf_printf(b, "%s\n", f < 0 ? "everywhere" : where[f]);
		for (i = 0; i < nitems(ui_bindings); i++) {
			unsigned w = ui_bindings[i].where;

			if ((f < 0 && w == ANY) || (f >= 0 && w != ANY &&
			    (w & (1u << f))))
				buf_printf(b, "  %-12s %s\n",
				    ui_bindings[i].name, ui_bindings[i].help);
		}
	}
	buf_addstr(b, "\ncommands (typed in the input)\n");
	for (i = 0; i < nitems(ui_commands); i++)
		buf_printf(b, "  %s\n", ui_commands[i].usage);
}

bool
ui_bound(struct ui *u, int key)
{
	size_t i;

	for (i = 0; i < nitems(ui_bindings); i++)
		if (ui_bindings[i].key == key && ui_bindings[i].fn != NULL &&
		    (ui_bindings[i].where & (1u << u->focus))) {
			ui_bindings[i].fn(u);
			return true;
		}
	return false;
}

bool
ui_edit_key(char *s, size_t size, int key)
{
	size_t n = strlen(s);

	if ((key == KEY_BACKSPACE || key == 127 || key == 8) && n > 0) {
		s[n - 1] = '\0';
	} else if (key >= 0x20 && key < 0x7f && n + 1 < size) {
		s[n] = (char)key;
		s[n + 1] = '\0';
	} else {
		return false;
	}
	return true;
}

/* A key the filter of the namespace pane takes, if it is typing one. */
bool
ui_filter_key(struct ui *u, int key)
{
	if (!u->filtering)
		return false;
	if (key == '\n' || key == 27) {
		u->filtering = false;
		if (key == 27)
			u->filter[0] = '\0';
	} else if (!ui_edit_key(u->filter, sizeof u->filter, key)) {
		return false;
	}
	u->ns_sel = 0;
	u->dirty = true;
	return true;
}

/* A curses key readline knows as its escape sequence. */
