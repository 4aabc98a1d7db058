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
 * leaves room.  The worker cuts a result and a traceback to 4 x
 * max_output characters each before they cross (worker.py's _cut), so
 * max_output stays far below; an answer that is too big anyway is
 * replaced by an error saying so. */
#define CHAN_MAX_REQUEST (CHAN_MAX_FRAME / 2)
#define CHAN_MAX_OUTPUT (CHAN_MAX_FRAME / 16)

struct chan {
	int fd;
	struct buf in;
	int fds[4 * CHAN_MAX_FDS];
	int nfds;
	bool eof;
	bool lost_fds;		/* descriptors were cut off (MSG_CTRUNC) */
	char why[96];		/* what was wrong with a malformed frame */
};

void chan_init(struct chan *c, int fd);
/* Close the socket and every queued descriptor. */
void chan_close(struct chan *c);

/* Send one frame; blocks (polling) until written.  0 or -1 (errno;
 * EMSGSIZE, with nothing sent, when the frame would be over
 * CHAN_MAX_FRAME, which the receiver would refuse). */
int chan_send(int fd, json_t *msg, const int *fds, int nfds);

/* Read what the socket has.  With a blocking fd, waits for data.
 * Returns 1 when bytes arrived, 0 at end of file, -1 on error (errno;
 * EAGAIN when a non-blocking socket had nothing). */
int chan_fill(struct chan *c);

/* Whether bytes of a frame were read and not taken yet: a frame that
 * has arrived although poll shows the socket empty. */
bool chan_pending(const struct chan *c);

/* Take the next complete frame, or NULL when none is complete yet or the
 * frame is malformed (then *bad is set and c->why says how: over the size
 * limit, not JSON, or fewer descriptors than its header says).  fds (may be NULL) gets up to
 * CHAN_MAX_FDS descriptors, *nfds their count; unwanted ones are closed. */
json_t *chan_next(struct chan *c, int *fds, int *nfds, bool *bad);

/* Blocking convenience: fill until a frame is complete.  NULL at EOF or
 * error. */
json_t *chan_recv(struct chan *c, int *fds, int *nfds);

#endif
