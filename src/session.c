/*
 * session.c - the supervisor's core (see session.h).
 *
 * One request is in flight at a time (s->run).  A worker-bound request
 * is written to the control socket; the worker's reply comes back on it.
 * The worker flushes its stdio before replying, so when the reply is
 * read, draining the stdout and stderr pipes until they are empty gives
 * exactly the output of that cell: nothing written before the reply can
 * still be missing, and anything read later belongs to the background.
 *
 * Deadlines: at run->deadline the worker gets SIGINT; if the request has
 * not been answered by run->kill_at it gets SIGKILL.  A worker that dies
 * is reported by init; the run in flight is answered with what happened
 * and a fresh worker is started.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "outbuf.h"
#include "proc.h"
#include "session.h"
#include "util.h"

struct sreq {
	struct sreq *next;
	json_t *req, *id;
	enum op op;
	enum origin origin;
	session_fn fn;
	void *ctx;
	/* set when it runs */
	int cell;
	uint64_t t0;
	int64_t deadline, kill_at;	/* ms, 0 when unset */
	double timeout;
	bool timed_out, interrupted, killed;
};

enum wk_state { WK_NONE, WK_STARTING, WK_READY, WK_BUSY };

struct session {
	const struct coil_opts *opts;
	json_t *worker_conf;
	struct proc proc;

	enum wk_state state;
	pid_t pid;		/* worker, in init's view */
	int pidfd;
	struct chan ctl;
	int out, err;		/* read ends of the worker's fd 1 and 2 */
	int failed_starts;
	struct buf start_err;	/* stderr of a worker that has not said hello */

	struct sreq *run;	/* in flight */
	struct sreq *queue, **queue_tail;
	int cells;		/* cells run so far */
	char *python;		/* the worker's Py_GetVersion, first word */

	struct outbuf ob_out, ob_err, bg_out, bg_err;
	session_fn bg_fn;
	void *bg_ctx;
	bool done;
};

static void session_dispatch(struct session *s);
static void session_spawn(struct session *s);

static void
session_emit(struct sreq *r, enum session_ev kind, const char *p, size_t n,
    json_t *msg)
{
	struct session_event ev = { kind, p, n, msg };

	if (r->fn != NULL)
		r->fn(r->ctx, &ev);
}

/* Answer a request and free it; steals msg. */
static void
session_answer(struct sreq *r, json_t *msg)
{
	json_t *full = json_object();

	json_object_set(full, "id", r->id);
	json_object_update(full, msg);
	json_decref(msg);
	session_emit(r, EV_RESPONSE, NULL, 0, full);
	json_decref(full);
	json_decref(r->req);
	json_decref(r->id);
	free(r);
}

static json_t *
session_error(const char *type, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static json_t *
session_error(const char *type, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	json_t *e;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		fatal("out of memory");
	va_end(ap);
	e = json_pack("{s:s, s:s%, s:n, s:n}", "type", type, "message",
	    msg, strlen(msg), "traceback", "line");
	free(msg);
	return e;
}

static json_t *
session_invalid(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_t *
session_invalid(const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:{s:s, s:s}}", "status", "invalid", "error",
	    "type", "InvalidRequest", "message", msg);
}

/* ---- the worker's descriptors ------------------------------------- */

static void
session_close_worker(struct session *s)
{
	if (s->ctl.fd >= 0)
		chan_close(&s->ctl);
	s->ctl.fd = -1;
	if (s->out >= 0)
		close(s->out);
	if (s->err >= 0)
		close(s->err);
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->out = s->err = s->pidfd = -1;
	s->pid = 0;
	s->state = WK_NONE;
}

static void
session_signal(struct session *s, int sig)
{
	if (s->pidfd >= 0 &&
	    syscall(SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0) == 0)
		return;
	if (s->pid > 0 && s->pidfd < 0)
		kill(s->pid, sig);
}

static void
session_spawn(struct session *s)
{
	int sv[2], po[2], pe[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1)
		fatal_errno("cannot create the worker's channels");
	if (proc_spawn(&s->proc, sv[1], po[1], pe[1]) == -1)
		fatal_errno("cannot reach init");
	close(sv[1]);
	close(po[1]);
	close(pe[1]);
	chan_init(&s->ctl, sv[0]);
	set_nonblock(sv[0], true);
	s->out = po[0];
	s->err = pe[0];
	set_nonblock(s->out, true);
	set_nonblock(s->err, true);
	s->state = WK_STARTING;
	s->pid = 0;
	buf_free(&s->start_err);
}

/* Route bytes read from the worker's fd 1 or 2. */
static void
session_output(struct session *s, bool is_err, const char *p, size_t n)
{
	struct sreq *r = s->run;

	if (s->state == WK_STARTING) {
		if (s->start_err.len < 65536)
			buf_add(&s->start_err, p, n);
		return;
	}
	if (r != NULL && r->op == OP_EXEC) {
		outbuf_append(is_err ? &s->ob_err : &s->ob_out, p, n);
		session_emit(r, is_err ? EV_STDERR : EV_OUTPUT, p, n, NULL);
		return;
	}
	if (s->bg_fn != NULL) {
		struct session_event ev = { is_err ? EV_STDERR : EV_OUTPUT, p,
		    n, NULL };

		s->bg_fn(s->bg_ctx, &ev);
		return;
	}
	outbuf_append(is_err ? &s->bg_err : &s->bg_out, p, n);
}

/* Read a pipe until it is empty; false at end of file. */
static bool
session_drain(struct session *s, bool is_err)
{
	char chunk[65536];
	int fd = is_err ? s->err : s->out;
	ssize_t n;

	if (fd < 0)
		return false;
	for (;;) {
		n = read(fd, chunk, sizeof chunk);
		if (n > 0) {
			session_output(s, is_err, chunk, (size_t)n);
			continue;
		}
		if (n == 0)
			return false;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN;
	}
}

/* ---- responses to exec --------------------------------------------- */

static void
session_put_text(json_t *o, const char *key, const char *p, size_t n)
{
	json_object_set_new(o, key, json_stringn(p, n));
}

/* Move the captured streams and the worker's reply fields into an exec
 * response.  reply (borrowed) may be NULL when the worker died. */
static json_t *
session_exec_response(struct session *s, struct sreq *r, const char *status,
    json_t *reply, json_t *error, json_t *restored)
{
	json_t *o = json_object(), *v;
	unsigned long long dropped = 0;
	char *text;
	size_t len;

	json_object_set_new(o, "status", json_string(status));
	json_object_set_new(o, "cell", strcmp(status, "incomplete") == 0 ?
	    json_null() : json_integer(r->cell));
	text = outbuf_render(&s->ob_out, &len);
	session_put_text(o, "output", text, len);
	free(text);
	dropped += outbuf_truncated(&s->ob_out);
	text = outbuf_render(&s->ob_err, &len);
	session_put_text(o, "stderr", text, len);
	free(text);
	dropped += outbuf_truncated(&s->ob_err);
	outbuf_reset(&s->ob_out);
	outbuf_reset(&s->ob_err);

	v = reply != NULL ? json_object_get(reply, "result") : NULL;
	if (json_is_string(v)) {
		unsigned long long cut = 0;

		text = utf8_cap(json_string_value(v), json_string_length(v),
		    s->opts->max_output, &len, &cut);
		session_put_text(o, "result", text, len);
		free(text);
		dropped += cut;
		v = json_object_get(reply, "result_cut");
		if (json_is_integer(v))
			dropped += (unsigned long long)json_integer_value(v);
	} else {
		json_object_set_new(o, "result", json_null());
	}
	if (error == NULL && reply != NULL)
		error = json_incref(json_object_get(reply, "error"));
	json_object_set_new(o, "error", error != NULL ? error : json_null());
	v = reply != NULL ? json_object_get(reply, "display") : NULL;
	json_object_set_new(o, "display", json_is_array(v) ? json_incref(v) :
	    json_array());
	json_object_set_new(o, "duration_ms",
	    json_real(round((double)(now_ns() - r->t0) / 1e4) / 100.0));
	if (dropped > 0)
		json_object_set_new(o, "truncated", json_integer(
		    (json_int_t)dropped));
	if (restored != NULL)
		json_object_set_new(o, "restored", restored);
	v = reply != NULL ? json_object_get(reply, "warnings") : NULL;
	if (json_is_array(v) && json_array_size(v) > 0)
		json_object_set(o, "warnings", v);
	if (!outbuf_empty(&s->bg_out) || !outbuf_empty(&s->bg_err)) {
		json_t *bg = json_object();

		text = outbuf_render(&s->bg_out, &len);
		session_put_text(bg, "output", text, len);
		free(text);
		text = outbuf_render(&s->bg_err, &len);
		session_put_text(bg, "stderr", text, len);
		free(text);
		json_object_set_new(o, "background", bg);
		outbuf_reset(&s->bg_out);
		outbuf_reset(&s->bg_err);
	}
	return o;
}

static const char *
session_stop_reason(struct sreq *r)
{
	return r->interrupted ? "interrupted" : "timeout";
}

/* The worker answered the request in flight. */
static void
session_reply(struct session *s, json_t *reply)
{
	struct sreq *r = s->run;
	const char *status = json_string_value(json_object_get(reply,
	    "status"));
	json_t *msg, *error = NULL;

	s->run = NULL;
	s->state = WK_READY;
	if (status == NULL)
		status = "error";
	if (r->op != OP_EXEC) {
		json_object_del(reply, "t");
		session_answer(r, json_incref(reply));
		return;
	}
	/* Everything the cell wrote is in the pipes by now. */
	session_drain(s, false);
	session_drain(s, true);
	if (strcmp(status, "incomplete") != 0)
		s->cells = r->cell;
	if ((r->timed_out || r->interrupted) && strcmp(status, "error") == 0) {
		json_t *e = json_object_get(reply, "error");
		const char *type = json_string_value(json_object_get(e, "type"));

		if (type != NULL && strcmp(type, "KeyboardInterrupt") == 0) {
			error = json_deep_copy(e);
			if (r->timed_out) {
				char m[160];

				snprintf(m, sizeof m, "cell %d ran past its "
				    "%g s timeout and was interrupted",
				    r->cell, r->timeout);
				json_object_set_new(error, "type",
				    json_string("TimeoutError"));
				json_object_set_new(error, "message",
				    json_string(m));
			} else {
				json_object_set_new(error, "message",
				    json_string("interrupted by an interrupt "
				    "request"));
			}
			status = session_stop_reason(r);
		}
	}
	msg = session_exec_response(s, r, status, reply, error,
	    strcmp(status, "timeout") == 0 || strcmp(status, "interrupted")
	    == 0 ? json_null() : NULL);
	session_answer(r, msg);
}

/* The worker is gone: answer what was in flight and start another. */
static void
session_worker_died(struct session *s, int status)
{
	struct sreq *r = s->run;
	char how[128];
	bool starting = s->state == WK_STARTING;

	describe_wait(status, how, sizeof how);
	session_drain(s, false);
	session_drain(s, true);
	if (starting) {
		s->failed_starts++;
		if (s->failed_starts >= 3)
			fatal("the python worker cannot start (%s)%s%.2000s",
			    how, s->start_err.len ? ":\n" : "",
			    s->start_err.len ? s->start_err.p : "");
	}
	session_close_worker(s);
	session_spawn(s);
	if (r == NULL)
		return;
	s->run = NULL;
	if (r->op == OP_EXEC) {
		json_t *error, *msg;
		const char *st;

		s->cells = r->cell;
		if (r->killed) {
			st = session_stop_reason(r);
			error = session_error(r->timed_out ? "TimeoutError" :
			    "KeyboardInterrupt", "cell %d %s and did not stop "
			    "within %g s of the interrupt, so its worker was "
			    "killed; the namespace was lost and a fresh one "
			    "started", r->cell, r->timed_out ?
			    "ran past its timeout" : "was interrupted",
			    s->opts->grace);
		} else {
			st = "crashed";
			error = session_error("WorkerDied", "the worker died "
			    "(%s) while running cell %d; the namespace was "
			    "lost and a fresh one started", how, r->cell);
		}
		msg = session_exec_response(s, r, st, NULL, error,
		    json_pack("{s:n}", "cell"));
		session_answer(r, msg);
	} else if (r->op == OP_RESET) {
		/* The reset killed it on purpose: answer once the new one
		 * says hello. */
		s->run = r;
	} else {
		session_answer(r, json_pack("{s:s, s:o, s:{s:n}}", "status",
		    "crashed", "error", session_error("WorkerDied",
		    "the worker died (%s) while serving '%s'; the namespace "
		    "was lost and a fresh one started", how,
		    request_ops[r->op].name), "restored", "cell"));
	}
}

/* ---- messages from init and the worker ----------------------------- */

static void
session_from_init(struct session *s)
{
	json_t *m;
	bool bad;
	int rc = chan_fill(&s->proc.chan);

	if (rc == 0)
		fatal("init, the process that runs the workers, died");
	while ((m = chan_next(&s->proc.chan, NULL, NULL, &bad)) != NULL) {
		const char *t = json_string_value(json_object_get(m, "t"));
		pid_t pid = (pid_t)json_integer_value(json_object_get(m, "pid"));

		if (t == NULL) {
			/* ignore */
		} else if (strcmp(t, "spawned") == 0) {
			if (pid <= 0)
				fatal("init cannot fork a worker: %s", strerror(
				    (int)json_integer_value(json_object_get(m,
				    "errno"))));
			if (s->state == WK_STARTING && s->pid == 0)
				s->pid = pid;
		} else if (strcmp(t, "exit") == 0 && pid == s->pid &&
		    s->state != WK_NONE) {
			session_worker_died(s, (int)json_integer_value(
			    json_object_get(m, "status")));
		}
		json_decref(m);
	}
}

static void
session_from_worker(struct session *s)
{
	json_t *m;
	bool bad;
	int fds[CHAN_MAX_FDS], nfds, rc;

	rc = chan_fill(&s->ctl);
	if (rc == -1 && errno == EAGAIN)
		return;
	while ((m = chan_next(&s->ctl, fds, &nfds, &bad)) != NULL) {
		const char *t = json_string_value(json_object_get(m, "t"));

		if (t != NULL && strcmp(t, "hello") == 0) {
			const char *py = json_string_value(json_object_get(m,
			    "python"));

			if (nfds > 0)
				s->pidfd = fds[0];
			if (py != NULL && s->python == NULL)
				s->python = xstrndup(py, strcspn(py, " "));
			s->failed_starts = 0;
			s->state = WK_READY;
			/* What a starting worker printed is not a cell's. */
			buf_free(&s->start_err);
			if (s->run != NULL && s->run->op == OP_RESET) {
				struct sreq *r = s->run;

				s->run = NULL;
				session_answer(r, json_pack("{s:s}", "status",
				    "ok"));
			}
		} else if (t != NULL && strcmp(t, "reply") == 0 &&
		    s->run != NULL && s->state == WK_BUSY) {
			session_reply(s, m);
		} else {
			while (nfds > 0)
				close(fds[--nfds]);
		}
		json_decref(m);
	}
	if (bad || rc == 0) {
		/* The worker closed its socket or sent garbage: it is
		 * finished either way.  init reports the exit. */
		chan_close(&s->ctl);
		s->ctl.fd = -1;
		session_signal(s, SIGKILL);
	}
}

/* ---- serving requests ---------------------------------------------- */

static double
session_timeout_of(struct session *s, json_t *req)
{
	json_t *t = json_object_get(req, "timeout");

	return json_is_number(t) ? json_number_value(t) : s->opts->timeout;
}

static void
session_start_run(struct session *s, struct sreq *r)
{
	json_t *msg;

	r->t0 = now_ns();
	r->timeout = session_timeout_of(s, r->req);
	r->deadline = now_ms() + (int64_t)ceil(r->timeout * 1000);
	r->kill_at = 0;
	s->run = r;
	if (r->op == OP_RESET) {
		/* A fresh interpreter is the only honest reset: modules and
		 * C-level state go too. */
		session_signal(s, SIGKILL);
		return;
	}
	msg = json_deep_copy(r->req);
	if (r->op == OP_EXEC) {
		r->cell = s->cells + 1;
		json_object_set_new(msg, "cell", json_integer(r->cell));
		outbuf_reset(&s->ob_out);
		outbuf_reset(&s->ob_err);
		if (r->origin == ORIGIN_PERSON)
			json_object_set_new(msg, "repl", json_true());
	}
	s->state = WK_BUSY;
	if (chan_send(s->ctl.fd, msg, NULL, 0) == -1)
		session_signal(s, SIGKILL);	/* init reports the death */
	json_decref(msg);
}

static json_t *
session_ping(struct session *s)
{
	return json_pack("{s:s, s:s, s:s?, s:{s:s, s:[]}, s:i, s:b}",
	    "status", "ok", "version", PACKAGE_VERSION,
	    "python", s->python, "sandbox", "profile", "none", "enforced",
	    "cell", s->cells, "running", s->run != NULL && s->run->op ==
	    OP_EXEC);
}

static void
session_serve_supervisor(struct session *s, struct sreq *r)
{
	switch (r->op) {
	case OP_SHUTDOWN:
		s->done = true;
		session_answer(r, json_pack("{s:s}", "status", "ok"));
		/* What came after the shutdown is answered, not dropped. */
		while ((r = s->queue) != NULL) {
			s->queue = r->next;
			session_answer(r, session_invalid("the session was shut "
			    "down before this request ran"));
		}
		s->queue_tail = &s->queue;
		break;
	case OP_SNAPSHOT:
	case OP_SNAPSHOTS:
	case OP_ROLLBACK:
		session_answer(r, session_invalid("'%s' needs checkpoints, "
		    "which this build of coil does not have yet",
		    request_ops[r->op].name));
		break;
	default:
		session_answer(r, session_invalid("op '%s' cannot be served "
		    "here", request_ops[r->op].name));
	}
}

static void
session_dispatch(struct session *s)
{
	while (s->run == NULL && s->queue != NULL && !s->done) {
		struct sreq *r = s->queue;

		if (request_ops[r->op].where == OP_WORKER &&
		    s->state != WK_READY)
			return;
		if (r->op == OP_RESET && s->state == WK_STARTING)
			return;
		s->queue = r->next;
		if (s->queue == NULL)
			s->queue_tail = &s->queue;
		if (request_ops[r->op].where == OP_WORKER ||
		    r->op == OP_RESET)
			session_start_run(s, r);
		else
			session_serve_supervisor(s, r);
	}
}

bool
session_interrupt(struct session *s)
{
	struct sreq *r = s->run;

	if (r == NULL || s->state != WK_BUSY)
		return false;
	r->interrupted = !r->timed_out;
	session_signal(s, SIGINT);
	if (r->kill_at == 0)
		r->kill_at = now_ms() + (int64_t)ceil(s->opts->grace * 1000);
	return true;
}

void
session_submit(struct session *s, json_t *req, json_t *id, enum op op,
    enum origin origin, session_fn fn, void *ctx)
{
	struct sreq *r = xcalloc(1, sizeof *r);

	r->req = req;
	r->id = id;
	r->op = op;
	r->origin = origin;
	r->fn = fn;
	r->ctx = ctx;
	if (op == OP_PING) {
		session_answer(r, session_ping(s));
		return;
	}
	if (op == OP_INTERRUPT) {
		int cell = s->run != NULL ? s->run->cell : 0;
		bool was = session_interrupt(s);

		session_answer(r, json_pack("{s:s, s:b, s:o}", "status", "ok",
		    "interrupted", was, "cell", was ? json_integer(cell) :
		    json_null()));
		return;
	}
	*s->queue_tail = r;
	s->queue_tail = &r->next;
	session_dispatch(s);
}

/* ---- the loop ------------------------------------------------------ */

static void
session_check_deadlines(struct session *s)
{
	struct sreq *r = s->run;
	int64_t now = now_ms();

	if (r == NULL || s->state != WK_BUSY)
		return;
	if (r->kill_at != 0 && now >= r->kill_at) {
		r->killed = true;
		r->kill_at = 0;
		r->deadline = 0;
		session_signal(s, SIGKILL);
		return;
	}
	if (r->deadline != 0 && now >= r->deadline && !r->timed_out &&
	    !r->interrupted) {
		r->timed_out = true;
		r->deadline = 0;
		session_signal(s, SIGINT);
		r->kill_at = now + (int64_t)ceil(s->opts->grace * 1000);
	}
}

static int
session_next_timeout(struct session *s, int timeout_ms)
{
	struct sreq *r = s->run;
	int64_t when = 0, now;

	if (r == NULL || s->state != WK_BUSY)
		return timeout_ms;
	if (r->kill_at != 0)
		when = r->kill_at;
	else if (r->deadline != 0 && !r->timed_out && !r->interrupted)
		when = r->deadline;
	if (when == 0)
		return timeout_ms;
	now = now_ms();
	if (when <= now)
		return 0;
	if (timeout_ms < 0 || when - now < timeout_ms)
		return (int)(when - now);
	return timeout_ms;
}

int
session_poll(struct session *s, struct pollfd *extra, int nextra,
    int timeout_ms)
{
	struct pollfd pfd[16];
	int n = 0, i, rc;
	int i_init, i_ctl = -1, i_out = -1, i_err = -1;

	if (nextra > 8)
		nextra = 8;
	i_init = n;
	pfd[n++] = (struct pollfd){ .fd = s->proc.chan.fd, .events = POLLIN };
	if (s->ctl.fd >= 0) {
		i_ctl = n;
		pfd[n++] = (struct pollfd){ .fd = s->ctl.fd, .events = POLLIN };
	}
	if (s->out >= 0) {
		i_out = n;
		pfd[n++] = (struct pollfd){ .fd = s->out, .events = POLLIN };
	}
	if (s->err >= 0) {
		i_err = n;
		pfd[n++] = (struct pollfd){ .fd = s->err, .events = POLLIN };
	}
	for (i = 0; i < nextra; i++) {
		pfd[n + i] = extra[i];
		pfd[n + i].revents = 0;
	}
	rc = poll(pfd, (nfds_t)(n + nextra), session_next_timeout(s,
	    timeout_ms));
	if (rc == -1 && errno != EINTR)
		return -1;
	for (i = 0; i < nextra; i++)
		extra[i].revents = rc > 0 ? pfd[n + i].revents : 0;
	if (rc > 0) {
		/* Output first, then replies: a reply ends the cell, and its
		 * output must be in by then (session_reply drains too). */
		if (i_out >= 0 && pfd[i_out].revents && !session_drain(s, false)) {
			close(s->out);
			s->out = -1;
		}
		if (i_err >= 0 && pfd[i_err].revents && !session_drain(s, true)) {
			close(s->err);
			s->err = -1;
		}
		if (i_ctl >= 0 && pfd[i_ctl].revents && s->ctl.fd >= 0)
			session_from_worker(s);
		if (pfd[i_init].revents)
			session_from_init(s);
	}
	session_check_deadlines(s);
	session_dispatch(s);
	return 0;
}

/* ---- life ---------------------------------------------------------- */

static json_t *
session_worker_conf(const struct coil_opts *o)
{
	json_t *c = json_pack("{s:s, s:I, s:s, s:i}", "workdir", o->workdir,
	    "max_output", (json_int_t)o->max_output, "figure_dir",
	    o->figure_dir, "traceback_frames", 20);
	json_t *pre = json_array();
	size_t i;

	for (i = 0; i < o->npreload; i++)
		json_array_append_new(pre, json_string(o->preload[i]));
	json_object_set_new(c, "preload", pre);
	return c;
}

struct session *
session_new(const struct coil_opts *opts, char *err, size_t errlen)
{
	struct session *s = xcalloc(1, sizeof *s);

	s->opts = opts;
	s->queue_tail = &s->queue;
	s->ctl.fd = s->out = s->err = s->pidfd = -1;
	buf_init(&s->start_err);
	outbuf_init(&s->ob_out, opts->max_output);
	outbuf_init(&s->ob_err, opts->max_output);
	outbuf_init(&s->bg_out, opts->max_output);
	outbuf_init(&s->bg_err, opts->max_output);
	s->worker_conf = session_worker_conf(opts);
	signal(SIGPIPE, SIG_IGN);
	if (proc_start(&s->proc, s->worker_conf, err, errlen) == -1) {
		session_free(s);
		return NULL;
	}
	session_spawn(s);
	return s;
}

void
session_free(struct session *s)
{
	struct sreq *r, *next;

	if (s == NULL)
		return;
	if (s->proc.pid > 0)
		proc_stop(&s->proc);
	session_close_worker(s);
	if (s->run != NULL) {
		s->run->next = s->queue;
		s->queue = s->run;
		s->run = NULL;
	}
	for (r = s->queue; r != NULL; r = next) {
		next = r->next;
		session_emit(r, EV_DROPPED, NULL, 0, NULL);
		json_decref(r->req);
		json_decref(r->id);
		free(r);
	}
	outbuf_free(&s->ob_out);
	outbuf_free(&s->ob_err);
	outbuf_free(&s->bg_out);
	outbuf_free(&s->bg_err);
	buf_free(&s->start_err);
	json_decref(s->worker_conf);
	free(s->python);
	free(s);
}

void
session_set_background(struct session *s, session_fn fn, void *ctx)
{
	s->bg_fn = fn;
	s->bg_ctx = ctx;
}

bool
session_idle(const struct session *s)
{
	return s->run == NULL && s->queue == NULL;
}

bool
session_done(const struct session *s)
{
	return s->done;
}

int
session_cell(const struct session *s)
{
	return s->cells;
}
