/*
 * conn.h - one client connection of the supervisor's poll loop: a line
 * reader bounded by --max-request and a bounded queue of what is to be
 * written.  Stdio (agent and MCP mode) and attach sockets use the same
 * one.  Supervisor only; single-threaded; no Python.
 *
 * Nothing here blocks: reads and writes happen when poll says the
 * descriptor is ready (conn_pollfds), and a client that reads slowly
 * only makes its own queue longer, so deadlines and other clients never
 * wait on it.  A client that stops reading is dropped once its queue
 * would pass max_queue: conn says why (conn_dropped) and the caller goes
 * on without it.  Nothing here exits, and no write raises SIGPIPE
 * whatever its disposition (MSG_NOSIGNAL on sockets; on pipes SIGPIPE
 * is blocked around the write and a pending one taken back).
 *
 * Input: lines end with '\n'.  ops->line gets each line without its
 * newline and without one trailing '\r' (CRLF clients), NUL-terminated;
 * blank lines are delivered too (n == 0), the caller ignores them.  A
 * line of more than max_line bytes (counted before the '\n', a '\r'
 * included) is never held: it is skipped as it streams past, and
 * ops->too_long gets its length once its end is seen.  At end of input
 * the last line is served even without its newline.
 *
 * Output: conn_send queues bytes as given (the caller ends a message
 * with its '\n') and writes what the descriptor takes at once; the rest
 * waits for POLLOUT (conn_flush).  The bound: a send that would leave
 * more than max_queue bytes waiting behind bytes already waiting drops
 * the connection.  One message alone may exceed it (it is in memory
 * already): max_queue bounds the backlog of a client that does not
 * read, not the size of an answer.
 *
 * Once dropped, a conn reads and writes nothing more; its queue is
 * freed.  Descriptors: conn_init takes the ones it is given (conn_free
 * closes them); conn_init_stdio never closes 0 or 1, only what it opened.
 */
#ifndef COIL_CONN_H
#define COIL_CONN_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* How a descriptor is read or written without blocking. */
enum conn_io {
	CONN_IO_PLAIN,		/* its own O_NONBLOCK description, or a file */
	CONN_IO_SOCK,		/* recv/send with MSG_DONTWAIT|MSG_NOSIGNAL */
	CONN_IO_POLLED		/* a shared blocking one: poll first, and
				   write at most PIPE_BUF bytes at a time */
};

struct conn_ops {
	/* A complete line: p[n] is '\0', p is valid during the call
	 * only.  May call conn_send (and so drop the conn: the lines
	 * after are then not served); must not free the conn. */
	void (*line)(void *ctx, const char *p, size_t n);
	/* A line over max_line was skipped; bytes: its length; head its
	 * first bytes (headlen of them, at most CONN_HEAD), where a
	 * request's id usually is. */
	void (*too_long)(void *ctx, size_t bytes, const char *head,
	    size_t headlen);
};

#define CONN_HEAD 4096

struct conn {
	int rfd, wfd;		/* -1: none (rfd == wfd for a socket) */
	bool own_rfd, own_wfd;	/* conn_free closes them */
	enum conn_io rio, wio;
	size_t max_line, max_queue;

	struct buf in;		/* the start of a line not complete yet */
	bool skipping;		/* inside a line over max_line */
	size_t skipped;		/* its bytes so far */
	char head[CONN_HEAD];	/* and its first ones */
	size_t headlen;
	size_t scanned;		/* bytes of in known to hold no newline */
	bool eof;		/* no more input: end of file or an error */
	int read_errno;		/* the error that ended input, else 0 */

	struct buf out;		/* waiting: out.p[out_off..out.len) */
	size_t out_off;
	char dropped[160];	/* why the conn was dropped; "" while not */
	bool left;		/* dropped because the peer closed its end */
};

/* A conn on rfd and wfd (the same socket, or two descriptors; rfd -1 for
 * output only).  Takes both: conn_free closes them.  How each is used is
 * found here: sockets through send/recv, non-blocking descriptors and
 * files as they are, any other (a blocking pipe shared with another
 * process) polled before each read and write. */
void conn_init(struct conn *c, int rfd, int wfd, size_t max_line,
    size_t max_queue);

/* A conn on standard input and output that never changes the flags of
 * fd 0 or 1: their open file descriptions are shared with the parent (a
 * shell's terminal, a pipeline), so making them O_NONBLOCK would leak
 * out.  A pipe or terminal is opened anew (conn_reopen); a socket is
 * used through MSG_DONTWAIT; a file as it is; and if opening anew fails
 * the descriptor is polled (CONN_IO_POLLED).  Never fails.
 *
 * Polled input is safe as long as nobody else reads fd 0: a pipe that
 * polls readable returns what it has without waiting, and a terminal in
 * canonical mode polls readable only once a line is complete.  Polled
 * output writes at most PIPE_BUF bytes after POLLOUT, which a pipe
 * takes at once (a terminal held by ^S may still block it). */
void conn_init_stdio(struct conn *c, size_t max_line, size_t max_queue);

/* A new open file description of the pipe, FIFO or terminal fd refers
 * to, through /proc/self/fd: mode (O_RDONLY or O_WRONLY) with
 * O_NONBLOCK, O_CLOEXEC and O_NOCTTY; fd itself is left as it was.
 * Returns the new descriptor (caller closes), or -1 with errno: ENOTSUP
 * when fd is anything else (a socket or a file: a new description of a
 * file would not share its offset), or open's (ENXIO: a pipe with no
 * reader left, EACCES: a pipe of another user). */
int conn_reopen(int fd, int mode);

/* Keep SIGPIPE blocked in this thread from now on (its children reset
 * their mask): each write then costs one system call, where without it
 * it is wrapped in three more to hold the signal off.  A front end
 * calls it once, before its first conn_send. */
int conn_hold_sigpipe(void);

/* Close what the conn owns and free its buffers. */
void conn_free(struct conn *c);

/* The two poll entries of c: pfd[0] for input (POLLIN unless at end of
 * input or dropped), pfd[1] for output (POLLOUT while bytes wait); an
 * entry not wanted has fd -1, which poll skips. */
void conn_pollfds(const struct conn *c, struct pollfd pfd[2]);

/* Read once (at most 64 KiB, so one busy client cannot starve the
 * others) and serve the lines completed.  At end of input, serve the
 * last line.  0, or -1 once input has ended (c->eof) or c is dropped. */
int conn_read(struct conn *c, const struct conn_ops *ops, void *ctx);

/* Queue p[0..n) and write what can be written now.  0, or -1 when c is
 * dropped (now or before): nothing was queued. */
int conn_send(struct conn *c, const char *p, size_t n);

/* On POLLOUT: write what the descriptor takes.  0, or -1 if dropped. */
int conn_flush(struct conn *c);

/* At the end of a session: wait up to timeout_ms for the queue to be
 * written.  0 when all was, else -1 and c is dropped (saying why). */
int conn_drain(struct conn *c, int timeout_ms);

/* Bytes waiting to be written. */
size_t conn_pending(const struct conn *c);

/* Why c was dropped ("the client stopped reading: ..."), NULL if not. */
const char *conn_dropped(const struct conn *c);

#endif
