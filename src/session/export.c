/*
 * export.c - the session as a Jupyter notebook (see export.h).
 *
 * Cells are built as their events come: a queued exec request opens
 * one (its source), output events append stream outputs, the response
 * closes it with its displays and result or error.  Requests are served
 * in order, so at most the queued ones are open at a time.  What a
 * response becomes in a cell is export-cell.c's; this file owns the
 * export's life: the open cells, the keeper's temp files and the
 * notebook's writing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chan.h"
#include "export-int.h"
#include "hostfs.h"
#include "util.h"

/* The most bytes of figures one notebook holds (each at most
 * CHAN_FIGURE_MAX): the figures come in answer order until they are
 * spent, and the keeper holds no more than these on disk.  Past that a
 * figure is its path. */
#define EXPORT_FIGURES_MAX ((size_t)64 << 20)

struct export {
	char *path;		/* --export FILE, as given; NULL: a keeper */
	struct hostfs_dir dir;	/* FILE's directory, held since the start */
	char *name;		/* FILE's name in it */
	json_t *cells;		/* the notebook's, in answer order, unless */
	FILE *spill;		/* a keeper's: one compact line a cell, in
				   an unlinked temp file */
	bool spill_failed;	/* a write to it failed: cells are lost */
	long spilled;		/* its bytes so far, its figures' base64 too */
	FILE *figs;		/* the keeper's figures, their bytes as the
				   worker's descriptors held them, one after
				   another in an unlinked temp file; a line
				   of the spill names each [index, offset,
				   length] */
	long figs_len;		/* their bytes so far */
	size_t n;		/* cells so far */
	struct xcell *open;
	size_t nopen;
	char *python;		/* the worker's version, once it said */
	size_t figures_left;	/* of EXPORT_FIGURES_MAX */
};

static int export_dir(struct export *x, const char *path, char *err,
    size_t errlen);

struct export *
export_new(const char *path, char *err, size_t errlen)
{
	struct export *x = xcalloc(1, sizeof *x);

	x->dir.fd = -1;
	if (path != NULL && export_dir(x, path, err, errlen) == -1) {
		free(x);
		return NULL;
	}
	x->path = path != NULL ? xstrdup(path) : NULL;
	x->cells = json_array();
	x->figures_left = EXPORT_FIGURES_MAX;
	return x;
}

static struct xcell *
export_find(struct export *x, uint64_t seq)
{
	size_t i;

	for (i = 0; i < x->nopen; i++)
		if (x->open[i].seq == seq)
			return &x->open[i];
	return NULL;
}

static void
export_queued(struct export *x, const struct session_event *ev)
{
	const char *op = json_string_value(json_object_get(ev->req, "op"));
	const char *code = json_string_value(json_object_get(ev->req, "code"));

	if (op == NULL || strcmp(op, "exec") != 0 || code == NULL)
		return;
	x->open = xrealloc(x->open, (x->nopen + 1) * sizeof *x->open);
	x->open[x->nopen++] = (struct xcell){ ev->seq, json_pack(
	    "{s:s, s:{}, s:n, s:o, s:[]}", "cell_type", "code", "metadata",
	    "execution_count", "source", export_lines(code), "outputs"), 0,
	    { NULL, 0, 0 } };
}

/* The stream output pending in c goes into its outputs. */
static void
export_flush(struct xcell *c)
{
	if (c->stream != 0 && c->text.len > 0)
		export_put_stream(json_object_get(c->cell, "outputs"),
		    c->stream == 2, c->text.p, c->text.len);
	c->stream = 0;
	c->text.len = 0;
}

/* Stream text goes on the output before it when that is the same
 * stream: it is gathered until the stream changes or the answer comes
 * (not joined again at each piece, which took time in the square of a
 * long output's pieces; a NUL among them is kept). */
static void
export_stream(struct xcell *c, const struct session_event *ev)
{
	if (ev->text == NULL || ev->text_len == 0)
		return;
	if (c->stream != ev->stream)
		export_flush(c);
	c->stream = ev->stream == 2 ? 2 : 1;
	buf_add(&c->text, ev->text, ev->text_len);
}

/* A finished cell (borrowed) joins the notebook. */
static void
export_add(struct export *x, json_t *cell)
{
	json_object_set_new(cell, "id", json_sprintf("cell-%zu", ++x->n));
	if (x->spill == NULL) {
		json_array_append(x->cells, cell);
		return;
	}
	if (json_dumpf(cell, x->spill, JSON_COMPACT) == -1 ||
	    putc('\n', x->spill) == EOF || (x->spilled = ftell(x->spill)) ==
	    -1)
		x->spill_failed = true;
}

static void
export_answer(struct export *x, struct xcell *c, const struct response *r)
{
	json_t *outs = json_object_get(c->cell, "outputs"), *figs;

	if (export_probe(r))
		return;
	if (r->truncated > 0) {
		/* The streamed events stopped at the cap; the answer keeps
		 * the head and the tail, with the cut said between them,
		 * as %save's notebook does. */
		json_array_clear(outs);
		export_put_texts(outs, r);
	}
	figs = export_figures64(r, &x->figures_left);
	export_outputs(c, r, figs);
	json_decref(figs);
	export_add(x, c->cell);
}

/* The keeper's figures of r, within the bytes left, appended to x->figs
 * as they are: [[index, offset, length], ...] (a new reference), or
 * NULL when none.  A cell's figures cost a copy, not an encoding: base64
 * is made when a notebook is asked for (export_figures_back). */
static json_t *
export_figure_refs(struct export *x, const struct response *r)
{
	const struct figure *f;
	json_t *refs = NULL;
	size_t i, n = r->nfigs > 0 ? json_array_size(r->display) : 0;

	for (i = 0; i < n; i++) {
		f = figure_find(r->figs, r->nfigs, r->display, i);
		if (f == NULL || f->len > x->figures_left)
			continue;
		if (fwrite(f->p, 1, f->len, x->figs) != f->len) {
			x->spill_failed = true;
			break;
		}
		x->figures_left -= f->len;
		if (refs == NULL)
			refs = json_array();
		json_array_append_new(refs, json_pack("[I, I, I]",
		    (json_int_t)i, (json_int_t)x->figs_len,
		    (json_int_t)f->len));
		x->figs_len += (long)f->len;
		x->spilled += (long)((f->len + 2) / 3 * 4);
	}
	return refs;
}

/* A spill line's figures back as export_figures64 gives them: from
 * x->figs when they are references, else as they are (a keeper
 * without that file wrote the base64).  A new reference, or NULL. */
static json_t *
export_figures_back(const struct export *x, json_t *refs)
{
	json_t *o, *ref;
	char key[24], *p, *b64;
	size_t i, len;
	off_t off;

	if (json_is_object(refs))
		return json_incref(refs);
	if (!json_is_array(refs) || x->figs == NULL)
		return NULL;
	o = json_object();
	json_array_foreach(refs, i, ref) {
		off = (off_t)json_integer_value(json_array_get(ref, 1));
		len = (size_t)json_integer_value(json_array_get(ref, 2));
		if (off < 0 || len == 0 || len > CHAN_FIGURE_MAX)
			continue;
		p = xmalloc(len);
		if (pread(fileno(x->figs), p, len, off) == (ssize_t)len) {
			snprintf(key, sizeof key, "%lld", (long long)
			    json_integer_value(json_array_get(ref, 0)));
			b64 = export_base64((const unsigned char *)p, len);
			json_object_set_new(o, key, json_string(b64));
			free(b64);
		}
		free(p);
	}
	return o;
}

struct export *
export_keeper(void)
{
	struct export *x = export_new(NULL, NULL, 0);

	/* On disk, so that a long session's notebook costs no memory; in
	 * memory when there is no temp file to be had. */
	/* fs(private): an unlinked file of libc's tmpfile, made O_EXCL (or
	 * O_TMPFILE) in the supervisor's /tmp, which cells do not write */
	x->spill = tmpfile();
	if (x->spill != NULL &&
	    fcntl(fileno(x->spill), F_SETFD, FD_CLOEXEC) == -1) {
		fclose(x->spill);
		x->spill = NULL;
	}
	if (x->spill != NULL)
		setvbuf(x->spill, NULL, _IOFBF, 1 << 16);
	/* fs(private): an unlinked file of libc's tmpfile, made O_EXCL (or
	 * O_TMPFILE) in the supervisor's /tmp, which cells do not write */
	x->figs = x->spill != NULL ? tmpfile() : NULL;
	if (x->figs != NULL &&
	    fcntl(fileno(x->figs), F_SETFD, FD_CLOEXEC) == -1) {
		fclose(x->figs);
		x->figs = NULL;
	}
	return x;
}

size_t
export_figures_left(const struct export *x)
{
	return x != NULL ? x->figures_left : 0;
}

void
export_keep(struct export *x, json_t *req, struct response *r,
    const struct export_runs *runs)
{
	json_t *code = json_object_get(req, "code"), *cell, *order, *figs;
	const char *text;
	char *src, *ord = NULL, *fig = NULL;
	size_t len;

	if ((cell = export_mark_of(r)) != NULL) {
		/* the keeper's lines are arrays; a mark is its cell */
		export_add(x, cell);
		json_decref(cell);
		return;
	}
	if (!json_is_string(code) || !(r->has & RESP_EXEC) || export_probe(r))
		return;
	order = export_runs_json(runs);
	/* The figures' bytes now: they are the response's (figure.h), and
	 * no file is read for them by its path later. */
	if (x->spill == NULL || x->figs == NULL) {
		figs = export_figures64(r, &x->figures_left);
		if (x->spill == NULL) {
			cell = export_cell_of(json_string_value(code), r,
			    order, figs);
			export_add(x, cell);
			json_decref(cell);
			json_decref(order);
			json_decref(figs);
			return;
		}
	} else {
		figs = export_figure_refs(x, r);
	}
	/* Each cell costs its keeper a line of what was at hand: the code,
	 * the answer's text its client was sent (response_text), the order
	 * of its streams when they took turns (else null, when figures
	 * follow) and where its figures' bytes are in x->figs (or, without
	 * that file, their base64); the notebook is built from them when
	 * it is asked for. */
	text = response_text(r, 0, &len);
	src = json_dumps(code, JSON_ENCODE_ANY);
	if (order != NULL)
		ord = json_dumps(order, JSON_COMPACT);
	if (figs != NULL)
		fig = json_dumps(figs, JSON_COMPACT);
	if (src == NULL || fprintf(x->spill, "[%s,", src) < 0 ||
	    fwrite(text, 1, len - 1, x->spill) != len - 1 ||
	    ((ord != NULL || fig != NULL) && fprintf(x->spill, ",%s",
	    ord != NULL ? ord : "null") < 0) ||
	    (fig != NULL && (fputc(',', x->spill) == EOF ||
	    fputs(fig, x->spill) == EOF)) ||
	    fputs("]\n", x->spill) == EOF)
		x->spill_failed = true;
	x->spilled += (long)(len + (src != NULL ? strlen(src) : 0) + 3 +
	    (ord != NULL ? strlen(ord) + 1 : fig != NULL ? 5 : 0) +
	    (fig != NULL ? strlen(fig) + 1 : 0));
	free(src);
	free(ord);
	free(fig);
	json_decref(order);
	json_decref(figs);
}

void
export_event(void *ctx, const struct session_event *ev)
{
	struct export *x = ctx;
	struct xcell *c = ev->seq > 0 ? export_find(x, ev->seq) : NULL;
	const char *py;
	json_t *mark;

	if (ev->kind == EV_QUEUED)
		export_queued(x, ev);
	else if (ev->kind == EV_OUTPUT && c != NULL)
		export_stream(c, ev);
	else if ((ev->kind == EV_RESPONSE || ev->kind == EV_CANCELLED) &&
	    c != NULL) {
		export_flush(c);
		if (ev->kind == EV_RESPONSE && (ev->resp->has & RESP_EXEC))
			export_answer(x, c, ev->resp);
		json_decref(c->cell);
		buf_free(&c->text);
		*c = x->open[--x->nopen];
	} else if (ev->kind == EV_RESPONSE && c == NULL &&
	    (mark = export_mark_of(ev->resp)) != NULL) {
		export_add(x, mark);
		json_decref(mark);
	} else if (ev->kind == EV_WORKER && x->python == NULL &&
	    (py = json_string_value(json_object_get(ev->info, "python"))))
		x->python = xstrdup(py);
}

/* The cells: a new reference (read back from the spill file). */
static json_t *
export_cells(const struct export *x)
{
	json_t *a, *cell, *figs;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (x->spill == NULL)
		return json_incref(x->cells);
	a = json_array();
	if (fflush(x->spill) == EOF || fseek(x->spill, 0, SEEK_SET) == -1 ||
	    (x->figs != NULL && fflush(x->figs) == EOF))
		return a;
	while ((len = getline(&line, &cap, x->spill)) > 0) {
		json_t *o = json_loadb(line, (size_t)len, JSON_ALLOW_NUL,
		    NULL);
		const char *code = json_string_value(json_array_get(o, 0));
		struct response *r;

		if (code != NULL && json_is_object(json_array_get(o, 1))) {
			r = export_response_of(json_array_get(o, 1));
			figs = export_figures_back(x, json_array_get(o, 3));
			cell = export_cell_of(code, r, json_array_get(o, 2),
			    figs);
			json_decref(figs);
			json_object_set_new(cell, "id", json_sprintf("cell-%zu",
			    json_array_size(a) + 1));
			json_array_append_new(a, cell);
			response_free(r);
		} else if (json_is_object(o)) {
			/* a mark (export_mark_of) */
			json_object_set_new(o, "id", json_sprintf("cell-%zu",
			    json_array_size(a) + 1));
			json_array_append(a, o);
		}
		json_decref(o);
	}
	free(line);
	fseek(x->spill, 0, SEEK_END);
	return a;
}

static json_t *
export_notebook(const struct export *x)
{
	return json_pack("{s:i, s:i, s:{s:{s:s, s:s, s:s}, s:{s:s, s:s}}, "
	    "s:o}", "nbformat", 4, "nbformat_minor", 5, "metadata",
	    "kernelspec", "name", "python3", "display_name", "Python 3",
	    "language", "python", "language_info", "name", "python",
	    "version", x->python ? x->python : PYTHON_EMBED_VERSION,
	    "cells", export_cells(x));
}

char *
export_dump(const struct export *x, size_t *ncells)
{
	json_t *nb = export_notebook(x);
	char *s = json_dumps(nb, JSON_INDENT(1) | JSON_REAL_PRECISION(6));

	if (s == NULL)
		fatal("out of memory");
	*ncells = json_array_size(json_object_get(nb, "cells"));
	json_decref(nb);
	return s;
}

int
export_memfd(const struct export *x, size_t max, size_t *ncells)
{
	char *s = NULL;
	size_t n, off = 0;
	ssize_t w;
	int fd = -1, e;

	/* A cell may ask as often as it likes: what is on disk is not
	 * loaded when it is too big already. */
	if (x->spill_failed || (size_t)x->spilled > max) {
		errno = x->spill_failed ? EIO : EMSGSIZE;
		goto out;
	}
	s = export_dump(x, ncells);
	n = strlen(s);
	if (n > max) {
		errno = EMSGSIZE;
		goto out;
	}
	/* fs(private): anonymous memory, sealed, which the worker gets as a
	 * descriptor */
	fd = memfd_create("coil-notebook", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		goto out;
	for (; off < n; off += (size_t)w)
		if ((w = write(fd, s + off, n - off)) <= 0) {
			if (w == 0)
				errno = EIO;
			if (w == 0 || errno != EINTR)
				goto out;
			w = 0;
		}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW |
	    F_SEAL_SHRINK | F_SEAL_SEAL) == -1 ||
	    lseek(fd, 0, SEEK_SET) == -1)
		goto out;
	free(s);
	return fd;
out:
	e = errno;
	if (fd >= 0)
		close(fd);
	free(s);
	errno = e;
	return -1;
}

/* Write the notebook to x->path: 0, or -1 said on stderr.  Through the
 * directory held since the start (hostfs.h): a new file renamed over
 * the name, so nothing a cell put at the name is followed. */
static int
export_write(struct export *x)
{
	struct hostfs_new n;
	char why[256];
	json_t *nb;
	int rc;

	if (hostfs_new_open(&n, &x->dir, x->name, why, sizeof why) == -1)
		goto out;
	nb = export_notebook(x);
	rc = json_dumpfd(nb, n.fd, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
	json_decref(nb);
	if (rc == -1)
		snprintf(why, sizeof why, "%s", strerror(errno));
	if (close(n.fd) == -1 && rc == 0)
		rc = err_set(why, sizeof why, "%s", strerror(errno));
	/* Renamed over the name only when whole; removed otherwise. */
	if (hostfs_new_commit(&n, &x->dir, x->name, rc == 0, why,
	    sizeof why) == 0 && rc == 0)
		return 0;
out:
	coil_error("cannot write the notebook '%s': %s", x->path, why);
	return -1;
}

/* Where --export writes: its directory, walked and held now, before any
 * cell runs (hostfs.h), and a trial file made there and removed, so a
 * session checks at its start, not after all its cells.  0, or -1 with
 * err. */
static int
export_dir(struct export *x, const char *path, char *err, size_t errlen)
{
	struct hostfs_new n;
	struct stat st;
	char why[256];

	if (hostfs_walk(path, HOSTFS_PARENT, &x->dir, &x->name, why,
	    sizeof why) == -1)
		return err_set(err, errlen, "--export '%s' cannot be written: "
		    "%s", path, why);
	/* fs(walked): in FILE's directory, held since the start */
	if (fstatat(x->dir.fd, x->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode)) {
		err_set(err, errlen, "--export '%s' is a directory", path);
		goto out;
	}
	if (hostfs_new_open(&n, &x->dir, x->name, why, sizeof why) == -1) {
		err_set(err, errlen, "--export '%s' cannot be written: %s",
		    path, why);
		goto out;
	}
	close(n.fd);
	hostfs_new_commit(&n, &x->dir, x->name, false, NULL, 0);
	return 0;
out:
	hostfs_close(&x->dir);
	free(x->name);
	x->name = NULL;
	return -1;
}

int
export_close(struct export *x)
{
	int rc = 0;

	if (x != NULL && x->path != NULL)
		rc = export_write(x);
	export_free(x);
	return rc;
}

void
export_free(struct export *x)
{
	size_t i;

	if (x == NULL)
		return;
	for (i = 0; i < x->nopen; i++) {
		json_decref(x->open[i].cell);
		buf_free(&x->open[i].text);
	}
	free(x->open);
	json_decref(x->cells);
	if (x->spill != NULL)
		fclose(x->spill);
	if (x->figs != NULL)
		fclose(x->figs);
	free(x->python);
	free(x->path);
	free(x->name);
	hostfs_close(&x->dir);
	free(x);
}
