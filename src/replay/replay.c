/*
 * replay.c - coil --replay (see replay.h): the front end that feeds a
 * file's cells to a fresh session one at a time, prints each with its
 * new outcome and, with --check, compares it with the file's.
 *
 * One client of the session (origin "replay"), submitting a cell only
 * once the one before it is answered, so each cell meets the state the
 * recording's met.  A request is checked by request_from_json as a line
 * on stdin is: a transcript is data, not trusted.  SIGINT, SIGTERM and
 * SIGHUP end the replay through a signalfd, so the session is torn
 * down as after any end.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "options.h"
#include "replay-int.h"
#include "replay.h"
#include "session.h"
#include "termsafe.h"

/*
 * What replay prints: to a terminal made safe first (termsafe.h), since a
 * transcript is as untrusted as the cells it holds and the new run's
 * output is a cell's; to a pipe or a file as it is.  coil's own
 * messages (coil_error, coil_warn) are made safe the same way.
 */
static void
replay_put(FILE *f, const char *p, size_t n)
{
	struct buf b;

	if (!isatty(fileno(f))) {
		fwrite(p, 1, n, f);
		return;
	}
	buf_init(&b);
	termsafe_text(p, n, 0, &b);
	fwrite(b.p, 1, b.len, f);
	buf_free(&b);
}

static void
replay_vprintf(FILE *f, const char *fmt, va_list ap)
{
	char *s;
	int n;

	n = vasprintf(&s, fmt, ap);
	if (n < 0)
		fatal("out of memory");
	replay_put(f, s, (size_t)n);
	free(s);
}

/* Where replay_out prints: stdout unless a front end owns it. */
static FILE *replay_stream;

void
replay_out_to(FILE *f)
{
	replay_stream = f;
}

void
replay_out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	replay_vprintf(replay_stream != NULL ? replay_stream : stdout, fmt,
	    ap);
	va_end(ap);
}

/* The file replay_prepare opened, for replay_main. */
static struct rsrc *replay_src;

/* --resume's file: a transcript, which the session goes on in.  0, or
 * the exit status 2 with a message. */
static int
replay_prepare_resume(struct coil_opts *o)
{
	if (rsrc_kind(replay_src) != RS_TRANSCRIPT) {
		coil_error("--resume: '%s' is a %s, not a coil transcript: "
		    "--resume rebuilds a session from what --record (or an "
		    "agent or MCP session) wrote; run its cells with coil "
		    "--replay '%s'", o->resume,
		    rsrc_kind_names[rsrc_kind(replay_src)], o->resume);
		rsrc_close(replay_src);
		replay_src = NULL;
		return 2;
	}
	if (o->record == NULL && !o->no_record)
		o->record = xstrdup(o->resume);
	return 0;
}

int
replay_prepare(struct coil_opts *o)
{
	const char *path = o->resume != NULL ? o->resume : o->replay;
	char err[1024];
	struct buf warn;

	if (path == NULL)
		return 0;
	replay_src = rsrc_open(path, o->code_key, o->tool, err, sizeof err);
	if (replay_src == NULL) {
		coil_error("%s%s", o->resume != NULL ? "--resume: " : "", err);
		return 2;
	}
	if (o->resume != NULL && replay_prepare_resume(o) != 0)
		return 2;
	if (rsrc_options(replay_src) != NULL) {
		buf_init(&warn);
		buf_addstr(&warn, "");
		options_replay(o, rsrc_options(replay_src), &warn);
		if (warn.len > 0) {
			/* each line of it a warning */
			char *p, *nl;

			for (p = warn.p; (nl = strchr(p, '\n')) != NULL;
			    p = nl + 1)
				coil_warn("%.*s",
				    (int)(nl - p), p);
		}
		buf_free(&warn);
	}
	return replay_fork_prepare(o);
}

void
replay_on_event(void *ctx, const struct session_event *ev)
{
	struct replay *rp = ctx;
	json_t *line;

	/* (an observer, with --from: every client's events come) */
	if (ev->kind == EV_RESPONSE && ev->seq == rp->seq && rp->resp == NULL)
		rp->resp = response_ref(ev->resp);
	/* The cell reads a line: the recording's next, then the end of
	 * input (EOFError, as when nobody answers). */
	if (ev->kind == EV_INPUT && ev->client == rp->client) {
		line = json_array_get(rp->lines, rp->nline++);
		session_input(rp->s, json_string_value(line));
	}
}

struct rsrc *
replay_take(void)
{
	struct rsrc *src = replay_src;

	replay_src = NULL;
	return src;
}

int
replay_request(const struct rcell *c, json_t **req, int *op, char *err,
    size_t errlen)
{
	json_t *id, *t;
	enum op o;
	bool none;
	int rc;

	json_object_del(c->req, "id");
	/* A terminal's cell had no deadline: "timeout": 0, which only the
	 * REPL and the UI may ask for (a line of the agent's may not). */
	t = json_object_get(c->req, "timeout");
	none = json_is_number(t) && json_number_value(t) == 0;
	if (none)
		json_object_del(c->req, "timeout");
	rc = request_from_json(json_deep_copy(c->req), req, &id, &o, err,
	    errlen);
	json_decref(id);
	if (rc == 0 && none)
		json_object_set_new(*req, "timeout", json_integer(0));
	/* nbclient runs a notebook with allow_stdin=False: its input()
	 * raised StdinNotImplementedError, not coil's EOFError (the
	 * session hands this to the worker for a replay's cells only) */
	if (rc == 0 && c->notebook && o == OP_EXEC)
		json_object_set_new(*req, "stdin", json_string("notebook"));
	*op = (int)o;
	return rc;
}

/* Submit c's request as if it were a line on stdin: 0, or -1 when the
 * file's request is not one (it is skipped, said). */
static int
replay_submit(struct replay *rp, const struct rcell *c)
{
	char err[512];
	json_t *req;
	int op;

	if (replay_request(c, &req, &op, err, sizeof err) == -1) {
		snprintf(rp->why, sizeof rp->why, "%s", err);
		replay_out("cell %d: skipped: %s\n", c->n, err);
		rp->skipped++;
		return -1;
	}
	rp->lines = c->lines;
	rp->nline = 0;
	if (rp->on != NULL)
		json_object_set_new(req, "session", json_string(rp->on));
	if (c->lines != NULL)
		json_object_set_new(req, "input", json_true());
	rp->seq = session_submit(rp->s, rp->client, req, json_integer(c->n),
	    (enum op)op);
	return 0;
}

/* Run the session until the answer comes: 0, or -1 when the session
 * failed or a signal came. */
int
replay_wait(struct replay *rp)
{
	struct pollfd sig = { .fd = rp->sfd, .events = POLLIN };
	struct signalfd_siginfo si;
	int64_t left;

	while (rp->resp == NULL) {
		left = rp->interrupt_at > 0 ? rp->interrupt_at - now_ms() : -1;
		if (rp->interrupt_at > 0 && left <= 0) {
			session_interrupt(rp->s);
			rp->interrupt_at = 0;
			continue;
		}
		if (session_poll(rp->s, &sig, 1, left > INT_MAX ? INT_MAX :
		    (int)left) == -1) {
			coil_error("%s", session_failure(rp->s));
			return -1;
		}
		if ((sig.revents & POLLIN) &&
		    read(rp->sfd, &si, sizeof si) == sizeof si) {
			rp->signo = (int)si.ssi_signo;
			return -1;
		}
	}
	return 0;
}

/* Each line of text after prefix (then blanks as wide), or nothing. */
static void
replay_lines(const char *prefix, const char *text)
{
	const char *p = text, *nl;
	int w = (int)strlen(prefix);

	for (; p != NULL && *p != '\0'; p = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		replay_out("%-*s%.*s\n", w, p == text ? prefix : "",
		    nl != NULL ? (int)(nl - p) : (int)strlen(p), p);
	}
}

void
replay_print(const struct rcell *c, json_t *got)
{
	json_t *err = json_object_get(got, "error");
	const char *st = json_string_value(json_object_get(got, "status")),
	    *op = json_string_value(json_object_get(c->req, "op")),
	    *code = json_string_value(json_object_get(c->req, "code"));
	char in[32];

	snprintf(in, sizeof in, "In [%d]: ", c->n);
	if (op != NULL && strcmp(op, "exec") != 0) {
		replay_out("[%s: %s]\n\n", op, st);
		return;
	}
	replay_lines(in, code != NULL && *code != '\0' ? code : "\n");
	replay_out("%s%s", json_string_value(json_object_get(got,
	    "output")) ?: "", json_string_value(json_object_get(got,
	    "stderr")) ?: "");
	if (json_is_string(json_object_get(got, "result"))) {
		snprintf(in, sizeof in, "Out[%d]: ", c->n);
		replay_lines(in, json_string_value(json_object_get(got,
		    "result")));
	}
	if (json_is_object(err))
		replay_out("%s: %s\n", json_string_value(json_object_get(err,
		    "type")), json_string_value(json_object_get(err,
		    "message")));
	if (st != NULL && strcmp(st, "ok") != 0 && strcmp(st, "error") != 0)
		replay_out("[%s]\n", st);
	replay_put(stdout, "\n", 1);
}

bool
replay_check(struct replay *rp, const struct rcell *c, json_t *got)
{
	struct buf was, now, diff;
	char la[64], lb[64];
	bool differ;

	if (c->expect == NULL || !json_is_object(c->expect))
		return false;
	buf_init(&was);
	buf_init(&now);
	buf_init(&diff);
	buf_addstr(&was, "");
	buf_addstr(&now, "");
	check_view(&rp->noise, c->expect, c->expect, &was);
	check_view(&rp->noise, c->expect, got, &now);
	snprintf(la, sizeof la, "cell %d recorded", c->n);
	snprintf(lb, sizeof lb, "cell %d replayed", c->n);
	if ((differ = check_diff(was.p, now.p, la, lb, &diff))) {
		rp->differ++;
		replay_out("cell %d%s%s differs:\n%s\n", c->n, rp->on != NULL ?
		    " on " : "", rp->on != NULL ? rp->on : "", diff.p);
	}
	buf_free(&was);
	buf_free(&now);
	buf_free(&diff);
	return differ;
}

/* Pin the state c left as the snapshot c->pin, which a rollback later
 * in the file goes back to: said only when it cannot be.  -1 when the
 * replay must stop. */
static int
replay_pin(struct replay *rp, const struct rcell *c)
{
	struct rcell pin = { .n = c->n };
	json_t *got, *err;
	char why[512];
	json_t *req;
	int op;

	pin.req = json_pack("{s:s, s:s}", "op", "snapshot", "name", c->pin);
	if (rp->on != NULL)
		json_object_set_new(pin.req, "session", json_string(rp->on));
	if (replay_request(&pin, &req, &op, why, sizeof why) == -1) {
		replay_out("cell %d: its state cannot be kept for the rollback "
		    "after it: %s\n", c->n, why);
		rcell_clear(&pin);
		return 0;
	}
	rcell_clear(&pin);
	rp->seq = session_submit(rp->s, rp->client, req, json_integer(c->n),
	    (enum op)op);
	if (replay_wait(rp) == -1)
		return -1;
	got = response_json(rp->resp, 0);
	response_free(rp->resp);
	rp->resp = NULL;
	err = json_object_get(got, "error");
	if (strcmp(json_string_value(json_object_get(got, "status")) ?: "",
	    "ok") != 0)
		replay_out("cell %d: its state could not be kept for the "
		    "rollback after it: %s\n\n", c->n, json_string_value(
		    json_object_get(err, "message")) ?: "no reason given");
	json_decref(got);
	return 0;
}

int
replay_run(struct replay *rp, const struct rcell *c, json_t **got)
{
	*got = NULL;
	if (replay_submit(rp, c) == -1)
		return 0;
	/* From the submit, as near its start as we know: the recorded
	 * duration is from the cell's start. */
	rp->interrupt_at = c->interrupted ? now_ms() + 1 +
	    (int64_t)c->interrupt_ms : 0;
	if (replay_wait(rp) == -1)
		return -1;
	*got = response_json(rp->resp, 0);
	response_free(rp->resp);
	rp->resp = NULL;
	rp->cells++;
	if (c->pin != NULL && replay_pin(rp, c) == -1) {
		json_decref(*got);
		*got = NULL;
		return -1;
	}
	return 1;
}

/* One cell: run, print, check.  -1 when the replay must stop. */
static int
replay_cell(struct replay *rp, const struct rcell *c)
{
	json_t *got;
	int rc;

	if ((rc = replay_run(rp, c, &got)) != 1)
		return rc;
	replay_print(c, got);
	if (rp->opts->check)
		replay_check(rp, c, got);
	fflush(stdout);
	json_decref(got);
	return 0;
}

/* Every cell of the file; the exit status. */
static int
replay_all(struct replay *rp)
{
	struct rcell c = { 0 };
	char err[1024];
	int rc;

	while ((rc = rsrc_next(replay_src, &c, err, sizeof err)) == 1) {
		if (replay_cell(rp, &c) == -1) {
			rcell_clear(&c);
			return rp->signo != 0 ? 128 + rp->signo : 1;
		}
		rcell_clear(&c);
	}
	if (rsrc_note(replay_src) != NULL)
		coil_warn("%s", rsrc_note(replay_src));
	if (rp->opts->check)
		replay_out("%d cell%s replayed from %s (%s), %d differ%s, "
		    "%d skipped\n", rp->cells, rp->cells == 1 ? "" : "s",
		    rp->opts->replay, rsrc_kind_names[rsrc_kind(replay_src)],
		    rp->differ, rp->differ == 1 ? "s" : "", rp->skipped);
	if (rc == -1) {
		coil_error("%s", err);
		return 2;
	}
	/* Not every cell ran: a skipped one is no match either. */
	return rp->differ > 0 || rp->skipped > 0 ? 1 : 0;
}

int
replay_signals(sigset_t *old)
{
	sigset_t set;
	int fd, e;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, old) == -1)
		return -1;
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1) {
		/* the mask goes back as it was: nobody reads the signals */
		e = errno;
		if (old != NULL)
			sigprocmask(SIG_SETMASK, old, NULL);
		errno = e;
	}
	return fd;
}

int
replay_main(const struct coil_opts *opts)
{
	struct replay rp = { .opts = opts };
	char err[512];
	int rc = 1;

	if (check_noise_init(&rp.noise, opts->ignore, err, sizeof err) == -1) {
		coil_error("%s", err);
		rsrc_close(replay_src);
		return 2;
	}
	if ((rp.sfd = replay_signals(NULL)) == -1)
		coil_error("signalfd: %s", strerror(errno));
	else if ((rp.s = session_new(opts, err, sizeof err)) == NULL)
		coil_error("%s", err);
	else {
		rp.client = session_attach(rp.s, ORIGIN_REPLAY, 0,
		    replay_on_event, &rp);
		rc = opts->replay_from > 0 ? replay_fork_check(&rp) :
		    replay_all(&rp);
		if (session_free(rp.s) == -1 && rc == 0)
			rc = 1;
	}
	if (rp.sfd >= 0)
		close(rp.sfd);
	check_noise_free(&rp.noise);
	rsrc_close(replay_src);
	replay_src = NULL;
	return rc;
}
