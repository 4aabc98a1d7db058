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
 * once another worker is up.
 *
 * The worker is untrusted (link.h): every frame it writes is checked
 * against what the supervisor asked it for, and one that is not owed ends
 * it (session_broke) as a crash would, with the protocol violation as the
 * reason.  So the supervisor alone decides when a checkpoint is taken:
 * it orders one (session_order_ckpt) after each reply to a cell that ran
 * code, after a fresh worker's hello (the pristine one) and after a
 * resume (the re-arm).  The socket keeps them in order: reply N,
 * checkpoint N, reply N+1 ...  A new worker is either spawned fresh by
 * init or resumed from a checkpoint (session_restore), and only once the
 * old one is dead, as init reports: its checkpoints are then children of
 * init, which a resumed worker's death signal relies on.  Ops that
 * replace the worker on purpose (rollback, reset, a failed atomic cell)
 * kill it and go the same way; the run stays in s->run with its `after`
 * set until the new worker says hello, so that the answer says what is
 * really there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "ckpt.h"
#include "link.h"
#include "outbuf.h"
#include "proc.h"
#include "session.h"
#include "util.h"

/* What a run waits for once its worker is gone. */
enum sreq_after {
	AFTER_NONE,
	AFTER_DIED,		/* it died under the run: restore the newest */
	AFTER_ROLLBACK,		/* killed to resume run->target */
	AFTER_RESET,		/* killed to resume the pristine one, or spawn */
	AFTER_ATOMIC,		/* an atomic cell failed: resume run->pre */
};

struct session;

struct sreq {
	struct sreq *next;
	struct session *s;
	json_t *req, *id;
	enum op op;
	enum origin origin;
	session_fn fn;
	void *ctx;
	int waited_for;		/* the cell running when this came, or 0 */
	/* set when it runs */
	int cell;
	uint64_t t0;
	int64_t deadline, kill_at;	/* ms, 0 when unset */
	double timeout;
	bool timed_out, interrupted, killed;
	bool atomic;
	bool broke;		/* its worker broke protocol (how says so) */
	enum sreq_after after;
	struct ckpt *pre;	/* exec: a checkpoint of the state before it */
	struct ckpt *target;	/* what to resume (held) */
	json_t *pending;	/* the answer, once the new worker is up */
	char how[400];		/* how the worker died */
};

enum wk_state { WK_NONE, WK_STARTING, WK_READY, WK_BUSY };

struct session {
	const struct coil_opts *opts;
	json_t *worker_conf;
	struct proc proc;

	enum wk_state state;
	pid_t pid;		/* worker, in init's view */
	int pidfd;
	struct link ctl;	/* what the worker owes, and its socket */
	int spawns;		/* spawns init has not said "spawned" to */
	char broke[320];	/* the worker's protocol violation, if any */
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

	struct ckpt_set ck;
	struct ckpt_node *node;	/* the state the worker is in */
	struct ckpt *current;	/* a checkpoint of exactly that state */
	struct ckpt *resuming;	/* becoming the worker (WK_STARTING) */
	struct ckpt *rearm;	/* used up by a resume; replacement due */
	bool reap_orphans;	/* init died: its orphans are our children */
	/* strict: seccomp hands every fork of the worker to us (gate_fd).
	 * One is let through for each checkpoint we ordered and the worker
	 * still owes (link_ckpt_owed: our record, never its word), and only
	 * from its main thread, which runs no cell code until the checkpoint
	 * is taken; gate_spent until the ckpt or ckpt_failed arrives. */
	int gate_fd;
	bool gate_spent;
	pid_t dropped[64];	/* strict: checkpoints killed lately (ours) */
	unsigned ndropped;
	json_t *sandbox;	/* the worker's report, for ping */
	int64_t resume_deadline;
	char *died_idle;	/* how a worker died between requests */
	json_t *warnings;	/* for the next response */
	bool noted_rollback;
	bool warned_memory;	/* --checkpoint-memory cannot be enforced */
	int nsnap;		/* for generated snapshot names */
	long long ping_mem;	/* ping's memory figure, and when it was read */
	int64_t ping_mem_at;
	/* The session cannot go on (init cannot be started or reached, the
	 * worker never starts): session_poll returns -1 from now on and the
	 * front end tears down; failure says why. */
	bool failed;
	char failure[2048];
	int init_early_deaths;	/* in a row, before a worker said hello */
};

/* How long a resumed checkpoint has to say hello: it is already running
 * Python, so this is only ever reached when it was stopped or wedged. */
#define SESSION_RESUME_MS 5000

static void session_dispatch(struct session *s);
static void session_spawn(struct session *s);
static void session_restore(struct session *s);
static void session_from_worker(struct session *s);
static void session_broke(struct session *s, const char *why);
static void session_spawned(struct session *s, pid_t pid);

static void
session_fail(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The first failure is the one the person sees. */
static void
session_fail(struct session *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	s->failed = true;
	va_start(ap, fmt);
	vsnprintf(s->failure, sizeof s->failure, fmt, ap);
	va_end(ap);
}

static void
session_emit(struct sreq *r, enum session_ev kind, const char *p, size_t n,
    json_t *msg)
{
	struct session_event ev = { kind, p, n, msg };

	if (r->fn != NULL)
		r->fn(r->ctx, &ev);
}

static void
session_warn(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keep a warning for the next response. */
static void
session_warn(struct session *s, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_array_append_new(s->warnings, json_string(msg));
}

static void
sreq_free(struct sreq *r)
{
	if (r->target != NULL)
		r->target->held = false;
	if (r->pre != NULL)
		r->pre->held = false;
	json_decref(r->pending);
	json_decref(r->req);
	json_decref(r->id);
	free(r);
}

/* Answer a request and free it; steals msg.  Warnings kept for the next
 * response go with it. */
static void
session_answer(struct sreq *r, json_t *msg)
{
	json_t *full = json_object(), *w, *all;
	struct session *s = r->s;

	json_object_set(full, "id", r->id);
	json_object_update(full, msg);
	json_decref(msg);
	if (s != NULL && json_array_size(s->warnings) > 0) {
		all = json_array();
		w = json_object_get(full, "warnings");
		if (json_is_array(w))
			json_array_extend(all, w);
		json_array_extend(all, s->warnings);
		json_array_clear(s->warnings);
		json_object_set_new(full, "warnings", all);
	}
	session_emit(r, EV_RESPONSE, NULL, 0, full);
	json_decref(full);
	sreq_free(r);
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
		fatal_code(EXIT_NOMEM, 0, "out of memory");
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
	link_close(&s->ctl);
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

/*
 * s->pid is in init's PID namespace, not ours: it is never given to
 * kill().  The worker's pidfd names it exactly; without one (a kernel
 * before 5.3, or a worker that has not said hello) init, which lives in
 * that namespace, is asked to send the signal.
 */
static void
session_signal(struct session *s, int sig)
{
	if (s->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0);
		return;
	}
	if (s->pid > 0)
		proc_signal(&s->proc, s->pid, sig);
}

/* A new worker's control socket and pipes: ours are kept, the worker's
 * ends are put in child[] for the caller to pass on and close.  0, or -1
 * with errno and nothing left open. */
static int
session_channels(struct session *s, int child[3])
{
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	int e, i;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1) {
		e = errno;
		for (i = 0; i < 2; i++) {
			if (sv[i] >= 0)
				close(sv[i]);
			if (po[i] >= 0)
				close(po[i]);
			if (pe[i] >= 0)
				close(pe[i]);
		}
		errno = e;
		return -1;
	}
	/* A blocking read here would stall every front end. */
	if (set_nonblock(sv[0], true) == -1 || set_nonblock(po[0], true) ==
	    -1 || set_nonblock(pe[0], true) == -1) {
		e = errno;
		for (i = 0; i < 2; i++) {
			close(sv[i]);
			close(po[i]);
			close(pe[i]);
		}
		errno = e;
		return -1;
	}
	link_init(&s->ctl, sv[0]);
	s->out = po[0];
	s->err = pe[0];
	child[0] = sv[1];
	child[1] = po[1];
	child[2] = pe[1];
	return 0;
}

/* init's {"t":"fatal"}: it could not set up the sandbox or itself. */
static void
session_init_fatal(struct session *s, json_t *m)
{
	session_fail(s, "the sandbox cannot be set up: %s (--sandbox none "
	    "runs without it)", json_string_value(json_object_get(m,
	    "error")));
}

/* init's socket is closed: read what it sent before it went, for a
 * "fatal" report (it exits right after one). */
static void
session_init_reason(struct session *s)
{
	json_t *m;
	bool bad = false;

	if (chan_fill(&s->proc.chan) <= 0)
		return;
	while ((m = chan_next(&s->proc.chan, NULL, NULL, &bad)) != NULL) {
		const char *t = json_string_value(json_object_get(m, "t"));

		if (t != NULL && strcmp(t, "fatal") == 0)
			session_init_fatal(s, m);
		json_decref(m);
	}
}

static void
session_spawn(struct session *s)
{
	int child[3], rc;

	if (session_channels(s, child) == -1) {
		session_fail(s, "cannot create the worker's channels: %s",
		    strerror(errno));
		return;
	}
	rc = proc_spawn(&s->proc, child[0], child[1], child[2]);
	close(child[0]);
	close(child[1]);
	close(child[2]);
	if (rc == -1) {
		int e = errno;

		/* init is gone; if it said why, that is the reason to give */
		session_init_reason(s);
		session_fail(s, "cannot reach coil's init process: %s",
		    strerror(e));
		session_close_worker(s);
		return;
	}
	s->spawns++;
	/* strict: the fork listener comes first, before any Python runs */
	if (s->opts->sbx.profile == SANDBOX_STRICT)
		link_owe(&s->ctl, LINK_GATE, 0, 0, -1);
	link_owe(&s->ctl, LINK_HELLO, 0, 0, -1);
	s->state = WK_STARTING;
	s->pid = 0;
	buf_free(&s->start_err);
}

/* Resume ck as the worker; it answers with hello.  -1 when it is gone. */
static int
session_resume(struct session *s, struct ckpt *ck)
{
	int child[3], rc;

	if (session_channels(s, child) == -1)
		return -1;
	/* The re-arm is ours to order once it has said hello. */
	rc = ckpt_resume(ck, child[0], child[1], child[2], false);
	close(child[0]);
	close(child[1]);
	close(child[2]);
	if (rc == -1) {
		session_close_worker(s);
		return -1;
	}
	ckpt_touch(&s->ck, ck);
	s->state = WK_STARTING;
	s->pid = s->ctl.pid = ck->pid;
	link_owe(&s->ctl, LINK_HELLO, 0, 0, ck->node->cell);
	s->pidfd = ck->pidfd;		/* to kill it if it never says hello */
	ck->pidfd = -1;
	s->resuming = ck;
	s->resume_deadline = now_ms() + SESSION_RESUME_MS;
	buf_free(&s->start_err);
	return 0;
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
		    s->ob_out.cap, &len, &cut);
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

/* ---- checkpoints --------------------------------------------------- */

/* ckpt_set's on_drop: forget every pointer to a checkpoint that goes. */
static void
session_ckpt_dropped(void *ctx, struct ckpt *ck)
{
	struct session *s = ctx;

	/* Still the worker's child until it reaps it: not a stray. */
	if (s->gate_fd >= 0 && ck->pidfd >= 0)
		s->dropped[s->ndropped++ % nitems(s->dropped)] =
		    ckpt_pid_of(ck->pidfd);
	if (s->current == ck)
		s->current = NULL;
	if (s->resuming == ck)
		s->resuming = NULL;
	if (s->rearm == ck)
		s->rearm = NULL;
	if (s->run != NULL && s->run->target == ck)
		s->run->target = NULL;
	if (s->run != NULL && s->run->pre == ck)
		s->run->pre = NULL;
}

static void
session_set_node(struct session *s, struct ckpt_node *n)
{
	ckpt_node_unref(s->node);
	s->node = n;
}

/* Where a restore left the namespace, for messages: "the namespace is
 * back at the state after cell 4; 1 thread did not survive". */
static const char *
session_where(json_t *restored, char *buf, size_t len)
{
	json_t *cell = json_object_get(restored, "cell");
	int lost = (int)json_integer_value(json_object_get(restored,
	    "threads_lost"));

	if (!json_is_integer(cell))
		snprintf(buf, len, "nothing could be restored, so a fresh "
		    "namespace started");
	else
		snprintf(buf, len, "the namespace is back at the state after "
		    "cell %d", (int)json_integer_value(cell));
	if (lost > 0)
		snprintf(buf + strlen(buf), len - strlen(buf), "; %d thread%s "
		    "did not survive", lost, lost > 1 ? "s" : "");
	return buf;
}

/* A snapshot name must not look like a cell number (the plain mode's
 * %rollback 3 means cell 3) and must print on one line. */
static bool
session_name_ok(const char *name, char *why, size_t len)
{
	size_t n = strlen(name), i, digits = 0;

	if (n == 0 || n > 64)
		return err_set(why, len, "a snapshot name must be 1 to 64 "
		    "characters long"), false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c == 0x7f || c == ' ')
			return err_set(why, len, "a snapshot name must not hold "
			    "spaces or control characters"), false;
		if (c >= '0' && c <= '9')
			digits++;
	}
	if (digits == n)
		return err_set(why, len, "'%s' is a cell number, not a snapshot "
		    "name: use a name with a letter in it", name), false;
	return true;
}

/* "snapshot 'base' (cell 3); cells 5, 6, 7; the pristine one (0)" */
static char *
session_ckpt_names(struct session *s)
{
	struct buf b;
	struct ckpt *ck;
	bool first = true, pristine = false;

	buf_init(&b);
	for (ck = s->ck.head; ck != NULL; ck = ck->next)
		if (ck->name != NULL && ck->sock >= 0)
			buf_printf(&b, "%ssnapshot '%s' (cell %d)", b.len ? ", " :
			    "", ck->name, ck->node->cell);
	for (ck = s->ck.head; ck != NULL; ck = ck->next) {
		if (ck->sock < 0 || ck->name != NULL)
			continue;
		if (ck->kind == CKPT_PRISTINE) {
			pristine = true;
			continue;
		}
		buf_printf(&b, "%s%d", first ? (b.len ? "; cells " : "cells ") :
		    ", ", ck->node->cell);
		first = false;
	}
	if (pristine)
		buf_printf(&b, "%sthe pristine one (0)", b.len ? "; " : "");
	if (b.len == 0)
		buf_addstr(&b, "none");
	return buf_take(&b);
}

/* Send the worker a message; what answers it is owed already. */
static void
session_send(struct session *s, json_t *msg)
{
	if (chan_send(s->ctl.chan.fd, msg, NULL, 0) == -1)
		session_signal(s, SIGKILL);	/* init reports the death */
	json_decref(msg);
}

/* Order a checkpoint of the worker as it is now: ours to decide, never
 * the worker's.  kind explicit is also answered with a reply. */
static void
session_order_ckpt(struct session *s, enum link_ckpt kind, int cell)
{
	uint64_t seq = link_owe(&s->ctl, LINK_CKPT, kind, 0, -1);

	if (kind == LINK_CK_EXPLICIT)
		link_owe(&s->ctl, LINK_REPLY, 0, seq, -1);
	session_send(s, json_pack("{s:s, s:s, s:i, s:I}", "op", "ckpt",
	    "kind", link_ckpt_names[kind], "cell", cell, "seq",
	    (json_int_t)seq));
}

/*
 * strict: the gate let one fork through for the checkpoint just answered,
 * and only from the worker's main thread.  Cell code can still run there
 * at that moment - a Python signal handler, an os.register_at_fork hook
 * calling libc's fork through ctypes - and spend the pass; the worker's
 * own fork is then refused.  Forks are off under strict, so every child
 * of the worker is one of our checkpoints: any other dies here.
 */
static void
session_gate_sweep(struct session *s)
{
	pid_t kids[256], w = s->pidfd >= 0 ? ckpt_pid_of(s->pidfd) : 0;
	int n, i, j, killed = 0;
	struct ckpt *ck;

	for (ck = s->ck.head; ck != NULL; ck = ck->next)
		if (ck->sock >= 0 && ck->pidfd < 0)
			return;		/* one we could not tell from a stray */
	if (w <= 0 || (n = link_children(w, kids, (int)nitems(kids))) <= 0)
		return;
	for (i = 0; i < n; i++) {
		for (ck = s->ck.head; ck != NULL; ck = ck->next)
			if (ck->pidfd >= 0 && ckpt_pid_of(ck->pidfd) == kids[i])
				break;
		for (j = 0; ck == NULL && j < (int)nitems(s->dropped); j++)
			if (s->dropped[j] == kids[i])
				break;
		if (ck == NULL && j == (int)nitems(s->dropped) &&
		    link_kill_child(w, kids[i]) == 0)
			killed++;
	}
	if (killed > 0)
		session_warn(s, "a process forked by the cell's code while a "
		    "checkpoint was being taken was killed: the strict sandbox "
		    "starts no processes");
}

/* A checkpoint we ordered arrived (link.c checked its socket, its pidfd
 * and that it was owed); f->kind is the kind we asked for. */
static void
session_ckpt_arrived(struct session *s, struct link_frame *f)
{
	int threads = (int)json_integer_value(json_object_get(f->msg,
	    "threads"));
	double fork_ms = json_number_value(json_object_get(f->msg, "fork_ms"));
	struct sreq *r = s->run;
	bool exec_running = r != NULL && r->op == OP_EXEC &&
	    s->state == WK_BUSY;
	int sock = f->fds[0], pidfd = f->fds[1];
	struct ckpt *ck;
	enum ckpt_kind k;

	f->fds[0] = f->fds[1] = -1;	/* the checkpoint's now */
	if (threads < 0)
		threads = 0;
	if (f->kind == LINK_CK_REARM && s->rearm != NULL) {
		ck = s->rearm;
		s->rearm = NULL;
		ck->sock = sock;
		ck->pidfd = pidfd;
		ck->pid = f->pid;
		ck->threads = threads;
		ck->fork_ms = fork_ms;
	} else {
		if (f->kind == LINK_CK_PRISTINE) {
			k = CKPT_PRISTINE;
			while ((ck = ckpt_pristine(&s->ck)) != NULL)
				ckpt_drop(&s->ck, ck);
		} else if (f->kind == LINK_CK_EXPLICIT) {
			k = CKPT_PINNED;
		} else if (f->kind == LINK_CK_BEFORE) {
			k = s->opts->checkpoints > 0 ? CKPT_AUTO : CKPT_ATOMIC;
		} else {
			k = CKPT_AUTO;
		}
		ck = ckpt_add(&s->ck, k, s->node, sock, pidfd, f->pid, threads,
		    fork_ms);
	}
	if (s->gate_spent)
		session_gate_sweep(s);
	s->gate_spent = false;
	if (exec_running) {
		/* The state before the running cell: the previous cell's
		 * checkpoint, or one the atomic cell asked for. */
		if (r->pre != NULL)
			r->pre->held = false;
		r->pre = ck;
		ck->held = r->atomic;
	} else {
		s->current = ck;
	}
	if (r != NULL && r->op == OP_SNAPSHOT && f->kind == LINK_CK_EXPLICIT)
		r->target = ck;
	if (ckpt_limit(&s->ck, ck, s->pidfd) == -1 && !s->warned_memory) {
		s->warned_memory = true;
		session_warn(s, "--checkpoint-memory is not enforced: the "
		    "checkpoints' memory cannot be read from "
		    "/proc/PID/smaps_rollup here");
	}
}

/* A checkpoint we ordered could not be taken: say so on the next
 * response. */
static void
session_ckpt_failed(struct session *s, struct link_frame *f)
{
	const char *error = json_string_value(json_object_get(f->msg,
	    "error"));
	int cell = s->node->cell;
	struct ckpt *ck;

	if (s->gate_spent)
		session_gate_sweep(s);
	s->gate_spent = false;
	if (error == NULL)
		error = "unknown error";
	switch (f->kind) {
	case LINK_CK_AUTO:
		ck = ckpt_nearest(&s->ck, s->node, s->warnings);
		if (ck != NULL && ck->kind != CKPT_PRISTINE)
			session_warn(s, "no checkpoint could be taken after cell "
			    "%d (%.160s): if the worker dies now, the namespace "
			    "goes back to cell %d", cell, error, ck->node->cell);
		else
			session_warn(s, "no checkpoint could be taken after cell "
			    "%d (%.160s): if the worker dies now, the namespace "
			    "is lost", cell, error);
		break;
	case LINK_CK_PRISTINE:
		session_warn(s, "the pristine checkpoint could not be taken "
		    "(%.160s): reset will start a new interpreter", error);
		break;
	case LINK_CK_REARM:
		if (s->rearm != NULL) {
			session_warn(s, "the checkpoint at cell %d%s%s%s was used "
			    "by the restore and could not be taken again "
			    "(%.160s)", s->rearm->node->cell, s->rearm->name ?
			    " ('" : "", s->rearm->name ? s->rearm->name : "",
			    s->rearm->name ? "')" : "", error);
			ckpt_drop(&s->ck, s->rearm);
		}
		break;
	default:
		/* explicit and before: the reply to the request says it. */
		break;
	}
}

/* ---- the worker's replies ------------------------------------------ */

static void
session_snapshot_done(struct session *s, struct sreq *r, json_t *reply)
{
	const char *status = json_string_value(json_object_get(reply,
	    "status"));
	json_t *msg = r->pending;

	r->pending = NULL;
	s->run = NULL;
	if (status != NULL && strcmp(status, "ok") == 0 && r->target != NULL) {
		struct ckpt *old = ckpt_find_name(&s->ck,
		    json_string_value(json_object_get(msg, "name")));

		if (old != NULL && old != r->target) {
			json_object_set_new(msg, "replaced", json_integer(
			    old->node->cell));
			ckpt_drop(&s->ck, old);
		}
		r->target->name = xstrdup(json_string_value(json_object_get(msg,
		    "name")));
		json_object_set_new(msg, "cell", json_integer(
		    r->target->node->cell));
		session_answer(r, msg);
		return;
	}
	json_decref(msg);
	session_answer(r, json_pack("{s:s, s:O?}", "status", "error",
	    "error", json_object_get(reply, "error")));
}

/* The worker answered the request in flight (link.c checked that this
 * reply was owed, with the request's seq).  What it says is its word
 * about its own request: it goes into that answer and nowhere else. */
static void
session_reply(struct session *s, struct link_frame *f)
{
	json_t *reply = f->msg;
	struct sreq *r = s->run;
	const char *status = json_string_value(json_object_get(reply,
	    "status"));
	json_t *msg, *error = NULL;
	bool ran = json_is_true(json_object_get(reply, "ran"));
	int cell;

	if (r == NULL || s->state != WK_BUSY || r->after != AFTER_NONE) {
		/* Owed, yet nothing waits for it: a run killed meanwhile. */
		return;
	}
	s->state = WK_READY;
	json_object_del(reply, "ran");
	json_object_del(reply, "seq");
	if (status == NULL)
		status = "error";
	if (r->op == OP_SNAPSHOT) {
		session_snapshot_done(s, r, reply);
		return;
	}
	s->run = NULL;
	if (r->op != OP_EXEC) {
		json_object_del(reply, "t");
		session_answer(r, json_incref(reply));
		return;
	}
	cell = r->cell;
	/* Everything the cell wrote is in the pipes by now. */
	session_drain(s, false);
	session_drain(s, true);
	if (strcmp(status, "incomplete") != 0)
		s->cells = r->cell;
	if (ran) {
		session_set_node(s, ckpt_node_new(r->cell, s->node));
		s->current = NULL;
	} else if (r->pre != NULL) {
		s->current = r->pre;
	}
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
	if (r->atomic && ran && strcmp(status, "ok") != 0) {
		if (r->pre != NULL && ckpt_alive(r->pre)) {
			/* Leave no trace: the worker goes, the state before
			 * the cell comes back (session_worker_died). */
			r->pending = msg;
			r->after = AFTER_ATOMIC;
			r->target = r->pre;
			r->pre = NULL;
			r->target->held = true;
			r->deadline = r->kill_at = 0;
			s->run = r;
			s->state = WK_BUSY;
			session_signal(s, SIGKILL);
			return;
		}
		session_warn(s, "cell %d was atomic, but the checkpoint of the "
		    "state before it is gone (killed from outside coil), so "
		    "what it did stays", r->cell);
	}
	/* The state after the cell, before anyone can see the answer and
	 * send more: a request sent from the callback comes after it. */
	if (ran && s->opts->checkpoints > 0)
		session_order_ckpt(s, LINK_CK_AUTO, cell);
	if (r->pre != NULL && r->pre->kind == CKPT_ATOMIC &&
	    s->current != r->pre) {
		/* r is no longer s->run: on_drop cannot forget it for us. */
		struct ckpt *tmp = r->pre;

		r->pre = NULL;
		ckpt_drop(&s->ck, tmp);
	}
	session_answer(r, msg);
}

/* The new worker is up: answer the run that waited for it.  ck is the
 * checkpoint it was resumed from, NULL when it was spawned fresh. */
static void
session_restored(struct session *s, struct ckpt *ck, json_t *restored)
{
	struct sreq *r = s->run;
	json_t *msg = r->pending;
	char tail[256];
	int lost = (int)json_integer_value(json_object_get(restored,
	    "threads_lost"));

	s->run = NULL;
	r->pending = NULL;
	session_where(restored, tail, sizeof tail);
	switch (r->after) {
	case AFTER_DIED:
		if (r->op == OP_EXEC) {
			const char *type = r->broke ? "ProtocolError" :
			    r->killed ? (r->timed_out ? "TimeoutError" :
			    "KeyboardInterrupt") : "WorkerDied";
			json_t *e;

			if (r->broke)
				e = session_error(type, "the worker broke "
				    "protocol while running cell %d: %s, so it "
				    "was killed; %s", r->cell, r->how, tail);
			else if (r->killed)
				e = session_error(type, "cell %d %s and did not "
				    "stop within %g s of the interrupt, so its "
				    "worker was killed; %s", r->cell,
				    r->timed_out ? "ran past its timeout" :
				    "was interrupted", s->opts->grace, tail);
			else
				e = session_error(type, "the worker died (%s) "
				    "while running cell %d; %s", r->how,
				    r->cell, tail);
			json_object_set_new(msg, "error", e);
			json_object_set(msg, "restored", restored);
		} else {
			json_decref(msg);
			msg = json_pack("{s:s, s:o, s:O}", "status", "crashed",
			    "error", r->broke ? session_error("ProtocolError",
			    "the worker broke protocol while serving '%s': %s, "
			    "so it was killed; %s", request_ops[r->op].name,
			    r->how, tail) : session_error("WorkerDied", "the "
			    "worker died (%s) while serving '%s'; %s", r->how,
			    request_ops[r->op].name, tail), "restored",
			    restored);
		}
		break;
	case AFTER_ROLLBACK:
		if (ck == NULL || ck != r->target) {
			json_decref(msg);
			msg = json_pack("{s:s, s:o, s:O}", "status", "error",
			    "error", session_error("CheckpointError", "the "
			    "checkpoint died before it could be resumed; %s",
			    tail), "restored", restored);
			break;
		}
		json_object_set_new(msg, "threads_lost", json_integer(lost));
		break;
	case AFTER_RESET:
		json_decref(msg);
		msg = json_pack("{s:s, s:s}", "status", "ok", "from", ck != NULL ?
		    "pristine checkpoint" : "new interpreter");
		break;
	case AFTER_ATOMIC:
		json_object_set(msg, "restored", restored);
		if (ck == NULL || ck != r->target)
			session_warn(s, "cell %d was atomic, but the checkpoint "
			    "before it could not be resumed; %s", r->cell, tail);
		break;
	default:
		json_decref(msg);
		msg = json_pack("{s:s}", "status", "ok");
	}
	session_answer(r, msg);
}

/* strict: the new worker's fork listener (link.c checked that it is
 * one), sent before its Python started. */
static void
session_gate_arrived(struct session *s, struct link_frame *f)
{
	if (s->gate_fd >= 0)
		close(s->gate_fd);
	s->gate_fd = f->fds[0];
	f->fds[0] = -1;
	s->gate_spent = false;
}

/* hello: a worker is up, spawned fresh or resumed from a checkpoint (the
 * one owed hello says which; link.c checked that it agrees). */
static void
session_hello(struct session *s, struct link_frame *f)
{
	json_t *m = f->msg;
	const char *py = json_string_value(json_object_get(m, "python"));
	struct ckpt *ck = s->resuming;
	json_t *restored;
	char where[256];

	if (f->nfds > 0) {
		if (s->pidfd >= 0)
			close(s->pidfd);
		s->pidfd = f->fds[0];
		f->fds[0] = -1;
	}
	/* The report of what the sandbox enforces: from a fresh worker,
	 * which says hello before any cell runs; a resumed one's hello
	 * might follow cell code (an at-fork hook), and adds nothing. */
	if (ck == NULL && json_is_object(json_object_get(m, "sandbox"))) {
		json_decref(s->sandbox);
		s->sandbox = json_incref(json_object_get(m, "sandbox"));
	}
	s->gate_spent = false;
	if (py != NULL && s->python == NULL)
		s->python = xstrndup(py, strcspn(py, " ") < 64 ?
		    strcspn(py, " ") : 64);
	s->failed_starts = 0;
	s->state = WK_READY;
	s->resume_deadline = 0;
	/* What a starting worker printed is not a cell's. */
	buf_free(&s->start_err);
	s->current = NULL;
	if (ck != NULL) {
		s->resuming = NULL;
		restored = ckpt_restored(ck);
		session_set_node(s, ckpt_node_ref(ck->node));
	} else {
		restored = json_pack("{s:n, s:i}", "cell", "threads_lost", 0);
		session_set_node(s, ckpt_node_new(0, NULL));
		if (s->opts->checkpoints > 0)
			session_order_ckpt(s, LINK_CK_PRISTINE, 0);
	}
	if (ck != NULL && ck->kind != CKPT_ATOMIC) {
		/* Its process is the worker now: a replacement, before the
		 * run's answer lets anything else be sent. */
		s->rearm = ck;
		session_order_ckpt(s, LINK_CK_REARM, ck->node->cell);
	}
	if (s->died_idle != NULL) {
		session_warn(s, "the worker died between requests (%s); %s",
		    s->died_idle, session_where(restored, where, sizeof where));
		free(s->died_idle);
		s->died_idle = NULL;
	}
	if (s->run != NULL)
		session_restored(s, ck, restored);
	json_decref(restored);
	if (ck != NULL && ck->kind == CKPT_ATOMIC)
		ckpt_drop(&s->ck, ck);
}

/* The worker is gone.  Pick what comes next: the run's target, or the
 * newest checkpoint of the state the worker was in, or a fresh start. */
static void
session_restore(struct session *s)
{
	struct sreq *r = s->run;
	struct ckpt *ck;

	for (;;) {
		ckpt_prune(&s->ck, s->warnings);	/* may drop r->target */
		ck = r != NULL ? r->target : NULL;
		if (ck == NULL && !(r != NULL && r->after == AFTER_RESET))
			ck = ckpt_nearest(&s->ck, s->node, s->warnings);
		if (ck == NULL) {
			session_spawn(s);
			return;
		}
		if (session_resume(s, ck) == 0)
			return;
		session_warn(s, "the checkpoint at cell %d could not be resumed "
		    "(%s)", ck->node->cell, strerror(errno));
		ckpt_drop(&s->ck, ck);
	}
}

/* The worker is gone: answer what was in flight once another is up. */
static void
session_worker_died(struct session *s, int status)
{
	struct sreq *r;
	char how[400];
	bool starting = s->state == WK_STARTING, broke;

	/* What it sent before it died still counts: a reply, a checkpoint
	 * (or a frame that breaks protocol). */
	if (link_open(&s->ctl) && !starting)
		session_from_worker(s);
	describe_wait(status, how, sizeof how);
	broke = s->broke[0] != '\0';
	if (broke) {
		snprintf(how, sizeof how, "%s", s->broke);
		s->broke[0] = '\0';
	}
	session_drain(s, false);
	session_drain(s, true);
	if (s->resuming != NULL) {
		struct ckpt *ck = s->resuming;

		session_warn(s, "the checkpoint at cell %d died as it was "
		    "resumed (%s)", ck->node->cell, how);
		s->resuming = NULL;
		ckpt_drop(&s->ck, ck);
	} else if (starting) {
		s->failed_starts++;
		if (s->failed_starts >= 3) {
			session_fail(s, "the python worker cannot start (%s)"
			    "%s%.1800s", how, s->start_err.len ? ":\n" : "",
			    s->start_err.len ? s->start_err.p : "");
			session_close_worker(s);
			return;
		}
	}
	if (s->rearm != NULL)
		ckpt_drop(&s->ck, s->rearm);	/* never re-armed */
	session_close_worker(s);
	r = s->run;
	if (r == NULL) {
		if (!starting && s->died_idle == NULL && broke)
			xasprintf(&s->died_idle, "it broke protocol: %s, so it "
			    "was killed", how);
		else if (!starting && s->died_idle == NULL)
			s->died_idle = xstrdup(how);
	} else if (r->after == AFTER_NONE) {
		r->after = AFTER_DIED;
		r->broke = broke;
		r->deadline = r->kill_at = 0;
		snprintf(r->how, sizeof r->how, "%s", how);
		if (r->op == OP_EXEC) {
			s->cells = r->cell;
			r->pending = session_exec_response(s, r, r->killed &&
			    !broke ? session_stop_reason(r) : "crashed", NULL,
			    NULL, NULL);
		}
	}
	session_restore(s);
}

/* ---- messages from init and the worker ----------------------------- */

/*
 * init is gone: only a cell can do that, under --sandbox none, where it
 * may signal its parent.  The worker dies with init, and the checkpoints
 * cannot be resumed without it (nobody would report their exits), so they
 * go too; a new init starts a fresh worker and the session goes on.  The
 * processes left behind are ours now (we are their subreaper): reaped in
 * session_poll.
 */
static void
session_init_died(struct session *s)
{
	char err[512];

	session_signal(s, SIGKILL);
	proc_stop(&s->proc);
	s->spawns = 0;		/* its answers to them are gone with it */
	ckpt_set_free(&s->ck);
	s->reap_orphans = true;
	/* An init that dies before its first worker is up would be
	 * restarted for ever; one killed later (under none a cell can) is
	 * replaced as often as it takes. */
	if (s->state == WK_STARTING && s->resuming == NULL)
		s->init_early_deaths++;
	else
		s->init_early_deaths = 0;
	if (s->init_early_deaths >= 3) {
		session_fail(s, "coil's init process dies before a worker "
		    "starts (%d times in a row); its messages, if any, are "
		    "above", s->init_early_deaths);
		session_close_worker(s);
		return;
	}
	session_warn(s, "coil's init process was killed; a new one started, "
	    "and the checkpoints went with the old one");
	if (proc_start(&s->proc, s->worker_conf, &s->opts->sbx, err,
	    sizeof err) == -1) {
		session_fail(s, "cannot restart init: %s", err);
		session_close_worker(s);
		return;
	}
	session_worker_died(s, W_EXITCODE(0, SIGKILL));
}

static void
session_from_init(struct session *s)
{
	json_t *m;
	bool bad;
	int rc = chan_fill(&s->proc.chan);

	if (rc == 0 || (rc == -1 && errno != EAGAIN && errno != EINTR)) {
		/* After a fatal report init's end is expected: the session
		 * is over, not to be restarted. */
		if (!s->failed)
			session_init_died(s);
		return;
	}
	while ((m = chan_next(&s->proc.chan, NULL, NULL, &bad)) != NULL) {
		const char *t = json_string_value(json_object_get(m, "t"));
		pid_t pid = (pid_t)json_integer_value(json_object_get(m, "pid"));

		if (t == NULL) {
			/* ignore */
		} else if (strcmp(t, "fatal") == 0) {
			session_init_fatal(s, m);
		} else if (strcmp(t, "spawned") == 0) {
			if (pid <= 0)
				session_fail(s, "init cannot fork a worker: %s",
				    strerror((int)json_integer_value(
				    json_object_get(m, "errno"))));
			/* Only the newest spawn's answer names the worker. */
			else if (s->spawns > 0 && --s->spawns == 0 &&
			    s->pid == 0 && s->resuming == NULL &&
			    s->state != WK_NONE)
				session_spawned(s, pid);
		} else if (strcmp(t, "exit") == 0 && pid == s->pid &&
		    s->state != WK_NONE) {
			/* Exits of checkpoints are reported too; they are
			 * noticed through their pidfds when it matters. */
			session_worker_died(s, (int)json_integer_value(
			    json_object_get(m, "status")));
		}
		json_decref(m);
	}
}

/*
 * The worker broke protocol (link.h): it is finished.  Nothing more it
 * wrote is read; init reports its death, and session_worker_died answers
 * the run and resumes the newest checkpoint we recorded, with why as the
 * reason.
 */
static void
session_broke(struct session *s, const char *why)
{
	if (s->broke[0] == '\0')
		snprintf(s->broke, sizeof s->broke, "%s", why);
	link_close(&s->ctl);
	session_signal(s, SIGKILL);
}

/* init names the worker it forked: the pidfd its hello carried must be
 * of that process. */
static void
session_spawned(struct session *s, pid_t pid)
{
	s->pid = s->ctl.pid = pid;
	if (s->ctl.hello_pid > 0 && s->ctl.hello_pid != pid) {
		/* That pidfd is some other process's: never signal it.  With
		 * its socket closed the worker ends at its next read. */
		close(s->pidfd);
		s->pidfd = -1;
		snprintf(s->broke, sizeof s->broke, "its 'hello' frame carries "
		    "a pidfd of pid %ld, not of the worker (%ld)",
		    (long)s->ctl.hello_pid, (long)pid);
		link_close(&s->ctl);
	}
}

typedef void (*session_frame_fn)(struct session *, struct link_frame *);

/* What each checked frame does; link.c's table decides which may come. */
static const session_frame_fn session_on_frame[LINK_NFRAMES] = {
	[LINK_F_GATE] = session_gate_arrived,
	[LINK_F_HELLO] = session_hello,
	[LINK_F_REPLY] = session_reply,
	[LINK_F_CKPT] = session_ckpt_arrived,
	[LINK_F_CKPT_FAILED] = session_ckpt_failed,
};

static void
session_from_worker(struct session *s)
{
	struct link_frame f;
	char why[256];
	int rc, got;

	for (;;) {
		rc = link_fill(&s->ctl);
		if (rc == -1 && errno == EAGAIN)
			return;
		while ((got = link_next(&s->ctl, &f, why, sizeof why)) == 1) {
			session_on_frame[f.type](s, &f);
			link_frame_free(&f);
			if (!link_open(&s->ctl))
				return;
		}
		if (got == -1) {
			session_broke(s, why);
			return;
		}
		if (rc <= 0)
			break;
	}
	/* The worker closed its socket, or it broke: it is finished.  init
	 * reports the exit. */
	link_close(&s->ctl);
	session_signal(s, SIGKILL);
}

/* ---- serving requests ---------------------------------------------- */

static double
session_timeout_of(struct session *s, json_t *req)
{
	json_t *t = json_object_get(req, "timeout");

	return json_is_number(t) ? json_number_value(t) : s->opts->timeout;
}

/* Replace the worker on purpose: kill it and go on at once, without
 * waiting for init to report its exit (a worker of a few GB takes tens
 * of milliseconds to die, a rollback should take one): the next one
 * (r->target, or a fresh spawn) owns new channels, and the old one's
 * exit report no longer matches s->pid.  worker.c arms the resumed
 * worker's death signal only once init is its parent, so the old
 * worker's end does not take it along. */
static void
session_replace(struct session *s, struct sreq *r, enum sreq_after after)
{
	r->after = after;
	r->deadline = r->kill_at = 0;
	if (r->target != NULL)
		r->target->held = true;
	s->run = r;
	s->state = WK_BUSY;
	session_signal(s, SIGKILL);
	session_worker_died(s, W_EXITCODE(0, SIGKILL));
}

/* This cell's output cap: its max_output, else --max-output. */
static void
session_cap(struct session *s, size_t cap)
{
	if (s->ob_out.cap != cap) {
		outbuf_free(&s->ob_out);
		outbuf_free(&s->ob_err);
		outbuf_init(&s->ob_out, cap);
		outbuf_init(&s->ob_err, cap);
	}
	outbuf_reset(&s->ob_out);
	outbuf_reset(&s->ob_err);
}

/* What the worker is sent of a request: the fields it reads, no more
 * (a request's other fields could make the frame grow past the limit
 * as JSON numbers are written out again). */
static json_t *
session_worker_request(json_t *req)
{
	static const char *const keep[] = { "op", "code", "name", "cursor",
	    "all", "max_output" };
	json_t *m = json_object(), *v;
	size_t i;

	for (i = 0; i < nitems(keep); i++)
		if ((v = json_object_get(req, keep[i])) != NULL)
			json_object_set(m, keep[i], v);
	return m;
}

static void
session_start_run(struct session *s, struct sreq *r)
{
	json_t *msg;
	uint64_t seq = 0;

	r->t0 = now_ns();
	r->timeout = session_timeout_of(s, r->req);
	r->deadline = now_ms() + (int64_t)ceil(r->timeout * 1000);
	r->kill_at = 0;
	s->run = r;
	if (r->op == OP_RESET) {
		/* A fresh interpreter is the only honest reset: modules and
		 * C-level state go too.  The pristine checkpoint is one,
		 * taken before any cell ran. */
		struct ckpt *ck = ckpt_pristine(&s->ck);

		r->target = ck != NULL && ckpt_alive(ck) ? ck : NULL;
		session_replace(s, r, AFTER_RESET);
		return;
	}
	msg = session_worker_request(r->req);
	if (r->op == OP_EXEC) {
		json_t *cap = json_object_get(r->req, "max_output");

		r->cell = s->cells + 1;
		json_object_set_new(msg, "cell", json_integer(r->cell));
		session_cap(s, json_is_integer(cap) ? (size_t)json_integer_value(
		    cap) : s->opts->max_output);
		if (r->origin == ORIGIN_PERSON)
			json_object_set_new(msg, "repl", json_true());
		r->atomic = json_is_true(json_object_get(r->req, "atomic"));
		if (s->current != NULL && ckpt_alive(s->current)) {
			r->pre = s->current;
			r->pre->held = r->atomic;
		} else if (r->atomic) {
			/* No checkpoint of this state (none is on its way: an
			 * atomic cell waits for quiet): the worker takes one
			 * before it runs the cell. */
			json_object_set_new(msg, "ckpt_first", json_true());
			seq = link_owe(&s->ctl, LINK_CKPT, LINK_CK_BEFORE, 0,
			    -1);
		}
	}
	json_object_set_new(msg, "seq", json_integer((json_int_t)link_owe(
	    &s->ctl, LINK_REPLY, 0, seq, -1)));
	s->state = WK_BUSY;
	session_send(s, msg);
}

static json_t *
session_ping(struct session *s)
{
	long long mem;

	/* ping is answered at once, so the smaps of every checkpoint are
	 * read at most once a second for it; snapshots reads them fresh. */
	if (s->ping_mem_at == 0 || now_ms() - s->ping_mem_at > 1000) {
		s->ping_mem = ckpt_memory(&s->ck, s->pidfd);
		s->ping_mem_at = now_ms();
	}
	mem = s->ping_mem;

	return json_pack("{s:s, s:s, s:s?, s:o, s:i, s:b, "
	    "s:{s:i, s:o, s:i}}",
	    "status", "ok", "version", PACKAGE_VERSION,
	    "python", s->python, "sandbox", s->sandbox != NULL ?
	    json_incref(s->sandbox) : json_pack("{s:s, s:b}", "profile",
	    sandbox_profile_name(s->opts->sbx.profile), "starting", 1),
	    "cell", s->cells, "running", s->run != NULL && s->run->op ==
	    OP_EXEC, "checkpoints", "count", s->ck.count, "memory",
	    mem >= 0 ? json_integer(mem) : json_null(), "max_auto",
	    s->opts->checkpoints);
}

static void
session_snapshot(struct session *s, struct sreq *r)
{
	json_t *jn = json_object_get(r->req, "name"), *msg;
	struct ckpt *ck = s->current, *old;
	char why[200], gen[32];
	const char *name;

	if (json_is_string(jn)) {
		name = json_string_value(jn);
		if (strlen(name) != json_string_length(jn))
			err_set(why, sizeof why, "a snapshot name must not "
			    "hold NUL characters");
		if (strlen(name) != json_string_length(jn) ||
		    !session_name_ok(name, why, sizeof why)) {
			session_answer(r, session_invalid("%s", why));
			return;
		}
	} else {
		do
			snprintf(gen, sizeof gen, "snap%d", ++s->nsnap);
		while (ckpt_find_name(&s->ck, gen) != NULL);
		name = gen;
	}
	msg = json_pack("{s:s, s:s}", "status", "ok", "name", name);
	if (r->waited_for > 0)
		json_object_set_new(msg, "waited_for_cell",
		    json_integer(r->waited_for));
	if (ck != NULL && ckpt_alive(ck) && (ck->name == NULL ||
	    strcmp(ck->name, name) == 0)) {
		/* The worker has not changed since this one: pin it. */
		old = ckpt_find_name(&s->ck, name);
		if (old != NULL && old != ck) {
			json_object_set_new(msg, "replaced",
			    json_integer(old->node->cell));
			ckpt_drop(&s->ck, old);
		}
		if (ck->name == NULL)
			ck->name = xstrdup(name);
		if (ck->kind == CKPT_AUTO || ck->kind == CKPT_ATOMIC)
			ckpt_set_kind(&s->ck, ck, CKPT_PINNED);
		json_object_set_new(msg, "cell", json_integer(ck->node->cell));
		session_answer(r, msg);
		return;
	}
	/* Fork one now: the worker answers once it has. */
	r->pending = msg;
	r->t0 = now_ns();
	s->run = r;
	s->state = WK_BUSY;
	session_order_ckpt(s, LINK_CK_EXPLICIT, s->node->cell);
}

static void
session_rollback(struct session *s, struct sreq *r)
{
	json_t *to = json_object_get(r->req, "to"), *undone, *redone, *msg;
	struct ckpt *ck = ckpt_find(&s->ck, to);
	char what[96], *names;

	if (json_is_string(to))
		snprintf(what, sizeof what, "snapshot '%.64s'",
		    json_string_value(to));
	else if (json_integer_value(to) == 0)
		snprintf(what, sizeof what, "pristine checkpoint (cell 0)");
	else
		snprintf(what, sizeof what, "checkpoint at cell %lld",
		    (long long)json_integer_value(to));
	if (ck != NULL && !ckpt_alive(ck)) {
		ckpt_drop(&s->ck, ck);
		names = session_ckpt_names(s);
		session_answer(r, session_invalid("the %s is gone: its process "
		    "was killed from outside coil; nothing changed; the "
		    "checkpoints are: %s", what, names));
		free(names);
		return;
	}
	if (ck == NULL) {
		names = session_ckpt_names(s);
		session_answer(r, session_invalid("there is no %s%s; nothing "
		    "changed; the checkpoints are: %s", what,
		    json_is_integer(to) && json_integer_value(to) > s->cells ?
		    " (no such cell has run)" : json_is_integer(to) ?
		    " (it was dropped, or the cell ran no code)" : "", names));
		free(names);
		return;
	}
	ckpt_node_diff(s->node, ck->node, &undone, &redone);
	msg = json_pack("{s:s, s:i, s:s?, s:o}", "status", "ok", "cell",
	    ck->kind == CKPT_PRISTINE ? 0 : ck->node->cell, "name", ck->name,
	    "rolled_back", undone);
	if (json_array_size(redone) > 0)
		json_object_set_new(msg, "redone", redone);
	else
		json_decref(redone);
	if (!s->noted_rollback) {
		s->noted_rollback = true;
		json_object_set_new(msg, "note", json_string("only the Python "
		    "state goes back: files the undone cells wrote and "
		    "processes they started stay as they are"));
	}
	if (r->waited_for > 0)
		json_object_set_new(msg, "waited_for_cell",
		    json_integer(r->waited_for));
	r->pending = msg;
	r->target = ck;
	r->t0 = now_ns();
	session_replace(s, r, AFTER_ROLLBACK);
}

static void
session_snapshots(struct session *s, struct sreq *r)
{
	json_t *msg;

	ckpt_prune(&s->ck, s->warnings);
	msg = ckpt_list(&s->ck, s->node, s->pidfd);
	json_object_set_new(msg, "status", json_string("ok"));
	json_object_set_new(msg, "cell", json_integer(s->node != NULL ?
	    s->node->cell : 0));
	session_answer(r, msg);
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
		session_snapshot(s, r);
		break;
	case OP_SNAPSHOTS:
		session_snapshots(s, r);
		break;
	case OP_ROLLBACK:
		session_rollback(s, r);
		break;
	default:
		session_answer(r, session_invalid("op '%s' cannot be served "
		    "here", request_ops[r->op].name));
	}
}

/* Requests that need the worker up and every checkpoint it owes
 * arrived: an atomic cell must know whether the state before it is kept
 * already. */
static bool
session_needs_quiet(struct sreq *r)
{
	return r->op == OP_RESET || r->op == OP_SNAPSHOT ||
	    r->op == OP_SNAPSHOTS || r->op == OP_ROLLBACK ||
	    (r->op == OP_EXEC && json_is_true(json_object_get(r->req,
	    "atomic")));
}

static void
session_dispatch(struct session *s)
{
	while (s->run == NULL && s->queue != NULL && !s->done && !s->failed) {
		struct sreq *r = s->queue;

		if (request_ops[r->op].where == OP_WORKER &&
		    s->state != WK_READY)
			return;
		if (session_needs_quiet(r) && (s->state != WK_READY ||
		    link_ckpt_owed(&s->ctl)))
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

	if (r == NULL || s->state != WK_BUSY || r->after != AFTER_NONE ||
	    r->op == OP_SNAPSHOT)
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

	r->s = s;
	r->req = req;
	r->id = id;
	r->op = op;
	r->origin = origin;
	r->fn = fn;
	r->ctx = ctx;
	if (s->run != NULL && s->run->op == OP_EXEC)
		r->waited_for = s->run->cell;
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

/* strict: a fork of the worker waits for our answer (see gate_fd). */
static void
session_gate(struct session *s)
{
	pid_t main_tid = s->pidfd >= 0 ? ckpt_pid_of(s->pidfd) : 0;
	bool allow = main_tid > 0 && !s->gate_spent &&
	    link_ckpt_owed(&s->ctl);
	int rc = sandbox_gate_answer(s->gate_fd, main_tid, allow);

	if (rc == 1) {
		s->gate_spent = true;
	} else if (rc == -1 && errno != ENOENT && errno != EAGAIN &&
	    errno != EINTR) {
		/* The listener is broken: forks now fail, checkpoints too. */
		session_warn(s, "the checkpoint gate failed (%s); checkpoints "
		    "are off", strerror(errno));
		close(s->gate_fd);
		s->gate_fd = -1;
	}
}

static void
session_check_deadlines(struct session *s)
{
	struct sreq *r = s->run;
	int64_t now = now_ms();

	if (s->resuming != NULL && s->resume_deadline != 0 &&
	    now >= s->resume_deadline) {
		/* Stopped or wedged: init reports the kill, and the next
		 * checkpoint is tried (session_worker_died). */
		s->resume_deadline = 0;
		session_signal(s, SIGKILL);
	}
	if (r == NULL || s->state != WK_BUSY || r->after != AFTER_NONE)
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

	if (s->resuming != NULL && s->resume_deadline != 0)
		when = s->resume_deadline;
	else if (r == NULL || s->state != WK_BUSY || r->after != AFTER_NONE)
		return timeout_ms;
	else if (r->kill_at != 0)
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
	int i_init, i_ctl = -1, i_out = -1, i_err = -1, i_gate = -1;

	if (s->failed)
		return -1;
	if (nextra > 8)
		nextra = 8;
	i_init = n;
	pfd[n++] = (struct pollfd){ .fd = s->proc.chan.fd, .events = POLLIN };
	if (link_open(&s->ctl)) {
		i_ctl = n;
		pfd[n++] = (struct pollfd){ .fd = s->ctl.chan.fd,
		    .events = POLLIN };
	}
	if (s->out >= 0) {
		i_out = n;
		pfd[n++] = (struct pollfd){ .fd = s->out, .events = POLLIN };
	}
	if (s->err >= 0) {
		i_err = n;
		pfd[n++] = (struct pollfd){ .fd = s->err, .events = POLLIN };
	}
	if (s->gate_fd >= 0) {
		i_gate = n;
		pfd[n++] = (struct pollfd){ .fd = s->gate_fd, .events = POLLIN };
	}
	for (i = 0; i < nextra; i++) {
		pfd[n + i] = extra[i];
		pfd[n + i].revents = 0;
	}
	rc = poll(pfd, (nfds_t)(n + nextra), session_next_timeout(s,
	    timeout_ms));
	if (rc == -1 && errno != EINTR) {
		session_fail(s, "poll: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < nextra; i++)
		extra[i].revents = rc > 0 ? pfd[n + i].revents : 0;
	if (rc > 0) {
		/* Output first, then replies: a reply ends the cell, and its
		 * output must be in by then (session_reply drains too). */
		if (i_out >= 0 && pfd[i_out].revents && s->out >= 0 &&
		    !session_drain(s, false)) {
			close(s->out);
			s->out = -1;
		}
		if (i_err >= 0 && pfd[i_err].revents && s->err >= 0 &&
		    !session_drain(s, true)) {
			close(s->err);
			s->err = -1;
		}
		if (i_ctl >= 0 && pfd[i_ctl].revents && link_open(&s->ctl))
			session_from_worker(s);
		if (pfd[i_init].revents)
			session_from_init(s);
		if (i_gate >= 0 && pfd[i_gate].revents && s->gate_fd >= 0)
			session_gate(s);
	}
	if (s->reap_orphans)
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	session_check_deadlines(s);
	session_dispatch(s);
	return s->failed ? -1 : 0;
}

/* ---- life ---------------------------------------------------------- */

static json_t *
session_worker_conf(const struct coil_opts *o)
{
	json_t *c = json_pack("{s:s, s:I, s:s, s:i}", "workdir",
	    o->workdir, "max_output", (json_int_t)o->max_output, "figure_dir",
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
	link_init(&s->ctl, -1);
	s->out = s->err = s->pidfd = s->gate_fd = -1;
	buf_init(&s->start_err);
	outbuf_init(&s->ob_out, opts->max_output);
	outbuf_init(&s->ob_err, opts->max_output);
	outbuf_init(&s->bg_out, opts->max_output);
	outbuf_init(&s->bg_err, opts->max_output);
	s->warnings = json_array();
	ckpt_set_init(&s->ck, opts->checkpoints, opts->checkpoint_memory,
	    session_ckpt_dropped, s);
	s->node = ckpt_node_new(0, NULL);
	s->worker_conf = session_worker_conf(opts);
	/* A reader that goes away is an EPIPE for the front end to see,
	 * not a signal that skips the teardown. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		err_set(err, errlen, "signal(SIGPIPE): %s", strerror(errno));
		session_free(s);
		return NULL;
	}
	/* No process of the session outlives it: orphans come to us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		err_set(err, errlen, "prctl(PR_SET_CHILD_SUBREAPER): %s",
		    strerror(errno));
		session_free(s);
		return NULL;
	}
	if (proc_start(&s->proc, s->worker_conf, &opts->sbx, err, errlen) ==
	    -1) {
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
	/* The checkpoints first: each also dies when its socket closes,
	 * but a kill gives the memory back before coil has exited. */
	ckpt_set_free(&s->ck);
	if (s->proc.pid > 0)
		proc_stop(&s->proc);
	/* Also after a failure, when init may be gone already. */
	sandbox_cleanup(&s->opts->sbx);
	session_close_worker(s);
	if (s->run != NULL) {
		s->run->next = s->queue;
		s->queue = s->run;
		s->run = NULL;
	}
	for (r = s->queue; r != NULL; r = next) {
		next = r->next;
		session_emit(r, EV_DROPPED, NULL, 0, NULL);
		sreq_free(r);
	}
	outbuf_free(&s->ob_out);
	outbuf_free(&s->ob_err);
	outbuf_free(&s->bg_out);
	outbuf_free(&s->bg_err);
	buf_free(&s->start_err);
	json_decref(s->worker_conf);
	json_decref(s->warnings);
	json_decref(s->sandbox);
	if (s->gate_fd >= 0)
		close(s->gate_fd);
	ckpt_node_unref(s->node);
	free(s->died_idle);
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

const char *
session_failure(const struct session *s)
{
	return s->failed ? s->failure : NULL;
}

int
session_cell(const struct session *s)
{
	return s->cells;
}
