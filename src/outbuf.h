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
 * may leave out up to 3 more bytes at each cut (a multi-byte character that
 * the cut split is dropped whole, never half-escaped); the marker counts
 * those too, and outbuf_truncated() returns that number.
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
};

/* The marker between head and tail, and an upper bound on its length. */
#define OUTBUF_MARKER_FMT "\n[... coil: %llu bytes truncated ...]\n"
#define OUTBUF_MARKER_MAX 64

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

/* The N that outbuf_render() writes in its marker: outbuf_dropped() plus
 * the bytes of characters split by the cuts (at most 3 at each). 0 when
 * nothing was dropped. This is the number to report next to the render. */
unsigned long long outbuf_truncated(const struct outbuf *ob);

/* Render as valid UTF-8; caller frees. If nothing was dropped: all the
 * bytes, escaped (an incomplete sequence at the end is escaped too). Else:
 * head, OUTBUF_MARKER_FMT with N = outbuf_truncated(), tail; the head is
 * cut back and the start of the tail moved forward to character
 * boundaries. With cap 0: "" if empty, else the marker alone. The length
 * is at most 4 * cap + OUTBUF_MARKER_MAX. *len gets it unless len is NULL. */
char *outbuf_render(const struct outbuf *ob, size_t *len);

/* Escape n arbitrary bytes into valid UTF-8 (see above); caller frees.
 * Valid UTF-8 comes back unchanged. *outlen gets the length unless NULL. */
char *utf8_escape(const char *p, size_t n, size_t *outlen);

/* Cap a text the way outbuf_render() does: if n <= cap, the text escaped;
 * else the first cap/2 and the last cap - cap/2 bytes around the marker,
 * cut at character boundaries. Meant for valid UTF-8 (a result repr, a
 * traceback), but invalid bytes are escaped, so the result is always valid
 * and equals what an outbuf of that cap renders after being given p.
 * Caller frees. *outlen unless NULL gets the length; *dropped unless NULL
 * gets the N of the marker, 0 if the text fit. */
char *utf8_cap(const char *p, size_t n, size_t cap, size_t *outlen,
    unsigned long long *dropped);

/* For streaming: how many leading bytes of p[0..n) can be passed on now.
 * That is n, less a trailing incomplete sequence that is valid so far and
 * may still be completed by later bytes (so at most 3 bytes are held
 * back). Invalid bytes are never held back: later bytes cannot fix them. */
size_t utf8_complete_prefix(const char *p, size_t n);

#endif
