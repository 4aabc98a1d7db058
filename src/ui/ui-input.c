/*
 * ui-input.c - the curses UI's keys (see ui-int.h): readline, through
 * its callback interface, edits the cell in the input window (curses
 * owns the terminal: readline neither reads it nor draws; keys are fed
 * to it byte by byte and its line is drawn by ui-draw.c), so emacs and
 * vi keys from ~/.inputrc, the history shared with plain mode, Ctrl-R
 * and bracketed paste all work as at a shell; everything else is one
 * table of bindings and one of :-commands (ui-keys.c), which F1 lists.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncurses.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "complete.h"
#include "history.h"
#include "ui-color.h"
#include "ui-int.h"

#define UI_ESC(c)	(0x10000 | (c))	/* Esc, then c: as ui-keys.c */

static struct ui *ui_self;	/* for readline's callbacks */
static unsigned char ui_q[256];	/* bytes waiting for readline */
static size_t ui_qn, ui_qi;
static char *ui_restore;	/* a line to give back to readline */

static void ui_next_typed(struct ui *u);
static void ui_auto_indent(struct ui *u);
static int ui_next_indent(struct ui *u, const char *line);

/* ---- what answers to our requests do ------------------------------- */

/* r: the inspect op's fields. */
static void
ui_inspect_reply(struct ui *u, json_t *r)
{
	struct buf b;
	const char *sig = json_string_value(json_object_get(r, "signature"));
	const char *doc = json_string_value(json_object_get(r, "doc"));
	char *title;

	buf_init(&b);
	buf_printf(&b, "type: %s\n", json_string_value(json_object_get(r,
	    "type")));
	if (sig != NULL)
		buf_printf(&b, "signature: %s%s\n", json_string_value(
		    json_object_get(r, "name")), sig);
	if (doc != NULL)
		buf_printf(&b, "\n%s\n", doc);
	buf_printf(&b, "\nrepr:\n%s\n", json_string_value(json_object_get(r,
	    "repr")));
	xasprintf(&title, " inspect: %s", json_string_value(json_object_get(r,
	    "name")) != NULL ? json_string_value(json_object_get(r, "name")) :
	    "?");
	ui_overlay(u, title, b.p);
	free(title);
	buf_free(&b);
}

/* A rollback's, a reset's, or %save's (an exec's) answer. */
static void
ui_op_reply(struct ui *u, const struct response *r)
{
	const char *name = json_string_value(json_object_get(r->fields,
	    "name"));
	int cell;
	bool at = !(r->has & RESP_EXEC) && ui_answer_cell(r, &cell);

	/* the vars asked for below are as of where the op left it: the
	 * cell it names (rollback), or none run (reset) */
	if (at)
		u->vars_cell = cell;
	else if (json_is_string(json_object_get(r->fields, "from")))
		u->vars_cell = 0;
	if (at)
		snprintf(u->note, sizeof u->note, "done: the namespace is at "
		    "cell %d%s%s", cell, name != NULL ? ", snapshot " : "",
		    name != NULL ? name : "");
	else
		snprintf(u->note, sizeof u->note, "done");
	ui_submit(u, json_pack("{s:s}", "op", "vars"), W_VARS);
}

void
ui_own_reply(struct ui *u, enum ui_why why, const struct response *r)
{
	const struct response_error *err = r->error;

	if (why == W_EXEC) {
		if (u->reading != NULL) {
			/* it ended (Ctrl-C) without the line it asked for */
			free(u->reading);
			u->reading = NULL;
			rl_replace_line("", 0);
		}
		u->waiting = false;
		u->incomplete = r->status == ST_INCOMPLETE;
		if (u->incomplete && u->drop_cell) {
			buf_free(&u->cell);
			u->incomplete = false;
			snprintf(u->note, sizeof u->note, "the unfinished cell "
			    "was dropped; Ctrl-D at >>> leaves");
		}
		u->drop_cell = false;
		ui_auto_indent(u);
		if (!u->incomplete && u->cell.len > 0) {
			/* a finished cell is one entry, however many lines
			 * it has, as in --plain (history shared) */
			history_keep(u->cell.p);
			buf_free(&u->cell);
		}
		ui_next_typed(u);
		ui_branch_magic(u, r);
	}
	if (why == W_SESSIONS || why == W_FORK || why == W_CMP ||
	    why == W_CLOSE) {
		ui_branch_reply(u, why, r);
		u->dirty = true;
		return;
	}
	if (r->status != ST_OK && why != W_EXEC) {
		snprintf(u->note, sizeof u->note, "%s", err != NULL ?
		    err->message : status_names[r->status]);
		u->dirty = true;
		return;
	}
	if (r->status == ST_INVALID && err != NULL)
		snprintf(u->note, sizeof u->note, "%s", err->message);
	/* a branch's vars asked for before the person left it: not the
	 * pane's */
	if (why == W_VARS && ui_branch_here(u, json_string_value(
	    json_object_get(r->fields, "session"))))
		ui_set_vars(u, json_object_get(r->fields, "vars"),
		    u->vars_cell);
	else if (why == W_PING && json_integer_value(json_object_get(
	    json_object_get(r->fields, "sessions"), "count")) > 1)
		u->branched = true;
	if (why == W_PING)
		snprintf(u->profile, sizeof u->profile, "%s", json_string_value(
		    json_object_get(json_object_get(r->fields, "sandbox"),
		    "profile")));
	else if (why == W_INSPECT)
		ui_inspect_reply(u, r->fields);
	else if (why == W_OP)
		ui_op_reply(u, r);
	u->dirty = true;
}

/* ---- the cell being typed -------------------------------------------- */

const char *
ui_prompt(const struct ui *u)
{
	const char *nl;

	if (u->reading != NULL)
		return (nl = strrchr(u->reading, '\n')) != NULL ? nl + 1 :
		    u->reading;
	return u->incomplete || u->cell.len > 0 ? "... " : ">>> ";
}

const char *
ui_input_prompt(struct ui *u, unsigned *attr)
{
	*attr = A_BOLD;
	if (RL_ISSTATE(RL_STATE_ISEARCH) && rl_display_prompt != NULL)
		return rl_display_prompt;
	/* a cell of ours runs: not "...", which says a block is open */
	if (u->reading == NULL && u->waiting && u->running != 0) {
		*attr = A_DIM;
		return "(running) ";
	}
	return ui_prompt(u);
}

size_t
ui_typed_ahead(const struct ui *u)
{
	const char *p, *end = u->typed.p + u->typed.len;
	size_t n = 0;

	for (p = u->typed.p; u->typed.len > 0 && p < end; p++)
		if (*p == '\n')
			n++;
	return n;
}

/* ---- input() --------------------------------------------------------- */

/* The line to the session here, or through the socket's input op. */
static void
ui_send_input(struct ui *u, const char *line)
{
	if (u->remote)
		ui_submit(u, json_pack("{s:s, s:s?}", "op", "input", "text",
		    line), W_NONE);
	else
		session_input(u->s, line);
}

/* The line our cell asked for (NULL: end of input), echoed after its
 * prompt in the output, as a terminal would show it. */
static void
ui_answer(struct ui *u, const char *line)
{
	char *echo;

	xasprintf(&echo, "%s%s\n", u->reading != NULL ? u->reading : "",
	    line != NULL ? line : "");
	ui_output(u, EV_OUTPUT, u->reading_seq, 1, echo, strlen(echo));
	free(echo);
	free(u->reading);
	u->reading = NULL;
	ui_send_input(u, line);
	u->dirty = true;
}

/* pydoc's bold is overstruck ("l\bl"), for a pager: keep the last of
 * each struck pair, a UTF-8 character whole. */
static void
ui_unstrike(char *s)
{
	char *w = s, *p;

	for (p = s; *p != '\0'; p++) {
		if (*p != '\b') {
			*w++ = *p;
			continue;
		}
		while (w > s && (w[-1] & 0xc0) == 0x80)
			w--;
		if (w > s)
			w--;
	}
	*w = '\0';
}

/*
 * Our running cell reads a line (input(), pdb): the input area asks for
 * it with the cell's prompt, and Enter answers (ui_on_line), Ctrl-D is
 * the end of input, Ctrl-C interrupts the cell.  A line typed ahead
 * while the cell ran answers at once, as a terminal's would.  help()'s
 * text, which plain mode pages, opens in a window instead.
 */
void
ui_input_asked(struct ui *u, const struct session_event *ev)
{
	const char *prompt = json_string_value(json_object_get(ev->info,
	    "prompt"));
	const char *page = json_string_value(json_object_get(ev->info,
	    "page"));
	char *nl, *line, *text;

	free(u->reading);
	u->reading = xstrdup(prompt != NULL ? prompt : "");
	u->reading_seq = ev->seq;
	if (u->focus != F_OVERLAY)
		u->focus = F_INPUT;	/* where the answer is typed */
	u->dirty = true;
	if (page != NULL) {
		text = xstrdup(page);
		ui_unstrike(text);
		ui_overlay(u, " help (Esc or q closes)", text);
		free(text);
		free(u->reading);
		u->reading = NULL;
		ui_send_input(u, "");
	} else if (u->typed.len > 0) {
		nl = memchr(u->typed.p, '\n', u->typed.len);
		line = xstrndup(u->typed.p, (size_t)(nl - u->typed.p));
		buf_consume(&u->typed, (size_t)(nl - u->typed.p) + 1);
		ui_answer(u, line);
		free(line);
	}
}

int
ui_input_lines(struct ui *u)
{
	const char *p;
	int n = 1;

	for (p = u->cell.p; u->cell.len > 0 && p != NULL; n++) {
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	for (p = rl_line_buffer; p != NULL && (p = strchr(p, '\n')) != NULL;
	    p++)
		n++;
	return n + (int)(ui_typed_ahead(u) < UI_QUEUED_ROWS ? ui_typed_ahead(u) :
	    UI_QUEUED_ROWS);
}

static void ui_add_line(struct ui *u, const char *line);

/* Lines typed (or pasted) while our cell was in flight go on in order,
 * one at a time, as each needs the answer to the one before. */
static void
ui_next_typed(struct ui *u)
{
	char *nl, *line;

	if (u->typed.len == 0 || u->ended != NULL)
		return;
	nl = memchr(u->typed.p, '\n', u->typed.len);
	line = xstrndup(u->typed.p, (size_t)(nl - u->typed.p));
	buf_consume(&u->typed, (size_t)(nl - u->typed.p) + 1);
	ui_add_line(u, line);
	free(line);
}

/* A line of the cell, as plain mode takes it: run what is there, and
 * let the worker say whether it needs more. */
static void
ui_add_line(struct ui *u, const char *line)
{
	const char *c;
	json_t *req;

	if (u->cell.len == 0 && !u->incomplete && line[0] == ':') {
		history_keep(line);
		ui_command(u, line + 1);
		return;
	}
	if (u->cell.len > 0 || u->incomplete)
		buf_add(&u->cell, "\n", 1);
	buf_addstr(&u->cell, line);
	for (c = u->cell.p; c != NULL && (*c == ' ' || *c == '\t' ||
	    *c == '\n'); c++)
		;
	if (!u->incomplete && (c == NULL || *c == '\0')) {
		buf_free(&u->cell);
		return;
	}
	u->waiting = true;
	u->scroll = 0;
	/* attached, our cells' input() is ours to answer too (the
	 * socket's clients do not answer unless they say so) */
	req = json_pack("{s:s, s:s%}", "op", "exec", "code", u->cell.p,
	    u->cell.len);
	if (u->remote)
		json_object_set_new(req, "input", json_true());
	ui_submit(u, req, W_EXEC);
}

/* ---- auto-indent ------------------------------------------------------ */

/* The indentation the line after line takes, in the cell typed so far
 * (a string open in it is no code), as IPython gives it. */
static int
ui_next_indent(struct ui *u, const char *line)
{
	const char *p, *nl;
	int st = 0;

	for (p = u->cell.len > 0 ? u->cell.p : NULL; p != NULL; p = nl !=
	    NULL ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		ui_color_indent(p, nl != NULL ? (size_t)(nl - p) : strlen(p),
		    &st);
	}
	return ui_color_indent(line, strlen(line), &st);
}

/*
 * The next line starts indented as soon as the last is entered, as in
 * IPython, so keys typed on at once land after the indentation: readline
 * calls this as it starts the line.  A block always needs a line more,
 * so the guess is right but for a cell that ends (an error, a
 * bracket's last line): the answer takes the indentation back then,
 * if the person has typed nothing on it (ui_auto_indent).
 */
static int
ui_rl_indent(void)
{
	struct ui *u = ui_self;
	char sp[128];
	int n = u->indent < (int)sizeof sp - 1 ? u->indent : (int)sizeof sp -
	    1;

	if (n <= 0 || rl_end > 0)
		return 0;
	memset(sp, ' ', (size_t)n);
	sp[n] = '\0';
	rl_insert_text(sp);
	return 0;
}

static void
ui_auto_indent(struct ui *u)
{
	int i;

	if (!u->incomplete && u->typed.len == 0 && u->indent > 0 &&
	    rl_end == u->indent) {
		for (i = 0; i < rl_end && rl_line_buffer[i] == ' '; i++)
			;
		if (i == rl_end)
			rl_replace_line("", 0);
	}
	if (u->typed.len == 0)
		u->indent = 0;
}

/* A line typed while our cell is in flight waits its turn, shown as
 * queued; a :-command never does, as it would run later behind the
 * person's back (:quit most of all). */
static void
ui_type_ahead(struct ui *u, const char *line)
{
	if (line[0] == ':') {
		snprintf(u->note, sizeof u->note, "\"%.64s\" was not run: wait "
		    "for the cell or press Ctrl-C", line);
		u->dirty = true;
		return;
	}
	buf_addstr(&u->typed, line);
	buf_add(&u->typed, "\n", 1);
}

void
ui_input_cancel(struct ui *u)
{
	size_t n = ui_typed_ahead(u), len;

	/* a search ends, and the next Ctrl-R or Up starts at the newest
	 * entry, not where the last one left off */
	rl_callback_sigcleanup();
	rl_maybe_unsave_line();
	using_history();
	u->indent = 0;
	buf_free(&u->typed);
	len = strlen(u->note);
	if (n > 0 && len < sizeof u->note)
		snprintf(u->note + len, sizeof u->note - len, "%s%zu typed-"
		    "ahead line%s discarded", len > 0 ? "; " : "", n, n == 1 ?
		    "" : "s");
	u->dirty = true;
}

static void
ui_on_line(char *line)
{
	struct ui *u = ui_self;
	char *p;

	if (u->reading != NULL && u->ended == NULL) {
		ui_answer(u, line);
		free(line);
		return;
	}
	if (line == NULL && (u->cell.len > 0 || u->incomplete)) {
		/* at a ... line a cell is half typed: it goes, not the
		 * session (as in --plain); while it is being run (or asked
		 * whether it is whole), once its answer says it is not */
		if (u->waiting) {
			u->drop_cell = true;
			return;
		}
		buf_free(&u->cell);
		u->incomplete = false;
		snprintf(u->note, sizeof u->note, "the unfinished cell was "
		    "dropped; Ctrl-D at >>> leaves");
		u->dirty = true;
		return;
	}
	if (line == NULL) {
		u->quit = true;
		return;
	}
	if (u->ended != NULL) {
		snprintf(u->note, sizeof u->note, "the session has ended: "
		    "Ctrl-D leaves");
		free(ui_restore);
		ui_restore = line;
		return;
	}
	u->note[0] = '\0';
	using_history();	/* Up after Enter starts at the newest */
	/* the auto-indent alone on a line is a blank line: the end of the
	 * block, as IPython takes it */
	for (p = line; *p == ' ' || *p == '\t'; p++)
		;
	if (*p == '\0')
		line[0] = '\0';
	u->indent = ui_next_indent(u, line);
	if (u->waiting)
		ui_type_ahead(u, line);
	else
		ui_add_line(u, line);
	free(line);
}

/* Readline's input: the bytes fed to it, or (inside a paste, which it
 * reads to its end in one call) the next key from the terminal. */
static int
ui_rl_getc(FILE *f)
{
	int c;

	(void)f;
	if (ui_qi < ui_qn)
		return ui_q[ui_qi++];
	timeout(1000);
	c = getch();
	timeout(0);
	return c == ERR ? EOF : c & 0xff;
}

static void
ui_rl_redisplay(void)
{
	ui_self->dirty = true;
}

static void
ui_rl_prep(int meta)
{
	(void)meta;
}

static void
ui_rl_deprep(void)
{
}

static void
ui_feed(struct ui *u, const char *p, size_t n)
{
	ui_qi = 0;
	ui_qn = n < sizeof ui_q ? n : sizeof ui_q;
	memcpy(ui_q, p, ui_qn);
	while (ui_qi < ui_qn && !u->quit)
		rl_callback_read_char();
	if (ui_restore != NULL) {
		rl_replace_line(ui_restore, 0);
		rl_point = rl_end;
		free(ui_restore);
		ui_restore = NULL;
	}
	u->dirty = true;
}

/* ---- completion ------------------------------------------------------ */

static void
ui_free_matches(struct ui *u)
{
	size_t i;

	for (i = 0; u->matches != NULL && u->matches[i] != NULL; i++)
		free(u->matches[i]);
	free(u->matches);
	u->matches = NULL;
}

/* The list readline would print under the prompt goes to the result
 * pane instead. */
static void
ui_show_matches(char **m, int n, int longest)
{
	struct ui *u = ui_self;
	int i;

	(void)longest;
	ui_free_matches(u);
	u->matches = xcalloc((size_t)n + 1, sizeof *u->matches);
	for (i = 0; i < n; i++)
		u->matches[i] = xstrdup(m[i + 1]);
	u->dirty = true;
}

static char **
ui_complete(const char *text, int start, int end)
{
	struct ui *u = ui_self;
	struct response *reply;
	json_t *m;
	char **out;
	size_t i, n;

	(void)end;
	rl_attempted_completion_over = 1;
	if (u->running != 0 || u->ended != NULL) {
		snprintf(u->note, sizeof u->note, "no completion while a cell "
		    "runs");
		return NULL;
	}
	reply = ui_call(u, complete_request(), 3000);
	m = json_object_get(reply != NULL ? reply->fields : NULL, "matches");
	n = json_array_size(m);
	/* An ambiguous Tab lists the choices at once, in the result pane,
	 * as the worker names them (%who_ls, where readline's word is
	 * who_). */
	if (n > 1) {
		ui_free_matches(u);
		u->matches = xcalloc(n + 1, sizeof *u->matches);
		for (i = 0; i < n; i++) {
			const char *s = json_string_value(json_array_get(m, i));

			u->matches[i] = xstrdup(s != NULL ? s : "");
		}
		u->dirty = true;
	}
	out = complete_matches(reply != NULL ? reply->fields : NULL, text,
	    start);
	/* IPython never adds a space after a match: "arr" goes on as
	 * "arr.shape", a keyword as the person types it */
	rl_completion_append_character = '\0';
	rl_completion_suppress_append = 1;
	response_free(reply);
	return out;
}
/* ---- dispatch -------------------------------------------------------- */

static void
ui_key_readline(struct ui *u, int key)
{
	static const struct { int key; const char *seq; } seqs[] = {
		{ KEY_UP, "\033[A" }, { KEY_DOWN, "\033[B" },
		{ KEY_RIGHT, "\033[C" }, { KEY_LEFT, "\033[D" },
		{ KEY_HOME, "\033[H" }, { KEY_END, "\033[F" },
		{ KEY_DC, "\033[3~" }, { KEY_BACKSPACE, "\177" },
		{ KEY_ENTER, "\r" },
	};
	char c;
	size_t i;

	/* Ctrl-D on a line of indentation alone is at an empty ... line:
	 * it drops the cell, as there */
	if (key == 4 && rl_end > 0 && (u->cell.len > 0 || u->incomplete) &&
	    strspn(rl_line_buffer, " ") == (size_t)rl_end)
		rl_replace_line("", 0);
	for (i = 0; i < nitems(seqs); i++)
		if (seqs[i].key == key) {
			ui_feed(u, seqs[i].seq, strlen(seqs[i].seq));
			return;
		}
	if (key >= 0 && key < 256) {
		c = (char)key;
		ui_feed(u, &c, 1);
	}
}

void
ui_key(struct ui *u, int key)
{
	ui_yes_fn fn = u->ask_fn;
	char *arg;

	if (u->ask != NULL) {
		arg = u->ask_arg;
		free(u->ask);
		u->ask = NULL;
		u->ask_arg = NULL;
		if (key == 'y' || key == 'Y')
			fn(u, arg);
		free(arg);
		u->dirty = true;
		return;
	}
	if (u->matches != NULL && key != '\t') {
		ui_free_matches(u);
		u->dirty = true;
		if (key == 27)
			return;	/* Esc only closes the list, it is no prefix */
	}
	if (key == '\r' || key == KEY_ENTER)
		key = u->focus == F_INPUT ? '\r' : '\n';
	if (u->esc) {
		u->esc = false;
		if (ui_bound(u, UI_ESC(key)))
			return;
		if (u->focus == F_INPUT)
			ui_key_readline(u, 27);
	} else if (key == 27 && u->focus == F_INPUT) {
		u->esc = true;
		return;
	}
	if (u->focus == F_NS && ui_filter_key(u, key))
		return;
	if (u->focus == F_RECORD && ui_record_key(u, key))
		return;
	if ((u->focus == F_REPLAY || (u->focus == F_OVERLAY &&
	    u->back == F_REPLAY)) && ui_replay_key(u, key))
		return;
	if (ui_branch_key(u, key))
		return;
	if (ui_bound(u, key))
		return;
	if (u->focus == F_INPUT)
		ui_key_readline(u, key);
}

void
ui_input_start(struct ui *u)
{
	char err[200], *history;

	ui_self = u;
	rl_readline_name = "coil";
	rl_getc_function = ui_rl_getc;
	rl_redisplay_function = ui_rl_redisplay;
	rl_prep_term_function = ui_rl_prep;
	rl_deprep_term_function = ui_rl_deprep;
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0;
	/* fs(dev): /dev/null */
	rl_outstream = fopen("/dev/null", "w");
	rl_attempted_completion_function = ui_complete;
	rl_pre_input_hook = ui_rl_indent;
	rl_completion_display_matches_hook = ui_show_matches;
	rl_completer_word_break_characters = COMPLETE_WORD_BREAKS;
	history = history_path(u->opts);
	if (history_start(history, err, sizeof err) == -1)
		snprintf(u->note, sizeof u->note, "no history file %s", err);
	free(history);
	rl_callback_handler_install("", ui_on_line);
	/* readline reads ~/.inputrc in the install; paste is ours to ask
	 * the terminal for, as it never preps the terminal here */
	rl_variable_bind("enable-bracketed-paste", "on");
}

void
ui_input_end(struct ui *u)
{
	rl_callback_handler_remove();
	history_end();
	ui_free_matches(u);
	if (rl_outstream != NULL && rl_outstream != stdout)
		fclose(rl_outstream);
	rl_outstream = NULL;
}
