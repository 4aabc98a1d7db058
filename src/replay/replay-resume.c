/*
 * replay-resume.c - coil --resume FILE (see replay.h): a session
 * rebuilt from its transcript, then served live by the front end.
 *
 * The front end makes its session and attaches its client; then every
 * cell of the transcript that may be run twice runs again on main, in
 * order, as one client of origin "replay" submitting one request at a
 * time (replay.c's), and each answer is compared with the recorded one
 * as --replay --check compares (check.h).  Which may be run twice is
 * crash recovery's rule (check_once): not a cell that read input, was
 * stopped part way (interrupted, past its timeout, crashed), or did
 * something outside the namespace its effects list (a file written or
 * deleted, a process started, a connection).  Such a cell is not run
 * again, and is reported with why; the cells after it still run, and
 * what they then answer differently is reported as well.  With
 * --resume-all (a session moved to a machine where its files must be
 * made again) such cells run again all the same, listed in
 * "rerun_anyway".  A transcript holds every response's effects (they
 * appear in an answer whenever there are any) and the lines a cell's
 * input() was given, so the rule needs nothing it lacks; a request it
 * holds no answer to (coil was killed first) is not run again either,
 * and one written by another coil or in another venv is said in a
 * note.
 *
 * Main's cells keep the transcript's numbers (session_count_from), so
 * the cells after a resume go on from the last recorded one, and the
 * report ("resumed", built here, worded by wording_resumed) goes to the
 * session: ping and the front ends give it, and the transcript, held
 * while the cells ran again (they are in it already), marks the resume
 * with it and records on.  Notes and errors go to stderr: stdout may
 * be the JSON channel.  Supervisor only; the cells run in the
 * session's sandboxed worker.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay-int.h"
#include "replay.h"
#include "wording.h"

/* What the report lists, as the rebuild goes. */
struct resume {
	struct replay rp;
	json_t *differs, *not_rerun, *errors, *notes;
	json_t *anyway;		/* --resume-all: run again all the same */
	int cells, same;
};

/* Where c is, for a list of the report: its cell number when it is an
 * exec cell, its op otherwise; its line in the file. */
static json_t *
resume_where(const struct rcell *c)
{
	const char *op = json_string_value(json_object_get(c->req, "op"));

	if (op == NULL || strcmp(op, "exec") == 0)
		return json_pack("{s:i, s:i}", "cell", c->n, "line", c->line);
	return json_pack("{s:s, s:i}", "op", op, "line", c->line);
}

/* got compared with what c recorded, as --check compares: counted the
 * same, or listed with the first line that differs. */
static void
resume_compare(struct resume *rs, const struct rcell *c, json_t *got)
{
	struct buf was, now;
	json_t *d;

	if (!json_is_object(c->expect))
		return;
	buf_init(&was);
	buf_init(&now);
	buf_addstr(&was, "");
	buf_addstr(&now, "");
	check_view(&rs->rp.noise, c->expect, c->expect, &was);
	check_view(&rs->rp.noise, c->expect, got, &now);
	if (strcmp(was.p, now.p) == 0) {
		rs->same++;
	} else {
		d = resume_where(c);
		json_object_set_new(d, "first", check_first_diff(was.p,
		    now.p));
		json_array_append_new(rs->differs, d);
	}
	buf_free(&was);
	buf_free(&now);
}

/* One cell of the file: run again and compared, or reported as not
 * run again.  0, or -1 when the rebuild must stop (a signal, the
 * session failed). */
static int
resume_cell(struct resume *rs, const struct rcell *c)
{
	const char *op = json_string_value(json_object_get(c->req, "op"));
	bool exec = op == NULL || strcmp(op, "exec") == 0,
	    on_main = json_object_get(c->req, "session") == NULL;
	char why[256];
	json_t *got, *v;
	int rc;

	if (exec) {
		rs->cells++;
		check_once(json_string_value(json_object_get(c->expect,
		    "status")), c->effects, (unsigned long long)
		    c->effects_more, c->lines != NULL, why, sizeof why);
		if (why[0] != '\0') {
			v = resume_where(c);
			json_object_set_new(v, "why", json_string(why));
			json_array_append_new(rs->rp.opts->resume_all ?
			    rs->anyway : rs->not_rerun, v);
		}
		if (why[0] != '\0' && !rs->rp.opts->resume_all) {
			if (on_main)
				session_count_from(rs->rp.s, c->n);
			return 0;
		}
		if (on_main)
			session_count_from(rs->rp.s, c->n - 1);
	}
	if ((rc = replay_run(&rs->rp, c, &got)) == -1)
		return -1;
	if (rc == 0) {
		/* not a request coil takes (replay_run said why) */
		v = resume_where(c);
		json_object_set_new(v, "message", json_string(rs->rp.why));
		json_array_append_new(rs->errors, v);
		return 0;
	}
	resume_compare(rs, c, got);
	json_decref(got);
	return 0;
}

/* The requests the file has no answer to: coil was killed before it
 * answered, perhaps under the cell, which then stopped part way. */
static void
resume_unanswered(struct resume *rs, struct rsrc *src)
{
	json_t *list = json_array(), *v;
	size_t i;

	rsrc_unanswered(src, list);
	json_array_foreach(list, i, v) {
		if (strcmp(json_string_value(json_object_get(v, "op")),
		    "exec") == 0)
			rs->cells++;
		json_object_set_new(v, "why", json_string("no answer was "
		    "recorded: coil ended before it answered, perhaps part "
		    "way through it"));
		json_array_append(rs->not_rerun, v);
	}
	json_decref(list);
}

/* The notes on the file itself: another coil wrote it, or for another
 * venv, or its last line was cut short. */
static void
resume_notes(struct resume *rs, struct rsrc *src)
{
	json_t *h = rsrc_first_header(src), *venv = json_object_get(h,
	    "venv");
	const char *coil = json_string_value(json_object_get(h, "coil")),
	    *now = rs->rp.opts->sbx.venv;

	if (coil != NULL && strcmp(coil, PACKAGE_VERSION) != 0)
		json_array_append_new(rs->notes, json_sprintf("the transcript "
		    "was written by coil %s, this is coil %s: answers may "
		    "differ for that alone", coil, PACKAGE_VERSION));
	if (json_is_string(venv) && (now == NULL || strcmp(now,
	    json_string_value(venv)) != 0))
		json_array_append_new(rs->notes, json_sprintf("the transcript "
		    "ran in the venv '%s', this session in %s%s%s: give --venv "
		    "'%s' to rebuild it there", json_string_value(venv),
		    now != NULL ? "'" : "", now != NULL ? now : "none",
		    now != NULL ? "'" : "", json_string_value(venv)));
	if (json_is_null(venv) && now != NULL)
		json_array_append_new(rs->notes, json_sprintf("the transcript "
		    "ran without a venv, this session in '%s'", now));
	if (rsrc_note(src) != NULL)
		json_array_append_new(rs->notes, json_string(rsrc_note(src)));
}

/* The report, from what the rebuild found (a new object). */
static json_t *
resume_report(struct resume *rs)
{
	bool faithful = json_array_size(rs->differs) == 0 &&
	    json_array_size(rs->not_rerun) == 0 &&
	    json_array_size(rs->errors) == 0;

	json_t *r = json_pack("{s:s, s:i, s:i, s:O, s:O, s:O, s:O, s:i, s:b}",
	    "from", rs->rp.opts->resume, "cells", rs->cells, "same", rs->same,
	    "differs", rs->differs, "not_rerun", rs->not_rerun, "errors",
	    rs->errors, "notes", rs->notes, "cell", session_cell(rs->rp.s),
	    "faithful", faithful);

	if (rs->rp.opts->resume_all)
		json_object_set(r, "rerun_anyway", rs->anyway);
	return r;
}

/* Every cell of src through the session; 0, or -1 with why. */
static int
resume_all(struct resume *rs, struct rsrc *src, char *err, size_t errlen)
{
	struct rcell c = { 0 };
	char why[1024];
	int rc;

	while ((rc = rsrc_next(src, &c, why, sizeof why)) == 1) {
		if (resume_cell(rs, &c) == -1) {
			rcell_clear(&c);
			if (rs->rp.signo != 0)
				return err_set(err, errlen, "stopped by signal "
				    "%d while '%s' was rebuilt", rs->rp.signo,
				    rs->rp.opts->resume);
			return err_set(err, errlen, "the session failed while "
			    "'%s' was rebuilt: %s", rs->rp.opts->resume,
			    session_failure(rs->rp.s) ?: "no reason given");
		}
		rcell_clear(&c);
	}
	if (rc == -1)
		return err_set(err, errlen, "cannot resume: %s; nothing was "
		    "added to '%s'", why, rs->rp.opts->resume);
	return 0;
}

int
replay_resume(const struct coil_opts *o, struct session *s, char *err,
    size_t errlen)
{
	struct resume rs = { .rp = { .opts = o, .s = s, .sfd = -1 } };
	struct rsrc *src = replay_take();
	long long cut_at;
	bool unended, same_file;
	json_t *report;
	struct buf b;
	sigset_t old;
	int rc = -1;

	rs.differs = json_array();
	rs.not_rerun = json_array();
	rs.errors = json_array();
	rs.notes = json_array();
	rs.anyway = json_array();
	if (check_noise_init(&rs.rp.noise, o->ignore, err, errlen) == -1) {
		rs.rp.noise.n = 0;
		goto out;
	}
	/* The front end's own signals are not yet served: ours end the
	 * rebuild, and the mask goes back as it was after. */
	if ((rs.rp.sfd = replay_signals(&old)) == -1) {
		err_set(err, errlen, "signalfd: %s", strerror(errno));
		goto out;
	}
	rs.rp.client = session_attach(s, ORIGIN_REPLAY, SESSION_NO_NS,
	    replay_on_event, &rs.rp);
	replay_out_to(stderr);
	if (resume_all(&rs, src, err, errlen) == -1)
		goto out;
	resume_unanswered(&rs, src);
	resume_notes(&rs, src);
	report = resume_report(&rs);
	/* A cut last line is cut off the file the session goes on in,
	 * so that the resume's lines do not run into it. */
	rsrc_end(src, &cut_at, &unended);
	same_file = o->record != NULL && strcmp(o->record, o->resume) == 0;
	session_set_resumed(s, report, same_file ? cut_at : -1,
	    same_file && unended);
	buf_init(&b);
	wording_resumed(report, &b);
	if (b.len > 0)
		b.p[--b.len] = '\0';	/* coil_note ends the line */
	coil_note("%s", b.p);
	buf_free(&b);
	rc = 0;
out:
	if (rs.rp.client > 0)
		session_detach(s, rs.rp.client);
	replay_out_to(stdout);
	if (rs.rp.sfd >= 0) {
		close(rs.rp.sfd);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	response_free(rs.rp.resp);
	if (rs.rp.noise.n > 0)
		check_noise_free(&rs.rp.noise);
	json_decref(rs.differs);
	json_decref(rs.not_rerun);
	json_decref(rs.errors);
	json_decref(rs.notes);
	json_decref(rs.anyway);
	rsrc_close(src);
	return rc;
}
