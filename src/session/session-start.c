/*
 * session-start.c - a session's start and end (see session.h): main,
 * the hub the front ends hold, its init, transcript and notebook, and
 * its first worker; its end, with every branch's; and what the front
 * ends ask of its state (idle, done, failed, the cell).
 *
 * Layer: under session.c, over the hub: it attaches the transcript and
 * the notebook as the first clients, and calls down into init.c, the
 * branches' fields (session-branch.c) and the worker's process.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "export.h"
#include "record.h"
#include "session-int.h"

static json_t *
session_worker_conf(const struct coil_opts *o)
{
	json_t *c = json_pack("{s:s, s:I, s:s, s:i}", "workdir",
	    o->workdir, "max_output", (json_int_t)o->max_output, "figure_dir",
	    o->figure_dir, "traceback_frames", 20);
	json_t *pre = json_array();
	size_t i;

	/* For the hints of errors: whether a cell could install anything. */
	json_object_set_new(c, "sandbox", json_string(sandbox_profile_name(
	    o->sbx.profile)));
	/* the venv (options-venv.c), for worker.py's sys.path and %pip */
	json_object_set_new(c, "venv", o->sbx.venv != NULL ?
	    json_string(o->sbx.venv) : json_null());
	json_object_set_new(c, "venv_system_site",
	    json_boolean(o->venv_system_site));
	json_object_set_new(c, "venv_writable", json_boolean(o->venv_writable));
	json_object_set_new(c, "allow_net", json_boolean(
	    o->sbx.profile == SANDBOX_NONE || (o->sbx.allow_net &&
	    o->sbx.profile != SANDBOX_STRICT)));
	for (i = 0; i < o->npreload; i++)
		json_array_append_new(pre, json_string(o->preload[i]));
	json_object_set_new(c, "preload", pre);
	if (o->nallow_import > 0) {
		pre = json_array();
		for (i = 0; i < o->nallow_import; i++)
			json_array_append_new(pre, json_string(
			    o->allow_import[i]));
		json_object_set_new(c, "allow_import", pre);
	}
	return c;
}

/* --max-sessions unset: one session for each 256 MiB of --memory (the
 * sandbox's one cgroup holds them all), 2 to 256. */
static int
session_default_max(const struct coil_opts *o)
{
	unsigned long long n = o->sbx.memory / (256ULL << 20);

	return n < 2 ? 2 : n > 256 ? 256 : (int)n;
}

/* What a supervisor must be before it forks init: one that a gone
 * reader cannot kill with SIGPIPE, and the reaper of every orphan. */
static int
session_prepare(char *err, size_t errlen)
{
	/* A reader that goes away is an EPIPE for the front end to see,
	 * not a signal that skips the teardown. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return err_set(err, errlen, "signal(SIGPIPE): %s",
		    strerror(errno));
	/* No process of the session outlives it: orphans come to us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		return err_set(err, errlen, "prctl(PR_SET_CHILD_SUBREAPER): "
		    "%s", strerror(errno));
	return 0;
}

struct session *
session_new(const struct coil_opts *opts, char *err, size_t errlen)
{
	struct session *s = xcalloc(1, sizeof *s);

	session_init_fields(s, opts);
	s->hub = s;
	s->name = xstrdup("main");
	s->all = xcalloc(1, sizeof *s->all);
	s->all[s->nall++] = s;
	s->events_tail = &s->events;
	s->limbo_tail = &s->limbo;
	s->node = ckpt_node_new(0, NULL);
	s->worker_conf = session_worker_conf(opts);
	s->max_sessions = opts->max_sessions > 0 ? opts->max_sessions :
	    session_default_max(opts);
	if ((opts->export != NULL && (s->export = export_new(opts->export,
	    err, errlen)) == NULL) ||
	    session_prepare(err, errlen) == -1 || init_start(&s->init,
	    s->worker_conf, &opts->sbx, err, errlen) == -1)
		goto out;
	/* The transcript is the first client, so each line is written
	 * before any client hears of what it says. */
	if (opts->record != NULL) {
		if ((s->rec = record_open(opts, err, errlen)) == NULL)
			goto out;
		session_attach(s, ORIGIN_AGENT, SESSION_OBSERVE |
		    SESSION_NO_NS, record_event, s->rec);
	}
	/* Kept with or without --export: %save FILE.ipynb asks for it. */
	if (opts->export != NULL) {
		session_attach(s, ORIGIN_AGENT, SESSION_OBSERVE |
		    SESSION_NO_NS, export_event, s->export);
	} else {
		s->export = export_keeper();
		s->export_fed = true;
	}
	session_spawn(s);
	return s;
out:
	/* No session, so no notebook of it either. */
	export_free(s->export);
	s->export = NULL;
	session_free(s);
	return NULL;
}

int
session_free(struct session *s)
{
	struct sevent *e;
	struct sreq *r;
	int i, rc;

	if (s == NULL)
		return 0;
	/* The branches first, then main's checkpoints: each also dies
	 * when its socket closes, but a kill gives the memory back before
	 * coil has exited. */
	while (s->nall > 0 && s->all[s->nall - 1] != s)
		session_branch_free(s->all[s->nall - 1]);
	while ((r = s->limbo) != NULL) {
		s->limbo = r->next;
		sreq_free(r);
	}
	ckpt_set_free(&s->ck);
	if (s->init.pid > 0)
		init_stop(&s->init);
	/* Also after a failure, when init may be gone already. */
	sandbox_cleanup(&s->opts->sbx);
	session_free_fields(s);
	while ((e = s->events) != NULL) {
		s->events = e->next;
		sevent_free(e);
	}
	for (i = 0; i < s->nclients; i++)
		sclient_free(s->clients[i]);
	free(s->clients);
	json_decref(s->worker_conf);
	json_decref(s->history);
	json_decref(s->history_figs);
	record_close(s->rec);
	json_decref(s->resumed);
	for (i = 0; i < s->nbrecs; i++)
		record_close(s->brecs[i]);
	free(s->brecs);
	rc = export_close(s->export);
	for (i = 0; i < s->ngates; i++)
		close(s->gates[i]);
	free(s->gates);
	free(s->all);
	free(s->spawns);
	free(s);
	return rc;
}

bool
session_idle(const struct session *s)
{
	int i;

	for (i = 0; i < s->nall; i++)
		if (s->all[i]->run != NULL || s->all[i]->queue != NULL)
			return false;
	return s->events == NULL && s->limbo == NULL;
}

bool
session_done(const struct session *s)
{
	return s->done && s->events == NULL;
}

const char *
session_failure(const struct session *s)
{
	return s->failed ? s->failure : NULL;
}

int
session_cell(const struct session *s)
{
	return s->cells;
}

void
session_count_from(struct session *s, int cell)
{
	if (s->cells < cell)
		s->cells = cell;
}

void
session_set_resumed(struct session *s, json_t *resumed, long long cut_at,
    bool newline)
{
	int i;

	json_decref(s->resumed);
	s->resumed = resumed;
	if (s->rec != NULL)
		record_resumed(s->rec, resumed, cut_at, newline);
	for (i = 0; i < s->nbrecs; i++)
		record_resumed(s->brecs[i], resumed, -1, false);
}

json_t *
session_resumed(const struct session *s)
{
	return s->hub->resumed;
}
