/*
 * mcp.c - the MCP server (see mcp.h).
 *
 * A protocol of agent.c's stdio loop: each line is one JSON-RPC
 * message, answered here when it asks about the server (initialize,
 * server/discover, ping, tools/list) and turned into an agent request
 * for the session when it calls a tool.  The session's answer comes
 * back as an event and leaves as the call's result; the calls in
 * flight are a short list, matched by the session's sequence number
 * and, for notifications/cancelled, by the client's id.  What the tools
 * are, and how an answer reads as a tool's result, is mcp-tools.c's.
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "jsonline.h"
#include "mcp.h"
#include "mcp-http.h"
#include "mcp-int.h"
#include "outbuf.h"
#include "request.h"
#include "response.h"
#include "session.h"
#include "tools.h"
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

struct mcp_call {
	struct mcp_call *next;
	uint64_t seq;		/* the session's */
	json_t *id;		/* the client's */
	json_t *progress;	/* its progressToken, or NULL */
	json_t *warnings;	/* what the call's arguments lost, or NULL */
	json_int_t sent;	/* bytes of output sent as progress */
	bool stateless;		/* a 2026-07-28 request */
	bool cancelled;		/* no answer is owed */
};

struct mcp {
	struct mcp_call *calls;
	json_t *tools;		/* tools/list's, made once */
	json_t *tools_old;	/* the same without outputSchema, which
				   revisions before 2025-06-18 lack */
	bool old;		/* the handshake agreed on one of those */
	/* A call cancelled while its cell ran has no answer, yet the worker
	 * may have been killed and restored under it: what the client is
	 * told with its next result ("restored", and warnings), or NULL. */
	json_t *restored, *told;
	int log_level;		/* logging/setLevel's, in mcp_levels */
	mcp_out_fn out;		/* where messages go; NULL: stdout */
	void *out_ctx;
};

/* RFC 5424's levels, as MCP's logging names them, lowest first. */
static const char *const mcp_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency",
};
#define MCP_WARNING 3

/* ---- messages ------------------------------------------------------- */

/*
 * An id is a string or an integer; one beyond 64 bits, which jansson
 * cannot hold, is kept as its digits in an object of one key (no id a
 * client sends is an object, so none is mistaken for one) and written
 * back as those digits: a client matches its answer by the very id it
 * sent, and a real would come back rounded.
 */
#define MCP_BIG_ID "coil.big-id"

static const char *
mcp_big_id(json_t *id)
{
	return json_string_value(json_object_get(id, MCP_BIG_ID));
}

/* The id at the head of line when it is a big one, the value jansson
 * read as a real there; else NULL.  New reference. */
static json_t *
mcp_id_big(const char *line, size_t len)
{
	size_t at = request_id_at(line, len), n;
	json_t *id;
	char *digits;

	if (at >= len || !jsonline_big_int(line + at, len - at, &n))
		return NULL;
	digits = xstrndup(line + at, n);
	id = json_pack("{s:s}", MCP_BIG_ID, digits);
	free(digits);
	return id;
}

/* Whether a notification's requestId (a real, for a big one) names the
 * call of that id. */
static bool
mcp_id_names(json_t *id, json_t *rid)
{
	const char *big = mcp_big_id(id);

	if (big != NULL && json_is_real(rid))
		return strtod(big, NULL) == json_real_value(rid);
	return json_equal(id, rid);
}

/* One message (stolen), "jsonrpc" first, then "id" when it has one;
 * id is the request it concerns (NULL: none).  NULL is a message
 * jansson could not build: said, as an internal error, to the request
 * id. */
static void
mcp_send(struct agent_io *a, json_t *msg, json_t *id)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":null";
	struct mcp *mp = a->proto;
	json_t *m = json_pack("{s:s}", "jsonrpc", "2.0");
	const char *b0;
	char *line, *big;
	struct buf b;

	if (msg == NULL)
		msg = json_pack("{s:O, s:{s:i, s:s}}", "id", id != NULL ? id :
		    json_null(), "error", "code", RPC_INTERNAL, "message",
		    "internal error: coil could not build this answer");
	b0 = mcp_big_id(json_object_get(msg, "id"));
	big = b0 != NULL ? xstrdup(b0) : NULL;
	json_object_update(m, msg);
	json_decref(msg);
	/* A big id's digits go in the place of a null id. */
	if (big != NULL)
		json_object_set_new(m, "id", json_null());
	line = json_dumps(m, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(m);
	if (line == NULL || (big != NULL &&
	    strncmp(line, head, sizeof head - 1) != 0))
		fatal("cannot encode a response");
	buf_init(&b);
	if (big == NULL) {
		buf_printf(&b, "%s\n", line);
	} else {
		buf_add(&b, line, sizeof head - 5);
		buf_addstr(&b, big);
		buf_printf(&b, "%s\n", line + sizeof head - 1);
	}
	/* To stdout, or to the transport's (mcp-int.h) */
	if (mp->out != NULL)
		mp->out(mp->out_ctx, id, b.p, b.len);
	else
		wire_send_text(&a->io, b.p, b.len);
	buf_free(&b);
	free(line);
	free(big);
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

static json_t *
mcp_server_info(void)
{
	return json_pack("{s:s, s:s, s:s}", "name", PACKAGE, "title",
	    "coil: a persistent Python session", "version", PACKAGE_VERSION);
}

/* The system text for a model, after --resume with the report. */
static json_t *
mcp_instructions(struct agent_io *a)
{
	return mcp_tool_instructions(a->opts, session_resumed(a->s));
}

static json_t *
mcp_capabilities(bool stateless)
{
	return stateless ? json_pack("{s:{}}", "tools") :
	    json_pack("{s:{s:b}, s:{}}", "tools", "listChanged", 0,
	    "logging");
}

/* initialize: the client's revision when we speak it, else our newest. */
static void
mcp_initialize(struct agent_io *a, json_t *id, json_t *params,
    bool stateless)
{
	const char *want = json_string_value(json_object_get(params,
	    "protocolVersion")), *v = mcp_versions[0];
	size_t i;

	(void)stateless;
	if (want == NULL) {
		mcp_error(a, id, RPC_PARAMS, NULL, "initialize needs "
		    "params.protocolVersion, a string");
		return;
	}
	for (i = 0; i < nitems(mcp_versions); i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			v = mcp_versions[i];
	((struct mcp *)a->proto)->old = strcmp(v, "2025-06-18") < 0;
	mcp_result(a, id, json_pack("{s:s, s:o, s:o, s:o}", "protocolVersion",
	    v, "capabilities", mcp_capabilities(false), "serverInfo",
	    mcp_server_info(), "instructions", mcp_instructions(a)),
	    false);
}

/* server/discover lists the stateless revisions only: the others are
 * the handshake's to agree on. */
static void
mcp_discover(struct agent_io *a, json_t *id, json_t *params, bool stateless)
{
	(void)params, (void)stateless;
	mcp_result(a, id, mcp_cacheable(json_pack("{s:[s], s:o, s:o}",
	    "supportedVersions", MCP_STATELESS, "capabilities",
	    mcp_capabilities(true), "instructions",
	    mcp_instructions(a))), true);
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
	json_decref(c->warnings);
	free(c);
}

/* tools/call: the tool's agent request, checked as a line of the
 * agent's would be, goes to the session; its answer is the result. */
static void
mcp_call_tool(struct agent_io *a, json_t *id, json_t *params, bool stateless)
{
	struct mcp *m = a->proto;
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments"), *req, *rid, *tok,
	    *warn;
	const struct mcp_tool *t;
	struct mcp_call *c;
	char err[512];
	enum op op;

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
	tok = json_object_get(json_object_get(params, "_meta"),
	    "progressToken");
	if (!json_is_string(tok) && !json_is_integer(tok))
		tok = NULL;
	/* The agent protocol's own checks, to the letter. */
	if (request_from_json(mcp_tool_request(t, args, tok != NULL, &warn),
	    &req, &rid, &op, err, sizeof err) == -1) {
		json_decref(rid);
		mcp_result(a, id, mcp_tool_refusal(t, err, warn), stateless);
		json_decref(warn);
		return;
	}
	json_decref(rid);
	c = xcalloc(1, sizeof *c);
	c->id = json_incref(id);
	c->progress = tok != NULL ? json_incref(tok) : NULL;
	c->warnings = warn;
	c->stateless = stateless;
	/* The session (its transcript, its observers) sees a big id as
	 * the number it is, near enough. */
	c->seq = session_submit(a->s, a->client, req, mcp_big_id(id) != NULL ?
	    json_real(strtod(mcp_big_id(id), NULL)) : json_incref(id), op);
	c->next = m->calls;
	m->calls = c;
}

static void
mcp_cancel(struct agent_io *a, json_t *id, json_t *params, bool stateless)
{
	struct mcp *m = a->proto;
	json_t *rid = json_object_get(params, "requestId");
	struct mcp_call *c;

	(void)id, (void)stateless;
	if (rid == NULL)
		return;
	for (c = m->calls; c != NULL; c = c->next)
		if (!c->cancelled && mcp_id_names(c->id, rid)) {
			c->cancelled = true;
			session_cancel(a->s, c->seq);
			return;
		}
}

/* ---- the protocol --------------------------------------------------- */

static void
mcp_list(struct agent_io *a, json_t *id, json_t *params, bool stateless)
{
	struct mcp *m = a->proto;
	json_t *list = json_pack("{s:O}", "tools", m->old && !stateless ?
	    m->tools_old : m->tools);

	(void)params;
	mcp_result(a, id, stateless ? mcp_cacheable(list) : list, stateless);
}

static void
mcp_ping(struct agent_io *a, json_t *id, json_t *params, bool stateless)
{
	(void)params, (void)stateless;
	mcp_result(a, id, json_object(), false);
}

/* logging/setLevel: the least level of the messages the client gets
 * (notifications/message: coil sends warnings only). */
static void
mcp_set_level(struct agent_io *a, json_t *id, json_t *params,
    bool stateless)
{
	struct mcp *m = a->proto;
	const char *want = json_string_value(json_object_get(params,
	    "level"));
	size_t i;

	(void)stateless;
	for (i = 0; want != NULL && i < nitems(mcp_levels); i++)
		if (strcmp(want, mcp_levels[i]) == 0) {
			m->log_level = (int)i;
			mcp_result(a, id, json_object(), false);
			return;
		}
	mcp_error(a, id, RPC_PARAMS, NULL, "params.level must be one of "
	    "debug, info, notice, warning, error, critical, alert, "
	    "emergency");
}

/*
 * The methods.  A request (with an id) is served by its entry, or told
 * the method is not found; a notification (no id) by its entry, or by
 * nothing (notifications/initialized, and any other, need nothing).  The
 * handshake's methods are not 2026-07-28's: there a request is its own
 * handshake.
 */
static const struct mcp_method {
	const char *name;
	bool notification;
	bool handshake;
	void (*fn)(struct agent_io *a, json_t *id, json_t *params,
	    bool stateless);
} mcp_methods[] = {
	{ "tools/call", false, false, mcp_call_tool },
	{ "tools/list", false, false, mcp_list },
	{ "server/discover", false, false, mcp_discover },
	{ "initialize", false, true, mcp_initialize },
	{ "ping", false, true, mcp_ping },
	{ "logging/setLevel", false, false, mcp_set_level },
	{ "notifications/cancelled", true, false, mcp_cancel },
};

/* id is NULL for a notification. */
static void
mcp_method(struct agent_io *a, json_t *id, const char *method,
    json_t *params, bool stateless)
{
	const struct mcp_method *m;

	for (m = mcp_methods; m < mcp_methods + nitems(mcp_methods); m++)
		if (m->notification == (id == NULL) && !(stateless &&
		    m->handshake) && strcmp(m->name, method) == 0) {
			m->fn(a, id, params, stateless);
			return;
		}
	if (id != NULL)
		mcp_error(a, id, RPC_NO_METHOD, NULL, "method not found: %s",
		    method);
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
	if (id != NULL && !json_is_string(id) && !json_is_integer(id) &&
	    mcp_big_id(id) == NULL) {
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
	mcp_method(a, id, method, params, era == 1);
}

/* The id of a line: the value jansson read (borrowed, may be NULL) when
 * it is one an id may be, else the digits of a big one, else what can
 * be read at the head of a line jansson could not read (v NULL).  New
 * reference, or NULL. */
static json_t *
mcp_line_id(const char *line, size_t len, json_t *v)
{
	json_t *id;

	if (json_is_string(v) || json_is_integer(v))
		return json_incref(v);
	if ((id = mcp_id_big(line, len)) != NULL || v != NULL)
		return id;
	if ((id = request_head_id(line, len)) != NULL &&
	    (json_is_string(id) || json_is_integer(id)))
		return id;
	json_decref(id);
	return NULL;
}

static void
mcp_line(struct agent_io *a, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg, *id;
	size_t i;

	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return;
	msg = jsonline_load(line, len, JSON_ALLOW_NUL | JSON_DECODE_ANY,
	    &jerr);
	if (msg == NULL) {
		/* The id the line shows, so that the client's call ends
		 * now rather than at its own timeout. */
		id = mcp_line_id(line, len, NULL);
		mcp_error(a, id, RPC_PARSE, NULL, "parse error: %s (column "
		    "%d)", jerr.text, jerr.column);
		json_decref(id);
		return;
	}
	if (json_is_object(msg) && json_is_real(json_object_get(msg, "id")) &&
	    (id = mcp_line_id(line, len, json_object_get(msg, "id"))) !=
	    NULL)
		json_object_set_new(msg, "id", id);
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
	json_t *id = mcp_line_id(head, headlen, NULL);

	mcp_error(a, id, RPC_INVALID, NULL, "the message "
	    "is %zu bytes, over the %zu-byte limit (--max-request); it was "
	    "skipped", bytes, a->opts->max_request);
	json_decref(id);
}

/* The answer of a call cancelled while its cell ran is not sent; if
 * the worker was killed and restored under it, the client hears so at
 * once (notifications/message; not in 2026-07-28, which declares no
 * logging) and with its next result. */
static void
mcp_cancelled_answer(struct agent_io *a, const struct response *r,
    bool stateless)
{
	struct mcp *m = a->proto;
	char *msg;

	if (!json_is_object(r->restored))
		return;		/* the interrupt sufficed: nothing changed */
	xasprintf(&msg, "the call you cancelled left the session changed: "
	    "%s", r->error != NULL && r->error->message != NULL ?
	    r->error->message : "its worker was killed and restored");
	if (!stateless && m->log_level <= MCP_WARNING)
		mcp_send(a, json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:O}}}",
		    "method", "notifications/message", "params", "level",
		    "warning", "logger", "coil", "data", "message", msg,
		    "restored", r->restored), NULL);
	json_decref(m->restored);
	m->restored = json_incref(r->restored);
	if (m->told == NULL)
		m->told = json_array();
	json_array_append_new(m->told, json_string(msg));
	free(msg);
}

/* A call's result: the answer, and what a cancelled call left to tell
 * (and a resume, to a session's first). */
static json_t *
mcp_answer(struct agent_io *a, const struct response *r, json_t *warnings,
    bool stateless)
{
	struct mcp *m = a->proto;
	json_t *all = json_array(), *result, *sc;

	if (warnings != NULL)
		json_array_extend(all, warnings);
	if (m->told != NULL)
		json_array_extend(all, m->told);
	result = mcp_tool_result(r, all);
	json_decref(all);
	sc = json_object_get(result, "structuredContent");
	if (m->restored != NULL && json_object_get(sc, "restored") == NULL)
		json_object_set(sc, "restored", m->restored);
	json_decref(m->restored);
	json_decref(m->told);
	m->restored = m->told = NULL;
	/* --resume: a session's first result says it (mcp-tools.c); a
	 * stateless call has no first, server/discover's instructions do */
	if (!stateless && !a->resume_told && session_resumed(a->s) != NULL) {
		a->resume_told = true;
		mcp_tool_resumed(result, session_resumed(a->s));
	}
	return result;
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
		    ev->text_len), c->id);
		break;
	case EV_RESPONSE:
		if (c->cancelled)
			mcp_cancelled_answer(a, ev->resp, c->stateless);
		else
			mcp_result(a, c->id, mcp_answer(a, ev->resp,
			    c->warnings, c->stateless), c->stateless);
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

const struct agent_proto mcp_proto = {
	mcp_line, mcp_too_long, mcp_event, mcp_failed, 0,
};

bool
mcp_version_known(const char *v)
{
	size_t i;

	for (i = 0; i < nitems(mcp_versions); i++)
		if (strcmp(v, mcp_versions[i]) == 0)
			return true;
	return strcmp(v, MCP_STATELESS) == 0;
}

struct mcp *
mcp_new(const struct coil_opts *opts, mcp_out_fn out, void *ctx)
{
	struct mcp *m = xcalloc(1, sizeof *m);

	mcp_tool_lists(opts, &m->tools, &m->tools_old);
	m->out = out;
	m->out_ctx = ctx;
	return m;
}

void
mcp_free(struct mcp *m)
{
	if (m == NULL)
		return;
	while (m->calls != NULL)
		mcp_call_free(&m->calls);
	json_decref(m->tools);
	json_decref(m->tools_old);
	json_decref(m->restored);
	json_decref(m->told);
	free(m);
}

int
mcp_main(const struct coil_opts *opts)
{
	struct mcp *m;
	int rc;

#ifdef HAVE_MHD
	if (opts->http != NULL)
		return mcp_http_main(opts);
#endif
	m = mcp_new(opts, NULL, NULL);
	rc = agent_serve(opts, &mcp_proto, m);
	mcp_free(m);
	return rc;
}
