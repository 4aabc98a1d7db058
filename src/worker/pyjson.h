/*
 * pyjson.h - JSON values (jansson) to Python objects and back.  Worker
 * only (worker.c): the supervisor never links Python calls.
 *
 * Requests reach worker.py as Python, and its replies go back to the
 * supervisor as JSON, through these two.  Neither fails: what has no
 * JSON form becomes null, so a reply always goes out.
 */
#ifndef COIL_PYJSON_H
#define COIL_PYJSON_H

#include <Python.h>
#include <jansson.h>

/* j (borrowed) as Python: objects become dicts, arrays lists, strings
 * str (invalid UTF-8 kept as surrogates, surrogateescape), numbers int
 * or float, true, false and null the singletons.  Returns a new
 * reference.  Needs the GIL. */
PyObject *pyjson_to_py(json_t *j);

/* o (borrowed), a value built by worker.py (dicts, lists, tuples, str,
 * int, float, bool, None), as JSON.  str is encoded with
 * backslashreplace, so a lone surrogate becomes text, never invalid
 * UTF-8; a dict's keys that are not str are dropped; an int beyond 64
 * bits, a float that is not finite, and any other type become null.
 * Returns a new reference (NULL only when out of memory).  Needs the
 * GIL; leaves no exception set. */
json_t *pyjson_to_json(PyObject *o);

#endif
