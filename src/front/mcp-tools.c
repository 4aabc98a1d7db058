/*
 * mcp-tools.c - the MCP server's tools (mcp-int.h): what each is, the
 * agent request a call becomes, and the result the session's answer
 * becomes: the text a model reads, the answer object and the figures.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan.h"
#include "export.h"
#include "figure.h"
#include "mcp.h"
#include "mcp-int.h"
#include "tools.h"
#include "util.h"
#include "wording.h"

/* What one result may carry as images (their bytes before base64),
 * and how many figures it names: the display list is the worker's
 * word, and one answer must stay far below the 64 MiB a client may
 * leave unread before it is dropped (opts_max_queue). */
#define MCP_IMAGES_MAX		((size_t)8 << 20)
#define MCP_IMAGES_COUNT	16
#define MCP_FIGURES_NAMED	64
const struct mcp_tool mcp_tools[] = {
	{ "run_python", "Run Python", OP_EXEC, false, true, false,
	  "Run Python code in the persistent session. Variables, imports "
	  "and functions stay for the next call. The answer has what the "
	  "code printed (stdout, then stderr), the value of its last "
	  "expression as Out[N], and, if it raised, the traceback (the "
	  "result is then an error). Figures come as images (one over "
	  "1500 px a side shrunk), or as the paths of their files with "
	  "why. Long answers are cut in the middle, marked. A cell that "
	  "runs past its timeout is stopped; if the process dies, the "
	  "namespace is restored from the newest checkpoint, the cells "
	  "since it that touched nothing outside it are run again, and "
	  "the answer says which were redone and which are lost. "
	  "input() gets end of file: pass data in the code." },
	{ "list_variables", "List variables", OP_VARS, true, false, true,
	  "The session's variables: name, type, a short repr and size. "
	  "Modules and _names only with all: true." },
	{ "inspect", "Inspect", OP_INSPECT, true, false, true,
	  "One object of the session, by its name or a dotted name "
	  "(df.columns): its type, repr, signature and docstring." },
	{ "snapshot", "Snapshot", OP_SNAPSHOT, false, false, false,
	  "Keep the session's namespace as it is now, under a name, to "
	  "roll back to later." },
	{ "list_snapshots", "List snapshots", OP_SNAPSHOTS, true, false, true,
	  "The checkpoints kept: their names, the cell each stands at, "
	  "their age and memory." },
	{ "rollback", "Roll back", OP_ROLLBACK, false, true, false,
	  "Put the namespace back to a snapshot (by name) or to the state "
	  "after a cell (by number). Only Python's state goes back: files "
	  "written and processes started stay." },
	{ "reset", "Reset", OP_RESET, false, true, true,
	  "Start afresh: an empty namespace, as when the session began." },
	{ "fork", "Fork", OP_FORK, false, false, false,
	  "Branch the session: n independent copies of its Python state "
	  "(by default as it is after its last finished call; or from a "
	  "snapshot or a cell), made in milliseconds, each a session of "
	  "its own named b1, b2, ... or as you name it. Pass a branch's "
	  "name as the session argument of the other tools to work in it: "
	  "what one branch does (a crash, a rollback, a reset included) "
	  "touches no other. The work directory is shared by all. "
	  "adopt_session keeps the one that worked; close_session ends "
	  "one." },
	{ "list_sessions", "List sessions", OP_SESSIONS, true, false, true,
	  "The sessions: main and its branches, each with its parent, the "
	  "cell it was forked at, its cell now, its state, whether it is "
	  "the default of this connection, and the memory it holds of its "
	  "own." },
	{ "close_session", "Close a session", OP_CLOSE, false, true, true,
	  "End a session: its process stops, a call running there is "
	  "killed. The last session cannot be closed." },
	{ "adopt_session", "Adopt a session", OP_ADOPT, false, false, true,
	  "Make a session the default of this connection: calls without a "
	  "session argument go to it from now on (keep the winner of a "
	  "best-of-n this way)." },
};
const size_t mcp_ntools = nitems(mcp_tools);

/* What a tool words for itself in its op's schema (about), or leaves
 * out of it (about NULL): the agent protocol's fields for terminals and
 * socket clients. */
static const struct {
	const char *tool, *prop, *about;	/* tool NULL: every tool */
} mcp_props[] = {
	{ NULL, "session", "the session to serve this call, by name "
	  "(list_sessions lists them); default: this connection's, main "
	  "until adopt_session" },
	{ "fork", "session", "the session to branch (default: this "
	  "connection's)" },
	{ "fork", "name", "what to call the branch: 1 to 64 letters, "
	  "digits, _ . or -, starting with a letter (default: b1, b2, ...)" },
	{ "list_sessions", "session", NULL },
	{ "close_session", "session", "the session to close, by name" },
	{ "adopt_session", "session", "the session to make the default, by "
	  "name" },
	{ "run_python", "code", "Python source to run; the value of its "
	  "last expression is the result" },
	{ "run_python", "stream", NULL },
	{ "run_python", "input", NULL },
	{ "run_python", "columns", NULL },
	{ "run_python", "lines", NULL },
	{ "inspect", "name", "a name in the session, or a dotted name such "
	  "as df.columns" },
	{ "snapshot", "name", "what to call it (default: none; rollback "
	  "can still name its cell)" },
};
const struct mcp_tool *
mcp_tool_find(const char *name)
{
	size_t i;

	for (i = 0; i < nitems(mcp_tools); i++)
		if (strcmp(mcp_tools[i].name, name) == 0)
			return &mcp_tools[i];
	return NULL;
}

/* Whether row i of mcp_props is about tool t. */
static bool
mcp_prop_of(size_t i, const struct mcp_tool *t)
{
	return mcp_props[i].tool == NULL ||
	    strcmp(mcp_props[i].tool, t->name) == 0;
}

/* The request table's schema of t's op, worded for a model: a row of
 * mcp_props for every tool first, a tool's own after it, so that the
 * last that applies words a property. */
static json_t *
mcp_tool_schema(const struct mcp_tool *t)
{
	json_t *schema = request_schema(&request_ops[t->op]), *props, *req, *p;
	size_t i, j;

	props = json_object_get(schema, "properties");
	req = json_object_get(schema, "required");
	for (i = 0; i < nitems(mcp_props); i++) {
		if (!mcp_prop_of(i, t) ||
		    (p = json_object_get(props, mcp_props[i].prop)) == NULL)
			continue;
		if (mcp_props[i].about != NULL) {
			json_object_set_new(p, "description",
			    json_string(mcp_props[i].about));
			continue;
		}
		json_object_del(props, mcp_props[i].prop);
		for (j = 0; req != NULL && j < json_array_size(req); j++)
			if (strcmp(json_string_value(json_array_get(req, j)),
			    mcp_props[i].prop) == 0)
				json_array_remove(req, j--);
	}
	return schema;
}

json_t *
mcp_tool_list(const struct coil_opts *opts)
{
	json_t *tools = json_array();
	size_t i;

	for (i = 0; i < nitems(mcp_tools); i++) {
		const struct mcp_tool *t = &mcp_tools[i];

		json_array_append_new(tools, json_pack("{s:s, s:s, s:s, s:o, "
		    "s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name,
		    "title", t->title, "description", t->about, "inputSchema",
		    mcp_tool_schema(t), "outputSchema",
		    tools_output_schema(t->op), "annotations", "title",
		    t->title, "readOnlyHint", t->read_only, "destructiveHint",
		    t->destructive, "idempotentHint", t->idempotent,
		    "openWorldHint", t->op == OP_EXEC && opts->sbx.allow_net));
	}
	return tools;
}

void
mcp_tool_lists(const struct coil_opts *opts, json_t **tools, json_t **old)
{
	static json_t *all, *before;
	json_t *t;
	size_t i;

	if (all == NULL) {
		all = mcp_tool_list(opts);
		before = json_deep_copy(all);
		json_array_foreach(before, i, t)
			json_object_del(t, "outputSchema");
	}
	*tools = json_incref(all);
	*old = json_incref(before);
}

/* Why an argument a call gives is dropped before the session sees it:
 * the envelope's fields, and the terminal's (mcp_props' hidden ones). */
static const struct {
	const char *prop, *why;
} mcp_dropped[] = {
	{ "id", "the call's id is JSON-RPC's" },
	{ "op", "each tool is one op: call the tool you mean" },
	{ "stream", "output comes as progress when the call has a "
	  "progressToken" },
	{ "input", "input() reads end of file here: pass data in the code" },
	{ "columns", "the terminal's size is not a tool's to set" },
	{ "lines", "the terminal's size is not a tool's to set" },
	{ "session", "it lists every session, and marks this connection's "
	  "default" },
};

static bool
mcp_tool_hides(const struct mcp_tool *t, const char *prop)
{
	size_t i;

	if (strcmp(prop, "id") == 0 || strcmp(prop, "op") == 0)
		return true;
	for (i = 0; i < nitems(mcp_props); i++)
		if (mcp_props[i].about == NULL && mcp_prop_of(i, t) &&
		    strcmp(mcp_props[i].prop, prop) == 0)
			return true;
	return false;
}

json_t *
mcp_tool_request(const struct mcp_tool *t, json_t *args, bool stream,
    json_t **warnings)
{
	json_t *req = json_object(), *v;
	const char *key, *why;
	char msg[300];
	size_t i;

	*warnings = NULL;
	json_object_foreach(args, key, v) {
		if (!mcp_tool_hides(t, key)) {
			json_object_set_new(req, key, json_deep_copy(v));
			continue;
		}
		for (i = 0, why = NULL; i < nitems(mcp_dropped); i++)
			if (strcmp(mcp_dropped[i].prop, key) == 0)
				why = mcp_dropped[i].why;
		snprintf(msg, sizeof msg, "'%s' is not an argument of tool "
		    "'%s'; it was ignored%s%s", key, t->name, why ? ": " : "",
		    why ? why : "");
		if (*warnings == NULL)
			*warnings = json_array();
		json_array_append_new(*warnings, json_string(msg));
	}
	json_object_set_new(req, "op", json_string(request_ops[t->op].name));
	if (stream && t->op == OP_EXEC)
		json_object_set_new(req, "stream", json_true());
	return req;
}


/* A figure's bytes (figure.h) as image content when they are a PNG of
 * at most max bytes (*used is what it took); NULL otherwise. */
static json_t *
mcp_image(const struct figure *f, size_t max, size_t *used)
{
	json_t *img;
	char *b64;

	if (f == NULL || f->len > max || f->len < 8 ||
	    memcmp(f->p, "\x89PNG\r\n\x1a\n", 8) != 0)
		return NULL;
	b64 = export_base64((const unsigned char *)f->p, f->len);
	img = json_pack("{s:s, s:s, s:s}", "type", "image", "data", b64,
	    "mimeType", "image/png");
	free(b64);
	*used = f->len;
	return img;
}

/* Why the figure of display entry i (a PNG) is not attached, given
 * what is left of the answer's images; NULL when it can be. */
static const char *
mcp_image_why(const struct response *r, size_t i, size_t count, size_t left,
    char *why, size_t len)
{
	const struct figure *f = figure_find(r->figs, r->nfigs, r->display, i);
	size_t max = left < MCP_IMAGE_MAX ? left : MCP_IMAGE_MAX;

	if (count >= MCP_IMAGES_COUNT)
		snprintf(why, len, "not attached: an answer carries at most "
		    "%d images; read the file", MCP_IMAGES_COUNT);
	else if (f == NULL)
		snprintf(why, len, "not attached: coil took no bytes of it (at "
		    "most %d images a cell, %zu MiB each); read the file",
		    CHAN_FIGURES_MAX, CHAN_FIGURE_MAX >> 20);
	else if (f->len > max)
		snprintf(why, len, "not attached: %zu bytes, over the %zu an "
		    "image may take %s; read the file", f->len, max,
		    max < MCP_IMAGE_MAX ? "after the ones before it" :
		    "in an answer");
	else
		return NULL;
	return why;
}

/* The figures a cell showed: each named in the text (up to
 * MCP_FIGURES_NAMED) with its note (shrunk, or why not), the PNGs among
 * them whose bytes the worker handed over as images while they fit
 * MCP_IMAGES_MAX and MCP_IMAGES_COUNT, each path once; a PNG that is
 * not attached says why. */
static void
mcp_figures(const struct response *r, struct buf *b, json_t *content)
{
	size_t i, named = 0, left = MCP_IMAGES_MAX, used, more;
	json_t *v, *img, *seen = json_object();
	const char *path, *type, *note, *why;
	char whybuf[160];

	json_array_foreach(r->display, i, v) {
		path = json_string_value(json_object_get(v, "path"));
		type = json_string_value(json_object_get(v, "type"));
		note = json_string_value(json_object_get(v, "note"));
		if (path == NULL || json_object_get(seen, path) != NULL)
			continue;
		json_object_set_new(seen, path, json_true());
		if (++named > MCP_FIGURES_NAMED)
			continue;
		buf_printf(b, "[%s: %s]", type != NULL ? type : "figure", path);
		if (note != NULL)
			buf_printf(b, " (%s)", note);
		why = NULL;
		if (type != NULL && strcmp(type, "image/png") == 0 &&
		    (why = mcp_image_why(r, i, json_array_size(content), left,
		    whybuf, sizeof whybuf)) == NULL &&
		    (img = mcp_image(figure_find(r->figs, r->nfigs, r->display,
		    i), left < MCP_IMAGE_MAX ? left : MCP_IMAGE_MAX, &used)) !=
		    NULL) {
			json_array_append_new(content, img);
			left -= used;
		}
		if (why != NULL)
			buf_printf(b, " (%s)", why);
		buf_addstr(b, "\n");
	}
	if (named > MCP_FIGURES_NAMED) {
		more = named - MCP_FIGURES_NAMED;
		buf_printf(b, "[and %zu more figure%s]\n", more,
		    more > 1 ? "s" : "");
	}
	json_decref(seen);
}

/* A cell's answer as a model reads it (wording.h), then its figures;
 * images go in content. */
static void
mcp_exec_text(const struct response *r, struct buf *b, json_t *content)
{
	wording_exec(r, b);
	mcp_figures(r, b, content);
}

/* A string member of the worker's, or "?" when it is none. */
static const char *
mcp_str(json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "?";
}

/* Numbers in text as a person writes them: 34.45, not 34.450000000000003. */
#define MCP_REALS JSON_REAL_PRECISION(12)

/* Any other op's answer: its fields, a line each. */
static void
mcp_fields_text(const struct response *r, struct buf *b)
{
	json_t *o = response_json(r, RESPONSE_BRIEF), *v, *e;
	const char *key;
	size_t i;
	char *s;

	json_object_foreach(o, key, v) {
		if (strcmp(key, "id") == 0 || strcmp(key, "status") == 0 ||
		    strcmp(key, "error") == 0 || strcmp(key, "session") == 0)
			continue;	/* "session": mcp_session_text's */
		if (r->op == OP_VARS && strcmp(key, "vars") == 0) {
			json_array_foreach(v, i, e)
				buf_printf(b, "%s: %s = %s\n",
				    mcp_str(json_object_get(e, "name")),
				    mcp_str(json_object_get(e, "type")),
				    mcp_str(json_object_get(e, "repr")));
			if (json_array_size(v) == 0)
				buf_addstr(b, "(no variables)\n");
			continue;
		}
		if (json_is_string(v)) {
			buf_printf(b, strchr(json_string_value(v), '\n') ?
			    "%s:\n%s" : "%s: %s", key, json_string_value(v));
			wording_line_end(b);
			continue;
		}
		if (json_is_array(v) && json_array_size(v) > 0 &&
		    json_is_object(json_array_get(v, 0))) {
			buf_printf(b, "%s:\n", key);
			json_array_foreach(v, i, e) {
				s = json_dumps(e, JSON_COMPACT | MCP_REALS);
				buf_printf(b, "  %s\n", s);
				free(s);
			}
			continue;
		}
		s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
		    MCP_REALS);
		buf_printf(b, "%s: %s\n", key, s);
		free(s);
	}
	json_decref(o);
}

/* Bytes as a person reads them: "512 B", "3.4 MiB"; "?" for a value
 * that is no number. */
static void
mcp_bytes(struct buf *b, json_t *v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double n = json_number_value(v);
	size_t i = 0;

	if (!json_is_integer(v)) {
		buf_addstr(b, "?");
		return;
	}
	if (n < 1024) {
		buf_printf(b, "%.0f B", n);
		return;
	}
	for (n /= 1024; n >= 1024 && i + 1 < nitems(units); i++)
		n /= 1024;
	buf_printf(b, "%.1f %s", n, units[i]);
}

/* fork's answer: the branches made, whence, and how to use them. */
static void
mcp_fork_text(const struct response *r, struct buf *b)
{
	json_t *names = json_object_get(r->fields, "sessions"), *v;
	const char *note = json_string_value(json_object_get(r->fields,
	    "note")), *files = json_string_value(json_object_get(r->fields,
	    "files"));
	size_t i;

	buf_addstr(b, json_array_size(names) > 1 ? "branches " : "branch ");
	json_array_foreach(names, i, v)
		buf_printf(b, "%s%s", i > 0 ? ", " : "", mcp_str(v));
	buf_printf(b, " forked from %s at cell %lld",
	    mcp_str(json_object_get(r->fields, "parent")),
	    (long long)json_integer_value(json_object_get(r->fields, "cell")));
	if (json_is_number(v = json_object_get(r->fields, "fork_ms")))
		buf_printf(b, " in %.1f ms", json_number_value(v));
	buf_printf(b, ": pass session \"%s\" to a tool to work there\n",
	    mcp_str(json_array_get(names, 0)));
	if (files != NULL && strcmp(files, "shared") != 0)
		buf_printf(b, "files: %s\n", files);
	if (note != NULL)
		buf_printf(b, "note: %s\n", note);
}

/* sessions' answer: a line a session, then the totals. */
static void
mcp_sessions_text(const struct response *r, struct buf *b)
{
	json_t *list = json_object_get(r->fields, "sessions"), *e, *v;
	size_t i;

	json_array_foreach(list, i, e) {
		buf_printf(b, "%s%s: %s at cell %lld",
		    mcp_str(json_object_get(e, "name")),
		    json_is_true(json_object_get(e, "default")) ?
		    " (default)" : "", mcp_str(json_object_get(e, "state")),
		    (long long)json_integer_value(json_object_get(e,
		    "cell")));
		if (json_is_string(v = json_object_get(e, "parent")))
			buf_printf(b, ", forked from %s at cell %lld",
			    json_string_value(v), (long long)
			    json_integer_value(json_object_get(e,
			    "from_cell")));
		buf_addstr(b, "; ");
		mcp_bytes(b, json_object_get(json_object_get(e, "memory"),
		    "private"));
		buf_addstr(b, " of its own\n");
	}
	v = json_object_get(r->fields, "memory");
	buf_printf(b, "%zu session%s", json_array_size(list),
	    json_array_size(list) == 1 ? "" : "s");
	if (json_is_integer(json_object_get(r->fields, "max")))
		buf_printf(b, " of at most %lld", (long long)json_integer_value(
		    json_object_get(r->fields, "max")));
	buf_addstr(b, "; they share ");
	mcp_bytes(b, json_object_get(v, "shared"));
	buf_addstr(b, " and hold ");
	mcp_bytes(b, json_object_get(v, "private"));
	buf_addstr(b, " of their own\n");
}

static void
mcp_close_text(const struct response *r, struct buf *b)
{
	buf_printf(b, "closed %s at cell %lld\n",
	    mcp_str(json_object_get(r->fields, "closed")), (long long)
	    json_integer_value(json_object_get(r->fields, "cell")));
}

static void
mcp_adopt_text(const struct response *r, struct buf *b)
{
	buf_printf(b, "calls without a session argument now go to %s (they "
	    "went to %s)\n", mcp_str(json_object_get(r->fields, "session")),
	    mcp_str(json_object_get(r->fields, "was")));
}

/* The ops of branches, each worded on its own (the others' fields go a
 * line each, mcp_fields_text). */
static const struct {
	enum op op;
	void (*fn)(const struct response *, struct buf *);
} mcp_texts[] = {
	{ OP_FORK, mcp_fork_text },
	{ OP_SESSIONS, mcp_sessions_text },
	{ OP_CLOSE, mcp_close_text },
	{ OP_ADOPT, mcp_adopt_text },
};

/* The answer of a branch says so first: "[session b1]".  close and
 * adopt name a session as what they act on, in their own words. */
static void
mcp_session_text(const struct response *r, json_t *sc, struct buf *b)
{
	const char *name = json_string_value(json_object_get(sc, "session"));

	if (name != NULL && strcmp(name, "main") != 0 && r->op != OP_CLOSE &&
	    r->op != OP_ADOPT)
		buf_printf(b, "[session %s]\n", name);
}

/* The warnings of the call (borrowed, may be NULL), then the answer's,
 * as lines of text. */
static void
mcp_warnings_text(const struct response *r, json_t *call, struct buf *b)
{
	json_t *lists[2] = { call, r->warnings }, *v;
	const char *w;
	size_t i, k;

	for (k = 0; k < 2; k++)
		json_array_foreach(lists[k], i, v)
			if ((w = json_string_value(v)) != NULL)
				buf_printf(b, "warning: %s\n", w);
}

json_t *
mcp_tool_result(const struct response *r, json_t *warnings)
{
	json_t *content = json_array(), *images = json_array(), *sc, *all;
	size_t i, head;
	struct buf b;

	sc = response_json(r, RESPONSE_BRIEF);
	json_object_del(sc, "id");
	buf_init(&b);
	mcp_session_text(r, sc, &b);
	head = b.len;
	for (i = 0; i < nitems(mcp_texts) && mcp_texts[i].op != r->op; i++)
		;
	if (r->op == OP_EXEC)
		mcp_exec_text(r, &b, images);
	else if (r->status == ST_OK && i < nitems(mcp_texts))
		mcp_texts[i].fn(r, &b);
	else if (r->status == ST_OK)
		mcp_fields_text(r, &b);
	else
		wording_error(&b, r->error);
	mcp_warnings_text(r, warnings, &b);
	if (b.len == head)
		buf_addstr(&b, r->status == ST_OK ? "(no output)\n" :
		    status_names[r->status]);
	json_array_append_new(content, json_pack("{s:s, s:s%}", "type",
	    "text", "text", b.p, b.len));
	json_array_extend(content, images);
	json_decref(images);
	buf_free(&b);
	if (json_array_size(warnings) > 0) {
		all = json_deep_copy(warnings);
		json_array_extend(all, json_object_get(sc, "warnings"));
		json_object_set_new(sc, "warnings", all);
	}
	return json_pack("{s:o, s:o, s:b}", "content", content,
	    "structuredContent", sc, "isError", r->status != ST_OK);
}

json_t *
mcp_tool_refusal(const struct mcp_tool *t, const char *msg,
    json_t *warnings)
{
	struct response *r = response_invalid("%s", msg);
	json_t *result;

	r->op = t->op;
	result = mcp_tool_result(r, warnings);
	response_free(r);
	return result;
}

json_t *
mcp_tool_instructions(const struct coil_opts *opts, json_t *resumed)
{
	char *s = tools_system_text(opts);
	struct buf b;
	json_t *v;

	buf_init(&b);
	buf_addstr(&b, s);
	if (resumed != NULL) {
		buf_addstr(&b, "\n\nThis session was resumed: ");
		wording_resumed(resumed, &b);
	}
	v = json_stringn(b.p, b.len);
	buf_free(&b);
	free(s);
	return v;
}

void
mcp_tool_resumed(json_t *result, json_t *resumed)
{
	struct buf b;

	buf_init(&b);
	wording_resumed(resumed, &b);
	json_array_insert_new(json_object_get(result, "content"), 0,
	    json_pack("{s:s, s:s%}", "type", "text", "text", b.p, b.len));
	json_object_set(json_object_get(result, "structuredContent"),
	    "resumed", resumed);
	buf_free(&b);
}
