/*
 * worker-ask.c - what a cell asks the supervisor while it runs (see
 * link.h for what the supervisor believes of it).  Worker only.
 *
 *   _coil._ask(prompt[, page])  a line from the person at the terminal
 *   _coil._notebook()           the session so far as a notebook
 *
 * Each sends one frame carrying the request's seq and waits for the
 * supervisor's answer on the control socket; nothing else arrives there
 * meanwhile, since the supervisor sends the next request only after
 * this one's reply.
 */
#include "config.h"

#include <Python.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <unistd.h>

#include "chan.h"
#include "util.h"
#include "worker-int.h"

/* Send m (consumed) and wait for the answer: a new reference, or NULL
 * with KeyboardInterrupt set when interruptible and a SIGINT came, or
 * with OverflowError when m is over the limits the supervisor weighs
 * our frames with (chan.h's chan_peer_limits: a prompt or a help page
 * of tens of megabytes), which would end this worker.  A supervisor
 * that is gone, or sends garbage, ends the worker. */
static json_t *
worker_await(json_t *m, bool interruptible, int *fds, int *nfds)
{
	struct pollfd p = { .fd = worker_ctl.fd, .events = POLLIN };
	bool bad;
	int rc;

	rc = chan_send_within(worker_ctl.fd, m, NULL, 0, &chan_peer_limits);
	json_decref(m);
	if (rc == -1 && errno == EMSGSIZE) {
		PyErr_Format(PyExc_OverflowError, "the prompt or page is too "
		    "large to send (over %zu MiB, or a text of %zu MiB); "
		    "make it shorter", chan_peer_limits.frame >> 20,
		    chan_peer_limits.string >> 20);
		return NULL;
	}
	if (rc == -1)
		_exit(0);
	for (;;) {
		m = chan_next(&worker_ctl, fds, nfds, &bad);
		if (m != NULL)
			return m;
		if (bad)
			_exit(0);
		Py_BEGIN_ALLOW_THREADS
		rc = poll(&p, 1, -1);
		if (rc > 0)
			rc = chan_fill(&worker_ctl) > 0 ? 1 : -1;
		else if (rc == -1 && errno == EINTR)
			rc = 0;
		Py_END_ALLOW_THREADS
		if (rc == -1)
			_exit(0);	/* the supervisor is gone */
		if (rc == 0 && interruptible && PyErr_CheckSignals() == -1)
			return NULL;
	}
}

/*
 * _coil._ask(prompt[, page]): a line from the person at the terminal,
 * for input() and pdb in a cell the supervisor let ask (its "input"):
 * an {"t":"input"} frame, then the supervisor's {"op":"input", "line"}.
 * With page (help's text), the front end shows it in its pager first,
 * and the line is "" once the pager is done.  Returns the line, or None
 * at end of input.  While it waits, a SIGINT (Ctrl-C, the deadline)
 * raises KeyboardInterrupt here, and the supervisor sends no line for
 * that question.
 */
static PyObject *
worker_ask(PyObject *self, PyObject *args)
{
	const char *prompt, *page = NULL;
	json_t *m, *line;
	PyObject *r;

	(void)self;
	if (!PyArg_ParseTuple(args, "s|z", &prompt, &page))
		return NULL;
	m = json_pack("{s:s, s:s, s:I, s:s*}", "t", "input", "prompt", prompt,
	    "seq", worker_seq, "page", page);
	if ((m = worker_await(m, true, NULL, NULL)) == NULL)
		return NULL;
	line = json_object_get(m, "line");
	r = json_is_string(line) ? PyUnicode_FromStringAndSize(
	    json_string_value(line), (Py_ssize_t)json_string_length(line)) :
	    Py_NewRef(Py_None);
	json_decref(m);
	return r;
}

/* All of fd's bytes, as a new bytes object; NULL with OSError set. */
static PyObject *
worker_read_all(int fd)
{
	struct buf b;
	char chunk[65536];
	ssize_t n;
	PyObject *r;

	buf_init(&b);
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			buf_free(&b);
			return PyErr_SetFromErrno(PyExc_OSError);
		}
		buf_add(&b, chunk, (size_t)n);
	}
	r = PyBytes_FromStringAndSize(b.p != NULL ? b.p : "",
	    (Py_ssize_t)b.len);
	buf_free(&b);
	return r;
}

/*
 * _coil._notebook(): (bytes, cells), the session's notebook so far
 * (nbformat 4.5 JSON, the cells answered before this one) as the
 * supervisor built it, handed over as a sealed memfd (link.h).  The
 * caller writes the file: the cell's own rights decide where it may.
 * The supervisor answers at once, so the wait is not interruptible:
 * an answer left unread would be taken for the next request.
 */
static PyObject *
worker_notebook(PyObject *self, PyObject *noargs)
{
	int fds[CHAN_MAX_FDS], nfds = 0, i;
	json_t *m;
	PyObject *data = NULL, *r = NULL;
	const char *err;

	(void)self;
	(void)noargs;
	m = json_pack("{s:s, s:I}", "t", "notebook", "seq", worker_seq);
	if ((m = worker_await(m, false, fds, &nfds)) == NULL)
		return NULL;
	err = json_string_value(json_object_get(m, "error"));
	if (err != NULL)
		PyErr_Format(PyExc_RuntimeError, "no notebook: %s", err);
	else if (nfds < 1)
		PyErr_SetString(PyExc_RuntimeError, "no notebook: the "
		    "supervisor sent none");
	else if ((data = worker_read_all(fds[0])) != NULL)
		r = Py_BuildValue("(NL)", data, (long long)json_integer_value(
		    json_object_get(m, "cells")));
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	json_decref(m);
	return r;
}

static PyMethodDef worker_ask_defs[] = {
	{ "_ask", worker_ask, METH_VARARGS,
	  "a line from the terminal's person, or None at end of input" },
	{ "_notebook", worker_notebook, METH_NOARGS,
	  "(bytes, cells): the session so far as a notebook" },
};

int
worker_ask_install(struct _object *dict)
{
	size_t i;
	PyObject *f;

	for (i = 0; i < nitems(worker_ask_defs); i++) {
		f = PyCFunction_New(&worker_ask_defs[i], NULL);
		if (f == NULL || PyDict_SetItemString(dict,
		    worker_ask_defs[i].ml_name, f) == -1) {
			Py_XDECREF(f);
			return -1;
		}
		Py_DECREF(f);
	}
	return 0;
}
