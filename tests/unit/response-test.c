/*
 * response-test.c - response_from_json as response_json's inverse: a
 * response with every field set, and a few with fields left empty, go
 * to a line and back to the same line and the same struct; lines of
 * the wrong shape are refused with the member named (TAP).
 */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "response.h"
#include "tap.h"
#include "util.h"

/* One of everything: exec's members, an error with all its parts, the
 * supervisor's measures, effects, and the fields of other kinds. */
static struct response *
full(void)
{
	static const char out[] = "line one\n\0nul \xc3\xa9\n";
	struct response *r = response_new(ST_ERROR);

	r->id = json_string("id-7");
	r->seq = 42;
	r->origin = ORIGIN_PERSON;
	r->has = RESP_EXEC | RESP_CELL | RESP_COST;
	r->cell = 7;
	response_set_output(r, out, sizeof out - 1);
	response_set_stderr(r, "warn\n", 5);
	response_set_result(r, "'r'", 3);
	r->error = response_error("ValueError", "bad %s", "value");
	r->error->traceback = xstrdup("Traceback...\nValueError: bad\n");
	r->error->hint = xstrdup("try again");
	r->error->line = 3;
	r->error->column = 5;
	r->display = json_pack("[{s:s, s:s}]", "type", "image/png", "path",
	    "f.png");
	r->duration_ms = 12.5;
	r->cpu_ms = 3.25;
	r->memory_peak = 1048576;
	r->effects = json_pack("[{s:s, s:s}]", "kind", "write", "path",
	    "out.txt");
	r->effects_more = 2;
	r->truncated = 100;
	r->restored = json_null();
	r->background = json_pack("{s:s, s:s}", "output", "bg", "stderr", "");
	response_warn(r, "a checkpoint could not be taken");
	response_set(r, "waited_for_cell", json_integer(6));
	return r;
}

/* An exec answer with nothing optional: no cell, result, error, cost. */
static struct response *
bare(void)
{
	struct response *r = response_new(ST_TIMEOUT);

	r->has = RESP_EXEC;
	r->duration_ms = 1000.0;
	return r;
}

/* Measured, but the memory peak unknown (null). */
static struct response *
cost_no_memory(void)
{
	struct response *r = bare();

	r->has |= RESP_COST;
	r->cpu_ms = 0.5;
	r->memory_peak = -1;
	return r;
}

/* Another op's answer: a rollback's, whose "cell" is its own field. */
static struct response *
rollback(void)
{
	struct response *r = response_new(ST_OK);

	r->id = json_integer(3);
	r->seq = 9;
	r->origin = ORIGIN_AGENT;
	response_set(r, "cell", json_integer(4));
	response_set(r, "name", json_string("before"));
	return r;
}

static struct response *
invalid(void)
{
	struct response *r = response_invalid("'code' is not a string");

	r->seq = 1;
	r->origin = ORIGIN_REPLAY;
	return r;
}

/* r's line for flags, read back and written again: the same bytes. */
static struct response *
round_trip(struct response *r, unsigned flags, const char *name)
{
	const char *a, *b;
	size_t alen, blen;
	struct response *back;
	char err[256] = "";
	json_t *o;

	a = response_text(r, flags, &alen);
	o = json_loadb(a, alen, JSON_ALLOW_NUL, NULL);
	back = response_from_json(o, err, sizeof err);
	json_decref(o);
	if (!tap_ok(back != NULL, "%s (flags %u): read back", name, flags)) {
		printf("#   %s\n", err);
		return NULL;
	}
	b = response_text(back, flags, &blen);
	tap_is_mem(b, blen, a, alen, "the same line again");
	return back;
}

static void
check_fields(void)
{
	struct response *r = full(), *b = round_trip(r, RESPONSE_SEQ,
	    "every field");

	if (b == NULL)
		goto out;
	tap_ok(b->status == ST_ERROR && b->seq == 42 &&
	    b->origin == ORIGIN_PERSON && json_equal(b->id, r->id),
	    "status, seq, origin and id");
	tap_ok(b->has == r->has && b->cell == 7, "has and cell");
	tap_is_mem(b->output, b->output_len, r->output, r->output_len,
	    "output, a NUL and UTF-8 in it");
	tap_is_mem(b->stderr_text, b->stderr_len, "warn\n", 5, "stderr");
	tap_is_mem(b->result, b->result_len, "'r'", 3, "result");
	tap_ok(b->error != NULL && strcmp(b->error->type, "ValueError") ==
	    0 && strcmp(b->error->message, "bad value") == 0 &&
	    strcmp(b->error->traceback, r->error->traceback) == 0 &&
	    strcmp(b->error->hint, "try again") == 0 && b->error->line == 3 &&
	    b->error->column == 5, "the error, all its parts");
	tap_ok(b->duration_ms == 12.5 && b->cpu_ms == 3.25 &&
	    b->memory_peak == 1048576, "the measures");
	tap_ok(json_equal(b->display, r->display) &&
	    json_equal(b->effects, r->effects) && b->effects_more == 2 &&
	    b->truncated == 100, "display and effects");
	tap_ok(json_is_null(b->restored) && json_equal(b->background,
	    r->background) && json_equal(b->warnings, r->warnings) &&
	    json_equal(b->fields, r->fields), "restored, background, "
	    "warnings and the op's fields");
out:
	response_free(b);
	response_free(r);
}

static void
check_round_trips(void)
{
	static struct response *(*const make[])(void) = { full, bare,
	    cost_no_memory, rollback, invalid };
	static const char *const names[] = { "every field", "a bare exec",
	    "cost, memory unknown", "a rollback", "an invalid request" };
	static const unsigned flags[] = { 0, RESPONSE_SEQ };
	struct response *r, *b;
	size_t i, f;

	for (i = 0; i < nitems(make); i++)
		for (f = 0; f < nitems(flags); f++) {
			r = make[i]();
			b = round_trip(r, flags[f], names[i]);
			if (b != NULL && i == 1)
				tap_ok(!(b->has & (RESP_CELL | RESP_RESULT |
				    RESP_COST)) && b->error == NULL &&
				    b->memory_peak == -1,
				    "nothing optional read as set");
			if (b != NULL && i == 3)
				tap_ok(!(b->has & (RESP_EXEC | RESP_CELL)) &&
				    json_integer_value(json_object_get(
				    b->fields, "cell")) == 4,
				    "a rollback's cell is its field");
			response_free(b);
			response_free(r);
		}
}

/* Lines no response_json writes: refused, err naming what is wrong. */
static void
check_refused(void)
{
	static const struct { const char *line, *want; } bad[] = {
		{ "[1, 2]", "'status'" },
		{ "\"ok\"", "'status'" },
		{ "{\"id\": 1}", "'status'" },
		{ "{\"status\": \"fine\"}", "'status' is not" },
		{ "{\"status\": 1}", "'status' is not" },
		{ "{\"status\": \"ok\", \"seq\": -1}", "'seq'" },
		{ "{\"status\": \"ok\", \"seq\": \"3\"}", "'seq'" },
		{ "{\"status\": \"ok\", \"origin\": \"martian\"}", "'origin'" },
		{ "{\"status\": \"ok\", \"error\": \"boom\"}", "'error'" },
		{ "{\"status\": \"ok\", \"error\": {\"type\": \"E\"}}",
		    "'error'" },
		{ "{\"status\": \"ok\", \"error\": {\"type\": 1, "
		    "\"message\": \"m\"}}", "'error'" },
		{ "{\"status\": \"ok\", \"warnings\": [1]}", "'warnings'" },
		{ "{\"status\": \"ok\", \"warnings\": \"w\"}", "'warnings'" },
		{ "{\"status\": \"ok\", \"background\": []}", "'background'" },
		{ "{\"status\": \"ok\", \"output\": 5}", "'output'" },
		{ "{\"status\": \"ok\", \"output\": \"\", \"stderr\": null}",
		    "'stderr'" },
		{ "{\"status\": \"ok\", \"output\": \"\", \"result\": 1}",
		    "'result'" },
		{ "{\"status\": \"ok\", \"output\": \"\", \"cell\": \"7\"}",
		    "'cell'" },
		{ "{\"status\": \"ok\", \"output\": \"\", "
		    "\"cell\": 99999999999}", "'cell'" },
		{ "{\"status\": \"ok\", \"output\": \"\", \"display\": {}}",
		    "'display'" },
		{ "{\"status\": \"ok\", \"output\": \"\", "
		    "\"duration_ms\": \"1\"}", "'duration_ms'" },
		{ "{\"status\": \"ok\", \"output\": \"\", \"cpu_ms\": true}",
		    "'cpu_ms'" },
		{ "{\"status\": \"ok\", \"output\": \"\", "
		    "\"memory_peak\": -5}", "'memory_peak'" },
		{ "{\"status\": \"ok\", \"output\": \"\", "
		    "\"memory_peak\": 1.5}", "'memory_peak'" },
		{ "{\"status\": \"ok\", \"output\": \"\", \"effects\": {}}",
		    "'effects'" },
		{ "{\"status\": \"ok\", \"output\": \"\", "
		    "\"effects_more\": -1}", "'effects_more'" },
		{ "{\"status\": \"ok\", \"output\": \"\", "
		    "\"truncated\": null}", "'truncated'" },
	};
	struct response *r;
	char err[256];
	json_t *o;
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		err[0] = '\0';
		o = json_loads(bad[i].line, JSON_DECODE_ANY, NULL);
		r = response_from_json(o, err, sizeof err);
		if (!tap_ok(r == NULL && strstr(err, bad[i].want) != NULL,
		    "refused: %s", bad[i].line))
			printf("#   error '%s'\n", err);
		response_free(r);
		json_decref(o);
	}
	err[0] = '\0';
	tap_ok(response_from_json(NULL, err, sizeof err) == NULL &&
	    err[0] != '\0', "refused: no object at all");
}

/* What is not exec's own in another op's answer is that op's field. */
static void
check_not_exec(void)
{
	json_t *o = json_loads("{\"id\": 1, \"status\": \"ok\", \"result\": "
	    "5, \"duration_ms\": \"x\", \"vars\": []}", 0, NULL);
	char err[256];
	struct response *r = response_from_json(o, err, sizeof err);

	tap_ok(r != NULL && r->has == 0 && json_object_size(r->fields) == 3 &&
	    json_is_array(json_object_get(r->fields, "vars")),
	    "result and duration_ms of a non-exec answer are its fields");
	response_free(r);
	json_decref(o);
}

int
main(void)
{
	check_fields();
	check_round_trips();
	check_refused();
	check_not_exec();
	return tap_done();
}
