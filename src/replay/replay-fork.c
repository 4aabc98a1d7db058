/*
 * replay-fork.c - coil --replay FILE --from N (see replay.h): a run
 * picked up where it went wrong.
 *
 * The file's cells run on main, one at a time, up to and with its Nth
 * code cell ("exec"; the snapshots, rollbacks and resets among them run
 * too, as in any replay), and each must end as it was recorded (with
 * the recorded status; "ok" where nothing was recorded): a fork point
 * that is not the recording's is no place to pick a run up.  Then
 * main forks a branch (the fork op of the session), --then's cells
 * run on the branch, and either the front end takes the session over
 * with the branch as its client's default (replay_handover), or, with
 * --check, the file's cells after N run on main and the two
 * continuations are compared, with their recordings and with each other
 * (replay_fork_check).
 *
 * --then FILE2 holds only the cells to run after cell N, not a second
 * recording from the start: a notebook or a "# %%" file of new
 * cells is what a person writes to try another way, or a transcript
 * of such cells.  A FILE2 that
 * begins with FILE's first N cells is taken for a whole recording and
 * refused, saying so.
 *
 * Nothing here is printed on stdout while a front end takes the session
 * over (it may be the JSON channel): notes and errors go to stderr.
 * Supervisor only; the cells run in the session's sandboxed workers.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay-int.h"
#include "replay.h"

/* FILE2, opened by replay_fork_prepare. */
static struct rsrc *fork_then;

int
replay_fork_prepare(const struct coil_opts *o)
{
	char err[1024];

	if (o->replay_then == NULL)
		return 0;
	fork_then = rsrc_open(o->replay_then, o->code_key, o->tool, err,
	    sizeof err);
	if (fork_then == NULL) {
		coil_error("--then: %s", err);
		return 2;
	}
	return 0;
}

/* A code cell (the op that --from counts), not a snapshot, rollback
 * or reset. */
static bool
fork_is_code(const struct rcell *c)
{
	const char *op = json_string_value(json_object_get(c->req, "op"));

	return op == NULL || strcmp(op, "exec") == 0;
}

static const char *
fork_code(const struct rcell *c)
{
	return json_string_value(json_object_get(c->req, "code")) ?: "";
}

/* A continuation's answer got to c (stolen), kept for the comparison
 * of the two when c is a code cell. */
static void
fork_keep(json_t *answers, const struct rcell *c, json_t *got)
{
	if (!fork_is_code(c)) {
		json_decref(got);
		return;
	}
	json_array_append_new(answers, json_pack("{s:i, s:s, s:o}", "n",
	    c->n, "code", fork_code(c), "got", got));
}

/* Whether got ended as c was recorded to; if not, how, in words. */
static bool
fork_as_recorded(const struct rcell *c, json_t *got, char *how,
    size_t len)
{
	const char *st = json_string_value(json_object_get(got, "status")),
	    *want = json_string_value(json_object_get(c->expect, "status"));
	json_t *e = json_object_get(got, "error");

	if (st == NULL)
		st = "?";
	if (strcmp(st, want != NULL ? want : "ok") == 0)
		return true;
	snprintf(how, len, "ended '%s'%s%s%s%s%s where %s '%s'", st,
	    json_is_object(e) ? " (" : "",
	    json_string_value(json_object_get(e, "type")) ?: "",
	    json_is_object(e) ? ": " : "",
	    json_string_value(json_object_get(e, "message")) ?: "",
	    json_is_object(e) ? ")" : "", want != NULL ?
	    "the recording says" : "a cell with nothing recorded must end",
	    want != NULL ? want : "ok");
	return false;
}

/* Why the replay stopped, once replay_run or replay_wait said -1. */
static int
fork_stopped(const struct replay *rp, char *err, size_t errlen)
{
	if (rp->signo != 0)
		return err_set(err, errlen, "stopped by signal %d before the "
		    "session was handed over", rp->signo);
	return err_set(err, errlen, "the session failed before the fork "
	    "point: %s", session_failure(rp->s) ?: "no reason given");
}

/*
 * FILE's cells on main up to and with its nth code cell, each ending as
 * recorded (print: each printed and checked, as --check's replay does).
 * The code of each code cell is kept in *codes (a new array), to tell a
 * whole recording given as --then.  0, or -1 with why in err.
 */
static int
fork_prefix(struct replay *rp, struct rsrc *src, int n, bool print,
    json_t **codes, char *err, size_t errlen)
{
	const char *path = rp->opts->replay;
	struct rcell c = { 0 };
	char why[1024], how[1024];
	json_t *got;
	int rc;

	*codes = json_array();
	while ((int)json_array_size(*codes) < n) {
		if ((rc = rsrc_next(src, &c, why, sizeof why)) == -1)
			return err_set(err, errlen, "%s", why);
		if (rc == 0) {
			int had = (int)json_array_size(*codes);

			if (had == 0)
				return err_set(err, errlen, "--from %d is past "
				    "the end of '%s': it has no cell to run",
				    n, path);
			return err_set(err, errlen, "--from %d is past the end "
			    "of '%s': it has %d cell%s to run; give --from %d "
			    "or less", n, path, had, had == 1 ? "" : "s", had);
		}
		if (fork_is_code(&c))
			json_array_append_new(*codes,
			    json_string(fork_code(&c)));
		if ((rc = replay_run(rp, &c, &got)) == -1) {
			rcell_clear(&c);
			return fork_stopped(rp, err, errlen);
		}
		if (rc == 0) {
			err_set(err, errlen, "cell %d of '%s' (line %d) is no "
			    "request coil runs (%s): no branch was made; "
			    "give --from %d to fork before it", c.n, path,
			    c.line, rp->why, (int)json_array_size(*codes) - 1);
			rcell_clear(&c);
			return -1;
		}
		if (print) {
			replay_print(&c, got);
			replay_check(rp, &c, got);
		}
		if (!fork_as_recorded(&c, got, how, sizeof how)) {
			err_set(err, errlen, "cell %d of '%s' (line %d) %s: no "
			    "branch was made at cell %d, since the state there "
			    "is not the recording's; see how the cells differ "
			    "with coil --replay '%s' --check", c.n, path,
			    c.line, how, n, path);
			json_decref(got);
			rcell_clear(&c);
			return -1;
		}
		json_decref(got);
		rcell_clear(&c);
	}
	return 0;
}

/* Whether FILE2's code cells so far (c the newest, *i of them matched)
 * are FILE's first N (codes) again: FILE2 is then a whole recording,
 * and --then takes only the cells after the fork point.  Once one
 * differs, *i is past N for good. */
static bool
fork_then_repeats(json_t *codes, const struct rcell *c, size_t *i)
{
	if (!fork_is_code(c))
		return false;
	if (*i < json_array_size(codes) && strcmp(fork_code(c),
	    json_string_value(json_array_get(codes, *i))) == 0)
		(*i)++;
	else
		*i = json_array_size(codes) + 1;	/* differs: done */
	return *i == json_array_size(codes);
}

/* The answer to req (a new object, op fork) submitted by client (its
 * answer watched by rp, an observer), or NULL with why. */
static json_t *
fork_op(struct replay *rp, int client, json_t *ask, char *err,
    size_t errlen)
{
	struct rcell r = { .req = ask };
	char why[512];
	json_t *req, *got, *e;
	int op;

	if (replay_request(&r, &req, &op, why, sizeof why) == -1) {
		err_set(err, errlen, "%s", why);
		rcell_clear(&r);
		return NULL;
	}
	rcell_clear(&r);
	rp->seq = session_submit(rp->s, client, req, json_string(
	    "replay-from"), (enum op)op);
	if (replay_wait(rp) == -1) {
		fork_stopped(rp, err, errlen);
		return NULL;
	}
	got = response_json(rp->resp, 0);
	response_free(rp->resp);
	rp->resp = NULL;
	if (strcmp(json_string_value(json_object_get(got, "status")) ?: "",
	    "ok") == 0)
		return got;
	e = json_object_get(got, "error");
	err_set(err, errlen, "%s", json_string_value(json_object_get(e,
	    "message")) ?: "no reason given");
	json_decref(got);
	return NULL;
}

/* Fork main after cell n: the branch's name (a new string), or NULL
 * with why. */
static char *
fork_branch(struct replay *rp, int n, char *err, size_t errlen)
{
	char why[512];
	json_t *got;
	const char *name;
	char *r;

	got = fork_op(rp, rp->client, json_pack("{s:s}", "op", "fork"), why,
	    sizeof why);
	if (got == NULL) {
		err_set(err, errlen, "cannot fork after cell %d of '%s': %s",
		    n, rp->opts->replay, why);
		return NULL;
	}
	name = json_string_value(json_array_get(json_object_get(got,
	    "sessions"), 0));
	if (name == NULL) {
		err_set(err, errlen, "cannot fork after cell %d of '%s': the "
		    "answer names no branch", n, rp->opts->replay);
		json_decref(got);
		return NULL;
	}
	r = xstrdup(name);
	json_decref(got);
	return r;
}

/*
 * FILE2's cells on the branch (rp->on): each printed and checked when
 * print, its answer kept in *answers (code cells only, a new array of
 * {"n", "code", "got"}).  first: FILE's first N codes, to refuse a
 * whole recording.  0, or -1 with why.
 */
static int
fork_then_cells(struct replay *rp, int from, json_t *first, bool print,
    json_t **answers, int *failed, char *err, size_t errlen)
{
	const char *path = rp->opts->replay_then;
	struct rcell c = { 0 };
	char why[1024], how[1024];
	json_t *got;
	size_t same = 0;
	int rc, k = 0;

	*answers = json_array();
	while ((rc = rsrc_next(fork_then, &c, why, sizeof why)) == 1) {
		if (fork_then_repeats(first, &c, &same)) {
			err_set(err, errlen, "'%s' begins with the %d cells of "
			    "'%s' before the fork point: --then takes only "
			    "the cells to run after cell %d (a file of new "
			    "cells), not a second recording from the start",
			    path, from,
			    rp->opts->replay, from);
			rcell_clear(&c);
			return -1;
		}
		/* Numbered as the branch's cells are: on from the fork. */
		if (fork_is_code(&c))
			c.n = from + ++k;
		if ((rc = replay_run(rp, &c, &got)) == -1) {
			rcell_clear(&c);
			return fork_stopped(rp, err, errlen);
		}
		if (rc == 1 && print) {
			replay_print(&c, got);
			replay_check(rp, &c, got);
		}
		if (rc == 1 && !print && !fork_as_recorded(&c, got, how,
		    sizeof how)) {
			coil_warn("--then: cell %d of '%s' (line %d) %s; the "
			    "branch goes on from there", c.n, path, c.line,
			    how);
			(*failed)++;
		}
		if (rc == 1)
			fork_keep(*answers, &c, got);
		rcell_clear(&c);
	}
	if (rc == -1)
		return err_set(err, errlen, "%s", why);
	if (rsrc_note(fork_then) != NULL)
		coil_warn("%s", rsrc_note(fork_then));
	return 0;
}

int
replay_handover(const struct coil_opts *o, struct session *s, int client,
    char *bname, size_t blen, char *err, size_t errlen)
{
	struct replay rp = { .opts = o, .s = s, .sfd = -1 };
	struct rsrc *src;
	json_t *first = NULL, *answers = NULL;
	char *branch = NULL;
	sigset_t old;
	int rc = -1, failed = 0;

	if (blen > 0)
		bname[0] = '\0';
	if (o->resume != NULL)
		return replay_resume(o, s, err, errlen);
	if (o->replay_from == 0)
		return 0;
	src = replay_take();
	/* The front end's own signals are not yet served: ours end the
	 * replay, and the mask goes back as it was after. */
	if ((rp.sfd = replay_signals(&old)) == -1) {
		err_set(err, errlen, "signalfd: %s", strerror(errno));
		goto out;
	}
	/* An observer, to see the answers to its requests */
	rp.client = session_attach(s, ORIGIN_REPLAY, SESSION_OBSERVE |
	    SESSION_NO_NS, replay_on_event, &rp);
	replay_out_to(stderr);
	if (fork_prefix(&rp, src, o->replay_from, false, &first, err,
	    errlen) == -1)
		goto out;
	if ((branch = fork_branch(&rp, o->replay_from, err, errlen)) == NULL)
		goto out;
	rp.on = branch;
	if (fork_then != NULL && fork_then_cells(&rp, o->replay_from, first,
	    false, &answers, &failed, err, errlen) == -1)
		goto out;
	rp.on = NULL;
	/* the branch is the front end's client's now, as an adopt would
	 * make it, with no answer nobody asked for */
	if (session_set_home(s, client, branch) == -1) {
		err_set(err, errlen, "cannot hand branch '%s' over: it is "
		    "gone", branch);
		goto out;
	}
	snprintf(bname, blen, "%s", branch);
	coil_note("replayed '%s' to cell %d on main, which keeps that state; "
	    "forked '%s' there%s%s%s, and you are on '%s'", o->replay,
	    o->replay_from, branch, fork_then != NULL ? " and ran the cells "
	    "of '" : "", fork_then != NULL ? o->replay_then : "",
	    fork_then != NULL ? (failed > 0 ? "' on it (some did not end "
	    "as recorded)" : "' on it") : "", branch);
	rc = 0;
out:
	session_detach(s, rp.client);
	replay_out_to(stdout);
	if (rp.sfd >= 0) {
		close(rp.sfd);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	response_free(rp.resp);
	json_decref(first);
	json_decref(answers);
	free(branch);
	rsrc_close(src);
	rsrc_close(fork_then);
	fork_then = NULL;
	return rc;
}

/* FILE's cells after the fork point on main, printed and checked: their
 * answers as fork_then_cells keeps them.  0, or -1 with why. */
static int
fork_main_cells(struct replay *rp, struct rsrc *src, json_t **answers,
    char *err, size_t errlen)
{
	struct rcell c = { 0 };
	char why[1024];
	json_t *got;
	int rc;

	*answers = json_array();
	while ((rc = rsrc_next(src, &c, why, sizeof why)) == 1) {
		if ((rc = replay_run(rp, &c, &got)) == -1) {
			rcell_clear(&c);
			return fork_stopped(rp, err, errlen);
		}
		if (rc == 1) {
			replay_print(&c, got);
			replay_check(rp, &c, got);
		}
		if (rc == 1)
			fork_keep(*answers, &c, got);
		rcell_clear(&c);
	}
	if (rc == -1)
		return err_set(err, errlen, "%s", why);
	if (rsrc_note(src) != NULL)
		coil_warn("%s", rsrc_note(src));
	return 0;
}

/* One continuation's answer as lines to compare: its code, then what
 * --check compares of any cell. */
static void
fork_view(struct replay *rp, json_t *a, struct buf *out)
{
	json_t *fields = json_pack("{s:n, s:n, s:n, s:n, s:n}", "status",
	    "output", "stderr", "result", "error");
	const char *p, *nl;

	buf_addstr(out, "");
	for (p = json_string_value(json_object_get(a, "code")); p != NULL &&
	    *p != '\0'; p = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		buf_printf(out, "code: %.*s\n", nl != NULL ? (int)(nl - p) :
		    (int)strlen(p), p);
	}
	check_view(&rp->noise, fields, json_object_get(a, "got"), out);
	json_decref(fields);
}

/* The two continuations side by side, cell by cell: the number of
 * places they differ. */
static int
fork_compare(struct replay *rp, const char *branch, json_t *on_main,
    json_t *on_branch)
{
	size_t i, n = json_array_size(on_main), m = json_array_size(on_branch);
	struct buf a, b, diff;
	char la[96], lb[96];
	int differ = 0;

	replay_out("after cell %d: main ran %zu cell%s of '%s', '%s' ran %zu "
	    "of '%s'\n", rp->opts->replay_from, n, n == 1 ? "" : "s",
	    rp->opts->replay, branch, m, rp->opts->replay_then);
	for (i = 0; i < n || i < m; i++) {
		json_t *x = json_array_get(on_main, i),
		    *y = json_array_get(on_branch, i);
		int at = rp->opts->replay_from + (int)i + 1;

		if (x == NULL || y == NULL) {
			replay_out("cell %d: only %s ran one\n", at, x != NULL ?
			    "main" : branch);
			differ++;
			continue;
		}
		buf_init(&a);
		buf_init(&b);
		buf_init(&diff);
		fork_view(rp, x, &a);
		fork_view(rp, y, &b);
		snprintf(la, sizeof la, "cell %d on main", at);
		snprintf(lb, sizeof lb, "cell %d on %s", at, branch);
		if (check_diff(a.p, b.p, la, lb, &diff)) {
			differ++;
			replay_out("cell %d: main and %s differ:\n%s\n", at,
			    branch, diff.p);
		} else {
			replay_out("cell %d: the same on main and %s\n", at,
			    branch);
		}
		buf_free(&a);
		buf_free(&b);
		buf_free(&diff);
	}
	return differ;
}

int
replay_fork_check(struct replay *rp)
{
	const struct coil_opts *o = rp->opts;
	struct rsrc *src = replay_take();
	json_t *first = NULL, *on_main = NULL, *on_branch = NULL;
	char *branch = NULL, err[2048];
	int rc = 2, failed = 0, between, recorded;

	if (fork_prefix(rp, src, o->replay_from, true, &first, err,
	    sizeof err) == -1) {
		coil_error("%s", err);
		rc = rp->signo != 0 ? 128 + rp->signo : 1;
		goto out;
	}
	if ((branch = fork_branch(rp, o->replay_from, err,
	    sizeof err)) == NULL) {
		coil_error("%s", err);
		rc = rp->signo != 0 ? 128 + rp->signo : 1;
		goto out;
	}
	replay_out("--- main: '%s' after cell %d\n\n", o->replay,
	    o->replay_from);
	if (fork_main_cells(rp, src, &on_main, err, sizeof err) == -1)
		goto fail;
	replay_out("--- %s: '%s' from cell %d\n\n", branch, o->replay_then,
	    o->replay_from);
	rp->on = branch;
	if (fork_then_cells(rp, o->replay_from, first, true, &on_branch,
	    &failed, err, sizeof err) == -1)
		goto fail;
	rp->on = NULL;
	replay_out("--- the two continuations\n\n");
	between = fork_compare(rp, branch, on_main, on_branch);
	recorded = rp->differ;
	replay_out("%d cell%s replayed (%d on main, %zu on %s), %d differ%s "
	    "from their recordings, %d skipped; the continuations differ at "
	    "%d of %zu cells\n", rp->cells, rp->cells == 1 ? "" : "s",
	    rp->cells - (int)json_array_size(on_branch),
	    json_array_size(on_branch), branch, recorded,
	    recorded == 1 ? "s" : "", rp->skipped, between,
	    json_array_size(on_main) > json_array_size(on_branch) ?
	    json_array_size(on_main) : json_array_size(on_branch));
	rc = recorded > 0 || rp->skipped > 0 ? 1 : 0;
	goto out;
fail:
	coil_error("%s", err);
	rc = rp->signo != 0 ? 128 + rp->signo : 2;
out:
	fflush(stdout);
	json_decref(first);
	json_decref(on_main);
	json_decref(on_branch);
	free(branch);
	rsrc_close(src);
	rsrc_close(fork_then);
	fork_then = NULL;
	return rc;
}
