/*
 * link.h - the supervisor's end of the worker's control socket, and what
 * it believes of what arrives there.  Supervisor only; no Python.
 *
 * The worker runs model-written code in its own process, and that code
 * can always write to the socket (it is a descriptor of the same
 * process: hiding it at a high number keeps only accidents away).  So
 * the supervisor trusts no frame for what it says it is.  It trusts only
 * its own record of what it asked for: every message it sends the worker
 * puts the frames that must answer it on a queue (link_owe), in the order
 * the worker writes them, and each frame read must be the head of that
 * queue:
 *
 *   sent                          owed, in order
 *   spawn (init) of a new worker  gate (strict only), hello
 *   resume of a checkpoint        hello, with "resumed": its cell
 *   exec, vars, inspect, complete reply(seq)
 *   exec with ckpt_first          ckpt or ckpt_failed (before, seq), reply(seq)
 *   {"op":"ckpt", kind}           ckpt or ckpt_failed (kind, seq)
 *   {"op":"ckpt", explicit}       ckpt or ckpt_failed, then reply(seq)
 *
 * One frame answers nothing: while the reply to an exec is owed, a
 * worker whose cell reads stdin (input(), pdb) or pages help's text may
 * send {"t":"input", "seq", "prompt", "page"?}, once until the
 * supervisor answers it with a line (link_answered_input), and only if
 * the supervisor allowed that exec to ask (link_allow_input: a person's
 * cell at a terminal).  The reply stays owed.
 *
 * Likewise any exec's cell may send {"t":"notebook", "seq"} (%save
 * FILE.ipynb): the session so far as a notebook, which the supervisor
 * builds and answers at once with a sealed memfd of its bytes; the
 * worker writes the file, under the sandbox's rights, so the supervisor
 * never writes a path a cell chose.  One question (input or notebook)
 * is open at a time.
 *
 * The (state, frame type) -> check table in link.c says which frame may
 * answer which owed one (the state is the head of the queue, or idle when
 * nothing is owed), how many descriptors it carries and of what kind:
 *
 *   frame         descriptors
 *   gate          1: a seccomp listener
 *   hello         0 or 1: a pidfd of the worker
 *   reply         0 to CHAN_FIGURES_MAX: files the worker opened for
 *                 reading (regular, not O_PATH, not open for writing),
 *                 the images its display names, one for each display
 *                 index its "figures" lists (figure.h reads them)
 *   ckpt          1 or 2: a unix stream socket, a pidfd of its process
 *   ckpt_failed, input, notebook   none
 *
 * Every request carries "seq", a number the supervisor gives it (from a
 * random start per worker, and never shown to Python by the worker), and
 * its reply and checkpoint frames must echo it.  Anything else - a frame
 * out of turn, a second reply, a checkpoint nobody asked for, a wrong seq
 * or kind, a descriptor that is not the socket or pidfd it claims to be,
 * bytes that are not a frame - is a protocol violation: link_next says
 * what was wrong, and the caller ends that worker.
 *
 * Believed: the order of the queue, the seq, and the checked descriptors.
 * Not believed beyond the current answer: a reply's fields (status,
 * result, "ran") are the worker's word about its own cell.
 *
 * Ownership: link_next hands the frame's message (a new reference) and
 * its descriptors to the caller (link_frame_free releases both).
 */
#ifndef COIL_LINK_H
#define COIL_LINK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "chan.h"

/* What the head of the queue waits for: the link's state. */
enum link_owe {
	LINK_IDLE,		/* nothing: any frame is a violation */
	LINK_GATE,		/* strict: seccomp's fork listener, before hello */
	LINK_HELLO,
	LINK_REPLY,
	LINK_CKPT,		/* a checkpoint, or word that it failed */
	LINK_NOWE
};

enum link_frame_type {
	LINK_F_GATE, LINK_F_HELLO, LINK_F_REPLY, LINK_F_CKPT,
	LINK_F_CKPT_FAILED, LINK_F_INPUT, LINK_F_NOTEBOOK, LINK_NFRAMES
};

/* The checkpoint kinds the supervisor asks for, by their wire names. */
enum link_ckpt { LINK_CK_AUTO, LINK_CK_PRISTINE, LINK_CK_EXPLICIT,
	LINK_CK_BEFORE, LINK_CK_REARM, LINK_NCKPT };
extern const char *const link_ckpt_names[LINK_NCKPT];

#define LINK_MAX_OWED 16

struct link_owed {
	enum link_owe what;
	uint64_t seq;		/* reply, ckpt */
	enum link_ckpt kind;	/* ckpt */
	int resumed;		/* hello: the checkpoint's cell, -1: fresh */
	bool input;		/* reply: its cell may ask for input lines */
	bool asking;		/* reply: an input or notebook frame
				   awaits its answer */
};

struct link {
	struct chan chan;
	struct link_owed owed[LINK_MAX_OWED];
	int head, n;
	uint64_t seq;		/* the last number given */
	pid_t pid;		/* the worker in init's namespace; 0: unknown */
	pid_t hello_pid;	/* the pid of hello's pidfd, init's namespace */
	pid_t outer;		/* and in ours: a checkpoint's parent */
};

struct link_frame {
	enum link_frame_type type;
	json_t *msg;		/* new reference */
	int fds[CHAN_MAX_FDS];	/* checked; -1 when absent */
	int nfds;
	uint64_t seq;
	enum link_ckpt kind;	/* ckpt, ckpt_failed */
	pid_t pid;		/* ckpt: its process in init's namespace */
	pid_t outer;		/* ckpt, hello: that pid in ours, 0 unknown */
	bool late;		/* ckpt: it came after the worker died, when
				   its parent can no longer be checked */
};

/* fd: the supervisor's end (the link takes it).  The seq starts at a
 * random number, so that a cell cannot guess what the next one is. */
void link_init(struct link *l, int fd);
/* Close the socket and any descriptor received; forget what is owed. */
void link_close(struct link *l);
bool link_open(const struct link *l);

/* Owe one more frame; returns the seq a request must carry (a new one
 * for LINK_REPLY unless seq is given, 0: new). */
uint64_t link_owe(struct link *l, enum link_owe what, enum link_ckpt kind,
    uint64_t seq, int resumed);
/* The owed reply numbered seq may be preceded by input frames. */
void link_allow_input(struct link *l, uint64_t seq);
/* The supervisor sent the line an input frame asked for (or the
 * notebook a notebook frame did): the worker may ask again.  -1 when no
 * question was waiting. */
int link_answered_input(struct link *l);

/* The state: what the head of the queue waits for. */
enum link_owe link_state(const struct link *l);
/* True while a checkpoint is owed anywhere on the queue. */
bool link_ckpt_owed(const struct link *l);

/* Read what the socket has (non-blocking).  1 when bytes arrived, 0 at
 * end of file, -1 with errno (EAGAIN: nothing). */
int link_fill(struct link *l);
/* The next frame, checked against the head of the queue, which it
 * consumes.  1: a frame, in *f.  0: no complete frame yet.  -1: a
 * protocol violation, described in why (the link is useless after). */
int link_next(struct link *l, struct link_frame *f, char *why, size_t len);
void link_frame_free(struct link_frame *f);

/* The pid of a pidfd in init's namespace (the innermost of NSpid) and in
 * ours; -1 when fd is not a pidfd of a live process. */
int link_pidfd_pids(int fd, pid_t *inner, pid_t *outer);
/* A checkpoint's copy for a branch (ckpt_clone) as it says it is: sock
 * a unix stream socket, pidfd a pidfd of the process pid (in the
 * worker's namespace), alive, whose parent is init (init_outer, in
 * ours).  Its pid in ours, or -1 with why: a checkpoint runs in an
 * image the cells may have patched, so its word is checked as a
 * worker's is. */
pid_t link_check_copy(int sock, int pidfd, pid_t pid, pid_t init_outer,
    char *why, size_t len);
/* The children of process pid (ours: its pid in our namespace), from
 * /proc/PID/task/ * /children; up to max of them.  Their count, -1 when
 * they cannot be read. */
int link_children(pid_t pid, pid_t *kids, int max);
/* SIGKILL child if it is still a live child of parent (through a pidfd,
 * so that a reused pid is never hit).  0, or -1 when it was not. */
int link_kill_child(pid_t parent, pid_t child);
/* Name of what a state waits for: "a reply (seq 7)". */
void link_describe(const struct link_owed *o, char *buf, size_t len);

#endif
