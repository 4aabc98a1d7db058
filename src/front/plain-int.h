/*
 * plain-int.h - what the files of plain mode share (plain.c: the loops,
 * the terminal, the cells; plain-ckpt.c: coil's checkpoint magics,
 * rewritten into the session's requests, and the table of all the
 * magics done here; plain-branch.c: the magics of branches;
 * plain-page.c: a long text paged).
 * Supervisor only.
 */
#ifndef COIL_PLAIN_INT_H
#define COIL_PLAIN_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "opts.h"
#include "request.h"
#include "response.h"
#include "session.h"
#include "termsafe.h"
#include "util.h"

struct plain {
	const struct coil_opts *opts;
	struct session *s;
	bool tty;
	struct buf cell;	/* lines of the cell being typed */
	bool waiting;		/* a request is in flight */
	bool eof;
	bool failed;		/* some cell raised (non-tty exit status) */
	bool incomplete;
	bool lost;		/* a write failed: the reader is gone */
	bool broken;		/* the session cannot go on */
	struct response *reply;	/* last response, for synchronous calls */
	char *ask;		/* the running cell reads a line: its prompt */
	char *page;		/* or has help's text paged: the text */
	char *answer;		/* the line read for it */
	bool answered;		/* answer is ready (NULL: end of input) */
	int client;		/* our tag in the session */
	/* The session this prompt's requests go to (the session's
	 * default for our client, which %switch sets): NULL for main, the
	 * prompt's "[b1] " otherwise; closed while it was, the prompt
	 * says so until %switch. */
	char *branch;
	bool branch_closed;
	bool fork_noted;	/* fork's note on files was shown */
	/* fd 1 and 2 on a terminal: what is written there passes through
	 * termsafe (a cell does not drive the person's terminal); to a
	 * pipe or a file it is written as it is */
	bool safe[3];
	struct termsafe ts[3];
};

/* Write s to fd, unless a write already failed (the reader is gone): a
 * whole text, made safe first when fd is a terminal. */
void plain_puts(int fd, const char *s);
/* Print a response's warnings on stderr. */
void plain_warnings(const struct response *r);
/* Send one request (stolen) and turn the loop until it is answered; the
 * response (the plain's, valid until the next call), or NULL when the
 * session broke first. */
struct response *plain_call(struct plain *p, json_t *req, enum op op);
/* Print what a magic's op said: its error, then its warnings.
 * Returns false when it failed (r NULL: the session broke). */
bool plain_op_result(struct plain *p, const struct response *r);
/* A size in bytes (an integer, else "?") as "512B", "3.4M". */
void plain_size(char *out, size_t len, json_t *v);

/* The magics of branches (plain-branch.c): %fork [NAME] [--from X]
 * [-n N], %sessions, %switch NAME and %close NAME, arg their argument
 * as typed. */
void plain_m_fork(struct plain *p, const char *arg);
void plain_m_sessions(struct plain *p, const char *arg);
void plain_m_switch(struct plain *p, const char *arg);
void plain_m_close(struct plain *p, const char *arg);

/* A line that is one of coil's checkpoint magics (%snapshot, %rollback,
 * %snapshots) is done here and true returned; false for any other. */
bool plain_magic(struct plain *p, const char *line);
/* Whether line is one of those magics (a cell of its own). */
bool plain_is_magic(const char *line);

/* plain.c: bytes to fd 1 or 2 as they are; nothing once a write
 * failed (the reader is gone). */
void plain_raw(int fd, const char *p, size_t n);
/* plain-page.c: text through $PAGER (less -FX), or printed. */
void plain_page(const struct plain *p, const char *text);

/* plain-branch.c: the session the prompt names (none for main). */
void plain_branch_set(struct plain *p, const char *name);

#endif
