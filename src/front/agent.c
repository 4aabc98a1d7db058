/*
 * agent.c - the stdio front ends' loop, and agent mode (see agent.h).
 *
 * stdin and stdout are one client of the session, through a conn
 * (conn.h): a line longer than --max-request is answered and skipped
 * without ever being held whole, and answers wait in a bounded queue,
 * so a model that reads slowly never holds up a deadline, and one that
 * stops reading is dropped with a message.  In agent mode each response
 * is one line, and the stream events of a request come before its
 * response.  With --listen the same session is served on the attach
 * socket too (listen.h), in this same loop.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "agent.h"
#include "replay.h"
#include "conn.h"
#include "listen.h"
#include "response.h"
#include "session.h"
#include "util.h"
#include "wire.h"

/* How long the answers still queued at the end may take to go out. */
#define AGENT_DRAIN_MS 5000

struct agent {
	struct agent_io c;	/* first: the protocol's view */
	const struct agent_proto *proto;
	struct listener *listener;
	int sfd;		/* SIGTERM, SIGINT, SIGHUP */
	int signo;		/* the one that ends us, or 0 */
	struct pollfd *pfd;	/* the loop's, kept from turn to turn */
	size_t npfd;
};

/* --resume: the first answer (text, len, its newline last) goes out
 * with "resumed", how faithful the rebuilt state is, as its last
 * field: agent mode writes nothing before a request, and the model
 * reads that answer first.  The response itself is shared with the
 * session's other clients and is not changed. */
static void
agent_resume_tell(struct agent_io *a, enum op op, const char *text,
    size_t len)
{
	char *r = json_dumps(session_resumed(a->s), JSON_COMPACT);
	struct buf b;

	a->resume_told = true;
	/* a ping's answer has it already */
	if (r == NULL || op == OP_PING || len < 3 || text[len - 2] != '}') {
		free(r);
		wire_send_text(&a->io, text, len);
		return;
	}
	buf_init(&b);
	buf_add(&b, text, len - 2);
	buf_printf(&b, ",\"resumed\":%s}\n", r);
	wire_send_text(&a->io, b.p, b.len);
	buf_free(&b);
	free(r);
}

/* The session's events for our requests: a response, and the output of
 * a cell that asked for it ("stream"), already capped and escaped. */
static void
agent_json_event(struct agent_io *a, const struct session_event *ev)
{
	const char *text;
	size_t len;

	switch (ev->kind) {
	case EV_OUTPUT:
		if (ev->streaming && ev->text != NULL)
			wire_send(&a->io, json_pack("{s:O, s:s, s:s%}", "id",
			    ev->id, "event", ev->stream == 2 ? "stderr" :
			    "output", "data", ev->text, ev->text_len));
		break;
	case EV_RESPONSE:
		text = response_text(ev->resp, a->opts->brief ?
		    RESPONSE_BRIEF : 0, &len);
		if (!a->resume_told && session_resumed(a->s) != NULL)
			agent_resume_tell(a, ev->resp->op, text, len);
		else
			wire_send_text(&a->io, text, len);
		break;
	default:
		break;
	}
}

static void
agent_json_line(struct agent_io *a, const char *line, size_t len)
{
	wire_line(a->s, a->client, line, len);
}

static void
agent_json_too_long(struct agent_io *a, size_t bytes, const char *head,
    size_t headlen)
{
	wire_too_long(a->s, a->client, bytes, a->opts->max_request, head,
	    headlen);
}

static const struct agent_proto agent_json = {
	agent_json_line, agent_json_too_long, agent_json_event, NULL, 0,
};

/* The conn's and the session's callbacks, handed to the protocol. */
static void
agent_on_event(void *ctx, const struct session_event *ev)
{
	struct agent *a = ctx;

	a->proto->event(&a->c, ev);
}

static void
agent_line(void *ctx, const char *line, size_t len)
{
	struct agent *a = ctx;

	if (!session_done(a->c.s))
		a->proto->line(&a->c, line, len);
}

static void
agent_too_long(void *ctx, size_t bytes, const char *head, size_t headlen)
{
	struct agent *a = ctx;

	if (!session_done(a->c.s))
		a->proto->too_long(&a->c, bytes, head, headlen);
}

static const struct conn_ops agent_ops = { agent_line, agent_too_long };

int
agent_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    conn_hold_sigpipe() == -1)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Whether the loop goes on: the session has more to do for us. */
static bool
agent_going(struct agent *a)
{
	if (a->signo != 0 || conn_dropped(&a->c.io) != NULL ||
	    session_done(a->c.s))
		return false;
	return !(a->c.io.eof && session_idle(a->c.s));
}

/* poll's timeout for the session's next deadline. */
static int
agent_wait_ms(const struct agent *a)
{
	int64_t when = session_next_deadline(a->c.s), now = now_ms();

	if (when < 0)
		return -1;
	return when <= now ? 0 : when - now > 1 << 30 ? 1 << 30 :
	    (int)(when - now);
}

/* One turn of the loop: [session][stdin, stdout][signals][listener]. */
static int
agent_turn(struct agent *a)
{
	int ns = session_fds(a->c.s, NULL, 0), nl = a->listener != NULL ?
	    listener_fds(a->listener, NULL, 0) : 0, rc;
	struct pollfd *pfd;

	if ((size_t)(ns + 3 + nl) > a->npfd) {
		a->npfd = (size_t)(ns + 3 + nl);
		a->pfd = xrealloc(a->pfd, a->npfd * sizeof *a->pfd);
	}
	pfd = a->pfd;
	session_fds(a->c.s, pfd, ns);
	conn_pollfds(&a->c.io, &pfd[ns]);
	pfd[ns + 2] = (struct pollfd){ .fd = a->sfd, .events = POLLIN };
	if (a->listener != NULL)
		listener_fds(a->listener, &pfd[ns + 3], nl);
	rc = poll(pfd, (nfds_t)(ns + 3 + nl), agent_wait_ms(a));
	if (rc == -1 && errno != EINTR) {
		coil_error("poll: %s", strerror(errno));
		return -1;
	}
	if (rc <= 0)
		memset(pfd, 0, (size_t)(ns + 3 + nl) * sizeof *pfd);
	if (pfd[ns + 1].revents)
		conn_flush(&a->c.io);
	if (pfd[ns].revents)
		conn_read(&a->c.io, &agent_ops, a);
	if (a->listener != NULL)
		listener_run(a->listener, &pfd[ns + 3], nl);
	if (pfd[ns + 2].revents & POLLIN) {
		struct signalfd_siginfo si;

		if (read(a->sfd, &si, sizeof si) == sizeof si)
			a->signo = (int)si.ssi_signo;
	}
	rc = session_run(a->c.s, pfd, ns);
	if (rc == -1)
		coil_error("%s", session_failure(a->c.s));
	return rc;
}

static int
agent_loop(struct agent *a)
{
	int rc = 0;

	while (agent_going(a)) {
		if (a->c.io.eof && a->listener != NULL)
			listener_quiet(a->listener);
		if (agent_turn(a) == -1) {
			rc = 1;
			break;
		}
	}
	if (a->signo != 0)
		return 128 + a->signo;
	if (rc != 0 && a->proto->failed != NULL)
		a->proto->failed(&a->c, session_failure(a->c.s) != NULL ?
		    session_failure(a->c.s) : "coil's loop failed");
	/* What was answered goes out, even when the session failed. */
	conn_drain(&a->c.io, AGENT_DRAIN_MS);
	/* A client that went away is no error of ours: the session just
	 * ends.  One that stopped reading, or a write that failed
	 * otherwise, is. */
	if (conn_dropped(&a->c.io) != NULL && !a->c.io.left) {
		coil_error("%s", conn_dropped(&a->c.io));
		rc = 1;
	}
	return rc;
}

int
agent_serve(const struct coil_opts *opts, const struct agent_proto *proto,
    void *ctx)
{
	struct agent a = {
		.c = { .opts = opts, .proto = ctx }, .proto = proto,
	};
	char err[512], branch[REQUEST_LABEL_MAX + 1];
	int rc;

	if ((a.sfd = agent_signals()) == -1) {
		coil_error("signalfd: %s", strerror(errno));
		return 1;
	}
	a.c.s = session_new(opts, err, sizeof err);
	if (a.c.s == NULL) {
		coil_error("%s", err);
		close(a.sfd);
		return 1;
	}
	if (opts->listen != NULL && (a.listener = listener_open(opts->listen,
	    a.c.s, opts, err, sizeof err)) == NULL) {
		coil_error("--listen: %s", err);
		session_free(a.c.s);
		close(a.sfd);
		return 1;
	}
	conn_init_stdio(&a.c.io, opts->max_request, opts_max_queue(opts));
	a.c.client = session_attach(a.c.s, ORIGIN_AGENT, proto->attach_flags,
	    agent_on_event, &a);
	/* --replay FILE --from N: the session picked up there (replay.h) */
	if (replay_handover(opts, a.c.s, a.c.client, branch, sizeof branch,
	    err, sizeof err) == -1) {
		coil_error("%s", err);
		rc = 1;
	} else {
		rc = agent_loop(&a);
	}
	listener_close(a.listener, a.signo != 0 ? "coil was stopped by a "
	    "signal" : "the agent's session ended", 1000);
	if (session_free(a.c.s) == -1 && rc == 0)
		rc = 1;
	conn_free(&a.c.io);
	free(a.pfd);
	close(a.sfd);
	return rc;
}

int
agent_main(const struct coil_opts *opts)
{
	return agent_serve(opts, &agent_json, NULL);
}
