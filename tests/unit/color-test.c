/*
 * color-test.c - the curses UI's colour as the pure functions they are
 * (src/ui/ui-color.c): SGR sequences read into attributes and palette
 * colours (the 16, 256-colour and truecolour forms, with ';' and ':',
 * resets whole and in part), what is not an SGR refused; palette
 * colours brought to 8 and 16; Python's bytes classed across the lines
 * of a cell (a triple-quoted string left open); the next line's
 * indentation after a colon, a return, and otherwise.
 */
#include "config.h"

#include <string.h>

#include "tap.h"
#include "ui-color.h"

static struct ui_sgr
sgr(const char *seq)
{
	struct ui_sgr s;
	size_t n = ui_sgr_len(seq, strlen(seq));

	ui_sgr_reset(&s);
	if (n > 0)
		ui_sgr_apply(&s, seq, n);
	return s;
}

static void
test_sgr(void)
{
	struct ui_sgr s;

	tap_ok(ui_sgr_len("\x1b[31mred", 8) == 5, "an SGR's length");
	tap_ok(ui_sgr_len("\x1b[mx", 4) == 3, "ESC [ m is one");
	tap_ok(ui_sgr_len("\x1b[2J", 4) == 0, "a CSI that is no SGR is none");
	tap_ok(ui_sgr_len("\x1b]0;t\x07", 6) == 0, "an OSC is none");
	tap_ok(ui_sgr_len("\x1b[31", 4) == 0, "a sequence cut short is none");
	s = sgr("\x1b[31m");
	tap_ok(s.fg == 1 && s.bg == -1 && s.attrs == 0, "31 is red");
	s = sgr("\x1b[1;4;7;3;2;44m");
	tap_ok(s.attrs == (UI_SGR_BOLD | UI_SGR_UNDERLINE | UI_SGR_REVERSE |
	    UI_SGR_ITALIC | UI_SGR_DIM) && s.bg == 4, "attributes and a bg");
	s = sgr("\x1b[1;31;0m");
	tap_ok(s.attrs == 0 && s.fg == -1, "0 resets what came before it");
	s = sgr("\x1b[1;31;22;39m");
	tap_ok(s.attrs == 0 && s.fg == -1, "22 and 39 undo bold and the fg");
	s = sgr("\x1b[38;5;208m");
	tap_ok(s.fg == 208, "38;5;N");
	s = sgr("\x1b[38:5:33;1m");
	tap_ok(s.fg == 33 && s.attrs == UI_SGR_BOLD, "38:5:N, then bold");
	s = sgr("\x1b[38;2;255;0;0m");
	tap_ok(s.fg == 196, "truecolour red is 196");
	s = sgr("\x1b[48:2::0:0:255;4m");
	tap_ok(s.bg == 21 && s.attrs == UI_SGR_UNDERLINE,
	    "48:2::R:G:B with the colour space left empty");
	s = sgr("\x1b[38;2;1;2m");
	tap_ok(s.fg == -1, "truecolour cut short leaves the fg alone");
	s = sgr("\x1b[92;103m");
	tap_ok(s.fg == 10 && s.bg == 11, "bright colours");
	s = sgr("\x1b[4:0m");
	tap_ok(s.attrs == 0, "4:0 is no underline");
	tap_ok(ui_color_nearest(196, 256) == 196, "256 colours as they are");
	tap_ok(ui_color_nearest(196, 16) == 9, "196 is bright red of 16");
	tap_ok(ui_color_nearest(196, 8) == 1, "and red of 8");
	tap_ok(ui_color_nearest(12, 8) == 4, "bright blue of 8 is blue");
	tap_ok(ui_color_nearest(-1, 8) == -1, "the default stays");
}

/* The classes of s's bytes as letters: . plain, k keyword, b builtin,
 * s string, c comment, n number, d decorator. */
static const char *
classes(const char *s, int *state)
{
	static char out[256];
	unsigned char cls[256];
	size_t i, n = strlen(s);

	ui_color_python(s, n, cls, state);
	for (i = 0; i < n; i++)
		out[i] = ".kbscnd"[cls[i]];
	out[n] = '\0';
	return out;
}

static void
want(const char *line, int *state, const char *cls, const char *what)
{
	const char *got = classes(line, state);

	if (!tap_ok(strcmp(got, cls) == 0, "%s", what))
		printf("# %s\n# got  %s\n# want %s\n", line, got, cls);
}

static void
test_python(void)
{
	int st = 0;

	want("def f(x): return len(x)  # n", &st,
	    "kkk.......kkkkkk.bbb.....ccc", "keywords, a builtin, a comment");
	want("y = np.sum(3.5e-3) + .5j", &st,
	    "...........nnnnnn....nnn", "an attribute is no builtin; numbers");
	want("s = rb'a\\'b' + f\"{x}\" 'c#'", &st,
	    "....ssssssss...ssssss.ssss", "prefixes, an escaped quote, a # "
	    "inside a string");
	want("  @functools.wraps(g)", &st,
	    "..dddddddddddddddd...", "a decorator");
	want("m = x @ y", &st, ".........", "@ as an operator is no decorator");
	want("doc = \"\"\"one 'two'", &st, "......ssssssssssss",
	    "a triple-quoted string opens");
	tap_ok(st != 0, "and stays open at the end of the line");
	want("# not a comment", &st, "sssssssssssssss", "the next line is in it");
	want("end\"\"\" if True else None", &st,
	    "ssssss.kk.kkkk.kkkk.kkkk", "it closes, code goes on");
	tap_ok(st == 0, "closed");
	want("x = 'a\\", &st, "....sss", "a backslash continues a string");
	want("b' + 1", &st, "ss...n", "on the next line");
	want("t = 'open", &st, "....sssss", "an unterminated string");
	tap_ok(st == 0, "ends with its line");
}

static int
indent(const char *line, int *st)
{
	return ui_color_indent(line, strlen(line), st);
}

static void
test_indent(void)
{
	int st = 0;

	tap_ok(indent("def f(x):", &st) == 4, "after a colon: 4 more");
	tap_ok(indent("    if x:   # why", &st) == 8, "a comment after it");
	tap_ok(indent("        return 1", &st) == 4, "after return: 4 fewer");
	tap_ok(indent("    pass", &st) == 0, "after pass");
	tap_ok(indent("    y = 2", &st) == 4, "the same otherwise");
	tap_ok(indent("    s = 'a:'", &st) == 4, "a colon in a string is none");
	tap_ok(indent("    returned = 1", &st) == 4, "a name is no return");
	tap_ok(indent("\tx = 1", &st) == 8, "a tab to the next stop of 8");
	tap_ok(indent("  d = '''doc:", &st) == 2 && st != 0,
	    "inside a string: the same, never a colon's");
	tap_ok(indent("pass'''", &st) == 0 && st == 0,
	    "a string's last line is no pass");
	tap_ok(indent("    return", &st) == 0, "a bare return");
	tap_ok(indent("return", &st) == 0, "never below 0");
}

int
main(void)
{
	test_sgr();
	test_python();
	test_indent();
	return tap_done();
}
