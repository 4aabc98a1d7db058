/*
 * jsonline.h - one line of JSON from a client, read as forgivingly as
 * its meaning allows.  Two things are valid JSON, or what JSON.stringify
 * writes, yet jansson refuses them: an escaped lone surrogate ("\ud800"
 * with no low half after it: JSON.stringify writes one for a JavaScript
 * string cut inside a pair) and an integer beyond 64 bits.  The agent
 * protocol and the MCP server read every line through jsonline_load, so
 * that both take the same lines the same way.
 *
 * Supervisor side.  Pure logic, no I/O.
 */
#ifndef COIL_JSONLINE_H
#define COIL_JSONLINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * json_loadb(line, len, flags, err), and when it fails, once more on a
 * copy of the line where
 *  - an escaped lone surrogate keeps its escape as text: "\ud800" reads
 *    as the six characters \ud800 (in a Python string literal, which is
 *    where code holds one, that is the very string the client meant);
 *  - an integer too big for 64 bits reads as a real (".0" added), so
 *    that a field's checks say it is out of bounds.
 * When the copy fails too, err is the first attempt's, so that its
 * column is the client's.  New reference, or NULL.
 */
json_t *jsonline_load(const char *line, size_t len, size_t flags,
    json_error_t *err);

/* Whether the text at p (n bytes, no more read) starts with a JSON
 * integer literal beyond what a json_int_t holds; *end, if not NULL,
 * gets its length. */
bool jsonline_big_int(const char *p, size_t n, size_t *end);

#endif
