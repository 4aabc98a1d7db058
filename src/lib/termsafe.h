/*
 * termsafe.h - a cell's bytes made safe to show on a person's terminal.
 *
 * Supervisor only (plain mode, --replay); pure: no I/O, no global state.
 * A cell (and a transcript, which is the same cells' words) must not
 * drive the terminal: set its title or clipboard (OSC 0, 2, 52), make it
 * type into coil's own input (reports asked by CSI 21t, DA, DECRQSS) or
 * anything else that a control sequence does.  So the bytes pass the way
 * `less -R` shows them:
 *
 *   - kept as they are: printable ASCII, valid UTF-8 text, newline, tab,
 *     backspace, carriage return, and SGR (ESC [ digits ; : ... m, the
 *     colours and attributes; at most TERMSAFE_SGR_MAX bytes long);
 *   - shown escaped: every other C0 control and DEL in caret notation
 *     (ESC is "^[", BEL "^G", DEL "^?"), so the rest of a sequence shows
 *     as the plain text it is ("^[]52;c;aGk=^G"); a C1 control written
 *     as UTF-8 (U+0080..U+009F, which some terminals obey) as "<U+009B>";
 *     a byte that is not part of valid, shortest-form UTF-8 as "<9B>".
 *
 * The output is always valid UTF-8 with no control byte but those kept.
 *
 * Output arrives in chunks and a chunk may end inside an SGR sequence or
 * a character: a struct termsafe holds those few bytes (at most
 * TERMSAFE_SGR_MAX) until the next chunk decides them, so the result
 * does not depend on where the chunks were cut.  termsafe_flush ends the
 * stream: held bytes are shown escaped.  One struct per output stream.
 *
 * A kept SGR stays in effect after the cell's text: conceal (ESC [ 8 m)
 * or black on black would hide coil's own words that follow (the prompt,
 * the echo of what the person types, warnings, tracebacks).  So the
 * struct knows whether an SGR other than a full reset is in effect, and
 * termsafe_flush, which ends a cell's text before coil writes, appends
 * the reset ESC [ m then, and only then.
 */
#ifndef COIL_TERMSAFE_H
#define COIL_TERMSAFE_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

#define TERMSAFE_SGR_MAX 64

/* Kept SGR goes between \001 and \002: readline's marks for the bytes of
 * a prompt that take no room on the screen. */
#define TERMSAFE_PROMPT 0x1

struct termsafe {
	int flags;
	int state;		/* (termsafe.c) what the held bytes begin */
	unsigned need;		/* continuation bytes the character lacks */
	size_t nheld;
	unsigned char held[TERMSAFE_SGR_MAX];
	bool sgr;		/* an SGR other than a reset is in effect */
};

void termsafe_init(struct termsafe *t, int flags);
/* Append p[0..n) made safe to out; may hold a few bytes back. */
void termsafe_feed(struct termsafe *t, const char *p, size_t n,
    struct buf *out);
/* Append what is held, escaped, to out, then ESC [ m if an SGR is in
 * effect; the stream starts again. */
void termsafe_flush(struct termsafe *t, struct buf *out);
/* One whole text: init, feed and flush. */
void termsafe_text(const char *p, size_t n, int flags, struct buf *out);
/* Whether the whole text p[0..n) would be shown as it is. */
bool termsafe_clean(const char *p, size_t n);

#endif
