/*
 * check.h - two outcomes of one cell compared: each as lines of text
 * with the noise in them (addresses, durations, temp paths) replaced,
 * and the unified diff of the two.  Pure: no I/O, no session
 * (tests/unit/check-test.c).  --replay --check compares a cell with its
 * recording through it, and the session a redone cell with what it
 * first answered (session-redo.c).
 */
#ifndef COIL_CHECK_H
#define COIL_CHECK_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>

#include "util.h"

/* The noise an outcome's text is freed of before comparing: object
 * addresses, durations, memory figures, temp paths, and the --ignore
 * patterns. */
struct check_noise {
	regex_t *re;
	const char **with;	/* what each match becomes */
	size_t n;
};

/* The built-in patterns and then each of extra (NULL-ended; checked
 * by options.c already): 0, or -1 with a message. */
int check_noise_init(struct check_noise *nz, const char *const *extra,
    char *err, size_t errlen);
void check_noise_free(struct check_noise *nz);
/* text with the noise replaced; a new string. */
char *check_normalise(const struct check_noise *nz, const char *text);

/* An outcome as lines to compare: the fields expect holds (status,
 * output, stderr, result, error.type, error.message; "text" for a chat
 * tool result), taken from got (a response object, or for "text" the
 * response as a chat tool sees it: flattened bare, or worded as coil
 * words it for a model (wording.h), whichever reads as expect's text
 * does; a recorded text and the worded one without what a harness
 * adds, its notes and figure lines, and with Out[N]'s and a
 * traceback's <cell N> numbers left out).  Normalised.  Appends to
 * out. */
void check_view(const struct check_noise *nz, json_t *fields, json_t *got,
    struct buf *out);
/* The unified diff of two texts (3 lines of context) under the labels,
 * appended to out; false when they are equal (nothing appended). */
bool check_diff(const char *a, const char *b, const char *label_a,
    const char *label_b, struct buf *out);

/* The first line of two views (check_view's) that differs, as
 * {"field", "was", "now"}: the field is the heading above it ("output",
 * "result", ...), each line without its indent and cut to a readable
 * length.  A new object. */
json_t *check_first_diff(const char *was, const char *now);

/*
 * Why a cell may not be run twice, into why ("" when it may): it read
 * input (read_input), was stopped part way (status "timeout",
 * "interrupted" or "crashed"), or did something outside the namespace
 * that its effects list (a file written, deleted or renamed, a process
 * started, a connection; a refused one did nothing) or count beyond the
 * list (more).  The one rule of crash recovery's redo (session-redo.c)
 * and of --resume (replay-resume.c).  effects: an array or NULL.
 */
void check_once(const char *status, json_t *effects,
    unsigned long long more, bool read_input, char *why, size_t len);

#endif
