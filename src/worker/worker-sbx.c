/*
 * worker-sbx.c - the worker's side of the sandbox (see worker-int.h):
 * the audit hook that puts the kernel's denials into words, and a
 * branch's Landlock domain of its own.  Worker only.
 */
#include "config.h"

#include <Python.h>

#include <stdio.h>
#include <unistd.h>

#include "exit.h"
#include "pycode.h"
#include "pyjson.h"
#include "sandbox.h"
#include "worker-int.h"

/* audit.py's hook, installed first (worker-int.h). */
PyObject *
worker_audit(const struct sandbox_conf *sbx, const struct sandbox_report *rep)
{
	json_t *ac;
	PyObject *g, *c, *fx;

	ac = sbx->profile == SANDBOX_NONE ? json_pack("{s:s}", "profile",
	    "none") : sandbox_audit_conf(sbx, rep);
	json_object_set_new(ac, "effects", json_true());
	g = PyDict_New();
	c = pyjson_to_py(ac);
	json_decref(ac);
	PyDict_SetItemString(g, "__name__", PyUnicode_FromString("_coil_audit"));
	PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins());
	PyDict_SetItemString(g, "conf", c);
	Py_DECREF(c);
	if (pycode_run("_coil_audit", g) == -1) {
		PyErr_Print();
		fflush(NULL);
		_exit(EXIT_PYTHON);
	}
	fx = PyDict_GetItemString(g, "effects");	/* borrowed */
	Py_XINCREF(fx);
	Py_DECREF(g);
	return fx;
}

/*
 * A branch's worker, resumed from a copy of another session's
 * checkpoint: before anything else runs (the Python it resumes is the
 * cells' to have changed), a Landlock domain of its own, so that no
 * other branch's cells can signal or trace it and it none of theirs.
 * What came of it, for the hello: "yes", or "no: why".
 */
void
worker_isolate(char *out, size_t len)
{
	char why[160];

	if (sandbox_scope_self(why, sizeof why) == 0)
		snprintf(out, len, "yes");
	else
		snprintf(out, len, "no: %s", why);
}
