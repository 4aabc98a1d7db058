/*
 * session-answer.c - an answer's parts (see session-int.h): an exec
 * response from the captured streams and the worker's reply, its lists,
 * texts and errors capped and the cut said, the worker's answer to the
 * other ops checked for type.
 *
 * A reply's fields are the worker's word about its own request (link.h):
 * they go into that request's answer, checked for type, and nowhere else.
 *
 * Layer: an answer's parts, under the run's answer (session-reply.c) and
 * the checkpoint policy.  Calls down into the costs (session-cost.c) and
 * reads the captured streams; posts nothing itself.
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "sandbox.h"
#include "session-int.h"

enum status
session_status_of(json_t *reply)
{
	const char *st = json_string_value(json_object_get(reply, "status"));

	if (st != NULL && strcmp(st, "ok") == 0)
		return ST_OK;
	if (st != NULL && strcmp(st, "incomplete") == 0)
		return ST_INCOMPLETE;
	return ST_ERROR;
}

/* Say in resp what was cut of one of its fields: truncated sums the
 * bytes of every marker, cut has each field's {lines, bytes}. */
static void
session_count_cut(struct response *resp, const char *field,
    const struct outbuf_cut *cut)
{
	json_t *all;

	if (cut->bytes == 0)
		return;
	resp->truncated += cut->bytes;
	if ((all = json_object_get(resp->fields, "cut")) == NULL) {
		all = json_object();
		response_set(resp, "cut", all);
	}
	json_object_set_new(all, field, json_pack("{s:I, s:I}", "lines",
	    (json_int_t)cut->lines, "bytes", (json_int_t)cut->bytes));
}

/* The warnings of an exec reply kept; SESSION_LIST_MAX for the rest
 * (session-int.h). */
#define SESSION_WARNINGS_MAX 100
/* A count of the worker's beyond which it is not believed. */
#define SESSION_MORE_MAX ((json_int_t)1 << 40)

/* What the worker says it left out of reply's list key ("<key>_more"),
 * or 0 when it says nothing believable. */
static unsigned long long
session_more_of(json_t *reply, const char *key)
{
	/* a key of 64 bytes and "_more", as in session_worker_answer */
	char name[80];
	json_t *v;

	snprintf(name, sizeof name, "%s_more", key);
	v = json_object_get(reply, name);
	return json_is_integer(v) && json_integer_value(v) > 0 &&
	    json_integer_value(v) < SESSION_MORE_MAX ?
	    (unsigned long long)json_integer_value(v) : 0;
}

/* The first max entries of list (a new reference); *more gets how many
 * were left out, plus what the reply says it left out before. */
json_t *
session_cap_list(json_t *reply, const char *key, json_t *list, size_t max,
    unsigned long long *more)
{
	size_t n = json_array_size(list), i;
	json_t *kept;

	*more = session_more_of(reply, key);
	if (n <= max)
		return json_incref(list);
	kept = json_array();
	for (i = 0; i < max; i++)
		json_array_append(kept, json_array_get(list, i));
	*more += n - max;
	return kept;
}

/* Whether key names a count of a list's ("<list>_more"): it is passed
 * on only with its list, as session_cap_list counts it, and a count
 * without a list is not passed on at all. */
static bool
session_is_more(const char *key)
{
	size_t n = strlen(key);

	return n > 5 && strcmp(key + n - 5, "_more") == 0;
}

/* Whether a display entry has the shape coil(1) promises (and MCP's
 * outputSchema states, which clients check): an object whose texts are
 * strings and whose sizes are whole numbers.  A cell can put anything
 * in the worker's list; what is not such an entry is not passed on. */
static bool
session_display_ok(json_t *e)
{
	static const char *const texts[] = { "type", "path", "text", "note" };
	static const char *const ints[] = { "bytes", "width", "height" };
	json_t *v;
	size_t i;

	if (!json_is_object(e))
		return false;
	for (i = 0; i < nitems(texts); i++)
		if ((v = json_object_get(e, texts[i])) != NULL &&
		    !json_is_string(v))
			return false;
	for (i = 0; i < nitems(ints); i++)
		if ((v = json_object_get(e, ints[i])) != NULL &&
		    (!json_is_integer(v) || json_integer_value(v) < 0))
			return false;
	return true;
}

/* The exec reply's display list with each entry not so shaped put in
 * a note's place (a new reference): the figures name entries by their
 * index, so none moves.  A warning says how many there were. */
static json_t *
session_display_shaped(json_t *list, struct response *resp)
{
	json_t *kept, *e;
	size_t i, bad = 0;
	char msg[160];

	json_array_foreach(list, i, e)
		if (!session_display_ok(e))
			bad++;
	if (bad == 0)
		return json_incref(list);
	kept = json_array();
	json_array_foreach(list, i, e)
		json_array_append_new(kept, session_display_ok(e) ?
		    json_incref(e) : json_pack("{s:s}", "note", "not a "
		    "display entry (an object of texts and sizes): left out"));
	snprintf(msg, sizeof msg, "%zu of the cell's display entries were "
	    "not objects of texts and sizes, and are left out", bad);
	response_warn(resp, msg);
	return kept;
}

/* The exec reply's display list into resp, capped; a warning says how
 * many objects the cell showed. */
static void
session_take_display(json_t *reply, struct response *resp)
{
	json_t *v = reply != NULL ? json_object_get(reply, "display") : NULL;
	json_t *capped;
	unsigned long long more;
	char msg[160];

	if (!json_is_array(v)) {
		resp->display = json_array();
		return;
	}
	capped = session_cap_list(reply, "display", v, SESSION_LIST_MAX,
	    &more);
	resp->display = session_display_shaped(capped, resp);
	json_decref(capped);
	if (more == 0)
		return;
	snprintf(msg, sizeof msg, "the cell showed %llu objects; the first "
	    "%zu are in \"display\"", more + json_array_size(resp->display),
	    json_array_size(resp->display));
	response_warn(resp, msg);
}

/* The exec reply's warnings into resp, the first SESSION_WARNINGS_MAX
 * of them and a count of the rest. */
static void
session_take_warnings(json_t *reply, struct response *resp)
{
	json_t *v = reply != NULL ? json_object_get(reply, "warnings") : NULL;
	unsigned long long more = session_more_of(reply, "warnings");
	size_t i;
	char msg[96];

	for (i = 0; i < json_array_size(v); i++) {
		if (i >= SESSION_WARNINGS_MAX) {
			more += json_array_size(v) - i;
			break;
		}
		if (json_is_string(json_array_get(v, i)))
			response_warn(resp, json_string_value(
			    json_array_get(v, i)));
	}
	if (more == 0)
		return;
	snprintf(msg, sizeof msg, "%llu more warnings of the cell's were "
	    "left out", more);
	response_warn(resp, msg);
}

/* What the worker cut of a text before sending it (worker.py's _cut):
 * [bytes, lines], or nothing. Its word about its own text: the marker
 * then counts it, so a wrong word only makes its own answer wrong. */
static void
session_pre_cut(json_t *v, struct outbuf_cut *pre)
{
	json_t *b = json_array_get(v, 0), *l = json_array_get(v, 1);

	pre->bytes = pre->lines = 0;
	if (json_is_integer(b) && json_integer_value(b) > 0)
		pre->bytes = (unsigned long long)json_integer_value(b);
	if (json_is_integer(l) && json_integer_value(l) > 0)
		pre->lines = (unsigned long long)json_integer_value(l);
}

/* A text from the worker within allow bytes, into a new string
 * (caller frees); pre is its own {key}_cut, the cut counted as field. */
static char *
session_cap_text(struct response *resp, const char *field, const char *p,
    size_t n, json_t *pre, size_t allow, size_t *len)
{
	struct outbuf_cut before, cut;
	char *text;

	session_pre_cut(pre, &before);
	text = utf8_cap(p, n, allow, &before, len, &cut);
	session_count_cut(resp, field, &cut);
	return text;
}

/*
 * An answer's budget.  max_output (the cell's, else --max-output) is
 * for the whole answer: its texts share it in the order a model needs
 * them, the error's message and traceback, the result, the output,
 * stderr, then display's texts, each text/plain before any other kind.
 * Half the budget goes evenly to the texts that have any, so that no
 * text is squeezed to its marker by those before it (a long traceback
 * leaves the output its share); the rest goes down that order, each
 * text taking what it still lacks.  A text over its allowance keeps its
 * head and tail around the marker outbuf.h writes, and "cut" says how
 * much under the field's name ("display[2]" for display's third entry).
 * The budget counts the texts' bytes; markers and the answer's other
 * fields (numbers, paths, effects) come on top.
 */
enum { PART_MESSAGE, PART_TRACEBACK, PART_RESULT, PART_OUTPUT, PART_STDERR,
    PART_DISPLAY };

/* allow[i], how much of len[i] bytes each of n texts keeps in budget. */
static void
session_share(const size_t *len, size_t *allow, size_t n, size_t budget)
{
	size_t i, used = 0, share, have = 0, more;

	for (i = 0; i < n; i++) {
		used += len[i];
		have += len[i] > 0;
	}
	if (used <= budget) {
		memcpy(allow, len, n * sizeof *len);
		return;
	}
	share = budget / 2 / have;
	for (used = 0, i = 0; i < n; i++) {
		allow[i] = len[i] < share ? len[i] : share;
		used += allow[i];
	}
	for (i = 0; i < n && used < budget; i++) {
		more = len[i] - allow[i];
		if (more > budget - used)
			more = budget - used;
		allow[i] += more;
		used += more;
	}
}

/* A display entry's text, or NULL. */
static json_t *
session_entry_text(json_t *entry)
{
	json_t *t = json_object_get(entry, "text");

	return json_is_string(t) ? t : NULL;
}

/* Whether a display entry is text/plain. */
static bool
session_entry_plain(json_t *entry)
{
	const char *type = json_string_value(json_object_get(entry, "type"));

	return type != NULL && strcmp(type, "text/plain") == 0;
}

/* The texts' lengths in budget order into len (PART_DISPLAY + entries
 * of display), and at[k] the display index of text PART_DISPLAY + k. */
static void
session_lengths(struct session *s, json_t *reply, struct response *resp,
    json_t *err, size_t *len, size_t *at)
{
	json_t *v = json_object_get(reply, "result"), *e;
	size_t i, k = 0;
	int pass;

	memset(len, 0, PART_DISPLAY * sizeof *len);
	if (err != NULL) {
		len[PART_MESSAGE] = strlen(resp->error->message);
		if (resp->error->traceback != NULL)
			len[PART_TRACEBACK] = strlen(resp->error->traceback);
	}
	if (json_is_string(v))
		len[PART_RESULT] = json_string_length(v);
	len[PART_OUTPUT] = s->ob_out.head_len + s->ob_out.tail_len;
	len[PART_STDERR] = s->ob_err.head_len + s->ob_err.tail_len;
	for (pass = 0; pass < 2; pass++)
		json_array_foreach(resp->display, i, e) {
			if (session_entry_plain(e) != (pass == 0))
				continue;
			v = session_entry_text(e);
			at[k] = i;
			len[PART_DISPLAY + k++] = v != NULL ?
			    json_string_length(v) : 0;
		}
}

/* Display's texts within their allowances (allow[PART_DISPLAY + k] for
 * entry at[k]), into a new list: the worker's own count of what it cut
 * before sending ("text_cut", as a result's) goes into the marker and
 * is not passed on. */
static void
session_cap_display(struct response *resp, const size_t *allow,
    const size_t *at)
{
	size_t i, n = json_array_size(resp->display), len;
	json_t *list = json_array(), *e, *t, *copy;
	char field[40], *text;

	for (i = 0; i < n; i++)
		json_array_append_new(list, json_null());
	for (i = 0; i < n; i++) {
		e = json_array_get(resp->display, at[i]);
		t = session_entry_text(e);
		if (t == NULL && json_object_get(e, "text_cut") == NULL) {
			json_array_set(list, at[i], e);
			continue;
		}
		copy = json_copy(e);
		json_object_del(copy, "text_cut");
		if (t != NULL) {
			snprintf(field, sizeof field, "display[%zu]", at[i]);
			text = session_cap_text(resp, field,
			    json_string_value(t), json_string_length(t),
			    json_object_get(e, "text_cut"),
			    allow[PART_DISPLAY + i], &len);
			json_object_set_new(copy, "text",
			    json_stringn(text, len));
			free(text);
		}
		json_array_set_new(list, at[i], copy);
	}
	json_decref(resp->display);
	resp->display = list;
}

/* One captured stream into *text (caller frees), within allow bytes;
 * what was left out counted as field. */
static char *
session_take_stream(struct response *resp, const char *field,
    const struct outbuf *ob, size_t allow, size_t *len)
{
	struct outbuf_cut cut;
	char *text;

	text = outbuf_render_cap(ob, allow, len, &cut);
	session_count_cut(resp, field, &cut);
	return text;
}

/* The captured streams into resp, each within its allowance. */
static void
session_take_streams(struct session *s, struct response *resp,
    const size_t *allow)
{
	char *text;
	size_t len;

	text = session_take_stream(resp, "output", &s->ob_out,
	    allow[PART_OUTPUT], &len);
	response_set_output(resp, text, len);
	free(text);
	text = session_take_stream(resp, "stderr", &s->ob_err,
	    allow[PART_STDERR], &len);
	response_set_stderr(resp, text, len);
	free(text);
	outbuf_reset(&s->ob_out);
	outbuf_reset(&s->ob_err);
}

/* The reply's result, within allow bytes. */
static void
session_take_result(json_t *reply, struct response *resp, size_t allow)
{
	json_t *v = json_object_get(reply, "result");
	char *text;
	size_t len;

	if (!json_is_string(v))
		return;
	text = session_cap_text(resp, "result", json_string_value(v),
	    json_string_length(v), json_object_get(reply, "result_cut"), allow,
	    &len);
	response_set_result(resp, text, len);
	free(text);
}

/* The worker's error (err, read into e) with its message and traceback
 * within their allowances: a message can be as long as the exception
 * made it. A NUL ends e's strings (response_error_from_json), so strlen
 * is what the response shows. */
static void
session_cap_error(json_t *err, struct response_error *e,
    struct response *resp, const size_t *allow)
{
	char *text;

	text = session_cap_text(resp, "message", e->message,
	    strlen(e->message), json_object_get(err, "message_cut"),
	    allow[PART_MESSAGE], NULL);
	free(e->message);
	e->message = text;
	if (e->traceback == NULL)
		return;
	text = session_cap_text(resp, "traceback", e->traceback,
	    strlen(e->traceback), json_object_get(err, "traceback_cut"),
	    allow[PART_TRACEBACK], NULL);
	free(e->traceback);
	e->traceback = text;
}

/* The worker's list of what the cell touched (effects.py's Effects), as
 * far as it is believable: at most EFFECTS_MAX objects, each with a
 * known kind and short strings; anything else in it is dropped and
 * counted with the rest. */
#define EFFECTS_MAX 20
#define EFFECT_TEXT_MAX 1024

static bool
effect_ok(json_t *e)
{
	static const char *const kinds[] = { "create", "write", "delete",
	    "rename", "process", "connect" };
	static const char *const texts[] = { "path", "to", "cmd" };
	const char *kind = json_string_value(json_object_get(e, "kind"));
	const char *key;
	json_t *v;
	size_t i;

	if (kind == NULL)
		return false;
	for (i = 0; i < nitems(kinds) && strcmp(kind, kinds[i]) != 0; i++)
		;
	if (i == nitems(kinds))
		return false;
	json_object_foreach(e, key, v) {
		if (strcmp(key, "kind") == 0)
			continue;
		if (strcmp(key, "denied") == 0) {
			if (!json_is_true(v))
				return false;
			continue;
		}
		for (i = 0; i < nitems(texts) && strcmp(key, texts[i]) != 0;
		    i++)
			;
		if (i == nitems(texts) || !json_is_string(v) ||
		    json_string_length(v) > EFFECT_TEXT_MAX ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return false;
	}
	return true;
}

static void
session_take_effects(json_t *reply, struct response *resp)
{
	json_t *list = json_object_get(reply, "effects");
	json_t *more = json_object_get(reply, "effects_more");
	json_t *e;
	size_t i;

	json_array_foreach(list, i, e) {
		if (json_array_size(resp->effects) < EFFECTS_MAX &&
		    effect_ok(e)) {
			if (resp->effects == NULL)
				resp->effects = json_array();
			json_array_append(resp->effects, e);
		} else {
			resp->effects_more++;
		}
	}
	if (json_is_integer(more) && json_integer_value(more) > 0 &&
	    json_integer_value(more) < (json_int_t)1 << 40)
		resp->effects_more += (unsigned long long)
		    json_integer_value(more);
}

/* The texts of an exec response (err: the reply's error, read into
 * resp->error, or NULL) within the answer's budget. */
static void
session_take_texts(struct session *s, json_t *reply, struct response *resp,
    json_t *err)
{
	size_t n = PART_DISPLAY + json_array_size(resp->display);
	/* one block on every answer's path: each part's length, what it
	 * may keep, where it starts */
	size_t *len = xcalloc(3 * n, sizeof *len), *allow = len + n,
	    *at = len + 2 * n;

	session_lengths(s, reply, resp, err, len, at);
	session_share(len, allow, n, s->ob_out.cap);
	if (err != NULL)
		session_cap_error(err, resp->error, resp, allow);
	if (reply != NULL)
		session_take_result(reply, resp, allow[PART_RESULT]);
	session_take_streams(s, resp, allow);
	if (n > PART_DISPLAY)
		session_cap_display(resp, allow, at);
	free(len);
}

/* An exec response: the captured streams and the worker's reply (NULL
 * when the worker died); error (stolen) replaces the reply's, restored
 * (stolen) is added when not NULL. */
struct response *
session_exec_response(struct session *s, struct sreq *r, enum status status,
    json_t *reply, struct response_error *error, json_t *restored)
{
	struct response *resp = response_new(status);
	json_t *err = NULL;

	resp->has = RESP_EXEC;
	if (status != ST_INCOMPLETE)
		resp->has |= RESP_CELL;
	resp->cell = r->cell;
	if (error == NULL && reply != NULL &&
	    (error = response_error_from_json(json_object_get(reply,
	    "error"))) != NULL)
		err = json_object_get(reply, "error");
	if (error == NULL && status == ST_ERROR)
		error = response_error("ProtocolError", "the worker's answer "
		    "to cell %d carries no usable error", r->cell);
	resp->error = error;
	session_take_display(reply, resp);
	session_take_texts(s, reply, resp, err);
	resp->duration_ms = round((double)(now_ns() - r->t0) / 1e4) / 100.0;
	if (reply != NULL) {
		session_usage_end(s, r, reply);
		session_take_effects(reply, resp);
	}
	session_take_usage(s, r, reply, resp);
	resp->restored = restored;
	session_take_warnings(reply, resp);
	return resp;
}

enum status
session_stop_status(const struct sreq *r)
{
	return r->interrupted ? ST_INTERRUPTED : ST_TIMEOUT;
}

/* An answer to vars, inspect, complete or reset: the worker's fields
 * (its word about its own request) as far as they are op's and of their
 * types (session-fields.c), its error checked. */
struct response *
session_worker_answer(json_t *reply, enum op op)
{
	static const char *const internal[] = { "status", "error", "t", "seq",
	    "ran", "cpu0_ns", "cpu0_kids_ns", "cpu1_kids_ns" };
	enum status st = session_status_of(reply);
	struct response *resp = response_new(st == ST_INCOMPLETE ? ST_ERROR :
	    st);
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(reply, key, v) {
		unsigned long long more = 0;
		char name[80];

		for (i = 0; i < nitems(internal); i++)
			if (strcmp(key, internal[i]) == 0)
				break;
		if (i < nitems(internal) || session_is_more(key) ||
		    strlen(key) > 64)
			continue;
		v = json_is_array(v) ? session_cap_list(reply, key, v,
		    SESSION_LIST_MAX, &more) : json_incref(v);
		if (!session_fields_check(resp, op, key, &v)) {
			json_decref(v);
			continue;
		}
		response_set(resp, key, v);
		snprintf(name, sizeof name, "%s_more", key);
		if (more > 0)
			response_set(resp, name, json_integer(
			    (json_int_t)more));
	}
	if (resp->status == ST_ERROR) {
		resp->error = response_error_from_json(json_object_get(reply,
		    "error"));
		if (resp->error == NULL)
			resp->error = response_error("ProtocolError", "the "
			    "worker's answer carries no usable error");
	}
	return resp;
}
