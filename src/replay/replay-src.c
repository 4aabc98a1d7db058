/*
 * replay-src.c - the file a replay reads, as cells (see replay-int.h).
 *
 * The kind is told from the content, not the name: a first line that
 * is a transcript header, a JSON object with "cells" and "nbformat", a
 * JSON list of chat messages (or an object holding "messages"), text
 * with "# %%" lines.  A transcript is streamed: one line in memory at a
 * time, and the requests still waiting for their response, so a huge
 * one replays in bounded memory.  The other kinds are small and are
 * read whole into a list of cells first.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostfs.h"
#include "record.h"
#include "replay-int.h"

const char *const rsrc_kind_names[] = {
	[RS_TRANSCRIPT] = "transcript", [RS_NOTEBOOK] = "notebook",
	[RS_PERCENT] = "# %% file", [RS_OPENAI] = "OpenAI chat log",
	[RS_ANTHROPIC] = "Anthropic chat log",
};

/* A request of the transcript still waiting for its response. */
struct rpending {
	json_int_t seq;
	int line;
	json_t *req;
	json_t *lines;		/* what its input() was given, or NULL */
};

struct rsrc {
	enum rsrc_kind kind;
	char *path;
	/* a transcript */
	FILE *f;
	char *line;
	size_t cap;
	int lineno;
	json_t *options;
	struct rpending *pending;
	size_t npending;
	char note[256];
	long long bytes;	/* read so far: where the next line begins */
	long long cut_at;	/* where a last line cut short began; -1 */
	bool unended;		/* the last line is whole, without newline */
	json_t *first;		/* the first header */
	int segment;		/* sessions --record appended, from 0 */
	json_t *pins;		/* "SEGMENT:CELL" a recorded rollback to a
				   cell number went back to: true */
	const char *pin_prefix;	/* of the pins' names: one the file never
				   holds */
	const char *unpinned;	/* why there are no pins, said when a
				   rollback to a cell number comes */
	/* the other kinds: every cell, read first */
	json_t *cells;
	size_t next;
};

/* The ops a replay runs again: those that change the namespace, and
 * the branches' (so that a cell that names one finds it). */
static bool
rsrc_replayed(const char *op)
{
	return op != NULL && (strcmp(op, "exec") == 0 ||
	    strcmp(op, "reset") == 0 || strcmp(op, "snapshot") == 0 ||
	    strcmp(op, "rollback") == 0 || strcmp(op, "fork") == 0 ||
	    strcmp(op, "close") == 0 || strcmp(op, "adopt") == 0);
}

/* How long after it started the cell was interrupted (an interrupt op,
 * a person's Ctrl-C): its duration; -1 when it was not. */
static double
rsrc_interrupted(json_t *resp)
{
	const char *st = json_string_value(json_object_get(resp, "status"));
	json_t *d = json_object_get(resp, "duration_ms");

	if (st == NULL || strcmp(st, "interrupted") != 0)
		return -1;
	return json_is_number(d) && json_number_value(d) > 0 ?
	    json_number_value(d) : 0;
}

/* An answer of code that was never run. */
static bool
rsrc_never_ran(json_t *resp)
{
	const char *st = json_string_value(json_object_get(resp, "status"));

	return st != NULL && strcmp(st, "incomplete") == 0;
}

void
rcell_clear(struct rcell *c)
{
	json_decref(c->req);
	json_decref(c->expect);
	json_decref(c->lines);
	json_decref(c->effects);
	free(c->pin);
	memset(c, 0, sizeof *c);
}

/* An exec answer's fields a check compares. */
static json_t *
rsrc_expect(json_t *resp)
{
	json_t *e = json_object_get(resp, "error"), *x;

	x = json_pack("{s:O?, s:O?, s:O?, s:O?}", "status",
	    json_object_get(resp, "status"), "output", json_object_get(resp,
	    "output"), "stderr", json_object_get(resp, "stderr"), "result",
	    json_object_get(resp, "result"));
	json_object_set_new(x, "error", json_is_object(e) ?
	    rforms_error(json_object_get(e, "type"), json_object_get(e,
	    "message")) : json_null());
	return x;
}

/* ---- transcripts --------------------------------------------------- */

/* Whether obj is a header; a newer format than ours is refused. */
static int
rsrc_header(struct rsrc *src, json_t *obj, bool *is, char *err,
    size_t errlen)
{
	json_t *v = json_object_get(obj, "coil_transcript");

	*is = v != NULL;
	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return err_set(err, errlen, "'%s' line %d: the transcript "
		    "format is not a positive number", src->path, src->lineno);
	if (json_integer_value(v) > RECORD_FORMAT)
		return err_set(err, errlen, "'%s' is a transcript of format "
		    "%lld, newer than this coil reads (%d): replay it with the "
		    "coil that wrote it (%s) or a newer one", src->path,
		    (long long)json_integer_value(v), RECORD_FORMAT,
		    json_string_value(json_object_get(obj, "coil")) ?
		    json_string_value(json_object_get(obj, "coil")) : "?");
	if (src->first == NULL)
		src->first = json_incref(obj);
	if (src->options == NULL && json_is_object(json_object_get(obj,
	    "options")))
		src->options = json_incref(json_object_get(obj, "options"));
	return 0;
}

/* The next line as JSON: 1, 0 at the end (a cut last line is an end
 * with a note), -1 on a line that is not a JSON object. */
static int
rsrc_line(struct rsrc *src, json_t **obj, char *err, size_t errlen)
{
	ssize_t n;
	json_error_t je;

	errno = 0;
	if ((n = getline(&src->line, &src->cap, src->f)) <= 0) {
		if (errno != 0)
			return err_set(err, errlen, "cannot read '%s': %s",
			    src->path, strerror(errno));
		return 0;
	}
	src->lineno++;
	src->bytes += n;
	*obj = json_loadb(src->line, (size_t)n, JSON_ALLOW_NUL, &je);
	if (*obj != NULL && json_is_object(*obj)) {
		src->unended = src->line[n - 1] != '\n';
		return 1;
	}
	json_decref(*obj);
	*obj = NULL;
	if (src->line[n - 1] != '\n') {
		src->cut_at = src->bytes - n;
		snprintf(src->note, sizeof src->note, "line %d of '%s' was cut "
		    "short (the recording ended mid-line): replayed up to line "
		    "%d", src->lineno, src->path, src->lineno - 1);
		return 0;
	}
	return err_set(err, errlen, "'%s' line %d is not a JSON object%s%s",
	    src->path, src->lineno, je.text[0] ? ": " : "", je.text);
}

static void
rsrc_pend(struct rsrc *src, json_t *o)
{
	json_t *req = json_object_get(o, "request"),
	    *seq = json_object_get(o, "seq");

	if (!json_is_object(req) || !json_is_integer(seq) ||
	    !rsrc_replayed(json_string_value(json_object_get(req, "op"))))
		return;
	src->pending = xrealloc(src->pending, (src->npending + 1) *
	    sizeof *src->pending);
	src->pending[src->npending++] = (struct rpending){
		json_integer_value(seq), src->lineno, json_incref(req), NULL };
}

/* A line the running cell's input() was given (null: the end of
 * input), kept with its request to be given again. */
static void
rsrc_answered(struct rsrc *src, json_t *o)
{
	json_t *seq = json_object_get(o, "seq"), *line = json_object_get(o,
	    "line");
	size_t i;

	if (!json_is_integer(seq) || !(json_is_string(line) ||
	    json_is_null(line)))
		return;
	for (i = 0; i < src->npending; i++)
		if (src->pending[i].seq == json_integer_value(seq)) {
			if (src->pending[i].lines == NULL)
				src->pending[i].lines = json_array();
			json_array_append(src->pending[i].lines, line);
			return;
		}
}

/* The pending request seq answers, taken out of the list; -1: none. */
static int
rsrc_unpend(struct rsrc *src, json_t *seq, struct rpending *out)
{
	size_t i;

	for (i = 0; json_is_integer(seq) && i < src->npending; i++)
		if (src->pending[i].seq == json_integer_value(seq)) {
			*out = src->pending[i];
			memmove(&src->pending[i], &src->pending[i + 1],
			    (src->npending - i - 1) * sizeof *src->pending);
			src->npending--;
			return 0;
		}
	return -1;
}

/* The pin of cell in the session segment, "replay-SEGMENT-CELL" (no
 * snapshot name may look like a cell number; another prefix when the
 * file holds that one anywhere, so a snapshot of the session's own is
 * never replaced), or NULL: no rollback of the recording went back to
 * it. */
static char *
rsrc_pin(const struct rsrc *src, int segment, json_int_t cell)
{
	char key[48], *pin;

	snprintf(key, sizeof key, "%d:%lld", segment, (long long)cell);
	if (src->pins == NULL || json_object_get(src->pins, key) == NULL)
		return NULL;
	xasprintf(&pin, "%s%d-%lld", src->pin_prefix, segment,
	    (long long)cell);
	return pin;
}

/* An exec cell a rollback went back to is pinned once it has run; a
 * rollback to a cell number goes back to the pin. */
static void
rsrc_pin_cell(struct rsrc *src, struct rcell *c, json_t *resp)
{
	json_t *to = json_object_get(c->req, "to");
	const char *op = json_string_value(json_object_get(c->req, "op"));
	char *pin;

	if (json_object_get(resp, "output") != NULL) {
		c->pin = rsrc_pin(src, src->segment, json_integer_value(
		    json_object_get(resp, "cell")));
		return;
	}
	if (op == NULL || strcmp(op, "rollback") != 0 ||
	    !json_is_integer(to) || json_integer_value(to) <= 0)
		return;
	if (src->unpinned != NULL && src->note[0] == '\0')
		snprintf(src->note, sizeof src->note, "'%s' %s: its "
		    "rollbacks to a cell number went back to checkpoints the "
		    "replay may not have", src->path, src->unpinned);
	if ((pin = rsrc_pin(src, src->segment, json_integer_value(to))) ==
	    NULL)
		return;
	json_object_set_new(c->req, "to", json_string(pin));
	free(pin);
}

/* A rollback to a cell number recorded as failed (the cell had no
 * checkpoint then) whose cell the replay pins for a later one: replayed,
 * it would find the pin and succeed.  It changed nothing: it is left
 * out. */
static bool
rsrc_pinned_failure(struct rsrc *src, json_t *req, json_t *resp)
{
	json_t *to = json_object_get(req, "to");
	char *pin;

	if (strcmp(json_string_value(json_object_get(req, "op")) ?: "",
	    "rollback") != 0 || !json_is_integer(to) ||
	    strcmp(json_string_value(json_object_get(resp, "status")) ?: "",
	    "ok") == 0 ||
	    (pin = rsrc_pin(src, src->segment, json_integer_value(to))) ==
	    NULL)
		return false;
	free(pin);
	return true;
}

/*
 * A header after the first: --record appends, so another session began
 * here, in a fresh interpreter, and c is a reset (true).  What the last
 * one left unanswered (it was killed) is not replayed.  A --resume's
 * header ("resumed") is the same session going on, its numbers too: no
 * reset (false).
 */
static bool
rsrc_segment(struct rsrc *src, json_t *header, struct rcell *c)
{
	while (src->npending > 0) {
		src->npending--;
		json_decref(src->pending[src->npending].req);
		json_decref(src->pending[src->npending].lines);
	}
	if (json_object_get(header, "resumed") != NULL)
		return false;
	c->n = 0;
	c->line = src->lineno;
	c->req = json_pack("{s:s}", "op", "reset");
	src->segment++;
	return true;
}

static int
rsrc_next_transcript(struct rsrc *src, struct rcell *c, char *err,
    size_t errlen)
{
	struct rpending p;
	json_t *o = NULL, *resp;
	const char *ev;
	bool is;
	int rc;

	while ((rc = rsrc_line(src, &o, err, errlen)) == 1) {
		ev = json_string_value(json_object_get(o, "event"));
		if (rsrc_header(src, o, &is, err, errlen) == -1) {
			json_decref(o);
			return -1;
		}
		if (is && rsrc_segment(src, o, c)) {
			json_decref(o);
			return 1;
		}
		if (is) {
			json_decref(o);
			continue;
		}
		if (ev != NULL && strcmp(ev, "queued") == 0)
			rsrc_pend(src, o);
		if (ev != NULL && strcmp(ev, "answered") == 0)
			rsrc_answered(src, o);
		if (ev != NULL && (strcmp(ev, "response") == 0 ||
		    strcmp(ev, "cancelled") == 0) &&
		    rsrc_unpend(src, json_object_get(o, "seq"), &p) == 0) {
			resp = json_object_get(o, "response");
			/* Cancelled, or code that never ran: incomplete
			 * (a terminal's REPL asks that of every line it
			 * reads until the cell is whole). */
			if (!json_is_object(resp) || rsrc_never_ran(resp) ||
			    rsrc_pinned_failure(src, p.req, resp)) {
				json_decref(p.req);
				json_decref(p.lines);
				json_decref(o);
				continue;
			}
			/* An exec's recorded cell, else (another op, a cell
			 * that never ran) its seq. */
			c->n = json_object_get(resp, "output") != NULL &&
			    json_is_integer(json_object_get(resp, "cell")) ?
			    (int)json_integer_value(json_object_get(resp,
			    "cell")) : (int)p.seq;
			c->line = p.line;
			c->req = p.req;
			rsrc_pin_cell(src, c, resp);
			if (json_object_get(resp, "output") != NULL)
				c->expect = rsrc_expect(resp);
			else	/* snapshot, rollback, reset: did it work */
				c->expect = json_pack("{s:O?}", "status",
				    json_object_get(resp, "status"));
			c->interrupt_ms = rsrc_interrupted(resp);
			c->interrupted = c->interrupt_ms >= 0;
			c->lines = p.lines;
			c->effects = json_incref(json_object_get(resp,
			    "effects"));
			c->effects_more = json_integer_value(json_object_get(
			    resp, "effects_more"));
			json_decref(o);
			return 1;
		}
		json_decref(o);
	}
	return rc;
}

/*
 * A recorded rollback to a cell number found that cell's checkpoint,
 * taken on the session's timing (a pause, a long cell); the replay's
 * cells run back to back and get their own, and after a second session
 * --record appended, cell N is another cell.  So before the replay, the
 * cells the recording's successful rollbacks to a cell number went back
 * to are noted (only the lines naming a rollback are parsed), and as they
 * are replayed each is pinned as a snapshot and the rollback goes back
 * to the pin.  A file that cannot be read twice (a pipe) is replayed
 * without, and says so.
 */
static void
rsrc_scan_pins(struct rsrc *src)
{
	bool used[nitems(replay_pin_prefixes)] = { false };
	long at = ftell(src->f);
	char *line = NULL, key[64];
	size_t cap = 0, i;
	ssize_t n;
	json_t *o, *resp, *req, *numeric;
	const char *ev;
	int segment = 0;

	if (at < 0) {
		src->unpinned = "can be read only once (a pipe)";
		return;
	}
	src->pins = json_object();
	numeric = json_object();	/* "SEGMENT:SEQ" of such rollbacks */
	while ((n = getline(&line, &cap, src->f)) > 0) {
		bool header = strstr(line, "\"coil_transcript\"") != NULL;

		for (i = 0; i < nitems(replay_pin_prefixes); i++)
			used[i] |= strstr(line, replay_pin_prefixes[i]) != NULL;
		if (!header && strstr(line, "\"rollback\"") == NULL &&
		    strstr(line, "\"rolled_back\"") == NULL)
			continue;
		o = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, NULL);
		if (header && json_object_get(o, "coil_transcript") != NULL &&
		    json_object_get(o, "resumed") == NULL)
			segment++;
		ev = json_string_value(json_object_get(o, "event")) ?: "";
		req = json_object_get(o, "request");
		resp = json_object_get(o, "response");
		snprintf(key, sizeof key, "%d:%lld", segment, (long long)
		    json_integer_value(json_object_get(o, "seq")));
		if (strcmp(ev, "queued") == 0 && strcmp(json_string_value(
		    json_object_get(req, "op")) ?: "", "rollback") == 0 &&
		    json_integer_value(json_object_get(req, "to")) > 0)
			json_object_set_new(numeric, key, json_true());
		if (strcmp(ev, "response") == 0 && json_object_get(numeric,
		    key) != NULL && strcmp(json_string_value(json_object_get(
		    resp, "status")) ?: "", "ok") == 0 &&
		    json_integer_value(json_object_get(resp, "cell")) > 0) {
			snprintf(key, sizeof key, "%d:%lld", segment,
			    (long long)json_integer_value(json_object_get(resp,
			    "cell")));
			json_object_set_new(src->pins, key, json_true());
		}
		json_decref(o);
	}
	free(line);
	json_decref(numeric);
	for (i = 0; i < nitems(replay_pin_prefixes) && used[i]; i++)
		;
	src->pin_prefix = i < nitems(replay_pin_prefixes) ?
	    replay_pin_prefixes[i] : NULL;
	/* a regular file: ftell worked, and so does this */
	(void)fseek(src->f, at, SEEK_SET);
	if (src->pin_prefix == NULL) {
		src->unpinned = "holds every name coil pins cells by";
		json_decref(src->pins);
		src->pins = NULL;
	}
}

/* Read the first line: 1 when it is a transcript header (src is then
 * one), 0 when it is not (the file is rewound for rforms_read), -1 on a
 * header refused. */
static int
rsrc_try_transcript(struct rsrc *src, char *err, size_t errlen)
{
	ssize_t n = getline(&src->line, &src->cap, src->f);
	json_t *o = n > 0 ? json_loadb(src->line, (size_t)n, JSON_ALLOW_NUL,
	    NULL) : NULL;
	bool is = false;
	int rc;

	src->lineno = 1;
	src->bytes = n > 0 ? n : 0;
	rc = json_is_object(o) ? rsrc_header(src, o, &is, err, errlen) : 0;
	json_decref(o);
	if (rc == -1)
		return -1;
	if (is) {
		src->kind = RS_TRANSCRIPT;
		rsrc_scan_pins(src);
		return 1;
	}
	src->lineno = 0;
	rewind(src->f);
	return 0;
}

/* ---- the source ---------------------------------------------------- */

struct rsrc *
rsrc_open(const char *path, const char *code_key, const char *tool,
    char *err, size_t errlen)
{
	struct rsrc *src = xcalloc(1, sizeof *src);
	enum rsrc_kind kind;
	char why[256];
	int rc, fd;

	src->path = xstrdup(path);
	src->cut_at = -1;
	/* A file a cell may have written: its cells run again, so no link
	 * planted where cells write may make them read a host file
	 * (hostfs.h), and a FIFO does not hold us up. */
	if ((fd = hostfs_open_path(path, HOSTFS_READ, why,
	    sizeof why)) != -1 && (src->f = fdopen(fd, "re")) == NULL) {
		snprintf(why, sizeof why, "%s", strerror(errno));
		close(fd);
	}
	if (src->f == NULL) {
		err_set(err, errlen, "cannot read '%s': %s", path, why);
		rsrc_close(src);
		return NULL;
	}
	if ((rc = rsrc_try_transcript(src, err, errlen)) == 1)
		return src;
	if (rc == 0 && (src->cells = rforms_read(src->f, path, code_key, tool,
	    &kind, err, errlen)) != NULL) {
		src->kind = kind;
		fclose(src->f);
		src->f = NULL;
		return src;
	}
	rsrc_close(src);
	return NULL;
}

enum rsrc_kind
rsrc_kind(const struct rsrc *src)
{
	return src->kind;
}

json_t *
rsrc_options(const struct rsrc *src)
{
	return src->options;
}

json_t *
rsrc_first_header(const struct rsrc *src)
{
	return src->first;
}

void
rsrc_end(const struct rsrc *src, long long *cut_at, bool *unended)
{
	*cut_at = src->cut_at;
	*unended = src->cut_at < 0 && src->unended;
}

void
rsrc_unanswered(const struct rsrc *src, json_t *list)
{
	size_t i;

	for (i = 0; i < src->npending; i++)
		json_array_append_new(list, json_pack("{s:s, s:i}", "op",
		    json_string_value(json_object_get(src->pending[i].req,
		    "op")) ?: "exec", "line", src->pending[i].line));
}

const char *
rsrc_note(const struct rsrc *src)
{
	return src->note[0] != '\0' ? src->note : NULL;
}

int
rsrc_next(struct rsrc *src, struct rcell *c, char *err, size_t errlen)
{
	json_t *cell;

	if (src->kind == RS_TRANSCRIPT)
		return rsrc_next_transcript(src, c, err, errlen);
	if (src->next >= json_array_size(src->cells))
		return 0;
	cell = json_array_get(src->cells, src->next++);
	c->n = (int)json_integer_value(json_object_get(cell, "n"));
	c->line = (int)json_integer_value(json_object_get(cell, "line"));
	c->req = json_incref(json_object_get(cell, "req"));
	c->expect = json_incref(json_object_get(cell, "expect"));
	c->notebook = src->kind == RS_NOTEBOOK;
	if (json_is_string(json_object_get(cell, "pin")))
		c->pin = xstrdup(json_string_value(json_object_get(cell,
		    "pin")));
	return 1;
}

void
rsrc_close(struct rsrc *src)
{
	size_t i;

	if (src == NULL)
		return;
	if (src->f != NULL)
		fclose(src->f);
	for (i = 0; i < src->npending; i++) {
		json_decref(src->pending[i].req);
		json_decref(src->pending[i].lines);
	}
	free(src->pending);
	free(src->line);
	free(src->path);
	json_decref(src->options);
	json_decref(src->first);
	json_decref(src->pins);
	json_decref(src->cells);
	free(src);
}
