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

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "plain.h"
#include "request.h"
#include "session.h"
#include "util.h"

#define PS1 ">>> "
#define PS2 "... "

struct plain {
	const struct coil_opts *opts;
	struct session *s;
	bool tty;
	struct buf cell;	/* lines of the cell being typed */
	bool waiting;		/* a request is in flight */
	bool eof;
	bool failed;		/* some cell raised (non-tty exit status) */
	bool incomplete;
	bool lost;		/* a write failed: the reader is gone */
	bool broken;		/* the session cannot go on */
	json_t *reply;		/* last response, for synchronous calls */
	char *history;
};

static struct plain *plain_self;	/* for readline's callbacks */
static volatile sig_atomic_t plain_sigint;

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
static void
plain_write(int fd, const char *p, size_t n)
{
	if (plain_self->lost)
		return;
	if (write_all(fd, p, n) == -1)
		plain_self->lost = true;
}

static void
plain_puts(int fd, const char *s)
{
	plain_write(fd, s, strlen(s));
}

/* Print the response to an exec as the python REPL would. */
static void
plain_show(struct plain *p, json_t *msg)
{
	const char *status = json_string_value(json_object_get(msg, "status"));
	json_t *result = json_object_get(msg, "result");
	json_t *error = json_object_get(msg, "error");
	json_t *v;
	size_t i;

	if (status == NULL)
		return;
	if (strcmp(status, "incomplete") == 0) {
		p->incomplete = true;
		return;
	}
	p->incomplete = false;
	if (json_is_string(result)) {
		plain_write(1, json_string_value(result),
		    json_string_length(result));
		plain_puts(1, "\n");
	}
	if (json_is_object(error)) {
		const char *tb = json_string_value(json_object_get(error,
		    "traceback"));
		const char *type = json_string_value(json_object_get(error,
		    "type"));
		const char *m = json_string_value(json_object_get(error,
		    "message"));

		p->failed = true;
		if (tb != NULL && strcmp(status, "crashed") != 0 &&
		    !json_is_object(json_object_get(msg, "restored"))) {
			plain_puts(2, tb);
			if (strcmp(status, "timeout") == 0 && m != NULL) {
				plain_puts(2, "coil: ");
				plain_puts(2, m);
				plain_puts(2, "\n");
			}
		} else {
			plain_puts(2, "coil: ");
			plain_puts(2, m != NULL ? m : type != NULL ? type :
			    "the cell failed");
			plain_puts(2, "\n");
		}
	} else if (strcmp(status, "invalid") == 0) {
		p->failed = true;
	}
	v = json_object_get(msg, "display");
	for (i = 0; json_is_array(v) && i < json_array_size(v); i++) {
		const char *path = json_string_value(json_object_get(
		    json_array_get(v, i), "path"));

		if (path != NULL) {
			plain_puts(1, "[figure saved to ");
			plain_puts(1, path);
			plain_puts(1, "]\n");
		}
	}
	v = json_object_get(msg, "warnings");
	for (i = 0; json_is_array(v) && i < json_array_size(v); i++) {
		plain_puts(2, "coil: warning: ");
		plain_puts(2, json_string_value(json_array_get(v, i)));
		plain_puts(2, "\n");
	}
}

static void
plain_on_event(void *ctx, const struct session_event *ev)
{
	struct plain *p = ctx;

	switch (ev->kind) {
	case EV_OUTPUT:
		plain_write(1, ev->data, ev->len);
		break;
	case EV_STDERR:
		plain_write(2, ev->data, ev->len);
		break;
	case EV_RESPONSE:
		json_decref(p->reply);
		p->reply = json_incref(ev->msg);
		p->waiting = false;
		break;
	case EV_DROPPED:
		break;
	}
}

/* Background output: keep the prompt and the typed line intact. */
static void
plain_on_background(void *ctx, const struct session_event *ev)
{
	struct plain *p = ctx;
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
	plain_write(ev->kind == EV_STDERR ? 2 : 1, ev->data, ev->len);
	if (redraw) {
		if (ev->len > 0 && ev->data[ev->len - 1] != '\n')
			plain_puts(1, "\n");
		rl_restore_prompt();
		rl_replace_line(saved, 0);
		rl_point = point;
		rl_forced_update_display();
		free(saved);
	}
}

/* The session cannot go on: say why once; the loops end. */
static void
plain_broken(struct plain *p)
{
	if (!p->broken)
		fprintf(stderr, "coil: %s\n", session_failure(p->s));
	p->broken = true;
	p->failed = true;
}

/* Send one request and turn the loop until it is answered; NULL when the
 * session broke first. */
static json_t *
plain_call(struct plain *p, json_t *req, enum op op)
{
	json_decref(p->reply);
	p->reply = NULL;
	p->waiting = true;
	session_submit(p->s, req, json_null(), op, ORIGIN_PERSON,
	    plain_on_event, p);
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
	}
	return p->reply;
}

static void
plain_run_cell(struct plain *p, bool at_eof)
{
	json_t *req;

	req = json_pack("{s:s, s:s%}", "op", "exec", "code", p->cell.p,
	    p->cell.len);
	if (at_eof)
		json_object_set_new(req, "code", json_sprintf("%s\n",
		    p->cell.p));
	plain_show(p, plain_call(p, req, OP_EXEC));
	if (!p->incomplete)
		buf_free(&p->cell);
}

/* ---- magics rewritten into requests -------------------------------- */

static void
plain_size(char *out, size_t len, json_t *v)
{
	double b;
	const char *u = "KMGT";
	int i = -1;

	if (!json_is_integer(v)) {
		snprintf(out, len, "?");
		return;
	}
	b = (double)json_integer_value(v);
	if (b < 1024) {
		snprintf(out, len, "%.0fB", b);
		return;
	}
	while (b >= 1024 && i < 3) {
		b /= 1024;
		i++;
	}
	snprintf(out, len, b < 10 ? "%.1f%c" : "%.0f%c", b, u[i]);
}

/* Print what a checkpoint op said: its error, then its warnings.
 * Returns false when it failed. */
static bool
plain_op_result(struct plain *p, json_t *msg)
{
	const char *status = json_string_value(json_object_get(msg, "status"));
	json_t *v, *e = json_object_get(msg, "error");
	size_t i;
	bool ok = status != NULL && strcmp(status, "ok") == 0;

	if (!ok) {
		const char *m = json_string_value(json_object_get(e, "message"));

		p->failed = true;
		plain_puts(2, "coil: ");
		plain_puts(2, m != NULL ? m : "the request failed");
		plain_puts(2, "\n");
	}
	v = json_object_get(msg, "warnings");
	for (i = 0; json_is_array(v) && i < json_array_size(v); i++) {
		plain_puts(2, "coil: warning: ");
		plain_puts(2, json_string_value(json_array_get(v, i)));
		plain_puts(2, "\n");
	}
	return ok;
}

static void
plain_cells(struct buf *b, json_t *cells)
{
	size_t i;

	for (i = 0; i < json_array_size(cells); i++)
		buf_printf(b, "%s%lld", i ? ", " : "", (long long)
		    json_integer_value(json_array_get(cells, i)));
}

static void
plain_m_snapshot(struct plain *p, const char *arg)
{
	json_t *req = json_pack("{s:s}", "op", "snapshot"), *msg;
	char line[256];

	if (*arg != '\0')
		json_object_set_new(req, "name", json_string(arg));
	msg = plain_call(p, req, OP_SNAPSHOT);
	if (!plain_op_result(p, msg))
		return;
	snprintf(line, sizeof line, "snapshot '%s' at cell %lld\n",
	    json_string_value(json_object_get(msg, "name")),
	    (long long)json_integer_value(json_object_get(msg, "cell")));
	plain_puts(1, line);
}

static void
plain_m_rollback(struct plain *p, const char *arg)
{
	json_t *req, *msg, *v;
	const char *c;
	struct buf b;

	if (*arg == '\0') {
		plain_puts(2, "coil: usage: %rollback NAME|CELL\n");
		p->failed = true;
		return;
	}
	for (c = arg; *c >= '0' && *c <= '9'; c++)
		;
	req = json_pack("{s:s}", "op", "rollback");
	if (*c == '\0' && c - arg < 10)
		json_object_set_new(req, "to", json_integer(atoll(arg)));
	else
		json_object_set_new(req, "to", json_string(arg));
	msg = plain_call(p, req, OP_ROLLBACK);
	if (!plain_op_result(p, msg))
		return;
	buf_init(&b);
	buf_printf(&b, "rolled back to cell %lld", (long long)
	    json_integer_value(json_object_get(msg, "cell")));
	if (json_is_string(json_object_get(msg, "name")))
		buf_printf(&b, " (snapshot '%s')", json_string_value(
		    json_object_get(msg, "name")));
	v = json_object_get(msg, "rolled_back");
	if (json_array_size(v) > 0) {
		buf_addstr(&b, "; undid cell");
		buf_addstr(&b, json_array_size(v) > 1 ? "s " : " ");
		plain_cells(&b, v);
	}
	v = json_object_get(msg, "redone");
	if (json_array_size(v) > 0) {
		buf_addstr(&b, "; back in: cell");
		buf_addstr(&b, json_array_size(v) > 1 ? "s " : " ");
		plain_cells(&b, v);
	}
	v = json_object_get(msg, "threads_lost");
	if (json_integer_value(v) > 0)
		buf_printf(&b, "; %lld thread(s) did not survive",
		    (long long)json_integer_value(v));
	buf_addstr(&b, "\n");
	plain_puts(1, b.p);
	buf_free(&b);
	v = json_object_get(msg, "note");
	if (json_is_string(v)) {
		plain_puts(2, "coil: note: ");
		plain_puts(2, json_string_value(v));
		plain_puts(2, "\n");
	}
}

static void
plain_m_snapshots(struct plain *p, const char *arg)
{
	json_t *msg, *list, *ck;
	char line[256], priv[32];
	size_t i;

	(void)arg;
	msg = plain_call(p, json_pack("{s:s}", "op", "snapshots"),
	    OP_SNAPSHOTS);
	if (!plain_op_result(p, msg))
		return;
	list = json_object_get(msg, "checkpoints");
	plain_puts(1, " cell  name              kind       age      private\n");
	for (i = 0; i < json_array_size(list); i++) {
		const char *name;

		ck = json_array_get(list, i);
		name = json_string_value(json_object_get(ck, "name"));
		plain_size(priv, sizeof priv, json_object_get(ck, "private"));
		snprintf(line, sizeof line, "%5lld  %-16.16s  %-9s %7.1fs  %7s%s\n",
		    (long long)json_integer_value(json_object_get(ck, "cell")),
		    name != NULL ? name : "-",
		    json_string_value(json_object_get(ck, "kind")),
		    json_number_value(json_object_get(ck, "age_s")), priv,
		    json_is_true(json_object_get(ck, "current")) ?
		    "  (now)" : "");
		plain_puts(1, line);
	}
	plain_size(priv, sizeof priv, json_object_get(msg, "memory"));
	snprintf(line, sizeof line, "%zu checkpoint%s, holding %s beyond the "
	    "worker's own memory\n", json_array_size(list),
	    json_array_size(list) == 1 ? "" : "s", priv);
	plain_puts(1, line);
}

/* The checkpoint magics become the same requests the agent protocol
 * has; any other magic is left for the worker. */
static const struct plain_magic {
	const char *name;
	const char *usage;
	void (*fn)(struct plain *, const char *);
} plain_magics[] = {
	{ "snapshot", "%snapshot NAME  pin the current state as NAME",
	  plain_m_snapshot },
	{ "rollback", "%rollback NAME|CELL  go back to a snapshot, or to the "
	  "state after a cell", plain_m_rollback },
	{ "snapshots", "%snapshots  list the checkpoints and their memory",
	  plain_m_snapshots },
};

static bool
plain_magic(struct plain *p, const char *line)
{
	const char *c = line, *name;
	char *arg, *end;
	size_t n, i;

	while (*c == ' ' || *c == '\t')
		c++;
	if (*c++ != '%')
		return false;
	name = c;
	while ((*c >= 'a' && *c <= 'z') || *c == '_')
		c++;
	n = (size_t)(c - name);
	if (*c != '\0' && *c != ' ' && *c != '\t')
		return false;
	for (i = 0; i < nitems(plain_magics); i++) {
		if (strlen(plain_magics[i].name) != n ||
		    strncmp(plain_magics[i].name, name, n) != 0)
			continue;
		while (*c == ' ' || *c == '\t')
			c++;
		arg = xstrdup(c);
		end = arg + strlen(arg);
		while (end > arg && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		plain_magics[i].fn(p, arg);
		free(arg);
		return true;
	}
	return false;
}

static void
plain_add_line(struct plain *p, const char *line)
{
	if (p->cell.len == 0 && !p->incomplete && plain_magic(p, line))
		return;
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
	json_t *req, *reply, *m;
	char **out;
	size_t i, n;
	int cursor = 0, k;

	(void)start;
	(void)end;
	/* The protocol's cursor counts characters; rl_point counts bytes. */
	for (k = 0; k < rl_point; k++)
		if ((rl_line_buffer[k] & 0xc0) != 0x80)
			cursor++;
	rl_attempted_completion_over = 1;
	req = json_pack("{s:s, s:s, s:i}", "op", "complete", "code",
	    rl_line_buffer, "cursor", cursor);
	reply = plain_call(p, req, OP_COMPLETE);
	m = json_object_get(reply, "matches");
	n = json_array_size(m);
	if (n == 0)
		return NULL;
	/* readline wants the common prefix first, then the matches.  The
	 * worker's matches are whole tokens, and so is readline's text:
	 * '.' is not a word break here. */
	out = xcalloc(n + 2, sizeof *out);
	for (i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(m, i));

		out[i + 1] = xstrdup(s != NULL ? s : text);
	}
	{
		size_t common = strlen(out[1]);

		for (i = 2; i <= n; i++) {
			size_t j = 0;

			while (j < common && out[i][j] == out[1][j])
				j++;
			common = j;
		}
		out[0] = xstrndup(out[1], common);
	}
	if (n == 1) {
		free(out[1]);
		out[1] = NULL;
	}
	return out;
}

static void plain_on_line(char *line);

static void
plain_prompt(struct plain *p)
{
	rl_callback_handler_install(p->incomplete ? PS2 : PS1, plain_on_line);
}

static void
plain_on_line(char *line)
{
	struct plain *p = plain_self;

	rl_callback_handler_remove();
	if (line == NULL) {
		p->eof = true;
		plain_puts(1, "\n");
		return;
	}
	if (*line != '\0') {
		add_history(line);
		if (p->history != NULL)
			append_history(1, p->history);
	}
	plain_add_line(p, line);
	free(line);
	if (!p->eof)
		plain_prompt(p);
}

static char *
plain_history_path(const struct coil_opts *o)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char *dir, *path;

	if (o->history != NULL)
		return *o->history ? xstrdup(o->history) : NULL;
	if (state != NULL && *state == '/')
		xasprintf(&dir, "%s/coil", state);
	else if (home != NULL && *home == '/')
		xasprintf(&dir, "%s/.local/state/coil", home);
	else
		return NULL;
	/* mkdir -p of the last two levels is enough for XDG layouts. */
	{
		char *slash = strrchr(dir, '/');

		*slash = '\0';
		mkdir(dir, 0700);
		*slash = '/';
		mkdir(dir, 0700);
	}
	xasprintf(&path, "%s/history", dir);
	free(dir);
	return path;
}

static int
plain_tty_loop(struct plain *p)
{
	struct sigaction sa = { .sa_handler = plain_on_sigint };

	sigaction(SIGINT, &sa, NULL);
	rl_readline_name = "coil";
	rl_attempted_completion_function = plain_complete;
	rl_completer_word_break_characters =
	    " \t\n\"'`@$><=;|&{(+-*/%^~[],:!";
	rl_catch_signals = 0;
	using_history();
	p->history = plain_history_path(p->opts);
	if (p->history != NULL) {
		FILE *f = fopen(p->history, "a");

		if (f != NULL)
			fclose(f);
		read_history(p->history);
	}
	plain_prompt(p);
	while (!p->eof && !p->lost && !p->broken && !session_done(p->s)) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };

		if (session_poll(p->s, &pfd, 1, -1) == -1) {
			plain_broken(p);
			break;
		}
		if (plain_term)
			break;
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
	if (p->history != NULL)
		history_truncate_file(p->history, 10000);
	return p->broken ? 1 : 0;
}

static int
plain_pipe_loop(struct plain *p)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while (!session_done(p->s) && !p->lost && !p->broken && !plain_term &&
	    (n = getline(&line, &cap, stdin)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		plain_add_line(p, line);
	}
	free(line);
	if (p->incomplete && p->cell.len > 0 && !p->lost && !p->broken &&
	    !plain_term) {
		plain_run_cell(p, true);
		if (p->incomplete) {
			plain_puts(2, "coil: the input ended inside an "
			    "unfinished statement\n");
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
	char err[512];
	int rc;

	plain_self = &p;
	buf_init(&p.cell);
	p.tty = isatty(0) && isatty(1);
	p.s = session_new(opts, err, sizeof err);
	if (p.s == NULL) {
		fprintf(stderr, "coil: %s\n", err);
		return 1;
	}
	session_set_background(p.s, plain_on_background, &p);
	/* After session_new: init, forked there, keeps the defaults. */
	if (plain_catch_term(p.tty) == -1) {
		fprintf(stderr, "coil: sigaction: %s\n", strerror(errno));
		session_free(p.s);
		return 1;
	}
	rc = p.tty ? plain_tty_loop(&p) : plain_pipe_loop(&p);
	if (plain_term)
		rc = 128 + plain_term;
	session_free(p.s);
	json_decref(p.reply);
	buf_free(&p.cell);
	free(p.history);
	return rc;
}
