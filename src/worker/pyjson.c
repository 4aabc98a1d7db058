/*
 * pyjson.c - JSON values to Python objects and back (see pyjson.h).
 * Worker only.
 */
#include "config.h"

#include "pyjson.h"

PyObject *
pyjson_to_py(json_t *j)
{
	PyObject *o, *v;
	const char *k;
	json_t *jv;
	size_t i;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		o = PyDict_New();
		json_object_foreach(j, k, jv) {
			v = pyjson_to_py(jv);
			PyDict_SetItemString(o, k, v);
			Py_DECREF(v);
		}
		return o;
	case JSON_ARRAY:
		o = PyList_New((Py_ssize_t)json_array_size(j));
		json_array_foreach(j, i, jv)
			PyList_SET_ITEM(o, (Py_ssize_t)i, pyjson_to_py(jv));
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

json_t *
pyjson_to_json(PyObject *o)
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
			json_object_set_new(r, ks, pyjson_to_json(v));
		}
		return r;
	}
	if (PyList_Check(o) || PyTuple_Check(o)) {
		json_t *r = json_array();
		Py_ssize_t i, n = PySequence_Fast_GET_SIZE(o);

		for (i = 0; i < n; i++)
			json_array_append_new(r,
			    pyjson_to_json(PySequence_Fast_GET_ITEM(o, i)));
		return r;
	}
	return json_null();
}
