/*
 * figure.c - a reply's figures read from the descriptors the worker
 * handed over (see figure.h).
 */
#include "config.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "chan.h"
#include "figure.h"
#include "util.h"

/* File systems whose files are the kernel's own: some of them check the
 * reader's rights as they are read, not as they are opened, and the
 * reader would be the supervisor.  No figure lives there. */
static const unsigned long figure_pseudo[] = {
	PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC,
	SECURITYFS_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC,
	BPF_FS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, EFIVARFS_MAGIC,
	PSTOREFS_MAGIC,
};

static bool
figure_pseudo_fs(int fd)
{
	struct statfs sf;
	size_t i;

	if (fstatfs(fd, &sf) == -1)
		return true;
	for (i = 0; i < nitems(figure_pseudo); i++)
		if ((unsigned long)sf.f_type == figure_pseudo[i])
			return true;
	return false;
}

/* fd's bytes, at most max of them, into *f: 0, or -1 when it is no
 * figure (figure.h) or does not fit. */
static int
figure_read(int fd, size_t max, struct figure *f)
{
	struct stat st;
	size_t want, len = 0;
	ssize_t n = 0;
	char *p;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1 || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > max || figure_pseudo_fs(fd))
		return -1;
	/* The size fstat said, no more: a file a cell's thread makes longer
	 * as it is read gives that many bytes, one it cuts short is
	 * refused, and no more than max bytes are ever held. */
	want = (size_t)st.st_size;
	p = xmalloc(want + 1);
	while (len < want) {
		n = pread(fd, p + len, want - len, (off_t)len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (n == -1 || len != (size_t)st.st_size) {
		free(p);
		return -1;
	}
	p[len] = '\0';
	f->p = p;
	f->len = len;
	return 0;
}

struct figure *
figure_take(json_t *figures, const int *fds, int nfds, size_t ndisplay,
    size_t max, size_t *n)
{
	struct figure *figs = NULL;
	json_int_t at, last = -1;
	size_t cap;
	int i;

	*n = 0;
	for (i = 0; i < nfds; i++) {
		at = json_integer_value(json_array_get(figures, (size_t)i));
		if (at <= last || (json_int_t)ndisplay <= at)
			continue;
		last = at;
		if (figs == NULL)
			figs = xcalloc((size_t)nfds, sizeof *figs);
		cap = max < CHAN_FIGURE_MAX ? max : CHAN_FIGURE_MAX;
		if (figure_read(fds[i], cap, &figs[*n]) == -1)
			continue;
		figs[*n].at = (size_t)at;
		max -= figs[(*n)++].len;
	}
	if (*n == 0) {
		free(figs);
		figs = NULL;
	}
	return figs;
}

const struct figure *
figure_find(const struct figure *figs, size_t n, json_t *display,
    size_t at)
{
	const char *path, *p;
	size_t i;

	for (i = 0; i < n; i++)
		if (figs[i].at == at)
			return &figs[i];
	path = json_string_value(json_object_get(json_array_get(display, at),
	    "path"));
	for (i = 0; path != NULL && i < n && figs[i].at < at; i++) {
		p = json_string_value(json_object_get(json_array_get(display,
		    figs[i].at), "path"));
		if (p != NULL && strcmp(p, path) == 0)
			return &figs[i];
	}
	return NULL;
}

void
figure_free(struct figure *figs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(figs[i].p);
	free(figs);
}
