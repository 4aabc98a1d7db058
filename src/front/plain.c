/*
 * plain.c - plain mode (see plain.h).
 *
 * readline runs through its callback interface so the session's loop
 * keeps turning while a person sits at the prompt: output a thread
 * prints between cells appears above the prompt, not after the next
 * cell.  While a cell runs, stdin is left alone (typed keys wait in the
 * terminal) and SIGINT only sets a flag that the loop turns into an
 * interrupt of the cell.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "complete.h"
#include "outbuf.h"
#include "history.h"
#include "plain.h"
#include "plain-int.h"
#include "replay.h"
#include "request.h"
#include "session.h"
#include "util.h"

#define PS1 ">>> "
#define PS2 "... "


static struct plain *plain_self;	/* for readline's callbacks */

static volatile sig_atomic_t plain_sigint;
static volatile sig_atomic_t plain_winch;	/* the terminal was resized */

/* SIGTERM, SIGHUP (and SIGINT without a terminal): end the loops, so
 * that main tears the session down, then exit 128 + the signal. */
static volatile sig_atomic_t plain_term;

static void
plain_on_sigint(int sig)
{
	(void)sig;
	plain_sigint = 1;
}

static void
plain_on_winch(int sig)
{
	(void)sig;
	plain_winch = 1;
}

static void
plain_on_term(int sig)
{
	plain_term = sig;
}

/* No SA_RESTART: a read of stdin the signal interrupts returns. */
static int
plain_catch_term(bool tty)
{
	struct sigaction sa = { .sa_handler = plain_on_term };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGHUP, &sa, NULL) == -1 ||
	    (!tty && sigaction(SIGINT, &sa, NULL) == -1))
		return -1;
	return 0;
}

/* Once a write has failed nothing more is written and the loops end,
 * so that main tears the session down. */
void
plain_raw(int fd, const char *p, size_t n)
{
	if (plain_self->lost)
		return;
	if (write_all(fd, p, n) == -1)
		plain_self->lost = true;
}

/* Part of a stream (a cell's output as it comes): on a terminal, a
 * sequence cut at the end of p waits for the next part. */
static void
plain_write(int fd, const char *p, size_t n)
{
	struct buf b;

	if (!plain_self->safe[fd]) {
		plain_raw(fd, p, n);
		return;
	}
	buf_init(&b);
	termsafe_feed(&plain_self->ts[fd], p, n, &b);
	plain_raw(fd, b.p, b.len);
	buf_free(&b);
}

/* The stream on fd has ended (the cell answered): what it held back
 * shows, escaped, and a colour or attribute it left set is reset. */
static void
plain_end(int fd)
{
	struct buf b;

	if (!plain_self->safe[fd])
		return;
	buf_init(&b);
	termsafe_flush(&plain_self->ts[fd], &b);
	plain_raw(fd, b.p, b.len);
	buf_free(&b);
}

/* Both streams end: what coil writes next is not the cell's, and must
 * not be hidden by an SGR (conceal, black on black) the cell left on
 * either (stdout and stderr are most often one terminal). */
static void
plain_end_both(void)
{
	plain_end(1);
	plain_end(2);
}

/* A whole text (a result, a traceback, coil's words). */
static void
plain_text(int fd, const char *p, size_t n)
{
	plain_end_both();
	plain_write(fd, p, n);
	plain_end(fd);
}

void
plain_puts(int fd, const char *s)
{
	plain_text(fd, s, strlen(s));
}

/* Print a response's warnings. */
void
plain_warnings(const struct response *r)
{
	size_t i;

	for (i = 0; i < json_array_size(r->warnings); i++) {
		plain_puts(2, "coil: warning: ");
		plain_puts(2, json_string_value(json_array_get(r->warnings, i)));
		plain_puts(2, "\n");
	}
}

/* An error as the REPL shows it: the traceback when the cell's own
 * frames are there to see, else coil's words for what happened. */
static void
plain_error(const struct response *r)
{
	const struct response_error *e = r->error;

	if (e->traceback != NULL && r->status != ST_CRASHED &&
	    !json_is_object(r->restored)) {
		plain_puts(2, e->traceback);
		if (r->status == ST_TIMEOUT) {
			plain_puts(2, "coil: ");
			plain_puts(2, e->message);
			plain_puts(2, "\n");
		}
		return;
	}
	plain_puts(2, "coil: ");
	plain_puts(2, e->message[0] != '\0' ? e->message : e->type);
	plain_puts(2, "\n");
}

/* Print the response to an exec as the python REPL would. */
static void
plain_show(struct plain *p, const struct response *r)
{
	size_t i;

	if (r == NULL)
		return;
	if (r->status == ST_INCOMPLETE) {
		p->incomplete = true;
		return;
	}
	p->incomplete = false;
	if (r->has & RESP_RESULT) {
		plain_text(1, r->result, r->result_len);
		plain_puts(1, "\n");
	}
	if (r->error != NULL) {
		p->failed = true;
		plain_error(r);
	}
	if (r->status == ST_INVALID)
		p->failed = true;
	for (i = 0; i < json_array_size(r->display); i++) {
		const char *path = json_string_value(json_object_get(
		    json_array_get(r->display, i), "path"));

		if (path != NULL) {
			plain_puts(1, "[figure saved to ");
			plain_puts(1, path);
			plain_puts(1, "]\n");
		}
	}
	plain_warnings(r);
}

/* Background output: keep the prompt and the typed line intact. */
static void
plain_background(struct plain *p, const struct session_event *ev)
{
	bool redraw = p->tty && !p->waiting && RL_ISSTATE(RL_STATE_CALLBACK);
	char *saved = NULL;
	int point = 0;

	if (redraw) {
		saved = rl_copy_text(0, rl_end);
		point = rl_point;
		rl_save_prompt();
		rl_replace_line("", 0);
		rl_redisplay();
		plain_puts(1, "\r");
	}
	plain_write(ev->stream == 2 ? 2 : 1, ev->data, ev->len);
	if (redraw) {
		/* nothing held behind the prompt drawn again */
		plain_end(ev->stream == 2 ? 2 : 1);
		if (ev->len > 0 && ev->data[ev->len - 1] != '\n')
			plain_puts(1, "\n");
		rl_restore_prompt();
		rl_replace_line(saved, 0);
		rl_point = point;
		rl_forced_update_display();
		free(saved);
	}
}

/* A person's terminal shows every byte as it comes, uncapped. */
static void
plain_on_event(void *ctx, const struct session_event *ev)
{
	struct plain *p = ctx;

	switch (ev->kind) {
	case EV_OUTPUT:
		plain_write(ev->stream == 2 ? 2 : 1, ev->data, ev->len);
		break;
	case EV_BACKGROUND:
		plain_background(p, ev);
		break;
	case EV_INPUT:
		free(p->ask);
		free(p->page);
		p->ask = xstrdup(json_string_value(json_object_get(ev->info,
		    "prompt")) ?: "");
		p->page = json_is_string(json_object_get(ev->info, "page")) ?
		    xstrdup(json_string_value(json_object_get(ev->info,
		    "page"))) : NULL;
		break;
	case EV_RESPONSE:
		response_free(p->reply);
		p->reply = response_ref(ev->resp);
		p->waiting = false;
		break;
	default:
		break;
	}
}

/* The session cannot go on: say why once; the loops end. */
static void
plain_broken(struct plain *p)
{
	if (!p->broken) {
		plain_puts(2, "coil: ");
		plain_puts(2, session_failure(p->s));
		plain_puts(2, "\n");
	}
	p->broken = true;
	p->failed = true;
}

static void
plain_on_answer(char *line)
{
	struct plain *p = plain_self;

	rl_callback_handler_remove();
	p->answer = line;
	p->answered = true;
}

/*
 * The running cell reads a line (input(), pdb): read it at the prompt
 * the cell gave, the session's loop turning meanwhile.  Ctrl-C
 * interrupts the cell, which stops waiting for it; Ctrl-D is the end
 * of input (EOFError, pdb's quit).
 */
static void
plain_ask(struct plain *p)
{
	char *prompt = p->ask;

	p->ask = NULL;
	if (p->page != NULL) {
		plain_page(p, p->page);
		free(p->page);
		p->page = NULL;
		session_input(p->s, "");
		free(prompt);
		return;
	}
	p->answered = false;
	/* the cell's output so far ends, its colours reset: what the
	 * person types must show */
	plain_end_both();
	/* the cell's prompt, which readline writes to the terminal as it
	 * is: made safe, its colours marked as taking no room (and reset
	 * at its end) */
	if (p->safe[1]) {
		struct buf b;

		buf_init(&b);
		termsafe_text(prompt, strlen(prompt), TERMSAFE_PROMPT, &b);
		free(prompt);
		prompt = buf_take(&b);
	}
	rl_callback_handler_install(prompt, plain_on_answer);
	while (!p->answered && p->waiting && !plain_term && !p->broken) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };

		if (plain_sigint) {
			plain_sigint = 0;
			rl_callback_sigcleanup();
			rl_callback_handler_remove();
			rl_crlf();
			session_interrupt(p->s);
			free(prompt);
			return;
		}
		if (session_poll(p->s, &pfd, 1, -1) == -1) {
			plain_broken(p);
			break;
		}
		if (!p->answered && (pfd.revents & (POLLIN | POLLHUP)))
			rl_callback_read_char();
	}
	if (!p->answered)
		rl_callback_handler_remove();
	else if (session_input(p->s, p->answer) == 0 && p->answer == NULL)
		plain_puts(1, "\n");
	free(p->answer);
	p->answer = NULL;
	free(prompt);
}

/* Send one request and turn the loop until it is answered; NULL when the
 * session broke first. */
struct response *
plain_call(struct plain *p, json_t *req, enum op op)
{
	response_free(p->reply);
	p->reply = NULL;
	p->waiting = true;
	session_submit(p->s, p->client, req, json_null(), op);
	while (p->waiting) {
		if (plain_term)
			return NULL;
		if (plain_sigint) {
			plain_sigint = 0;
			session_interrupt(p->s);
		}
		if (session_poll(p->s, NULL, 0, -1) == -1) {
			plain_broken(p);
			return NULL;
		}
		if (p->ask != NULL)
			plain_ask(p);
	}
	/* answered: the cell's output, and any background output while
	 * it ran, end before coil or readline writes (plain_show, a
	 * magic's report, a completion's redisplay) */
	plain_end_both();
	return p->reply;
}

/*
 * A person at a terminal: the cell has no deadline unless --timeout gave
 * one (Ctrl-C is theirs), and sees the terminal's size as it is now, a
 * resize included (COLUMNS and LINES, which shutil.get_terminal_size and
 * so pandas and friends read: the worker's stdout is a pipe).
 */
static void
plain_terminal(struct plain *p, json_t *req)
{
	struct winsize ws;

	if (p->opts->timeout < 0)
		json_object_set_new(req, "timeout", json_integer(0));
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		json_object_set_new(req, "columns", json_integer(ws.ws_col));
		json_object_set_new(req, "lines", json_integer(ws.ws_row));
	}
}

static void
plain_remember(struct plain *p, const char *cell)
{
	if (p->tty)
		history_keep(cell);
}

/* A cell that is not UTF-8 never reaches Python: python3 refuses such
 * source too, naming the byte. */
static void
plain_not_utf8(struct plain *p)
{
	size_t at = utf8_valid_prefix(p->cell.p, p->cell.len), line = 1, i;
	char msg[160];

	for (i = 0; i < at; i++)
		line += p->cell.p[i] == '\n';
	snprintf(msg, sizeof msg, "SyntaxError: the cell is not UTF-8: byte "
	    "\\x%02x on line %zu\n", (unsigned char)p->cell.p[at], line);
	plain_puts(2, msg);
	p->failed = true;
	p->incomplete = false;
	buf_free(&p->cell);
}

static void
plain_run_cell(struct plain *p, bool at_eof)
{
	json_t *req;

	req = json_pack("{s:s, s:s%}", "op", "exec", "code", p->cell.p,
	    p->cell.len);
	if (req == NULL) {
		plain_not_utf8(p);
		return;
	}
	if (at_eof)
		json_object_set_new(req, "code", json_sprintf("%s\n",
		    p->cell.p));
	if (p->tty)
		plain_terminal(p, req);
	plain_show(p, plain_call(p, req, OP_EXEC));
	if (!p->incomplete) {
		plain_remember(p, p->cell.p);
		buf_free(&p->cell);
	}
}

/* exit, quit, exit() and quit() typed as a cell leave, as in IPython
 * (python's REPL does the same through SystemExit; coil's worker turns
 * SystemExit into an error, which keeps an agent's session alive). */
static bool
plain_leaves(const char *line)
{
	static const char *const words[] = { "exit", "quit", "exit()",
	    "quit()" };
	size_t i, n;

	while (*line == ' ' || *line == '\t')
		line++;
	n = strlen(line);
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	for (i = 0; i < nitems(words); i++)
		if (strlen(words[i]) == n && strncmp(words[i], line, n) == 0)
			return true;
	return false;
}

/* A block that waits only for the blank line that ends it. */
static bool
plain_block_open(const struct plain *p)
{
	return p->incomplete && p->cell.len > 0 && p->reply != NULL &&
	    p->reply->error != NULL && strstr(p->reply->error->message,
	    "until a blank line") != NULL;
}

static void
plain_add_line(struct plain *p, const char *line)
{
	/* exit and coil's own magics are cells of their own: unindented
	 * after a block, they end it first, as python's next statement
	 * would (the block then runs without them). */
	if (plain_block_open(p) && line[0] != ' ' && line[0] != '\t' &&
	    (plain_leaves(line) || plain_is_magic(line))) {
		plain_add_line(p, "");
		if (p->lost || p->broken)
			return;
	}
	if (p->cell.len == 0 && !p->incomplete && plain_leaves(line)) {
		plain_remember(p, line);
		p->eof = true;
		return;
	}
	if (p->cell.len == 0 && !p->incomplete && plain_magic(p, line)) {
		plain_remember(p, line);
		return;
	}
	if (p->cell.len > 0 || p->incomplete)
		buf_add(&p->cell, "\n", 1);
	buf_addstr(&p->cell, line);
	if (p->cell.len == 0 && !p->incomplete)
		return;
	if (!p->incomplete) {
		const char *c = p->cell.p;

		while (*c == ' ' || *c == '\t')
			c++;
		if (*c == '\0') {
			buf_free(&p->cell);
			return;
		}
	}
	plain_run_cell(p, false);
}

/* ---- the terminal: readline ---------------------------------------- */

static char **
plain_complete(const char *text, int start, int end)
{
	struct plain *p = plain_self;
	struct response *reply;

	(void)end;
	rl_attempted_completion_over = 1;
	reply = plain_call(p, complete_request(), OP_COMPLETE);
	return reply != NULL ? complete_matches(reply->fields, text, start) :
	    NULL;
}

/* Tab where only blanks come before the cursor indents, as python's and
 * IPython's prompts do; anywhere else it completes. */
static int
plain_tab(int count, int key)
{
	int i;

	for (i = 0; i < rl_point; i++)
		if (rl_line_buffer[i] != ' ' && rl_line_buffer[i] != '\t')
			return rl_complete(count, key);
	return rl_insert_text("    ") >= 0 ? 0 : 1;
}

static void plain_on_line(char *line);

/* ">>> ", or "[b1] >>> " on a branch (plain-branch.c): the session a
 * cell typed here runs in, always in sight. */
static void
plain_prompt(struct plain *p)
{
	const char *ps = p->incomplete ? PS2 : PS1;
	char prompt[REQUEST_LABEL_MAX + 32];

	if (p->branch == NULL) {
		rl_callback_handler_install(ps, plain_on_line);
		return;
	}
	snprintf(prompt, sizeof prompt, "[%s%s] %s", p->branch,
	    p->branch_closed ? " closed" : "", ps);
	rl_callback_handler_install(prompt, plain_on_line);
}

static void
plain_on_line(char *line)
{
	struct plain *p = plain_self;

	rl_callback_handler_remove();
	if (line == NULL && (p->incomplete || p->cell.len > 0)) {
		/* Ctrl-D at "... ": the cell is dropped, the session kept.
		 * readline remembers the end of file it saw, and would end
		 * every later line with a blank one. */
		rl_eof_found = 0;
		buf_free(&p->cell);
		p->incomplete = false;
		plain_prompt(p);
		return;
	}
	if (line == NULL) {
		p->eof = true;
		plain_puts(1, "\n");
		return;
	}
	plain_add_line(p, line);
	/* A multi-line entry recalled from history is a whole cell: the
	 * blank line that would end its block is implied. */
	if (strchr(line, '\n') != NULL && p->incomplete && !p->eof)
		plain_add_line(p, "");
	free(line);
	if (!p->eof)
		plain_prompt(p);
}

static int
plain_tty_loop(struct plain *p)
{
	struct sigaction sa = { .sa_handler = plain_on_sigint };
	struct sigaction wa = { .sa_handler = plain_on_winch };
	char err[512], *history;

	sigaction(SIGINT, &sa, NULL);
	/* readline's own handler is off (rl_catch_signals): the loop tells
	 * it of a new size, or it wraps the line at the old width. */
	sigaction(SIGWINCH, &wa, NULL);
	rl_catch_sigwinch = 0;
	rl_readline_name = "coil";
	rl_attempted_completion_function = plain_complete;
	rl_bind_key('\t', plain_tab);
	rl_completer_word_break_characters = COMPLETE_WORD_BREAKS;
	rl_catch_signals = 0;
	history = history_path(p->opts);
	if (history_start(history, err, sizeof err) == -1)
		coil_warn("no history file %s", err);
	free(history);
	plain_prompt(p);
	while (!p->eof && !p->lost && !p->broken && !session_done(p->s)) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };

		if (session_poll(p->s, &pfd, 1, -1) == -1) {
			plain_broken(p);
			break;
		}
		if (plain_term)
			break;
		if (plain_winch) {
			plain_winch = 0;
			rl_resize_terminal();
		}
		if (plain_sigint) {
			/* Ctrl-C at the prompt drops what was typed. */
			plain_sigint = 0;
			rl_free_line_state();
			rl_callback_sigcleanup();
			rl_replace_line("", 0);
			rl_crlf();
			plain_puts(2, "KeyboardInterrupt\n");
			buf_free(&p->cell);
			p->incomplete = false;
			rl_callback_handler_remove();
			plain_prompt(p);
			continue;
		}
		if (pfd.revents & (POLLIN | POLLHUP))
			rl_callback_read_char();
	}
	rl_callback_handler_remove();
	history_end();
	return p->broken ? 1 : 0;
}

/* The input ended with a statement still open: say what is open and
 * where, as the worker found it. */
static void
plain_unfinished(const struct response *r)
{
	const struct response_error *e = r != NULL ? r->error : NULL;
	char *msg;

	if (e == NULL) {
		plain_puts(2, "coil: the input ended inside an unfinished "
		    "statement\n");
		return;
	}
	xasprintf(&msg, "coil: the input ended inside an unfinished "
	    "statement: %s (line %d, column %d)\n", e->message, e->line,
	    e->column);
	plain_puts(2, msg);
	free(msg);
}

static int
plain_pipe_loop(struct plain *p)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while (!session_done(p->s) && !p->lost && !p->broken && !plain_term &&
	    !p->eof && (n = getline(&line, &cap, stdin)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > 0 && line[n - 1] == '\r')	/* CRLF */
			line[--n] = '\0';
		plain_add_line(p, line);
	}
	free(line);
	if (p->incomplete && p->cell.len > 0 && !p->lost && !p->broken &&
	    !plain_term) {
		plain_run_cell(p, true);
		if (p->incomplete) {
			plain_unfinished(p->reply);
			p->failed = true;
		}
	}
	/* Wait for the background to go quiet is not needed: the session
	 * is idle once the last cell answered. */
	return p->failed ? 1 : 0;
}

int
plain_main(const struct coil_opts *opts)
{
	struct plain p = { .opts = opts };
	char err[512], branch[REQUEST_LABEL_MAX + 1];
	int rc;

	plain_self = &p;
	buf_init(&p.cell);
	p.tty = isatty(0) && isatty(1);
	p.safe[1] = isatty(1);
	p.safe[2] = isatty(2);
	termsafe_init(&p.ts[1], 0);
	termsafe_init(&p.ts[2], 0);
	p.s = session_new(opts, err, sizeof err);
	if (p.s == NULL) {
		coil_error("%s", err);
		return 1;
	}
	p.client = session_attach(p.s, ORIGIN_PERSON, SESSION_LIVE_BG |
	    SESSION_RAW | (p.tty ? SESSION_INPUT : 0), plain_on_event, &p);
	/* --replay FILE --from N: the session picked up there (replay.h) */
	if (replay_handover(opts, p.s, p.client, branch, sizeof branch, err,
	    sizeof err) == -1) {
		coil_error("%s", err);
		session_free(p.s);
		return 1;
	}
	if (branch[0] != '\0')
		plain_branch_set(&p, branch);	/* the prompt says it */
	response_free(p.reply);	/* the hand-over's, asked by no line */
	p.reply = NULL;
	/* After session_new: init, forked there, keeps the defaults. */
	if (plain_catch_term(p.tty) == -1) {
		coil_error("sigaction: %s", strerror(errno));
		session_free(p.s);
		return 1;
	}
	rc = p.tty ? plain_tty_loop(&p) : plain_pipe_loop(&p);
	plain_end_both();
	if (plain_term)
		rc = 128 + plain_term;
	if (session_free(p.s) == -1 && rc == 0)
		rc = 1;
	response_free(p.reply);
	free(p.ask);
	free(p.page);
	free(p.branch);
	buf_free(&p.cell);
	return rc;
}
