/*
 * wire.h - the agent protocol's lines on a conn (conn.h): one JSON
 * object a line, written compact; a request line parsed and submitted
 * to the session, or its "invalid" answer queued there, so that every
 * answer comes in the order of the lines.  Shared by the
 * agent on stdio and the clients of the attach socket, so that both
 * speak exactly the same protocol.  Supervisor only.
 */
#ifndef COIL_WIRE_H
#define COIL_WIRE_H

#include <jansson.h>
#include <stddef.h>

#include "conn.h"
#include "session.h"

/* Queue msg (stolen) on c as one line. */
void wire_send(struct conn *c, json_t *msg);
/* A line already encoded, its newline included. */
void wire_send_text(struct conn *c, const char *line, size_t len);
/* One line from client: blank lines are ignored, a request goes to the
 * session, anything else is answered "invalid" in its turn. */
void wire_line(struct session *s, int client, const char *line,
    size_t len);
/* A line over --max-request (max) was skipped: say so in its turn. */
void wire_too_long(struct session *s, int client, size_t bytes, size_t max,
    const char *head, size_t headlen);

#endif
