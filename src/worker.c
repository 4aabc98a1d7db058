/*
 * worker.c - the C half of the worker (see worker.h).  The Python half,
 * worker.py, is compiled into the binary as bytecode (worker_py_code, made
 * by the build tool pyembed with this same libpython) and as source.
 *
 * Invariant: between requests no Python code runs, so a SIGINT meant for
 * a cell that already finished is cleared before the next one starts
 * (worker_clear_signals), never raised in the wrong cell.
 *
 * The worker forks a checkpoint only when the supervisor orders one
 * ({"op":"ckpt"}, or an exec's "ckpt_first"), and echoes each request's
 * "seq" in the frames that answer it (link.h).  The seq is taken off
 * before Python sees the request: a cell cannot read it from there.
 *
 * Checkpoints (ckpt.h) are forked here: worker_checkpoint returns twice,
 * like fork.  In the worker it returns 0 (or -1 when fork failed); in the
 * copy it returns 1, but only once the supervisor has resumed that copy
 * as the new worker, which then carries on with the request loop as if
 * it had just answered the request the checkpoint was taken at.
 */
#include "config.h"

#include <Python.h>
#include <marshal.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chan.h"
#include "ckpt.h"
#include "util.h"
#include "worker.h"

extern const char worker_py_source[], audit_py_source[];
extern const unsigned char worker_py_code[], audit_py_code[];
extern const size_t worker_py_code_len, audit_py_code_len;
extern const long worker_py_magic, audit_py_magic;

/* The code object of one of coil's Python files: the bytecode built in
 * when this interpreter reads it, else compiled from the source.  New
 * reference, or NULL with an exception set. */
static PyObject *
worker_code(const unsigned char *code, size_t len, long magic,
    const char *source)
{
	PyObject *c = NULL;

	if (magic == PyImport_GetMagicNumber()) {
		c = PyMarshal_ReadObjectFromString((const char *)code,
		    (Py_ssize_t)len);
		if (c == NULL)
			PyErr_Clear();
	}
	return c != NULL ? c : Py_CompileString(source, "<coil>",
	    Py_file_input);
}

#define WORKER_FLUSH_SIGNAL (SIGRTMIN + 4)

static struct chan worker_ctl;
static json_t *worker_sandbox;	/* the report, for hello */

static PyObject *worker_py_from_json(json_t *j);

/* Install src/audit.py's hook, which puts the sandbox's denials into
 * words (the kernel enforces them whatever it does). */
static void
worker_audit(const struct sandbox_conf *sbx, const struct sandbox_report *rep)
{
	json_t *ac;
	PyObject *g, *c, *r;

	if (sbx->profile == SANDBOX_NONE)
		return;
	ac = sandbox_audit_conf(sbx, rep);
	g = PyDict_New();
	c = worker_py_from_json(ac);
	json_decref(ac);
	PyDict_SetItemString(g, "__name__", PyUnicode_FromString("_coil_audit"));
	PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins());
	PyDict_SetItemString(g, "conf", c);
	Py_DECREF(c);
	c = worker_code(audit_py_code, audit_py_code_len, audit_py_magic,
	    audit_py_source);
	r = c != NULL ? PyEval_EvalCode(c, g, g) : NULL;
	if (r == NULL) {
		PyErr_Print();
		fflush(NULL);
		_exit(EXIT_PYTHON);
	}
	Py_DECREF(r);
	Py_DECREF(c);
	Py_DECREF(g);
}
static pid_t worker_init_pid;	/* init, the parent a worker dies with */
static bool worker_orphan_armed;

/*
 * A worker dies with init (PR_SET_PDEATHSIG).  A resumed checkpoint is at
 * first still the child of the worker it replaces, which the supervisor
 * killed but does not wait for (a big one takes tens of milliseconds to
 * exit, and a rollback should not): arming the signal then would kill us
 * when that worker is gone.  So it is armed once init is our parent,
 * checked again before each request.
 */
static void
worker_watch_parent(void)
{
	if (worker_orphan_armed || getppid() != worker_init_pid)
		return;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		fatal_code(EXIT_SETUP, errno, "worker: "
		    "prctl(PR_SET_PDEATHSIG)");
	if (getppid() != worker_init_pid)
		_exit(0);	/* init died in between */
	worker_orphan_armed = true;
}
static timer_t worker_timer;
static bool worker_timer_ok;
static PyObject *worker_handle;		/* _coil.handle, owned */
static int worker_saved_fd[3] = { -1, -1, -1 };
static struct stat worker_saved_st[3];

static PyObject *worker_prepare;	/* _coil.ckpt_prepare, owned */
static PyObject *worker_resumed;	/* _coil.ckpt_resumed, owned */
static char worker_ckpt_err[160];	/* why the last fork failed */
static struct ckpt_hot worker_hot;	/* pages to copy after a fork */
/* More than this is data a cell rewrote, not the interpreter's own
 * working set: it is left to be copied if and when it is written. */
#define WORKER_HOT_MAX 1024		/* pages */
/* Checkpoints forked here and not yet reaped.  Only these are waited
 * for: a waitpid(-1) would steal the exit of a cell's own child. */
static pid_t *worker_kids;
static size_t worker_nkids, worker_kidcap;

/* Convert jansson to Python.  Returns a new reference. */
static PyObject *
worker_py_from_json(json_t *j)
{
	PyObject *o, *v;
	const char *k;
	json_t *jv;
	size_t i;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		o = PyDict_New();
		json_object_foreach(j, k, jv) {
			v = worker_py_from_json(jv);
			PyDict_SetItemString(o, k, v);
			Py_DECREF(v);
		}
		return o;
	case JSON_ARRAY:
		o = PyList_New((Py_ssize_t)json_array_size(j));
		json_array_foreach(j, i, jv)
			PyList_SET_ITEM(o, (Py_ssize_t)i, worker_py_from_json(jv));
		return o;
	case JSON_STRING:
		return PyUnicode_DecodeUTF8(json_string_value(j),
		    (Py_ssize_t)json_string_length(j), "surrogateescape");
	case JSON_INTEGER:
		return PyLong_FromLongLong(json_integer_value(j));
	case JSON_REAL:
		return PyFloat_FromDouble(json_real_value(j));
	case JSON_TRUE:
		Py_RETURN_TRUE;
	case JSON_FALSE:
		Py_RETURN_FALSE;
	default:
		Py_RETURN_NONE;
	}
}

/* Convert a reply built by worker.py (dicts, lists, str, int, float,
 * bool, None) to jansson.  Strings are encoded with backslashreplace so
 * lone surrogates become text, never invalid UTF-8.  New reference. */
static json_t *
worker_json_from_py(PyObject *o)
{
	if (o == Py_None)
		return json_null();
	if (o == Py_True)
		return json_true();
	if (o == Py_False)
		return json_false();
	if (PyLong_Check(o)) {
		long long v = PyLong_AsLongLong(o);

		if (v == -1 && PyErr_Occurred()) {
			PyErr_Clear();
			return json_null();
		}
		return json_integer(v);
	}
	if (PyFloat_Check(o)) {
		json_t *r = json_real(PyFloat_AS_DOUBLE(o));

		return r != NULL ? r : json_null();
	}
	if (PyUnicode_Check(o)) {
		PyObject *b = PyUnicode_AsEncodedString(o, "utf-8",
		    "backslashreplace");
		json_t *r;

		if (b == NULL) {
			PyErr_Clear();
			return json_string("<unencodable>");
		}
		r = json_stringn(PyBytes_AS_STRING(b),
		    (size_t)PyBytes_GET_SIZE(b));
		Py_DECREF(b);
		return r != NULL ? r : json_string("<invalid>");
	}
	if (PyDict_Check(o)) {
		json_t *r = json_object();
		PyObject *k, *v;
		Py_ssize_t pos = 0;

		while (PyDict_Next(o, &pos, &k, &v)) {
			const char *ks;

			if (!PyUnicode_Check(k) ||
			    (ks = PyUnicode_AsUTF8(k)) == NULL) {
				PyErr_Clear();
				continue;
			}
			json_object_set_new(r, ks, worker_json_from_py(v));
		}
		return r;
	}
	if (PyList_Check(o) || PyTuple_Check(o)) {
		json_t *r = json_array();
		Py_ssize_t i, n = PySequence_Fast_GET_SIZE(o);

		for (i = 0; i < n; i++)
			json_array_append_new(r,
			    worker_json_from_py(PySequence_Fast_GET_ITEM(o, i)));
		return r;
	}
	return json_null();
}

/* Drop a SIGINT that arrived after the cell it was meant for ended. */
static void
worker_clear_signals(void)
{
	if (PyErr_CheckSignals() != 0)
		PyErr_Clear();
}

/* A cell may close or replace fd 1 and 2; put the pipes back so the next
 * cell's output is still captured.  Returns how many were repaired. */
static int
worker_repair_fds(void)
{
	struct stat st;
	int fd, n = 0;

	for (fd = 1; fd <= 2; fd++) {
		if (fstat(fd, &st) == 0 &&
		    st.st_ino == worker_saved_st[fd].st_ino &&
		    st.st_dev == worker_saved_st[fd].st_dev)
			continue;
		dup2(worker_saved_fd[fd], fd);
		n++;
	}
	return n;
}

static void
worker_save_fds(void)
{
	int fd;

	for (fd = 1; fd <= 2; fd++) {
		worker_saved_fd[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 100);
		if (worker_saved_fd[fd] == -1 ||
		    fstat(fd, &worker_saved_st[fd]) == -1)
			fatal_code(EXIT_SETUP, errno, "worker: cannot keep fd "
			    "%d", fd);
	}
}

/* While a cell runs, a timer signal every 20 ms makes worker.py flush
 * sys.stdout, so block-buffered output still streams. */
static void
worker_flush_timer(bool on)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (!worker_timer_ok)
		return;
	if (on) {
		its.it_interval.tv_nsec = 20 * 1000 * 1000;
		its.it_value = its.it_interval;
	}
	timer_settime(worker_timer, 0, &its, NULL);
}

static json_t *
worker_call(json_t *req)
{
	PyObject *preq, *pres;
	json_t *reply;
	int fixed;

	worker_clear_signals();
	preq = worker_py_from_json(req);
	worker_flush_timer(true);
	pres = PyObject_CallOneArg(worker_handle, preq);
	worker_flush_timer(false);
	Py_DECREF(preq);
	if (pres == NULL) {
		/* Only an interrupt landing in coil's own code gets here. */
		PyObject *type, *value, *tb;

		PyErr_Fetch(&type, &value, &tb);
		reply = json_pack("{s:s, s:{s:s, s:s, s:n, s:n}}",
		    "status", "error", "error", "type",
		    type != NULL ? ((PyTypeObject *)type)->tp_name :
		    "SystemError",
		    "message", "interrupted in coil's own code",
		    "traceback", "line");
		Py_XDECREF(type);
		Py_XDECREF(value);
		Py_XDECREF(tb);
	} else {
		reply = worker_json_from_py(pres);
		Py_DECREF(pres);
	}
	fflush(NULL);
	fixed = worker_repair_fds();
	if (fixed > 0) {
		json_t *w = json_object_get(reply, "warnings");

		if (!json_is_array(w)) {
			w = json_array();
			json_object_set_new(reply, "warnings", w);
		}
		json_array_append_new(w, json_string("fd 1 or 2 was closed or "
		    "replaced by the cell; coil put its output pipe back"));
	}
	return reply;
}

static void
worker_init_python(json_t *conf, const struct sandbox_conf *sbx,
    const struct sandbox_report *rep)
{
	PyConfig config;
	PyStatus st;
	PyObject *mod, *dict, *code, *res, *setup, *pconf;

	PyConfig_InitIsolatedConfig(&config);
	config.install_signal_handlers = 1;
	config.buffered_stdio = 1;
	config.parse_argv = 0;
	st = PyConfig_SetString(&config, &config.program_name, L"coil");
	if (!PyStatus_Exception(st))
		st = PyConfig_SetString(&config, &config.stdio_encoding,
		    L"utf-8");
	if (!PyStatus_Exception(st))
		st = PyConfig_SetString(&config, &config.stdio_errors,
		    L"backslashreplace");
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st))
		fatal_code(EXIT_PYTHON, 0, "worker: python did not start: %s",
		    st.err_msg != NULL ? st.err_msg : "unknown error");
	/* Before anything else runs: --preload's imports get its words
	 * too. */
	worker_audit(sbx, rep);

	mod = PyImport_AddModule("_coil");	/* borrowed */
	dict = PyModule_GetDict(mod);
	code = worker_code(worker_py_code, worker_py_code_len, worker_py_magic,
	    worker_py_source);
	if (code == NULL)
		goto fail;
	res = PyEval_EvalCode(code, dict, dict);
	Py_DECREF(code);
	if (res == NULL)
		goto fail;
	Py_DECREF(res);
	worker_handle = PyDict_GetItemString(dict, "handle");
	setup = PyDict_GetItemString(dict, "setup");
	worker_prepare = PyDict_GetItemString(dict, "ckpt_prepare");
	worker_resumed = PyDict_GetItemString(dict, "ckpt_resumed");
	if (worker_handle == NULL || setup == NULL || worker_prepare == NULL ||
	    worker_resumed == NULL)
		fatal_code(EXIT_PYTHON, 0, "worker: coil's python half is "
		    "incomplete");
	Py_INCREF(worker_handle);
	Py_INCREF(worker_prepare);
	Py_INCREF(worker_resumed);
	{
		struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
		    .sigev_signo = WORKER_FLUSH_SIGNAL };

		worker_timer_ok = timer_create(CLOCK_MONOTONIC, &sev,
		    &worker_timer) == 0;
		json_object_set_new(conf, "flush_signal", json_integer(
		    worker_timer_ok ? WORKER_FLUSH_SIGNAL : 0));
	}
	json_object_set_new(conf, "saved_fds", json_pack("[n, i, i]",
	    worker_saved_fd[1], worker_saved_fd[2]));
	pconf = worker_py_from_json(conf);
	res = PyObject_CallOneArg(setup, pconf);
	Py_DECREF(pconf);
	if (res == NULL)
		goto fail;
	Py_DECREF(res);
	return;
fail:
	PyErr_Print();
	fflush(NULL);
	_exit(EXIT_PYTHON);
}

/* ---- checkpoints --------------------------------------------------- */

static void
worker_reap(void)
{
	size_t i = 0;
	pid_t r;

	while (i < worker_nkids) {
		r = waitpid(worker_kids[i], NULL, WNOHANG);
		if (r == 0) {
			i++;
		} else if (r == -1 && errno == EINTR) {
			continue;
		} else {
			/* Reaped, or reaped by a cell (ECHILD): gone. */
			worker_kids[i] = worker_kids[--worker_nkids];
		}
	}
}

static void
worker_hello(int resumed_at)
{
	json_t *hello;
	int pidfd;

	int fds[1], nfds = 0;

	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	hello = json_pack("{s:s, s:I, s:s, s:O?}", "t", "hello",
	    "pid", (json_int_t)getpid(), "python", Py_GetVersion(),
	    "sandbox", worker_sandbox);
	if (resumed_at >= 0)
		json_object_set_new(hello, "resumed", json_integer(resumed_at));
	if (pidfd >= 0)
		fds[nfds++] = pidfd;
	if (chan_send(worker_ctl.fd, hello, fds, nfds) == -1)
		_exit(0);
	json_decref(hello);
	if (pidfd >= 0)
		close(pidfd);
}

/* strict: seccomp's fork listener goes to the supervisor, which answers
 * our checkpoint forks, before Python starts: neither --preload's imports
 * nor any cell ever holds it. */
static void
worker_send_gate(void)
{
	int fd = sandbox_take_notify_fd();
	json_t *m;

	if (fd < 0)
		return;
	m = json_pack("{s:s}", "t", "gate");
	if (chan_send(worker_ctl.fd, m, &fd, 1) == -1)
		_exit(0);
	json_decref(m);
	close(fd);
}

/*
 * The control socket goes to a high descriptor, close-on-exec: out of
 * the way of a cell that closes or reuses low ones (os.closerange(3,
 * 256) before a daemon's fork), and never inherited by a program it
 * runs.  It hides nothing from code in this process, which can always
 * find it in /proc/self/fd: the supervisor checks every frame (link.h).
 */
static int
worker_high_fd(int fd)
{
	struct rlimit rl;
	rlim_t top = 1024;
	int nfd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
		top = rl.rlim_cur;
	if (top <= 200)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)top - 1);
	if (nfd == -1)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)top / 2);
	if (nfd == -1)
		return fd;
	close(fd);
	return nfd;
}

static int worker_checkpoint(const char *kind, int cell, json_int_t seq);

/* Make fd 1 and 2, and the copies worker_save_fds keeps of them, refer
 * to out and err.  The copies keep their numbers: worker.py knows them. */
static void
worker_point_fds(int out, int err)
{
	if (dup2(out, 1) == -1 || dup2(err, 2) == -1 ||
	    dup3(out, worker_saved_fd[1], O_CLOEXEC) == -1 ||
	    dup3(err, worker_saved_fd[2], O_CLOEXEC) == -1 ||
	    fstat(1, &worker_saved_st[1]) == -1 ||
	    fstat(2, &worker_saved_st[2]) == -1)
		_exit(EXIT_SETUP);
}

/*
 * In the fresh copy, right after fork.  It lets go of everything that is
 * the worker's conversation with the supervisor first: a copy holding
 * the control socket or the output pipes would keep them open after the
 * worker dies.  Then it sleeps (ckpt_wait) until it is resumed or not
 * needed any more.  Python is left exactly as it was at the fork:
 * PyOS_AfterFork_Child runs only on resume, so a copy that is never
 * resumed writes to hardly any of the pages it shares with the worker.
 */
static void
worker_become_checkpoint(int sock)
{
	struct ckpt_resume res;
	int devnull;

	chan_close(&worker_ctl);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		worker_point_fds(devnull, devnull);
		close(devnull);
	}
	worker_nkids = 0;		/* the worker's children, not ours */
	prctl(PR_SET_NAME, "coil-ckpt");

	ckpt_wait(sock, &res);

	/* Resumed: become the worker.  The worker that forked this copy is
	 * dead by now (the supervisor waits for init's report of its exit),
	 * so the parent is init, and the death signal below ties this
	 * process to init as the first worker was. */
	worker_point_fds(res.out, res.err);
	close(res.out);
	close(res.err);
	chan_init(&worker_ctl, worker_high_fd(res.ctl));
	if (set_cloexec(worker_ctl.fd, true) == -1)
		fatal_code(EXIT_SETUP, errno, "worker: cannot set FD_CLOEXEC "
		    "on its socket");
	worker_watch_parent();
	prctl(PR_SET_NAME, "coil-worker");
	{
		/* POSIX timers do not survive a fork: make the flush timer
		 * anew (worker.py keeps its signal number). */
		struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
		    .sigev_signo = WORKER_FLUSH_SIGNAL };

		worker_timer_ok = timer_create(CLOCK_MONOTONIC, &sev,
		    &worker_timer) == 0;
	}
	PyOS_AfterFork_Child();
	{
		PyObject *r = PyObject_CallNoArgs(worker_resumed);

		if (r == NULL)
			PyErr_Print();
		Py_XDECREF(r);
	}
	fflush(NULL);
	/* The supervisor orders the replacement of this checkpoint (the
	 * re-arm) once it has read the hello. */
	worker_hello(res.cell);
}

/*
 * Fork a checkpoint of the interpreter as it is now and hand it to the
 * supervisor.  Returns 0 in the worker, -1 when fork failed (the
 * supervisor is told, worker_ckpt_err says why), 1 in the copy once it
 * has been resumed as the worker.
 */
static int
worker_checkpoint(const char *kind, int cell, json_int_t seq)
{
	PyObject *r;
	int threads = 0, sv[2], fds[2], nfds, saved_errno, pidfd;
	uint64_t t0;
	double fork_ms;
	json_t *m;
	pid_t pid;

	/* Python's part: count the threads the copy will lack, keep the
	 * random module's state, gc.freeze() so the collector does not
	 * un-share every page later. */
	r = PyObject_CallNoArgs(worker_prepare);
	if (r == NULL)
		PyErr_Clear();
	else {
		threads = (int)PyLong_AsLong(r);
		if (threads < 0) {
			PyErr_Clear();
			threads = 0;
		}
		Py_DECREF(r);
	}
	fflush(NULL);
	ckpt_hot_scan(&worker_hot, WORKER_HOT_MAX);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		saved_errno = errno;
		snprintf(worker_ckpt_err, sizeof worker_ckpt_err,
		    "socketpair: %s", strerror(saved_errno));
		goto failed;
	}
	t0 = now_ns();
	PyOS_BeforeFork();
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		worker_orphan_armed = false;	/* fork cleared the signal */
		worker_hot.n = worker_hot.pages = 0;
		worker_become_checkpoint(sv[1]);
		return 1;
	}
	saved_errno = errno;
	PyOS_AfterFork_Parent();
	fork_ms = (double)(now_ns() - t0) / 1e6;
	close(sv[1]);
	if (pid == -1) {
		close(sv[0]);
		snprintf(worker_ckpt_err, sizeof worker_ckpt_err, "fork: %s",
		    strerror(saved_errno));
		goto failed;
	}
	if (worker_nkids == worker_kidcap) {
		worker_kidcap = worker_kidcap ? 2 * worker_kidcap : 16;
		worker_kids = xrealloc(worker_kids, worker_kidcap *
		    sizeof *worker_kids);
	}
	worker_kids[worker_nkids++] = pid;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	fds[0] = sv[0];
	fds[1] = pidfd;
	nfds = pidfd >= 0 ? 2 : 1;
	m = json_pack("{s:s, s:s, s:i, s:I, s:i, s:f, s:I}", "t", "ckpt",
	    "kind", kind, "cell", cell, "pid", (json_int_t)pid,
	    "threads", threads, "fork_ms", fork_ms, "seq", seq);
	/* If this fails the supervisor is gone; closing our copy of its end
	 * below then leaves the checkpoint at end of file, and it exits. */
	chan_send(worker_ctl.fd, m, fds, nfds);
	json_decref(m);
	close(sv[0]);
	if (pidfd >= 0)
		close(pidfd);
	/* The checkpoint is the supervisor's now; the time left after the
	 * reply goes to the copies the next cell would make (until a request
	 * arrives: then that cell makes the ones it needs). */
	ckpt_hot_prefault(&worker_hot, worker_ctl.fd);
	return 0;
failed:
	m = json_pack("{s:s, s:s, s:i, s:s, s:I}", "t", "ckpt_failed", "kind",
	    kind, "cell", cell, "error", worker_ckpt_err, "seq", seq);
	chan_send(worker_ctl.fd, m, NULL, 0);
	json_decref(m);
	return -1;
}

/* Send a reply to the request numbered seq.  One too big for a frame
 * (a result or an error message of hundreds of megabytes) becomes an
 * error that says so: the supervisor would refuse the frame. */
static void
worker_send(json_t *reply, json_int_t seq)
{
	json_object_set_new(reply, "t", json_string("reply"));
	json_object_set_new(reply, "seq", json_integer(seq));
	if (chan_send(worker_ctl.fd, reply, NULL, 0) == -1) {
		if (errno != EMSGSIZE)
			_exit(0);
		json_decref(reply);
		reply = json_pack("{s:s, s:I, s:s, s:{s:s, s:s, s:n, s:n}}",
		    "t", "reply", "seq", seq, "status", "error", "error",
		    "type", "OverflowError", "message", "the answer is too "
		    "large to send (over the 256 MiB frame limit); print or "
		    "return less of it", "traceback", "line");
		if (chan_send(worker_ctl.fd, reply, NULL, 0) == -1)
			_exit(0);
	}
	json_decref(reply);
}

static json_t *
worker_ckpt_error(const char *msg)
{
	return json_pack("{s:s, s:{s:s, s:s, s:n, s:n}}", "status", "error",
	    "error", "type", "CheckpointError", "message", msg, "traceback",
	    "line");
}

/* {"op":"ckpt", "kind", "cell"}: a checkpoint now, as the supervisor
 * ordered.  The snapshot op's (explicit) is also answered with a reply.
 * 1 in the copy once it is resumed, else 0. */
static int
worker_ordered_ckpt(json_t *req, json_int_t seq)
{
	const char *kind = json_string_value(json_object_get(req, "kind"));
	int cell = (int)json_integer_value(json_object_get(req, "cell"));
	int rc = worker_checkpoint(kind != NULL ? kind : "auto", cell, seq);

	if (rc == 1)
		return 1;
	if (kind != NULL && strcmp(kind, "explicit") == 0)
		worker_send(rc == 0 ? json_pack("{s:s}", "status", "ok") :
		    worker_ckpt_error(worker_ckpt_err), seq);
	return 0;
}

static void
worker_serve(void)
{
	json_t *req, *reply;
	const char *op;
	json_int_t seq;
	int cell, rc;

	for (;;) {
		worker_reap();
		worker_watch_parent();
		/* Threads of earlier cells run while we wait. */
		Py_BEGIN_ALLOW_THREADS
		req = chan_recv(&worker_ctl, NULL, NULL);
		Py_END_ALLOW_THREADS
		if (req == NULL)
			break;
		seq = json_integer_value(json_object_get(req, "seq"));
		json_object_del(req, "seq");
		op = json_string_value(json_object_get(req, "op"));
		if (op != NULL && strcmp(op, "ckpt") == 0) {
			worker_ordered_ckpt(req, seq);
			json_decref(req);
			continue;
		}
		cell = (int)json_integer_value(json_object_get(req, "cell"));
		if (json_is_true(json_object_get(req, "ckpt_first"))) {
			/* An atomic cell needs the state before it kept. */
			rc = worker_checkpoint("before", cell - 1, seq);
			if (rc == 1) {
				json_decref(req);
				continue;
			}
			if (rc == -1) {
				char msg[320];

				json_decref(req);
				snprintf(msg, sizeof msg, "the cell did not run: "
				    "it is atomic, and the state before it could "
				    "not be kept (%s); run it without atomic, or "
				    "free memory", worker_ckpt_err);
				worker_send(worker_ckpt_error(msg), seq);
				continue;
			}
		}
		reply = worker_call(req);
		json_decref(req);
		json_object_set_new(reply, "ran", json_boolean(json_is_true(
		    json_object_get(reply, "ran"))));
		worker_send(reply, seq);
	}
}

void
worker_main(int ctl_fd, json_t *conf, const struct sandbox_conf *sbx,
    const struct sandbox_report *rep)
{
	chan_init(&worker_ctl, worker_high_fd(ctl_fd));
	worker_init_pid = getppid();
	worker_send_gate();
	/* A C extension's printf lands between the cell's prints, not at
	 * the end of the cell. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	worker_save_fds();
	worker_init_python(conf, sbx, rep);
	worker_sandbox = sandbox_report_json(rep);
	worker_hello(-1);
	worker_serve();
	/* The supervisor is gone: nothing is left to answer. */
	fflush(NULL);
	_exit(0);
}
