/*
 * worker.c - the C half of the worker (see worker.h): the interpreter,
 * the request loop, checkpoints.  Its descriptors are worker-fds.c's
 * (worker-int.h), the conversion of requests and replies pyjson.c's.
 * The Python half is four files built into the binary (pycode.h): the
 * audit hook (effects.py, audit.py) and the "_coil" module (errors.py,
 * worker.py).
 *
 * Invariant: between requests no user code runs (only worker.py's idle(),
 * which flushes coil's own streams), so a SIGINT meant for a cell that
 * already finished is dropped there or cleared before the next one
 * starts (worker_clear_signals), never raised in the wrong cell.
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
 * it had just answered the request the checkpoint was taken at.  Each
 * copy leads a process group of its own (worker_become_checkpoint): the
 * worker's group, which an interrupt and the worker's end reach, is the
 * worker and what its cells started.
 */
#include "config.h"

#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
#include "magic.h"
#include "pycode.h"
#include "pyjson.h"
#include "util.h"
#include "worker.h"
#include "worker-int.h"

#define WORKER_FLUSH_SIGNAL (SIGRTMIN + 4)

struct chan worker_ctl;
json_int_t worker_seq;		/* of the request being served */
static json_t *worker_sandbox;	/* the report, for hello */

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

static PyObject *worker_resumed;	/* _coil.ckpt_resumed, owned */
static PyObject *worker_idle_fn;	/* _coil.idle, owned */
#define WORKER_IDLE_MS 20		/* flushes while threads run idle */
static char worker_ckpt_err[160];	/* why the last fork failed */
/* A branch's worker: "yes" once in a Landlock domain of its own, or
 * "no: why"; "" when it was not asked (worker_isolate). */
static char worker_isolation[200];
static struct ckpt_hot worker_hot;	/* pages to copy after a fork */
/* More than this is data a cell rewrote, not the interpreter's own
 * working set: it is left to be copied if and when it is written. */
#define WORKER_HOT_MAX 1024		/* pages */
/* Checkpoints forked here and not yet reaped.  Only these are waited
 * for: a waitpid(-1) would steal the exit of a cell's own child. */
static pid_t *worker_kids;
static size_t worker_nkids, worker_kidcap;

/* Drop a SIGINT that arrived after the cell it was meant for ended. */
static void
worker_clear_signals(void)
{
	if (PyErr_CheckSignals() != 0)
		PyErr_Clear();
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

/* The CPU time of the children reaped, in ns, as JSON. */
static json_t *
worker_kids_ns(const struct rusage *ru)
{
	return json_integer(((json_int_t)ru->ru_utime.tv_sec +
	    ru->ru_stime.tv_sec) * 1000000000 + ((json_int_t)
	    ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000);
}

static json_t *
worker_call(json_t *req)
{
	PyObject *preq, *pres;
	json_t *reply;
	int fixed;
	struct timespec cpu0;
	struct rusage kids0;

	worker_clear_signals();
	worker_stop_clear();
	/* Where the request's CPU time starts: the supervisor's own reading
	 * at sending also counts what came before it here (a checkpoint's
	 * fork); it bounds these figures (session_take_usage). */
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0) == -1)
		cpu0.tv_sec = cpu0.tv_nsec = 0;
	if (getrusage(RUSAGE_CHILDREN, &kids0) == -1)
		memset(&kids0, 0, sizeof kids0);
	preq = pyjson_to_py(req);
	worker_flush_timer(true);
	pres = PyObject_CallOneArg(worker_handle, preq);
	worker_flush_timer(false);
	Py_DECREF(preq);
	if (pres == NULL) {
		/* Only an interrupt landing in coil's own code gets here. */
		PyObject *type, *value, *tb;

		PyErr_Fetch(&type, &value, &tb);
		reply = worker_error(type != NULL ?
		    ((PyTypeObject *)type)->tp_name : "SystemError",
		    "interrupted in coil's own code");
		Py_XDECREF(type);
		Py_XDECREF(value);
		Py_XDECREF(tb);
	} else {
		reply = pyjson_to_json(pres);
		Py_DECREF(pres);
	}
	worker_stop_tell(reply);
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
	if (cpu0.tv_sec > 0 || cpu0.tv_nsec > 0)
		json_object_set_new(reply, "cpu0_ns", json_integer(
		    (json_int_t)cpu0.tv_sec * 1000000000 + cpu0.tv_nsec));
	json_object_set_new(reply, "cpu0_kids_ns", worker_kids_ns(&kids0));
	/* Unchanged, it spares the supervisor reading them (usage.h). */
	if (getrusage(RUSAGE_CHILDREN, &kids0) == 0)
		json_object_set_new(reply, "cpu1_kids_ns",
		    worker_kids_ns(&kids0));
	return reply;
}

/* The timer that flushes a running cell's streams, and its signal for
 * worker.py (0: none). */
static void
worker_make_timer(json_t *conf)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
	    .sigev_signo = WORKER_FLUSH_SIGNAL };

	worker_timer_ok = timer_create(CLOCK_MONOTONIC, &sev,
	    &worker_timer) == 0;
	json_object_set_new(conf, "flush_signal", json_integer(
	    worker_timer_ok ? WORKER_FLUSH_SIGNAL : 0));
}

/* The interpreter, isolated from the environment and the user's site
 * (PyConfig), with coil's name and its stdio in UTF-8; the worker ends
 * when it does not start.  With a venv (conf's "venv") site is not
 * imported here: worker.py's setup imports it for the venv, as the
 * venv's own python would, once the audit hook is in (a .pth file's
 * line runs as a cell's code would), and the system's site-packages
 * are on sys.path only when the venv's pyvenv.cfg asks for them. */
static void
worker_start_python(json_t *conf)
{
	PyConfig config;
	PyStatus st;

	PyConfig_InitIsolatedConfig(&config);
	if (json_is_string(json_object_get(conf, "venv")))
		config.site_import = 0;
	config.install_signal_handlers = 1;
	config.buffered_stdio = 1;
	config.parse_argv = 0;
	st = PyConfig_SetString(&config, &config.program_name, L"coil");
	/* sys.executable: the python3.X beside this libpython, not a search
	 * of PATH for "coil" (which finds nothing, or coil itself). */
	/* fs(worker): in the worker, before Python starts: the
	 * interpreter's own path, fixed at build time */
	if (!PyStatus_Exception(st) && access(PYTHON_EXECUTABLE, X_OK) == 0)
		st = PyConfig_SetBytesString(&config, &config.executable,
		    PYTHON_EXECUTABLE);
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
}

/* Python started, with the audit hook first (worker_audit), then coil's
 * Python half run in _coil's namespace and its setup given conf: the
 * worker ends when any of it fails. */
static void
worker_init_python(json_t *conf, const struct sandbox_conf *sbx,
    const struct sandbox_report *rep)
{
	PyObject *mod, *dict, *res, *setup, *pconf, *effects;

	worker_start_python(conf);
	/* Before anything else runs: --preload's imports get its words
	 * too. */
	effects = worker_audit(sbx, rep);

	mod = PyImport_AddModule("_coil");	/* borrowed */
	dict = PyModule_GetDict(mod);
	/* A module's globals carry __builtins__ (the import system puts it
	 * there; PyImport_AddModule does not).  C code that imports while a
	 * frame of ours is on top (numpy's repr, the parser normalising a
	 * non-ASCII name through unicodedata) reads it from our globals,
	 * and fails with KeyError without it. */
	if (PyDict_SetItemString(dict, "__builtins__",
	    PyEval_GetBuiltins()) == -1)
		goto out;
	if (worker_ask_install(dict) == -1)
		goto out;
	if (pycode_run("_coil", dict) == -1 || worker_fork_bind(dict) == -1)
		goto out;
	if (effects != NULL) {
		PyDict_SetItemString(dict, "_effects", effects);
		Py_DECREF(effects);
	}
	worker_handle = PyDict_GetItemString(dict, "handle");
	setup = PyDict_GetItemString(dict, "setup");
	worker_resumed = PyDict_GetItemString(dict, "ckpt_resumed");
	worker_idle_fn = PyDict_GetItemString(dict, "idle");
	if (worker_handle == NULL || setup == NULL ||
	    worker_resumed == NULL || worker_idle_fn == NULL)
		fatal_code(EXIT_PYTHON, 0, "worker: coil's python half is "
		    "incomplete");
	Py_INCREF(worker_handle);
	Py_INCREF(worker_resumed);
	Py_INCREF(worker_idle_fn);
	worker_make_timer(conf);
	/* the checkpoint magics, for magicproc.py to list and refuse */
	json_object_set_new(conf, "ckpt_magics", magic_list());
	json_object_set_new(conf, "saved_fds", json_pack("[n, i, i]",
	    worker_kept_fd(1), worker_kept_fd(2)));
	pconf = pyjson_to_py(conf);
	res = PyObject_CallOneArg(setup, pconf);
	Py_DECREF(pconf);
	if (res == NULL)
		goto out;
	Py_DECREF(res);
	return;
out:
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
	if (worker_isolation[0] != '\0')
		json_object_set_new(hello, "isolated", strcmp(worker_isolation,
		    "yes") == 0 ? json_true() : json_string(worker_isolation));
	if (pidfd >= 0)
		fds[nfds++] = pidfd;
	/* within the limits it is weighed with: one over them would be
	 * this worker's violation, and it could not start anyway */
	if (chan_send_within(worker_ctl.fd, hello, fds, nfds,
	    &chan_peer_limits) == -1)
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

static int worker_checkpoint(const char *kind, int cell, json_int_t seq);
static void worker_clear_sigint(void);

/*
 * In the fresh copy, right after fork.  It lets go of everything that is
 * the worker's conversation with the supervisor first: a copy holding
 * the control socket or the output pipes would keep them open after the
 * worker dies.  It leaves the worker's process group (a SIGINT meant for
 * a cell is not for it).  Then it sleeps (ckpt_wait) until it is resumed
 * or not needed any more.
 *
 * Until then it does as little as it can, and touches as little memory:
 * each page a new process touches first is a fault, 20 to 80 us on a
 * 2-CPU VM, and the 55 its way to sleep once took (20 of them the
 * dynamic linker's: configure.ac links with -z now) were about a third
 * of what a checkpoint cost the machine; 23 now.  So no freeing, no
 * bookkeeping: that waits for a resume.  Python is left exactly as it
 * was at the fork too: PyOS_AfterFork_Child runs only on resume.
 */
static void
worker_become_checkpoint(int sock)
{
	struct ckpt_resume res;
	int devnull;

	if (setpgid(0, 0) == -1 && getpgrp() != getpid())
		_exit(EXIT_SETUP);
	close(worker_ctl.fd);
	/* fs(dev): /dev/null */
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		worker_aim_fds(devnull, devnull);
		close(devnull);
	}
	prctl(PR_SET_NAME, "coil-ckpt");

	ckpt_wait(sock, &res);

	/* What the fork left to clean up: the old socket's buffer, the
	 * worker's children (not ours), the death signal (fork cleared it),
	 * the copy-ahead list, and SIGINT, blocked across the fork (one that
	 * came while we slept was for a cell long gone). */
	worker_ctl.fd = -1;
	chan_close(&worker_ctl);
	worker_nkids = 0;
	worker_orphan_armed = false;
	worker_hot.n = worker_hot.pages = 0;
	worker_clear_sigint();
	if (res.isolate)
		worker_isolate(worker_isolation, sizeof worker_isolation);

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
	worker_fork_after(true);
	worker_fork_publish();
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

static sigset_t worker_sigint_saved;	/* the mask worker_block_sigint saved */

/* Block SIGINT in this thread across a checkpoint's fork (on), then put
 * the mask back (off). */
static void
worker_block_sigint(bool on)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	if (on)
		pthread_sigmask(SIG_BLOCK, &set, &worker_sigint_saved);
	else
		pthread_sigmask(SIG_SETMASK, &worker_sigint_saved, NULL);
}

/*
 * In a checkpoint resumed.  A checkpoint leaves the worker's process
 * group for one of its own (worker_become_checkpoint): an interrupt goes
 * to the worker's group (init.c), and a checkpoint must sleep through it
 * to be resumed later, whatever a cell did to SIGINT's handler; when the
 * worker dies its group is killed.  An interrupt sent between the fork
 * and setpgid, or to the copy while it slept, is pending here, as SIGINT
 * stayed blocked: it is dropped before the mask is put back.
 */
static void
worker_clear_sigint(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	while (sigtimedwait(&set, NULL, &zero) == SIGINT)
		;
	worker_block_sigint(false);
}

/* A checkpoint forked here: ours to reap (worker_reap) when it ends. */
static void
worker_keep_kid(pid_t pid)
{
	if (worker_nkids == worker_kidcap) {
		worker_kidcap = worker_kidcap ? 2 * worker_kidcap : 16;
		worker_kids = xrealloc(worker_kids, worker_kidcap *
		    sizeof *worker_kids);
	}
	worker_kids[worker_nkids++] = pid;
}

/* Hand the checkpoint just forked (pid, with sock its end of the
 * checkpoint's socket) to the supervisor, with a descriptor of the
 * process when the kernel gives one. */
static void
worker_ckpt_hand(pid_t pid, int sock, const char *kind, int cell,
    int threads, double fork_ms, json_int_t seq)
{
	int fds[2], nfds, pidfd;
	json_t *m;

	worker_keep_kid(pid);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	fds[0] = sock;
	fds[1] = pidfd;
	nfds = pidfd >= 0 ? 2 : 1;
	m = json_pack("{s:s, s:s, s:i, s:I, s:i, s:f, s:I}", "t", "ckpt",
	    "kind", kind, "cell", cell, "pid", (json_int_t)pid,
	    "threads", threads, "fork_ms", fork_ms, "seq", seq);
	/* If this fails the supervisor is gone; closing our copy of its end
	 * below then leaves the checkpoint at end of file, and it exits. */
	chan_send(worker_ctl.fd, m, fds, nfds);
	json_decref(m);
	close(sock);
	if (pidfd >= 0)
		close(pidfd);
	/* The checkpoint is the supervisor's now; the time left after the
	 * reply goes to the copies the next cell would make (until a request
	 * arrives: then that cell makes the ones it needs).  There is none
	 * when a cell waits already: an atomic one, whose own checkpoint
	 * this is, or one read into our buffer with the order, which the
	 * socket does not show: a cell sent right behind a pristine
	 * checkpoint's order waited for every page of the interpreter to be
	 * copied. */
	if (strcmp(kind, "before") != 0 && !chan_pending(&worker_ctl))
		ckpt_hot_prefault(&worker_hot, worker_ctl.fd);
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
	int threads, sv[2], saved_errno;
	bool prepared = false;
	uint64_t t0;
	double fork_ms;
	json_t *m;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		saved_errno = errno;
		snprintf(worker_ckpt_err, sizeof worker_ckpt_err,
		    "socketpair: %s", strerror(saved_errno));
		goto out;
	}
	/* From here to the fork no Python code runs (worker-fork.c): under
	 * strict the gate lets one fork of this thread through, and it is
	 * this one, not one of a cell's at-fork hooks. */
	threads = worker_fork_prepare();
	prepared = true;
	fflush(NULL);
	ckpt_hot_scan(&worker_hot, WORKER_HOT_MAX);
	t0 = now_ns();
	worker_block_sigint(true);
	worker_fork_before();
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		worker_become_checkpoint(sv[1]);
		return 1;
	}
	saved_errno = errno;
	/* The copy leaves our process group itself, but only once it runs:
	 * on a busy machine that can be after the supervisor has the
	 * checkpoint, and a cell that ends the worker then (its group is
	 * killed) took the newest checkpoint with it.  Moved from here too,
	 * before the supervisor hears of it (the shells' own idiom). */
	if (pid > 0)
		setpgid(pid, pid);
	worker_fork_after(false);
	worker_block_sigint(false);
	fork_ms = (double)(now_ns() - t0) / 1e6;
	close(sv[1]);
	if (pid == -1) {
		close(sv[0]);
		snprintf(worker_ckpt_err, sizeof worker_ckpt_err, "fork: %s",
		    strerror(saved_errno));
		goto out;
	}
	worker_ckpt_hand(pid, sv[0], kind, cell, threads, fork_ms, seq);
	worker_fork_publish();
	return 0;
out:
	/* errno as a number too: the supervisor tells the gate's refusal
	 * (EPERM) from the rest by it, not by the text */
	m = json_pack("{s:s, s:s, s:i, s:s, s:i, s:I}", "t", "ckpt_failed",
	    "kind", kind, "cell", cell, "error", worker_ckpt_err, "errno",
	    saved_errno, "seq", seq);
	chan_send(worker_ctl.fd, m, NULL, 0);
	json_decref(m);
	if (prepared)
		worker_fork_publish();
	return -1;
}

json_t *
worker_error(const char *type, const char *msg)
{
	return json_pack("{s:s, s:{s:s, s:s, s:n, s:n}}", "status", "error",
	    "error", "type", type, "message", msg, "traceback", "line");
}

/* {"op":"ckpt", "kind", "cell"}: a checkpoint now, as the supervisor
 * ordered.  The snapshot op's (explicit) is also answered with a reply.
 * 1 in the copy once it is resumed, else 0. */
static int
worker_ordered_ckpt(json_t *req, json_int_t seq)
{
	const char *kind = json_string_value(json_object_get(req, "kind"));
	int cell = (int)json_integer_value(json_object_get(req, "cell"));
	int rc = worker_test_ckpt_ignored(cell) ? 0 :
	    worker_checkpoint(kind != NULL ? kind : "auto", cell, seq);

	if (rc == 1)
		return 1;
	if (kind != NULL && strcmp(kind, "explicit") == 0)
		worker_send(rc == 0 ? json_pack("{s:s}", "status", "ok") :
		    worker_error("CheckpointError", worker_ckpt_err), seq);
	return 0;
}

/* worker.py's idle(): flush what threads of earlier cells wrote; and
 * count them (worker-fork.c).  A SIGINT that lands here was meant for a
 * cell that has ended: dropped, as worker_clear_signals does. */
static int
worker_idle(void)
{
	PyObject *r = PyObject_CallNoArgs(worker_idle_fn);

	if (r == NULL)
		PyErr_Clear();
	Py_XDECREF(r);
	fflush(NULL);
	return worker_threads();
}

/*
 * The next request, or NULL when the supervisor is gone.  Threads of
 * earlier cells run while we wait, and what they print without flushing
 * would sit in sys.stdout's buffer until the next cell flushed it into
 * that cell's output.  So while such a thread lives the streams are
 * flushed every WORKER_IDLE_MS (as the flush timer does during a cell):
 * the supervisor reads that output while no cell runs, as background.
 */
static json_t *
worker_wait(void)
{
	struct pollfd p = { .fd = worker_ctl.fd, .events = POLLIN };
	int rc, threads = worker_idle();
	json_t *req;
	bool bad;

	for (;;) {
		req = chan_next(&worker_ctl, NULL, NULL, &bad);
		if (req != NULL || bad)
			return req;
		Py_BEGIN_ALLOW_THREADS
		/* Without threads nothing needs a flush: the read itself
		 * waits, a system call less on every cell's round trip. */
		rc = threads > 0 ? poll(&p, 1, WORKER_IDLE_MS) : 1;
		if (rc > 0)
			rc = chan_fill(&worker_ctl) > 0 ? 1 : -1;
		else if (rc == -1 && errno == EINTR)
			rc = 1;		/* look again */
		Py_END_ALLOW_THREADS
		if (rc == -1)
			return NULL;
		if (rc == 0)
			threads = worker_idle();
	}
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
		req = worker_wait();
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
				worker_send(worker_error("CheckpointError",
				    msg), seq);
				continue;
			}
		}
		worker_seq = seq;
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
	worker_stop_arm();
	chan_init(&worker_ctl, worker_high_fd(ctl_fd));
	worker_init_pid = getppid();
	worker_send_gate();
	/* A C extension's printf lands between the cell's prints, not at
	 * the end of the cell. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	worker_save_fds();
	worker_mem_prepare();
	worker_init_python(conf, sbx, rep);
	worker_mem_started();
	worker_sandbox = sandbox_report_json(rep);
	worker_hello(-1);
	worker_serve();
	/* The supervisor is gone: nothing is left to answer. */
	fflush(NULL);
	_exit(0);
}
