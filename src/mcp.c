/*
 * mcp.c - the MCP server (see mcp.h).
 *
 * A protocol of agent.c's stdio loop: each line is one JSON-RPC
 * message, answered here when it asks about the server (initialize,
 * server/discover, ping, tools/list) and turned into an agent request
 * for the session when it calls a tool.  The session's answer comes
 * back as an event and leaves as the call's result; the calls in
 * flight are a short list, matched by the session's sequence number
 * and, for notifications/cancelled, by the client's id.
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "export.h"
#include "figure.h"
#include "mcp.h"
#include "outbuf.h"
#include "request.h"
#include "response.h"
#include "session.h"
#include "util.h"
#include "wire.h"

/* The revisions answered after the handshake, newest first, and the
 * one a request names in its _meta. */
static const char *const mcp_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
};
#define MCP_STATELESS		"2026-07-28"
#define MCP_META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define MCP_META_SERVER		"io.modelcontextprotocol/serverInfo"

/* JSON-RPC's error codes, and MCP's for a revision it does not speak. */
enum {
	RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601,
	RPC_PARAMS = -32602, RPC_INTERNAL = -32603, RPC_VERSION = -32022,
};

/* What one result may carry as images (their bytes before base64),
 * and how many figures it names: the display list is the worker's
 * word, and one answer must stay far below the 64 MiB a client may
 * leave unread before it is dropped (opts_max_queue). */
#define MCP_IMAGES_MAX		((size_t)8 << 20)
#define MCP_IMAGES_COUNT	16
#define MCP_FIGURES_NAMED	64

struct mcp_tool {
	const char *name, *title;
	enum op op;
	bool read_only, destructive, idempotent;
	const char *about;
};

static const struct mcp_tool mcp_tools[] = {
	{ "run_python", "Run Python", OP_EXEC, false, true, false,
	  "Run Python code in the persistent session. Variables, imports "
	  "and functions stay for the next call. The answer has what the "
	  "code printed (stdout, then stderr), the value of its last "
	  "expression as Out[N], and, if it raised, the traceback (the "
	  "result is then an error). Figures come as images, or as the "
	  "paths of their files. A cell that runs past its timeout is "
	  "stopped; if the process dies, the namespace is restored from "
	  "the newest checkpoint and the answer lists the cells lost. "
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
};

/* What a tool words for itself in its op's schema (about), or leaves
 * out of it (about NULL): the agent protocol's fields for terminals and
 * socket clients. */
static const struct {
	const char *tool, *prop, *about;
} mcp_props[] = {
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

struct mcp_call {
	struct mcp_call *next;
	uint64_t seq;		/* the session's */
	json_t *id;		/* the client's */
	json_t *progress;	/* its progressToken, or NULL */
	json_int_t sent;	/* bytes of output sent as progress */
	bool stateless;		/* a 2026-07-28 request */
	bool cancelled;		/* no answer is owed */
};

struct mcp {
	struct mcp_call *calls;
	json_t *tools;		/* tools/list's, made once */
};

/* ---- messages ------------------------------------------------------- */

/* One message (stolen), "jsonrpc" first.  NULL is a message jansson
 * could not build: said, as an internal error, to the request id. */
static void
mcp_send(struct agent_io *a, json_t *msg, json_t *id)
{
	json_t *m = json_pack("{s:s}", "jsonrpc", "2.0");

	if (msg == NULL)
		msg = json_pack("{s:O, s:{s:i, s:s}}", "id", id != NULL ? id :
		    json_null(), "error", "code", RPC_INTERNAL, "message",
		    "internal error: coil could not build this answer");
	json_object_update(m, msg);
	json_decref(msg);
	wire_send(&a->io, m);
}

static json_t *mcp_server_info(void);

/* A result (stolen) for the request id.  A 2026-07-28 one says it is
 * complete and who answers; a list it may cache, how long: the tools
 * are fixed for the life of the process, which the client cannot see,
 * so not at all. */
static void
mcp_result(struct agent_io *a, json_t *id, json_t *result, bool stateless)
{
	if (stateless) {
		json_object_set_new(result, "resultType",
		    json_string("complete"));
		json_object_set_new(result, "_meta", json_pack("{s:o}",
		    MCP_META_SERVER, mcp_server_info()));
	}
	mcp_send(a, json_pack("{s:O, s:o}", "id", id, "result", result), id);
}

static json_t *
mcp_cacheable(json_t *result)
{
	json_object_set_new(result, "ttlMs", json_integer(0));
	json_object_set_new(result, "cacheScope", json_string("private"));
	return result;
}

/* An error for the request id (NULL: unknown); data (stolen) may be
 * NULL. */
static void __attribute__((format(printf, 5, 6)))
mcp_error(struct agent_io *a, json_t *id, int code, json_t *data,
    const char *fmt, ...)
{
	json_t *e;
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* A name echoed in it may have been cut inside a character. */
	msg[utf8_valid_prefix(msg, strlen(msg))] = '\0';
	e = json_pack("{s:i, s:s}", "code", code, "message", msg);
	if (data != NULL)
		json_object_set_new(e, "data", data);
	mcp_send(a, json_pack("{s:O, s:o}", "id", id != NULL ? id :
	    json_null(), "error", e), id);
}

/* ---- what the server says of itself --------------------------------- */

static const struct mcp_tool *
mcp_tool_find(const char *name)
{
	size_t i;

	for (i = 0; i < nitems(mcp_tools); i++)
		if (strcmp(mcp_tools[i].name, name) == 0)
			return &mcp_tools[i];
	return NULL;
}

static json_t *
mcp_tool_schema(const struct mcp_tool *t)
{
	json_t *schema = request_schema(&request_ops[t->op]), *props, *req, *p;
	size_t i, j;

	props = json_object_get(schema, "properties");
	req = json_object_get(schema, "required");
	for (i = 0; i < nitems(mcp_props); i++) {
		if (strcmp(mcp_props[i].tool, t->name) != 0 ||
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

static json_t *
mcp_tool_list(const struct coil_opts *opts)
{
	json_t *tools = json_array();
	size_t i;

	for (i = 0; i < nitems(mcp_tools); i++) {
		const struct mcp_tool *t = &mcp_tools[i];

		json_array_append_new(tools, json_pack("{s:s, s:s, s:s, s:o, "
		    "s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name, "title",
		    t->title, "description", t->about, "inputSchema",
		    mcp_tool_schema(t), "annotations", "title", t->title,
		    "readOnlyHint", t->read_only, "destructiveHint",
		    t->destructive, "idempotentHint", t->idempotent,
		    "openWorldHint", t->op == OP_EXEC && opts->sbx.allow_net));
	}
	return tools;
}

static json_t *
mcp_server_info(void)
{
	return json_pack("{s:s, s:s, s:s}", "name", PACKAGE, "title",
	    "coil: a persistent Python session", "version", PACKAGE_VERSION);
}

static json_t *
mcp_instructions(const struct coil_opts *opts)
{
	char *s;
	json_t *v;

	char limit[96];

	if (opts->timeout == 0)
		snprintf(limit, sizeof limit, "A cell has no time limit unless "
		    "the call gives it a timeout.");
	else
		snprintf(limit, sizeof limit, "A cell is stopped after %g s "
		    "unless the call gives another timeout.",
		    opts->timeout > 0 ? opts->timeout : (double)OPTS_TIMEOUT);
	xasprintf(&s, "One persistent Python session: what run_python "
	    "defines (variables, imports, functions) stays for the next "
	    "call, and the value of a call's last expression comes back as "
	    "Out[N]. Cells run in a sandbox, in %s, and may write files "
	    "there. %s If the process dies, the namespace is restored from "
	    "the newest checkpoint and the answer lists the cells lost, to "
	    "run again; snapshot and rollback keep and restore the "
	    "namespace by name; reset starts afresh. Figures are saved "
	    "under %s.", opts->workdir, limit, opts->figure_dir);
	v = json_string(s);
	free(s);
	return v;
}

static json_t *
mcp_capabilities(bool stateless)
{
	return stateless ? json_pack("{s:{}}", "tools") :
	    json_pack("{s:{s:b}}", "tools", "listChanged", 0);
}

/* initialize: the client's revision when we speak it, else our newest. */
static void
mcp_initialize(struct agent_io *a, json_t *id, json_t *params)
{
	const char *want = json_string_value(json_object_get(params,
	    "protocolVersion")), *v = mcp_versions[0];
	size_t i;

	if (want == NULL) {
		mcp_error(a, id, RPC_PARAMS, NULL, "initialize needs "
		    "params.protocolVersion, a string");
		return;
	}
	for (i = 0; i < nitems(mcp_versions); i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			v = mcp_versions[i];
	mcp_result(a, id, json_pack("{s:s, s:o, s:o, s:o}", "protocolVersion",
	    v, "capabilities", mcp_capabilities(false), "serverInfo",
	    mcp_server_info(), "instructions", mcp_instructions(a->opts)),
	    false);
}

/* server/discover lists the stateless revisions only: the others are
 * the handshake's to agree on. */
static void
mcp_discover(struct agent_io *a, json_t *id)
{
	mcp_result(a, id, mcp_cacheable(json_pack("{s:[s], s:o, s:o}",
	    "supportedVersions", MCP_STATELESS, "capabilities",
	    mcp_capabilities(true), "instructions",
	    mcp_instructions(a->opts))), true);
}

/* ---- a tool's answer ------------------------------------------------ */

static void
mcp_line_end(struct buf *b)
{
	if (b->len > 0 && b->p[b->len - 1] != '\n')
		buf_addstr(b, "\n");
}

static void
mcp_text(struct buf *b, const char *label, const char *p, size_t n)
{
	if (n == 0)
		return;
	if (label != NULL)
		buf_printf(b, "[%s]\n", label);
	buf_add(b, p, n);
	mcp_line_end(b);
}

static void
mcp_error_text(struct buf *b, const struct response_error *e)
{
	if (e == NULL)
		return;
	if (e->traceback != NULL && *e->traceback != '\0')
		buf_addstr(b, e->traceback);
	else
		buf_printf(b, "%s: %s", e->type, e->message);
	mcp_line_end(b);
	if (e->hint != NULL)
		buf_printf(b, "hint: %s\n", e->hint);
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

/* The figures a cell showed: each named in the text (up to
 * MCP_FIGURES_NAMED), the PNGs among them whose bytes the worker handed
 * over as images while they fit MCP_IMAGES_MAX and MCP_IMAGES_COUNT,
 * each path once. */
static void
mcp_figures(const struct response *r, struct buf *b, json_t *content)
{
	size_t i, named = 0, left = MCP_IMAGES_MAX, used, more;
	json_t *v, *img, *seen = json_object();
	const char *path, *type;

	json_array_foreach(r->display, i, v) {
		path = json_string_value(json_object_get(v, "path"));
		type = json_string_value(json_object_get(v, "type"));
		if (path == NULL || json_object_get(seen, path) != NULL)
			continue;
		json_object_set_new(seen, path, json_true());
		if (++named > MCP_FIGURES_NAMED)
			continue;
		buf_printf(b, "[%s: %s]\n", type != NULL ? type : "figure",
		    path);
		used = 0;
		if (type != NULL && strcmp(type, "image/png") == 0 &&
		    json_array_size(content) < MCP_IMAGES_COUNT &&
		    (img = mcp_image(figure_find(r->figs, r->nfigs, r->display, i),
		    left < MCP_IMAGE_MAX ? left : MCP_IMAGE_MAX, &used)) !=
		    NULL) {
			json_array_append_new(content, img);
			left -= used;
		}
	}
	if (named > MCP_FIGURES_NAMED) {
		more = named - MCP_FIGURES_NAMED;
		buf_printf(b, "[and %zu more figure%s]\n", more,
		    more > 1 ? "s" : "");
	}
	json_decref(seen);
}

/* A cell's answer as a model reads it: its streams, the error, the
 * result, its figures; images go in content. */
static void
mcp_exec_text(const struct response *r, struct buf *b, json_t *content)
{
	json_t *v;

	/* A restore after a crash is the error's to tell: it names the
	 * cell the namespace is back at and the cells lost. */
	v = r->background;
	if (v != NULL) {
		const char *o = json_string_value(json_object_get(v, "output")),
		    *e = json_string_value(json_object_get(v, "stderr"));

		if (o != NULL)
			mcp_text(b, "printed between cells", o, strlen(o));
		if (e != NULL)
			mcp_text(b, "stderr between cells", e, strlen(e));
	}
	mcp_text(b, NULL, r->output, r->output_len);
	mcp_text(b, "stderr", r->stderr_text, r->stderr_len);
	mcp_error_text(b, r->error);
	if (r->has & RESP_RESULT)
		buf_printf(b, "Out[%d]: %s\n", r->cell, r->result);
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
		    strcmp(key, "error") == 0)
			continue;
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
			mcp_line_end(b);
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

/* The session's answer as a CallToolResult. */
static json_t *
mcp_tool_result(const struct response *r)
{
	json_t *content = json_array(), *images = json_array(), *sc;
	struct buf b;
	size_t i;
	const char *w;
	json_t *v;

	buf_init(&b);
	if (r->op == OP_EXEC)
		mcp_exec_text(r, &b, images);
	else if (r->status == ST_OK)
		mcp_fields_text(r, &b);
	else
		mcp_error_text(&b, r->error);
	json_array_foreach(r->warnings, i, v)
		if ((w = json_string_value(v)) != NULL)
			buf_printf(&b, "warning: %s\n", w);
	if (b.len == 0)
		buf_addstr(&b, r->status == ST_OK ? "(no output)\n" :
		    status_names[r->status]);
	json_array_append_new(content, json_pack("{s:s, s:s%}", "type",
	    "text", "text", b.p, b.len));
	json_array_extend(content, images);
	json_decref(images);
	buf_free(&b);
	sc = response_json(r, RESPONSE_BRIEF);
	json_object_del(sc, "id");
	return json_pack("{s:o, s:o, s:b}", "content", content,
	    "structuredContent", sc, "isError", r->status != ST_OK);
}

/* A call refused before it reached the session, as a result the model
 * can read and mend (MCP: argument errors are the tool's). */
static json_t *
mcp_tool_refusal(const char *msg)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
	    "text", msg, "isError", 1);
}

/* ---- calls ---------------------------------------------------------- */

static struct mcp_call **
mcp_call_by_seq(struct mcp *m, uint64_t seq)
{
	struct mcp_call **pp;

	for (pp = &m->calls; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->seq == seq)
			return pp;
	return NULL;
}

static void
mcp_call_free(struct mcp_call **pp)
{
	struct mcp_call *c = *pp;

	*pp = c->next;
	json_decref(c->id);
	json_decref(c->progress);
	free(c);
}

static void
mcp_call_tool(struct agent_io *a, json_t *id, json_t *params, bool stateless)
{
	struct mcp *m = a->proto;
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments"), *req, *rid, *tok;
	const struct mcp_tool *t;
	struct mcp_call *c;
	char err[512], *line;
	enum op op;
	size_t i;
	int rc;

	if (name == NULL) {
		mcp_error(a, id, RPC_PARAMS, NULL, "tools/call needs "
		    "params.name, the tool's name");
		return;
	}
	for (c = m->calls; c != NULL; c = c->next)
		if (!c->cancelled && json_equal(c->id, id)) {
			mcp_error(a, id, RPC_INVALID, NULL, "invalid request: "
			    "this id is a call's that is running or waiting");
			return;
		}
	if ((t = mcp_tool_find(name)) == NULL) {
		mcp_error(a, id, RPC_PARAMS, NULL, "unknown tool '%s': "
		    "tools/list names them", name);
		return;
	}
	if (args != NULL && !json_is_object(args) && !json_is_null(args)) {
		mcp_error(a, id, RPC_PARAMS, NULL, "tools/call's arguments "
		    "must be an object");
		return;
	}
	req = json_is_object(args) ? json_copy(args) : json_object();
	json_object_del(req, "id");
	for (i = 0; i < nitems(mcp_props); i++)
		if (mcp_props[i].about == NULL &&
		    strcmp(mcp_props[i].tool, t->name) == 0)
			json_object_del(req, mcp_props[i].prop);
	json_object_set_new(req, "op", json_string(request_ops[t->op].name));
	tok = json_object_get(json_object_get(params, "_meta"),
	    "progressToken");
	if (!json_is_string(tok) && !json_is_integer(tok))
		tok = NULL;
	if (tok != NULL && t->op == OP_EXEC)
		json_object_set_new(req, "stream", json_true());
	/* The agent protocol's own checks, to the letter. */
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	rc = request_parse(line, strlen(line), &req, &rid, &op, err,
	    sizeof err);
	free(line);
	json_decref(rid);
	if (rc == -1) {
		mcp_result(a, id, mcp_tool_refusal(err), stateless);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->id = json_incref(id);
	c->progress = tok != NULL ? json_incref(tok) : NULL;
	c->stateless = stateless;
	c->seq = session_submit(a->s, a->client, req, json_incref(id), op);
	c->next = m->calls;
	m->calls = c;
}

static void
mcp_cancel(struct agent_io *a, json_t *params)
{
	struct mcp *m = a->proto;
	json_t *id = json_object_get(params, "requestId");
	struct mcp_call *c;

	if (id == NULL)
		return;
	for (c = m->calls; c != NULL; c = c->next)
		if (!c->cancelled && json_equal(c->id, id)) {
			c->cancelled = true;
			session_cancel(a->s, c->seq);
			return;
		}
}

/* ---- the protocol --------------------------------------------------- */

static void
mcp_request(struct agent_io *a, json_t *id, const char *method,
    json_t *params, bool stateless)
{
	struct mcp *m = a->proto;
	json_t *list;

	if (strcmp(method, "tools/call") == 0) {
		mcp_call_tool(a, id, params, stateless);
	} else if (strcmp(method, "tools/list") == 0) {
		list = json_pack("{s:O}", "tools", m->tools);
		mcp_result(a, id, stateless ? mcp_cacheable(list) : list,
		    stateless);
	} else if (strcmp(method, "server/discover") == 0) {
		mcp_discover(a, id);
	} else if (!stateless && strcmp(method, "initialize") == 0) {
		mcp_initialize(a, id, params);
	} else if (!stateless && strcmp(method, "ping") == 0) {
		/* 2026-07-28 has neither: a request is its own handshake. */
		mcp_result(a, id, json_object(), false);
	} else {
		mcp_error(a, id, RPC_NO_METHOD, NULL, "method not found: %s",
		    method);
	}
}

static void
mcp_notification(struct agent_io *a, const char *method, json_t *params)
{
	if (strcmp(method, "notifications/cancelled") == 0)
		mcp_cancel(a, params);
	/* notifications/initialized, and any other, need nothing. */
}

/* The era of a message: 1 when its _meta names a revision (2026-07-28's
 * per-request envelope), 0 when it names none (the handshake's); -1,
 * answered, for a revision we do not speak or an envelope without the
 * client's capabilities. */
static int
mcp_era(struct agent_io *a, json_t *id, json_t *params)
{
	json_t *meta = json_object_get(params, "_meta"),
	    *v = json_object_get(meta, MCP_META_VERSION);

	if (v == NULL)
		return 0;
	if (!json_is_string(v) || strcmp(json_string_value(v),
	    MCP_STATELESS) != 0) {
		if (id != NULL)
			mcp_error(a, id, RPC_VERSION, json_pack("{s:[s], s:o}",
			    "supported", MCP_STATELESS, "requested",
			    json_is_string(v) ? json_incref(v) :
			    json_string("unknown")),
			    "unsupported protocol version: this server "
			    "speaks %s, and the initialize handshake's",
			    MCP_STATELESS);
		return -1;
	}
	if (!json_is_object(json_object_get(meta, MCP_META_CAPS))) {
		if (id != NULL)
			mcp_error(a, id, RPC_PARAMS, json_pack("{s:{s:s, s:s}}",
			    "envelope", "key", MCP_META_CAPS, "problem",
			    json_object_get(meta, MCP_META_CAPS) == NULL ?
			    "missing" : "not an object"), "invalid _meta "
			    "envelope for protocol revision %s: %s must be an "
			    "object", MCP_STATELESS, MCP_META_CAPS);
		return -1;
	}
	return 1;
}

static void
mcp_message(struct agent_io *a, json_t *msg)
{
	json_t *id = json_object_get(msg, "id"),
	    *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method")),
	    *rpc = json_string_value(json_object_get(msg, "jsonrpc"));
	int era;

	/* An answer (even one to a request it could not read, id null):
	 * we ask nothing, and an answer is never answered. */
	if (json_object_get(msg, "method") == NULL &&
	    (json_object_get(msg, "result") != NULL ||
	    json_object_get(msg, "error") != NULL))
		return;
	if (id != NULL && !json_is_string(id) && !json_is_integer(id)) {
		mcp_error(a, NULL, RPC_INVALID, NULL, "invalid request: an id "
		    "must be a string or an integer");
		return;
	}
	if (rpc == NULL || strcmp(rpc, "2.0") != 0 || method == NULL) {
		if (id != NULL)
			mcp_error(a, id, RPC_INVALID, NULL, "invalid request: "
			    "%s", method == NULL ? "no method" :
			    "\"jsonrpc\" must be \"2.0\"");
		else
			mcp_error(a, NULL, RPC_INVALID, NULL, "invalid "
			    "request: %s", method == NULL ? "no method, and "
			    "no id" : "\"jsonrpc\" must be \"2.0\"");
		return;
	}
	if (params != NULL && !json_is_object(params)) {
		if (id != NULL)
			mcp_error(a, id, RPC_PARAMS, NULL, "params must be an "
			    "object");
		return;
	}
	if ((era = mcp_era(a, id, params)) == -1)
		return;
	if (id == NULL)
		mcp_notification(a, method, params);
	else
		mcp_request(a, id, method, params, era == 1);
}

static void
mcp_line(struct agent_io *a, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg;
	size_t i;

	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return;
	msg = json_loadb(line, len, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
	if (msg == NULL) {
		mcp_error(a, NULL, RPC_PARSE, NULL, "parse error: %s (column "
		    "%d)", jerr.text, jerr.column);
		return;
	}
	if (json_is_array(msg))
		mcp_error(a, NULL, RPC_INVALID, NULL, "invalid request: "
		    "batches are not taken (MCP has none since 2025-06-18): "
		    "send one message a line");
	else if (!json_is_object(msg))
		mcp_error(a, NULL, RPC_INVALID, NULL, "invalid request: a "
		    "message is a JSON object");
	else
		mcp_message(a, msg);
	json_decref(msg);
}

static void
mcp_too_long(struct agent_io *a, size_t bytes, const char *head,
    size_t headlen)
{
	json_t *id = request_head_id(head, headlen);

	mcp_error(a, id != NULL && (json_is_string(id) ||
	    json_is_integer(id)) ? id : NULL, RPC_INVALID, NULL, "the message "
	    "is %zu bytes, over the %zu-byte limit (--max-request); it was "
	    "skipped", bytes, a->opts->max_request);
	json_decref(id);
}

static void
mcp_event(struct agent_io *a, const struct session_event *ev)
{
	struct mcp *m = a->proto;
	struct mcp_call **pp = ev->seq > 0 ? mcp_call_by_seq(m, ev->seq) :
	    NULL, *c = pp != NULL ? *pp : NULL;

	if (c == NULL)
		return;
	switch (ev->kind) {
	case EV_OUTPUT:
		if (c->progress == NULL || c->cancelled || ev->text == NULL)
			break;
		c->sent += (json_int_t)ev->text_len;
		mcp_send(a, json_pack("{s:s, s:{s:O, s:I, s:s%}}", "method",
		    "notifications/progress", "params", "progressToken",
		    c->progress, "progress", c->sent, "message", ev->text,
		    ev->text_len), NULL);
		break;
	case EV_RESPONSE:
		if (!c->cancelled)
			mcp_result(a, c->id, mcp_tool_result(ev->resp),
			    c->stateless);
		mcp_call_free(pp);
		break;
	case EV_CANCELLED:
		mcp_call_free(pp);
		break;
	default:
		break;
	}
}

/* The session ended under the calls still owed: each is told why. */
static void
mcp_failed(struct agent_io *a, const char *why)
{
	struct mcp *m = a->proto;

	while (m->calls != NULL) {
		if (!m->calls->cancelled)
			mcp_error(a, m->calls->id, RPC_INTERNAL, NULL, "the "
			    "session cannot go on: %s", why);
		mcp_call_free(&m->calls);
	}
}

static const struct agent_proto mcp_proto = {
	mcp_line, mcp_too_long, mcp_event, mcp_failed, 0,
};

int
mcp_main(const struct coil_opts *opts)
{
	struct mcp m = { 0 };
	int rc;

	m.tools = mcp_tool_list(opts);
	rc = agent_serve(opts, &mcp_proto, &m);
	while (m.calls != NULL)
		mcp_call_free(&m.calls);
	json_decref(m.tools);
	return rc;
}
