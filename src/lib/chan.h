/*
 * chan.h - framed JSON messages, with file descriptors, over a unix
 * stream socket.  Used between the supervisor, init, the worker and its
 * checkpoints (never on the user-facing stdin/stdout).
 *
 * A frame is a header { uint32 length, uint32 nfds } and `length` bytes of
 * JSON.  The nfds descriptors travel with the frame's first byte as
 * SCM_RIGHTS; the receiver queues them and hands them out with the frame
 * they belong to.  Payloads may hold NUL characters (\u0000).
 *
 * Ownership: chan_send borrows msg and fds; chan_next returns a new
 * reference and hands the received fds to the caller, who closes them.
 */
#ifndef COIL_CHAN_H
#define COIL_CHAN_H

#include <jansson.h>
#include <stdbool.h>

#include "util.h"

#define CHAN_MAX_FDS 16
/* A reply's images travel as descriptors of files the worker opened
 * itself (link.h): at most this many a reply, each a regular file of at
 * most CHAN_FIGURE_MAX bytes; any other image stays a path. */
#define CHAN_FIGURES_MAX CHAN_MAX_FDS
#define CHAN_FIGURE_MAX ((size_t)32 << 20)
#define CHAN_MAX_FRAME (256u << 20)
/* What a frame limit of 256 MiB allows the options that size frames.
 * A request line goes to the worker with only the fields it reads, none
 * of them longer written out again, plus a few numbers: half the limit
 * leaves room.  The worker cuts a result, a message and a traceback to
 * about max_output UTF-8 bytes each before they cross (worker.py's
 * _cut: a little over the max_output / 2 bytes the supervisor keeps at
 * each end), whatever their characters, so even at the largest
 * max_output the three stay within the limits of the worker's frames
 * (CHAN_PEER_FRAME, CHAN_PEER_STRING); an answer that is too big anyway
 * is replaced by an error saying so. */
#define CHAN_MAX_REQUEST (CHAN_MAX_FRAME / 2)
#define CHAN_MAX_OUTPUT (CHAN_MAX_FRAME / 16)

/*
 * What one frame from the sandbox's side (the worker, a checkpoint,
 * init) may cost the supervisor, which runs outside every memory limit
 * of the sandbox.  jansson spends a json_t (and an object a hash table)
 * on each value: about 32 bytes an integer, 90 a string, 140 an array,
 * 240 an object, so 32 MiB of "[{},{},...]" once took 2.6 GB.  So a
 * frame is weighed before it is parsed (chan_scan): its bytes, checked
 * at its header, before it is buffered; the nesting of its arrays and
 * objects; its items (values and object keys); the bytes of each
 * string, whose text jansson holds more than once (the lexer's buffer,
 * the value, and for an object key the hash table's copy).
 *
 * The limits are what the worker's own answers need, with room: a
 * result, message or traceback is cut by the worker to about max_output
 * UTF-8 bytes (worker.py's _cut), so at the largest --max-output
 * (CHAN_MAX_OUTPUT, 16 MiB) each is two thirds of a string's limit
 * (24 MiB) whatever its characters, and the three fit a frame; the
 * worker caps every list it sends (vars and namespace 1000 entries,
 * shape 32 numbers, display 1000, matches 1000, warnings 100, effects
 * 20), which stays below 80000 items; nothing it sends nests deeper
 * than 6; its object keys are field names (names of variables and MIME
 * types travel as values).  The worker weighs its own frames with the
 * same limits before sending (chan_send_within), so an answer over them
 * becomes an error saying so, never a violation.  At the limits a frame
 * costs at most its 64 MiB of buffer, its strings once more, the
 * longest string (24 MiB at most) a third time in jansson's lexer, and
 * 128 Ki items of at most ~256 bytes each besides keys of 4 KiB at
 * most: about 160 MiB whatever the bytes, where 256 MiB of them cost
 * 20 GB before.
 */
#define CHAN_PEER_FRAME (64u << 20)
#define CHAN_PEER_DEPTH 64
#define CHAN_PEER_ITEMS (128u << 10)
#define CHAN_PEER_KEY ((size_t)4 << 10)
#define CHAN_PEER_STRING ((size_t)CHAN_PEER_FRAME / 8 * 3)

struct chan_limits {
	size_t frame;		/* bytes of JSON */
	unsigned depth;		/* nesting of arrays and objects */
	size_t items;		/* values and object keys */
	size_t key;		/* bytes of an object key, as written */
	size_t string;		/* bytes of any other string, as written */
};

/* The limits above, for frames the supervisor reads from the sandbox. */
extern const struct chan_limits chan_peer_limits;

/* What chan_scan counted. */
struct chan_weight {
	unsigned depth;		/* the deepest nesting */
	size_t items;		/* values and object keys */
};

struct chan {
	int fd;
	struct buf in;
	int fds[4 * CHAN_MAX_FDS];
	int nfds;
	bool eof;
	bool lost_fds;		/* descriptors were cut off (MSG_CTRUNC) */
	const struct chan_limits *lim;	/* NULL: a trusted peer */
	char why[96];		/* what was wrong with a malformed frame */
};

void chan_init(struct chan *c, int fd);
/* Weigh every frame read from now on against lim (borrowed; static). */
void chan_limit(struct chan *c, const struct chan_limits *lim);

/* Weigh n bytes of JSON in one pass, before any of it is parsed: count
 * its depth and items into *w, stopping at the first limit of lim that
 * they pass, or a string passes its own.  Bytes that are not JSON are
 * counted as far as they go (jansson refuses them later).  0, or -1
 * with why saying which limit was passed. */
int chan_scan(const char *p, size_t n, const struct chan_limits *lim,
    struct chan_weight *w, char *why, size_t len);
/* Close the socket and every queued descriptor. */
void chan_close(struct chan *c);

/* Send one frame; blocks (polling) until written.  0 or -1 (errno;
 * EMSGSIZE, with nothing sent, when the frame would be over
 * CHAN_MAX_FRAME, which the receiver would refuse). */
int chan_send(int fd, json_t *msg, const int *fds, int nfds);
/* chan_send within lim: EMSGSIZE, with nothing sent, when the frame is
 * over any of them (the worker's frames, which the supervisor weighs
 * with the same limits). */
int chan_send_within(int fd, json_t *msg, const int *fds, int nfds,
    const struct chan_limits *lim);

/* Read what the socket has.  With a blocking fd, waits for data.
 * Returns 1 when bytes arrived, 0 at end of file, -1 on error (errno;
 * EAGAIN when a non-blocking socket had nothing). */
int chan_fill(struct chan *c);

/* Whether bytes of a frame were read and not taken yet: a frame that
 * has arrived although poll shows the socket empty. */
bool chan_pending(const struct chan *c);

/* Take the next complete frame, or NULL when none is complete yet or the
 * frame is malformed (then *bad is set and c->why says how: over the size
 * limit or, with limits set, over one of them; not JSON; or fewer
 * descriptors than its header says).  fds (may be NULL) gets up to
 * CHAN_MAX_FDS descriptors, *nfds their count; unwanted ones are closed. */
json_t *chan_next(struct chan *c, int *fds, int *nfds, bool *bad);

/* Blocking convenience: fill until a frame is complete.  NULL at EOF or
 * error. */
json_t *chan_recv(struct chan *c, int *fds, int *nfds);

#endif
