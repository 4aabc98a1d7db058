/*
 * complete.h - Tab completion at readline's prompt, for plain mode and
 * the curses UI alike.  Supervisor only.  The worker finds the matches
 * (the complete op, complete.py); this file asks for them with
 * readline's line and turns the answer into readline's match list.
 */
#ifndef COIL_COMPLETE_H
#define COIL_COMPLETE_H

#include <stddef.h>

#include <jansson.h>

/* rl_completer_word_break_characters: a word ends at Python's
 * operators and brackets, not at '.' (os.pa completes os's names). */
#define COMPLETE_WORD_BREAKS " \t\n\"'`@$><=;|&{(+-*/%^~[],:!"

/* The complete op's request for rl_line_buffer, its cursor at rl_point
 * (the protocol counts characters, readline bytes).  New reference. */
json_t *complete_request(void);

/* readline's match list for the complete op's answer (fields: its
 * "matches", each replacing rl_line_buffer from its "start"), in place
 * of readline's word at byte start, text: NULL when it has none.  Sets
 * rl_completion_append_character.  Caller frees (readline does). */
char **complete_matches(json_t *fields, const char *text, int start);

/* A readline match list: out[1..n] (n >= 1) the matches; fills out[0]
 * with their common prefix, and with one match leaves it alone, as
 * readline wants.  Returns out. */
char **complete_matches_done(char **out, size_t n);

#endif
