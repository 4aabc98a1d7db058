/*
 * session.h - the supervisor's core: one Python session behind every
 * front end.  It never runs Python.
 *
 * A front end submits requests (json objects checked by request_parse)
 * with a callback; the session queues them, serves them in order (the
 * immediate ops at once), runs cells in the worker under deadlines,
 * restarts a worker that dies, and calls back with events: the bytes a
 * cell writes (as they arrive, for streaming front ends) and one
 * response object per request.  All requests and responses pass through
 * session_submit and the callbacks, so a transcript has one place to
 * record them.
 *
 * The session runs inside the front end's loop: session_poll waits on
 * the session's descriptors and the caller's own, for at most timeout_ms.
 *
 * It also keeps the worker's checkpoints (ckpt.h): a worker that dies is
 * replaced by the newest checkpoint of the state it was in, and the
 * snapshot, snapshots, rollback and reset ops and exec's "atomic" are
 * served with them.  Warnings about them (a checkpoint that could not be
 * taken, one killed from outside) go with the next response.
 *
 * The supervisor is single-threaded, and must stay so: the session
 * forks (sandbox_spawn is a raw clone that skips glibc's fork handlers),
 * keeps its state in plain statics and fields without locks, and the
 * fatal teardown (util.h) runs in whatever state the one thread left.
 *
 * Errors and the end: nothing here calls exit(), and only out of memory
 * ends the process, through fatal's teardown (util.h).  When the session
 * cannot go on (init cannot start, the worker never starts, poll fails)
 * session_poll returns -1 and session_failure says why; the front end
 * ends its loop and returns, and main's session_free tears everything
 * down: checkpoints, init and the session's processes, its cgroup and
 * temp dir (sandbox_cleanup).
 *
 * Ownership: session_submit steals req and id.  Events and the response
 * object are borrowed for the duration of the callback.
 */
#ifndef COIL_SESSION_H
#define COIL_SESSION_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>

#include "opts.h"
#include "request.h"

enum origin { ORIGIN_AGENT, ORIGIN_PERSON, ORIGIN_REPLAY };

/* EV_DROPPED: the session is being freed before the request was
 * answered; the callback's last call, so it can free ctx. */
enum session_ev { EV_OUTPUT, EV_STDERR, EV_RESPONSE, EV_DROPPED };

struct session_event {
	enum session_ev kind;
	const char *data;	/* EV_OUTPUT, EV_STDERR: raw bytes */
	size_t len;
	json_t *msg;		/* EV_RESPONSE */
};

typedef void (*session_fn)(void *ctx, const struct session_event *ev);

struct session;

struct session *session_new(const struct coil_opts *opts, char *err,
    size_t errlen);
void session_free(struct session *s);

void session_submit(struct session *s, json_t *req, json_t *id, enum op op,
    enum origin origin, session_fn fn, void *ctx);

/* Output written while no cell runs (a thread of an earlier cell): with
 * a handler it goes there at once, else it is kept and attached to the
 * next exec response as "background". */
void session_set_background(struct session *s, session_fn fn, void *ctx);

/* Wait for and handle events; extra (may be NULL) are the caller's own
 * descriptors, their revents filled in.  Returns -1 when the session
 * cannot go on (session_failure says why): free it. */
int session_poll(struct session *s, struct pollfd *extra, int nextra,
    int timeout_ms);

/* True when nothing is running or queued. */
bool session_idle(const struct session *s);
/* True once a shutdown request has been answered. */
bool session_done(const struct session *s);
/* Why session_poll returned -1, in words for a person; NULL before. */
const char *session_failure(const struct session *s);
/* Interrupt the running cell, as the interrupt op does; false if none. */
bool session_interrupt(struct session *s);
/* The number of the last cell run. */
int session_cell(const struct session *s);

#endif
