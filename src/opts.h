/*
 * opts.h - the options of one coil run, filled by main.c from the
 * command line and read (never changed) by the rest of the supervisor.
 */
#ifndef COIL_OPTS_H
#define COIL_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"

enum coil_mode { MODE_AUTO, MODE_PLAIN, MODE_AGENT };

struct coil_opts {
	enum coil_mode mode;
	double timeout;			/* seconds a cell may run */
	double grace;			/* seconds between SIGINT and SIGKILL */
	size_t max_output;		/* bytes kept of stdout, stderr, result */
	size_t max_request;		/* bytes of one request line */
	const char *workdir;		/* absolute */
	const char *figure_dir;		/* absolute */
	const char *history;		/* plain mode's history file, or NULL */
	const char **preload;		/* modules imported at start, NULL-ended */
	size_t npreload;
	struct sandbox_conf sbx;	/* --sandbox and its limits */
	int checkpoints;		/* automatic ones kept; 0: none */
	unsigned long long checkpoint_memory;	/* bytes they may hold; 0: no cap */
};

#endif
