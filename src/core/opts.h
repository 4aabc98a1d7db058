/*
 * opts.h - the options of one coil run, filled by options.c from the
 * command line and read (never changed) by the rest of the supervisor.
 */
#ifndef COIL_OPTS_H
#define COIL_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"

enum coil_mode { MODE_AUTO, MODE_PLAIN, MODE_AGENT, MODE_MCP };

/* When the automatic checkpoints are taken (session-ckpt.c says how):
 * when the session goes quiet, or after every cell that ran code. */
enum ckpt_policy {
	CKPT_POLICY_IDLE, CKPT_POLICY_EVERY, CKPT_POLICY_LAZY, CKPT_NPOLICY
};
extern const char *const ckpt_policy_names[CKPT_NPOLICY];

/* A cell's timeout when neither --timeout nor the request gives one. */
#define OPTS_TIMEOUT 30

struct coil_opts {
	enum coil_mode mode;
	double timeout;			/* seconds a cell may run: 0 none,
					 * < 0 the front end's default
					 * (OPTS_TIMEOUT; none at a terminal) */
	double grace;			/* seconds between SIGINT and SIGKILL */
	size_t max_output;		/* bytes kept of stdout, stderr, result */
	size_t max_request;		/* bytes of one request line */
	const char *workdir;		/* absolute */
	const char *figure_dir;		/* absolute */
	char **dirs_named;		/* --workdir, --allow-read and
					   --allow-write as
					   named ("--allow-read /abs/path",
					   before realpath): main_enter walks
					   them once the places cells write
					   are known (hostfs.h) */
	size_t n_dirs_named;
	bool state_exposed;		/* coil's state dir lies where cells
					   may write (main_state) */
	bool home_exposed;		/* so does $HOME or $XDG_CONFIG_HOME
					   (main_home) */
	const char *history;		/* plain mode's history file, or NULL */
	const char **preload;		/* modules imported at start, NULL-ended */
	size_t npreload;
	const char **allow_import;	/* what cells may import, NULL-ended;
					   NULL: anything */
	size_t nallow_import;
	struct sandbox_conf sbx;	/* --sandbox and its limits; sbx.venv
					   is the venv in force (options_venv) */
	const char *venv_arg;		/* --venv DIR, absolute, or NULL */
	bool no_venv;			/* --no-venv: $VIRTUAL_ENV ignored */
	bool venv_system_site;		/* its pyvenv.cfg's
					   include-system-site-packages */
	bool venv_writable;		/* cells may write it: under the work
					   dir or an --allow-write dir, or
					   --sandbox none */
	int checkpoints;		/* automatic ones kept; 0: none */
	unsigned long long checkpoint_memory;	/* bytes they may hold; 0: no cap */
	enum ckpt_policy checkpoint_policy;
	int max_sessions;		/* branches open at once with main;
					   0: sized to --memory (session.c) */
	const char *session;		/* --attach --session: the branch */
	bool no_redo;			/* --redo none: a restore's lost cells
					   are not run again */
	const char *listen;		/* --listen: the attach socket, or NULL */
	const char *http;		/* --http ADDR:PORT: MCP over HTTP
					   (mcp-http.h), or NULL */
	const char *http_token_file;	/* --http-token-file, or NULL */
	double http_idle;		/* --http-idle: seconds an idle MCP
					   session is kept; 0: for ever */
#define OPTS_HTTP_IDLE 1800		/* its default */
	int listen_fd, http_fd;		/* "systemd": the socket passed
					   (sdfd.h), taken in main; else -1 */
	const char *attach;		/* --attach: the UI on that socket's
					   session, or NULL */
	int scrollback;			/* the UI's output lines kept */
	bool ui;			/* the front end is the curses UI */
	bool no_color;			/* --no-color: the UI in one colour,
					   a cell's SGR sequences dropped */
	bool brief;			/* --brief: stdio answers without empty
					   fields */
	bool sandbox_report;		/* print what the sandbox enforces, exit */
	/* transcripts (record.h, replay.h) */
	const char *record;		/* the transcript written, or NULL */
	bool no_record;			/* --no-record: no default transcript */
	bool record_default;		/* record is a default transcript */
	bool transcripts;		/* list the default ones and exit */
	const char *replay;		/* --replay FILE, or NULL */
	bool check;			/* compare with what FILE expects */
	int replay_from;		/* --from N: fork after FILE's Nth
					   cell and go on live; 0: none */
	const char *replay_then;	/* --then FILE2: its cells run on the
					   branch, or NULL */
	const char *resume;		/* --resume FILE: its cells run again,
					   then a front end serves the session
					   live (replay.h), or NULL */
	bool resume_all;		/* --resume-all: its cells with effects
					   run again too */
	const char **ignore;		/* --ignore REGEXes, NULL-ended */
	size_t nignore;
	const char *export;		/* --export FILE.ipynb, or NULL */
	const char *code_key;		/* chat logs: the code's key ("code") */
	const char *tool;		/* chat logs: the tool replayed, or NULL */
	const char *tool_schema;	/* --tool-schema API: print the tools
					   for that API and exit, or NULL */
	bool system_prompt;		/* --system-prompt: print it, exit */
	unsigned long long given;	/* bit i: options' row i was given */
};

/* How much a client (stdio, an attach socket) may leave unread before it
 * is dropped: room for many answers, and always for the largest one (an
 * exec answer holds three capped texts, escaped up to 6 bytes a byte). */
static inline size_t
opts_max_queue(const struct coil_opts *o)
{
	size_t floor = (size_t)64 << 20, big = 20 * o->max_output;

	return big > floor ? big : floor;
}

#endif
