/*
 * mcp.h - the MCP server (coil --mcp): the session as Model Context
 * Protocol tools, JSON-RPC 2.0 on stdin and stdout, one message a line
 * and nothing else on stdout.
 *
 * Revisions: 2025-06-18 and 2025-11-25 after the initialize handshake
 * (2025-03-26 and 2024-11-05 are answered too: their tools are the
 * same), and 2026-07-28, where a request carries its revision in its
 * _meta and server/discover replaces the handshake.  A request names
 * its era by that _meta; one with none is of the handshake's.
 *
 * The tools mirror the agent protocol's ops (request.h), and their
 * input schemas are request_schema's, so the two cannot disagree:
 * run_python (exec), list_variables (vars), inspect, snapshot,
 * list_snapshots (snapshots), rollback and reset.  A call becomes one
 * agent request submitted to the session, so a transcript, an attached
 * UI (--listen) and a replay see it as any agent cell.  Its answer is a
 * tool result: the text a model reads (output, stderr, the result as
 * Out[N], the traceback, warnings) as content, the agent answer object
 * (--brief's) as structuredContent, isError when the cell did not
 * finish well, and figures as image content when they are PNGs of at
 * most MCP_IMAGE_MAX bytes among the bytes the worker's descriptors
 * held (figure.h: no figure is read by its path), their paths
 * otherwise.  notifications/cancelled interrupts the call's
 * cell, or drops it while it waits, and its answer is not sent; a call
 * with a progressToken gets the cell's output as notifications/progress
 * while it runs.
 */
#ifndef COIL_MCP_H
#define COIL_MCP_H

#include "opts.h"

#define MCP_IMAGE_MAX ((size_t)1 << 20)

int mcp_main(const struct coil_opts *opts);

#endif
