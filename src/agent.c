/*
 * agent.c - agent mode (see agent.h).
 *
 * Input is read without blocking and split into lines here, so a line
 * longer than --max-request is answered "invalid" and skipped without
 * ever being held whole.  Each response is written as one line and
 * flushed; stream events of a request always come before its response.
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
#include "outbuf.h"
#include "request.h"
#include "session.h"
#include "util.h"

struct agent {
	const struct coil_opts *opts;
	struct session *s;
	struct buf in;
	bool skipping;		/* inside an over-long line */
	size_t skipped;
	bool eof;
	bool lost;		/* stdout failed (EPIPE: the client left) */
	bool write_error;	/* and not with EPIPE: exit 1 */
};

/* One request's stream state: bytes not yet sent because they may be
 * the start of a UTF-8 character, and how much was streamed. */
struct agent_req {
	struct agent *a;
	json_t *id;
	bool stream;
	struct buf carry[2];
	size_t sent[2];
};

/* Write one line.  Once stdout has failed nothing more is written and
 * the loop ends (agent_main), so that main tears the session down. */
static void
agent_write(struct agent *a, json_t *msg)
{
	char *line;
	size_t n;

	if (a->lost)
		return;
	line = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(6));
	if (line == NULL)
		fatal("cannot encode a response");
	n = strlen(line);
	line[n] = '\n';
	if (write_all(1, line, n + 1) == -1) {
		/* Nobody reads our answers any more. */
		a->lost = true;
		if (errno != EPIPE) {
			a->write_error = true;
			fprintf(stderr, "coil: cannot write a response: %s\n",
			    strerror(errno));
		}
	}
	free(line);
}

static void
agent_invalid(struct agent *a, json_t *id, const char *msg)
{
	json_t *o = json_pack("{s:O, s:s, s:{s:s, s:s}}", "id", id,
	    "status", "invalid", "error", "type", "InvalidRequest",
	    "message", msg);

	agent_write(a, o);
	json_decref(o);
}

static void
agent_stream(struct agent_req *ar, int which, const char *p, size_t n,
    bool final)
{
	static const char *names[] = { "output", "stderr" };
	struct buf *c = &ar->carry[which];
	size_t cap = ar->a->opts->max_output, ok;
	char *text;
	size_t len;
	json_t *ev;

	if (ar->sent[which] >= cap) {
		return;
	}
	buf_add(c, p, n);
	ok = final ? c->len : utf8_complete_prefix(c->p, c->len);
	if (ok == 0)
		return;
	if (ar->sent[which] + ok > cap)
		ok = cap - ar->sent[which];
	text = utf8_escape(c->p, ok, &len);
	ar->sent[which] += ok;
	buf_consume(c, ok);
	if (ar->sent[which] >= cap) {
		char *more;

		xasprintf(&more, "%s\n[... coil: streaming stopped after %zu "
		    "bytes; the response keeps the head and the tail ...]\n",
		    text, cap);
		free(text);
		text = more;
		len = strlen(text);
	}
	ev = json_pack("{s:O, s:s, s:s%}", "id", ar->id, "event",
	    names[which], "data", text, len);
	agent_write(ar->a, ev);
	json_decref(ev);
	free(text);
}

static void
agent_on_event(void *ctx, const struct session_event *ev)
{
	struct agent_req *ar = ctx;

	switch (ev->kind) {
	case EV_OUTPUT:
	case EV_STDERR:
		if (ar->stream)
			agent_stream(ar, ev->kind == EV_STDERR, ev->data,
			    ev->len, false);
		break;
	case EV_RESPONSE:
	case EV_DROPPED:
		if (ev->kind == EV_RESPONSE) {
			if (ar->stream) {
				agent_stream(ar, 0, "", 0, true);
				agent_stream(ar, 1, "", 0, true);
			}
			agent_write(ar->a, ev->msg);
		}
		json_decref(ar->id);
		buf_free(&ar->carry[0]);
		buf_free(&ar->carry[1]);
		free(ar);
		break;
	}
}

static void
agent_line(struct agent *a, const char *line, size_t len)
{
	char err[512];
	json_t *req, *id;
	enum op op;
	struct agent_req *ar;
	size_t i;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return;		/* blank lines are ignored */
	if (request_parse(line, len, &req, &id, &op, err, sizeof err) == -1) {
		agent_invalid(a, id, err);
		json_decref(id);
		return;
	}
	ar = xcalloc(1, sizeof *ar);
	ar->a = a;
	ar->id = json_incref(id);
	ar->stream = json_is_true(json_object_get(req, "stream"));
	buf_init(&ar->carry[0]);
	buf_init(&ar->carry[1]);
	session_submit(a->s, req, id, op, ORIGIN_AGENT, agent_on_event, ar);
}

/* Split what arrived into lines; an over-long line is skipped as it
 * streams past and answered once its end is seen. */
static void
agent_lines(struct agent *a)
{
	char *nl;
	size_t max = a->opts->max_request;

	for (;;) {
		nl = memchr(a->in.p, '\n', a->in.len);
		if (a->skipping) {
			if (nl == NULL) {
				a->skipped += a->in.len;
				buf_consume(&a->in, a->in.len);
				return;
			}
			a->skipped += (size_t)(nl - a->in.p);
			buf_consume(&a->in, (size_t)(nl - a->in.p) + 1);
			a->skipping = false;
			{
				char msg[200];
				json_t *null = json_null();

				snprintf(msg, sizeof msg, "the request line is "
				    "%zu bytes, over the %zu-byte limit "
				    "(--max-request); it was skipped",
				    a->skipped, max);
				agent_invalid(a, null, msg);
			}
			continue;
		}
		if (nl == NULL) {
			if (a->in.len > max) {
				a->skipping = true;
				a->skipped = 0;
				continue;
			}
			if (a->eof && a->in.len > 0) {
				agent_line(a, a->in.p, a->in.len);
				buf_consume(&a->in, a->in.len);
			}
			return;
		}
		if ((size_t)(nl - a->in.p) > max) {
			a->skipping = true;
			a->skipped = 0;
			continue;
		}
		*nl = '\0';
		agent_line(a, a->in.p, (size_t)(nl - a->in.p));
		buf_consume(&a->in, (size_t)(nl - a->in.p) + 1);
		if (session_done(a->s))
			return;
	}
}

static void
agent_read(struct agent *a)
{
	ssize_t n;

	buf_reserve(&a->in, 1 << 16);
	n = read(0, a->in.p + a->in.len, a->in.cap - a->in.len - 1);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		a->eof = true;
	} else if (n == 0) {
		a->eof = true;
	} else {
		a->in.len += (size_t)n;
		a->in.p[a->in.len] = '\0';
	}
	agent_lines(a);
}

int
agent_main(const struct coil_opts *opts)
{
	struct agent a = { .opts = opts };
	char err[512];
	sigset_t set;
	int sfd, rc = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1) {
		fprintf(stderr, "coil: signalfd: %s\n", strerror(errno));
		return 1;
	}
	buf_init(&a.in);
	a.s = session_new(opts, err, sizeof err);
	if (a.s == NULL) {
		fprintf(stderr, "coil: %s\n", err);
		close(sfd);
		return 1;
	}
	while (!a.lost && !session_done(a.s) &&
	    !(a.eof && session_idle(a.s))) {
		struct pollfd pfd[2] = {
			{ .fd = a.eof ? -1 : 0, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};

		if (session_poll(a.s, pfd, 2, -1) == -1) {
			fprintf(stderr, "coil: %s\n", session_failure(a.s));
			rc = 1;
			break;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))
			agent_read(&a);
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof si) == sizeof si) {
				rc = 128 + (int)si.ssi_signo;
				break;
			}
		}
	}
	/* A client that went away is no error of ours: the session just
	 * ends; a write that failed otherwise is. */
	if (a.write_error && rc == 0)
		rc = 1;
	session_free(a.s);
	buf_free(&a.in);
	close(sfd);
	return rc;
}
