/*
 * plain-ckpt.c - coil's checkpoint magics at the plain REPL (see
 * plain-int.h): %snapshot, %rollback and %snapshots (magic.h) become the
 * same requests as the agent protocol's ops, and their answers are printed
 * for a person; and the table of every magic done here, those of
 * branches (plain-branch.c) included.  Supervisor only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magic.h"
#include "plain-int.h"

void
plain_size(char *out, size_t len, json_t *v)
{
	double b;
	const char *u = "KMGT";
	int i = -1;

	if (!json_is_integer(v)) {
		snprintf(out, len, "?");
		return;
	}
	b = (double)json_integer_value(v);
	if (b < 1024) {
		snprintf(out, len, "%.0fB", b);
		return;
	}
	while (b >= 1024 && i < 3) {
		b /= 1024;
		i++;
	}
	snprintf(out, len, b < 10 ? "%.1f%c" : "%.0f%c", b, u[i]);
}

bool
plain_op_result(struct plain *p, const struct response *r)
{
	if (r == NULL)
		return false;
	if (r->status != ST_OK) {
		p->failed = true;
		plain_puts(2, "coil: ");
		plain_puts(2, r->error != NULL ? r->error->message :
		    "the request failed");
		plain_puts(2, "\n");
	}
	plain_warnings(r);
	return r->status == ST_OK;
}

static void
plain_cells(struct buf *b, json_t *cells)
{
	size_t i;

	for (i = 0; i < json_array_size(cells); i++)
		buf_printf(b, "%s%lld", i ? ", " : "", (long long)
		    json_integer_value(json_array_get(cells, i)));
}

static void
plain_m_snapshot(struct plain *p, const char *arg)
{
	struct response *msg;
	char line[256];

	msg = plain_call(p, magic_request("snapshot", arg, strlen(arg)),
	    OP_SNAPSHOT);
	if (!plain_op_result(p, msg))
		return;
	snprintf(line, sizeof line, "snapshot '%s' at cell %lld\n",
	    json_string_value(json_object_get(msg->fields, "name")),
	    (long long)json_integer_value(json_object_get(msg->fields,
	    "cell")));
	plain_puts(1, line);
}

static void
plain_m_rollback(struct plain *p, const char *arg)
{
	json_t *f, *v;
	struct response *msg;
	struct buf b;

	msg = plain_call(p, magic_request("rollback", arg, strlen(arg)),
	    OP_ROLLBACK);
	if (!plain_op_result(p, msg))
		return;
	f = msg->fields;
	buf_init(&b);
	buf_printf(&b, "rolled back to cell %lld", (long long)
	    json_integer_value(json_object_get(f, "cell")));
	if (json_is_string(json_object_get(f, "name")))
		buf_printf(&b, " (snapshot '%s')", json_string_value(
		    json_object_get(f, "name")));
	v = json_object_get(f, "rolled_back");
	if (json_array_size(v) > 0) {
		buf_addstr(&b, "; undid cell");
		buf_addstr(&b, json_array_size(v) > 1 ? "s " : " ");
		plain_cells(&b, v);
	}
	v = json_object_get(f, "redone");
	if (json_array_size(v) > 0) {
		buf_addstr(&b, "; back in: cell");
		buf_addstr(&b, json_array_size(v) > 1 ? "s " : " ");
		plain_cells(&b, v);
	}
	v = json_object_get(f, "threads_lost");
	if (json_integer_value(v) > 0)
		buf_printf(&b, "; %lld thread(s) did not survive",
		    (long long)json_integer_value(v));
	buf_addstr(&b, "\n");
	plain_puts(1, b.p);
	buf_free(&b);
	v = json_object_get(f, "note");
	if (json_is_string(v)) {
		plain_puts(2, "coil: note: ");
		plain_puts(2, json_string_value(v));
		plain_puts(2, "\n");
	}
}

static void
plain_m_snapshots(struct plain *p, const char *arg)
{
	json_t *list, *ck;
	struct response *msg;
	char line[256], priv[32];
	size_t i;

	(void)arg;
	msg = plain_call(p, json_pack("{s:s}", "op", "snapshots"),
	    OP_SNAPSHOTS);
	if (!plain_op_result(p, msg))
		return;
	list = json_object_get(msg->fields, "checkpoints");
	plain_puts(1, " cell  name              kind       age      private\n");
	for (i = 0; i < json_array_size(list); i++) {
		const char *name;

		ck = json_array_get(list, i);
		name = json_string_value(json_object_get(ck, "name"));
		plain_size(priv, sizeof priv, json_object_get(ck, "private"));
		snprintf(line, sizeof line, "%5lld  %-16.16s  %-9s %7.1fs  %7s%s\n",
		    (long long)json_integer_value(json_object_get(ck, "cell")),
		    name != NULL ? name : "-",
		    json_string_value(json_object_get(ck, "kind")),
		    json_number_value(json_object_get(ck, "age_s")), priv,
		    json_is_true(json_object_get(ck, "current")) ?
		    "  (now)" : "");
		plain_puts(1, line);
	}
	plain_size(priv, sizeof priv, json_object_get(msg->fields, "memory"));
	snprintf(line, sizeof line, "%zu checkpoint%s, holding %s beyond the "
	    "worker's own memory\n", json_array_size(list),
	    json_array_size(list) == 1 ? "" : "s", priv);
	plain_puts(1, line);
}

/* The checkpoint and branch magics (magic.h) become the same requests
 * the agent protocol has; any other magic is left for the worker. */
static const struct plain_magic {
	const char *name;
	void (*fn)(struct plain *, const char *);
} plain_magics[] = {
	{ "snapshot", plain_m_snapshot },
	{ "rollback", plain_m_rollback },
	{ "snapshots", plain_m_snapshots },
	{ "fork", plain_m_fork },
	{ "sessions", plain_m_sessions },
	{ "switch", plain_m_switch },
	{ "close", plain_m_close },
};

bool
plain_is_magic(const char *line)
{
	struct magic_call c;

	return magic_parse(line, &c);
}

bool
plain_magic(struct plain *p, const char *line)
{
	struct magic_call c;
	char *arg;
	size_t i;

	if (!magic_parse(line, &c))
		return false;
	/* a missing argument is said here; one too many is let be */
	if (c.m->arg == MAGIC_ARG_NEEDED && c.len == 0) {
		plain_puts(2, "coil: usage: ");
		plain_puts(2, c.m->usage);
		plain_puts(2, "\n");
		p->failed = true;
		return true;
	}
	arg = xstrndup(c.arg, c.len);
	for (i = 0; i < nitems(plain_magics); i++)
		if (strcmp(plain_magics[i].name, c.m->name) == 0)
			plain_magics[i].fn(p, arg);
	free(arg);
	return true;
}
