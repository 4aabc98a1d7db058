/*
 * chan.c - framed JSON with descriptors over unix stream sockets.
 * Runs in every process of coil; see chan.h for the frame format.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <poll.h>

#include "chan.h"

struct chan_hdr {
	uint32_t len;
	uint32_t nfds;
};

const struct chan_limits chan_peer_limits = {
	.frame = CHAN_PEER_FRAME, .depth = CHAN_PEER_DEPTH,
	.items = CHAN_PEER_ITEMS, .key = CHAN_PEER_KEY,
	.string = CHAN_PEER_STRING,
};

/* A byte that continues a number or a literal (true, false, null) once
 * one has begun; any other byte outside a string ends it. */
static bool
chan_word_byte(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '+' || ch == '.';
}

/* Whether the string that ended just before p[i] is an object key: the
 * next byte but white space is a ':'. */
static bool
chan_is_key(const char *p, size_t n, size_t i)
{
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
	    p[i] == '\r'))
		i++;
	return i < n && p[i] == ':';
}

/*
 * One pass, no allocation.  Outside strings every '[' and '{' is an
 * item and a level, every string (key or value) an item, and every run
 * of word bytes (a number, true, false, null) one item: for text jansson
 * accepts, exactly its values plus its object keys.  Inside a string a
 * backslash hides the next byte, so '"', '[' and '{' there count for
 * nothing.  A string's length is its bytes as written, escapes and all:
 * never less than what jansson decodes of it, which it holds once for
 * the token and once more as the value (a key also in the hash table).
 */
int
chan_scan(const char *p, size_t n, const struct chan_limits *lim,
    struct chan_weight *w, char *why, size_t len)
{
	unsigned level = 0;
	bool word = false;
	size_t i, start;

	w->depth = 0;
	w->items = 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch == '"') {
			w->items++;
			word = false;
			/* to the closing quote, over escaped bytes */
			start = i + 1;
			for (i++; i < n && p[i] != '"'; i++)
				if (p[i] == '\\')
					i++;
			if (i - start > lim->key &&
			    chan_is_key(p, n, i + 1))
				return err_set(why, len, "an object key of "
				    "over %zu bytes", lim->key);
			if (i - start > lim->string)
				return err_set(why, len, "a string of over "
				    "%zu bytes", lim->string);
		} else if (ch == '[' || ch == '{') {
			w->items++;
			word = false;
			if (++level > w->depth)
				w->depth = level;
			if (level > lim->depth)
				return err_set(why, len, "JSON nested over %u "
				    "levels deep", lim->depth);
		} else if (chan_word_byte(ch)) {
			if (!word)
				w->items++;
			word = true;
		} else {
			if ((ch == ']' || ch == '}') && level > 0)
				level--;
			word = false;
		}
		if (w->items > lim->items)
			return err_set(why, len, "JSON of over %zu values",
			    lim->items);
	}
	return 0;
}

void
chan_init(struct chan *c, int fd)
{
	c->fd = fd;
	buf_init(&c->in);
	c->nfds = 0;
	c->eof = false;
	c->lost_fds = false;
	c->lim = NULL;
	c->why[0] = '\0';
}

void
chan_limit(struct chan *c, const struct chan_limits *lim)
{
	c->lim = lim;
}

void
chan_close(struct chan *c)
{
	int i;

	if (c->fd >= 0)
		close(c->fd);
	for (i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	c->fd = -1;
	c->nfds = 0;
	buf_free(&c->in);
}

int
chan_send(int fd, json_t *msg, const int *fds, int nfds)
{
	return chan_send_within(fd, msg, fds, nfds, NULL);
}

int
chan_send_within(int fd, json_t *msg, const int *fds, int nfds,
    const struct chan_limits *lim)
{
	struct chan_weight wt;
	char *body, why[96];
	size_t len;
	struct chan_hdr h;
	struct iovec iov[2];
	union {
		char buf[CMSG_SPACE(sizeof(int) * CHAN_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr m;
	ssize_t w;
	int rc = -1;

	body = json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY);
	if (body == NULL) {
		errno = EINVAL;
		return -1;
	}
	len = strlen(body);
	if (len > CHAN_MAX_FRAME || nfds < 0 || nfds > CHAN_MAX_FDS ||
	    (lim != NULL && (len > lim->frame ||
	    chan_scan(body, len, lim, &wt, why, sizeof why) == -1))) {
		free(body);
		errno = EMSGSIZE;
		return -1;
	}
	h.len = (uint32_t)len;
	h.nfds = (uint32_t)nfds;
	iov[0].iov_base = &h;
	iov[0].iov_len = sizeof h;
	iov[1].iov_base = body;
	iov[1].iov_len = len;
	memset(&m, 0, sizeof m);
	m.msg_iov = iov;
	m.msg_iovlen = 2;
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof u);
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	/* The first sendmsg carries the descriptors; whatever it did not
	 * write goes out with plain writes. */
	for (;;) {
		w = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (w >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			poll(&p, 1, -1);
			continue;
		}
		goto out;
	}
	if ((size_t)w < sizeof h) {
		if (write_all(fd, (char *)&h + w, sizeof h - (size_t)w) == -1 ||
		    write_all(fd, body, len) == -1)
			goto out;
	} else if (write_all(fd, body + (w - (ssize_t)sizeof h),
	    len - (size_t)(w - (ssize_t)sizeof h)) == -1) {
		goto out;
	}
	rc = 0;
out:
	free(body);
	return rc;
}

int
chan_fill(struct chan *c)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CHAN_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr m;
	struct iovec iov;
	struct cmsghdr *cm;
	ssize_t r;

	buf_reserve(&c->in, 65536);
	iov.iov_base = c->in.p + c->in.len;
	iov.iov_len = c->in.cap - c->in.len - 1;
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	do {
		r = recvmsg(c->fd, &m, MSG_CMSG_CLOEXEC);
	} while (r == -1 && errno == EINTR);
	if (r < 0)
		return -1;
	if (m.msg_flags & MSG_CTRUNC)
		c->lost_fds = true;
	for (cm = CMSG_FIRSTHDR(&m); cm != NULL; cm = CMSG_NXTHDR(&m, cm)) {
		int n, i, *p;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		p = (int *)CMSG_DATA(cm);
		for (i = 0; i < n; i++) {
			if (c->nfds < (int)nitems(c->fds))
				c->fds[c->nfds++] = p[i];
			else
				close(p[i]);
		}
	}
	if (r == 0) {
		c->eof = true;
		return 0;
	}
	c->in.len += (size_t)r;
	c->in.p[c->in.len] = '\0';
	return 1;
}

bool
chan_pending(const struct chan *c)
{
	return c->in.len > 0;
}

json_t *
chan_next(struct chan *c, int *fds, int *nfds, bool *bad)
{
	struct chan_hdr h;
	struct chan_weight wt;
	json_t *msg;
	json_error_t jerr;
	size_t max;
	int i, n;

	if (bad != NULL)
		*bad = false;
	if (nfds != NULL)
		*nfds = 0;
	if (c->in.len < sizeof h)
		return NULL;
	memcpy(&h, c->in.p, sizeof h);
	/* refused at the header, before its body is buffered */
	max = c->lim != NULL ? c->lim->frame : CHAN_MAX_FRAME;
	if (h.len > max || h.nfds > CHAN_MAX_FDS) {
		snprintf(c->why, sizeof c->why, "a header of %u bytes and %u "
		    "descriptors, over the limits of %zu and %d", h.len, h.nfds,
		    max, CHAN_MAX_FDS);
		goto out;
	}
	/* A frame's descriptors come with its first byte: by now they are
	 * all here, or they were never sent. */
	if ((int)h.nfds > c->nfds || c->lost_fds) {
		if (c->lost_fds)
			snprintf(c->why, sizeof c->why, "more descriptors than "
			    "a frame may carry, cut off by the kernel");
		else
			snprintf(c->why, sizeof c->why, "a header announcing %u "
			    "descriptors, of which %d arrived", h.nfds, c->nfds);
		goto out;
	}
	if (c->in.len < sizeof h + h.len)
		return NULL;
	/* Weighed before jansson allocates anything for it. */
	if (c->lim != NULL && chan_scan(c->in.p + sizeof h, h.len, c->lim,
	    &wt, c->why, sizeof c->why) == -1)
		goto out;
	msg = json_loadb(c->in.p + sizeof h, h.len, JSON_ALLOW_NUL, &jerr);
	buf_consume(&c->in, sizeof h + h.len);
	/* A big frame's buffer goes back once it is read. */
	if (c->in.len == 0 && c->in.cap > (1u << 20)) {
		buf_free(&c->in);
		buf_init(&c->in);
	}
	n = (int)h.nfds;
	for (i = 0; i < n; i++) {
		if (fds != NULL && nfds != NULL)
			fds[(*nfds)++] = c->fds[i];
		else
			close(c->fds[i]);
	}
	memmove(c->fds, c->fds + n, sizeof(int) * (size_t)(c->nfds - n));
	c->nfds -= n;
	if (msg == NULL) {
		snprintf(c->why, sizeof c->why, "a body that is not JSON: "
		    "%.60s", jerr.text);
		while (nfds != NULL && *nfds > 0)
			close(fds[--*nfds]);
		goto out;
	}
	return msg;
out:
	if (bad != NULL)
		*bad = true;
	return NULL;
}

json_t *
chan_recv(struct chan *c, int *fds, int *nfds)
{
	json_t *msg;
	bool bad;

	for (;;) {
		msg = chan_next(c, fds, nfds, &bad);
		if (msg != NULL)
			return msg;
		if (bad)
			return NULL;
		if (chan_fill(c) <= 0)
			return NULL;
	}
}
