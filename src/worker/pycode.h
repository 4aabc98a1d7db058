/*
 * pycode.h - coil's own Python files, built into the binary as bytecode
 * and as source.  Worker only (worker.c).
 *
 * Each file belongs to a module and runs in that module's namespace, in
 * one fixed order, as parts of one file would: the order is Makefile.am's
 * PYEMBED_PY, the one list of these files, and each file names its module
 * on its "# module:" line: the audit hook ("_coil_audit": effects.py,
 * policy.py, then audit.py, which installs the hook) and the worker's
 * Python half ("_coil": errors.py ... worker.py); stdimp.py ("*") runs
 * first in both.  A file may use names a later file of its module
 * defines, once that has run.  Every file is compiled with the file name
 * "<coil>", which is how errors.py's _user_tb tells coil's frames from a
 * user's.
 */
#ifndef COIL_PYCODE_H
#define COIL_PYCODE_H

#include <Python.h>

/* Run module's files, in order, in g (borrowed: the module's globals,
 * with __builtins__ set).  The bytecode is used when this interpreter's
 * magic number is the one it was compiled for, else the source is
 * compiled.  Returns 0, or -1 with a Python exception set.  Needs the
 * GIL. */
int pycode_run(const char *module, PyObject *g);

/* One of coil's Python files, as src/pyembed builds it in: src/pyfiles.c,
 * generated from Makefile.am's PYEMBED_PY, defines the table, in the
 * order the files run. */
struct pycode_file {
	const char *module;		/* whose namespace; "*": every one */
	const char *path;		/* src/NAME.py */
	const char *source;
	const unsigned char *code;	/* marshalled, for pycode_magic */
	size_t len;
};
extern const struct pycode_file pycode_files[];
extern const size_t pycode_nfiles;
extern const long pycode_magic;

#endif
