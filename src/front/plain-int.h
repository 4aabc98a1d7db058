/*
 * plain-int.h - what the files of plain mode share (plain.c: the loops,
 * the terminal, the cells; plain-ckpt.c: coil's checkpoint magics,
 * rewritten into the session's requests).  Supervisor only.
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
/* A line that is one of coil's checkpoint magics (%snapshot, %rollback,
 * %snapshots) is done here and true returned; false for any other. */
bool plain_magic(struct plain *p, const char *line);
/* Whether line is one of those magics (a cell of its own). */
bool plain_is_magic(const char *line);

#endif
