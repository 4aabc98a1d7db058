/*
 * wire.c - the agent protocol's lines on a conn (see wire.h).
 *
 * Layer: the top of the session's files: calls session.h only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "util.h"
#include "wire.h"

void
wire_send(struct conn *c, json_t *msg)
{
	char *line = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(6));
	size_t n;

	json_decref(msg);
	if (line == NULL)
		fatal("cannot encode a response");
	n = strlen(line);
	line[n] = '\n';
	conn_send(c, line, n + 1);
	free(line);
}

void
wire_send_text(struct conn *c, const char *line, size_t len)
{
	conn_send(c, line, len);
}

void
wire_line(struct session *s, int client, const char *line, size_t len)
{
	char err[512];
	json_t *req, *id;
	enum op op;
	size_t i;

	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return;		/* blank lines are ignored */
	if (request_parse(line, len, &req, &id, &op, err, sizeof err) == -1) {
		session_reject(s, client, id, err);
		return;
	}
	session_submit(s, client, req, id, op);
}

void
wire_too_long(struct session *s, int client, size_t bytes, size_t max,
    const char *head, size_t headlen)
{
	json_t *id = request_head_id(head, headlen);
	char msg[200];

	snprintf(msg, sizeof msg, "the request line is %zu bytes, over the "
	    "%zu-byte limit (--max-request); it was skipped", bytes, max);
	session_reject(s, client, id != NULL ? id : json_null(), msg);
}
