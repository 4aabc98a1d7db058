/*
 * options.h - coil's command line: one table of options, which is also
 * the --help text, parsed into a struct coil_opts (opts.h).  Runs in the
 * supervisor, before any other process exists.
 *
 * Ownership: options_parse fills o with strings and lists it allocates
 * (whether or not it returns true); options_free frees them.
 */
#ifndef COIL_OPTIONS_H
#define COIL_OPTIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "opts.h"
#include "util.h"

/*
 * Fill o from the defaults and argv.  Returns true when coil should go
 * on and run; false when it should exit with *status: 0 after --help,
 * --version or --request-schema (their text is on stdout), 2 after a
 * usage error (one line on stderr, "coil: ... (try 'coil --help')").
 * On true, o->workdir and o->figure_dir are absolute or, for a relative
 * --figure-dir, relative to the work directory; nothing is created and
 * the current directory is unchanged.
 */
bool options_parse(int argc, char **argv, struct coil_opts *o, int *status);

void options_free(struct coil_opts *o);

/* Append dir's absolute path to a list of directories (the sandbox's
 * allow lists): 0, or -1 with a message when it is not a directory. */
int options_add_dir(const char ***list, size_t *n, const char *dir,
    char *err, size_t errlen);

/* The venv cells use (options-venv.c): --venv DIR, else $VIRTUAL_ENV
 * unless --no-venv.  Once the cell-writable roots are known
 * (hostfs_roots) and before any cell runs: its dir walked and held
 * (o->sbx.venv, venv_fd), its pyvenv.cfg read and checked against the
 * Python coil embeds.  0, or the exit status of a usage error (said). */
int options_venv(struct coil_opts *o);

/* Print a usage error as options_parse does; returns its exit status. */
int options_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The options of the session itself (those a replay takes over), as
 * {name: argument}: a string, true for a flag that is on, an array for
 * a repeated one.  A new reference. */
json_t *options_json(const struct coil_opts *o);

/* A replay's options: each recorded one (options_json's shape) the
 * command line did not give, through the option's own checks.  The file
 * is a cell's to write, so it never loosens what holds cells in: a
 * weaker --sandbox, a higher limit (--memory, --max-procs,
 * --max-file-size, --checkpoints) and any --allow-read, --allow-write or
 * --allow-net are left out, and only the command line gives them; a
 * stricter profile or a lower limit is taken.  What is left out, and
 * what this coil lacks or refuses, is said, one line each, in warnings
 * (nothing under --sandbox none, where none of it holds anything); the
 * rest of the replay goes on without it. */
void options_replay(struct coil_opts *o, json_t *recorded,
    struct buf *warnings);

#endif
