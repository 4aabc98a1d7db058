/*
 * mcp-int.h - the parts of the MCP server (mcp.h): mcp.c speaks the
 * protocol (messages, methods, the calls in flight), mcp-tools.c is
 * what the tools are: their list and schemas, the agent request a call
 * becomes and the result an answer becomes.  Supervisor side; pure
 * logic on jansson objects, no I/O.
 */
#ifndef COIL_MCP_INT_H
#define COIL_MCP_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "agent.h"
#include "opts.h"
#include "request.h"
#include "response.h"

/*
 * One MCP client's state in mcp.c: its calls in flight, its log level.
 * The stdio server has one; the HTTP transport (mcp-http.c) one a
 * session.  Messages leave through out: each whole line (its newline
 * included) with the id of the request it concerns (the answer's, a
 * call's progress; NULL: none, such as a parse error's or a warning),
 * borrowed for the call; out NULL is stdout (agent_io's conn).  The
 * agent_io a protocol call gets has this as its proto.
 */
struct mcp;
typedef void (*mcp_out_fn)(void *ctx, json_t *id, const char *line,
    size_t len);
struct mcp *mcp_new(const struct coil_opts *opts, mcp_out_fn out, void *ctx);
void mcp_free(struct mcp *m);
/* The protocol's calls: line (one message), event, failed. */
extern const struct agent_proto mcp_proto;
/* Whether v is a revision coil speaks (the handshake's or 2026-07-28). */
bool mcp_version_known(const char *v);

struct mcp_tool {
	const char *name, *title;
	enum op op;
	bool read_only, destructive, idempotent;
	const char *about;
};

/* The tools, in tools/list's order: each one op of request_ops,
 * worded for a model (tools.c makes every API's definitions of them). */
extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_ntools;

/* The tool of that name, or NULL. */
const struct mcp_tool *mcp_tool_find(const char *name);

/* tools/list's tools: each tool's name, words, annotations, input
 * schema (request_schema's, reworded for a model) and output schema
 * (tools_output_schema's).  New reference. */
json_t *mcp_tool_list(const struct coil_opts *opts);
/* mcp_tool_list's, and the same without outputSchema (revisions before
 * 2025-06-18), made once: they depend on the options only, and over
 * HTTP every session (every 2026-07-28 call) is an mcp of its own.
 * New references to the shared, read-only lists. */
void mcp_tool_lists(const struct coil_opts *opts, json_t **tools,
    json_t **old);

/* The agent request a call of t with args (an object or NULL,
 * borrowed) becomes, before request_from_json checks it: a deep copy
 * without the arguments the tool leaves out ("id", "op", the
 * terminal's fields), its op set, and "stream" when the call wants
 * progress.  *warnings gets a new array saying what was left out and
 * why, or NULL.  New reference. */
json_t *mcp_tool_request(const struct mcp_tool *t, json_t *args,
    bool stream, json_t **warnings);

/* The session's answer as a CallToolResult; warnings (borrowed, may be
 * NULL) are the call's own, said before the answer's.  New reference. */
json_t *mcp_tool_result(const struct response *r, json_t *warnings);

/* The system text for a model (tools.c), as coil --system-prompt
 * prints it; after --resume (resumed, borrowed, not NULL) with how
 * faithful the rebuilt state is (wording_resumed) at its end: MCP's
 * instructions.  New reference. */
json_t *mcp_tool_instructions(const struct coil_opts *opts,
    json_t *resumed);
/* --resume: the report (borrowed) said in a CallToolResult, a
 * session's first: as text before the answer's (clients show a model
 * the content, not always the instructions) and as "resumed" in
 * structuredContent. */
void mcp_tool_resumed(json_t *result, json_t *resumed);

/* A call of t refused before it reached the session, as a result the
 * model can read and mend (MCP: argument errors are the tool's), with
 * the structuredContent an "invalid" answer has.  New reference. */
json_t *mcp_tool_refusal(const struct mcp_tool *t, const char *msg,
    json_t *warnings);

#endif
