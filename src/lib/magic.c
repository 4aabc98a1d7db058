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

json_t *
magic_request(const char *name, const char *arg, size_t len)
{
	json_t *req = json_pack("{s:s}", "op", name);
	size_t digits = 0;

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
