/*
 * ui-wire-test.c - the attached UI reads each line of the socket into
 * the structs the in-process session hands it (src/ui/ui-wire.c): every
 * kind of event, as session_event_json writes it, is read back into a
 * struct session_event that session_event_json writes again to the same
 * line; answers, history, the end and unknown events are told apart;
 * figures' bytes are read from an answer and a "figures" line;
 * lines of the wrong shape are refused with what is wrong named (TAP).
 */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "tap.h"
#include "ui-int.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(6))

static char *
dump(json_t *o)
{
	char *s = json_dumps(o, DUMP_FLAGS | JSON_ENCODE_ANY);

	json_decref(o);
	return s;
}

/* ev's line, read, written again: the same bytes; w is left read. */
static bool
round_trip(const struct session_event *ev, struct ui_wire *w,
    const char *name)
{
	char *a = dump(session_event_json(ev)), *b = NULL, err[256] = "";
	bool ok = false;

	if (!tap_ok(ui_wire_read(w, a, strlen(a), err, sizeof err) == 0 &&
	    w->kind == UW_EVENT && w->ev.kind == ev->kind, "%s: read", name)) {
		printf("#   %s\n", err);
		goto out;
	}
	b = dump(session_event_json(&w->ev));
	ok = tap_is_mem(b, strlen(b), a, strlen(a), "the same line again");
	if (!ok)
		ui_wire_free(w);
out:
	free(a);
	free(b);
	return ok;
}

static struct response *
answer(void)
{
	struct response *r = response_new(ST_ERROR);

	r->id = json_integer(3);
	r->seq = 5;
	r->origin = ORIGIN_PERSON;
	r->has = RESP_EXEC | RESP_CELL | RESP_COST;
	r->cell = 2;
	response_set_output(r, "hi\n", 3);
	r->error = response_error("NameError", "name 'x' is not defined");
	r->duration_ms = 1.5;
	r->cpu_ms = 1.25;
	r->memory_peak = 4096;
	return r;
}

/* A request's events: the envelope and each kind's own fields. */
static void
check_request_events(void)
{
	static const char out[] = "a\0b \xc3\xa9\n";
	struct session_event ev = { .seq = 5, .origin = ORIGIN_PERSON };
	struct ui_wire w;

	ev.id = json_integer(3);
	ev.kind = EV_QUEUED;
	ev.req = json_pack("{s:s, s:s}", "op", "exec", "code", "1 + 1");
	if (round_trip(&ev, &w, "queued")) {
		tap_ok(w.ev.seq == 5 && w.ev.origin == ORIGIN_PERSON &&
		    json_equal(w.ev.id, ev.id) && json_equal(w.ev.req, ev.req)
		    && w.ev.info == NULL, "queued: seq, origin, id, request");
		ui_wire_free(&w);
	}
	json_decref(ev.req);
	ev.req = NULL;
	ev.kind = EV_STARTED;
	ev.cell = 7;
	if (round_trip(&ev, &w, "started")) {
		tap_ok(w.ev.cell == 7, "started: its cell");
		ui_wire_free(&w);
	}
	ev.kind = EV_OUTPUT;
	ev.stream = 2;
	ev.text = out;
	ev.text_len = sizeof out - 1;
	if (round_trip(&ev, &w, "output")) {
		tap_ok(w.ev.stream == 2 && w.ev.len == sizeof out - 1 &&
		    memcmp(w.ev.data, out, w.ev.len) == 0,
		    "output: stderr's bytes, a NUL in them, are its data");
		ui_wire_free(&w);
	}
	ev.text = NULL;
	ev.kind = EV_RESPONSE;
	ev.resp = answer();
	if (round_trip(&ev, &w, "response")) {
		tap_ok(w.ev.resp != NULL && w.ev.resp->status == ST_ERROR &&
		    w.ev.resp->cell == 2 && w.ev.resp->error != NULL &&
		    strcmp(w.ev.resp->error->type, "NameError") == 0,
		    "response: its struct");
		ui_wire_free(&w);
	}
	response_free(ev.resp);
	json_decref(ev.id);
}

/* Events whose fields are info's, with and without a request. */
static void
check_info_events(void)
{
	static const struct { enum session_ev kind; const char *info; } evs[] =
	{
		{ EV_CANCELLED, "{\"reason\": \"the client left\"}" },
		{ EV_WORKER, "{\"state\": \"died\", \"how\": \"killed\", "
		    "\"cell\": 3}" },
		{ EV_CHECKPOINT, "{\"state\": \"taken\", \"cell\": 3, "
		    "\"kind\": \"fork\"}" },
		{ EV_NAMESPACE, "{\"cell\": 3, \"vars\": [{\"name\": \"x\", "
		    "\"type\": \"int\", \"repr\": \"1\"}]}" },
		{ EV_WARNING, "{\"message\": \"a checkpoint failed\"}" },
		{ EV_INPUT, "{\"prompt\": \"name? \", \"page\": \"help\"}" },
		{ EV_ANSWERED, "{\"line\": null}" },
		{ EV_BACKGROUND, NULL },
	};
	struct session_event ev;
	struct ui_wire w;
	size_t i;

	for (i = 0; i < nitems(evs); i++) {
		ev = (struct session_event){ .kind = evs[i].kind,
		    .seq = i % 2 ? 0 : 9, .origin = ORIGIN_AGENT,
		    .id = json_string("x") };
		ev.info = evs[i].info != NULL ? json_loads(evs[i].info, 0,
		    NULL) : NULL;
		if (ev.kind == EV_BACKGROUND) {
			ev.text = "late\n";
			ev.text_len = 5;
		}
		if (round_trip(&ev, &w, session_ev_names[ev.kind])) {
			tap_ok((ev.info == NULL && w.ev.info == NULL) ||
			    json_equal(w.ev.info, ev.info),
			    "its info, and no more");
			ui_wire_free(&w);
		}
		json_decref(ev.info);
		json_decref(ev.id);
	}
}

static int
read_line(struct ui_wire *w, const char *line, char *err, size_t len)
{
	return ui_wire_read(w, line, strlen(line), err, len);
}

/* Lines that are not events of the session's: answers, history, the
 * end, events this UI does not know. */
static void
check_other_lines(void)
{
	struct response *r = answer();
	struct ui_wire w;
	char err[256], *line;
	size_t len;
	const char *text = response_text(r, RESPONSE_SEQ, &len);

	tap_ok(ui_wire_read(&w, text, len, err, sizeof err) == 0 &&
	    w.kind == UW_ANSWER && w.ev.kind == EV_RESPONSE &&
	    w.ev.seq == 5 && json_integer_value(w.ev.id) == 3 &&
	    w.ev.resp != NULL && w.ev.resp->cell == 2,
	    "an answer: EV_RESPONSE, seq and id its response's");
	ui_wire_free(&w);
	line = dump(json_pack("{s:s, s:I, s:s, s:i, s:{s:s, s:s}, s:o, "
	    "s:[{s:i}]}", "event", "history", "seq", (json_int_t)5, "origin",
	    "person", "id", 3, "request", "op", "exec", "code", "x",
	    "response", response_json(r, RESPONSE_SEQ), "order", "n", 3));
	tap_ok(read_line(&w, line, err, sizeof err) == 0 &&
	    w.kind == UW_HISTORY && w.ev.kind == EV_QUEUED &&
	    w.ev.seq == 5 && w.ev.origin == ORIGIN_PERSON &&
	    json_is_object(w.ev.req) && w.ev.resp != NULL &&
	    json_is_array(w.order), "history: its request, answer, order");
	ui_wire_free(&w);
	free(line);
	tap_ok(read_line(&w, "{\"event\": \"end\", \"reason\": \"shut down\"}",
	    err, sizeof err) == 0 && w.kind == UW_END &&
	    strcmp(w.why, "shut down") == 0, "the end, and why");
	ui_wire_free(&w);
	tap_ok(read_line(&w, "{\"event\": \"refused\"}", err, sizeof err) ==
	    0 && w.kind == UW_END && strcmp(w.why, "refused") == 0,
	    "refused, no reason given");
	ui_wire_free(&w);
	tap_ok(read_line(&w, "{\"event\": \"hello\", \"pid\": 1}", err,
	    sizeof err) == 0 && w.kind == UW_OTHER, "an event not known");
	ui_wire_free(&w);
	response_free(r);
}

/* r's JSON has member key. */
static bool
has_member(const struct response *r, const char *key)
{
	json_t *o = response_json(r, RESPONSE_SEQ);
	bool has = json_object_get(o, key) != NULL;

	json_decref(o);
	return has;
}

/* Figures' bytes, which a UI that asked for them in its hello gets:
 * with an answer ("figure_data" in the response, read into its figs and
 * not kept as a member) and as a history cell's "figures" line. */
static void
check_figures(void)
{
	struct ui_wire w;
	char err[256];

	tap_ok(read_line(&w, "{\"id\": 1, \"status\": \"ok\", \"seq\": 4, "
	    "\"display\": [{\"type\": \"image/png\"}], \"figure_data\": "
	    "[{\"at\": 0, \"base64\": \"iVBORw==\"}]}", err, sizeof err) ==
	    0 && w.kind == UW_ANSWER && w.resp->nfigs == 1 &&
	    w.resp->figs[0].at == 0 && w.resp->figs[0].len == 4 &&
	    memcmp(w.resp->figs[0].p, "\x89PNG", 4) == 0 &&
	    !has_member(w.resp, "figure_data"),
	    "an answer's figure_data: its figs, not a member");
	ui_wire_free(&w);
	tap_ok(read_line(&w, "{\"event\": \"figures\", \"seq\": 7, "
	    "\"figure_data\": [{\"at\": 1, \"base64\": \"YQ==\"}, "
	    "{\"at\": 3, \"base64\": \"YWI=\"}]}", err, sizeof err) == 0 &&
	    w.kind == UW_FIGURES && w.ev.seq == 7 && w.nfigs == 2 &&
	    w.figs[0].at == 1 && w.figs[0].len == 1 && w.figs[0].p[0] ==
	    'a' && w.figs[1].at == 3 && w.figs[1].len == 2 &&
	    memcmp(w.figs[1].p, "ab", 2) == 0,
	    "a figures line: the seq and each figure's bytes");
	ui_wire_free(&w);
}

/* A branch's events: its name in ev.session, whatever the kind, and
 * out of info. */
static void
check_session(void)
{
	struct session_event ev = { .kind = EV_STARTED, .seq = 4,
	    .origin = ORIGIN_AGENT, .cell = 3, .session = "b1" };
	struct ui_wire w;
	char err[256];

	ev.id = json_integer(9);
	if (round_trip(&ev, &w, "a branch's started")) {
		tap_ok(w.ev.session != NULL && strcmp(w.ev.session, "b1") ==
		    0 && json_object_get(w.info, "session") == NULL,
		    "its session in ev.session, not info");
		ui_wire_free(&w);
	}
	json_decref(ev.id);
	tap_ok(read_line(&w, "{\"event\": \"namespace\", \"session\": "
	    "\"try-a\", \"cell\": 2, \"vars\": []}", err, sizeof err) ==
	    0 && w.kind == UW_EVENT && w.ev.session != NULL &&
	    strcmp(w.ev.session, "try-a") == 0 && json_object_get(w.info,
	    "session") == NULL && json_object_get(w.info, "vars") != NULL,
	    "a branch's namespace, of no request: its session too");
	ui_wire_free(&w);
	tap_ok(read_line(&w, "{\"event\": \"started\", \"seq\": 1, "
	    "\"origin\": \"agent\"}", err, sizeof err) == 0 &&
	    w.ev.session == NULL, "main's: none");
	ui_wire_free(&w);
}

static void
check_refused(void)
{
	static const struct { const char *line, *want; } bad[] = {
		{ "not json", "not a JSON object" },
		{ "[1]", "not a JSON object" },
		{ "{\"event\": 5}", "'event'" },
		{ "{\"id\": 1}", "'status'" },
		{ "{\"id\": 1, \"status\": \"ok\", \"warnings\": 3}",
		    "'warnings'" },
		{ "{\"event\": \"queued\", \"seq\": 1, \"origin\": \"agent\"}",
		    "'request'" },
		{ "{\"event\": \"queued\", \"seq\": 1, \"origin\": \"agent\", "
		    "\"request\": \"exec\"}", "'request'" },
		{ "{\"event\": \"started\", \"seq\": \"1\"}", "'seq'" },
		{ "{\"event\": \"started\", \"seq\": 1}", "'origin'" },
		{ "{\"event\": \"started\", \"seq\": 1, \"origin\": \"x\"}",
		    "'origin'" },
		{ "{\"event\": \"started\", \"seq\": 1, \"origin\": \"agent\", "
		    "\"cell\": \"2\"}", "'cell'" },
		{ "{\"event\": \"output\", \"stream\": \"stdout\"}", "'data'" },
		{ "{\"event\": \"output\", \"data\": 1}", "'data'" },
		{ "{\"event\": \"response\"}", "'status'" },
		{ "{\"event\": \"response\", \"response\": {\"status\": "
		    "\"ok\", \"output\": 1}}", "'output'" },
		{ "{\"event\": \"history\", \"seq\": 1, \"origin\": \"agent\", "
		    "\"request\": {}, \"response\": []}", "'status'" },
		{ "{\"event\": \"figures\", \"figure_data\": []}", "'seq'" },
		{ "{\"event\": \"started\", \"seq\": 1, \"origin\": \"agent\", "
		    "\"session\": 5}", "'session'" },
		{ "{\"event\": \"namespace\", \"session\": \"\"}",
		    "'session'" },
		{ "{\"event\": \"figures\", \"seq\": 1, \"figure_data\": "
		    "{}}", "'figure_data'" },
		{ "{\"event\": \"figures\", \"seq\": 1, \"figure_data\": "
		    "[{\"at\": 1, \"base64\": \"YQ==\"}, {\"at\": 1, "
		    "\"base64\": \"YQ==\"}]}", "not a figure's" },
		{ "{\"event\": \"figures\", \"seq\": 1, \"figure_data\": "
		    "[{\"at\": 0, \"base64\": \"Y!==\"}]}", "not base64" },
		{ "{\"id\": 1, \"status\": \"ok\", \"figure_data\": "
		    "[{\"at\": -1, \"base64\": \"\"}]}", "not a figure's" },
	};
	struct ui_wire w;
	char err[256];
	size_t i;

	for (i = 0; i < nitems(bad); i++) {
		err[0] = '\0';
		if (!tap_ok(read_line(&w, bad[i].line, err, sizeof err) == -1 &&
		    strstr(err, bad[i].want) != NULL && w.line == NULL &&
		    w.resp == NULL, "refused: %s", bad[i].line))
			printf("#   error '%s'\n", err);
	}
}

int
main(void)
{
	check_request_events();
	check_info_events();
	check_other_lines();
	check_figures();
	check_session();
	check_refused();
	return tap_done();
}
