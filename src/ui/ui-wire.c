/*
 * ui-wire.c - one line of an attach socket (listen.c's protocol) read
 * into the structs the in-process session hands the UI (see ui-int.h):
 * an event line into a struct session_event, as session_event_json
 * wrote it, an answer line into a struct response (response_from_json),
 * a history line into its cell's EV_QUEUED and answer, a "figures"
 * line (the bytes of a history cell's figures, which our hello asked
 * for) into figs.  An answer's "figure_data" goes to its figs, not to
 * its members.  The model
 * (ui-model.c) then reads one kind of event whichever back end it came
 * from, and no JSON of the line's but what the structs hold as JSON (a
 * request, an op's fields, an event's info).
 *
 * The line is the session's word (peer.h checked who serves the
 * socket), read as untrusted all the same: a member the structs type
 * that has the wrong type makes the line an error, said to the caller;
 * nothing is guessed.  Supervisor only (the attaching coil).
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "figure.h"
#include "ui-int.h"

/* The longest a cell can have run, in ms: a year. */
#define UI_WIRE_MAX_MS ((json_int_t)366 * 24 * 3600 * 1000)
/* base64 (RFC 4648, no line breaks, padded) into a new buffer of *n
 * bytes (a NUL after them); NULL when s is no such text. */
static char *
ui_wire_unbase64(const char *s, size_t len, size_t *n)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"
	    "rstuvwxyz0123456789+/";
	const char *c;
	char *out;
	size_t i, k = 0;
	unsigned v = 0, bits = 0, pad = 0;

	if (len % 4 != 0)
		return NULL;
	out = xmalloc(len / 4 * 3 + 1);
	for (i = 0; i < len; i++) {
		if (s[i] == '=' && i + 2 >= len && (i + 1 == len ||
		    s[i + 1] == '=')) {
			pad++;
			continue;
		}
		c = s[i] != '\0' ? strchr(al, s[i]) : NULL;
		if (c == NULL || pad > 0) {
			free(out);
			return NULL;
		}
		v = (v << 6) | (unsigned)(c - al);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (char)(v >> bits);
			v &= (1U << bits) - 1;
		}
	}
	out[k] = '\0';
	*n = k;
	return out;
}

/* A "figure_data" array (session_figures_json's) into w->figs: each
 * {"at", "base64"}, at rising, the bytes FIGURE_REPLY_MAX in all. */
static int
ui_wire_figs(struct ui_wire *w, json_t *a, char *err, size_t len)
{
	json_t *o, *at, *b;
	size_t i, sum = 0;
	struct figure *f;

	if (a == NULL)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 4096)
		return err_set(err, len, "its 'figure_data' is not a list");
	w->figs = xcalloc(json_array_size(a) + 1, sizeof *w->figs);
	json_array_foreach(a, i, o) {
		at = json_object_get(o, "at");
		b = json_object_get(o, "base64");
		if (!json_is_integer(at) || json_integer_value(at) < 0 ||
		    (w->nfigs > 0 && (json_int_t)w->figs[w->nfigs - 1].at >=
		    json_integer_value(at)) || !json_is_string(b) ||
		    json_string_length(b) / 4 * 3 > FIGURE_REPLY_MAX - sum)
			return err_set(err, len, "its 'figure_data' has an "
			    "entry that is not a figure's");
		f = &w->figs[w->nfigs];
		f->at = (size_t)json_integer_value(at);
		f->p = ui_wire_unbase64(json_string_value(b),
		    json_string_length(b), &f->len);
		if (f->p == NULL)
			return err_set(err, len, "its 'figure_data' has bytes "
			    "that are not base64");
		sum += f->len;
		w->nfigs++;
	}
	return 0;
}

/* The members of an event line that go to ev's own fields; the rest
 * are its info, as the session had them. */
static void
ui_wire_info(struct ui_wire *w, const char *const *taken, size_t n)
{
	size_t i;

	w->info = json_copy(w->line);
	for (i = 0; i < n; i++)
		if (taken[i] != NULL)
			json_object_del(w->info, taken[i]);
	if (json_object_size(w->info) == 0) {
		json_decref(w->info);
		w->info = NULL;
	}
	w->ev.info = w->info;
}

/* seq alone (a "figures" line's) */
static int
ui_wire_envelope_seq(struct ui_wire *w, char *err, size_t len)
{
	json_t *seq = json_object_get(w->line, "seq");

	if (!json_is_integer(seq) || json_integer_value(seq) <= 0)
		return err_set(err, len, "its 'seq' is not a count");
	w->ev.seq = (uint64_t)json_integer_value(seq);
	return 0;
}

/* seq, and with it the request's id and origin, and its client's name
 * when it has one (session_event_json writes them when seq is not
 * 0); the branch, when not main. */
static int
ui_wire_envelope(struct ui_wire *w, char *err, size_t len)
{
	json_t *seq = json_object_get(w->line, "seq");
	json_t *origin = json_object_get(w->line, "origin");
	json_t *by = json_object_get(w->line, "by");
	json_t *sess = json_object_get(w->line, "session");
	const char *name = json_string_value(origin);
	int i;

	/* the branch it happened in, whatever the event (absent: main) */
	if (sess != NULL && (!json_is_string(sess) ||
	    json_string_length(sess) == 0 || json_string_length(sess) >
	    UI_SESSION_MAX))
		return err_set(err, len, "its 'session' is not a branch's "
		    "name");
	w->ev.session = json_string_value(sess);
	if (seq == NULL)
		return 0;
	if (by != NULL && (!json_is_string(by) || json_string_length(by) ==
	    0 || json_string_length(by) > 4 * REQUEST_LABEL_MAX))
		return err_set(err, len, "its 'by' is not a client's name");
	w->ev.by = json_string_value(by);
	if (!json_is_integer(seq) || json_integer_value(seq) < 0)
		return err_set(err, len, "its 'seq' is not a count");
	w->ev.seq = (uint64_t)json_integer_value(seq);
	w->ev.id = json_object_get(w->line, "id");
	for (i = 0; name != NULL && i <= ORIGIN_REPLAY; i++)
		if (strcmp(origin_names[i], name) == 0)
			break;
	if (name == NULL || i > ORIGIN_REPLAY)
		return err_set(err, len, "its 'origin' is not agent, person "
		    "or replay");
	w->ev.origin = (enum origin)i;
	return 0;
}

/* The response in member key, read into w->resp. */
static int
ui_wire_response(struct ui_wire *w, json_t *v, char *err, size_t len)
{
	json_t *figs = json_incref(json_object_get(v, "figure_data"));
	char why[200];
	int rc = 0;

	/* the figures' bytes go to the response's figs, not its members */
	json_object_del(v, "figure_data");
	w->resp = response_from_json(v, why, sizeof why);
	if (w->resp == NULL)
		rc = err_set(err, len, "%s", why);
	else if (ui_wire_figs(w, figs, err, len) == 0) {
		w->resp->figs = w->figs;
		w->resp->nfigs = w->nfigs;
		w->figs = NULL;
		w->nfigs = 0;
		w->ev.resp = w->resp;
	} else
		rc = -1;
	json_decref(figs);
	return rc;
}

/* The members of event kind's own: what session_event_json wrote
 * from ev's fields. */
static int
ui_wire_fields(struct ui_wire *w, char *err, size_t len)
{
	const char *stream;
	json_t *v;

	switch (w->ev.kind) {
	case EV_STARTED:
		v = json_object_get(w->line, "cell");
		if (v != NULL && (!json_is_integer(v) ||
		    json_integer_value(v) < 0 || json_integer_value(v) >
		    INT_MAX))
			return err_set(err, len, "its 'cell' is not a cell's "
			    "number");
		w->ev.cell = (int)json_integer_value(v);
		/* how long it ran before we came: left in info */
		v = json_object_get(w->line, "elapsed_ms");
		if (v != NULL && (!json_is_integer(v) ||
		    json_integer_value(v) < 0 || json_integer_value(v) >
		    UI_WIRE_MAX_MS))
			return err_set(err, len, "its 'elapsed_ms' is not a "
			    "time");
		return 0;
	case EV_QUEUED:
		w->ev.req = json_object_get(w->line, "request");
		return json_is_object(w->ev.req) ? 0 : err_set(err, len,
		    "its 'request' is not an object");
	case EV_OUTPUT:
	case EV_BACKGROUND:
		v = json_object_get(w->line, "data");
		if (!json_is_string(v))
			return err_set(err, len, "its 'data' is not a string");
		stream = json_string_value(json_object_get(w->line,
		    "stream"));
		w->ev.stream = stream != NULL && strcmp(stream, "stderr") ==
		    0 ? 2 : 1;
		w->ev.text = w->ev.data = json_string_value(v);
		w->ev.text_len = w->ev.len = json_string_length(v);
		return 0;
	case EV_RESPONSE:
		return ui_wire_response(w, json_object_get(w->line,
		    "response"), err, len);
	default:
		return 0;
	}
}

/* An event line of a known kind. */
static int
ui_wire_event(struct ui_wire *w, char *err, size_t len)
{
	/* what each kind's fields took, beyond "event" and the envelope */
	static const char *const own[][2] = {
		[EV_STARTED] = { "cell", NULL }, [EV_QUEUED] = { "request" },
		[EV_OUTPUT] = { "stream", "data" },
		[EV_BACKGROUND] = { "stream", "data" },
		[EV_RESPONSE] = { "response" },
	};
	const char *taken[8] = { "event", "session" };

	if (ui_wire_envelope(w, err, len) == -1 ||
	    ui_wire_fields(w, err, len) == -1)
		return -1;
	if (w->ev.seq > 0) {
		taken[2] = "seq";
		taken[3] = "id";
		taken[4] = "origin";
		taken[5] = "by";
	}
	if ((size_t)w->ev.kind < nitems(own)) {
		taken[6] = own[w->ev.kind][0];
		taken[7] = own[w->ev.kind][1];
	}
	ui_wire_info(w, taken, nitems(taken));
	return 0;
}

/* listen.c's history line: a finished cell's request and answer. */
static int
ui_wire_history(struct ui_wire *w, char *err, size_t len)
{
	json_t *resp = json_object_get(w->line, "response");

	w->kind = UW_HISTORY;
	w->ev.kind = EV_QUEUED;
	w->order = json_object_get(w->line, "order");
	if (ui_wire_envelope(w, err, len) == -1 ||
	    ui_wire_fields(w, err, len) == -1)
		return -1;
	return resp == NULL ? 0 : ui_wire_response(w, resp, err, len);
}

/* A line without "event": the answer to a request of ours. */
static int
ui_wire_answer(struct ui_wire *w, char *err, size_t len)
{
	w->kind = UW_ANSWER;
	w->ev.kind = EV_RESPONSE;
	if (ui_wire_response(w, w->line, err, len) == -1)
		return -1;
	w->ev.seq = w->resp->seq;
	w->ev.id = w->resp->id;
	w->ev.origin = w->resp->origin;
	return 0;
}

/* Which line name's is, and so how it is read. */
static int
ui_wire_kind(struct ui_wire *w, const char *name, char *err, size_t len)
{
	int k;

	if (strcmp(name, "end") == 0 || strcmp(name, "refused") == 0) {
		w->kind = UW_END;
		w->why = json_string_value(json_object_get(w->line,
		    strcmp(name, "end") == 0 ? "reason" : "message"));
		if (w->why == NULL)
			w->why = name;
		return 0;
	}
	if (strcmp(name, "history") == 0)
		return ui_wire_history(w, err, len);
	if (strcmp(name, "figures") == 0) {
		w->kind = UW_FIGURES;
		if (ui_wire_envelope_seq(w, err, len) == -1)
			return -1;
		return ui_wire_figs(w, json_object_get(w->line,
		    "figure_data"), err, len);
	}
	for (k = EV_QUEUED; k <= EV_ANSWERED; k++)
		if (strcmp(session_ev_names[k], name) == 0)
			break;
	if (k > EV_ANSWERED) {
		w->kind = UW_OTHER;
		return 0;
	}
	w->kind = UW_EVENT;
	w->ev.kind = (enum session_ev)k;
	return ui_wire_event(w, err, len);
}

int
ui_wire_read(struct ui_wire *w, const char *p, size_t n, char *err,
    size_t len)
{
	json_t *name;
	int rc;

	memset(w, 0, sizeof *w);
	w->line = json_loadb(p, n, JSON_ALLOW_NUL, NULL);
	name = json_object_get(w->line, "event");
	if (!json_is_object(w->line))
		rc = err_set(err, len, "it is not a JSON object");
	else if (name == NULL)
		rc = ui_wire_answer(w, err, len);
	else if (!json_is_string(name))
		rc = err_set(err, len, "its 'event' is not a string");
	else
		rc = ui_wire_kind(w, json_string_value(name), err, len);
	if (rc == -1)
		ui_wire_free(w);
	return rc;
}

void
ui_wire_free(struct ui_wire *w)
{
	response_free(w->resp);
	figure_free(w->figs, w->nfigs);
	json_decref(w->info);
	json_decref(w->line);
	memset(w, 0, sizeof *w);
}
