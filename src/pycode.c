/*
 * pycode.c - coil's own Python files, built into the binary (see
 * pycode.h).  Worker only.  src/pyembed makes src/NAME-py.c of each
 * src/NAME.py (Makefile.am), with the same libpython: NAME_py_source,
 * NAME_py_code, NAME_py_code_len and NAME_py_magic.
 */
#include "config.h"

#include <Python.h>
#include <marshal.h>

#include <string.h>

#include "pycode.h"
#include "util.h"

extern const char stdimp_py_source[], effects_py_source[], audit_py_source[],
    errors_py_source[], magics_py_source[], magictab_py_source[],
    display_py_source[],
    complete_py_source[], worker_py_source[];
extern const unsigned char stdimp_py_code[], effects_py_code[], audit_py_code[],
    errors_py_code[], magics_py_code[], magictab_py_code[],
    display_py_code[], complete_py_code[],
    worker_py_code[];
extern const size_t stdimp_py_code_len, effects_py_code_len, audit_py_code_len,
    errors_py_code_len, magics_py_code_len, magictab_py_code_len,
    display_py_code_len,
    complete_py_code_len, worker_py_code_len;
extern const long stdimp_py_magic, effects_py_magic, audit_py_magic, errors_py_magic,
    magics_py_magic, magictab_py_magic,
    display_py_magic,
    complete_py_magic, worker_py_magic;

/* One of coil's Python files, built in by src/pyembed as bytecode (for
 * the magic number it was compiled for) and as source. */
struct pycode_file {
	const char *module;		/* whose namespace it runs in */
	const char *source;
	const unsigned char *code;
	const size_t *len;
	const long *magic;
};
#define PYCODE_FILE(module, name) { module, name##_source, name##_code, \
	&name##_code_len, &name##_magic }

/* In the order they run.  The files of one module share its namespace,
 * as parts of one file would: stdimp.py, first in each, is how the rest
 * import the standard library (never a cell's stand-in); effects.py's recorders are what audit.py's
 * hook calls; errors.py tells the errors of worker.py's cells, magics.py
 * and magictab.py (its table's entries) rewrite their IPython syntax,
 * display.py shows their rich objects, complete.py answers Tab. */
static const struct pycode_file pycode_files[] = {
	PYCODE_FILE("_coil_audit", stdimp_py),
	PYCODE_FILE("_coil_audit", effects_py),
	PYCODE_FILE("_coil_audit", audit_py),
	PYCODE_FILE("_coil", stdimp_py),
	PYCODE_FILE("_coil", errors_py),
	PYCODE_FILE("_coil", magics_py),
	PYCODE_FILE("_coil", magictab_py),
	PYCODE_FILE("_coil", display_py),
	PYCODE_FILE("_coil", complete_py),
	PYCODE_FILE("_coil", worker_py),
};

/* The code object of f: the bytecode built in when this interpreter
 * reads it, else compiled from the source.  Every file is named "<coil>"
 * (as pyembed compiles it), which is how errors.py's _user_tb knows
 * coil's frames.  New reference, or NULL with an exception set. */
static PyObject *
pycode_compile(const struct pycode_file *f)
{
	PyObject *c = NULL;

	if (*f->magic == PyImport_GetMagicNumber()) {
		c = PyMarshal_ReadObjectFromString((const char *)f->code,
		    (Py_ssize_t)*f->len);
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

	for (i = 0; i < nitems(pycode_files); i++) {
		if (strcmp(pycode_files[i].module, module) != 0)
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
