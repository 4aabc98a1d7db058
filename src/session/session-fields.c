/*
 * session-fields.c - the fields the worker may give in its answer to
 * vars, inspect, complete and reset, and their types (see
 * session-int.h).
 *
 * The worker runs the cells, so its answer may have been written by
 * one: a cell can replace introspect's functions and answer the next
 * vars itself.  What it says about its own namespace is its word, and
 * passes as it is; but it may not speak for the supervisor (an "id"
 * that would send the answer to another request, a "session", a
 * "restored", "totals"), nor break the shape coil(1) promises and MCP's
 * outputSchema states, which clients check.  So each op has its table:
 * a field not in it, or of another type, is left out, and the answer
 * says so in a warning rather than changing silently.
 *
 * Layer: a leaf; session-answer.c and session-reply.c call it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "session-int.h"

enum {
	F_STR = 1,		/* a string */
	F_NULL = 2,		/* null */
	F_COUNT = 4,		/* an integer, 0 or more */
	F_LIST = 8,		/* an array, of item (or counts, or strings) */
};

struct wfield {
	const char *key;
	unsigned types;
	unsigned item_types;		/* F_LIST of these, or ... */
	const struct wfield *item;	/* ... of objects of these fields */
};

/* An entry of vars (and of the observers' namespace). */
static const struct wfield fields_var[] = {
	{ "name", F_STR, 0, NULL }, { "type", F_STR, 0, NULL },
	{ "repr", F_STR, 0, NULL }, { "size", F_COUNT, 0, NULL },
	{ "shape", F_LIST, F_COUNT, NULL }, { "dtype", F_STR, 0, NULL },
	{ "len", F_COUNT, 0, NULL }, { "signature", F_STR, 0, NULL },
	{ NULL, 0, 0, NULL },
};

static const struct wfield fields_vars[] = {
	{ "vars", F_LIST, 0, fields_var },
	{ NULL, 0, 0, NULL },
};

static const struct wfield fields_inspect[] = {
	{ "name", F_STR, 0, NULL }, { "type", F_STR, 0, NULL },
	{ "repr", F_STR, 0, NULL }, { "doc", F_STR | F_NULL, 0, NULL },
	{ "signature", F_STR | F_NULL, 0, NULL },
	{ "file", F_STR | F_NULL, 0, NULL },
	{ NULL, 0, 0, NULL },
};

static const struct wfield fields_complete[] = {
	{ "start", F_COUNT, 0, NULL }, { "end", F_COUNT, 0, NULL },
	{ "matches", F_LIST, F_STR, NULL },
	{ NULL, 0, 0, NULL },
};

/* reset (and a failed snapshot): nothing but its status and error. */
static const struct wfield fields_none[] = {
	{ NULL, 0, 0, NULL },
};

static const struct wfield *
fields_of(enum op op)
{
	switch (op) {
	case OP_VARS:
		return fields_vars;
	case OP_INSPECT:
		return fields_inspect;
	case OP_COMPLETE:
		return fields_complete;
	default:
		return fields_none;
	}
}

static const struct wfield *
fields_find(const struct wfield *t, const char *key)
{
	for (; t->key != NULL; t++)
		if (strcmp(t->key, key) == 0)
			return t;
	return NULL;
}

/* Whether v is one of types (not a list's items). */
static bool
fields_is(json_t *v, unsigned types)
{
	if ((types & F_STR) && json_is_string(v))
		return true;
	if ((types & F_NULL) && json_is_null(v))
		return true;
	if ((types & F_COUNT) && json_is_integer(v) &&
	    json_integer_value(v) >= 0)
		return true;
	return (types & F_LIST) && json_is_array(v);
}

/* An object's fields checked against t (an entry of a list): what is
 * not t's, or not of its type, is deleted; how many were is returned. */
static size_t
fields_clean_object(json_t *o, const struct wfield *t)
{
	const struct wfield *f;
	const char *key;
	size_t bad = 0, i;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(o, tmp, key, v) {
		bool ok = (f = fields_find(t, key)) != NULL &&
		    fields_is(v, f->types);

		for (i = 0; ok && json_is_array(v) && i < json_array_size(v);
		    i++)
			ok = fields_is(json_array_get(v, i), f->item_types);
		if (!ok) {
			json_object_del(o, key);
			bad++;
		}
	}
	return bad;
}

/* list's items checked (list already capped, a new reference of the
 * caller's): an entry of objects without its first field (vars' name)
 * goes whole; what was wrong is said once in resp's warnings. */
static json_t *
fields_list(struct response *resp, const char *what,
    const struct wfield *f, json_t *list)
{
	size_t i, gone = 0, fixed = 0;
	json_t *out = json_array(), *e;
	char msg[200];

	json_array_foreach(list, i, e) {
		if (f->item != NULL) {
			json_t *copy = json_is_object(e) ?
			    json_deep_copy(e) : NULL;

			if (copy != NULL && fields_clean_object(copy,
			    f->item) > 0)
				fixed++;
			if (copy == NULL || !json_is_string(json_object_get(
			    copy, f->item->key))) {
				json_decref(copy);
				gone++;
				continue;
			}
			json_array_append_new(out, copy);
		} else if (fields_is(e, f->item_types)) {
			json_array_append(out, e);
		} else
			gone++;
	}
	if ((gone > 0 || fixed > 0) && resp != NULL) {
		snprintf(msg, sizeof msg, "the worker's '%s' had %zu entr%s "
		    "not of its form (left out) and %zu with fields not of "
		    "their form (those fields left out)", what, gone,
		    gone == 1 ? "y" : "ies", fixed);
		response_warn(resp, msg);
	}
	json_decref(list);
	return out;
}

json_t *
session_fields_vars(struct response *resp, const char *what, json_t *list)
{
	return fields_list(resp, what, &fields_vars[0], list);
}

bool
session_fields_check(struct response *resp, enum op op, const char *key,
    json_t **v)
{
	const struct wfield *f = fields_find(fields_of(op), key);
	char msg[200];

	if (f != NULL && fields_is(*v, f->types)) {
		if (json_is_array(*v))
			*v = fields_list(resp, key, f, *v);
		return true;
	}
	if (f != NULL)
		snprintf(msg, sizeof msg, "the worker's '%s' was not of its "
		    "type: left out", key);
	else
		snprintf(msg, sizeof msg, "the worker's answer to '%s' "
		    "carried '%.64s', which is not one of its fields: left "
		    "out", request_ops[op].name, key);
	response_warn(resp, msg);
	return false;
}
