/*
 * ckpt-copy.c - a checkpoint's process and its copies (see ckpt.h).
 * ckpt_wait runs in a checkpoint process: it sleeps until it is resumed
 * as the worker (ckpt.c's ckpt_resume orders that), copying itself for
 * branches meanwhile.  ckpt_clone_* run in the supervisor: they order
 * the copies and take them.  No Python.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "ckpt.h"
#include "util.h"

/* ---- the supervisor's orders --------------------------------------- */

/* The copy's answer, m: into out, taking fds; 0 or -1 with err. */
static int
ckpt_cloned(json_t *m, int *fds, int nfds, struct ckpt_copy *out,
    char *err, size_t len)
{
	const char *t = json_string_value(json_object_get(m, "t"));
	json_int_t pid = json_integer_value(json_object_get(m, "pid"));

	if (t != NULL && strcmp(t, "cloned") == 0 && nfds == 2 && pid > 0) {
		out->sock = fds[0];
		out->pidfd = fds[1];
		out->pid = (pid_t)pid;
		return 0;
	}
	while (nfds > 0)
		close(fds[--nfds]);
	if (t != NULL && strcmp(t, "clone_failed") == 0)
		return err_set(err, len, "the checkpoint could not copy itself: "
		    "%.40s: %.120s", json_string_value(json_object_get(m,
		    "call")), json_string_value(json_object_get(m, "error")));
	return err_set(err, len, "the checkpoint answered something else "
	    "than its copy");
}

int
ckpt_clone_ask(struct ckpt *ck, int n, struct ckpt_cloning *cl, char *err,
    size_t len)
{
	json_t *m = json_pack("{s:s}", "t", "clone");
	int i;

	memset(cl, 0, sizeof *cl);
	cl->ck = ck;
	chan_init(&cl->c, -1);
	for (i = 0; i < n; i++) {
		if (ck->sock < 0 || chan_send(ck->sock, m, NULL, 0) == -1)
			break;
		cl->left++;
	}
	json_decref(m);
	if (i < n) {
		ckpt_clone_end(cl, NULL, 0);
		return err_set(err, len, "the checkpoint at cell %d is gone",
		    ck->node->cell);
	}
	cl->c.fd = ck->sock;
	return 0;
}

int
ckpt_clone_next(struct ckpt_cloning *cl, const struct ckpt_watch *w,
    int timeout_ms, struct ckpt_copy *out, char *err, size_t len)
{
	struct pollfd p[1 + CKPT_WATCH_MAX];
	struct ckpt *ck = cl->ck;
	int64_t end = now_ms() + timeout_ms, left;
	int fds[CHAN_MAX_FDS], nfds, i, n, got, rc;
	json_t *m;
	bool bad = false;

	if (cl->left <= 0 || cl->c.fd < 0)
		return err_set(err, len, "no copy of the checkpoint at cell %d "
		    "is owed", ck->node->cell);
	for (;;) {
		/* an answer read with the one before */
		if ((m = chan_next(&cl->c, fds, &nfds, &bad)) != NULL) {
			cl->left--;
			rc = ckpt_cloned(m, fds, nfds, out, err, len);
			json_decref(m);
			return rc;
		}
		if (bad)
			break;
		n = 0;
		p[n++] = (struct pollfd){ .fd = cl->c.fd, .events = POLLIN };
		for (i = 0; w != NULL && i < w->n; i++)
			p[n++] = (struct pollfd){ .fd = w->fd[i],
			    .events = POLLIN };
		if ((left = end - now_ms()) <= 0) {
			err_set(err, len, "the checkpoint at cell %d did not "
			    "copy itself within %d ms", ck->node->cell,
			    timeout_ms);
			goto broken;
		}
		if (poll(p, (nfds_t)n, (int)left) == -1 && errno != EINTR) {
			err_set(err, len, "poll: %s", strerror(errno));
			goto broken;
		}
		for (i = 1; i < n; i++)
			if (p[i].revents != 0)
				w->fn(w->ctx, p[i].fd);
		if (p[0].revents == 0)
			continue;
		got = chan_fill(&cl->c);
		if (got == 0 || (got < 0 && errno != EAGAIN &&
		    errno != EINTR)) {
			err_set(err, len, "the checkpoint at cell %d died as it "
			    "was copied", ck->node->cell);
			goto broken;
		}
	}
	err_set(err, len, "the checkpoint at cell %d sent bytes that are no "
	    "message", ck->node->cell);
broken:
	cl->broken = true;
	return -1;
}

void
ckpt_clone_end(struct ckpt_cloning *cl, const struct ckpt_watch *w,
    int timeout_ms)
{
	struct ckpt_copy copy;
	char why[8];

	/* The copies asked for and not taken: each exits at the end of
	 * its socket. */
	while (cl->left > 0 && !cl->broken && cl->c.fd >= 0) {
		if (ckpt_clone_next(cl, w, timeout_ms, &copy, why,
		    sizeof why) == 0) {
			close(copy.sock);
			close(copy.pidfd);
		}
	}
	/* One that did not answer all it was asked may answer later, and
	 * its next copy would be a stale one: it goes (it is seen dead, and
	 * dropped, as a checkpoint killed from outside is). */
	if ((cl->left > 0 || cl->broken) && cl->ck->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, cl->ck->pidfd, SIGKILL, NULL, 0);
	cl->c.fd = -1;	/* still the checkpoint's socket */
	chan_close(&cl->c);
	cl->left = 0;
}

/* ---- the checkpoint process ---------------------------------------- */

/*
 * Why a checkpoint sleeps in poll() rather than being SIGSTOPped: a
 * process blocked in poll costs nothing either, and it notices when the
 * supervisor's end of its private socket closes, which happens however
 * the supervisor ends, SIGKILL included, so it exits instead of lingering.
 * PR_SET_PDEATHSIG cannot do this job: its parent is the worker that
 * forked it, and the worker dying is exactly when this copy is needed.
 */
/* The copy (see below): 0 in it; here its pid, or -errno.  p is a pipe
 * the vfork()ed child tells its pid through. */
static pid_t
ckpt_fork_copy(const int p[2])
{
	pid_t child, copy;

	child = vfork();
	if (child == -1 && errno == EPERM)
		child = fork();
	if (child == 0) {
		copy = _Fork();
		if (copy == 0)
			return 0;
		if (copy == -1)
			copy = -errno;
		(void)!write(p[1], &copy, sizeof copy);
		_exit(0);
	}
	if (child == -1)
		return -errno;
	while (waitpid(child, NULL, 0) == -1 && errno == EINTR)
		;
	if (read(p[0], &copy, sizeof copy) != sizeof copy || copy == 0)
		copy = -EIO;
	return copy;
}

/*
 * {"t":"clone"}: a copy of this checkpoint for a new branch.  A fork of
 * ours would be our child, and we never reap: so the copy is forked by
 * a child that exits at once, and init (the subreaper) adopts it, as it
 * adopts every checkpoint whose worker died.  The copy must be a child
 * of init before the supervisor hears of it (session_copy_known): the
 * waitpid here returns once the child is a zombie, after its children
 * went to init.
 *
 * The child is vfork()ed: it shares our memory, so making it and its
 * exit copy and tear down no page tables, and the one fork of the whole
 * process is the copy's.  (Two fork()s copied the page tables of the
 * checkpoint twice, 150 MB of them for a pandas session, and tore one
 * copy down again: a third of a branch's cost.)  The child only calls
 * _Fork (no at-fork handlers, which a C library a cell loaded may have
 * registered), writes the pid into the pipe and exits; the copy, in
 * memory of its own, returns from here.  Under strict the gate lets no
 * vfork through (a process sharing the memory of one it let fork): a
 * fork()ed child does the same there.
 *
 * The copy leads a process group of its own, as every checkpoint does,
 * and sleeps on a socket of its own, whose other end goes to the
 * supervisor with a pidfd of it: {"t":"cloned","pid"} (pid in our
 * namespace), or {"t":"clone_failed", "error"}.  Returns the copy's
 * socket in the copy, -1 here.
 */
static int
ckpt_clone_here(int sock)
{
	int sp[2], p[2], fds[2], pidfd;
	pid_t copy;
	json_t *m;
	const char *what = NULL;
	int e = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1) {
		what = "socketpair";
		e = errno;
		goto fail;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		what = "pipe";
		e = errno;
		close(sp[0]);
		close(sp[1]);
		goto fail;
	}
	copy = ckpt_fork_copy(p);
	if (copy == 0) {
		close(p[0]);
		close(p[1]);
		close(sp[0]);
		close(sock);
		setpgid(0, 0);
		return sp[1];
	}
	close(p[1]);
	close(sp[1]);
	if (copy < 0) {
		what = "fork";
		e = (int)-copy;
	}
	close(p[0]);
	if (what != NULL) {
		close(sp[0]);
		goto fail;
	}
	pidfd = (int)syscall(SYS_pidfd_open, copy, 0);
	if (pidfd == -1) {
		kill(copy, SIGKILL);
		what = "pidfd_open";
		e = errno;
		close(sp[0]);
		goto fail;
	}
	fds[0] = sp[0];
	fds[1] = pidfd;
	m = json_pack("{s:s, s:I}", "t", "cloned", "pid", (json_int_t)copy);
	if (chan_send(sock, m, fds, 2) == -1)
		kill(copy, SIGKILL);
	json_decref(m);
	close(sp[0]);
	close(pidfd);
	return -1;
fail:
	m = json_pack("{s:s, s:s, s:s}", "t", "clone_failed", "error",
	    strerror(e), "call", what);
	(void)chan_send(sock, m, NULL, 0);
	json_decref(m);
	return -1;
}

void
ckpt_wait(int sock, struct ckpt_resume *res)
{
	struct chan c;
	struct pollfd p;
	json_t *m;
	int fds[CHAN_MAX_FDS], nfds, rc, copy;
	bool bad;

	chan_init(&c, sock);
	for (;;) {
		p.fd = sock;
		p.events = POLLIN;
		if (poll(&p, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		rc = chan_fill(&c);
		if (rc == 0 || (rc == -1 && errno != EINTR && errno != EAGAIN))
			_exit(0);
		while ((m = chan_next(&c, fds, &nfds, &bad)) != NULL) {
			const char *t = json_string_value(json_object_get(m,
			    "t"));

			if (t != NULL && strcmp(t, "resume") == 0 &&
			    nfds == 3) {
				res->ctl = fds[0];
				res->out = fds[1];
				res->err = fds[2];
				res->cell = (int)json_integer_value(
				    json_object_get(m, "cell"));
				res->rearm = json_is_true(json_object_get(m,
				    "rearm"));
				res->isolate = json_is_true(json_object_get(m,
				    "isolate"));
				json_decref(m);
				chan_close(&c);
				return;
			}
			while (nfds > 0)
				close(fds[--nfds]);
			copy = t != NULL && strcmp(t, "clone") == 0 ?
			    ckpt_clone_here(sock) : -1;
			json_decref(m);
			if (copy >= 0) {
				/* the copy: the parent's conversation is
				 * not ours; sleep on our own socket */
				c.fd = -1;
				chan_close(&c);
				sock = copy;
				chan_init(&c, sock);
				break;
			}
		}
		if (bad)
			_exit(0);
	}
}

