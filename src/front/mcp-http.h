/*
 * mcp-http.h - MCP over Streamable HTTP (coil --mcp --http ADDR:PORT):
 * the MCP server of mcp.h on one endpoint, /mcp, of an HTTP server
 * (libmicrohttpd) run in the supervisor's own poll loop, no thread.
 *
 * POST carries one JSON-RPC message.  A request is answered with
 * application/json, except tools/call, whose answer comes later: it is
 * a text/event-stream (SSE) of the call's progress and then its result.
 * A notification or a response is taken with 202.  GET opens the
 * session's stream of what concerns no request (warnings); GET with
 * Last-Event-ID resumes any stream of the session after that event:
 * every event of a stream is kept until the stream was written whole,
 * so a client that drops a call's connection loses nothing: the cell
 * runs on and its answer waits for the resumed stream.  DELETE ends a
 * session.
 *
 * Sessions: initialize makes one, named by Mcp-Session-Id (128 random
 * bits) in its answer and required after (400 without, 404 unknown).
 * One idle for --http-idle (no request, no stream read, no call owed)
 * ends as DELETE ends it; when HTTP_SESSIONS are open, initialize is
 * 503.  --http systemd serves the socket systemd passed (sdfd.h).
 * Each is a client of the one hub (session.h), as attach clients are:
 * they share one Python namespace, their calls queue in one order.
 * Requests of the 2026-07-28 revision need no session: each call is a
 * client of its own while it is in flight (ids of clients that share
 * nothing never meet), the other methods are answered at once.  MCP-Protocol-Version, when given, must name a
 * revision coil speaks (400).
 *
 * Safe by default: loopback unless ADDR says otherwise; Origin, when
 * present, must be a loopback origin or the bound address (403), and on
 * a loopback bind Host must be a loopback name (403: DNS rebinding); a
 * bearer token (COIL_HTTP_TOKEN, or --http-token-file: a file of its
 * owner's only) is required off loopback and, when set, everywhere
 * (401, WWW-Authenticate); bodies over --max-request get 413, headers
 * are bounded by the connection's memory (HTTP_HEADERS_MAX), a wrong
 * Content-Type 415, an Accept without JSON and SSE 406.
 *
 * Supervisor only.  Layer: a front end, beside mcp.c, whose protocol
 * (mcp-int.h) it serves.
 */
#ifndef COIL_MCP_HTTP_H
#define COIL_MCP_HTTP_H

#include "opts.h"

/* Serve until a signal ends coil or the session fails; the exit
 * status. */
int mcp_http_main(const struct coil_opts *opts);

#endif
