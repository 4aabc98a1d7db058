/*
 * worker.c - the C half of the worker (see worker.h).  The Python half,
 * worker.py, is compiled into the binary as worker_py_source.
 *
 * Invariant: between requests no Python code runs, so a SIGINT meant for
 * a cell that already finished is cleared before the next one starts
 * (worker_clear_signals), never raised in the wrong cell.
 */
#include "config.h"

#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "chan.h"
#include "util.h"
#include "worker.h"

extern const char worker_py_source[];

static struct chan worker_ctl;
static PyObject *worker_handle;		/* _coil.handle, owned */
static int worker_saved_fd[3] = { -1, -1, -1 };
static struct stat worker_saved_st[3];

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
			fatal_errno("worker: cannot keep fd %d", fd);
	}
}

static json_t *
worker_call(json_t *req)
{
	PyObject *preq, *pres;
	json_t *reply;
	int fixed;

	worker_clear_signals();
	preq = worker_py_from_json(req);
	pres = PyObject_CallOneArg(worker_handle, preq);
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
	json_object_set_new(reply, "t", json_string("reply"));
	return reply;
}

static void
worker_init_python(json_t *conf)
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
		fatal("worker: python did not start: %s",
		    st.err_msg != NULL ? st.err_msg : "unknown error");

	mod = PyImport_AddModule("_coil");	/* borrowed */
	dict = PyModule_GetDict(mod);
	code = Py_CompileString(worker_py_source, "<coil>", Py_file_input);
	if (code == NULL)
		goto fail;
	res = PyEval_EvalCode(code, dict, dict);
	Py_DECREF(code);
	if (res == NULL)
		goto fail;
	Py_DECREF(res);
	worker_handle = PyDict_GetItemString(dict, "handle");
	setup = PyDict_GetItemString(dict, "setup");
	if (worker_handle == NULL || setup == NULL)
		fatal("worker: coil's python half is incomplete");
	Py_INCREF(worker_handle);
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
	_exit(70);
}

void
worker_main(int ctl_fd, json_t *conf)
{
	json_t *req, *reply, *hello;
	int pidfd;

	chan_init(&worker_ctl, ctl_fd);
	worker_save_fds();
	worker_init_python(conf);

	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	hello = json_pack("{s:s, s:I, s:s}", "t", "hello",
	    "pid", (json_int_t)getpid(), "python", Py_GetVersion());
	if (chan_send(ctl_fd, hello, &pidfd, pidfd >= 0 ? 1 : 0) == -1)
		_exit(0);
	json_decref(hello);
	if (pidfd >= 0)
		close(pidfd);

	for (;;) {
		/* Threads of earlier cells run while we wait. */
		Py_BEGIN_ALLOW_THREADS
		req = chan_recv(&worker_ctl, NULL, NULL);
		Py_END_ALLOW_THREADS
		if (req == NULL)
			break;
		reply = worker_call(req);
		json_decref(req);
		if (chan_send(ctl_fd, reply, NULL, 0) == -1)
			break;
		json_decref(reply);
	}
	/* The supervisor is gone: nothing is left to answer. */
	fflush(NULL);
	_exit(0);
}
