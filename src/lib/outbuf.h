/*
 * outbuf: bounded capture of a worker's output, and UTF-8 escaping for JSON.
 *
 * Runs in the supervisor. Pure: no I/O, no global state, no Python. The
 * only side effect is ending the process with "coil: out of memory" when
 * malloc fails (xmalloc-style), so no function here returns NULL.
 *
 * A struct outbuf keeps at most cap bytes of a stream, however much is
 * appended: the first cap/2 bytes ("head") and the last cap - cap/2 bytes
 * that came after the head ("tail", a ring). Head and tail never overlap.
 * Memory is allocated lazily, once, cap/2 and cap - cap/2 bytes; appending
 * never allocates after that, so the supervisor's memory is bounded by the
 * cap, never by what a cell prints.
 *
 * "Kept" means stored in head or tail: kept = head_len + tail_len, and
 * outbuf_dropped() = total - kept exactly, counted in raw bytes. Rendering
 * may leave out more at each cut, and the marker counts all of it:
 *
 *   - A cut falls on a line boundary when one is near: the head ends just
 *     after its last newline and the tail starts just after its first,
 *     when that newline is within OUTBUF_NEAR(part) bytes of the cut
 *     (part: the head's or the tail's share of the cap). A line cut in
 *     two helps no reader; a few hundred bytes of kept text less does
 *     little harm. The tail does not move when the byte before it (one
 *     that was dropped) was a newline: it already starts a line.
 *   - Else a multi-byte character that the cut split is dropped whole,
 *     never half-escaped (up to 3 bytes at each cut).
 *
 * So kept text only shrinks and the cap always holds. The marker says
 * how many lines and bytes the render left out (struct outbuf_cut): a
 * line counts when its newline was cut, so for cuts on line boundaries
 * it is the number of whole lines gone.
 *
 * Escaping: a byte that is not part of a valid, shortest-form UTF-8
 * sequence (surrogates U+D800..U+DFFF and code points above U+10FFFF are
 * invalid) becomes the 4 ASCII characters \xNN, lowercase hex, as Python's
 * "backslashreplace" does. A backslash in the input is left as it is, so
 * like Python the result is meant for people and models, not for decoding
 * back. NUL bytes are kept (jansson encodes them as \u0000 given a length).
 *
 * Every char * returned is a new, NUL-terminated, valid UTF-8 string the
 * caller frees with free(). Lengths exclude the terminating NUL.
 * An outbuf is used by one thread at a time.
 */
#ifndef COIL_OUTBUF_H
#define COIL_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>

struct outbuf {
	size_t cap;		/* bytes kept at most: head gets cap/2, tail the rest */
	char *head;		/* cap/2 bytes once used, else NULL */
	size_t head_len;	/* head fills first: tail is used only when full */
	char *tail;		/* ring of cap - cap/2 bytes once used, else NULL */
	size_t tail_pos;	/* where the next tail byte goes; when the ring is
				   full, also where the oldest byte is */
	size_t tail_len;	/* bytes in the ring, <= cap - cap/2 */
	unsigned long long total;	/* bytes appended since reset */
	unsigned long long lines;	/* newlines among them */
	bool tail_at_line;	/* the byte before the ring's oldest one is a
				   newline: the tail starts a line */
};

/* What a render left out: raw bytes, and newlines among them. */
struct outbuf_cut {
	unsigned long long bytes, lines;
};

/* How far from a cut a line boundary is near enough to cut there
 * instead: a tenth of the part or 200 bytes, whichever is more, but
 * never more than half the part. */
#define OUTBUF_NEAR(part) \
	((part) / 10 > 200 ? (part) / 10 : (part) / 2 < 200 ? (part) / 2 : 200)

/* The marker between head and tail: "\n[... coil: 3 lines, 120 bytes
 * cut ...]\n" ("1 line", "1 byte" when one), and an upper bound on its
 * length. outbuf_marker() writes it. */
#define OUTBUF_MARKER_MAX 96

/* Write the marker for cut into buf (at least OUTBUF_MARKER_MAX bytes);
 * returns its length. */
size_t outbuf_marker(char *buf, const struct outbuf_cut *cut);

/* Make an empty outbuf keeping at most cap bytes. cap 0 keeps nothing and
 * only counts. Allocates nothing: buffers come with the first append. */
void outbuf_init(struct outbuf *ob, size_t cap);

/* Free the buffers. ob is left empty, with the same cap, and may be used
 * again (it allocates anew) or freed again. */
void outbuf_free(struct outbuf *ob);

/* Empty ob, keeping its cap and its memory. */
void outbuf_reset(struct outbuf *ob);

/* Append n bytes. Copies at most cap bytes whatever n is: of a large
 * append only the part still fitting the head and the last bytes are
 * copied. */
void outbuf_append(struct outbuf *ob, const char *p, size_t n);

/* True if nothing was appended since init or reset. */
bool outbuf_empty(const struct outbuf *ob);

/* Raw bytes appended but not kept: total - head_len - tail_len. */
unsigned long long outbuf_dropped(const struct outbuf *ob);

/* The bytes outbuf_render() writes in its marker: outbuf_dropped() plus
 * what the cuts moved by (see above). 0 when nothing was dropped. */
unsigned long long outbuf_truncated(const struct outbuf *ob);

/* Render as valid UTF-8; caller frees. If nothing was dropped: all the
 * bytes, escaped (an incomplete sequence at the end is escaped too). Else:
 * head, the marker, tail; the head is cut back and the start of the tail
 * moved forward to line or else character boundaries. With cap 0: "" if
 * empty, else the marker alone. The length is at most 4 * cap +
 * OUTBUF_MARKER_MAX. *len gets it unless len is NULL; *cut, unless NULL,
 * what the marker says ({0, 0} when there is none): the numbers to report
 * next to the render, so that the two always agree. */
char *outbuf_render(const struct outbuf *ob, size_t *len,
    struct outbuf_cut *cut);
/* The same within cap bytes, less than ob's own cap: its first cap/2
 * and last cap - cap/2 bytes, as an outbuf of that cap would have kept
 * them, the marker counting all between (an answer's budget, shared by
 * its fields, gives a stream less than --max-output). */
char *outbuf_render_cap(const struct outbuf *ob, size_t cap, size_t *len,
    struct outbuf_cut *cut);
/* The same so far, for a cell still running: when nothing was dropped,
 * without the last held bytes (the part of a character a stream's
 * events still hold back, to come in a later event). */
char *outbuf_render_held(const struct outbuf *ob, size_t held,
    size_t *len);

/* Escape n arbitrary bytes into valid UTF-8 (see above); caller frees.
 * Valid UTF-8 comes back unchanged. *outlen gets the length unless NULL. */
char *utf8_escape(const char *p, size_t n, size_t *outlen);

/* Cap a text the way outbuf_render() does: if n <= cap, the text escaped;
 * else the first cap/2 and the last cap - cap/2 bytes around the marker,
 * cut at line or else character boundaries. Meant for valid UTF-8 (a
 * result repr, a traceback), but invalid bytes are escaped, so the result
 * is always valid and equals what an outbuf of that cap renders after
 * being given p.
 *
 * pre, unless NULL, is what was already cut out of the middle of p before
 * (the worker pre-cuts a huge text so it does not cross the socket whole):
 * the marker adds it, as the cut this makes takes in the place where that
 * one was. It is ignored when p fits the cap, as no marker is shown then.
 * Caller frees. *outlen unless NULL gets the length; *cut unless NULL
 * what the marker says, {0, 0} if the text fit. */
char *utf8_cap(const char *p, size_t n, size_t cap,
    const struct outbuf_cut *pre, size_t *outlen, struct outbuf_cut *cut);

/* How many leading bytes of p[0..n) are valid UTF-8: the offset of the
 * first that is not (an incomplete sequence at the end counts as not),
 * or n. */
size_t utf8_valid_prefix(const char *p, size_t n);

/* For streaming: how many leading bytes of p[0..n) can be passed on now.
 * That is n, less a trailing incomplete sequence that is valid so far and
 * may still be completed by later bytes (so at most 3 bytes are held
 * back). Invalid bytes are never held back: later bytes cannot fix them. */
size_t utf8_complete_prefix(const char *p, size_t n);

#endif
