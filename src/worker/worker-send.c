/*
 * worker-send.c - a reply goes back to the supervisor (worker-int.h),
 * with the descriptors of the image files its display names.  Worker
 * only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chan.h"
#include "worker-int.h"

/* A warning in reply that left images of its display were not sent as
 * files: first, so that no cap on the warnings (worker.py's 100) leaves
 * it out. */
static void
worker_figures_left(json_t *reply, size_t left)
{
	json_t *w = json_object_get(reply, "warnings");
	char msg[200];

	if (!json_is_array(w)) {
		w = json_array();
		json_object_set_new(reply, "warnings", w);
	}
	snprintf(msg, sizeof msg, "%zu image%s after the cell's first %d "
	    "left as paths (an answer carries at most %d image files); show "
	    "them over more cells", left, left == 1 ? "" : "s",
	    CHAN_FIGURES_MAX, CHAN_FIGURES_MAX);
	json_array_insert_new(w, 0, json_string(msg));
}

/*
 * The image files a reply's display names go with it as descriptors,
 * opened here with the sandbox's rights (link.h): the supervisor reads
 * the bytes from them and never opens a path the worker names, so it
 * can show only what a cell could have read itself.  The first
 * CHAN_FIGURES_MAX images that are regular files of at most
 * CHAN_FIGURE_MAX bytes go, each path once (the rest stay paths); the
 * reply's "figures" gives the display index of each, in the
 * descriptors' order; a warning says how many images after those stayed
 * paths.  Returns their count; worker_send closes them once sent.  A
 * cell without images pays one look at an empty list.
 */
static int
worker_figures(json_t *reply, int *fds)
{
	json_t *display = json_object_get(reply, "display"), *e, *at = NULL;
	const char *path, *type, *sent[CHAN_FIGURES_MAX];
	struct stat st;
	size_t i, left = 0;
	int n = 0, fd, k;

	json_object_del(reply, "figures");	/* only what is opened here */
	json_array_foreach(display, i, e) {
		path = json_string_value(json_object_get(e, "path"));
		type = json_string_value(json_object_get(e, "type"));
		if (path == NULL || type == NULL ||
		    strncmp(type, "image/", 6) != 0)
			continue;
		for (k = 0; k < n && strcmp(sent[k], path) != 0; k++)
			;
		if (k < n)
			continue;
		if (n == CHAN_FIGURES_MAX) {
			left++;
			continue;
		}
		/* O_NONBLOCK: a FIFO named as a figure does not wait for a
		 * writer; it is no regular file and goes back closed. */
		/* fs(worker): the worker opens a figure a cell named, under
		 * the sandbox, with the cell's rights (figure.h) */
		fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd == -1)
			continue;
		if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
		    st.st_size <= 0 || (size_t)st.st_size > CHAN_FIGURE_MAX) {
			close(fd);
			continue;
		}
		if (at == NULL)
			at = json_array();
		json_array_append_new(at, json_integer((json_int_t)i));
		sent[n] = path;
		fds[n++] = fd;
	}
	if (at != NULL)
		json_object_set_new(reply, "figures", at);
	if (left > 0)
		worker_figures_left(reply, left);
	return n;
}

/* Send a reply to the request numbered seq, with its figures'
 * descriptors.  One over the limits the supervisor weighs our frames
 * with (chan.h's chan_peer_limits: a result or an error message of tens
 * of megabytes, or a display entry a cell filled with nested lists)
 * becomes an error that says so: the supervisor would refuse the frame
 * and end this worker. */
void
worker_send(json_t *reply, json_int_t seq)
{
	int fds[CHAN_FIGURES_MAX], nfds, rc, i;

	json_object_set_new(reply, "t", json_string("reply"));
	json_object_set_new(reply, "seq", json_integer(seq));
	nfds = worker_figures(reply, fds);
	rc = chan_send_within(worker_ctl.fd, reply, fds, nfds,
	    &chan_peer_limits);
	/* None outlives the reply: not into a checkpoint forked next, nor
	 * into the next cell's reach. */
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (rc == -1) {
		char msg[200];

		if (errno != EMSGSIZE)
			_exit(0);
		json_decref(reply);
		snprintf(msg, sizeof msg, "the answer is too large to send "
		    "(over %zu MiB, %zu values, %u levels of nesting, a "
		    "text of %zu MiB or a key of %zu KiB); print or return "
		    "less of it", chan_peer_limits.frame >> 20,
		    chan_peer_limits.items, chan_peer_limits.depth,
		    chan_peer_limits.string >> 20, chan_peer_limits.key >> 10);
		reply = worker_error("OverflowError", msg);
		json_object_set_new(reply, "t", json_string("reply"));
		json_object_set_new(reply, "seq", json_integer(seq));
		if (chan_send(worker_ctl.fd, reply, NULL, 0) == -1)
			_exit(0);
	}
	json_decref(reply);
}

#ifdef COIL_TEST_HOOKS
bool
worker_test_ckpt_ignored(int cell)
{
	const char *v = getenv("COIL_TEST_IGNORE_CKPT_CELL");

	return v != NULL && atoi(v) == cell;
}
#endif
