/*
 * check.c - comparing two outcomes of a cell (see check.h): the outcome
 * as lines, the noise in them replaced, and a unified diff of two
 * outcomes.  Pure: no I/O, no session.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "outbuf.h"
#include "response.h"
#include "wording.h"

/*
 * What changes from run to run without meaning anything.  A pattern
 * marked word matches only where a word ends ("12 s" but not "12 sets"):
 * POSIX regexes have no \b.
 */
static const char *const check_time_units[] = { "ns", "us", "µs", "ms",
	"s", "sec", "secs", "seconds", NULL };
static const char *const check_memory_units[] = { "KB", "MB", "GB", "TB",
	"KiB", "MiB", "GiB", "TiB", "kB", "bytes", NULL };

/* A pattern with units is a number and a unit, matched by check_units,
 * not by the regex (which says what it matches, for the record): POSIX
 * regexec tries each digit of a run as a start, each to the run's end,
 * and a cell that printed a megabyte of digits took minutes. */
static const struct {
	const char *re, *with;
	bool word;
	const char *const *units;
} check_builtin[] = {
	{ "0x[0-9a-fA-F]{4,}", "0x?", false, NULL },
	{ "[0-9]+(\\.[0-9]+)? ?(ns|us|µs|ms|s|sec|secs|seconds)", "<time>",
	  true, check_time_units },
	{ "[0-9]+(\\.[0-9]+)? ?([KMGT]i?B|kB|bytes)", "<memory>", true,
	  check_memory_units },
	{ "(/var)?/tmp/[^] \t\n'\":,)]+", "<tmp>", false, NULL },
};

int
check_noise_init(struct check_noise *nz, const char *const *extra,
    char *err, size_t errlen)
{
	size_t nextra = 0, i;
	int rc;

	while (extra != NULL && extra[nextra] != NULL)
		nextra++;
	nz->n = nitems(check_builtin) + nextra;
	nz->re = xcalloc(nz->n, sizeof *nz->re);
	nz->with = xcalloc(nz->n, sizeof *nz->with);
	for (i = 0; i < nz->n; i++) {
		bool own = i < nitems(check_builtin);

		rc = regcomp(&nz->re[i], own ? check_builtin[i].re :
		    extra[i - nitems(check_builtin)], REG_EXTENDED | REG_NEWLINE);
		if (rc != 0) {
			nz->n = i;
			check_noise_free(nz);
			return err_set(err, errlen, "--ignore '%s' is not a "
			    "regular expression", extra[i - nitems(
			    check_builtin)]);
		}
		nz->with[i] = own ? check_builtin[i].with : "<ignored>";
	}
	return 0;
}

void
check_noise_free(struct check_noise *nz)
{
	size_t i;

	for (i = 0; i < nz->n; i++)
		regfree(&nz->re[i]);
	free(nz->re);
	free(nz->with);
	nz->re = NULL;
	nz->n = 0;
}

static bool
check_wordch(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The length of the longest of units that text starts with, or 0. */
static size_t
check_unit_at(const char *text, const char *const *units)
{
	size_t best = 0, n;

	for (; *units != NULL; units++)
		if ((n = strlen(*units)) > best &&
		    strncmp(text, *units, n) == 0)
			best = n;
	return best;
}

/* text with every "<number>[ ]<unit>" that stands as a word of its own
 * replaced by with: what the regex [0-9]+(\.[0-9]+)? ?(units) matches
 * with check_replace's word rule, in one pass.  Only a digit run's first
 * digit can start such a match: every other has a digit before it. */
static char *
check_units(const char *text, const char *const *units, const char *with)
{
	const char *p = text, *q, *run;
	struct buf b;
	size_t u;

	buf_init(&b);
	while (*p != '\0') {
		if (!isdigit((unsigned char)*p)) {
			p++;
			continue;
		}
		run = p;
		while (isdigit((unsigned char)*p))
			p++;
		if (run > text && check_wordch(run[-1]))
			continue;
		q = p;
		if (*q == '.' && isdigit((unsigned char)q[1]))
			for (q++; isdigit((unsigned char)*q); q++)
				;
		if (*q == ' ')
			q++;
		if ((u = check_unit_at(q, units)) == 0 || check_wordch(q[u]))
			continue;
		buf_add(&b, text, (size_t)(run - text));
		buf_addstr(&b, with);
		text = p = q + u;
	}
	buf_addstr(&b, text);
	return buf_take(&b);
}

/*
 * text with every match of pattern i replaced; a new string.  Each
 * search is given the rest of the text by REG_STARTEND, with the text
 * before it for context (whether ^ matches is the character before's
 * business): without it, regexec measures the rest with strlen on
 * every call, and a text of many matches took time in the square of
 * its length.
 */
static char *
check_replace(const struct check_noise *nz, size_t i, const char *text)
{
	bool word = i < nitems(check_builtin) && check_builtin[i].word;
	size_t len = strlen(text), at = 0, so, eo;
	struct buf b;
	regmatch_t m;

	if (i < nitems(check_builtin) && check_builtin[i].units != NULL)
		return check_units(text, check_builtin[i].units, nz->with[i]);
	buf_init(&b);
	while (at < len) {
		m.rm_so = (regoff_t)at;
		m.rm_eo = (regoff_t)len;
		if (regexec(&nz->re[i], text, 1, &m, REG_STARTEND) != 0)
			break;
		so = (size_t)m.rm_so;
		eo = (size_t)m.rm_eo;
		if (eo == so && so >= len)
			break;		/* an empty match at the very end */
		if (eo == so || (word && (check_wordch(text[eo]) ||
		    (so > 0 && check_wordch(text[so - 1]))))) {
			/* empty, or not a word of its own: step over a char */
			buf_add(&b, text + at, so + 1 - at);
			at = so + 1;
		} else {
			buf_add(&b, text + at, so - at);
			buf_addstr(&b, nz->with[i]);
			at = eo;
		}
	}
	buf_addstr(&b, text + at);
	return buf_take(&b);
}

char *
check_normalise(const struct check_noise *nz, const char *text)
{
	char *s = xstrdup(text), *t;
	size_t i;

	for (i = 0; i < nz->n; i++) {
		t = check_replace(nz, i, s);
		free(s);
		s = t;
	}
	return s;
}

/* ---- outcomes as lines --------------------------------------------- */

/* A JSON string's text as a C string, a NUL in it (a cell may print
 * one) written \x00, so that what follows it is compared too; new. */
static char *
check_cstr(json_t *v)
{
	return xstrndup_nul(json_string_value(v), json_string_length(v));
}

/* "name:" and then the text, each line indented; null as "name: null". */
static void
check_text(const struct check_noise *nz, const char *name, json_t *v,
    struct buf *out)
{
	char *norm, *p, *nl, *text;

	if (!json_is_string(v)) {
		buf_printf(out, "%s: %s\n", name, json_is_null(v) || v == NULL ?
		    "null" : "(not text)");
		return;
	}
	buf_printf(out, "%s:\n", name);
	text = check_cstr(v);
	norm = check_normalise(nz, text);
	free(text);
	for (p = norm; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL) {
			buf_printf(out, "  %s\n  \\ no newline at the end\n", p);
			break;
		}
		buf_printf(out, "  %.*s\n", (int)(nl - p), p);
	}
	free(norm);
}

/* ---- a chat tool's result ------------------------------------------ */

/* Whether a line of a chat tool's result is what the harness added
 * around the cell's answer: an example loop's notes ("[coil restored]
 * ...", "[coil timeout] ...", "[coil] ..."), and a figure's line, the
 * loop's "[figure PATH: attached]" or coil --mcp's "[image/png: PATH]
 * (note)" and "[and N more figures]": a figure is an image, compared
 * by no text. */
static bool
check_added(const char *p, size_t n)
{
	const char *colon;
	size_t k;

	if (n < 2 || p[0] != '[')
		return false;
	if (n >= 6 && strncmp(p, "[coil", 5) == 0 && (p[5] == ']' ||
	    p[5] == ' '))
		return true;
	if ((n >= 8 && strncmp(p, "[figure ", 8) == 0) ||
	    (n >= 5 && strncmp(p, "[and ", 5) == 0 && p[n - 1] == ']' &&
	    strstr(p, " more figure") != NULL))
		return true;
	/* "[TYPE: ...": TYPE a MIME type, the figure's: a lowercase
	 * word, "/", and a word of lowercase, digits and ".+-" */
	if ((colon = memchr(p, ':', n)) == NULL || colon + 1 >= p + n ||
	    colon[1] != ' ')
		return false;
	for (k = 1; p + k < colon && islower((unsigned char)p[k]); k++)
		;
	if (k == 1 || p[k] != '/' || p + ++k >= colon)
		return false;
	for (; p + k < colon; k++)
		if (!islower((unsigned char)p[k]) &&
		    !isdigit((unsigned char)p[k]) && strchr(".+-", p[k]) == NULL)
			return false;
	return true;
}

/* A line of a traceback, its "File \"<cell N>\"" (a cell's code, by the
 * cell's number in the session that ran it) read as "<cell <n>>". */
static void
check_cell_line(struct buf *b, const char *p, size_t n)
{
	static const char mark[] = "File \"<cell ";
	const char *m = memmem(p, n, mark, sizeof mark - 1), *d;

	if (m == NULL) {
		buf_add(b, p, n);
		return;
	}
	d = m + sizeof mark - 1;
	while (d < p + n && isdigit((unsigned char)*d))
		d++;
	if (d == m + sizeof mark - 1 || d + 1 >= p + n || d[0] != '>' ||
	    d[1] != '"') {
		buf_add(b, p, n);
		return;
	}
	buf_add(b, p, (size_t)(m - p));
	buf_addstr(b, "File \"<cell <n>>");
	buf_add(b, d + 1, (size_t)(p + n - d - 1));
}

/* A chat tool's result (or a replayed cell's, worded as one) made
 * comparable; a new string.  The harness's added lines go; an "Out[N]:
 * " line's N is the cell's number in one session or the other (a log
 * may start mid-session), so it reads Out[<n>], and a traceback's
 * "<cell N>" <cell <n>>; "(no output)" is the
 * empty answer; where the text ends, blank or not, is no difference. */
static json_t *
check_chat_clean(json_t *v)
{
	char *text = check_cstr(v), *p, *nl, *num;
	struct buf b;
	size_t n;

	buf_init(&b);
	buf_addstr(&b, "");
	for (p = text; *p != '\0'; p = nl) {
		nl = strchr(p, '\n');
		nl = nl != NULL ? nl + 1 : p + strlen(p);
		n = (size_t)(nl - p);
		if (check_added(p, n - (nl[-1] == '\n')))
			continue;
		if (strncmp(p, "Out[", 4) == 0 && isdigit((unsigned char)p[4]) &&
		    (num = p + strspn(p + 4, "0123456789") + 4)[0] == ']') {
			buf_addstr(&b, "Out[<n>]");
			buf_add(&b, num + 1, (size_t)(nl - num - 1));
			continue;
		}
		check_cell_line(&b, p, n);
	}
	free(text);
	while (b.len > 0 && strchr(" \t\r\n", b.p[b.len - 1]) != NULL)
		b.p[--b.len] = '\0';
	if (strcmp(b.p, "(no output)") == 0)
		b.p[b.len = 0] = '\0';
	v = json_stringn_nocheck(b.p, b.len);
	buf_free(&b);
	return v;
}

/* The answer as the first chat harnesses read it: output, stderr, the
 * result, then the error's type and message. */
static json_t *
check_bare(json_t *got)
{
	json_t *err = json_object_get(got, "error");
	const char *keys[] = { "output", "stderr" }, *s;
	json_t *v;
	struct buf b;
	size_t i;

	buf_init(&b);
	buf_addstr(&b, "");
	for (i = 0; i < nitems(keys); i++)
		if (json_is_string(v = json_object_get(got, keys[i])))
			buf_add(&b, json_string_value(v), json_string_length(v));
	if ((s = json_string_value(json_object_get(got, "result"))) != NULL)
		buf_printf(&b, "%s\n", s);
	if (json_is_object(err))
		buf_printf(&b, "%s: %s\n", json_string_value(json_object_get(err,
		    "type")), json_string_value(json_object_get(err,
		    "message")));
	v = json_stringn_nocheck(b.p, b.len);
	buf_free(&b);
	return v;
}

/* The answer as coil --mcp and the example loops word it (wording.h);
 * NULL when got is no answer response_from_json reads. */
static json_t *
check_worded(json_t *got)
{
	struct response *r;
	char err[256];
	struct buf b;
	json_t *v;

	if ((r = response_from_json(got, err, sizeof err)) == NULL)
		return NULL;
	buf_init(&b);
	buf_addstr(&b, "");
	wording_exec(r, &b);
	response_free(r);
	v = json_stringn_nocheck(b.p, b.len);
	buf_free(&b);
	return v;
}

/* Whether a chat tool's result reads as worded for a model: a line of
 * its own that only the wording writes. */
static bool
check_looks_worded(const char *t)
{
	static const char *const marks[] = { "Out[<n>]: ", "[stderr]\n",
		"Traceback (most recent call last):\n",
		"[printed between cells]\n", "[stderr between cells]\n" };
	const char *p;
	size_t i;

	for (i = 0; i < nitems(marks); i++)
		for (p = t; (p = strstr(p, marks[i])) != NULL; p++)
			if (p == t || p[-1] == '\n')
				return true;
	return false;
}

/* Whether a and b read the same once the noise is out. */
static bool
check_same(const struct check_noise *nz, json_t *a, json_t *b)
{
	char *sa, *sb, *na, *nb;
	bool same;

	sa = check_cstr(a);
	sb = check_cstr(b);
	na = check_normalise(nz, sa);
	nb = check_normalise(nz, sb);
	same = strcmp(na, nb) == 0;
	free(sa);
	free(sb);
	free(na);
	free(nb);
	return same;
}

/*
 * A chat tool sees one text.  A recorded one (got has "text") is
 * cleaned (check_chat_clean); a replayed cell is worded both ways a
 * harness may have worded it, bare (check_bare) and as coil words it
 * for a model (check_worded), and compared as the one that reads as
 * the recording, want, does: so a result coil's MCP server or an
 * example loop gave, and one a harness of its own flattened, both
 * check.  When neither does, the form the recording looks like is
 * shown, so that the diff is of like with like.
 */
static json_t *
check_flatten(const struct check_noise *nz, json_t *want, json_t *got)
{
	json_t *v = json_object_get(got, "text"), *bare, *worded = NULL, *w;

	if (json_is_string(v))
		return check_chat_clean(v);
	v = check_bare(got);
	bare = check_chat_clean(v);
	json_decref(v);
	if ((v = check_worded(got)) != NULL) {
		worded = check_chat_clean(v);
		json_decref(v);
	}
	if (worded == NULL)
		return bare;
	if (!json_is_string(want)) {
		json_decref(worded);
		return bare;
	}
	w = check_chat_clean(want);
	if (check_same(nz, worded, w) || (!check_same(nz, bare, w) &&
	    check_looks_worded(json_string_value(w)))) {
		json_decref(bare);
		bare = worded;
	} else {
		json_decref(worded);
	}
	json_decref(w);
	return bare;
}

/* The error's type and message; a type written without its module
 * (a notebook's ename) is compared without the module. */
static void
check_error(const struct check_noise *nz, json_t *want, json_t *got,
    struct buf *out)
{
	const char *wt = json_string_value(json_object_get(want, "type"));
	const char *t = json_string_value(json_object_get(got, "type"));
	json_t *msg;

	if (!json_is_object(got)) {
		buf_addstr(out, "error: null\n");
		return;
	}
	if (t != NULL && wt != NULL && strchr(wt, '.') == NULL &&
	    strrchr(t, '.') != NULL)
		t = strrchr(t, '.') + 1;
	buf_printf(out, "error: %s\n", t != NULL ? t : "?");
	if (json_object_get(want, "message") != NULL) {
		msg = json_object_get(got, "message");
		check_text(nz, "message", msg, out);
	}
}

void
check_view(const struct check_noise *nz, json_t *fields, json_t *got,
    struct buf *out)
{
	static const char *const texts[] = { "output", "stderr", "result" };
	const char *st;
	json_t *v;
	size_t i;

	if ((st = json_string_value(json_object_get(fields, "status"))) !=
	    NULL)
		buf_printf(out, "status: %s\n", json_string_value(
		    json_object_get(got, "status")) ? json_string_value(
		    json_object_get(got, "status")) : "?");
	for (i = 0; i < nitems(texts); i++)
		if (json_object_get(fields, texts[i]) != NULL)
			check_text(nz, texts[i], json_object_get(got, texts[i]),
			    out);
	if ((v = json_object_get(fields, "error")) != NULL)
		check_error(nz, v, json_object_get(got, "error"), out);
	if (json_object_get(fields, "text") != NULL) {
		v = check_flatten(nz, json_object_get(fields, "text"), got);
		check_text(nz, "text", v, out);
		json_decref(v);
	}
}

/* ---- unified diff ---------------------------------------------------- */

#define DIFF_CONTEXT 3
/* Above this many line pairs the table would be too big: the texts are
 * shown as one change, whole. */
#define DIFF_MAX_CELLS (4u << 20)

struct lines {
	char **v;	/* into a copy of the text */
	uint32_t *h;	/* a hash of each, to tell most unequal ones apart */
	size_t n;
	char *copy;
};

static uint32_t
line_hash(const char *p)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

static void
lines_split(struct lines *l, const char *text)
{
	size_t cap = 0, i;
	char *p;

	l->copy = xstrdup(text);
	l->v = NULL;
	l->h = NULL;
	l->n = 0;
	for (p = l->copy; *p != '\0'; ) {
		char *nl = strchr(p, '\n');

		if (l->n == cap) {
			cap = cap ? 2 * cap : 64;
			l->v = xrealloc(l->v, cap * sizeof *l->v);
			l->h = xrealloc(l->h, cap * sizeof *l->h);
		}
		l->v[l->n++] = p;
		if (nl == NULL)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	for (i = 0; i < l->n; i++)
		l->h[i] = line_hash(l->v[i]);
}

static void
lines_free(struct lines *l)
{
	free(l->v);
	free(l->h);
	free(l->copy);
}

static bool
lines_eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->h[i] == b->h[j] && strcmp(a->v[i], b->v[j]) == 0;
}

/*
 * The edit script as one op a line of the merged sequence: ' ' both, '-'
 * a only, '+' b only; a new string of *n ops.  The lines both texts
 * begin and end with are equal; between them, from the table of the
 * longest common subsequence of every pair of suffixes.
 */
static char *
diff_script(const struct lines *a, const struct lines *b, size_t *n)
{
	size_t pre = 0, suf = 0, na, nb, i, j, k, w;
	unsigned *t;
	char *ops = xmalloc(a->n + b->n + 1);

	while (pre < a->n && pre < b->n && lines_eq(a, pre, b, pre))
		pre++;
	while (suf < a->n - pre && suf < b->n - pre &&
	    lines_eq(a, a->n - 1 - suf, b, b->n - 1 - suf))
		suf++;
	na = a->n - pre - suf;
	nb = b->n - pre - suf;
	w = nb + 1;
	memset(ops, ' ', pre);
	k = pre;
	if ((na + 1) * w > DIFF_MAX_CELLS) {
		memset(ops + k, '-', na);
		memset(ops + k + na, '+', nb);
		k += na + nb;
		goto out;
	}
	/* t[i * w + j]: the LCS of a's middle from i and b's from j */
	t = xcalloc((na + 1) * w, sizeof *t);
	for (i = na; i-- > 0; )
		for (j = nb; j-- > 0; )
			t[i * w + j] = lines_eq(a, pre + i, b, pre + j) ?
			    t[(i + 1) * w + j + 1] + 1 :
			    t[(i + 1) * w + j] > t[i * w + j + 1] ?
			    t[(i + 1) * w + j] : t[i * w + j + 1];
	for (i = j = 0; i < na || j < nb; ) {
		if (i < na && j < nb && lines_eq(a, pre + i, b, pre + j)) {
			ops[k++] = ' ';
			i++, j++;
		} else if (j == nb || (i < na &&
		    t[(i + 1) * w + j] >= t[i * w + j + 1])) {
			ops[k++] = '-';
			i++;
		} else {
			ops[k++] = '+';
			j++;
		}
	}
	free(t);
out:
	memset(ops + k, ' ', suf);
	*n = k + suf;
	return ops;
}

/* One hunk: ops[from..to) of the script, starting at lines ai, bi. */
static void
diff_hunk(const struct lines *a, const struct lines *b, const char *ops,
    size_t from, size_t to, size_t ai, size_t bi, struct buf *out)
{
	size_t k, na = 0, nb = 0;

	for (k = from; k < to; k++) {
		na += ops[k] != '+';
		nb += ops[k] != '-';
	}
	buf_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", na ? ai + 1 : ai, na,
	    nb ? bi + 1 : bi, nb);
	for (k = from; k < to; k++) {
		const char *s = ops[k] == '+' ? b->v[bi] : a->v[ai];

		buf_printf(out, "%c%s\n", ops[k], s);
		if (ops[k] != '+')
			ai++;
		if (ops[k] != '-')
			bi++;
	}
}

bool
check_diff(const char *ta, const char *tb, const char *label_a,
    const char *label_b, struct buf *out)
{
	struct lines a, b;
	size_t n, k, start, end, ai = 0, bi = 0, sa, sb, m;
	char *ops;

	if (strcmp(ta, tb) == 0)
		return false;
	lines_split(&a, ta);
	lines_split(&b, tb);
	ops = diff_script(&a, &b, &n);
	buf_printf(out, "--- %s\n+++ %s\n", label_a, label_b);
	for (k = 0; k < n; ) {
		if (ops[k] == ' ') {
			ai++, bi++, k++;
			continue;
		}
		/* A change: its hunk runs back DIFF_CONTEXT lines, and on
		 * until DIFF_CONTEXT * 2 equal lines in a row (or the end). */
		start = k > DIFF_CONTEXT ? k - DIFF_CONTEXT : 0;
		sa = ai - (k - start), sb = bi - (k - start);
		for (end = k, m = 0; end < n && m <= 2 * DIFF_CONTEXT; end++)
			m = ops[end] == ' ' ? m + 1 : 0;
		if (m > DIFF_CONTEXT)
			end -= m - DIFF_CONTEXT;
		diff_hunk(&a, &b, ops, start, end, sa, sb, out);
		for (; k < end; k++) {
			ai += ops[k] != '+';
			bi += ops[k] != '-';
		}
	}
	free(ops);
	lines_free(&a);
	lines_free(&b);
	return true;
}

/* ---- what a cell did, and whether it may run again ------------------ */

/* What check_first_diff shows of a line that differs. */
#define CHECK_LINE_MAX 160

/* A line of a view as check_first_diff shows it: without its indent,
 * cut at a character's end. */
static json_t *
check_line(const char *p, size_t n)
{
	if (n >= 2 && p[0] == ' ' && p[1] == ' ') {
		p += 2;
		n -= 2;
	}
	if (n > CHECK_LINE_MAX)
		n = utf8_complete_prefix(p, CHECK_LINE_MAX);
	return json_stringn(p, n);
}

json_t *
check_first_diff(const char *was, const char *now)
{
	const char *a = was, *b = now, *field = "";
	size_t fl = 0, la, lb;

	for (;;) {
		la = strcspn(a, "\n");
		lb = strcspn(b, "\n");
		if (la > 0 && *a != ' ') {
			field = a;
			fl = strcspn(a, ":");
		}
		if (la != lb || memcmp(a, b, la) != 0 || a[la] == '\0' ||
		    b[lb] == '\0')
			break;
		a += la + 1;
		b += lb + 1;
	}
	return json_pack("{s:s%, s:o, s:o}", "field", field, fl, "was",
	    check_line(a, la), "now", check_line(b, lb));
}

void
check_once(const char *status, json_t *effects, unsigned long long more,
    bool read_input, char *why, size_t len)
{
	const char *kind, *path;
	json_t *e;
	size_t i;

	*why = '\0';
	if (read_input) {
		snprintf(why, len, "it read input");
		return;
	}
	if (status != NULL && (strcmp(status, "timeout") == 0 ||
	    strcmp(status, "interrupted") == 0 ||
	    strcmp(status, "crashed") == 0)) {
		snprintf(why, len, "%s", strcmp(status, "timeout") == 0 ?
		    "it ran past its timeout" : strcmp(status, "crashed") ==
		    0 ? "it crashed part way" : "it was interrupted");
		return;
	}
	json_array_foreach(effects, i, e) {
		kind = json_string_value(json_object_get(e, "kind"));
		path = json_string_value(json_object_get(e, "path"));
		if (json_is_true(json_object_get(e, "denied")) || kind == NULL)
			continue;	/* refused: it did nothing */
		if (strcmp(kind, "process") == 0)
			snprintf(why, len, "it started a process (%.80s)",
			    json_string_value(json_object_get(e, "cmd")));
		else if (strcmp(kind, "connect") == 0)
			snprintf(why, len, "it connected to %.80s",
			    json_string_value(json_object_get(e, "to")));
		else
			snprintf(why, len, "it %s '%.80s'", strcmp(kind,
			    "delete") == 0 ? "deleted" : strcmp(kind, "rename")
			    == 0 ? "renamed" : "wrote", path != NULL ? path :
			    "?");
		return;
	}
	if (more > 0)
		snprintf(why, len, "it did %llu things outside the namespace "
		    "that coil did not list", more);
}
