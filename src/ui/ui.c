/*
 * ui.c - the curses UI's loop (see ui.h): the terminal, the signals,
 * and the two back ends the same screen is drawn from.
 *
 * Back ends.  Without --attach the UI owns a session in this process and
 * is its client (origin "person") and an observer with the raw bytes of
 * every cell (SESSION_RAW: the screen is not capped at --max-output,
 * its scrollback is the bound).  With --attach it connects to the unix
 * socket of a `coil --agent --listen` and speaks that protocol: the
 * same events arrive as JSON lines, the same requests go out as lines.
 * Either way the model gets the session's structs (ui-model.c): each
 * line is read into them once, where it arrives (ui-wire.c).
 *
 * Never frozen.  One poll waits on the back end and the keyboard; keys
 * are read and echoed (the input area and status line alone, which is
 * cheap) on every turn, while the panes are redrawn at most once a
 * frame (UI_FRAME_MS), so a cell printing hundreds of megabytes costs
 * the screen a bounded rate of redraws, and the session's reads of the
 * worker are budgeted per turn (session.h) so keys get their turn.
 *
 * Terminal hygiene.  curses is set up in raw mode (Ctrl-C is a key: it
 * interrupts the cell, the UI is not killed), bracketed paste on; the
 * terminal is put back by endwin at the end and from atexit, by
 * ui_emergency_restore (termios saved at start, and a fixed escape
 * string: async-signal-safe) from the crash handlers and from fatal's
 * teardown, and SIGTERM or SIGHUP end the loop so the normal path runs.
 */
#include "config.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <ncurses.h>

#include "peer.h"
#include "request.h"
#include "ui.h"
#include "ui-image.h"
#include "ui-int.h"
#include "replay.h"
#include "wording.h"
#include "wire.h"

#define UI_FRAME_MS	40	/* at most 25 redraws a second */
#define UI_TICK_MS	200	/* the running cell's clock */
#define UI_MAX_LINE	((size_t)256 << 20)	/* of one line from a socket */

static struct termios ui_tio;
static volatile sig_atomic_t ui_up;	/* curses owns the terminal */
static volatile sig_atomic_t ui_term;	/* SIGTERM or SIGHUP came */

void
ui_emergency_restore(void)
{
	static const char seq[] = "\033[?2004l\033[?1000l\033[?1002l"
	    "\033[?1006l\033[?1049l\033[?25h\033[0m\r\n";

	if (!ui_up)
		return;
	ui_up = 0;
	tcsetattr(0, TCSAFLUSH, &ui_tio);
	(void)!write(1, seq, sizeof seq - 1);
}

static void
ui_restore(void)
{
	if (!ui_up)
		return;
	ui_up = 0;
	printf("\033[?2004l");
	fflush(stdout);
	endwin();
}

static void
ui_on_term(int sig)
{
	ui_term = sig;
}

static void
ui_on_crash(int sig)
{
	ui_emergency_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* No SA_RESTART: the signal ends the poll it interrupts. */
static int
ui_signals(void)
{
	static const int crash[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
	    SIGABRT };
	struct sigaction sa = { .sa_handler = ui_on_term };
	size_t i;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGHUP, &sa, NULL) == -1)
		return -1;
	sa.sa_handler = ui_on_crash;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < nitems(crash); i++)
		if (sigaction(crash[i], &sa, NULL) == -1)
			return -1;
	signal(SIGINT, SIG_IGN);
	return conn_hold_sigpipe();
}

static void
ui_term_start(struct ui *u)
{
	char *home = NULL;

	setlocale(LC_ALL, "");
	if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
	tcgetattr(0, &ui_tio);
	/* ncurses reads ~/.terminfo while HOME is set: in a home cells may
	 * write (main.c's main_home) it would be theirs to plant */
	if (u->opts->home_exposed && (home = getenv("HOME")) != NULL) {
		home = xstrdup(home);
		unsetenv("HOME");
	}
	ui_term_query();
	initscr();
	ui_term_unget();
	if (home != NULL) {
		setenv("HOME", home, 1);
		free(home);
	}
	ui_up = 1;
	atexit(ui_restore);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	timeout(0);
	set_escdelay(25);
	mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	ui_draw_setup(u);
	getmaxyx(stdscr, u->rows, u->cols);
	printf("\033[?2004h");
	fflush(stdout);
}

/* ---- the back ends ---------------------------------------------------- */

/* The session here: its events as it made them, no JSON made of them. */
static void
ui_local_event(void *ctx, const struct session_event *ev)
{
	struct ui *u = ctx;

	ui_event(u, ev, ev->client == u->client);
}

static void
ui_end(struct ui *u, const char *why)
{
	if (u->ended != NULL)
		return;
	u->ended = xstrdup(why);
	u->running = 0;
	u->waiting = false;
	ui_note_line(u, UL_NOTE, "the session ended: %s", why);
}

/* Whether id is one of our requests in flight, made for why. */
static bool
ui_ours(const struct ui *u, json_t *id, enum ui_why why)
{
	int i;

	for (i = 0; json_is_integer(id) && i < u->npend; i++)
		if (u->pend[i].id == json_integer_value(id))
			return u->pend[i].why == why;
	return false;
}

/* Whether id is one of our requests in flight, whatever it was for. */
static bool
ui_pending(const struct ui *u, json_t *id)
{
	int i;

	for (i = 0; json_is_integer(id) && i < u->npend; i++)
		if (u->pend[i].id == json_integer_value(id))
			return true;
	return false;
}

/* One line of the attach socket: our own answer, or an event. */
static void
ui_remote_line(void *ctx, const char *p, size_t n)
{
	struct ui *u = ctx;
	struct ui_wire w;
	char err[256];

	if (ui_wire_read(&w, p, n, err, sizeof err) == -1) {
		ui_note_line(u, UL_NOTE, "a line from the session was skipped: "
		    "%s", err);
		return;
	}
	switch (w.kind) {
	case UW_ANSWER:
		ui_event(u, &w.ev, true);
		break;
	case UW_EVENT:
		/* a cell of ours that starts: Ctrl-C stops it unasked */
		if (w.ev.kind == EV_STARTED && ui_pending(u, w.ev.id))
			u->own_run = w.ev.seq;
		/* an input event is ours to answer when its cell is */
		ui_event(u, &w.ev, w.ev.kind == EV_INPUT && ui_ours(u, w.ev.id,
		    W_EXEC));
		break;
	case UW_HISTORY:
		ui_history(u, &w.ev, w.order);
		break;
	case UW_FIGURES:
		ui_image_figures(u, w.ev.seq, w.figs, w.nfigs);
		break;
	case UW_END:
		ui_end(u, w.why);
		break;
	case UW_OTHER:
		break;
	}
	ui_wire_free(&w);
}

static void
ui_remote_too_long(void *ctx, size_t bytes, const char *head,
    size_t headlen)
{
	(void)head;
	(void)headlen;
	ui_note_line(ctx, UL_NOTE, "a line of %zu bytes from the session was "
	    "skipped", bytes);
}

static const struct conn_ops ui_remote_ops = { ui_remote_line,
    ui_remote_too_long };

/* Attach: only to the session that made the socket, checked before a
 * byte of the person's goes out (peer.h). */
static int
ui_connect(struct ui *u, char *err, size_t len)
{
	int fd = peer_connect(u->opts->attach, u->name, sizeof u->name, err,
	    len);

	if (fd == -1)
		return -1;
	if (set_nonblock(fd, true) == -1) {
		close(fd);
		return err_set(err, len, "cannot attach to '%s': %s",
		    u->opts->attach, strerror(errno));
	}
	conn_init(&u->io, fd, fd, UI_MAX_LINE, opts_max_queue(u->opts));
	u->remote = true;
	/* figures' bytes with the answers, and those of the history's */
	wire_send(&u->io, json_pack("{s:s, s:b}", "event", "hello", "figures",
	    1));
	return 0;
}

json_int_t
ui_submit(struct ui *u, json_t *req, enum ui_why why)
{
	json_int_t id = ++u->next_id;
	const struct request_op *op;

	if (u->npend == (int)nitems(u->pend))
		memmove(u->pend, u->pend + 1, --u->npend * sizeof *u->pend);
	u->pend[u->npend].id = id;
	u->pend[u->npend++].why = why;
	json_object_set_new(req, "id", json_integer(id));
	ui_branch_request(u, req);
	if (u->remote) {
		wire_send(&u->io, req);
		return id;
	}
	op = request_op_find(json_string_value(json_object_get(req, "op")));
	session_submit(u->s, u->client, req, json_integer(id), op->op);
	return id;
}

/* Attached, the interrupt names us (the session's name for us, from
 * its hello): the answer of the cell it stops says a person did. */
void
ui_interrupt(struct ui *u)
{
	json_t *req;

	/* with branches, the running cell of the person's branch: the
	 * request names it (ui_submit) */
	if (u->branched) {
		req = json_pack("{s:s, s:s*}", "op", "interrupt", "by",
		    u->name[0] != '\0' ? u->name : NULL);
		ui_submit(u, req, W_NONE);
	} else if (u->remote)
		wire_send(&u->io, json_pack("{s:s, s:s*}", "op", "interrupt",
		    "by", u->name[0] != '\0' ? u->name : NULL));
	else
		session_interrupt(u->s);
}

/* The person said yes to interrupting cell seq: unless it has ended
 * meanwhile (the next cell is not what they were asked about). */
static void
ui_interrupt_yes(struct ui *u, const char *seq)
{
	if (u->running == 0 || u->running != strtoull(seq, NULL, 10)) {
		snprintf(u->note, sizeof u->note, "that cell has ended: "
		    "nothing was interrupted");
		return;
	}
	u->stopped = u->running;
	ui_interrupt(u);
	snprintf(u->note, sizeof u->note, "%s", UI_NOTE_INTERRUPTING);
}

/*
 * In a session of this UI's own every cell is the person's (or the
 * replay's they started).  Attached, the running cell may be the
 * agent's or another person's, and a Ctrl-C meant for one's own
 * typing would cost them their cell: that one is asked about first.
 */
void
ui_interrupt_running(struct ui *u)
{
	const struct ui_cell *c = NULL;
	char seq[24], *q;
	size_t i;

	for (i = 0; i < u->ncells; i++)
		if (u->cells[i].seq == u->running)
			c = &u->cells[i];
	snprintf(seq, sizeof seq, "%llu", (unsigned long long)u->running);
	if (!u->remote || u->running == u->own_run || c == NULL) {
		ui_interrupt_yes(u, seq);
		return;
	}
	xasprintf(&q, " cell %d is not yours (%s): interrupt it? (y/n) ",
	    c->cell, c->origin);
	ui_ask(u, ui_interrupt_yes, seq, q);
}

/* ---- the loop -------------------------------------------------------- */

static void
ui_keys(struct ui *u)
{
	int k;

	while (!u->quit && (k = getch()) != ERR) {
		if (k == KEY_RESIZE) {
			getmaxyx(stdscr, u->rows, u->cols);
			ui_draw(u);
			continue;
		}
		ui_key(u, k);
	}
	/* the echo of what was typed: now, not at the next frame */
	if (u->dirty && !u->lay.too_small && u->focus == F_INPUT)
		ui_draw_input(u);
}

/* One wait of at most wait_ms (-1: none) on the back end, and on the
 * keyboard when keys is set. */
static void
ui_turn(struct ui *u, bool keys, int wait_ms)
{
	static struct pollfd *pfd;
	static size_t npfd;
	int nb, rc;
	int64_t when;

	/* Once the session has ended its descriptors say nothing more
	 * (a hung-up one would wake every poll): keys alone remain. */
	nb = u->ended != NULL ? 0 : u->remote ? 2 : session_fds(u->s, NULL,
	    0);
	if ((size_t)nb + 1 > npfd) {
		npfd = (size_t)nb + 1;
		pfd = xrealloc(pfd, npfd * sizeof *pfd);
	}
	if (nb > 0 && u->remote)
		conn_pollfds(&u->io, pfd);
	else if (nb > 0)
		session_fds(u->s, pfd, nb);
	pfd[nb] = (struct pollfd){ .fd = keys ? 0 : -1, .events = POLLIN };
	if (nb > 0 && !u->remote &&
	    (when = session_next_deadline(u->s)) >= 0) {
		when -= now_ms();
		when = when < 0 ? 0 : when;
		if (wait_ms < 0 || when < wait_ms)
			wait_ms = (int)when;
	}
	rc = poll(pfd, (nfds_t)nb + 1, wait_ms);
	if (rc <= 0)
		memset(pfd, 0, ((size_t)nb + 1) * sizeof *pfd);
	if (nb == 0) {
		/* nothing of the session to read */
	} else if (u->remote) {
		if (pfd[1].revents)
			conn_flush(&u->io);
		if (pfd[0].revents)
			conn_read(&u->io, &ui_remote_ops, u);
		if (u->io.eof || conn_dropped(&u->io) != NULL)
			ui_end(u, "the connection to the session closed");
	} else if (session_run(u->s, pfd, nb) == -1) {
		ui_end(u, session_failure(u->s));
	}
	if (keys)
		ui_keys(u);
}

struct response *
ui_call(struct ui *u, json_t *req, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	struct response *r;

	u->want_id = ui_submit(u, req, W_COMPLETE);
	while (u->reply == NULL && u->ended == NULL && now_ms() < end)
		ui_turn(u, false, (int)(end - now_ms()));
	r = u->reply;
	u->reply = NULL;
	u->want_id = 0;
	return r;
}

static void
ui_loop(struct ui *u)
{
	int64_t now;
	int wait;

	ui_draw(u);
	while (!u->quit && !ui_term) {
		now = now_ms();
		if (u->running != 0 && now - u->drawn_ms >= UI_TICK_MS)
			u->dirty = true;
		/* a viewer's keeper that ended is reaped within a tick */
		wait = u->running != 0 || ui_image_reap(u) ? UI_TICK_MS : -1;
		if (u->dirty)
			wait = (int)(UI_FRAME_MS - (now - u->drawn_ms));
		ui_turn(u, true, wait < 0 && u->dirty ? 0 : wait);
		if (u->dirty && now_ms() - u->drawn_ms >= UI_FRAME_MS)
			ui_draw(u);
	}
}

/*
 * --session NAME: the UI starts on that branch, once the session has
 * said it has one (its vars, asked for by name: an unknown name is the
 * core's invalid answer, which lists the branches).  Before the
 * terminal is the UI's, so a wrong name is an error on stderr.
 */
static int
ui_on_session(struct ui *u, const char *name, char *err, size_t len)
{
	struct response *r;
	int rc = 0;

	if (strlen(name) > UI_SESSION_MAX)
		return err_set(err, len, "--session '%.64s...' is too long: a "
		    "branch's name has at most %d characters", name,
		    UI_SESSION_MAX);
	/* the history's headers, as they come, name their branches */
	u->branched = strcmp(name, "main") != 0;
	r = ui_call(u, json_pack("{s:s, s:s}", "op", "vars", "session", name),
	    30000);
	if (r == NULL)
		rc = err_set(err, len, "--session '%s': %s", name,
		    u->ended != NULL ? u->ended : "the session did not answer");
	else if (r->status != ST_OK)
		rc = err_set(err, len, "--session '%s': %s", name,
		    r->error != NULL && r->error->message != NULL ?
		    r->error->message : status_names[r->status]);
	else {
		snprintf(u->sess, sizeof u->sess, "%s", name);
		ui_set_vars(u, json_object_get(r->fields, "vars"), -1);
	}
	response_free(r);
	return rc;
}

/* --resume's report (wording_resumed), a note line each. */
static void
ui_resumed(struct ui *u)
{
	struct buf b;
	char *p, *nl;

	buf_init(&b);
	wording_resumed(session_resumed(u->s), &b);
	for (p = b.p; p != NULL && (nl = strchr(p, '\n')) != NULL;
	    p = nl + 1)
		ui_note_line(u, UL_NOTE, "%.*s", (int)(nl - p), p);
	buf_free(&b);
}

static int
ui_open(struct ui *u, char *err, size_t len)
{
	char branch[REQUEST_LABEL_MAX + 1];

	if (u->opts->attach != NULL)
		return ui_connect(u, err, len);
	u->s = session_new(u->opts, err, len);
	if (u->s == NULL)
		return -1;
	u->client = session_attach(u->s, ORIGIN_PERSON, SESSION_OBSERVE |
	    SESSION_RAW | SESSION_LIVE_BG | SESSION_INPUT, ui_local_event, u);
	/* --resume FILE: the session rebuilt, and the person told how
	 * faithfully in the output pane (stderr goes under the screen) */
	if (u->opts->resume != NULL) {
		if (replay_handover(u->opts, u->s, u->client, branch,
		    sizeof branch, err, len) == -1)
			return -1;
		ui_resumed(u);
		return 0;
	}
	/* --replay FILE --from N: the session picked up there, live
	 * (replay.h); without --from, the file stepped through */
	if (u->opts->replay != NULL && u->opts->replay_from > 0) {
		if (replay_handover(u->opts, u->s, u->client, branch,
		    sizeof branch, err, len) == -1)
			return -1;
		ui_branch_start(u, branch);	/* the person is on it */
		return 0;
	}
	return u->opts->replay != NULL ? ui_replay_open(u, err, len) : 0;
}

int
ui_main(const struct coil_opts *opts)
{
	struct ui u = { .opts = opts, .show = UI_SHOW_NS | UI_SHOW_RESULT };
	bool ui_failed = false;
	char err[512];
	int rc;

	ui_model_init(&u, (size_t)opts->scrollback);
	ui_branch_init(&u);
	buf_init(&u.cell);
	buf_init(&u.typed);
	buf_init(&u.ov);
	/* After session_new: init, forked there, keeps the defaults. */
	rc = ui_open(&u, err, sizeof err);
	if (rc == 0 && opts->session != NULL)
		rc = ui_on_session(&u, opts->session, err, sizeof err);
	if (rc == 0 && ui_signals() == -1)
		rc = err_set(err, sizeof err, "%s", strerror(errno));
	if (rc == -1) {
		coil_error("%s", err);
		if (u.s != NULL)
			session_free(u.s);
		if (u.remote)
			conn_free(&u.io);
		ui_branch_free(&u);
		ui_replay_free(&u);
		ui_model_free(&u);
		return 1;
	}
	ui_term_start(&u);
	ui_input_start(&u);
	ui_submit(&u, json_pack("{s:s}", "op", "ping"), W_PING);
	ui_submit(&u, json_pack("{s:s}", "op", "vars"), W_VARS);
	ui_loop(&u);
	ui_input_end(&u);
	ui_restore();
	if (u.remote)
		conn_free(&u.io);
	else if (session_free(u.s) == -1 && !ui_term)
		ui_failed = true;
	ui_replay_free(&u);
	ui_branch_free(&u);
	ui_model_free(&u);
	buf_free(&u.cell);
	buf_free(&u.typed);
	buf_free(&u.ov);
	free(u.ov_title);
	free(u.ended);
	free(u.ask);
	free(u.ask_arg);
	free(u.reading);
	response_free(u.reply);
	return ui_term ? 128 + ui_term : ui_failed ? 1 : 0;
}
