/*
 * worker-fork.c - Python's side of a checkpoint's fork, run with no code
 * of the cells' (see worker-int.h).  Worker only.
 *
 * Under strict the fork of a checkpoint goes through the supervisor's
 * gate (sbx-seccomp.c), which lets one fork of the worker's main thread
 * through per checkpoint it ordered.  Whatever runs on the main thread
 * between the order and the fork could spend that pass: so from reading
 * the order to the fork the worker runs no Python code at all, only C
 * functions of the interpreter bound before any cell ran:
 *
 *  - no at-fork hooks: PyOS_BeforeFork and PyOS_AfterFork_Parent run
 *    every os.register_at_fork hook, a cell's too.  What they do besides
 *    (the import lock, held across the fork so that no other thread is
 *    half-way through an import) is _imp.acquire_lock and release_lock.
 *    The stdlib's "before" hooks (logging's and concurrent.futures'
 *    locks) are skipped with their "after_in_parent" pairs; the copy
 *    runs PyOS_AfterFork_Child, after_in_child hooks included, only when
 *    it is resumed as the worker: threading's and logging's reinit need
 *    it, and then no checkpoint is owed and the gate refuses any fork;
 *  - no attribute of a module a cell can rebind (threading.enumerate,
 *    random.getstate, gc.freeze, sys.getallocatedblocks): the threads
 *    are counted from the interpreter's thread states, random's state
 *    is read with _random.Random's own method from an instance of it;
 *  - no collection, whose finalisers are the cells' code: the collector
 *    is off from the order to the fork;
 *  - no store into a dict a cell can reach (a value freed may be a
 *    cell's, with a __del__) and no dict lookup by key in one (a key a
 *    cell planted with a colliding hash has its __eq__ run): what the
 *    copy needs is kept in C till after the fork, and the keys of
 *    sys.modules and random's dicts are walked, looking at exact str
 *    keys only.
 *
 * What is left: code a cell planted elsewhere in coil (a Python signal
 * handler run while the worker waits) might still fork in the moment
 * between the order's arrival and its reading; the supervisor then finds
 * the checkpoint's fork refused, kills that process and says so
 * (session-ckpt.c's session_gate_sweep).
 */
#include "config.h"

#include <Python.h>

#include "util.h"
#include "worker-int.h"

static PyObject *wf_lock;		/* _imp.acquire_lock */
static PyObject *wf_unlock;		/* _imp.release_lock */
static PyObject *wf_freeze;		/* gc.freeze */
static PyObject *wf_blocks;		/* sys.getallocatedblocks */
static PyObject *wf_stats;		/* gc.get_stats */
static PyObject *wf_rnd_type;		/* _random.Random */
static PyObject *wf_rnd_get;		/* _random.Random.getstate */
static PyObject *wf_state;		/* worker.py's _ckpt dict */
static int wf_gc_was;			/* the collector's state before */

/*
 * What the copy needs to know about itself, kept here, in memory the
 * fork copies, not in _ckpt: a cell can reach that dict, and storing
 * into it before the fork would free the value it replaces (a cell's
 * object, whose __del__ could fork and take the gate's pass) and compare
 * keys (a cell's key, whose __eq__ could).  worker_fork_publish copies
 * them into _ckpt once the fork is done, when no pass is owed.  The
 * random state replaced is dropped then too (wf_rnd_old): its
 * gauss_next may be a cell's object.
 */
static int wf_threads;			/* threads the copy lacks */
static PyObject *wf_rnd;		/* (state, gauss_next), or NULL */
static PyObject *wf_rnd_old;		/* the one before, dropped later */
static long long wf_nblocks;		/* the heap's size at freezing */

/* attr of the built-in module name, or NULL with an error set.  New
 * reference. */
static PyObject *
wf_bind(const char *name, const char *attr)
{
	PyObject *m = PyImport_ImportModule(name), *a;

	if (m == NULL)
		return NULL;
	a = PyObject_GetAttrString(m, attr);
	Py_DECREF(m);
	return a;
}

int
worker_fork_bind(struct _object *dict)
{
	wf_state = PyDict_GetItemString(dict, "_ckpt");	/* borrowed */
	if (wf_state == NULL || !PyDict_CheckExact(wf_state)) {
		PyErr_SetString(PyExc_SystemError, "_coil._ckpt is missing");
		return -1;
	}
	Py_INCREF(wf_state);
	if ((wf_lock = wf_bind("_imp", "acquire_lock")) == NULL ||
	    (wf_unlock = wf_bind("_imp", "release_lock")) == NULL ||
	    (wf_freeze = wf_bind("gc", "freeze")) == NULL ||
	    (wf_blocks = wf_bind("sys", "getallocatedblocks")) == NULL ||
	    (wf_stats = wf_bind("gc", "get_stats")) == NULL ||
	    (wf_rnd_type = wf_bind("_random", "Random")) == NULL ||
	    (wf_rnd_get = PyObject_GetAttrString(wf_rnd_type,
	    "getstate")) == NULL)
		return -1;
	if (!PyType_Check(wf_rnd_type)) {
		PyErr_SetString(PyExc_SystemError, "_random.Random is no type");
		return -1;
	}
	return 0;
}

/* d[key], borrowed, or NULL.  A walk over the dict that looks only at
 * keys that are exactly str, not a lookup: a lookup hashes and compares
 * keys, and a key a cell put there (in sys.modules, in a module's dict)
 * with a colliding hash would have its __eq__ run. */
static PyObject *
wf_find(PyObject *d, const char *key)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	if (d == NULL || !PyDict_Check(d))
		return NULL;
	while (PyDict_Next(d, &pos, &k, &v))
		if (PyUnicode_CheckExact(k) &&
		    PyUnicode_CompareWithASCIIString(k, key) == 0)
			return v;
	return NULL;
}

/* random's module instance, when the module is loaded and its _inst is
 * a _random.Random; borrowed, or NULL.  Dict reads, not getattr: a
 * module's class may be a cell's, with a __getattribute__ of its own. */
static PyObject *
wf_random(void)
{
	PyObject *m, *inst;

	m = wf_find(PyImport_GetModuleDict(), "random");
	if (m == NULL || !PyModule_CheckExact(m))
		return NULL;
	inst = wf_find(PyModule_GetDict(m), "_inst");
	if (inst == NULL || !PyObject_TypeCheck(inst,
	    (PyTypeObject *)wf_rnd_type))
		return NULL;
	return inst;
}

/* The Mersenne Twister's state and random.Random's gauss_next, read
 * from the instance's own dict: (state, gauss_next), or NULL. */
static PyObject *
wf_random_state(void)
{
	PyObject *inst = wf_random(), *st, *d, *g;

	if (inst == NULL)
		return NULL;
	st = PyObject_CallOneArg(wf_rnd_get, inst);
	if (st == NULL) {
		PyErr_Clear();
		return NULL;
	}
	d = PyObject_GenericGetDict(inst, NULL);
	if (d == NULL)
		PyErr_Clear();
	g = wf_find(d, "gauss_next");
	g = Py_BuildValue("(NO)", st, g != NULL ? g : Py_None);
	Py_XDECREF(d);
	if (g == NULL)
		PyErr_Clear();
	return g;
}

/*
 * Whether the objects are frozen since a checkpoint (worker.py's thaw
 * clears _ckpt["frozen"]), so that the heap's size at the freezing is
 * kept.  Not gc.get_freeze_count(): that walks the whole frozen list,
 * a read of every object's header, 10 to 20 ms for a pandas session and
 * 60 to 90 ms in a copy just forked, whose every first touch of a page
 * costs a fault on a VM: each branch's first checkpoint paid that.  A
 * cell's gc.unfreeze() leaves the flag set and the old size kept: the
 * thaw then comes sooner, which is all it changes.  A pointer compare:
 * no code of the value's runs.
 */
static bool
wf_frozen(void)
{
	return wf_find(wf_state, "frozen") == Py_True;
}

/* A C function of the interpreter's returning an int: its value, or -1. */
static long long
wf_call_int(PyObject *fn)
{
	PyObject *r = PyObject_CallNoArgs(fn);
	long long n = -1;

	if (r != NULL && PyLong_CheckExact(r))
		n = PyLong_AsLongLong(r);
	Py_XDECREF(r);
	PyErr_Clear();
	return n;
}

int
worker_threads(void)
{
	PyThreadState *t;
	int n = -1;

	for (t = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
	    t != NULL; t = PyThreadState_Next(t))
		n++;
	return n > 0 ? n : 0;
}

int
worker_fork_prepare(void)
{
	PyObject *r;

	wf_gc_was = PyGC_Disable();
	/* fork copies only the calling thread */
	wf_threads = worker_threads();
	/* random reseeds itself in a forked child; a resumed checkpoint must
	 * go on with the same sequence the state had (worker.py's
	 * ckpt_resumed puts it back).  The state before is kept till after
	 * the fork: freeing it may free a cell's object. */
	Py_CLEAR(wf_rnd_old);		/* none: publish dropped it */
	wf_rnd_old = wf_rnd;
	wf_rnd = wf_random_state();
	/* Frozen objects are left alone by the collector, so a later
	 * collection does not write to (and un-share) every page of the
	 * namespace that the checkpoint shares with the worker.  The heap's
	 * size when the freezing began tells worker.py when to thaw (and
	 * its gc.unfreeze empties the frozen generation). */
	if (!wf_frozen())
		wf_nblocks = wf_call_int(wf_blocks);
	r = PyObject_CallNoArgs(wf_freeze);
	if (r == NULL)
		PyErr_Clear();
	Py_XDECREF(r);
	return wf_threads;
}

/* Store v (stolen) in _ckpt[key]; errors are dropped: what they would
 * keep is a nicety of the resumed copy. */
static void
wf_set(const char *key, PyObject *v)
{
	if (v == NULL || PyDict_SetItemString(wf_state, key, v) == -1)
		PyErr_Clear();
	Py_XDECREF(v);
}

/* gen0's collections so far (gc.get_stats()[0]["collections"]; the
 * list and dicts are new, no cell's), or -1. */
static PyObject *
wf_gen0(void)
{
	PyObject *st = PyObject_CallNoArgs(wf_stats), *g0, *n = NULL;

	if (st != NULL && PyList_CheckExact(st) && PyList_GET_SIZE(st) > 0 &&
	    PyDict_CheckExact(g0 = PyList_GET_ITEM(st, 0)))
		n = PyDict_GetItemString(g0, "collections");	/* borrowed */
	n = n != NULL && PyLong_CheckExact(n) ? Py_NewRef(n) :
	    PyLong_FromLong(-1);
	Py_XDECREF(st);
	PyErr_Clear();
	return n;
}

void
worker_fork_publish(void)
{
	/* worker.py's thaw weighs the heap only once gen0 has been
	 * collected since the freezing (_gc_thaw says why) */
	wf_set("gen0", wf_gen0());
	wf_set("threads", PyLong_FromLong(wf_threads));
	wf_set("random", Py_NewRef(wf_rnd != NULL ? wf_rnd : Py_None));
	wf_set("blocks", PyLong_FromLongLong(wf_nblocks > 0 ? wf_nblocks :
	    0));
	wf_set("frozen", Py_NewRef(Py_True));
	Py_CLEAR(wf_rnd_old);
}

void
worker_fork_before(void)
{
	PyObject *r = PyObject_CallNoArgs(wf_lock);

	if (r == NULL)
		PyErr_Clear();
	Py_XDECREF(r);
}

void
worker_fork_after(bool child)
{
	PyObject *r;

	/* the copy's lock is made anew by PyOS_AfterFork_Child */
	if (!child) {
		r = PyObject_CallNoArgs(wf_unlock);
		if (r == NULL)
			PyErr_Clear();
		Py_XDECREF(r);
	}
	if (wf_gc_was)
		PyGC_Enable();
}
