/*
 * link.c - the worker's control socket, supervisor side (see link.h).
 *
 * Invariant: a frame is accepted only as the answer to the head of the
 * owed queue, through the one row of link_rules that pairs that state
 * with the frame's type; everything a row does not check is left to the
 * caller as the worker's word about its own cell.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "link.h"
#include "util.h"

const char *const link_ckpt_names[LINK_NCKPT] = {
	[LINK_CK_AUTO] = "auto", [LINK_CK_PRISTINE] = "pristine",
	[LINK_CK_EXPLICIT] = "explicit", [LINK_CK_BEFORE] = "before",
	[LINK_CK_REARM] = "rearm",
};

static const char *const link_frame_names[LINK_NFRAMES] = {
	[LINK_F_GATE] = "gate", [LINK_F_HELLO] = "hello",
	[LINK_F_REPLY] = "reply", [LINK_F_CKPT] = "ckpt",
	[LINK_F_CKPT_FAILED] = "ckpt_failed", [LINK_F_INPUT] = "input",
	[LINK_F_NOTEBOOK] = "notebook",
};

typedef int (*link_check_fn)(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);

static int link_check_gate(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);
static int link_check_hello(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);
static int link_check_reply(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);
static int link_check_ckpt(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);
static int link_check_failed(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);
static int link_check_input(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);
static int link_check_notebook(struct link *, const struct link_owed *,
    struct link_frame *, char *, size_t);

/* The (state, frame) table: the only pairs that are not a violation. */
static const struct link_rule {
	enum link_owe state;
	enum link_frame_type type;
	int min_fds, max_fds;
	link_check_fn check;
} link_rules[] = {
	{ LINK_GATE, LINK_F_GATE, 1, 1, link_check_gate },
	{ LINK_HELLO, LINK_F_HELLO, 0, 1, link_check_hello },
	{ LINK_REPLY, LINK_F_REPLY, 0, CHAN_FIGURES_MAX, link_check_reply },
	{ LINK_CKPT, LINK_F_CKPT, 1, 2, link_check_ckpt },
	{ LINK_CKPT, LINK_F_CKPT_FAILED, 0, 0, link_check_failed },
	{ LINK_REPLY, LINK_F_INPUT, 0, 0, link_check_input },
	{ LINK_REPLY, LINK_F_NOTEBOOK, 0, 0, link_check_notebook },
};

void
link_init(struct link *l, int fd)
{
	uint64_t r = 0;

	memset(l, 0, sizeof *l);
	chan_init(&l->chan, fd);
	/* Whatever the worker sends is weighed before it is parsed. */
	chan_limit(&l->chan, &chan_peer_limits);
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
		r = (uint64_t)now_ns() * 2654435761u;
	/* Below 2^52, so that any JSON reader keeps it exact. */
	l->seq = (r & ((UINT64_C(1) << 52) - 1)) | 1;
}

void
link_close(struct link *l)
{
	if (l->chan.fd >= 0 || l->chan.nfds > 0)
		chan_close(&l->chan);
	l->chan.fd = -1;
	l->head = l->n = 0;
	l->pid = l->hello_pid = l->outer = 0;
}

bool
link_open(const struct link *l)
{
	return l->chan.fd >= 0;
}

uint64_t
link_owe(struct link *l, enum link_owe what, enum link_ckpt kind,
    uint64_t seq, int resumed)
{
	struct link_owed *o;

	if (l->n == LINK_MAX_OWED)
		fatal("the worker owes more than %d frames", LINK_MAX_OWED);
	if (seq == 0 && (what == LINK_REPLY || what == LINK_CKPT))
		seq = ++l->seq;
	o = &l->owed[(l->head + l->n++) % LINK_MAX_OWED];
	o->what = what;
	o->seq = seq;
	o->kind = kind;
	o->resumed = resumed;
	o->input = o->asking = false;
	return seq;
}

enum link_owe
link_state(const struct link *l)
{
	return l->n > 0 ? l->owed[l->head].what : LINK_IDLE;
}

bool
link_ckpt_owed(const struct link *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->owed[(l->head + i) % LINK_MAX_OWED].what == LINK_CKPT)
			return true;
	return false;
}

int
link_fill(struct link *l)
{
	return chan_fill(&l->chan);
}

void
link_describe(const struct link_owed *o, char *buf, size_t len)
{
	switch (o != NULL ? o->what : LINK_IDLE) {
	case LINK_GATE:
		snprintf(buf, len, "the sandbox's gate");
		break;
	case LINK_HELLO:
		snprintf(buf, len, "a hello");
		break;
	case LINK_REPLY:
		snprintf(buf, len, "a reply (seq %" PRIu64 ")", o->seq);
		break;
	case LINK_CKPT:
		snprintf(buf, len, "a '%s' checkpoint (seq %" PRIu64 ")",
		    link_ckpt_names[o->kind], o->seq);
		break;
	default:
		snprintf(buf, len, "nothing");
	}
}

/* ---- descriptors --------------------------------------------------- */

static bool
link_fd_is(int fd, const char *what)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	/* fs(proc): the kernel's: /proc/self/fd, /proc/self/fdinfo and
	 * /proc/PID of the worker, read as data */
	n = readlink(path, target, sizeof target - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, what) == 0;
}

int
link_pidfd_pids(int fd, pid_t *inner, pid_t *outer)
{
	char path[64], line[256];
	long pid = 0, ns = 0;
	FILE *f;

	*inner = *outer = 0;
	if (!link_fd_is(fd, "anon_inode:[pidfd]"))
		return -1;
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	/* fs(proc): the kernel's: /proc/self/fd, /proc/self/fdinfo and
	 * /proc/PID of the worker, read as data */
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "Pid: %ld", &pid) == 1)
			continue;
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6, *end;
			long v;

			/* The last field: the pid in the innermost namespace,
			 * init's. */
			for (;;) {
				v = strtol(p, &end, 10);
				if (end == p)
					break;
				ns = v;
				p = end;
			}
		}
	}
	fclose(f);
	if (pid <= 0)
		return -1;
	*outer = (pid_t)pid;
	*inner = (pid_t)(ns > 0 ? ns : pid);
	return 0;
}

/* The parent of a process of our namespace, from /proc; 0 if gone.
 * *zombie (may be NULL) says whether it has exited already. */
static pid_t
link_ppid_state(pid_t pid, bool *zombie)
{
	char path[64], line[256], state = '?';
	long ppid = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	/* fs(proc): the kernel's: /proc/self/fd, /proc/self/fdinfo and
	 * /proc/PID of the worker, read as data */
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "State: %c", &state) == 1)
			continue;
		if (sscanf(line, "PPid: %ld", &ppid) == 1)
			break;
	}
	fclose(f);
	if (zombie != NULL)
		*zombie = state == 'Z' || state == 'X';
	return (pid_t)ppid;
}

static pid_t
link_ppid(pid_t pid)
{
	return link_ppid_state(pid, NULL);
}

int
link_children(pid_t pid, pid_t *kids, int max)
{
	char path[96];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
	/* fs(proc): the kernel's: /proc/self/fd, /proc/self/fdinfo and
	 * /proc/PID of the worker, read as data */
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		FILE *f;
		long c;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%ld/task/%.20s/children",
		    (long)pid, e->d_name);
		/* fs(proc): the kernel's: /proc/self/fd, /proc/self/fdinfo
		 * and /proc/PID of the worker, read as data */
		if ((f = fopen(path, "re")) == NULL) {
			n = -1;
			break;
		}
		while (n < max && fscanf(f, "%ld", &c) == 1)
			kids[n++] = (pid_t)c;
		fclose(f);
	}
	closedir(d);
	return n;
}

int
link_kill_child(pid_t parent, pid_t child)
{
	int fd = (int)syscall(SYS_pidfd_open, child, 0), rc;
	bool zombie = false;

	if (fd < 0)
		return -1;
	rc = link_ppid_state(child, &zombie) == parent && !zombie ?
	    (int)syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) : -1;
	close(fd);
	return rc;
}

static bool
link_is_unix_stream(int fd)
{
	struct stat st;
	int type = 0, domain = 0;
	socklen_t n = sizeof type, m = sizeof domain;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &n) == 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &m) == 0 &&
	    type == SOCK_STREAM && domain == AF_UNIX;
}

pid_t
link_check_copy(int sock, int pidfd, pid_t pid, pid_t init_outer,
    char *why, size_t len)
{
	pid_t inner, outer;
	bool zombie = false;

	if (!link_is_unix_stream(sock))
		return err_set(why, len, "the copy's socket is no unix "
		    "stream socket");
	if (link_pidfd_pids(pidfd, &inner, &outer) == -1 || inner != pid ||
	    outer <= 0)
		return err_set(why, len, "the copy's pidfd is not of the pid "
		    "it names (%ld)", (long)pid);
	if (init_outer > 0 && (link_ppid_state(outer, &zombie) !=
	    init_outer || zombie))
		return err_set(why, len, "the copy (pid %ld) is not a live "
		    "child of init", (long)pid);
	return outer;
}

/* ---- the checks ---------------------------------------------------- */

static bool
link_seq_ok(const struct link_owed *o, struct link_frame *f, char *why,
    size_t len)
{
	json_t *v = json_object_get(f->msg, "seq");

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) != o->seq) {
		err_set(why, len, "its '%s' frame carries %s%" PRId64 " where "
		    "seq %" PRIu64 " was owed", link_frame_names[f->type],
		    json_is_integer(v) ? "seq " : "no seq",
		    json_is_integer(v) ? (int64_t)json_integer_value(v) : 0,
		    o->seq);
		return false;
	}
	f->seq = o->seq;
	return true;
}

static bool
link_kind_ok(const struct link_owed *o, struct link_frame *f, char *why,
    size_t len)
{
	const char *k = json_string_value(json_object_get(f->msg, "kind"));

	if (k == NULL || strcmp(k, link_ckpt_names[o->kind]) != 0) {
		err_set(why, len, "its '%s' frame is of kind '%.32s' where a "
		    "'%s' checkpoint was owed", link_frame_names[f->type],
		    k != NULL ? k : "(none)", link_ckpt_names[o->kind]);
		return false;
	}
	f->kind = o->kind;
	return true;
}

static int
link_check_gate(struct link *l, const struct link_owed *o,
    struct link_frame *f, char *why, size_t len)
{
	(void)l;
	(void)o;
	if (!link_fd_is(f->fds[0], "anon_inode:seccomp notify"))
		return err_set(why, len, "its 'gate' frame carries a descriptor "
		    "that is not a seccomp listener");
	return 0;
}

static int
link_check_hello(struct link *l, const struct link_owed *o,
    struct link_frame *f, char *why, size_t len)
{
	json_t *r = json_object_get(f->msg, "resumed");
	pid_t inner;

	if (o->resumed < 0 ? r != NULL : (!json_is_integer(r) ||
	    json_integer_value(r) != o->resumed))
		return err_set(why, len, "its 'hello' frame says it was %s where "
		    "%s was started", r != NULL ? "resumed" : "started fresh",
		    o->resumed < 0 ? "a fresh worker" : "a checkpoint");
	if (f->nfds == 1) {
		if (link_pidfd_pids(f->fds[0], &inner, &f->outer) == -1)
			return err_set(why, len, "its 'hello' frame carries a "
			    "descriptor that is not a pidfd");
		if (l->pid > 0 && inner != l->pid)
			return err_set(why, len, "its 'hello' frame carries a "
			    "pidfd of pid %ld, not of the worker (%ld)",
			    (long)inner, (long)l->pid);
		l->hello_pid = inner;
		l->outer = f->outer;
	}
	return 0;
}

/* A figure's descriptor: a regular file open for reading only.  Its
 * size, links and file system are figure.c's to judge as it reads: a
 * cell may change them after the worker looked, which is no lie of the
 * worker's code; what a descriptor is and how it was opened it cannot. */
static bool
link_is_figure(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	return fl != -1 && (fl & O_PATH) == 0 &&
	    (fl & O_ACCMODE) == O_RDONLY && fstat(fd, &st) == 0 &&
	    S_ISREG(st.st_mode);
}

static int
link_check_reply(struct link *l, const struct link_owed *o,
    struct link_frame *f, char *why, size_t len)
{
	json_t *at = json_object_get(f->msg, "figures");
	int i;

	(void)l;
	if (!link_seq_ok(o, f, why, len))
		return -1;
	if (!json_is_string(json_object_get(f->msg, "status")))
		return err_set(why, len, "its 'reply' frame has no status");
	if (f->nfds == 0 && at == NULL)
		return 0;
	if (!json_is_array(at) || json_array_size(at) != (size_t)f->nfds)
		return err_set(why, len, "its 'reply' frame carries %d "
		    "descriptor%s and %zu figure indexes", f->nfds,
		    f->nfds == 1 ? "" : "s", json_array_size(at));
	for (i = 0; i < f->nfds; i++)
		if (!link_is_figure(f->fds[i]))
			return err_set(why, len, "its 'reply' frame carries a "
			    "descriptor that is not a file open for reading");
	return 0;
}

#define LINK_MAX_PROMPT 4096

static int
link_check_input(struct link *l, const struct link_owed *o,
    struct link_frame *f, char *why, size_t len)
{
	json_t *p = json_object_get(f->msg, "prompt");

	(void)l;
	if (!link_seq_ok(o, f, why, len))
		return -1;
	if (!o->input)
		return err_set(why, len, "it asked for input in a cell that "
		    "may not read any");
	if (o->asking)
		return err_set(why, len, "it asked for input twice without "
		    "an answer");
	if (!json_is_string(p) || json_string_length(p) > LINK_MAX_PROMPT)
		return err_set(why, len, "its 'input' frame has no prompt of "
		    "at most %d bytes", LINK_MAX_PROMPT);
	p = json_object_get(f->msg, "page");
	if (p != NULL && !json_is_string(p))
		return err_set(why, len, "its 'input' frame's page is not "
		    "text");
	return 0;
}

/* Any cell may ask for the notebook, one question at a time. */
static int
link_check_notebook(struct link *l, const struct link_owed *o,
    struct link_frame *f, char *why, size_t len)
{
	(void)l;
	if (!link_seq_ok(o, f, why, len))
		return -1;
	if (o->asking)
		return err_set(why, len, "it asked for the notebook before "
		    "its last question was answered");
	return 0;
}

void
link_allow_input(struct link *l, uint64_t seq)
{
	int i;

	for (i = 0; i < l->n; i++) {
		struct link_owed *o = &l->owed[(l->head + i) % LINK_MAX_OWED];

		if (o->what == LINK_REPLY && o->seq == seq)
			o->input = true;
	}
}

int
link_answered_input(struct link *l)
{
	struct link_owed *o = l->n > 0 ? &l->owed[l->head] : NULL;

	if (o == NULL || o->what != LINK_REPLY || !o->asking)
		return -1;
	o->asking = false;
	return 0;
}

static int
link_check_ckpt(struct link *l, const struct link_owed *o,
    struct link_frame *f, char *why, size_t len)
{
	json_t *p = json_object_get(f->msg, "pid");
	pid_t inner;

	if (!link_seq_ok(o, f, why, len) || !link_kind_ok(o, f, why, len))
		return -1;
	if (!json_is_integer(p) || json_integer_value(p) <= 0 ||
	    json_integer_value(p) > INT32_MAX)
		return err_set(why, len, "its 'ckpt' frame has no pid");
	f->pid = (pid_t)json_integer_value(p);
	if (!link_is_unix_stream(f->fds[0]))
		return err_set(why, len, "its 'ckpt' frame carries a descriptor "
		    "that is not a unix stream socket");
	if (f->nfds == 2) {
		if (link_pidfd_pids(f->fds[1], &inner, &f->outer) == -1)
			return err_set(why, len, "its 'ckpt' frame carries a "
			    "second descriptor that is not a pidfd");
		if (inner != f->pid)
			return err_set(why, len, "its 'ckpt' frame names pid %ld "
			    "but carries a pidfd of pid %ld", (long)f->pid,
			    (long)inner);
	}
	if (l->pid > 0 && f->pid == l->pid)
		return err_set(why, len, "its 'ckpt' frame names the worker "
		    "itself");
#ifdef COIL_TEST_HOOKS
	/* tests/ckpt/late-frame.py: a supervisor slow to read. */
	if (getenv("COIL_TEST_SLOW_CKPT_MS") != NULL)
		usleep((useconds_t)atoi(getenv("COIL_TEST_SLOW_CKPT_MS")) *
		    1000);
#endif
	if (l->outer > 0 && f->outer > 0 && link_ppid(f->outer) != l->outer) {
		bool zombie = false;

		/* A checkpoint forked just before the worker died is
		 * reparented before its frame is read: not a lie, but not
		 * one to keep either (a process the cell started looks the
		 * same now). */
		if (link_ppid_state(l->outer, &zombie) == 0 || zombie) {
			f->late = true;
			return 0;
		}
		return err_set(why, len, "its 'ckpt' frame names pid %ld, which "
		    "the worker did not fork", (long)f->pid);
	}
	return 0;
}

static int
link_check_failed(struct link *l, const struct link_owed *o,
    struct link_frame *f, char *why, size_t len)
{
	(void)l;
	if (!link_seq_ok(o, f, why, len) || !link_kind_ok(o, f, why, len))
		return -1;
	return 0;
}

/* ---- reading ------------------------------------------------------- */

static void
link_frame_init(struct link_frame *f)
{
	size_t i;

	memset(f, 0, sizeof *f);
	for (i = 0; i < nitems(f->fds); i++)
		f->fds[i] = -1;
}

void
link_frame_free(struct link_frame *f)
{
	int i;

	json_decref(f->msg);
	for (i = 0; i < f->nfds; i++)
		if (f->fds[i] >= 0)
			close(f->fds[i]);
	link_frame_init(f);
}

/* What the frame in f is, and the rule that lets it answer the head of
 * the queue (*o, which a worker without a fork listener moves on); NULL
 * with why when it may not come now. */
static const struct link_rule *
link_rule_of(struct link *l, struct link_frame *f, struct link_owed **o,
    char *why, size_t len)
{
	const char *t = json_string_value(json_object_get(f->msg, "t"));
	const struct link_rule *rule = NULL;
	char owed[96];
	size_t r;

	link_describe(*o, owed, sizeof owed);
	if (!json_is_object(f->msg) || t == NULL) {
		err_set(why, len, "it sent a frame that is not a message "
		    "where %s was owed", owed);
		return NULL;
	}
	for (r = 0; r < nitems(link_frame_names); r++)
		if (strcmp(t, link_frame_names[r]) == 0)
			break;
	if (r == nitems(link_frame_names)) {
		err_set(why, len, "it sent an unknown '%.32s' frame where %s "
		    "was owed", t, owed);
		return NULL;
	}
	f->type = (enum link_frame_type)r;
	if (link_state(l) == LINK_GATE && f->type == LINK_F_HELLO &&
	    l->n > 1) {
		/* The gate is the kernel's to give: a worker that got no
		 * listener goes straight to its hello. */
		l->head = (l->head + 1) % LINK_MAX_OWED;
		l->n--;
		*o = &l->owed[l->head];
		link_describe(*o, owed, sizeof owed);
	}
	for (r = 0; r < nitems(link_rules); r++)
		if (link_rules[r].state == link_state(l) &&
		    link_rules[r].type == f->type)
			rule = &link_rules[r];
	if (rule == NULL)
		err_set(why, len, "it sent a '%s' frame where %s was owed",
		    link_frame_names[f->type], owed);
	return rule;
}

int
link_next(struct link *l, struct link_frame *f, char *why, size_t len)
{
	int fds[CHAN_MAX_FDS], nfds = 0, i;
	const struct link_rule *rule;
	struct link_owed *o = l->n > 0 ? &l->owed[l->head] : NULL;
	bool bad;
	json_t *m;

	link_frame_init(f);
	m = chan_next(&l->chan, fds, &nfds, &bad);
	if (m == NULL) {
		if (bad)
			return err_set(why, len, "it sent bytes that are not a "
			    "frame (%s)", l->chan.why);
		if (l->chan.in.len == 0 && l->chan.nfds > 0)
			return err_set(why, len, "it sent %d descriptor%s "
			    "without a frame", l->chan.nfds,
			    l->chan.nfds > 1 ? "s" : "");
		return 0;
	}
	f->msg = m;
	for (i = 0; i < nfds; i++)
		f->fds[i] = fds[i];
	f->nfds = nfds;
	rule = link_rule_of(l, f, &o, why, len);
	if (rule == NULL)
		goto out;
	if (nfds < rule->min_fds || nfds > rule->max_fds) {
		char want[32];

		if (rule->min_fds == rule->max_fds)
			snprintf(want, sizeof want, "%d", rule->min_fds);
		else
			snprintf(want, sizeof want, "%d to %d", rule->min_fds,
			    rule->max_fds);
		err_set(why, len, "its '%s' frame carries %d descriptor%s, not "
		    "%s", link_frame_names[f->type], nfds, nfds == 1 ? "" : "s",
		    want);
		goto out;
	}
	if (rule->check(l, o, f, why, len) == -1)
		goto out;
	if (f->type == LINK_F_INPUT || f->type == LINK_F_NOTEBOOK) {
		o->asking = true;	/* the reply is still owed */
		return 1;
	}
	l->head = (l->head + 1) % LINK_MAX_OWED;
	l->n--;
	return 1;
out:
	link_frame_free(f);
	return -1;
}
