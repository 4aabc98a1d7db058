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
#include "opts.h"
#include "plain.h"
#include "util.h"

enum {
	O_AGENT = 256, O_PLAIN, O_TIMEOUT, O_GRACE, O_MAX_OUTPUT,
	O_MAX_REQUEST, O_WORKDIR, O_FIGURE_DIR, O_PRELOAD, O_HISTORY,
	O_SANDBOX, O_HELP, O_VERSION, O_CHECKPOINTS, O_CHECKPOINT_MEMORY,
};

static const struct main_option {
	const char *name;
	int has_arg;
	int id;
	const char *arg;
	const char *usage;
} main_options[] = {
	{ "agent", no_argument, O_AGENT, NULL,
	  "serve JSON requests, one a line, on stdin/stdout" },
	{ "plain", no_argument, O_PLAIN, NULL,
	  "a line REPL (the default when stdin is not a terminal)" },
	{ "timeout", required_argument, O_TIMEOUT, "SECS",
	  "interrupt a cell after SECS seconds (default 30)" },
	{ "grace", required_argument, O_GRACE, "SECS",
	  "kill a cell that ignores the interrupt after SECS (default 2)" },
	{ "max-output", required_argument, O_MAX_OUTPUT, "SIZE",
	  "keep SIZE bytes of output, stderr, result (default 64K)" },
	{ "max-request", required_argument, O_MAX_REQUEST, "SIZE",
	  "longest request line accepted (default 16M)" },
	{ "workdir", required_argument, O_WORKDIR, "DIR",
	  "the cells' working directory (default: the current one)" },
	{ "figure-dir", required_argument, O_FIGURE_DIR, "DIR",
	  "where figures are saved (default WORKDIR/.coil/figures)" },
	{ "preload", required_argument, O_PRELOAD, "MODS",
	  "import these comma-separated modules at start" },
	{ "history", required_argument, O_HISTORY, "FILE",
	  "plain mode's history file (\"\" for none)" },
	{ "sandbox", required_argument, O_SANDBOX, "PROFILE",
	  "none, standard or strict (default standard)" },
	{ "checkpoints", required_argument, O_CHECKPOINTS, "N",
	  "keep N automatic checkpoints (default 8, 0: none)" },
	{ "checkpoint-memory", required_argument, O_CHECKPOINT_MEMORY, "SIZE",
	  "drop the oldest checkpoints when they hold more" },
	{ "help", no_argument, O_HELP, NULL, "show this help and exit" },
	{ "version", no_argument, O_VERSION, NULL,
	  "show the version and exit" },
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
		char left[40];

		snprintf(left, sizeof left, "--%s%s%s", o->name,
		    o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-24s %s\n", left, o->usage);
	}
	fprintf(f, "\nSIZE takes a suffix K, M or G.  Agent requests look like"
	    " {\"id\": 1, \"code\": \"1+1\"};\nsee coil(1) for the protocol."
	    "\n\nReport bugs through the project's issue tracker.\n");
}

static void __attribute__((noreturn, format(printf, 1, 2)))
main_bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "coil: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'coil --help' for more information.\n");
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

int
main(int argc, char **argv)
{
	struct coil_opts o = {
		.mode = MODE_AUTO, .timeout = 30, .grace = 2,
		.max_output = 64 << 10, .max_request = 16 << 20,
		.sandbox = "standard", .checkpoints = 8,
	};
	struct option lopts[nitems(main_options) + 1];
	size_t i;
	int c, rc;
	char *fig;

	for (i = 0; i < nitems(main_options); i++)
		lopts[i] = (struct option){ main_options[i].name,
		    main_options[i].has_arg, NULL, main_options[i].id };
	lopts[i] = (struct option){ 0 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", lopts, NULL)) != -1) {
		switch (c) {
		case O_AGENT: o.mode = MODE_AGENT; break;
		case O_PLAIN: o.mode = MODE_PLAIN; break;
		case O_TIMEOUT: o.timeout = main_seconds("timeout", optarg); break;
		case O_GRACE: o.grace = main_seconds("grace", optarg); break;
		case O_MAX_OUTPUT: o.max_output = main_size(optarg); break;
		case O_MAX_REQUEST: o.max_request = main_size(optarg); break;
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
			if (strcmp(optarg, "none") != 0 &&
			    strcmp(optarg, "standard") != 0 &&
			    strcmp(optarg, "strict") != 0)
				main_bad("unknown sandbox profile '%s' (none, "
				    "standard or strict)", optarg);
			o.sandbox = optarg;
			break;
		case O_CHECKPOINTS: {
			char *end;
			long n;

			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    n < 0 || n > 1000)
				main_bad("invalid number of checkpoints '%s' "
				    "(0 to 1000)", optarg);
			o.checkpoints = (int)n;
			break;
		}
		case O_CHECKPOINT_MEMORY:
			o.checkpoint_memory = main_size(optarg);
			break;
		case O_HELP:
			main_usage(stdout);
			return 0;
		case O_VERSION:
			printf("coil %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			main_bad("option '%s' needs an argument",
			    argv[optind - 1]);
		default:
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
	rc = o.mode == MODE_AGENT ? agent_main(&o) : plain_main(&o);
	free((char *)o.workdir);
	free((char *)o.figure_dir);
	for (i = 0; i < o.npreload; i++)
		free((char *)o.preload[i]);
	free(o.preload);
	return rc;
}
