/*
 * tools.h - coil's tools as each model API defines them, and the system
 * text a model reads, all from one source: the request table
 * (request.h) through MCP's tool table (mcp-int.h), which words each
 * tool for a model.  MCP's tools/list and initialize, coil
 * --tool-schema and coil --system-prompt are made here, so they cannot
 * disagree.  Supervisor side, front-end layer; pure, but for
 * tools_main, which prints.
 *
 * The options shape what is printed as they shape an MCP session's:
 * --allow-net sets run_python's openWorldHint, and --timeout,
 * --max-output, --memory, --allow-net and --sandbox are the limits the
 * system text names.  share/ holds what coil prints with none given.
 *
 * Ownership: every function returning json_t * or char * returns a new
 * one (caller frees).
 */
#ifndef COIL_TOOLS_H
#define COIL_TOOLS_H

#include <jansson.h>

#include "opts.h"
#include "request.h"

/* The JSON Schema (draft 2020-12, embedded: no "$schema") of the
 * structuredContent of the result of op's tool: the agent answer as
 * --brief writes it, without "id", for every status, refusals of the
 * arguments included.  MCP's outputSchema. */
json_t *tools_output_schema(enum op op);

/* The system text for a model: what the session is, what each tool
 * does, the limits the options set, and how to read "restored".  MCP's
 * instructions; coil --system-prompt prints it with a newline. */
char *tools_system_text(const struct coil_opts *opts);

/* The tool definitions of one API: "openai" (Chat Completions' function
 * tools), "anthropic" (the Messages API's tools) or "mcp" (tools/list's
 * tools); NULL for any other name. */
json_t *tools_for(const char *api, const struct coil_opts *opts);

/* --tool-schema or --system-prompt: print what opts asks for to
 * stdout; returns coil's exit status: 0, 2 for an API of no known name
 * (a usage error, as options_bad says it), 1 when stdout failed. */
int tools_main(const struct coil_opts *opts);

#endif
