/*
 * magic.c - coil's checkpoint magics (see magic.h).  The supervisor's
 * front ends parse them; the worker's C half hands the table to
 * worker.py (magic_list).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "magic.h"
#include "util.h"

/* The usage and help are also what the worker says of them (%lsmagic,
 * %snapshot?, the refusal inside a cell): magic_list. */
static const struct magic magic_table[] = {
	{ "snapshot", MAGIC_ARG_OPTIONAL, "%snapshot [NAME]", "Pin a "
	  "checkpoint of the session as it is now under NAME (snapN without "
	  "one)." },
	{ "rollback", MAGIC_ARG_NEEDED, "%rollback NAME|CELL", "Go back to a "
	  "snapshot, or to the state after a cell." },
	{ "snapshots", MAGIC_ARG_NONE, "%snapshots", "List the checkpoints, "
	  "the cell each stands at and its memory." },
	{ "fork", MAGIC_ARG_OPTIONAL, "%fork [NAME] [-n N] [--from SNAP|CELL]",
	  "Branch the session: N new sessions (b1, b2, ...) or one called "
	  "NAME, from the state now or from a snapshot or cell." },
	{ "sessions", MAGIC_ARG_NONE, "%sessions", "List the sessions "
	  "(branches): parent, fork point, cell, state, memory." },
	{ "switch", MAGIC_ARG_NEEDED, "%switch NAME", "Make session NAME "
	  "the one your cells run in." },
	{ "close", MAGIC_ARG_NEEDED, "%close NAME", "End session NAME, its "
	  "worker and its checkpoints." },
};

static bool
magic_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool
magic_parse(const char *s, struct magic_call *c)
{
	size_t i, n;

	while (magic_blank(*s))
		s++;
	if (*s++ != '%')
		return false;
	for (n = 0; s[n] >= 'a' && s[n] <= 'z'; n++)
		;
	if (s[n] != '\0' && !magic_blank(s[n]))
		return false;
	for (i = 0; i < nitems(magic_table); i++) {
		if (strlen(magic_table[i].name) != n ||
		    strncmp(magic_table[i].name, s, n) != 0)
			continue;
		for (s += n; *s == ' ' || *s == '\t'; s++)
			;
		c->m = &magic_table[i];
		c->arg = s;
		for (c->len = strlen(s); c->len > 0 &&
		    magic_blank(s[c->len - 1]); c->len--)
			;
		return true;
	}
	return false;
}

bool
magic_arg_ok(const struct magic_call *c)
{
	if (memchr(c->arg, '\n', c->len) != NULL)
		return false;
	if (c->m->arg == MAGIC_ARG_NONE)
		return c->len == 0;
	return c->m->arg != MAGIC_ARG_NEEDED || c->len > 0;
}

/* A cell number (1 to 9 digits) or a name, as rollback's "to" and
 * fork's "from" take them. */
static json_t *
magic_target(const char *arg, size_t len)
{
	size_t digits = 0;

	while (digits < len && arg[digits] >= '0' && arg[digits] <= '9')
		digits++;
	if (digits == len && len > 0 && len < 10)
		return json_integer(atoll(arg));
	return json_stringn(arg, len);
}

/* %fork's words: NAME, -n N, --from X; a word it does not know is
 * left in "name", where the fork's answer says what is wrong. */
static void
magic_fork_args(json_t *req, const char *arg, size_t len)
{
	const char *p = arg, *end = arg + len, *w;
	size_t n;
	int want = 0;		/* 1: -n's value, 2: --from's */

	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		for (w = p; p < end && *p != ' ' && *p != '\t'; p++)
			;
		if ((n = (size_t)(p - w)) == 0)
			break;
		if (want == 1)
			json_object_set_new(req, "n", magic_target(w, n));
		else if (want == 2)
			json_object_set_new(req, "from", magic_target(w, n));
		else if (n == 2 && strncmp(w, "-n", 2) == 0)
			want = 1;
		else if (n == 6 && strncmp(w, "--from", 6) == 0)
			want = 2;
		else
			json_object_set_new(req, "name", json_stringn(w, n));
		/* an option's value taken, whatever it was */
		if ((want == 1 && !(n == 2 && strncmp(w, "-n", 2) == 0)) ||
		    (want == 2 && !(n == 6 && strncmp(w, "--from", 6) == 0)))
			want = 0;
	}
}

/* The op a magic is: %switch is adopt's. */
static const char *
magic_op(const char *name)
{
	return strcmp(name, "switch") == 0 ? "adopt" : name;
}

const char *
magic_op_name(const char *name)
{
	return magic_op(name);
}

json_t *
magic_request(const char *name, const char *arg, size_t len)
{
	json_t *req = json_pack("{s:s}", "op", magic_op(name));
	size_t digits = 0;

	if (strcmp(name, "fork") == 0) {
		magic_fork_args(req, arg, len);
		return req;
	}
	if (strcmp(name, "switch") == 0 || strcmp(name, "close") == 0) {
		json_object_set_new(req, "session", json_stringn(arg, len));
		return req;
	}

	while (digits < len && arg[digits] >= '0' && arg[digits] <= '9')
		digits++;
	if (strcmp(name, "rollback") == 0 && digits == len && len > 0 &&
	    len < 10)
		json_object_set_new(req, "to", json_integer(atoll(arg)));
	else if (strcmp(name, "rollback") == 0)
		json_object_set_new(req, "to", json_stringn(arg, len));
	else if (strcmp(name, "snapshot") == 0 && len > 0)
		json_object_set_new(req, "name", json_stringn(arg, len));
	return req;
}

json_t *
magic_list(void)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < nitems(magic_table); i++)
		json_array_append_new(list, json_pack("[s, s, s]",
		    magic_table[i].name, magic_table[i].usage,
		    magic_table[i].help));
	return list;
}
