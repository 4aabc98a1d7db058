/*
 * main.c - command line of coil: parse the options (one table, which is
 * also the --help text) and start the front end.  Runs in the
 * supervisor, before any other process exists.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "chan.h"
#include "opts.h"
#include "plain.h"
#include "proc.h"
#include "util.h"

enum {
	O_AGENT = 256, O_PLAIN, O_TIMEOUT, O_GRACE, O_MAX_OUTPUT,
	O_MAX_REQUEST, O_WORKDIR, O_FIGURE_DIR, O_PRELOAD, O_HISTORY,
	O_SANDBOX, O_ALLOW_READ, O_ALLOW_WRITE,
	O_ALLOW_NET, O_MEMORY, O_MAX_PROCS, O_MAX_FILE_SIZE, O_SANDBOX_REQUIRE,
	O_SANDBOX_REPORT, O_CHECKPOINTS, O_CHECKPOINT_MEMORY,
};

/* An id below 256 is also the option's short form (-h, -V). */
static const struct main_option {
	const char *name;
	int has_arg;
	int id;
	const char *arg;
	const char *usage;
} main_options[] = {
	{ "agent", no_argument, O_AGENT, NULL,
	  "serve JSON requests, one a line, on stdio" },
	{ "plain", no_argument, O_PLAIN, NULL,
	  "a line REPL (the default)" },
	{ "timeout", required_argument, O_TIMEOUT, "SECS",
	  "interrupt a cell after SECS (default 30)" },
	{ "grace", required_argument, O_GRACE, "SECS",
	  "kill an interrupted cell after SECS (default 2)" },
	{ "max-output", required_argument, O_MAX_OUTPUT, "SIZE",
	  "cap output, stderr, result (64K; at most 16M)" },
	{ "max-request", required_argument, O_MAX_REQUEST, "SIZE",
	  "longest request line (default 16M, max 128M)" },
	{ "workdir", required_argument, O_WORKDIR, "DIR",
	  "the cells' directory (default: the current one)" },
	{ "figure-dir", required_argument, O_FIGURE_DIR, "DIR",
	  "figures go here (default WORKDIR/.coil/figures)" },
	{ "preload", required_argument, O_PRELOAD, "MODS",
	  "import these comma-separated modules at start" },
	{ "history", required_argument, O_HISTORY, "FILE",
	  "plain mode's history file (\"\" for none)" },
	{ "sandbox", required_argument, O_SANDBOX, "PROFILE",
	  "none, standard or strict (default standard)" },
	{ "allow-read", required_argument, O_ALLOW_READ, "DIR",
	  "let cells read DIR too (repeatable)" },
	{ "allow-write", required_argument, O_ALLOW_WRITE, "DIR",
	  "let cells write DIR too (repeatable)" },
	{ "allow-net", no_argument, O_ALLOW_NET, NULL,
	  "let cells use the network" },
	{ "memory", required_argument, O_MEMORY, "SIZE",
	  "memory a cell may use (default 4G)" },
	{ "max-procs", required_argument, O_MAX_PROCS, "N",
	  "processes and threads allowed (default 256)" },
	{ "max-file-size", required_argument, O_MAX_FILE_SIZE, "SIZE",
	  "largest file a cell may write (default 1G)" },
	{ "sandbox-require", no_argument, O_SANDBOX_REQUIRE, NULL,
	  "refuse to start if a protection is missing" },
	{ "sandbox-report", no_argument, O_SANDBOX_REPORT, NULL,
	  "print what the sandbox enforces here and exit" },
	{ "checkpoints", required_argument, O_CHECKPOINTS, "N",
	  "keep N checkpoints (default 8, 0: none)" },
	{ "checkpoint-memory", required_argument, O_CHECKPOINT_MEMORY, "SIZE",
	  "drop the oldest checkpoints when they hold more" },
	{ "help", no_argument, 'h', NULL, "show this help and exit" },
	{ "version", no_argument, 'V', NULL,
	  "show the version and licence and exit" },
};

static void
main_usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: coil [OPTION]...\n"
	    "A persistent Python session shared by a person and a language "
	    "model.\n\n");
	for (i = 0; i < nitems(main_options); i++) {
		const struct main_option *o = &main_options[i];
		char shortopt[5] = "    ", left[40];

		if (o->id < 256)
			snprintf(shortopt, sizeof shortopt, "-%c, ", o->id);
		snprintf(left, sizeof left, "%s--%s%s%s", shortopt, o->name,
		    o->arg ? " " : "", o->arg ? o->arg : "");
		/* Descriptions fit in 79 columns (tests/plain/version.sh). */
		fprintf(f, "  %-28s  %s\n", left, o->usage);
	}
	fprintf(f, "\nSIZE takes a suffix K, M or G.  Agent requests look like\n"
	    "{\"id\": 1, \"code\": \"1+1\"}; see coil(1) for the protocol."
	    "\n\nReport bugs to: %s\n", PACKAGE_BUGREPORT);
}

/* The GNU --version text: name and version, copyright, licence. */
static void
main_version(void)
{
	printf("%s\n%s.\n"
	    "License MIT: <https://opensource.org/license/mit>.\n"
	    "This is free software: you are free to change and redistribute "
	    "it.\nThere is NO WARRANTY, to the extent permitted by law.\n",
	    PACKAGE_STRING, COIL_COPYRIGHT);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
main_bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "coil: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'coil --help')\n");
	exit(2);
}

static double
main_seconds(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) || v > 1e7)
		main_bad("invalid number of seconds '%s'", s);
	(void)opt;
	return v;
}

static size_t
main_size(const char *s)
{
	unsigned long long v;

	if (parse_size(s, &v) == -1 || v == 0 || v > (1ULL << 40))
		main_bad("invalid size '%s'", s);
	return (size_t)v;
}

/* A size for an option whose bytes cross the worker's socket in one
 * frame: at most max (chan.h says why), or a usage error naming it. */
static size_t
main_frame_size(const char *opt, const char *s, unsigned int max)
{
	size_t v = main_size(s);

	if (v > max)
		main_bad("--%s %s is over the limit of %uM (the frames "
		    "between coil and its worker are at most %uM)", opt, s,
		    max >> 20, CHAN_MAX_FRAME >> 20);
	return v;
}

/* A whole number in [min, max], or a usage error. */
static long
main_count(const char *s, long min, long max)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || n < min || n > max)
		main_bad("invalid number '%s' (%ld to %ld)", s, min, max);
	return n;
}

static char *main_absdir(const char *d);

static void
main_add_dir(const char ***list, size_t *n, const char *dir)
{
	*list = xrealloc(*list, (*n + 1) * sizeof **list);
	(*list)[(*n)++] = main_absdir(dir);
}

static char *
main_absdir(const char *d)
{
	char *r = realpath(d, NULL);
	struct stat st;

	if (r == NULL || stat(r, &st) == -1 || !S_ISDIR(st.st_mode))
		main_bad("no such directory '%s'", d);
	return r;
}

static void
main_preload(struct coil_opts *o, const char *list)
{
	char *copy = xstrdup(list), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		o->preload = xrealloc(o->preload, (o->npreload + 2) *
		    sizeof *o->preload);
		o->preload[o->npreload++] = xstrdup(tok);
		o->preload[o->npreload] = NULL;
	}
	free(copy);
}

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
	proc_abort();
	if (main_sbx != NULL)
		sandbox_cleanup(main_sbx);
}

int
main(int argc, char **argv)
{
	struct coil_opts o = {
		.mode = MODE_AUTO, .timeout = 30, .grace = 2,
		.max_output = 64 << 10, .max_request = 16 << 20,
		.checkpoints = 8,
	};
	struct option lopts[nitems(main_options) + 1];
	char sopts[2 * nitems(main_options) + 2] = ":";
	size_t i, ns = 1;
	int c, rc;
	char *fig;
	const char *base;
	bool report = false;

	sandbox_conf_init(&o.sbx);
	for (i = 0; i < nitems(main_options); i++) {
		lopts[i] = (struct option){ main_options[i].name,
		    main_options[i].has_arg, NULL, main_options[i].id };
		if (main_options[i].id < 256) {
			sopts[ns++] = (char)main_options[i].id;
			if (main_options[i].has_arg != no_argument)
				sopts[ns++] = ':';
		}
	}
	lopts[i] = (struct option){ 0 };
	sopts[ns] = '\0';
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		switch (c) {
		case O_AGENT: o.mode = MODE_AGENT; break;
		case O_PLAIN: o.mode = MODE_PLAIN; break;
		case O_TIMEOUT: o.timeout = main_seconds("timeout", optarg); break;
		case O_GRACE: o.grace = main_seconds("grace", optarg); break;
		case O_MAX_OUTPUT:
			o.max_output = main_frame_size("max-output", optarg,
			    CHAN_MAX_OUTPUT);
			break;
		case O_MAX_REQUEST:
			o.max_request = main_frame_size("max-request", optarg,
			    CHAN_MAX_REQUEST);
			break;
		case O_WORKDIR:
			free((char *)o.workdir);
			o.workdir = main_absdir(optarg);
			break;
		case O_FIGURE_DIR:
			free((char *)o.figure_dir);
			o.figure_dir = xstrdup(optarg);
			break;
		case O_PRELOAD: main_preload(&o, optarg); break;
		case O_HISTORY: o.history = optarg; break;
		case O_SANDBOX:
			if (sandbox_parse_profile(optarg, &o.sbx.profile) == -1)
				main_bad("unknown sandbox profile '%s' (none, "
				    "standard or strict)", optarg);
			break;
		case O_ALLOW_READ:
			main_add_dir(&o.sbx.allow_read, &o.sbx.n_allow_read,
			    optarg);
			break;
		case O_ALLOW_WRITE:
			main_add_dir(&o.sbx.allow_write, &o.sbx.n_allow_write,
			    optarg);
			break;
		case O_ALLOW_NET: o.sbx.allow_net = true; break;
		case O_MEMORY: o.sbx.memory = main_size(optarg); break;
		case O_MAX_FILE_SIZE: o.sbx.max_file_size = main_size(optarg); break;
		case O_MAX_PROCS:
			o.sbx.max_procs = (long)main_count(optarg, 1, 1 << 22);
			break;
		case O_SANDBOX_REQUIRE: o.sbx.require = true; break;
		case O_SANDBOX_REPORT: report = true; break;
		case O_CHECKPOINTS:
			o.checkpoints = (int)main_count(optarg, 0, 1000);
			break;
		case O_CHECKPOINT_MEMORY:
			o.checkpoint_memory = main_size(optarg);
			break;
		case 'h':
			main_usage(stdout);
			return 0;
		case 'V':
			main_version();
			return 0;
		case ':':
			main_bad("option '%s' needs an argument",
			    argv[optind - 1]);
		default:
			/* optopt is the letter of an unknown short option
			 * (perhaps one of a group, "-xV"), 0 for a long one. */
			if (optopt > 0 && optopt < 256)
				main_bad("unknown option '-%c'", optopt);
			main_bad("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		main_bad("unexpected argument '%s'", argv[optind]);
	if (o.workdir == NULL)
		o.workdir = main_absdir(".");
	if (chdir(o.workdir) == -1)
		fatal_errno("cannot enter '%s'", o.workdir);
	if (o.figure_dir == NULL) {
		xasprintf(&fig, "%s/.coil/figures", o.workdir);
		o.figure_dir = fig;
	}
	o.sbx.workdir = o.workdir;
	{
		/* Figures are written by cells: outside the work dir their
		 * directory must be writable under the sandbox too. */
		size_t n = strlen(o.workdir);

		if (strncmp(o.figure_dir, o.workdir, n) != 0 ||
		    (o.figure_dir[n] != '/' && o.figure_dir[n] != '\0')) {
			if (mkdir(o.figure_dir, 0777) == -1 && errno != EEXIST)
				fatal_errno("cannot create '%s'", o.figure_dir);
			main_add_dir(&o.sbx.allow_write, &o.sbx.n_allow_write,
			    o.figure_dir);
		}
	}
	o.sbx.session = getpid();
	/* Where init makes the cells' temp dir if the sandbox's mount
	 * namespace cannot give a private one (sandbox_enter). */
	base = getenv("TMPDIR");
	o.sbx.tmp_base = base != NULL && *base == '/' ? base : "/tmp";
	/* From here on fatal tears the session down, and so does every
	 * return: nothing of it is left on the host. */
	main_sbx = &o.sbx;
	fatal_set_teardown(main_teardown);
	/* What coils killed before their teardown left: cgroups and temp
	 * dirs whose owner pid is gone. */
	sandbox_sweep(&o.sbx);
	/* and what this one might leave if it is killed */
	if (o.sbx.profile != SANDBOX_NONE && !report &&
	    proc_janitor(&o.sbx) == -1)
		fprintf(stderr, "coil: warning: no janitor (%s): if coil is "
		    "killed, its cgroup stays until the next coil starts\n",
		    strerror(errno));
	if (report) {
		struct sandbox_report rep;

		sandbox_probe(&o.sbx, &rep);
		sandbox_report_print(&rep, stdout);
		rc = o.sbx.require && !sandbox_report_complete(&rep) ? 1 : 0;
	} else {
		rc = o.mode == MODE_AGENT ? agent_main(&o) : plain_main(&o);
	}
	sandbox_cleanup(&o.sbx);
	main_sbx = NULL;
	for (i = 0; i < o.sbx.n_allow_read; i++)
		free((char *)o.sbx.allow_read[i]);
	for (i = 0; i < o.sbx.n_allow_write; i++)
		free((char *)o.sbx.allow_write[i]);
	free(o.sbx.allow_read);
	free(o.sbx.allow_write);
	free((char *)o.workdir);
	free((char *)o.figure_dir);
	for (i = 0; i < o.npreload; i++)
		free((char *)o.preload[i]);
	free(o.preload);
	return rc;
}
