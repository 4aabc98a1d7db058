/*
 * pycode.c - coil's own Python files, built into the binary (see
 * pycode.h).  Worker only.  src/pyembed makes src/pyfiles.c of them all
 * (Makefile.am's PYEMBED_PY), with the same libpython: each file's source
 * and bytecode, and the table pycode_files.
 *
 * The files of one module share its namespace, as parts of one file
 * would: stdimp.py, first in each, is how the rest import the standard
 * library (never a cell's stand-in); effects.py's recorders are what
 * audit.py's hook calls, policy.py the rules it asks; errors.py tells
 * the errors of worker.py's cells, magics.py and magictab.py (its table's
 * entries) rewrite their IPython syntax, display.py shows their rich
 * objects, complete.py answers Tab, streams.py owns the cells' stdin,
 * stdout and stderr, introspect.py answers vars and inspect.
 */
#include "config.h"

#include <Python.h>
#include <marshal.h>

#include <string.h>

#include "pycode.h"
#include "util.h"

/* The code object of f: the bytecode built in when this interpreter
 * reads it, else compiled from the source.  Every file is named "<coil>"
 * (as pyembed compiles it), which is how errors.py's _user_tb knows
 * coil's frames.  New reference, or NULL with an exception set. */
static PyObject *
pycode_compile(const struct pycode_file *f)
{
	PyObject *c = NULL;

	if (pycode_magic == PyImport_GetMagicNumber()) {
		c = PyMarshal_ReadObjectFromString((const char *)f->code,
		    (Py_ssize_t)f->len);
		if (c == NULL)
			PyErr_Clear();
	}
	return c != NULL ? c : Py_CompileString(f->source, "<coil>",
	    Py_file_input);
}

int
pycode_run(const char *module, PyObject *g)
{
	PyObject *c, *r;
	size_t i;

	for (i = 0; i < pycode_nfiles; i++) {
		if (strcmp(pycode_files[i].module, module) != 0 &&
		    strcmp(pycode_files[i].module, "*") != 0)
			continue;
		c = pycode_compile(&pycode_files[i]);
		r = c != NULL ? PyEval_EvalCode(c, g, g) : NULL;
		Py_XDECREF(c);
		if (r == NULL)
			return -1;
		Py_DECREF(r);
	}
	return 0;
}
