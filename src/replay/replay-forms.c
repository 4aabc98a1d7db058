/*
 * replay-forms.c - the files replay reads whole (see replay-int.h):
 * Jupyter notebooks (nbformat 4), Python files with "# %%" cells, and
 * chat logs in which a model called a Python tool (OpenAI messages with
 * tool_calls, Anthropic messages with tool_use blocks).  Each becomes a
 * list of cells {"n", "line", "req", "expect"?}; what the file says the
 * cell gave (a notebook's outputs, a chat's tool result) is the expect
 * a check compares.  A notebook of a coil session marks its rollbacks
 * and resets (export.c): each becomes its request again, and the cell a
 * rollback went back to is pinned once it has run ("pin").  Pure
 * parsing: no session, no Python.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "replay-int.h"

const char *const replay_pin_prefixes[REPLAY_PIN_PREFIXES] = {
	"replay-", "replay.", "coil-replay-", "coil.replay."
};

/* A notebook's multiline string: a string, or a list of them. */
static char *
forms_text(json_t *v)
{
	struct buf b;
	size_t i;

	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	buf_init(&b);
	buf_addstr(&b, "");
	for (i = 0; i < json_array_size(v); i++)
		if (json_is_string(json_array_get(v, i)))
			buf_addstr(&b, json_string_value(json_array_get(v, i)));
	return buf_take(&b);
}

static void
forms_add(json_t *cells, int n, int line, const char *code, json_t *expect)
{
	json_t *c = json_pack("{s:i, s:i, s:{s:s, s:s}}", "n", n, "line",
	    line, "req", "op", "exec", "code", code);

	if (expect != NULL)
		json_object_set_new(c, "expect", expect);
	json_array_append_new(cells, c);
}

/* ---- notebooks ----------------------------------------------------- */

json_t *
rforms_error(json_t *type, json_t *message)
{
	return json_pack("{s:O?, s:O?}", "type", type, "message", message);
}

/* A code cell's stored outputs as the fields a check compares; NULL
 * when the cell never ran (nothing to compare). */
static json_t *
forms_nb_expect(json_t *cell)
{
	json_t *outs = json_object_get(cell, "outputs"), *o, *x, *err = NULL;
	struct buf out, serr;
	char *t, *result = NULL;
	const char *type;
	size_t i;

	if (json_is_null(json_object_get(cell, "execution_count")) &&
	    json_array_size(outs) == 0)
		return NULL;
	buf_init(&out);
	buf_init(&serr);
	buf_addstr(&out, "");
	buf_addstr(&serr, "");
	json_array_foreach(outs, i, o) {
		type = json_string_value(json_object_get(o, "output_type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "stream") == 0) {
			t = forms_text(json_object_get(o, "text"));
			buf_addstr(strcmp(json_string_value(json_object_get(o,
			    "name")) ?: "", "stderr") == 0 ? &serr : &out, t);
			free(t);
		} else if (strcmp(type, "execute_result") == 0) {
			free(result);
			result = forms_text(json_object_get(json_object_get(o,
			    "data"), "text/plain"));
		} else if (strcmp(type, "error") == 0 && err == NULL) {
			err = rforms_error(json_object_get(o, "ename"),
			    json_object_get(o, "evalue"));
		}
	}
	/* No status: a notebook has none, and an error output stands for
	 * coil's error and incomplete alike. */
	x = json_pack("{s:s, s:s, s:s?, s:o}", "output", out.p, "stderr",
	    serr.p, "result", result, "error", err != NULL ? err :
	    json_null());
	buf_free(&out);
	buf_free(&serr);
	free(result);
	return x;
}

/* A markdown cell's text as coil marks a rollback or a reset: the cell
 * the namespace went back to (0: the start, as after a reset, which
 * *reset says), or -1 when it is no mark. */
static int
forms_mark(const char *text, bool *reset)
{
	size_t n = strlen(EXPORT_MARK_ROLLBACK);
	int cell;

	*reset = strncmp(text, EXPORT_MARK_RESET,
	    strlen(EXPORT_MARK_RESET)) == 0;
	if (*reset)
		return 0;
	if (strncmp(text, EXPORT_MARK_ROLLBACK, n) != 0)
		return -1;
	if (strncmp(text + n, "its start", 9) == 0)
		return 0;
	if (sscanf(text + n, "the state after cell %d", &cell) == 1 &&
	    cell > 0)
		return cell;
	return -1;
}

/* The cells the notebook's marks roll back to, as the keys of an object;
 * and in *prefix what their pins' names begin with: the first of
 * replay_pin_prefixes no cell holds (a %snapshot of the session's own
 * is never replaced), NULL when every one is taken. */
static json_t *
forms_nb_targets(json_t *nb, const char **prefix)
{
	json_t *targets = json_object(), *c;
	bool used[REPLAY_PIN_PREFIXES] = { false }, reset;
	char *text, key[16];
	size_t i, k;
	int cell;

	json_array_foreach(json_object_get(nb, "cells"), i, c) {
		text = forms_text(json_object_get(c, "source"));
		for (k = 0; k < REPLAY_PIN_PREFIXES; k++)
			used[k] |= strstr(text, replay_pin_prefixes[k]) != NULL;
		cell = strcmp(json_string_value(json_object_get(c,
		    "cell_type")) ?: "", "markdown") == 0 ?
		    forms_mark(text, &reset) : -1;
		free(text);
		if (cell > 0) {
			snprintf(key, sizeof key, "%d", cell);
			json_object_set_new(targets, key, json_false());
		}
	}
	for (k = 0; k < REPLAY_PIN_PREFIXES && used[k]; k++)
		;
	*prefix = k < REPLAY_PIN_PREFIXES ? replay_pin_prefixes[k] : NULL;
	return targets;
}

/* A mark as its request: reset, or a rollback to the start or to the
 * pin of the cell it names, which a code cell above set (in targets,
 * true); else to that cell's number, as it was (the replay says if
 * there is no checkpoint of it). */
static json_t *
forms_nb_mark(const char *text, json_t *targets, const char *prefix)
{
	char key[16], pin[48];
	bool reset;
	int cell = forms_mark(text, &reset);

	if (reset)
		return json_pack("{s:s}", "op", "reset");
	snprintf(key, sizeof key, "%d", cell);
	if (cell == 0 || prefix == NULL ||
	    !json_is_true(json_object_get(targets, key)))
		return json_pack("{s:s, s:i}", "op", "rollback", "to", cell);
	snprintf(pin, sizeof pin, "%s%d", prefix, cell);
	return json_pack("{s:s, s:s}", "op", "rollback", "to", pin);
}

static json_t *
forms_notebook(json_t *nb, const char *path, char *err, size_t errlen)
{
	json_t *cells = json_array(), *c, *targets, *ec;
	const char *type, *prefix;
	char *code, key[16], pin[48];
	bool reset;
	size_t i;
	int n = 0;

	if (json_integer_value(json_object_get(nb, "nbformat")) != 4) {
		err_set(err, errlen, "'%s' is a notebook of nbformat %lld: coil "
		    "reads nbformat 4 (jupyter nbconvert --to notebook converts "
		    "older ones)", path, (long long)json_integer_value(
		    json_object_get(nb, "nbformat")));
		json_decref(cells);
		return NULL;
	}
	targets = forms_nb_targets(nb, &prefix);
	json_array_foreach(json_object_get(nb, "cells"), i, c) {
		type = json_string_value(json_object_get(c, "cell_type"));
		if (type != NULL && strcmp(type, "markdown") == 0) {
			code = forms_text(json_object_get(c, "source"));
			if (forms_mark(code, &reset) >= 0)
				json_array_append_new(cells, json_pack(
				    "{s:i, s:i, s:o}", "n", n, "line", 0,
				    "req", forms_nb_mark(code, targets,
				    prefix)));
			free(code);
			continue;
		}
		if (type == NULL || strcmp(type, "code") != 0)
			continue;	/* raw cells */
		code = forms_text(json_object_get(c, "source"));
		forms_add(cells, ++n, 0, code, forms_nb_expect(c));
		free(code);
		/* the cell it ran as: its count, or where outputs were
		 * cleared (no counts), its place */
		ec = json_object_get(c, "execution_count");
		snprintf(key, sizeof key, "%lld", json_is_integer(ec) ?
		    (long long)json_integer_value(ec) : (long long)n);
		if (prefix != NULL && json_object_get(targets, key)) {
			snprintf(pin, sizeof pin, "%s%s", prefix, key);
			json_object_set_new(json_array_get(cells,
			    json_array_size(cells) - 1), "pin",
			    json_string(pin));
			json_object_set_new(targets, key, json_true());
		}
	}
	json_decref(targets);
	if (n == 0) {
		err_set(err, errlen, "notebook '%s' has no code cells: nothing "
		    "to replay", path);
		json_decref(cells);
		return NULL;
	}
	return cells;
}

/* ---- "# %%" files --------------------------------------------------- */

static bool
forms_marker(const char *line)
{
	return strncmp(line, "# %%", 4) == 0 || strncmp(line, "#%%", 3) == 0;
}

static bool
forms_blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

/* The cell in b (if it holds more than blank lines), numbered on. */
static void
forms_flush(json_t *cells, struct buf *b, int line, bool markdown, int *n)
{
	if (b->len > 0 && !markdown && !forms_blank(b->p))
		forms_add(cells, ++*n, line, b->p, NULL);
	buf_free(b);
	buf_init(b);
	buf_addstr(b, "");
}

static json_t *
forms_percent(char *text)
{
	json_t *cells = json_array();
	char *p, *nl;
	struct buf b;
	int lineno = 0, start = 1, n = 0;
	bool markdown = false;

	buf_init(&b);
	buf_addstr(&b, "");
	for (p = text; *p != '\0'; p = nl) {
		nl = strchr(p, '\n');
		nl = nl != NULL ? nl + 1 : p + strlen(p);
		lineno++;
		if (forms_marker(p)) {
			forms_flush(cells, &b, start, markdown, &n);
			/* "# %% [markdown]" cells are prose */
			markdown = memmem(p, (size_t)(nl - p), "[markdown]",
			    10) != NULL || memmem(p, (size_t)(nl - p), "[md]",
			    4) != NULL;
			start = lineno + 1;
			continue;
		}
		buf_add(&b, p, (size_t)(nl - p));
	}
	forms_flush(cells, &b, start, markdown, &n);
	buf_free(&b);
	return cells;
}

/* ---- chat logs ------------------------------------------------------ */

/* A tool result's content as text: a string, or a list of blocks whose
 * "text" members are joined. */
static char *
forms_content(json_t *v)
{
	struct buf b;
	json_t *blk;
	size_t i;

	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	buf_init(&b);
	buf_addstr(&b, "");
	json_array_foreach(v, i, blk)
		if (json_is_string(json_object_get(blk, "text")))
			buf_addstr(&b, json_string_value(json_object_get(blk,
			    "text")));
	return buf_take(&b);
}

/* The first result in msgs (after index from) for the call id: OpenAI's
 * role "tool" messages, Anthropic's tool_result blocks.  {"text"}, or
 * NULL when there is none. */
static json_t *
forms_result(json_t *msgs, size_t from, const char *id)
{
	json_t *m, *blk, *x;
	size_t i, j;
	char *t;

	for (i = from; id != NULL && i < json_array_size(msgs); i++) {
		m = json_array_get(msgs, i);
		if (json_is_string(json_object_get(m, "tool_call_id")) &&
		    strcmp(json_string_value(json_object_get(m,
		    "tool_call_id")), id) == 0) {
			t = forms_content(json_object_get(m, "content"));
			x = json_pack("{s:s}", "text", t);
			free(t);
			return x;
		}
		json_array_foreach(json_object_get(m, "content"), j, blk) {
			const char *use = json_string_value(json_object_get(blk,
			    "tool_use_id"));

			if (use == NULL || strcmp(use, id) != 0)
				continue;
			t = forms_content(json_object_get(blk, "content"));
			x = json_pack("{s:s}", "text", t);
			free(t);
			return x;
		}
	}
	return NULL;
}

/* One call of a tool: its code when it is one of ours (the tool asked
 * for, arguments holding code_key as a string). */
static const char *
forms_call_code(json_t *args, const char *name, const char *code_key,
    const char *tool)
{
	if (tool != NULL && (name == NULL || strcmp(name, tool) != 0))
		return NULL;
	return json_string_value(json_object_get(args, code_key));
}

/* The calls of message i, as cells; *kind learns the log's dialect. */
static void
forms_chat_msg(json_t *msgs, size_t i, const char *code_key,
    const char *tool, enum rsrc_kind *kind, json_t *cells, int *n)
{
	json_t *m = json_array_get(msgs, i), *call, *args, *blk;
	const char *code;
	size_t j;

	json_array_foreach(json_object_get(m, "tool_calls"), j, call) {
		json_t *fn = json_object_get(call, "function");
		const char *a = json_string_value(json_object_get(fn,
		    "arguments"));

		*kind = RS_OPENAI;
		/* arguments is JSON in a string (an object in some logs) */
		args = a != NULL ? json_loads(a, JSON_ALLOW_NUL, NULL) :
		    json_incref(json_object_get(fn, "arguments"));
		code = forms_call_code(args, json_string_value(
		    json_object_get(fn, "name")), code_key, tool);
		if (code != NULL)
			forms_add(cells, ++*n, 0, code, forms_result(msgs, i + 1,
			    json_string_value(json_object_get(call, "id"))));
		json_decref(args);
	}
	json_array_foreach(json_object_get(m, "content"), j, blk) {
		const char *type = json_string_value(json_object_get(blk,
		    "type"));

		if (type == NULL || strcmp(type, "tool_use") != 0)
			continue;
		*kind = RS_ANTHROPIC;
		code = forms_call_code(json_object_get(blk, "input"),
		    json_string_value(json_object_get(blk, "name")), code_key,
		    tool);
		if (code != NULL)
			forms_add(cells, ++*n, 0, code, forms_result(msgs, i + 1,
			    json_string_value(json_object_get(blk, "id"))));
	}
}

static json_t *
forms_chat(json_t *msgs, const char *path, const char *code_key,
    const char *tool, enum rsrc_kind *kind, char *err, size_t errlen)
{
	json_t *cells = json_array();
	size_t i;
	int n = 0;

	*kind = RS_OPENAI;
	for (i = 0; i < json_array_size(msgs); i++)
		forms_chat_msg(msgs, i, code_key, tool, kind, cells, &n);
	if (n > 0)
		return cells;
	json_decref(cells);
	if (tool != NULL)
		err_set(err, errlen, "chat log '%s' has no call of the tool '%s' "
		    "with a '%s' argument: nothing to replay", path, tool,
		    code_key);
	else
		err_set(err, errlen, "chat log '%s' has no Python tool calls (no "
		    "tool call has a '%s' argument; --code-key names another, "
		    "--tool picks a tool): nothing to replay", path, code_key);
	return NULL;
}

/* ---- by content ------------------------------------------------------ */

static json_t *
forms_json(json_t *j, const char *path, const char *code_key,
    const char *tool, enum rsrc_kind *kind, char *err, size_t errlen)
{
	json_t *msgs = json_is_array(j) ? j : json_object_get(j, "messages");

	if (json_is_object(j) && json_is_array(json_object_get(j, "cells")) &&
	    json_object_get(j, "nbformat") != NULL) {
		*kind = RS_NOTEBOOK;
		return forms_notebook(j, path, err, errlen);
	}
	if (json_is_array(msgs))
		return forms_chat(msgs, path, code_key, tool, kind, err, errlen);
	err_set(err, errlen, "'%s' is JSON but neither a notebook (no "
	    "\"cells\" and \"nbformat\") nor a chat log (no list of messages)",
	    path);
	return NULL;
}

static bool
forms_ends(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

/* The whole of f, NUL-terminated; NULL with a message. */
static char *
forms_slurp(FILE *f, const char *path, char *err, size_t errlen)
{
	struct buf b;
	char chunk[65536];
	size_t n;

	buf_init(&b);
	buf_addstr(&b, "");
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f)) {
		err_set(err, errlen, "cannot read '%s': %s", path,
		    strerror(errno));
		buf_free(&b);
		return NULL;
	}
	return buf_take(&b);
}

json_t *
rforms_read(FILE *f, const char *path, const char *code_key,
    const char *tool, enum rsrc_kind *kind, char *err, size_t errlen)
{
	char *text = forms_slurp(f, path, err, errlen), *p;
	json_t *j, *cells = NULL;
	json_error_t je;

	if (text == NULL)
		return NULL;
	code_key = code_key != NULL ? code_key : "code";
	p = text + strspn(text, " \t\r\n");
	if (*p == '{' || *p == '[' || forms_ends(path, ".ipynb") ||
	    forms_ends(path, ".json")) {
		if ((j = json_loads(text, JSON_ALLOW_NUL, &je)) == NULL)
			err_set(err, errlen, "'%s' is not JSON: line %d: %s",
			    path, je.line, je.text);
		else
			cells = forms_json(j, path, code_key, tool, kind, err,
			    errlen);
		json_decref(j);
	} else if (forms_marker(p) || strstr(text, "\n# %%") != NULL ||
	    strstr(text, "\n#%%") != NULL || forms_ends(path, ".py")) {
		/* A .py without markers is one cell. */
		*kind = RS_PERCENT;
		cells = forms_percent(text);
		if (json_array_size(cells) == 0) {
			err_set(err, errlen, "'%s' has no code: nothing to "
			    "replay", path);
			json_decref(cells);
			cells = NULL;
		}
	} else {
		err_set(err, errlen, "'%s' is not a transcript, a notebook, a "
		    "Python file with \"# %%%%\" cells or a chat log", path);
	}
	free(text);
	return cells;
}
