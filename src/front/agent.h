/*
 * agent.h - the front ends a program speaks to on stdin and stdout:
 * agent mode (coil --agent, the JSON-lines protocol of request.h) and
 * the MCP server (coil --mcp, mcp.h).  Both are one client of the
 * session whose lines come from fd 0 and go to fd 1 through a conn
 * (conn.h), served in one poll loop with the signals that end coil and,
 * with --listen, the attach socket (listen.h).  What differs is the
 * protocol: how a line becomes requests and how the session's events
 * become lines, a struct agent_proto.  Returns the process exit status.
 */
#ifndef COIL_AGENT_H
#define COIL_AGENT_H

#include <stddef.h>

#include "conn.h"
#include "opts.h"
#include "session.h"

/* The client on stdio, as a protocol sees it. */
struct agent_io {
	const struct coil_opts *opts;
	struct session *s;
	int client;		/* its tag in the session */
	struct conn io;		/* stdin and stdout */
	void *proto;		/* the protocol's own state */
	bool resume_told;	/* --resume's report went out already (on
				   the first answer, and in each ping) */
};

struct agent_proto {
	/* One line from stdin, without its newline (blank ones too). */
	void (*line)(struct agent_io *a, const char *line, size_t len);
	/* A line over --max-request was skipped; head is its start. */
	void (*too_long)(struct agent_io *a, size_t bytes, const char *head,
	    size_t headlen);
	/* An event of the session for this client. */
	void (*event)(struct agent_io *a, const struct session_event *ev);
	/* The session cannot go on (why, in words): the last word on what
	 * is still owed, before the answers queued are drained; or NULL. */
	void (*failed)(struct agent_io *a, const char *why);
	unsigned attach_flags;	/* session_attach's */
};

/* Serve proto (its state: ctx) on stdio until input ends and nothing
 * is owed, a signal, or the session's end. */
int agent_serve(const struct coil_opts *opts, const struct agent_proto *proto,
    void *ctx);
int agent_main(const struct coil_opts *opts);
/* Block the signals that end coil (SIGTERM, SIGINT, SIGHUP) and SIGPIPE
 * (conn_hold_sigpipe); a signalfd that takes the first three, or -1. */
int agent_signals(void);

#endif
