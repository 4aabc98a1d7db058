/*
 * main.c - coil's start: parse the command line (options.c), enter the
 * work directory and start the front end.  Runs in the supervisor,
 * before any other process exists.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "hostfs.h"
#include "mcp.h"
#include "init.h"
#include "options.h"
#include "plain.h"
#include "ui.h"
#include "record.h"
#include "replay.h"
#include "sdfd.h"
#include "tools.h"
#include "util.h"

static const struct sandbox_conf *main_sbx;	/* for main_teardown */

/*
 * fatal's last act in the supervisor (out of memory, a broken
 * invariant): what session_free would have done, from whatever state
 * the session is in.  init's death takes the session's processes along
 * (its PID namespace, or its cgroup); then the cgroup and temp dir go.
 */
static void
main_teardown(void)
{
	ui_emergency_restore();
	init_abort();
	if (main_sbx != NULL)
		sandbox_cleanup(main_sbx);
}

/* coil's state dir (history, transcripts), made now so that the sandbox
 * has it to hide (sandbox.h: state_dir) wherever cells would see it: in
 * the work dir, an --allow-* dir, or on the way to one of them through
 * a link.  Its real path, as the binds have theirs. */
static void
main_state(struct coil_opts *o)
{
	struct hostfs_dir d;
	char err[512], link[64], real[PATH_MAX], *dir = hostfs_state_dir();
	ssize_t n;

	if (dir == NULL || o->sbx.profile == SANDBOX_NONE ||
	    hostfs_walk(dir, HOSTFS_MKDIRS, &d, NULL, err,
	    sizeof err) == -1) {
		free(dir);	/* history and transcripts say why */
		return;
	}
	snprintf(link, sizeof link, "/proc/self/fd/%d", d.fd);
	/* fs(proc): the held directory's name, through /proc/self/fd */
	n = readlink(link, real, sizeof real - 1);
	if (n > 0 && real[0] == '/') {
		real[n] = '\0';
		o->sbx.state_dir = xstrdup(real);
		o->state_exposed = d.cells;
	}
	hostfs_close(&d);
	free(dir);
}

/*
 * A home (or $XDG_CONFIG_HOME) where cells may write: what the libraries
 * and programs the supervisor runs read there, with the user's rights,
 * would be the cells' to plant (a ~/.lesskey's LESSOPEN runs a command,
 * a pager's config names one, ~/.inputrc rebinds the keys, ~/.terminfo
 * writes to the terminal).  So readline reads /etc/inputrc only, help()
 * pages with less in its secure mode with no lesskey file and no input
 * preprocessor, whatever $PAGER says, and the curses UI looks for no
 * ~/.terminfo (ui.c).  Said once, in a person's session.
 */
static void
main_home(struct coil_opts *o)
{
	if (o->sbx.profile == SANDBOX_NONE ||
	    (!hostfs_cells_reach(getenv("HOME")) &&
	    !hostfs_cells_reach(getenv("XDG_CONFIG_HOME"))))
		return;
	o->home_exposed = true;
	setenv("INPUTRC", "/etc/inputrc", 1);
	setenv("LESSSECURE", "1", 1);
	setenv("LESSKEYIN", "/dev/null", 1);
	setenv("LESSKEY", "/dev/null", 1);
	setenv("LESSHISTFILE", "-", 1);
	unsetenv("LESSOPEN");
	unsetenv("LESSCLOSE");
	unsetenv("PAGER");
}

/* Said once, when this session keeps something there: a default
 * transcript, or a terminal's history. */
static void
main_state_note(const struct coil_opts *o)
{
	bool person = isatty(0) && o->mode != MODE_AGENT &&
	    o->mode != MODE_MCP;

	if (o->state_exposed && (o->record_default || (o->history == NULL &&
	    person)))
		coil_note("coil's state dir '%s' lies where "
		    "cells may write: the sandbox hides it from them",
		    o->sbx.state_dir);
	if (o->home_exposed && person)
		coil_note("your home lies where cells may "
		    "write: coil reads no ~/.inputrc or ~/.terminfo, and pages "
		    "help with less in its secure mode");
}

/*
 * A --figure-dir outside the work dir is a place cells must write too:
 * it joins --allow-write, so it must exist before the sandbox is built,
 * and the worker could not make it there.  It is made here, with the
 * user's rights, through hostfs's walk (no link followed where cells may
 * write: a cell of an earlier session may have planted one, and the
 * sandbox, which resolves the path, would then let cells write wherever
 * it points).  Inside the work dir the worker makes the figure dir
 * itself (display.py, worker.py): the supervisor neither makes nor
 * opens it.  Returns 0, or the exit status of a usage error.
 */
static int
main_figure_dir(struct coil_opts *o)
{
	struct hostfs_dir d;
	char err[512];

	if (hostfs_walk(o->figure_dir, HOSTFS_MKDIRS, &d, NULL, err,
	    sizeof err) == -1)
		return options_bad("--figure-dir '%s': %s", o->figure_dir,
		    err);
	hostfs_close(&d);
	if (options_add_dir(&o->sbx.allow_write, &o->sbx.n_allow_write,
	    o->figure_dir, err, sizeof err) == -1)
		return options_bad("%s", err);
	return 0;
}

/* --workdir, --allow-read and --allow-write dirs as the user named
 * them: the sandbox binds what their path resolves to, so one reached
 * through a link where cells may write (an earlier session's cell may
 * have put it there) would hand cells whatever it points at.  0, or the exit
 * status of a usage error. */
static int
main_named_dirs(const struct coil_opts *o)
{
	struct hostfs_dir d;
	char err[512];
	size_t i;

	for (i = 0; i < o->n_dirs_named; i++) {
		const char *path = strchr(o->dirs_named[i], ' ') + 1;

		if (hostfs_walk(path, HOSTFS_DIR, &d, NULL, err,
		    sizeof err) == -1)
			return options_bad("%.*s '%s': %s", (int)(path - 1 -
			    o->dirs_named[i]), o->dirs_named[i], path, err);
		hostfs_close(&d);
	}
	return 0;
}

/* Enter the work directory, and make a --figure-dir outside it.
 * Returns 0, or the exit status of a usage error. */
static int
main_enter(struct coil_opts *o)
{
	size_t n = strlen(o->workdir);
	int rc;

	/* fs(user): the work dir the user named, before any cell ran */
	if (chdir(o->workdir) == -1)
		fatal_errno("cannot enter '%s'", o->workdir);
	if (strncmp(o->figure_dir, o->workdir, n) != 0 ||
	    (o->figure_dir[n] != '/' && o->figure_dir[n] != '\0')) {
		if ((rc = main_figure_dir(o)) != 0)
			return rc;
	}
	/* Before any cell runs, and before the supervisor opens a file:
	 * where cells may write, no link is followed from here on. */
	hostfs_roots(&o->sbx);
	if ((rc = main_named_dirs(o)) != 0 || (rc = options_venv(o)) != 0)
		return rc;
	main_state(o);
	main_home(o);
	return 0;
}

/* --listen systemd and --http systemd: the sockets systemd passed
 * (sdfd.h), checked before anything starts.  0, or the exit status of
 * a usage error: what was passed is not what the option serves. */
static int
main_sockets(struct coil_opts *o)
{
	char err[512];

	if (sdfd_spec(o->listen) && (o->listen_fd = sdfd_take(o->listen,
	    SDFD_UNIX, "--listen", err, sizeof err)) == -1)
		return options_bad("%s", err);
	if (sdfd_spec(o->http) && (o->http_fd = sdfd_take(o->http,
	    SDFD_INET, "--http", err, sizeof err)) == -1)
		return options_bad("%s", err);
	return 0;
}

/* Without a mode option, a person at a terminal gets the curses UI. */
static bool
main_ui(const struct coil_opts *o)
{
	const char *term = getenv("TERM");

	return o->mode == MODE_AUTO && isatty(0) && isatty(1) &&
	    term != NULL && *term != '\0' && strcmp(term, "dumb") != 0;
}

/* Agent and MCP sessions are recorded unless told not to (record.h); a
 * transcript that cannot be started is a warning, not a refusal. */
static void
main_record(struct coil_opts *o)
{
	char err[512];

	if (o->record != NULL || o->no_record ||
	    (o->mode != MODE_AGENT && o->mode != MODE_MCP) ||
	    (o->replay != NULL && o->replay_from == 0) || o->sandbox_report)
		return;
	o->record = record_default_path(err, sizeof err);
	o->record_default = o->record != NULL;
	if (o->record == NULL)
		coil_warn("no transcript of this session: %s", err);
}

/* The front end the options choose; its exit status. */
static int
main_front(struct coil_opts *o)
{
	/* A replay on a terminal steps through the UI; --check and
	 * --plain, or no terminal, print it as lines.  With --from (and no
	 * --check) the front end takes the session over at cell N. */
	if (o->replay != NULL && (o->check || (o->replay_from == 0 &&
	    !main_ui(o))))
		return replay_main(o);
	if (o->mode == MODE_MCP)
		return mcp_main(o);
	if (o->mode != MODE_AGENT && main_ui(o)) {
		/* A person at the curses UI has Ctrl-C: no deadline unless
		 * --timeout gives one, as in plain mode at a terminal. */
		if (o->timeout < 0)
			o->timeout = 0;
		o->ui = true;
		return ui_main(o);
	}
	return o->mode == MODE_AGENT ? agent_main(o) : plain_main(o);
}

/* Run the session (or the sandbox report) and take it down: returns
 * coil's exit status. */
static int
main_run(struct coil_opts *o)
{
	const char *base;
	int rc;

	/* An attached UI has no session of its own to set up. */
	if (o->attach != NULL) {
		fatal_set_teardown(ui_emergency_restore);
		return ui_main(o);
	}
	o->sbx.session = getpid();
	/* Where init makes the cells' temp dir if the sandbox's mount
	 * namespace cannot give a private one (sandbox_enter). */
	base = getenv("TMPDIR");
	o->sbx.tmp_base = base != NULL && *base == '/' ? base : "/tmp";
	/* From here on fatal tears the session down, and so does every
	 * return: nothing of it is left on the host. */
	main_sbx = &o->sbx;
	fatal_set_teardown(main_teardown);
	/* What this one might leave if it is killed: the janitor's.  It
	 * sweeps what coils killed before their teardown left too (cgroups
	 * and temp dirs whose owner pid is gone) while the session starts;
	 * without one, we do, first. */
	if (o->sbx.profile == SANDBOX_NONE || o->sandbox_report) {
		sandbox_sweep(&o->sbx);
	} else if (init_janitor(&o->sbx) == -1) {
		coil_warn("no janitor (%s): if coil is "
		    "killed, its cgroup stays until the next coil starts",
		    strerror(errno));
		sandbox_sweep(&o->sbx);
	}
	if (o->sandbox_report) {
		struct sandbox_report rep;

		sandbox_probe(&o->sbx, &rep);
		sandbox_report_print(&rep, stdout);
		rc = o->sbx.require && !sandbox_report_complete(&rep) ? 1 : 0;
	} else {
		rc = main_front(o);
	}
	/* The session's end cleaned up already, unless it failed first. */
	if (sandbox_cleanup_owed())
		sandbox_cleanup(&o->sbx);
	main_sbx = NULL;
	return rc;
}

int
main(int argc, char **argv)
{
	struct coil_opts o;
	int rc;

	/* First: no process coil starts may take systemd's sockets, or
	 * their variables, for its own. */
	sdfd_init();
	if (!options_parse(argc, argv, &o, &rc)) {
		options_free(&o);
		return rc;
	}
	/* Where cells may write, from here on no link is followed: set
	 * again once main_enter knows the figure dir. */
	hostfs_roots(&o.sbx);
	if (o.transcripts)
		rc = record_list(stdout);
	else if (o.tool_schema != NULL || o.system_prompt)
		rc = tools_main(&o);
	else if ((rc = main_sockets(&o)) == 0 &&
	    (rc = replay_prepare(&o)) == 0 && (rc = main_enter(&o)) == 0) {
		main_record(&o);
		main_state_note(&o);
		rc = main_run(&o);
	}
	options_free(&o);
	return rc;
}
