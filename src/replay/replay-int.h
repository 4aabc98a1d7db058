/*
 * replay-int.h - the parts of coil --replay (replay.h) and what each
 * owns.  Supervisor only; nothing here runs a cell: the cells go to the
 * session's sandboxed worker like any client's.
 *
 *   replay-src.c    the file read as cells, whatever its kind (chosen
 *                   by content); a transcript streamed a line at a time
 *   replay-forms.c  notebooks, "# %%" files and chat logs, read whole
 *   replay.c        the front end: options, session, printing, status
 *   replay-fork.c   --from N: the cells up to a fork point, the branch,
 *                   --then's cells on it, and the hand-over to the
 *                   front end (or, with --check, the continuations
 *                   compared)
 *   replay-resume.c --resume: a transcript's session rebuilt on main,
 *                   each cell run again or not by crash recovery's
 *                   rule, then handed to the front end as it is
 *   ui-replay.c     the same cells stepped through in the curses UI
 *
 * Ownership: a struct rcell's members belong to it (rcell_clear frees
 * them); rsrc_next fills one the caller has cleared.
 */
#ifndef COIL_REPLAY_INT_H
#define COIL_REPLAY_INT_H

#include <jansson.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "check.h"
#include "opts.h"
#include "session.h"
#include "util.h"

/* The kinds of file replay reads. */
enum rsrc_kind { RS_TRANSCRIPT, RS_NOTEBOOK, RS_PERCENT, RS_OPENAI,
	RS_ANTHROPIC };
extern const char *const rsrc_kind_names[];

/* One cell to run again. */
struct rcell {
	int n;			/* its number in the file: the recorded
				   cell, the notebook's code cell, ... */
	int line;		/* its line in the file; 0: none */
	json_t *req;		/* the request to submit (op filled in) */
	json_t *expect;		/* what it gave then, as check_view reads
				   it; NULL: nothing to compare */
	bool interrupted;	/* it was interrupted (an interrupt op, a
				   person's Ctrl-C), interrupt_ms after it
				   started: so is the replay */
	double interrupt_ms;
	json_t *lines;		/* what its input() was given, in order
				   (strings; null the end of input); NULL:
				   nothing */
	bool notebook;		/* a notebook's: its input() fails as
				   Jupyter's did, run without stdin */
	char *pin;		/* once it ran, pin the state as this
				   snapshot: a rollback later in the file
				   goes back to it; NULL: none */
	json_t *effects;	/* a transcript's: what it did outside the
				   namespace (check_once), or NULL */
	json_int_t effects_more;
};

void rcell_clear(struct rcell *c);

/* What the pins' names begin with: the first a file does not hold
 * anywhere, so that no snapshot of the session's own is replaced. */
#define REPLAY_PIN_PREFIXES 4
extern const char *const replay_pin_prefixes[REPLAY_PIN_PREFIXES];

struct rsrc;

/* Open path and tell its kind from its content: NULL with a message
 * when it cannot be read, is no kind replay knows, or is refused (a
 * newer transcript format, a chat log without Python calls).  code_key
 * and tool choose a chat log's calls (NULL: "code", any tool). */
struct rsrc *rsrc_open(const char *path, const char *code_key,
    const char *tool, char *err, size_t errlen);
enum rsrc_kind rsrc_kind(const struct rsrc *src);
/* A transcript's recorded options (options_json's shape), borrowed;
 * NULL for other kinds. */
json_t *rsrc_options(const struct rsrc *src);
/* The next cell: 1, 0 at the end, -1 when the file goes bad (err says
 * where); a cut last line of a transcript is the end, and rsrc_note
 * says so. */
int rsrc_next(struct rsrc *src, struct rcell *c, char *err, size_t errlen);
/* A transcript's first header (borrowed), or NULL. */
json_t *rsrc_first_header(const struct rsrc *src);
/* Once rsrc_next said 0: where a last line cut short began (-1: none
 * was), and whether the last line is whole but lacks its newline. */
void rsrc_end(const struct rsrc *src, long long *cut_at, bool *unended);
/* Once rsrc_next said 0: the requests the transcript has no answer to
 * (coil was killed before it answered), each {"op", "line"} appended
 * to list. */
void rsrc_unanswered(const struct rsrc *src, json_t *list);
/* A remark on the file for the person (a cut last line), or NULL. */
const char *rsrc_note(const struct rsrc *src);
void rsrc_close(struct rsrc *src);

/* ---- the front ends (replay.c) ---- */

/* One run of cells through the session, as one client of origin
 * "replay" submitting one request at a time. */
struct replay {
	const struct coil_opts *opts;
	struct session *s;
	int client;
	int sfd;		/* the signals that end the replay */
	int signo;
	struct check_noise noise;
	uint64_t seq;		/* the request whose answer is waited for */
	struct response *resp;	/* its answer */
	int64_t interrupt_at;	/* when to interrupt the cell, as the
				   recording was (ms); 0: never */
	json_t *lines;		/* what its input() is given (borrowed) */
	size_t nline;		/* of which it had so many */
	const char *on;		/* the branch the cells go to ("session");
				   NULL: the client's default, main */
	int cells, differ, skipped;
	char why[512];		/* why the last cell was skipped */
};

/* replay's client callback (session_attach's fn, ctx the replay). */
void replay_on_event(void *ctx, const struct session_event *ev);
/* Block SIGTERM, SIGINT and SIGHUP (the mask before in *old, when not
 * NULL) and take them through a new signalfd; -1 on failure. */
int replay_signals(sigset_t *old);
/* Run the session until rp's answer comes: 0, or -1 when the session
 * failed (said) or a signal came (rp->signo). */
int replay_wait(struct replay *rp);
/* Run c on rp->on: 1 with *got, its answer (a new reference), 0 when
 * it is no request (skipped, said on stdout), -1 when the replay must
 * stop.  A cell with a pin is pinned once it ran. */
int replay_run(struct replay *rp, const struct rcell *c, json_t **got);
/* The cell and its new outcome, as a person reads a REPL (stdout). */
void replay_print(const struct rcell *c, json_t *got);
/* Compare got with what the file expects; a diff on stdout when they
 * differ (counted in rp->differ): whether they did. */
bool replay_check(struct replay *rp, const struct rcell *c, json_t *got);
/* What replay prints on stdout (or where replay_out_to says: stderr
 * while a front end takes the session over), made safe for a
 * terminal. */
void replay_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void replay_out_to(FILE *f);

/* ---- --from (replay-fork.c) ---- */

/* With --then: open FILE2 now, before anything runs (bad input found
 * early).  0, or the exit status 2 with a message on stderr. */
int replay_fork_prepare(const struct coil_opts *o);
/* --from N --then FILE2 --check: the replay_main of it (rp is set up,
 * its client attached); the exit status. */
int replay_fork_check(struct replay *rp);

/* The file replay_prepare opened, now the caller's (rsrc_close it): the
 * curses UI's replay takes it instead of replay_main. */
struct rsrc *replay_take(void);
/* c's request checked as a line on stdin is (request_parse), without
 * the file's id: 0 with *req (a new reference) and *op, or -1 with why
 * it is no request. */
int replay_request(const struct rcell *c, json_t **req, int *op,
    char *err, size_t errlen);

/* ---- the kinds read whole (replay-forms.c) ---- */

/* Every cell of a notebook, "# %%" file or chat log open as f, as a
 * list of {"n", "line", "req", "expect"?}, and its kind: a new
 * reference, or NULL with a message (not one of these kinds, not JSON,
 * no cell to run). */
/* The error a check compares, {"type", "message"} (a new object) of
 * the two values given (borrowed; NULL is null): the one place a
 * cell's expected error is built, whatever file it came from. */
json_t *rforms_error(json_t *type, json_t *message);
json_t *rforms_read(FILE *f, const char *path, const char *code_key,
    const char *tool, enum rsrc_kind *kind, char *err, size_t errlen);

#endif
