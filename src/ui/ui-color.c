/*
 * ui-color.c - colour for the curses UI as pure functions (see
 * ui-color.h): SGR sequences read into a state, palette colours brought
 * to what the terminal has, Python classed byte by byte, the next
 * line's indentation.  Supervisor only; no curses, no I/O, no state.
 */
#include "config.h"

#include <string.h>

#include "ui-color.h"

#define UC_ESC 0x1b

void
ui_sgr_reset(struct ui_sgr *s)
{
	s->fg = s->bg = -1;
	s->attrs = 0;
}

size_t
ui_sgr_len(const char *p, size_t n)
{
	size_t i;

	if (n < 3 || p[0] != UC_ESC || p[1] != '[')
		return 0;
	for (i = 2; i < n && i < UI_SGR_MAX; i++) {
		if (p[i] == 'm')
			return i + 1;
		if (!((p[i] >= '0' && p[i] <= '9') || p[i] == ';' ||
		    p[i] == ':'))
			return 0;
	}
	return 0;
}

/* The xterm palette's entry c as red, green and blue. */
static void
uc_rgb_of(int c, int *r, int *g, int *b)
{
	static const unsigned char base[16][3] = {
		{ 0, 0, 0 }, { 205, 0, 0 }, { 0, 205, 0 }, { 205, 205, 0 },
		{ 0, 0, 238 }, { 205, 0, 205 }, { 0, 205, 205 },
		{ 229, 229, 229 }, { 127, 127, 127 }, { 255, 0, 0 },
		{ 0, 255, 0 }, { 255, 255, 0 }, { 92, 92, 255 },
		{ 255, 0, 255 }, { 0, 255, 255 }, { 255, 255, 255 },
	};
	static const int level[6] = { 0, 95, 135, 175, 215, 255 };

	if (c < 16) {
		*r = base[c][0];
		*g = base[c][1];
		*b = base[c][2];
	} else if (c < 232) {
		c -= 16;
		*r = level[c / 36];
		*g = level[c / 6 % 6];
		*b = level[c % 6];
	} else {
		*r = *g = *b = 8 + 10 * (c - 232);
	}
}

static int
uc_dist(int c, int r, int g, int b)
{
	int cr, cg, cb;

	uc_rgb_of(c, &cr, &cg, &cb);
	return (cr - r) * (cr - r) + (cg - g) * (cg - g) + (cb - b) * (cb - b);
}

/* The nearest of palette entries from..to-1 to r, g, b. */
static int
uc_nearest(int from, int to, int r, int g, int b)
{
	int c, best = from, d, most = -1;

	for (c = from; c < to; c++) {
		d = uc_dist(c, r, g, b);
		if (most < 0 || d < most) {
			most = d;
			best = c;
		}
	}
	return best;
}

int
ui_color_rgb(int r, int g, int b)
{
	return uc_nearest(16, 256, r, g, b);
}

int
ui_color_nearest(int c, int ncolors)
{
	int r, g, b;

	if (c < 0 || ncolors >= 256)
		return c;
	if (c < 16)
		return ncolors >= 16 ? c : c & 7;
	uc_rgb_of(c, &r, &g, &b);
	return uc_nearest(0, ncolors >= 16 ? 16 : 8, r, g, b);
}

/* The colour 38, 48 or 58 at v[i] names with the numbers after it
 * (;5;N, ;2;R;G;B, or the same with colons, 38:2::R:G:B too) into
 * *col; returns the index of the last number it took. */
static int
uc_sgr_color(const int *v, const bool *sub, int k, int i, int *col)
{
	int j = i + 1, end = j, a;
	bool colon = j < k && sub[j];

	if (j >= k)
		return i;
	if (colon)
		while (end + 1 < k && sub[end + 1])
			end++;
	if (v[j] == 5 && j + 1 < k) {
		*col = v[j + 1] <= 255 ? v[j + 1] : -2;
		return colon ? end : j + 1;
	}
	if (v[j] == 2) {
		a = colon && end - j == 4 ? j + 2 : j + 1;
		if (a + 2 < k) {
			*col = v[a] <= 255 && v[a + 1] <= 255 && v[a + 2] <=
			    255 ? ui_color_rgb(v[a], v[a + 1], v[a + 2]) : -2;
			return colon ? end : a + 2;
		}
		return k - 1;
	}
	return colon ? end : j;
}

/* One plain parameter: an attribute on or off, a colour of the 16. */
static void
uc_sgr_one(struct ui_sgr *s, int x, bool off)
{
	static const unsigned on[] = { [1] = UI_SGR_BOLD, [2] = UI_SGR_DIM,
	    [3] = UI_SGR_ITALIC, [4] = UI_SGR_UNDERLINE, [7] = UI_SGR_REVERSE,
	    [21] = UI_SGR_UNDERLINE };

	if (x == 0)
		ui_sgr_reset(s);
	else if (x == 4 && off)
		s->attrs &= ~(unsigned)UI_SGR_UNDERLINE;	/* 4:0 */
	else if (x < (int)(sizeof on / sizeof on[0]) && on[x] != 0)
		s->attrs |= on[x];
	else if (x == 22)
		s->attrs &= ~(unsigned)(UI_SGR_BOLD | UI_SGR_DIM);
	else if (x == 23)
		s->attrs &= ~(unsigned)UI_SGR_ITALIC;
	else if (x == 24)
		s->attrs &= ~(unsigned)UI_SGR_UNDERLINE;
	else if (x == 27)
		s->attrs &= ~(unsigned)UI_SGR_REVERSE;
	else if (x >= 30 && x <= 37)
		s->fg = (short)(x - 30);
	else if (x == 39)
		s->fg = -1;
	else if (x >= 40 && x <= 47)
		s->bg = (short)(x - 40);
	else if (x == 49)
		s->bg = -1;
	else if (x >= 90 && x <= 97)
		s->fg = (short)(x - 90 + 8);
	else if (x >= 100 && x <= 107)
		s->bg = (short)(x - 100 + 8);
}

void
ui_sgr_apply(struct ui_sgr *s, const char *p, size_t n)
{
	int v[UI_SGR_MAX], k = 1, i, col;
	bool sub[UI_SGR_MAX];
	size_t j;

	if (n < 3)
		return;
	/* the numbers between ESC [ and m; sub: it came after a ':' */
	v[0] = 0;
	sub[0] = false;
	for (j = 2; j + 1 < n && k < UI_SGR_MAX; j++) {
		if (p[j] == ';' || p[j] == ':') {
			v[k] = 0;
			sub[k++] = p[j] == ':';
		} else if (v[k - 1] < 100000) {
			v[k - 1] = v[k - 1] * 10 + (p[j] - '0');
		}
	}
	for (i = 0; i < k; i++) {
		if (v[i] == 38 || v[i] == 48 || v[i] == 58) {
			col = -2;
			j = (size_t)uc_sgr_color(v, sub, k, i, &col);
			if (col >= -1 && v[i] == 38)
				s->fg = (short)col;
			else if (col >= -1 && v[i] == 48)
				s->bg = (short)col;
			i = (int)j;
			continue;
		}
		uc_sgr_one(s, v[i], i + 1 < k && sub[i + 1] && v[i + 1] == 0);
		while (i + 1 < k && sub[i + 1])
			i++;	/* 4:3 and the like: the style is underline */
	}
}

/* ---- Python ---------------------------------------------------------- */

static const char *const uc_keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await",
	"break", "class", "continue", "def", "del", "elif", "else", "except",
	"finally", "for", "from", "global", "if", "import", "in", "is",
	"lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
	"while", "with", "yield",
};

static const char *const uc_builtins[] = {
	"abs", "all", "any", "ascii", "bin", "bool", "breakpoint",
	"bytearray", "bytes", "callable", "chr", "classmethod", "compile",
	"complex", "delattr", "dict", "dir", "divmod", "enumerate", "eval",
	"exec", "filter", "float", "format", "frozenset", "getattr",
	"globals", "hasattr", "hash", "help", "hex", "id", "input", "int",
	"isinstance", "issubclass", "iter", "len", "list", "locals", "map",
	"max", "memoryview", "min", "next", "object", "oct", "open", "ord",
	"pow", "print", "property", "range", "repr", "reversed", "round",
	"set", "setattr", "slice", "sorted", "staticmethod", "str", "sum",
	"super", "tuple", "type", "vars", "zip", "__import__", "Ellipsis",
	"NotImplemented", "BaseException", "Exception", "ArithmeticError",
	"AssertionError", "AttributeError", "EOFError", "ImportError",
	"IndexError", "KeyError", "KeyboardInterrupt", "LookupError",
	"ModuleNotFoundError", "NameError", "NotImplementedError", "OSError",
	"RuntimeError", "StopIteration", "SyntaxError", "SystemExit",
	"TypeError", "ValueError", "ZeroDivisionError", "Warning",
};

enum { UC_NONE, UC_TRIPLE1, UC_TRIPLE2, UC_CONT1, UC_CONT2 };

static bool
uc_in(const char *const *list, size_t n, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
			return true;
	return false;
}

static bool
uc_ident(unsigned char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c >= 0x80 || (!first && c >= '0' && c <= '9');
}

/* A string's prefix: r, b, u, f and the pairs of r with b or f. */
static bool
uc_prefix(const char *s, size_t n)
{
	char a = n > 0 ? (char)(s[0] | 0x20) : 0;
	char b = n > 1 ? (char)(s[1] | 0x20) : 0;

	if (n == 1)
		return strchr("rbuf", a) != NULL;
	return n == 2 && ((a == 'r' && (b == 'b' || b == 'f')) ||
	    (b == 'r' && (a == 'b' || a == 'f')));
}

/* From s[i], inside the string *state says: the index past its closing
 * quote (and *state 0), or n when the line ends first (*state still
 * open for a triple-quoted string or a backslash at the end). */
static size_t
uc_string_end(const char *s, size_t n, size_t i, int *state)
{
	char q = *state == UC_TRIPLE1 || *state == UC_CONT1 ? '\'' : '"';
	bool triple = *state == UC_TRIPLE1 || *state == UC_TRIPLE2;

	while (i < n) {
		if (s[i] == '\\') {
			if (i + 1 == n) {
				*state = triple ? *state : q == '\'' ?
				    UC_CONT1 : UC_CONT2;
				return n;
			}
			i += 2;
			continue;
		}
		if (s[i] == q && (!triple || (i + 2 < n && s[i + 1] == q &&
		    s[i + 2] == q))) {
			*state = UC_NONE;
			return i + (triple ? 3 : 1);
		}
		i++;
	}
	if (!triple)
		*state = UC_NONE;	/* unterminated: the line ends it */
	return n;
}

/* A string whose quote is at s[q] (its prefix from s[i]): its end. */
static size_t
uc_string(const char *s, size_t n, size_t q, int *state)
{
	bool triple = q + 2 < n && s[q + 1] == s[q] && s[q + 2] == s[q];

	if (s[q] == '\'')
		*state = triple ? UC_TRIPLE1 : UC_CONT1;
	else
		*state = triple ? UC_TRIPLE2 : UC_CONT2;
	return uc_string_end(s, n, q + (triple ? 3 : 1), state);
}

static size_t
uc_number(const char *s, size_t n, size_t i)
{
	size_t j = i;

	while (j < n && (uc_ident((unsigned char)s[j], false) ||
	    s[j] == '.' || ((s[j] == '+' || s[j] == '-') && j > i &&
	    (s[j - 1] == 'e' || s[j - 1] == 'E') && (s[i] != '0' ||
	    i + 1 >= n || (s[i + 1] | 0x20) != 'x'))))
		j++;
	return j;
}

/* An identifier from s[i] to j: a keyword, a builtin (not after a '.',
 * where it is some object's attribute), else plain. */
static unsigned char
uc_word(const char *s, size_t i, size_t j, bool dot)
{
	if (uc_in(uc_keywords, sizeof uc_keywords / sizeof *uc_keywords,
	    s + i, j - i))
		return UT_KEYWORD;
	if (!dot && uc_in(uc_builtins, sizeof uc_builtins /
	    sizeof *uc_builtins, s + i, j - i))
		return UT_BUILTIN;
	return UT_PLAIN;
}

void
ui_color_python(const char *s, size_t n, unsigned char *cls, int *state)
{
	size_t i = 0, j;
	bool dot = false, first = true;
	unsigned char c, k;

	if (*state != UC_NONE) {
		i = uc_string_end(s, n, 0, state);
		memset(cls, UT_STRING, i);
		first = false;
	}
	while (i < n) {
		c = (unsigned char)s[i];
		if (c == ' ' || c == '\t') {
			cls[i++] = UT_PLAIN;
			continue;
		}
		if (c == '#') {
			memset(cls + i, UT_COMMENT, n - i);
			return;
		}
		j = i + 1;
		k = UT_PLAIN;
		if (c == '\'' || c == '"') {
			j = uc_string(s, n, i, state);
			k = UT_STRING;
		} else if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '9' && !dot)) {
			j = uc_number(s, n, i);
			k = UT_NUMBER;
		} else if (uc_ident(c, true)) {
			for (j = i; j < n && uc_ident((unsigned char)s[j],
			    false); j++)
				;
			if (j < n && (s[j] == '\'' || s[j] == '"') &&
			    uc_prefix(s + i, j - i)) {
				j = uc_string(s, n, j, state);
				k = UT_STRING;
			} else {
				k = uc_word(s, i, j, dot);
			}
		} else if (c == '@' && first) {
			while (j < n && (uc_ident((unsigned char)s[j], false) ||
			    s[j] == '.'))
				j++;
			k = UT_DECORATOR;
		}
		memset(cls + i, k, j - i);
		dot = c == '.';
		first = false;
		i = j;
	}
}

int
ui_color_indent(const char *s, size_t n, int *state)
{
	static const char *const out[] = { "return", "pass", "raise",
	    "break", "continue" };
	unsigned char cls[4096];
	size_t i, j, last;
	int ind = 0;
	bool open = *state != UC_NONE;

	if (n > sizeof cls)
		n = sizeof cls;	/* a line this long: its head decides */
	ui_color_python(s, n, cls, state);
	for (i = 0; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
		ind = s[i] == '\t' ? (ind / 8 + 1) * 8 : ind + 1;
	if (*state != UC_NONE)
		return ind;	/* inside a string: its text is not code */
	for (last = n; last > 0 && (cls[last - 1] == UT_COMMENT ||
	    s[last - 1] == ' ' || s[last - 1] == '\t'); last--)
		;
	if (last > 0 && s[last - 1] == ':' && cls[last - 1] == UT_PLAIN)
		return ind + 4;
	for (j = i; j < n && uc_ident((unsigned char)s[j], false); j++)
		;
	if (!open && j > i && cls[i] == UT_KEYWORD && uc_in(out, sizeof out /
	    sizeof *out, s + i, j - i))
		return ind >= 4 ? ind - 4 : 0;
	return ind;
}
