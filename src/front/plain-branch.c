/*
 * plain-branch.c - the magics of branches at the plain REPL (see
 * plain-int.h): %fork, %sessions, %switch and %close (magic.h) become
 * the agent protocol's fork, sessions, adopt and close ops, and their
 * answers are printed for a person.  The REPL is one client of the
 * session: %switch adopts a branch as that client's default, so its
 * cells need no "session" field; the prompt names the branch.
 * Supervisor only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magic.h"
#include "plain-int.h"

/* A string of an answer, or "?" when it is none. */
static const char *
plain_str(json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "?";
}

/* The magic's request, checked as the agent protocol checks a line, so
 * that a bad argument (-n x) is said in the same words; sent, and its
 * answer (plain_call's).  NULL, said, when it is refused here. */
static struct response *
plain_branch_call(struct plain *p, const char *name, const char *arg)
{
	json_t *m = magic_request(name, arg, strlen(arg)), *req, *id = NULL;
	char err[512];
	enum op op;

	if (m == NULL)
		snprintf(err, sizeof err, "cannot read the argument of "
		    "'%%%s': %%lsmagic shows its usage", name);
	if (m == NULL ||
	    request_from_json(m, &req, &id, &op, err, sizeof err) == -1) {
		json_decref(id);
		plain_puts(2, "coil: ");
		plain_puts(2, err);
		plain_puts(2, "\n");
		p->failed = true;
		return NULL;
	}
	json_decref(id);
	return plain_call(p, req, op);
}

/* A member of the answer as the protocol writes it (an op's own field
 * or one the response keeps apart, such as "session").  Borrowed from
 * *o, which the caller frees. */
static json_t *
plain_member(const struct response *r, json_t **o, const char *key)
{
	if (*o == NULL)
		*o = response_json(r, 0);
	return json_object_get(*o, key);
}

void
plain_m_fork(struct plain *p, const char *arg)
{
	struct response *r = plain_branch_call(p, "fork", arg);
	json_t *names, *v;
	struct buf b;
	size_t i;

	if (!plain_op_result(p, r))
		return;
	names = json_object_get(r->fields, "sessions");
	buf_init(&b);
	buf_addstr(&b, "forked ");
	json_array_foreach(names, i, v)
		buf_printf(&b, "%s'%s'", i > 0 ? ", " : "", plain_str(v));
	buf_printf(&b, " from '%s' at cell %lld",
	    plain_str(json_object_get(r->fields, "parent")), (long long)
	    json_integer_value(json_object_get(r->fields, "cell")));
	if (json_is_number(v = json_object_get(r->fields, "fork_ms")))
		buf_printf(&b, " (%.1f ms)", json_number_value(v));
	buf_printf(&b, ": %%switch %s to go there\n",
	    plain_str(json_array_get(names, 0)));
	plain_puts(1, b.p);
	buf_free(&b);
	/* The same words with every fork: a person reads them once. */
	v = json_object_get(r->fields, "note");
	if (json_is_string(v) && !p->fork_noted) {
		p->fork_noted = true;
		plain_puts(2, "coil: note: ");
		plain_puts(2, json_string_value(v));
		plain_puts(2, "\n");
	}
}

/* %sessions' columns, its head's and its rows'. */
#define PLAIN_SESSION_ROW "%c %-16s  %-16s  %5s  %5s  %-8s  %7s\n"

/* One row of %sessions: the prompt's own marked with '*'. */
static void
plain_session_row(struct buf *b, json_t *e)
{
	json_t *parent = json_object_get(e, "parent"),
	    *from = json_object_get(e, "from_cell");
	char priv[32], at[24], cell[24];

	if (json_is_integer(from))
		snprintf(at, sizeof at, "%lld", (long long)
		    json_integer_value(from));
	else
		snprintf(at, sizeof at, "-");
	snprintf(cell, sizeof cell, "%lld", (long long)json_integer_value(
	    json_object_get(e, "cell")));
	plain_size(priv, sizeof priv, json_object_get(json_object_get(e,
	    "memory"), "private"));
	buf_printf(b, PLAIN_SESSION_ROW,
	    json_is_true(json_object_get(e, "default")) ? '*' : ' ',
	    plain_str(json_object_get(e, "name")),
	    json_is_string(parent) ? json_string_value(parent) : "-", at,
	    cell, plain_str(json_object_get(e, "state")), priv);
}

void
plain_m_sessions(struct plain *p, const char *arg)
{
	struct response *r = plain_branch_call(p, "sessions", arg);
	json_t *list, *mem, *e;
	char own[32], shared[32];
	struct buf b;
	size_t i;

	if (!plain_op_result(p, r))
		return;
	list = json_object_get(r->fields, "sessions");
	buf_init(&b);
	buf_printf(&b, PLAIN_SESSION_ROW, ' ', "name", "parent", "from",
	    "cell", "state", "private");
	json_array_foreach(list, i, e)
		plain_session_row(&b, e);
	mem = json_object_get(r->fields, "memory");
	plain_size(own, sizeof own, json_object_get(mem, "private"));
	plain_size(shared, sizeof shared, json_object_get(mem, "shared"));
	buf_printf(&b, "%zu session%s", json_array_size(list),
	    json_array_size(list) == 1 ? "" : "s");
	if (json_is_integer(e = json_object_get(r->fields, "max")))
		buf_printf(&b, " of at most %lld", (long long)
		    json_integer_value(e));
	buf_printf(&b, ", sharing %s and owning %s\n", shared, own);
	plain_puts(1, b.p);
	buf_free(&b);
}

/* The prompt's session is now name: none shown for main. */
void
plain_branch_set(struct plain *p, const char *name)
{
	free(p->branch);
	p->branch = strcmp(name, "main") == 0 ? NULL : xstrdup(name);
	p->branch_closed = false;
}

void
plain_m_switch(struct plain *p, const char *arg)
{
	struct response *r = plain_branch_call(p, "switch", arg);
	json_t *o = NULL;
	const char *name, *was;
	char *line;

	if (!plain_op_result(p, r))
		return;
	name = json_string_value(plain_member(r, &o, "session"));
	was = json_string_value(plain_member(r, &o, "was"));
	if (name == NULL)
		name = arg;
	plain_branch_set(p, name);
	xasprintf(&line, "now on '%s'%s%s%s\n", name, was != NULL ?
	    " (was '" : "", was != NULL ? was : "", was != NULL ? "')" : "");
	plain_puts(1, line);
	free(line);
	json_decref(o);
}

void
plain_m_close(struct plain *p, const char *arg)
{
	struct response *r = plain_branch_call(p, "close", arg);
	const char *closed, *mine;
	char *line;

	if (!plain_op_result(p, r))
		return;
	closed = json_string_value(json_object_get(r->fields, "closed"));
	if (closed == NULL)
		closed = arg;
	xasprintf(&line, "closed '%s' at cell %lld\n", closed, (long long)
	    json_integer_value(json_object_get(r->fields, "cell")));
	plain_puts(1, line);
	free(line);
	mine = p->branch != NULL ? p->branch : "main";
	if (strcmp(closed, mine) != 0)
		return;
	/* Our default is gone: the core answers our cells "invalid" until
	 * we adopt another; the prompt and a note say so now. */
	xasprintf(&line, "coil: note: '%s' was this prompt's session: "
	    "%%switch to another (%%sessions lists them)\n", closed);
	plain_puts(2, line);
	free(line);
	if (p->branch == NULL)
		p->branch = xstrdup("main");
	p->branch_closed = true;
}
