/*
 * pycode.h - coil's own Python files, built into the binary as bytecode
 * and as source.  Worker only (worker.c).
 *
 * Each file belongs to a module and runs in that module's namespace, in
 * one fixed order, as parts of one file would: the audit hook
 * ("_coil_audit": effects.py, then audit.py, which installs the hook)
 * and the worker's Python half ("_coil": errors.py, magics.py, magictab.py, display.py,
 * complete.py, then worker.py).  A
 * file may use names a later file of its module defines, once that has
 * run.  Every file is compiled with the file name "<coil>", which is how
 * errors.py's _user_tb tells coil's frames from a user's.
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

#endif
