/*
 * fuzz-link.c - libFuzzer harness for the supervisor's end of the worker
 * link (link.c): the input is a script that owes frames, as the
 * supervisor does when it sends requests, and writes frames (of every
 * type, with real descriptors of every kind, right or wrong seq and
 * kind) and raw bytes on the worker's end of a real socketpair.  The
 * link must never crash, leak, or accept a frame that the (state, frame)
 * table does not pair with the head of what is owed, with its seq.
 *
 * Script bytes: op = b % 4.  0: owe (next byte: what, kind).  1: a
 * frame (next bytes: type, descriptors, seq and kind choices).  2: raw
 * bytes (next byte: count).  3: nothing.  After each write the link
 * reads all it can; a violation ends the run, as it ends a worker.
 */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "chan.h"
#include "link.h"

static const char *const fuzz_types[] = {
	"gate", "hello", "reply", "ckpt", "ckpt_failed", "resume", "spawned",
	"exit", "", NULL,
};

struct fuzz {
	const uint8_t *p;
	size_t n;
};

static unsigned
fuzz_byte(struct fuzz *f)
{
	if (f->n == 0)
		return 0;
	f->n--;
	return *f->p++;
}

/* A descriptor of the kind k: a unix socket, a pidfd of ourselves, a
 * file, a pipe.  The caller closes it. */
static int
fuzz_fd(unsigned k, int *extra)
{
	int sv[2];

	*extra = -1;
	switch (k % 4) {
	case 0:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
			return -1;
		*extra = sv[1];
		return sv[0];
	case 1:
		return (int)syscall(SYS_pidfd_open, getpid(), 0);
	case 2:
		return open("/dev/null", O_RDONLY | O_CLOEXEC);
	default:
		if (pipe2(sv, O_CLOEXEC) == -1)
			return -1;
		*extra = sv[1];
		return sv[0];
	}
}

static void
fuzz_frame(struct fuzz *f, struct link *l, int peer)
{
	const char *t = fuzz_types[fuzz_byte(f) % (nitems(fuzz_types) - 1)];
	unsigned nfds = fuzz_byte(f) % 4, kinds = fuzz_byte(f);
	unsigned how = fuzz_byte(f);
	json_t *m = json_pack("{s:s}", "t", t);
	int fds[3], extra[3], i;
	uint64_t seq = l->n > 0 ? l->owed[l->head].seq : 0;

	/* seq: the owed one, a neighbour, none, or a string */
	switch (how % 4) {
	case 0: json_object_set_new(m, "seq", json_integer((json_int_t)seq));
		break;
	case 1: json_object_set_new(m, "seq", json_integer(
		    (json_int_t)seq + 1));
		break;
	case 2: break;
	default: json_object_set_new(m, "seq", json_string("1"));
	}
	json_object_set_new(m, "kind", json_string(
	    link_ckpt_names[(how >> 2) % LINK_NCKPT]));
	json_object_set_new(m, "pid", json_integer((how >> 5) & 1 ?
	    getpid() : (json_int_t)(how >> 6)));
	if ((how >> 7) & 1)
		json_object_set_new(m, "status", json_string("ok"));
	if (fuzz_byte(f) & 1)
		json_object_set_new(m, "resumed", json_integer(fuzz_byte(f) % 3));
	for (i = 0; i < (int)nfds; i++)
		fds[i] = fuzz_fd(kinds >> (2 * i), &extra[i]);
	for (i = 0; i < (int)nfds; i++)
		if (fds[i] < 0)
			nfds = (unsigned)i;
	chan_send(peer, m, fds, (int)nfds);
	for (i = 0; i < (int)nfds; i++) {
		close(fds[i]);
		if (extra[i] >= 0)
			close(extra[i]);
	}
	json_decref(m);
}

/* Read what arrived.  false once the link broke. */
static bool
fuzz_read(struct link *l)
{
	struct link_frame fr;
	char why[256];
	int got;

	while (link_fill(l) > 0)
		;
	for (;;) {
		enum link_owe state = link_state(l);
		uint64_t seq = l->n > 0 ? l->owed[l->head].seq : 0;
		int before = l->n;

		got = link_next(l, &fr, why, sizeof why);
		if (got == 0)
			return true;
		if (got == -1) {
			if (why[0] == '\0' || strlen(why) >= sizeof why)
				abort();
			return false;
		}
		/* Accepted: it must answer the head of the queue, by the
		 * table's pairs, with its seq. */
		if (l->n != before - 1 && !(state == LINK_GATE &&
		    fr.type == LINK_F_HELLO && l->n == before - 2))
			abort();
		switch (fr.type) {
		case LINK_F_GATE:
			if (state != LINK_GATE)
				abort();
			break;
		case LINK_F_HELLO:
			if (state != LINK_HELLO && state != LINK_GATE)
				abort();
			break;
		case LINK_F_REPLY:
			if (state != LINK_REPLY || fr.seq != seq)
				abort();
			break;
		case LINK_F_CKPT:
		case LINK_F_CKPT_FAILED:
			if (state != LINK_CKPT || fr.seq != seq)
				abort();
			break;
		default:
			abort();
		}
		link_frame_free(&fr);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz f = { data, size };
	struct link l;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) == -1)
		return 0;
	link_init(&l, sv[0]);
	while (f.n > 0) {
		unsigned op = fuzz_byte(&f) % 4, b, i;
		uint8_t raw[256];

		if (op == 0) {
			b = fuzz_byte(&f);
			if (l.n < LINK_MAX_OWED - 1)
				link_owe(&l, (enum link_owe)(1 + b % (LINK_NOWE -
				    1)), (enum link_ckpt)((b >> 3) % LINK_NCKPT),
				    0, (int)((b >> 6) % 3) - 1);
			continue;
		}
		if (op == 1) {
			fuzz_frame(&f, &l, sv[1]);
		} else if (op == 2) {
			b = fuzz_byte(&f);
			for (i = 0; i < b && f.n > 0; i++)
				raw[i] = (uint8_t)fuzz_byte(&f);
			if (write(sv[1], raw, i) < 0)
				break;
		} else {
			continue;
		}
		if (!fuzz_read(&l))
			break;
	}
	link_close(&l);
	close(sv[1]);
	return 0;
}
