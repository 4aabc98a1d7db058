/*
 * check-test.c - replay --check's comparison (TAP): noise normalised,
 * an outcome as lines (a notebook's short error type against coil's
 * dotted one), the unified diff of two texts, and the cells of a
 * notebook, a "# %%" file and chat logs (replay-forms.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "replay-int.h"
#include "tap.h"

static struct check_noise nz;

static void
norm(const char *in, const char *want)
{
	char *got = check_normalise(&nz, in);

	if (!tap_ok(strcmp(got, want) == 0, "normalise '%s'", in))
		printf("# got '%s', want '%s'\n", got, want);
	free(got);
}

static void
diff(const char *name, const char *a, const char *b, const char *want)
{
	struct buf out;
	bool differ;

	buf_init(&out);
	buf_addstr(&out, "");
	differ = check_diff(a, b, "a", "b", &out);
	if (!tap_ok(differ == (want != NULL) && (want == NULL ||
	    strcmp(out.p, want) == 0), "diff: %s", name))
		printf("# got:\n%s# want:\n%s", out.p, want ? want : "(none)\n");
	buf_free(&out);
}

static void
test_view(void)
{
	json_t *want = json_pack("{s:s, s:s, s:n, s:{s:s, s:s}}", "status",
	    "error", "output", "hi\n", "result", "error", "type",
	    "JSONDecodeError", "message", "Expecting value: line 1");
	json_t *got = json_pack("{s:s, s:s, s:n, s:{s:s, s:s}, s:f}",
	    "status", "error", "output", "hi\n", "result", "error", "type",
	    "json.decoder.JSONDecodeError", "message",
	    "Expecting value: line 1", "duration_ms", 3.5);
	struct buf a, b;

	buf_init(&a);
	buf_init(&b);
	check_view(&nz, want, want, &a);
	check_view(&nz, want, got, &b);
	if (!tap_ok(strcmp(a.p, b.p) == 0, "a notebook's ename matches the "
	    "dotted type, other fields are left out"))
		printf("# %s# %s", a.p, b.p);
	tap_ok(strstr(a.p, "status: error\noutput:\n  hi\nresult: null\n"
	    "error: JSONDecodeError\n") == a.p, "the view's lines");
	json_object_set_new(json_object_get(got, "error"), "type",
	    json_string("ValueError"));
	buf_free(&b);
	buf_init(&b);
	check_view(&nz, want, got, &b);
	tap_ok(strcmp(a.p, b.p) != 0, "another type differs");
	buf_free(&a);
	buf_free(&b);
	json_decref(want);
	json_decref(got);
}

/* The cells rforms_read makes of text, as "n:code|" each. */
static void
forms(const char *name, const char *text, const char *key, const char *tool,
    const char *want)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	enum rsrc_kind kind;
	char err[512] = "";
	json_t *cells = rforms_read(f, name, key, tool, &kind, err, sizeof err),
	    *c;
	struct buf got;
	size_t i;

	buf_init(&got);
	buf_addstr(&got, "");
	json_array_foreach(cells, i, c) {
		json_t *x = json_object_get(c, "expect");

		buf_printf(&got, "%d:%s", (int)json_integer_value(
		    json_object_get(c, "n")), json_string_value(json_object_get(
		    json_object_get(c, "req"), "code")));
		if (json_is_string(json_object_get(x, "text")))
			buf_printf(&got, "=%s", json_string_value(
			    json_object_get(x, "text")));
		if (json_is_string(json_object_get(x, "result")))
			buf_printf(&got, "=%s", json_string_value(
			    json_object_get(x, "result")));
		buf_addstr(&got, "|");
	}
	if (cells == NULL)
		buf_printf(&got, "error: %s", err);
	if (!tap_ok(strncmp(got.p, want, strlen(want)) == 0, "cells of %s",
	    name))
		printf("# got  %s\n# want %s\n", got.p, want);
	buf_free(&got);
	json_decref(cells);
	fclose(f);
}

static void
test_forms(void)
{
	forms("a.py", "import os\n# %%\nx = 1\n# %% [markdown]\n# prose\n"
	    "# %% two\ny = 2\n", NULL, NULL, "1:import os\n|2:x = 1\n|"
	    "3:y = 2\n|");
	forms("nb.ipynb", "{\"nbformat\": 4, \"nbformat_minor\": 5, \"cells\": "
	    "[{\"cell_type\": \"markdown\", \"source\": \"# t\"}, {\"cell_type\""
	    ": \"code\", \"source\": [\"1 +\", \" 1\"], \"execution_count\": 1, "
	    "\"outputs\": [{\"output_type\": \"execute_result\", \"data\": "
	    "{\"text/plain\": \"2\"}}]}]}", NULL, NULL, "1:1 + 1=2|");
	forms("e.ipynb", "{\"nbformat\": 4, \"cells\": [{\"cell_type\": "
	    "\"markdown\", \"source\": \"x\"}]}", NULL, NULL,
	    "error: notebook 'e.ipynb' has no code cells");
	forms("bad.ipynb", "{\"nbformat\": 4, \"cells\": [", NULL, NULL,
	    "error: 'bad.ipynb' is not JSON");
	forms("o.json", "[{\"role\": \"assistant\", \"tool_calls\": [{\"id\": "
	    "\"c1\", \"function\": {\"name\": \"python\", \"arguments\": "
	    "\"{\\\"src\\\": \\\"6*7\\\"}\"}}]}, {\"role\": \"tool\", "
	    "\"tool_call_id\": \"c1\", \"content\": \"42\"}]", "src", NULL,
	    "1:6*7=42|");
	forms("a.json", "{\"messages\": [{\"role\": \"assistant\", \"content\": "
	    "[{\"type\": \"tool_use\", \"id\": \"t1\", \"name\": \"shell\", "
	    "\"input\": {\"code\": \"ls\"}}, {\"type\": \"tool_use\", \"id\": "
	    "\"t2\", \"name\": \"py\", \"input\": {\"code\": \"1\"}}]}, {\"role\""
	    ": \"user\", \"content\": [{\"type\": \"tool_result\", "
	    "\"tool_use_id\": \"t2\", \"content\": [{\"type\": \"text\", "
	    "\"text\": \"1\"}]}]}]}", NULL, "py", "1:1=1|");
	forms("none.json", "[{\"role\": \"user\", \"content\": \"hi\"}]", NULL,
	    NULL, "error: chat log 'none.json' has no Python tool calls");
}

/* A megabyte of digits is normalised in one pass (the regexes tried
 * each digit as a start and took hours: the test would hang). */
static void
test_long_digits(void)
{
	size_t n = 1 << 20;
	char *in = xmalloc(n + 8), *got;

	memset(in, '7', n);
	strcpy(in + n, " ms 0x");
	got = check_normalise(&nz, in);
	tap_ok(strcmp(got, "<time> 0x") == 0, "a megabyte of digits and a "
	    "unit is one <time>");
	free(got);
	free(in);
}

/* Many matches in a long text: each search starts where the last ended
 * (this was once quadratic); a user's pattern anchored at line starts
 * matches after a match that ended a line; an empty match at the very
 * end stops there. */
static void
test_many_matches(void)
{
	const char *extra[] = { "^a\n", "x*$", NULL };
	struct check_noise own;
	size_t n = 1 << 16, i;
	char *in = xmalloc(11 * n + 1), *want = xmalloc(4 * n + 1), *got;
	char err[256];

	for (i = 0; i < n; i++) {
		memcpy(in + 11 * i, "0xdeadbeef ", 11);
		memcpy(want + 4 * i, "0x? ", 4);
	}
	in[11 * n] = want[4 * n] = '\0';
	got = check_normalise(&nz, in);
	tap_ok(strcmp(got, want) == 0, "65536 addresses in 704 KiB, each "
	    "replaced");
	free(got);
	free(in);
	free(want);

	tap_ok(check_noise_init(&own, extra, err, sizeof err) == 0,
	    "patterns with ^ and $ compile");
	got = check_normalise(&own, "a\na\nba\n");
	tap_ok(strcmp(got, "<ignored><ignored>ba\n") == 0, "^ matches at the "
	    "start of each line, after a match that ended the one before");
	free(got);
	got = check_normalise(&own, "yxx");
	tap_ok(strcmp(got, "y<ignored>") == 0, "a match that may be empty, "
	    "up to the very end: '%s'", got);
	free(got);
	got = check_normalise(&own, "abc");
	tap_ok(strcmp(got, "abc") == 0, "an empty match at the very end "
	    "changes nothing: '%s'", got);
	free(got);
	check_noise_free(&own);
}

/* Two long outputs that differ in one line: one hunk around it, though
 * the table of every pair of their lines would be too big to make. */
static void
test_long_diff(void)
{
	size_t n = 20000, i;
	struct buf a, b, out;

	buf_init(&a);
	buf_init(&b);
	buf_init(&out);
	buf_addstr(&out, "");
	for (i = 0; i < n; i++) {
		buf_printf(&a, "line %zu\n", i);
		buf_printf(&b, "line %zu\n", i == 12345 ? (size_t)0 : i);
	}
	tap_ok(check_diff(a.p, b.p, "a", "b", &out) && strcmp(out.p,
	    "--- a\n+++ b\n@@ -12343,7 +12343,7 @@\n line 12342\n"
	    " line 12343\n line 12344\n-line 12345\n+line 0\n line 12346\n"
	    " line 12347\n line 12348\n") == 0, "20000 lines, one changed: "
	    "one hunk");
	buf_free(&a);
	buf_free(&b);
	buf_free(&out);
}

/* Crash recovery's rule, which --resume keeps: what may run twice. */
static void
test_once(void)
{
	json_t *wrote = json_loads("[{\"kind\": \"create\", \"path\": "
	    "\"out.txt\"}]", 0, NULL), *refused = json_loads("[{\"kind\": "
	    "\"connect\", \"to\": \"1.2.3.4:80\", \"denied\": true}]", 0,
	    NULL), *d;
	char why[256];

	check_once("ok", NULL, 0, false, why, sizeof why);
	tap_ok(why[0] == '\0', "once: a cell that did nothing outside may "
	    "run twice");
	check_once("error", refused, 0, false, why, sizeof why);
	tap_ok(why[0] == '\0', "once: a refused connection did nothing");
	check_once("ok", wrote, 0, false, why, sizeof why);
	tap_ok(strcmp(why, "it wrote 'out.txt'") == 0, "once: a file "
	    "written: '%s'", why);
	check_once("ok", NULL, 3, false, why, sizeof why);
	tap_ok(strstr(why, "3 things") != NULL, "once: effects beyond the "
	    "list: '%s'", why);
	check_once("ok", NULL, 0, true, why, sizeof why);
	tap_ok(strcmp(why, "it read input") == 0, "once: input read");
	check_once("crashed", NULL, 0, false, why, sizeof why);
	tap_ok(strcmp(why, "it crashed part way") == 0, "once: a crash");
	check_once("timeout", NULL, 0, false, why, sizeof why);
	tap_ok(strcmp(why, "it ran past its timeout") == 0, "once: a "
	    "timeout");
	d = check_first_diff("status: ok\noutput:\n  a\n  b\n",
	    "status: ok\noutput:\n  a\n  c\n");
	tap_ok(strcmp(json_string_value(json_object_get(d, "field")),
	    "output") == 0 && strcmp(json_string_value(json_object_get(d,
	    "was")), "b") == 0 && strcmp(json_string_value(json_object_get(
	    d, "now")), "c") == 0, "first diff: the field and the line");
	json_decref(d);
	json_decref(wrote);
	json_decref(refused);
}

int
main(void)
{
	char err[256];
	const char *extra[] = { "seed=[0-9]+", NULL };

	tap_ok(check_noise_init(&nz, extra, err, sizeof err) == 0,
	    "the noise patterns compile");
	norm("<object at 0x7f3a2b1c9d00>", "<object at 0x?>");
	norm("took 12.5 ms, then 3s", "took <time>, then <time>");
	norm("3 sets of 12 seconds", "3 sets of <time>");
	norm("peak 10.5 MiB of 4096 bytes", "peak <memory> of <memory>");
	norm("'/tmp/coil-1234/x.png' saved", "'<tmp>' saved");
	norm("seed=42 kept", "<ignored> kept");
	norm("x1s and 0x12", "x1s and 0x12");
	norm("12 sets, 12  ms, 12.ms, v12 ms, 1.5secs, x.14 s, -3µs",
	    "12 sets, 12  ms, 12.ms, v12 ms, <time>, x.<time>, -<time>");
	norm("10 kB 3 KiB 5GB 7 bytes 7 bytesx 2 Mb", "<memory> <memory> "
	    "<memory> <memory> 7 bytesx 2 Mb");
	test_long_digits();
	test_many_matches();
	test_long_diff();
	diff("equal texts", "a\nb\nc\n", "a\nb\nc\n", NULL);
	diff("a line changed", "a\nb\nc\n", "a\nB\nc\n",
	    "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
	diff("a line added after 8 equal ones", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n", "1\n2\n3\n4\n5\n6\n7\n8\n"
	    "9\n10\n11\n12\n", "--- a\n+++ b\n@@ -9,3 +9,4 @@\n 9\n 10\n 11\n"
	    "+12\n");
	diff("from nothing", "", "x\n", "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n");
	test_view();
	test_forms();
	test_once();
	check_noise_free(&nz);
	return tap_done();
}
