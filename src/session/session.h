/*
 * session.h - the supervisor's core: one Python session behind every
 * front end, and the hub its clients meet at.  It never runs Python.
 *
 * Clients.  Any number of clients attach (session_attach): the agent on
 * stdin, a person's terminal, attach sockets, a transcript writer.  Each
 * submits requests (json objects checked by request_parse); the session
 * gives each a sequence number, queues them in one order for everyone,
 * serves them (the immediate ops at once), runs cells in the worker
 * under deadlines, restarts a worker that dies, and answers each request
 * to the client that sent it.  A client with SESSION_OBSERVE also sees
 * every event of every client: a request queued and started (with its
 * origin), the output of each cell, each response, the worker's and the
 * checkpoints' changes, and the namespace after each cell.  Everything a
 * session says passes through the event queue, so a transcript or a UI
 * has one place to listen.
 *
 * Events are data (struct session_event), delivered from a queue by
 * session_run, never from inside session_submit, session_cancel,
 * session_detach or session_free: a callback may submit, cancel, attach
 * or detach freely (not free the session).  Output events carry the raw
 * bytes when a client asked for them (SESSION_RAW: a terminal), and the
 * same bytes shaped for JSON when one did (a request with "stream", an
 * observer): valid UTF-8 with bad bytes escaped, capped at the request's
 * output cap with a marker.  Nobody asking, no event is made: the
 * session's memory stays bounded by the caps whatever a cell prints.  Warnings (a checkpoint that could not be taken, a worker
 * that died between cells) and output written between cells go to the
 * client whose cell caused them, in its next response, and to observers
 * at once.
 *
 * The loop is the front end's: it polls the descriptors session_fds
 * gives, with its own, until session_next_deadline, then calls
 * session_run with what poll found.  session_poll does all that for a
 * front end that waits on a few descriptors of its own.
 *
 * It also keeps the worker's checkpoints (ckpt.h): a worker that dies is
 * replaced by the newest checkpoint of the state it was in, and the
 * snapshot, snapshots, rollback and reset ops and exec's "atomic" are
 * served with them.  The worker is untrusted (link.h).
 *
 * The supervisor is single-threaded, and must stay so: the session
 * forks (sandbox_spawn is a raw clone that skips glibc's fork handlers),
 * keeps its state in plain fields without locks, and the fatal teardown
 * (util.h) runs in whatever state the one thread left.
 *
 * Errors and the end: nothing here calls exit(), and only out of memory
 * or a broken invariant (the worker's life taking an event its state
 * cannot, session-life.c) ends the process, through fatal's teardown
 * (util.h).  When the session
 * cannot go on (init cannot start, the worker never starts, poll fails)
 * session_run returns -1 and session_failure says why; the front end
 * ends its loop and returns, and main's session_free tears everything
 * down: checkpoints, init and the session's processes, its cgroup and
 * temp dir (sandbox_cleanup).
 *
 * Ownership: session_submit steals req and id.  An event and all it
 * points to are borrowed for the duration of the callback;
 * response_ref keeps a response longer.
 *
 * Layer: the hub's contract, called by the front ends (agent, MCP,
 * plain, the UI, listen, replay); the layers inside are listed in
 * session-int.h.
 */
#ifndef COIL_SESSION_H
#define COIL_SESSION_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "figure.h"
#include "opts.h"
#include "request.h"
#include "response.h"

enum session_ev {
	EV_QUEUED,	/* a request was queued: req */
	EV_STARTED,	/* it started: cell (exec), 0 otherwise */
	EV_OUTPUT,	/* the running cell wrote: stream, data, text */
	EV_RESPONSE,	/* the answer: resp */
	EV_CANCELLED,	/* dropped before it ran: info.reason */
	EV_BACKGROUND,	/* written while no cell ran: stream, data, text */
	EV_WORKER,	/* info: state (starting, ready, died), how, cell */
	EV_CHECKPOINT,	/* info: event (taken, failed, dropped), cell, kind */
	EV_NAMESPACE,	/* info: cell, vars (as the vars op gives them) */
	EV_WARNING,	/* info: message (it also goes in a response) */
	EV_INPUT,	/* the running cell reads a line: info.prompt (and
			   info.page, help's text to page first); the
			   client answers with session_input */
	EV_ANSWERED,	/* and was given it: info.line (null: the end of
			   input), so that a transcript can give it again */
};

extern const char *const session_ev_names[];

struct session_event {
	enum session_ev kind;
	uint64_t seq;		/* the request it concerns; 0: none */
	int client;		/* who sent that request; 0: none */
	enum origin origin;
	const char *by;		/* its client's name (session_name), or
				   NULL: an unnamed client */
	json_t *id;		/* that request's id; NULL: none */
	bool streaming;		/* that request asked for output events */
	int cell;		/* EV_STARTED, and output while a cell runs */
	int stream;		/* output: 1 stdout, 2 stderr */
	const char *data;	/* output: the raw bytes, when a client
				   asked for them (SESSION_RAW); else NULL */
	size_t len;
	const char *text;	/* output shaped for JSON, NULL when unasked */
	size_t text_len;
	json_t *req;		/* EV_QUEUED: the request object */
	struct response *resp;	/* EV_RESPONSE */
	json_t *info;		/* the other events' fields */
	const char *session;	/* the branch it happened in; NULL: main */
};

typedef void (*session_fn)(void *ctx, const struct session_event *ev);

/* attach flags */
#define SESSION_OBSERVE	0x01	/* every event of every client */
#define SESSION_LIVE_BG	0x02	/* background output as events only,
				   not in the next response */
#define SESSION_RAW	0x04	/* output events carry the raw bytes */
#define SESSION_INPUT	0x08	/* its cells may read lines (input(),
				   pdb): it answers EV_INPUT */
#define SESSION_NO_NS	0x10	/* an observer that needs no namespace
				   events (a transcript): cells are not
				   summed up for it alone */

struct session;

struct session *session_new(const struct coil_opts *opts, char *err,
    size_t errlen);
/* Hand the events queued so far to the clients attached now (the loop
 * does, each turn). */
void session_deliver(struct session *s);
/* End the session; 0, or -1 when --export's notebook could not be
 * written (said on stderr): the caller's exit status should say so. */
int session_free(struct session *s);

/* A new client; its tag (> 0) goes with its requests and their events.
 * It also gets the events already queued (session_deliver hands them
 * out); one that learns of the past from session_history should come
 * after session_deliver, or it hears of some cells twice. */
int session_attach(struct session *s, enum origin origin, unsigned flags,
    session_fn fn, void *ctx);
/* Name a client (an attached person: listen.c), at most
 * REQUEST_LABEL_MAX characters, none a control character: the events
 * of its requests say it ("by", beside their origin), and an interrupt
 * it sends names it in the interrupted cell's answer.  Copied. */
void session_name(struct session *s, int client, const char *name);
/* Whether a client of that name is attached now. */
bool session_name_taken(const struct session *s, const char *name);
/* Make the session (branch) called name the client's default, as an
 * adopt request does, without an answer (--replay --from hands its
 * branch over so).  0, or -1 when no open session has that name. */
int session_set_home(struct session *s, int client, const char *name);
/* The client leaves: nothing more is delivered to it, its queued
 * requests are cancelled, a running one runs on for the observers. */
void session_detach(struct session *s, int client);
/* The client will send nothing more (its end of a socket shut), but
 * may still read: its cell waiting for a line gets the end of input.
 * Whether it has requests queued or running, owed an answer. */
bool session_hangup(struct session *s, int client);

/* Queue a request of client's; returns its sequence number.  Fields op
 * does not take are named in its answer's warnings. */
uint64_t session_submit(struct session *s, int client, json_t *req,
    json_t *id, enum op op);
/* Queue the answer to a line that was not a request: "invalid", with
 * message and id (stolen), given in its turn like every answer but
 * ping's and interrupt's. */
uint64_t session_reject(struct session *s, int client, json_t *id,
    const char *message);
/* Drop a queued request, or interrupt it if it runs.  False when seq is
 * neither (answered already, or never given). */
bool session_cancel(struct session *s, uint64_t seq);
/* The line (without its newline; NULL: end of file) the running cell's
 * EV_INPUT asked for.  -1 when no line was asked for. */
int session_input(struct session *s, const char *line);
/* Interrupt the running cell, as the interrupt op does; false if none. */
bool session_interrupt(struct session *s);

/* The session's descriptors: fills at most max entries of pfd and
 * returns how many there are (call again with room for all). */
int session_fds(struct session *s, struct pollfd *pfd, int max);
/* When session_run must be called even if no descriptor is ready:
 * CLOCK_MONOTONIC ms (now_ms), 0 for at once, -1 for never. */
int64_t session_next_deadline(const struct session *s);
/* Handle pfd[0..n) as filled by poll after session_fds, run due
 * deadlines and deliver the queued events.  -1 when the session cannot
 * go on (session_failure says why): free it. */
int session_run(struct session *s, const struct pollfd *pfd, int n);
/* All of the above once: wait at most timeout_ms (-1: no limit) on the
 * session and extra[0..nextra) (revents filled in). */
int session_poll(struct session *s, struct pollfd *extra, int nextra,
    int timeout_ms);

/* True when nothing is running, queued or waiting to be delivered. */
bool session_idle(const struct session *s);
/* True once a shutdown request has been answered. */
bool session_done(const struct session *s);
/* Why session_run returned -1, in words for a person; NULL before. */
const char *session_failure(const struct session *s);
/* The number of the last cell run. */
int session_cell(const struct session *s);
/* --resume: main's next cell is numbered cell + 1 or more, so that the
 * cells rebuilt from a transcript, and those after them, keep the
 * transcript's numbers (a cell not run again leaves its number
 * unused). */
void session_count_from(struct session *s, int cell);
/* --resume: how faithful the rebuilt state is (replay-resume.c's
 * "resumed" object, stolen), kept for ping and the front ends; the
 * transcript, held while the cells ran again, now marks the resume
 * with it and goes on recording (record.h: record_resumed; cut_at and
 * newline as there). */
void session_set_resumed(struct session *s, json_t *resumed,
    long long cut_at, bool newline);
/* That object (borrowed), or NULL: the session was not resumed. */
json_t *session_resumed(const struct session *s);

/* With --listen the hub keeps the cells that finished (the newest
 * SESSION_HISTORY_CELLS, at most SESSION_HISTORY_BYTES of lines), so a
 * client that attaches later sees what ran before it.  What to send
 * one that attaches now, before any event: a new array of lines, a
 * {"event": "history", "seq", "origin", "id", "request", "response"}
 * for each finished cell, oldest first, then "queued" for each cell
 * still waiting or running, and "started" for the running one with
 * "elapsed_ms", how long it has run; last, {"event": "checkpoint",
 * "state": "newest", "count", and "cell", "kind" of the newest
 * checkpoint when there is one}. */
#define SESSION_HISTORY_CELLS	200
#define SESSION_HISTORY_BYTES	((size_t)16 << 20)
json_t *session_history(const struct session *s);

/* The bytes of r's figures (response.h's figs) for an attach client
 * that asked for them in its hello (listen.c): a new array of
 * {"at": display index, "base64": bytes}, the figures in order while
 * they fit SESSION_FIGURES_MAX bytes in all (the rest left out: the UI
 * says so); NULL when r has none.  A line of them stays under the
 * least client queue (opts_max_queue), so the client is not dropped. */
#define SESSION_FIGURES_MAX	(FIGURE_REPLY_MAX / 4)
json_t *session_figures_json(const struct response *r);

/* The figures of the finished cells the history holds, for a client
 * that asks for them after it attached: a new array of lines
 * {"event": "figures", "seq", "figure_data": session_figures_json's},
 * oldest first; the hub keeps at most SESSION_HISTORY_FIGURES bytes of
 * them (the oldest let go) and SESSION_HISTORY_CELLS lines. */
#define SESSION_HISTORY_FIGURES	((size_t)24 << 20)
json_t *session_history_figures(const struct session *s);

/* An observer event as a protocol line's object: {"event": name, "seq",
 * "origin", ...}.  For attach sockets and transcripts (session-event.c:
 * the event alone, nothing of the hub's). */
json_t *session_event_json(const struct session_event *ev);

#endif
