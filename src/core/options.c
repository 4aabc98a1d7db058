/*
 * options.c - coil's command line (options.h): one table, whose rows say
 * how each option is parsed and stored and are also the --help text.
 * Adding an option is adding a row.  What a transcript keeps of them
 * and a replay takes back is options-replay.c's, which reads the table
 * through options-int.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "chan.h"
#include "options-int.h"
#include "request.h"
#include "sdfd.h"
#include "util.h"

#define FIELD(m) offsetof(struct coil_opts, m), \
	sizeof(((struct coil_opts *)0)->m)
#define NO_FIELD 0, 0
#define MAX_SIZE (1LL << 40)	/* of any SIZE: a terabyte */
#define MAX_SECONDS 10000000	/* of any SECS: four months */

static options_set_fn opt_mode, opt_dir, opt_string, opt_path, opt_listen,
    opt_request_schema, opt_help, opt_version, opt_ignore;

const char *const ckpt_policy_names[CKPT_NPOLICY] = {
	[CKPT_POLICY_IDLE] = "idle", [CKPT_POLICY_EVERY] = "every",
	[CKPT_POLICY_LAZY] = "lazy",
};

const struct options_entry options_table[] = {
	{ "agent", 0, NULL, opt_mode, FIELD(mode), 0, MODE_AGENT,
	  "serve JSON requests, one a line, on stdio", 0 },
	{ "mcp", 0, NULL, opt_mode, FIELD(mode), 0, MODE_MCP,
	  "serve the session as an MCP server on stdio", 0 },
	{ "listen", 0, "PATH", opt_listen, FIELD(listen), 0, 0,
	  "serve it on a socket too, or on systemd's", 0 },
	{ "http", 0, "ADDR:PORT", opt_string, FIELD(http), 0, 0,
	  "with --mcp: serve MCP over HTTP at /mcp instead", 0 },
	{ "http-token-file", 0, "FILE", opt_path, FIELD(http_token_file), 0,
	  0, "--http's bearer token (or COIL_HTTP_TOKEN)", 0 },
	{ "http-idle", 0, "SECS", opt_seconds, FIELD(http_idle), -1,
	  MAX_SECONDS, "end MCP sessions idle for SECS (1800; 0: never)", 0 },
	{ "brief", 0, NULL, opt_flag, FIELD(brief), 0, 0,
	  "with --agent: answers leave out empty fields", 0 },
	{ "plain", 0, NULL, opt_mode, FIELD(mode), 0, MODE_PLAIN,
	  "a line REPL (the default without a terminal)", 0 },
	{ "attach", 0, "PATH", opt_path, FIELD(attach), 0, 0,
	  "the UI on a session served by --listen", 0 },
	{ "scrollback", 0, "N", opt_count, FIELD(scrollback), 100, 10000000,
	  "lines and KiB of answers the UI keeps (10000)", 0 },
	{ "no-color", 0, NULL, opt_flag, FIELD(no_color), 0, 0,
	  "the UI without colour (as NO_COLOR=1 does)", 0 },
	{ "timeout", 0, "SECS", opt_seconds, FIELD(timeout), -1, MAX_SECONDS,
	  "interrupt cells after SECS (30; 0/tty: none)", OPT_SESSION },
	{ "grace", 0, "SECS", opt_seconds, FIELD(grace), 0, MAX_SECONDS,
	  "kill an interrupted cell after SECS (default 2)", OPT_SESSION },
	{ "max-output", 0, "SIZE", opt_size, FIELD(max_output), 1,
	  CHAN_MAX_OUTPUT, "text an answer keeps in all (64K; max 16M)",
	  OPT_SESSION },
	{ "max-request", 0, "SIZE", opt_size, FIELD(max_request), 1,
	  CHAN_MAX_REQUEST, "longest request line (default 16M, max 128M)", 0 },
	{ "workdir", 0, "DIR", opt_dir, FIELD(workdir), 0, 0,
	  "the cells' directory (default: the current one)", 0 },
	{ "figure-dir", 0, "DIR", opt_string, FIELD(figure_dir), 0, 0,
	  "figures go here (default WORKDIR/.coil/figures)", 0 },
	{ "preload", 0, "MODS", opt_preload, NO_FIELD, 0, 0,
	  "import these comma-separated modules at start", OPT_SESSION },
	{ "allow-import", 0, "MODS", opt_allow_import, NO_FIELD, 0, 0,
	  "cells may import only these (\"stdlib\" too)", OPT_SESSION },
	{ "history", 0, "FILE", opt_string, FIELD(history), 0, 0,
	  "the REPL's and UI's history (\"\" for none)", 0 },
	{ "sandbox", 0, "PROFILE", opt_profile, NO_FIELD, 0, 0,
	  "none, standard or strict (default standard)", OPT_HOLD },
	{ "allow-read", 0, "DIR", opt_allow_read, NO_FIELD, 0, 0,
	  "let cells read DIR too (repeatable)", OPT_HOLD },
	{ "allow-write", 0, "DIR", opt_allow_write, NO_FIELD, 0, 0,
	  "let cells write DIR too (repeatable)", OPT_HOLD },
	{ "allow-net", 0, NULL, opt_flag, FIELD(sbx.allow_net), 0, 0,
	  "let cells use the network", OPT_HOLD },
	{ "venv", 0, "DIR", opt_path, FIELD(venv_arg), 0, 0,
	  "use the virtualenv DIR (default $VIRTUAL_ENV)", 0 },
	{ "no-venv", 0, NULL, opt_flag, FIELD(no_venv), 0, 0,
	  "ignore $VIRTUAL_ENV: the system's packages only", 0 },
	{ "memory", 0, "SIZE", opt_size, FIELD(sbx.memory), 1, MAX_SIZE,
	  "memory a cell may use (default 4G)", OPT_HOLD },
	{ "max-procs", 0, "N", opt_count, FIELD(sbx.max_procs), 1, 1 << 22,
	  "processes and threads allowed (default 256)", OPT_HOLD },
	{ "max-file-size", 0, "SIZE", opt_size, FIELD(sbx.max_file_size), 1,
	  MAX_SIZE, "largest file a cell may write (default 1G)",
	  OPT_HOLD },
	{ "sandbox-require", 0, NULL, opt_flag, FIELD(sbx.require), 0, 0,
	  "refuse to start if a protection is missing", 0 },
	{ "sandbox-report", 0, NULL, opt_flag, FIELD(sandbox_report), 0, 0,
	  "print what the sandbox enforces here and exit", 0 },
	{ "checkpoints", 0, "N", opt_count, FIELD(checkpoints), 0, 1000,
	  "keep N checkpoints (default 8, 0: none)", OPT_HOLD },
	{ "checkpoint-memory", 0, "SIZE", opt_size, FIELD(checkpoint_memory),
	  1, MAX_SIZE, "drop the oldest checkpoints when they hold more",
	  OPT_HOLD },
	{ "checkpoint-policy", 0, "WHEN", opt_policy, NO_FIELD, 0, 0,
	  "when to checkpoint: idle (default), every, lazy", OPT_SESSION },
	{ "max-sessions", 0, "N", opt_count, FIELD(max_sessions), 1, 4096,
	  "branches open at once (default --memory / 256M)",
	  OPT_HOLD },
	{ "session", 0, "NAME", opt_string, FIELD(session), 0, 0,
	  "with --attach: work in that session (branch)", 0 },
	{ "redo", 0, "WHICH", opt_redo, NO_FIELD, 0, 0,
	  "lost cells run again: safe (default) or none",
	  OPT_SESSION },
	{ "record", 0, "FILE", opt_path, FIELD(record), 0, 0,
	  "append a transcript of the session to FILE", 0 },
	{ "no-record", 0, NULL, opt_flag, FIELD(no_record), 0, 0,
	  "no default transcript (--agent, --mcp)", 0 },
	{ "transcripts", 0, NULL, opt_flag, FIELD(transcripts), 0, 0,
	  "list the default transcripts and exit", 0 },
	{ "replay", 0, "FILE", opt_path, FIELD(replay), 0, 0,
	  "run the cells of a transcript, notebook, ...", 0 },
	{ "resume", 0, "FILE", opt_path, FIELD(resume), 0, 0,
	  "rebuild FILE's session, then serve it live", 0 },
	{ "resume-all", 0, NULL, opt_flag, FIELD(resume_all), 0, 0,
	  "with --resume: rerun cells with effects too", 0 },
	{ "from", 0, "N", opt_count, FIELD(replay_from), 0, 10000000,
	  "with --replay: N cells, then live on a branch", 0 },
	{ "then", 0, "FILE2", opt_path, FIELD(replay_then), 0, 0,
	  "with --from: FILE2's new cells, on the branch", 0 },
	{ "check", 0, NULL, opt_flag, FIELD(check), 0, 0,
	  "with --replay: exit 1 if an outcome differs", 0 },
	{ "ignore", 0, "REGEX", opt_ignore, NO_FIELD, 0, 0,
	  "with --check: text matching REGEX is noise too", 0 },
	{ "code-key", 0, "KEY", opt_string, FIELD(code_key), 0, 0,
	  "chat logs: the tool argument holding the code", 0 },
	{ "tool", 0, "NAME", opt_string, FIELD(tool), 0, 0,
	  "chat logs: replay the calls of this tool only", 0 },
	{ "export", 0, "FILE", opt_path, FIELD(export), 0, 0,
	  "write the session as a Jupyter notebook", 0 },
	{ "request-schema", 0, NULL, opt_request_schema, NO_FIELD, 0, 0,
	  "print the requests' JSON Schema and exit", 0 },
	{ "tool-schema", 0, "API", opt_string, FIELD(tool_schema), 0, 0,
	  "print the tools for openai, anthropic or mcp", 0 },
	{ "system-prompt", 0, NULL, opt_flag, FIELD(system_prompt), 0, 0,
	  "print the system text for a model and exit", 0 },
	{ "help", 'h', NULL, opt_help, NO_FIELD, 0, 0,
	  "show this help and exit", 0 },
	{ "version", 'V', NULL, opt_version, NO_FIELD, 0, 0,
	  "show the version and licence and exit", 0 },
};
const size_t options_count = nitems(options_table);
_Static_assert(nitems(options_table) <= 64,
    "options.given has a bit a row");

/* Store a whole number in e's field, an int or a 64-bit one (size_t,
 * long, unsigned long long): the bounds keep v within either. */
void
opt_store(struct coil_opts *o, const struct options_entry *e, long long v)
{
	char *p = (char *)o + e->off;
	int i = (int)v;

	/* memcpy: the field is not a long long, only of its size. */
	if (e->width == sizeof i)
		memcpy(p, &i, sizeof i);
	else if (e->width == sizeof v)
		memcpy(p, &v, sizeof v);
	else
		fatal("option '--%s' has a field of %zu bytes", e->name,
		    e->width);
}

static int
opt_mode(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	o->mode = (enum coil_mode)e->max;
	return 0;
}

int
opt_flag(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	*AT(o, e, bool) = true;
	return 0;
}

int
opt_seconds(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	/* A min below 0 lets 0 through: no limit at all. */
	if (errno != 0 || end == arg || *end != '\0' || !(v >= 0) ||
	    (v == 0 && e->min >= 0) || v > e->max)
		return err_set(err, errlen, "--%s: invalid number of seconds "
		    "'%s' (%s, at most %lld)", e->name, arg, e->min < 0 ?
		    "0 for none, or more" : "more than 0", e->max);
	*AT(o, e, double) = v;
	return 0;
}

/* A SIZE; one above MAX_SIZE is no size at all, one above e->max (the
 * share of a frame to the worker, chan.h says why) is over its limit. */
int
opt_size(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_size(arg, &v) == -1 || v < (unsigned long long)e->min ||
	    v > MAX_SIZE)
		return err_set(err, errlen, "invalid size '%s'", arg);
	if (v > (unsigned long long)e->max)
		return err_set(err, errlen, "--%s %s is over the limit of %lldM "
		    "(the frames between coil and its worker are at most %uM)",
		    e->name, arg, e->max >> 20, CHAN_MAX_FRAME >> 20);
	opt_store(o, e, (long long)v);
	return 0;
}

int
opt_count(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || n < e->min ||
	    n > e->max)
		return err_set(err, errlen, "invalid number '%s' (%lld to %lld)",
		    arg, e->min, e->max);
	opt_store(o, e, n);
	return 0;
}

/* A new string of dir's absolute path, or NULL with a message. */
static char *
opt_absdir(const char *dir, char *err, size_t errlen)
{
	/* fs(user): a dir the user named, before any cell ran
	 * (main_named_dirs walks it again) */
	char *r = realpath(dir, NULL);
	struct stat st;

	/* fs(user): a dir the user named, before any cell ran
	 * (main_named_dirs walks it again) */
	if (r == NULL || stat(r, &st) == -1 || !S_ISDIR(st.st_mode)) {
		free(r);
		err_set(err, errlen, "no such directory '%s'", dir);
		return NULL;
	}
	return r;
}

int
options_add_dir(const char ***list, size_t *n, const char *dir, char *err,
    size_t errlen)
{
	char *abs = opt_absdir(dir, err, errlen);

	if (abs == NULL)
		return -1;
	*list = xrealloc(*list, (*n + 1) * sizeof **list);
	(*list)[(*n)++] = abs;
	return 0;
}

/* Keep "--NAME ABSPATH" as the user named it, for main_enter's walk. */
static void
opt_named(struct coil_opts *o, const struct options_entry *e,
    const char *arg)
{
	char *cwd = *arg == '/' ? NULL : getcwd(NULL, 0);

	o->dirs_named = xrealloc(o->dirs_named, (o->n_dirs_named + 1) *
	    sizeof *o->dirs_named);
	xasprintf(&o->dirs_named[o->n_dirs_named++], "--%s %s%s%s", e->name,
	    cwd != NULL ? cwd : "", cwd != NULL ? "/" : "", arg);
	free(cwd);
}

static int
opt_dir(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	char *abs = opt_absdir(arg, err, errlen);

	if (abs == NULL)
		return -1;
	opt_named(o, e, arg);
	free((char *)*AT(o, e, const char *));
	*AT(o, e, const char *) = abs;
	return 0;
}

static int
opt_string(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	free((char *)*AT(o, e, const char *));
	*AT(o, e, const char *) = xstrdup(arg);
	return 0;
}

/* A path made absolute against the directory coil started in (it
 * enters the work dir before the path is used). */
static int
opt_path(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	char *cwd, *abs;

	if (*arg == '\0')
		return err_set(err, errlen, "--%s needs a path", e->name);
	if (*arg == '/') {
		abs = xstrdup(arg);
	} else {
		if ((cwd = getcwd(NULL, 0)) == NULL)
			return err_set(err, errlen, "getcwd: %s",
			    strerror(errno));
		xasprintf(&abs, "%s/%s", cwd, arg);
		free(cwd);
	}
	free((char *)*AT(o, e, const char *));
	*AT(o, e, const char *) = abs;
	return 0;
}

/* --listen PATH, or "systemd[:NAME]": the socket systemd passed
 * (sdfd.h), which main takes; a file of that name is ./systemd. */
static int
opt_listen(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	if (!sdfd_spec(arg))
		return opt_path(o, e, arg, err, errlen);
	free((char *)o->listen);
	o->listen = xstrdup(arg);
	return 0;
}

/* Add the comma-separated names in arg to a NULL-ended list; 0, or -1
 * when one is not a dotted Python name. */
static int
opt_modules(const char ***list, size_t *n, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	char *copy = xstrdup(arg), *tok, *save = NULL;
	const char *p;
	int rc = 0;

	for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
	    tok = strtok_r(NULL, ",", &save)) {
		for (p = tok; *p != '\0'; p++)
			if (!(*p == '_' || *p == '.' || (*p & 0x80) ||
			    (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
			    (*p >= 'A' && *p <= 'Z')))
				break;
		if (*p != '\0' || *tok == '.' || (*tok >= '0' && *tok <= '9')) {
			snprintf(err, errlen, "'--%s': '%s' is not a module "
			    "name", e->name, tok);
			rc = -1;
			break;
		}
		*list = xrealloc(*list, (*n + 2) * sizeof **list);
		(*list)[(*n)++] = xstrdup(tok);
		(*list)[*n] = NULL;
	}
	if (rc == 0 && *n == 0) {
		snprintf(err, errlen, "'--%s' needs at least one module name",
		    e->name);
		rc = -1;
	}
	free(copy);
	return rc;
}

int
opt_preload(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	return opt_modules(&o->preload, &o->npreload, e, arg, err, errlen);
}

int
opt_allow_import(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	return opt_modules(&o->allow_import, &o->nallow_import, e, arg, err,
	    errlen);
}

int
opt_profile(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	if (sandbox_parse_profile(arg, &o->sbx.profile) == -1)
		return err_set(err, errlen, "unknown sandbox profile '%s' "
		    "(none, standard or strict)", arg);
	return 0;
}

int
opt_policy(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < CKPT_NPOLICY; i++)
		if (strcmp(arg, ckpt_policy_names[i]) == 0) {
			o->checkpoint_policy = (enum ckpt_policy)i;
			return 0;
		}
	return err_set(err, errlen, "unknown checkpoint policy '%s' (idle, "
	    "every or lazy)", arg);
}

/* safe: the cells a restore lost that did nothing outside the
 * namespace run again (session-redo.c); none: none does. */
int
opt_redo(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	if (strcmp(arg, "safe") != 0 && strcmp(arg, "none") != 0)
		return err_set(err, errlen, "unknown redo policy '%s' (safe "
		    "or none)", arg);
	o->no_redo = strcmp(arg, "none") == 0;
	return 0;
}

/* A regular expression (POSIX extended), checked here so that a bad one
 * is a usage error before any session starts. */
static int
opt_ignore(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	regex_t re;
	char why[128];
	int rc = regcomp(&re, arg, REG_EXTENDED | REG_NEWLINE);

	if (rc != 0) {
		regerror(rc, &re, why, sizeof why);
		return err_set(err, errlen, "--ignore '%s': %s", arg, why);
	}
	regfree(&re);
	o->ignore = xrealloc(o->ignore, (o->nignore + 2) * sizeof *o->ignore);
	o->ignore[o->nignore++] = xstrdup(arg);
	o->ignore[o->nignore] = NULL;
	return 0;
}

int
opt_allow_read(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	opt_named(o, e, arg);
	return options_add_dir(&o->sbx.allow_read, &o->sbx.n_allow_read, arg,
	    err, errlen);
}

/*
 * /proc, /sys and /dev are the kernel's, not directories of files: a
 * writable bind of them would hand cells the session's processes' memory
 * (/proc/N/mem), the session's own limits (a cgroup's pids.max) or the
 * machine's settings.  No --allow-write reaches them, which is what the
 * sandbox's refusals say (src/worker/audit.py).
 */
int
opt_allow_write(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	static const char *const kernel[] = { "/proc", "/sys", "/dev" };
	/* fs(user): a dir the user named, before any cell ran */
	char *abs = realpath(arg, NULL);
	size_t i, k;

	for (i = 0; abs != NULL && i < nitems(kernel); i++) {
		k = strlen(kernel[i]);
		/* "/" holds them all */
		if (strcmp(abs, "/") == 0 || (strncmp(abs, kernel[i], k) == 0 &&
		    (abs[k] == '\0' || abs[k] == '/'))) {
			err_set(err, errlen, "--allow-write '%s': the kernel's "
			    "files under '%s' are not the cells' to write; "
			    "--memory and --max-procs set the session's limits, "
			    "--sandbox none lifts the sandbox", arg, kernel[i]);
			free(abs);
			return -1;
		}
	}
	free(abs);
	opt_named(o, e, arg);
	return options_add_dir(&o->sbx.allow_write, &o->sbx.n_allow_write, arg,
	    err, errlen);
}

static int
opt_request_schema(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	json_t *all = request_schemas(), *v, *s;
	const char *op;
	void *tmp;

	/* Each op's schema stands alone, so each names its draft; $schema
	 * first, as a reader looks for it there. */
	json_object_foreach_safe(all, tmp, op, v) {
		s = json_pack("{s:s}", "$schema",
		    "https://json-schema.org/draft/2020-12/schema");
		json_object_update(s, v);
		json_object_set_new(all, op, s);
	}
	json_dumpf(all, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(all);
	return OPTIONS_DONE;
}

static int
opt_help(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	struct buf req;
	size_t i;

	printf("Usage: coil [OPTION]...\n"
	    "A persistent Python session shared by a person and a language "
	    "model.\n\n");
	for (i = 0; i < nitems(options_table); i++) {
		const struct options_entry *oe = &options_table[i];
		char shortopt[5] = "    ", left[40];

		if (oe->letter != 0)
			snprintf(shortopt, sizeof shortopt, "-%c, ", oe->letter);
		snprintf(left, sizeof left, "%s--%s%s%s", shortopt, oe->name,
		    oe->arg ? " " : "", oe->arg ? oe->arg : "");
		/* Descriptions fit in 79 columns (tests/plain/version.sh). */
		printf("  %-28s  %s\n", left, oe->usage);
	}
	buf_init(&req);
	request_help(&req);
	printf("\nSIZE takes a suffix K, M or G.  --listen systemd and --http "
	    "systemd (or\nsystemd:NAME) take the socket systemd passed "
	    "(coil(1), SYSTEMD).\n\n%s\nReport bugs to: %s\n",
	    req.p, PACKAGE_BUGREPORT);
	buf_free(&req);
	return OPTIONS_DONE;
}

/* The GNU --version text: name and version, copyright, licence. */
static int
opt_version(struct coil_opts *o, const struct options_entry *e,
    const char *arg, char *err, size_t errlen)
{
	printf("%s\n%s.\n"
	    "License MIT: <https://opensource.org/license/mit>.\n"
	    "This is free software: you are free to change and redistribute "
	    "it.\nThere is NO WARRANTY, to the extent permitted by law.\n",
	    PACKAGE_STRING, COIL_COPYRIGHT);
	return OPTIONS_DONE;
}

int
options_bad(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		fatal_code(EXIT_NOMEM, 0, "out of memory");
	va_end(ap);
	coil_error("%s (try 'coil --help')", msg);
	free(msg);
	return 2;
}

/* getopt_long's tables from ours: an option's value is its letter, or
 * 256 + its row for one without. */
static void
options_getopt(struct option *lopts, char *sopts)
{
	size_t i, ns = 0;

	sopts[ns++] = ':';
	for (i = 0; i < nitems(options_table); i++) {
		const struct options_entry *e = &options_table[i];

		lopts[i] = (struct option){ e->name, e->arg ?
		    required_argument : no_argument, NULL, e->letter ?
		    e->letter : 256 + (int)i };
		if (e->letter != 0) {
			sopts[ns++] = (char)e->letter;
			if (e->arg != NULL)
				sopts[ns++] = ':';
		}
	}
	lopts[i] = (struct option){ 0 };
	sopts[ns] = '\0';
}

static const struct options_entry *
options_of(int c)
{
	size_t i;

	if (c >= 256)
		return &options_table[c - 256];
	for (i = 0; i < nitems(options_table); i++)
		if (options_table[i].letter == c)
			return &options_table[i];
	return NULL;
}

/* The defaults that need the options: the work and figure dirs. */
static int
options_settle(struct coil_opts *o, char *err, size_t errlen)
{
	char *fig;

	if (o->brief && o->mode != MODE_AGENT)
		return err_set(err, errlen, "--brief shapes the answers of "
		    "--agent: use it with --agent");
	if (o->attach != NULL && o->mode != MODE_AUTO)
		return err_set(err, errlen, "--attach opens the UI on another "
		    "session: it goes with none of --agent, --mcp and --plain");
	if (o->session != NULL && o->attach == NULL)
		return err_set(err, errlen, "--session picks the branch an "
		    "attached UI works in: use it with --attach (elsewhere "
		    "%%switch NAME, or a request's \"session\")");
	if (o->listen != NULL && o->mode != MODE_AGENT && o->mode != MODE_MCP)
		return err_set(err, errlen, "--listen serves an agent session: "
		    "it needs --agent or --mcp");
	if ((o->http != NULL || o->http_token_file != NULL) &&
	    o->mode != MODE_MCP)
		return err_set(err, errlen, "--http and --http-token-file "
		    "serve MCP over HTTP: use them with --mcp");
	if (o->checkpoint_policy == CKPT_POLICY_LAZY && o->no_redo)
		return err_set(err, errlen, "--checkpoint-policy lazy leaves "
		    "cheap cells to be run again after a crash, which --redo "
		    "none forbids: give one or the other");
	if (o->http_idle >= 0 && o->http == NULL)
		return err_set(err, errlen, "--http-idle ends idle MCP sessions "
		    "over HTTP: use it with --mcp --http");
	if (o->http_idle < 0)
		o->http_idle = OPTS_HTTP_IDLE;
	if (o->http != NULL && (o->listen != NULL || o->replay != NULL))
		return err_set(err, errlen, "--http serves the session on its "
		    "own: it goes with neither --listen nor --replay");
#ifndef HAVE_MHD
	if (o->http != NULL)
		return err_set(err, errlen, "--http: this coil was built "
		    "without libmicrohttpd; install libmicrohttpd-dev and "
		    "build coil again");
#endif
	if (o->replay == NULL && (o->check || (o->nignore > 0 &&
	    o->resume == NULL) || o->code_key != NULL || o->tool != NULL))
		return err_set(err, errlen, "--check, --ignore, --code-key and "
		    "--tool shape a replay: use them with --replay FILE "
		    "(--ignore with --resume FILE too)");
	if (o->replay != NULL && o->attach != NULL)
		return err_set(err, errlen, "--replay runs a fresh session: it "
		    "does not go with --attach");
	if (options_replay_check(o, err, errlen) == -1)
		return -1;
	if (o->record != NULL && o->no_record)
		return err_set(err, errlen, "--record and --no-record disagree: "
		    "give one");
	if (o->venv_arg != NULL && o->no_venv)
		return err_set(err, errlen, "--venv and --no-venv disagree: "
		    "give one");
	if (o->workdir == NULL &&
	    (o->workdir = opt_absdir(".", err, errlen)) == NULL)
		return -1;
	if (o->figure_dir == NULL) {
		xasprintf(&fig, "%s/.coil/figures", o->workdir);
		o->figure_dir = fig;
	}
	o->sbx.workdir = o->workdir;
	return 0;
}

bool
options_parse(int argc, char **argv, struct coil_opts *o, int *status)
{
	struct option lopts[nitems(options_table) + 1];
	char sopts[2 * nitems(options_table) + 2], err[512];
	const struct options_entry *e;
	int c, rc;

	*o = (struct coil_opts){
		.mode = MODE_AUTO, .timeout = -1, .grace = 2,
		.max_output = 64 << 10, .max_request = 16 << 20,
		.checkpoints = 8, .scrollback = 10000,
		.http_idle = -1, .listen_fd = -1, .http_fd = -1,
	};
	sandbox_conf_init(&o->sbx);
	options_getopt(lopts, sopts);
	opterr = 0;
	*status = 2;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		if (c == ':') {
			options_bad("option '%s' needs an argument",
			    argv[optind - 1]);
			return false;
		}
		if (c == '?' || (e = options_of(c)) == NULL) {
			/* optopt is the letter of an unknown short option
			 * (perhaps one of a group, "-xV"), 0 for a long one. */
			if (optopt > 0 && optopt < 256)
				options_bad("unknown option '-%c'", optopt);
			else
				options_bad("unknown option '%s'",
				    argv[optind - 1]);
			return false;
		}
		o->given |= 1ULL << (e - options_table);
		rc = e->set(o, e, optarg, err, sizeof err);
		if (rc != 0) {
			if (rc == -1)
				options_bad("%s", err);
			*status = rc == OPTIONS_DONE ? 0 : 2;
			return false;
		}
	}
	if (optind < argc) {
		options_bad("unexpected argument '%s'", argv[optind]);
		return false;
	}
	if (options_settle(o, err, sizeof err) == -1) {
		options_bad("%s", err);
		return false;
	}
	return true;
}

void
options_free(struct coil_opts *o)
{
	size_t i;

	for (i = 0; i < o->sbx.n_allow_read; i++)
		free((char *)o->sbx.allow_read[i]);
	for (i = 0; i < o->sbx.n_allow_write; i++)
		free((char *)o->sbx.allow_write[i]);
	free(o->sbx.allow_read);
	free(o->sbx.allow_write);
	free((char *)o->workdir);
	free((char *)o->figure_dir);
	free((char *)o->sbx.state_dir);
	free((char *)o->sbx.venv);
	if (o->sbx.venv_fd >= 0)
		close(o->sbx.venv_fd);
	free((char *)o->venv_arg);
	for (i = 0; i < o->n_dirs_named; i++)
		free(o->dirs_named[i]);
	free(o->dirs_named);
	free((char *)o->history);
	free((char *)o->listen);
	free((char *)o->http);
	free((char *)o->http_token_file);
	free((char *)o->attach);
	free((char *)o->session);
	free((char *)o->record);
	free((char *)o->replay);
	free((char *)o->replay_then);
	free((char *)o->resume);
	free((char *)o->export);
	free((char *)o->code_key);
	free((char *)o->tool);
	free((char *)o->tool_schema);
	for (i = 0; i < o->nignore; i++)
		free((char *)o->ignore[i]);
	free(o->ignore);
	for (i = 0; i < o->npreload; i++)
		free((char *)o->preload[i]);
	free(o->preload);
	for (i = 0; i < o->nallow_import; i++)
		free((char *)o->allow_import[i]);
	free(o->allow_import);
}
