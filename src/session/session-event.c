/*
 * session-event.c - a session event as a protocol line (see session.h):
 * its name and its JSON object, from the event alone, no session state.
 * Supervisor only.
 *
 * Layer: a leaf, beside response.c: the hub's history, the attach
 * sockets (listen.c) and the transcript (record.c) write events through
 * it, so that an observer needs nothing of the hub's to write one (the
 * UI reads the structs; an attached one reads the lines back into them,
 * ui-wire.c).
 */
#include "config.h"

#include <jansson.h>

#include "response.h"
#include "session.h"

const char *const session_ev_names[] = {
	[EV_QUEUED] = "queued", [EV_STARTED] = "started",
	[EV_OUTPUT] = "output", [EV_RESPONSE] = "response",
	[EV_CANCELLED] = "cancelled", [EV_BACKGROUND] = "background",
	[EV_WORKER] = "worker", [EV_CHECKPOINT] = "checkpoint",
	[EV_NAMESPACE] = "namespace", [EV_WARNING] = "warning",
	[EV_INPUT] = "input", [EV_ANSWERED] = "answered",
};

json_t *
session_event_json(const struct session_event *ev)
{
	json_t *o = json_pack("{s:s}", "event", session_ev_names[ev->kind]);

	if (ev->seq > 0) {
		json_object_set(o, "id", ev->id);
		json_object_set_new(o, "seq", json_integer((json_int_t)ev->seq));
		json_object_set_new(o, "origin",
		    json_string(origin_names[ev->origin]));
		if (ev->by != NULL)
			json_object_set_new(o, "by", json_string(ev->by));
	}
	if (ev->session != NULL)
		json_object_set_new(o, "session", json_string(ev->session));
	if (ev->kind == EV_STARTED && ev->cell > 0)
		json_object_set_new(o, "cell", json_integer(ev->cell));
	if (ev->kind == EV_QUEUED)
		json_object_set(o, "request", ev->req);
	if (ev->kind == EV_OUTPUT || ev->kind == EV_BACKGROUND) {
		json_object_set_new(o, "stream", json_string(ev->stream == 2 ?
		    "stderr" : "stdout"));
		json_object_set_new(o, "data", ev->text != NULL ?
		    json_stringn(ev->text, ev->text_len) : json_string(""));
	}
	if (ev->kind == EV_RESPONSE)
		json_object_set_new(o, "response", response_json(ev->resp,
		    RESPONSE_SEQ));
	if (ev->info != NULL)
		json_object_update_missing(o, ev->info);
	return o;
}
