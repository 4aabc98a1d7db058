/*
 * complete.c - Tab completion at readline's prompt (see complete.h):
 * plain mode's and the curses UI's.  Supervisor only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/readline.h>

#include "complete.h"
#include "termsafe.h"
#include "util.h"

json_t *
complete_request(void)
{
	int cursor = 0, k;

	/* The protocol's cursor counts characters; rl_point counts bytes. */
	for (k = 0; k < rl_point; k++)
		if ((rl_line_buffer[k] & 0xc0) != 0x80)
			cursor++;
	return json_pack("{s:s, s:s, s:i}", "op", "complete", "code",
	    rl_line_buffer, "cursor", cursor);
}

/* The byte offset in s of its character number chars. */
static int
complete_byte_of(const char *s, long long chars)
{
	int i;

	for (i = 0; s[i] != '\0'; i++)
		if ((s[i] & 0xc0) != 0x80 && chars-- == 0)
			break;
	return i;
}

/* One match as readline wants it: replacing its word, which starts at
 * byte start, where the worker's match replaces from byte wstart (after
 * "import os." readline's word is "os.pa", the worker's "pa"). */
static char *
complete_match(const char *m, int start, int wstart)
{
	char *out;

	if (wstart > start) {
		xasprintf(&out, "%.*s%s", wstart - start, rl_line_buffer +
		    start, m);
		return out;
	}
	if (start - wstart <= (int)strlen(m))
		return xstrdup(m + (start - wstart));
	return xstrdup(m);
}

char **
complete_matches(json_t *fields, const char *text, int start)
{
	json_t *m = json_object_get(fields, "matches");
	size_t i, k, n = json_array_size(m);
	char **out;
	int wstart;

	if (n == 0)
		return NULL;
	wstart = complete_byte_of(rl_line_buffer, json_integer_value(
	    json_object_get(fields, "start")));
	/* No space after a key or a file name: a quote or more path
	 * follows, not the next word. */
	rl_completion_append_character = wstart > 0 && strchr("\"'/",
	    rl_line_buffer[wstart - 1]) != NULL ? '\0' : ' ';
	/* readline wants the common prefix first, then the matches.  It
	 * prints them as they are, so a match that would drive the
	 * terminal (a key a cell chose, a file name) is left out. */
	out = xcalloc(n + 2, sizeof *out);
	for (i = 0, k = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(m, i));

		if (s != NULL && !termsafe_clean(s, strlen(s)))
			continue;
		out[++k] = s != NULL ? complete_match(s, start, wstart) :
		    xstrdup(text);
	}
	if (k == 0) {
		free(out);
		return NULL;
	}
	return complete_matches_done(out, k);
}

char **
complete_matches_done(char **out, size_t n)
{
	size_t common = strlen(out[1]), i, j;

	for (i = 2; i <= n; i++) {
		for (j = 0; j < common && out[i][j] == out[1][j]; j++)
			;
		common = j;
	}
	out[0] = xstrndup(out[1], common);
	if (n == 1) {
		free(out[1]);
		out[1] = NULL;
	}
	return out;
}
