/*
 * link-test.c - the supervisor's end of the worker link (TAP): frames
 * written on a real socketpair are taken only as the answer to what is
 * owed, with its seq, kind and descriptors; anything else is a protocol
 * violation that says what was wrong.
 */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "figure.h"
#include "link.h"
#include "tap.h"
#include "util.h"

static struct link l;
static int peer = -1;

static void
fresh(void)
{
	int sv[2];

	if (peer >= 0) {
		link_close(&l);
		close(peer);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) == -1)
		abort();
	link_init(&l, sv[0]);
	peer = sv[1];
}

/* Write a frame (JSON text, with fds) as the worker would. */
static void
say(const char *text, const int *fds, int nfds)
{
	json_t *m = json_loads(text, 0, NULL);

	if (m == NULL || chan_send(peer, m, fds, nfds) == -1)
		abort();
	json_decref(m);
}

/* The next frame: 1 with its type, -1 with why containing want. */
static int
next(struct link_frame *f, char *why, size_t len)
{
	while (link_fill(&l) > 0)
		;
	why[0] = '\0';
	return link_next(&l, f, why, len);
}

static bool
accepts(enum link_frame_type type, const char *desc)
{
	struct link_frame f;
	char why[256];
	int rc = next(&f, why, sizeof why);
	bool ok = rc == 1 && f.type == type;

	if (rc == -1)
		printf("#   refused: %s\n", why);
	if (rc == 1)
		link_frame_free(&f);
	return tap_ok(ok, "%s", desc);
}

static bool
refuses(const char *want, const char *desc)
{
	struct link_frame f;
	char why[256];
	int rc = next(&f, why, sizeof why);
	bool ok = rc == -1 && strstr(why, want) != NULL;

	if (!ok)
		printf("#   rc %d, why '%s'\n", rc, why);
	if (rc == 1)
		link_frame_free(&f);
	return tap_ok(ok, "%s", desc);
}

/* A reply owed, and one carrying fds with the text of figs. */
static void
reply_with(const char *figs, int *fds, int nfds)
{
	char buf[256];
	uint64_t seq;

	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"reply\", \"status\": \"ok\", "
	    "\"seq\": %llu%s}", (unsigned long long)seq, figs);
	say(buf, fds, nfds);
}

/* A reply's figures: descriptors of files the worker opened for reading
 * (link.h), read by figure.c with its own checks. */
static void
figures(int devnull)
{
	char path[] = "/tmp/coil-link-test-XXXXXX", two[64];
	struct figure *figs;
	json_t *at = json_pack("[i, i, i]", 0, 2, 2);
	int fd[4], rw, dir, opath, proc;
	size_t n;

	if ((rw = mkstemp(path)) == -1 || write(rw, "\x89PNG figure", 12) != 12)
		abort();
	fd[0] = open(path, O_RDONLY | O_CLOEXEC);
	dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	opath = open(path, O_PATH | O_CLOEXEC);
	proc = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd[0] < 0 || dir < 0 || opath < 0 || proc < 0)
		abort();

	reply_with(", \"figures\": [0]", fd, 1);
	accepts(LINK_F_REPLY, "a reply with a figure's descriptor");
	reply_with("", fd, 1);
	refuses("1 descriptor and 0 figure indexes", "a descriptor without "
	    "its figure's index");
	reply_with(", \"figures\": [0, 1]", fd, 1);
	refuses("1 descriptor and 2 figure indexes", "more indexes than "
	    "descriptors");
	reply_with(", \"figures\": [0]", &devnull, 1);
	refuses("not a file open for reading", "a device as a figure");
	reply_with(", \"figures\": [0]", &dir, 1);
	refuses("not a file open for reading", "a directory as a figure");
	reply_with(", \"figures\": [0]", &rw, 1);
	refuses("not a file open for reading", "a file open for writing");
	reply_with(", \"figures\": [0]", &opath, 1);
	refuses("not a file open for reading", "an O_PATH descriptor");

	/* figure_take: in index order, each index once, within max. */
	fd[1] = fd[2] = fd[0];
	fd[3] = proc;
	figs = figure_take(at, fd, 3, 3, 100, &n);
	tap_ok(n == 2 && figs[0].at == 0 && figs[1].at == 2 &&
	    figs[0].len == 12 && memcmp(figs[1].p, "\x89PNG", 4) == 0,
	    "figure_take reads each figure from offset 0, an index once");
	figure_free(figs, n);
	figs = figure_take(at, fd, 3, 1, 100, &n);
	tap_ok(n == 1 && figs[0].at == 0, "an index past the display is "
	    "skipped");
	figure_free(figs, n);
	figs = figure_take(at, fd, 3, 3, 20, &n);
	tap_ok(n == 1, "figures stop at the bytes left");
	figure_free(figs, n);
	json_decref(at);
	at = json_pack("[i]", 0);
	figs = figure_take(at, &proc, 1, 1, 100, &n);
	tap_ok(figs == NULL && n == 0, "a file of /proc is no figure");
	snprintf(two, sizeof two, "%s.2", path);
	if (link(path, two) == -1)
		abort();
	figs = figure_take(at, fd, 1, 1, 100, &n);
	tap_ok(figs == NULL && n == 0, "a file of two links is no figure");
	unlink(two);
	figs = figure_take(at, fd, 1, 1, 11, &n);
	tap_ok(figs == NULL && n == 0, "a file over max is no figure");
	json_decref(at);
	unlink(path);
	close(fd[0]);
	close(rw);
	close(dir);
	close(opath);
	close(proc);
}

/* A ckpt frame naming us, with the worker another live process: a lie.
 * With the worker dead (a zombie), a checkpoint it forked is no longer
 * its child: late, not a lie. */
static void
worker_elsewhere(int fds[2])
{
	char buf[256];
	uint64_t seq;
	pid_t kid = fork();

	if (kid == 0) {
		pause();
		_exit(0);
	}
	for (int dead = 0; dead < 2; dead++) {
		struct link_frame f;
		char why[256];
		int rc;

		if (dead) {
			kill(kid, SIGKILL);
			waitid(P_PID, (id_t)kid, NULL, WEXITED | WNOWAIT);
		}
		fresh();
		l.outer = kid;
		seq = link_owe(&l, LINK_CKPT, LINK_CK_AUTO, 0, -1);
		snprintf(buf, sizeof buf, "{\"t\": \"ckpt\", \"kind\": "
		    "\"auto\", \"pid\": %ld, \"seq\": %llu}", (long)getpid(),
		    (unsigned long long)seq);
		say(buf, fds, 2);
		if (!dead) {
			refuses("which the worker did not fork", "a checkpoint "
			    "that is not the live worker's child");
			continue;
		}
		rc = next(&f, why, sizeof why);
		tap_ok(rc == 1 && f.type == LINK_F_CKPT && f.late, "one that "
		    "comes after the worker died is late, not a lie");
		if (rc == 1)
			link_frame_free(&f);
	}
	waitpid(kid, NULL, 0);
}

int
main(void)
{
	char buf[256];
	int fds[2], sv[2], pidfd, devnull;
	uint64_t seq, seq2;

	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv) == -1)
		abort();

	/* A fresh worker: hello, then a request and its reply. */
	fresh();
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	tap_ok(link_state(&l) == LINK_HELLO, "a spawned worker owes a hello");
	if (pidfd >= 0) {
		say("{\"t\": \"hello\"}", &pidfd, 1);
		accepts(LINK_F_HELLO, "its hello, with a pidfd of itself");
	} else {
		say("{\"t\": \"hello\"}", NULL, 0);
		accepts(LINK_F_HELLO, "its hello, without a pidfd");
	}
	tap_ok(link_state(&l) == LINK_IDLE, "then nothing is owed");
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	seq2 = link_owe(&l, LINK_REPLY, 0, 0, -1);
	tap_ok(seq2 == seq + 1 && seq > 0, "requests are numbered in order");
	snprintf(buf, sizeof buf, "{\"t\": \"reply\", \"status\": \"ok\", "
	    "\"seq\": %llu}", (unsigned long long)seq2);
	say(buf, NULL, 0);
	refuses("where seq", "a reply to the second request before the first");

	/* Out of turn. */
	fresh();
	say("{\"t\": \"hello\"}", NULL, 0);
	refuses("'hello' frame where nothing was owed", "a hello when idle");
	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	say("{\"t\": \"hello\"}", NULL, 0);
	refuses("where a reply", "a hello while a reply is owed");
	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	say("{\"t\": \"reply\", \"status\": \"ok\"}", NULL, 0);
	refuses("no seq", "a reply without the request's seq");
	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"reply\", \"status\": \"ok\", "
	    "\"seq\": %llu}", (unsigned long long)seq);
	say(buf, NULL, 0);
	accepts(LINK_F_REPLY, "the reply with its seq");
	say(buf, NULL, 0);
	refuses("where nothing was owed", "the same reply a second time");
	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"reply\", \"status\": \"ok\", "
	    "\"ckpt_next\": true, \"seq\": %llu}", (unsigned long long)seq);
	say(buf, NULL, 0);
	accepts(LINK_F_REPLY, "a reply's ckpt_next is only a field");
	tap_ok(!link_ckpt_owed(&l), "and owes no checkpoint");
	fresh();
	say("{\"t\": \"ckpt\", \"kind\": \"auto\", \"pid\": 5}", sv, 1);
	refuses("'ckpt' frame where nothing was owed",
	    "a checkpoint nobody ordered");

	/* Checkpoints: kind, seq, descriptors. */
	fresh();
	seq = link_owe(&l, LINK_CKPT, LINK_CK_AUTO, 0, -1);
	tap_ok(link_ckpt_owed(&l), "an ordered checkpoint is owed");
	snprintf(buf, sizeof buf, "{\"t\": \"ckpt\", \"kind\": \"explicit\", "
	    "\"pid\": %ld, \"seq\": %llu}", (long)getpid(),
	    (unsigned long long)seq);
	say(buf, sv, 1);
	refuses("of kind 'explicit' where a 'auto'", "a checkpoint of "
	    "another kind");
	fresh();
	seq = link_owe(&l, LINK_CKPT, LINK_CK_AUTO, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"ckpt\", \"kind\": \"auto\", "
	    "\"pid\": %ld, \"seq\": %llu}", (long)getpid(),
	    (unsigned long long)seq);
	say(buf, &devnull, 1);
	refuses("not a unix stream socket", "a file where its socket goes");
	fresh();
	seq = link_owe(&l, LINK_CKPT, LINK_CK_AUTO, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"ckpt\", \"kind\": \"auto\", "
	    "\"pid\": %ld, \"seq\": %llu}", (long)getpid(),
	    (unsigned long long)seq);
	say(buf, NULL, 0);
	refuses("carries 0 descriptors, not 1 to 2", "a checkpoint without "
	    "its socket");
	fresh();
	seq = link_owe(&l, LINK_CKPT, LINK_CK_AUTO, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"ckpt\", \"kind\": \"auto\", "
	    "\"pid\": 1, \"seq\": %llu}", (unsigned long long)seq);
	fds[0] = sv[0];
	fds[1] = pidfd;
	say(buf, fds, pidfd >= 0 ? 2 : 1);
	if (pidfd >= 0)
		refuses("names pid 1 but carries a pidfd of pid",
		    "a pidfd of another process than it names");
	else
		accepts(LINK_F_CKPT, "a checkpoint (no pidfds here)");
	fresh();
	seq = link_owe(&l, LINK_CKPT, LINK_CK_AUTO, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"ckpt\", \"kind\": \"auto\", "
	    "\"pid\": %ld, \"seq\": %llu}", (long)getpid(),
	    (unsigned long long)seq);
	fds[1] = devnull;
	say(buf, fds, 2);
	refuses("second descriptor that is not a pidfd", "a file where its "
	    "pidfd goes");
	if (pidfd >= 0) {
		fresh();
		seq = link_owe(&l, LINK_CKPT, LINK_CK_AUTO, 0, -1);
		snprintf(buf, sizeof buf, "{\"t\": \"ckpt\", \"kind\": "
		    "\"auto\", \"pid\": %ld, \"seq\": %llu}", (long)getpid(),
		    (unsigned long long)seq);
		fds[1] = pidfd;
		say(buf, fds, 2);
		accepts(LINK_F_CKPT, "a checkpoint with its socket and pidfd");
		worker_elsewhere(fds);
	}
	fresh();
	seq = link_owe(&l, LINK_CKPT, LINK_CK_PRISTINE, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"ckpt_failed\", \"kind\": "
	    "\"pristine\", \"error\": \"x\", \"seq\": %llu}",
	    (unsigned long long)seq);
	say(buf, NULL, 0);
	accepts(LINK_F_CKPT_FAILED, "an ordered checkpoint that failed");
	tap_ok(link_state(&l) == LINK_IDLE, "is no longer owed");
	fresh();
	seq = link_owe(&l, LINK_CKPT, LINK_CK_EXPLICIT, 0, -1);
	link_owe(&l, LINK_REPLY, 0, seq, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"reply\", \"status\": \"ok\", "
	    "\"seq\": %llu}", (unsigned long long)seq);
	say(buf, NULL, 0);
	refuses("where a 'explicit' checkpoint", "a snapshot's reply before "
	    "its checkpoint");

	/* The gate, and bytes that are not frames. */
	fresh();
	link_owe(&l, LINK_GATE, 0, 0, -1);
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	say("{\"t\": \"gate\"}", &devnull, 1);
	refuses("not a seccomp listener", "a file as the gate");
	fresh();
	link_owe(&l, LINK_GATE, 0, 0, -1);
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	say("{\"t\": \"hello\"}", NULL, 0);
	accepts(LINK_F_HELLO, "a worker the kernel gave no gate says hello");
	fresh();
	link_owe(&l, LINK_HELLO, 0, 0, 3);
	say("{\"t\": \"hello\"}", NULL, 0);
	refuses("started fresh where a checkpoint", "a resumed checkpoint's "
	    "hello must say so");
	fresh();
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	if (write(peer, "\xff\xff\xff\xff\0\0\0\0", 8) != 8)
		abort();
	refuses("over the limits", "a header over the frame limit");
	fresh();
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	if (write(peer, "\x02\0\0\0\x01\0\0\0{}", 10) != 10)
		abort();
	refuses("announcing 1 descriptors, of which 0 arrived",
	    "a header promising descriptors that never came");
	fresh();
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	if (write(peer, "\x03\0\0\0\0\0\0\0{{{", 11) != 11)
		abort();
	refuses("not JSON", "a body that is not JSON");
	fresh();
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	say("{\"t\": \"spawned\", \"pid\": 1}", NULL, 0);
	refuses("unknown 'spawned' frame", "init's message on the worker's "
	    "socket");
	fresh();
	link_owe(&l, LINK_HELLO, 0, 0, -1);
	say("[1]", NULL, 0);
	refuses("not a message", "a frame that is not an object");

	/* %save FILE.ipynb: a question mid-cell, one at a time. */
	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"notebook\", \"seq\": %llu}",
	    (unsigned long long)seq);
	say(buf, NULL, 0);
	accepts(LINK_F_NOTEBOOK, "a cell asks for the notebook");
	tap_ok(link_state(&l) == LINK_REPLY, "its reply is still owed");
	say(buf, NULL, 0);
	refuses("before its last question was answered",
	    "a second question before the answer");
	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	say(buf, NULL, 0);
	refuses("where seq", "a notebook question with another seq");
	fresh();
	seq = link_owe(&l, LINK_REPLY, 0, 0, -1);
	snprintf(buf, sizeof buf, "{\"t\": \"notebook\", \"seq\": %llu}",
	    (unsigned long long)seq);
	say(buf, NULL, 0);
	accepts(LINK_F_NOTEBOOK, "asked");
	tap_ok(link_answered_input(&l) == 0, "answered");
	say(buf, NULL, 0);
	accepts(LINK_F_NOTEBOOK, "then it may ask again");
	fresh();
	say(buf, NULL, 0);
	refuses("where nothing was owed", "a notebook question between "
	    "cells");

	figures(devnull);

	link_close(&l);
	close(peer);
	close(sv[0]);
	close(sv[1]);
	close(devnull);
	if (pidfd >= 0)
		close(pidfd);
	return tap_done();
}
