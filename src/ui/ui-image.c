/*
 * ui-image.c - the figures the curses UI keeps and draws (see
 * ui-image.h).
 *
 * The model's answers carry each figure's bytes (response.h's figs, read
 * by the supervisor from descriptors, never from a path); a copy of
 * each goes into this store, the oldest let go while more than
 * UI_IMAGE_KEEP bytes (the figures' and their decoded pixels') are
 * kept.  A UL_IMAGE line holds its figure's number (ui_line's img) and,
 * as its text, what it shows once the figure is gone.
 *
 * Lines are drawn bottom-up (ui-draw.c), so an image line's height is
 * asked before it is drawn: it is the decoded picture's, which is made
 * for the pane's width and at most its height, and made again when
 * they change (one decoded size kept per figure).  A figure that will
 * not decode is one line saying why, whatever the terminal.
 *
 * The kitty and sixel pictures are not curses' cells: the frame only
 * leaves their cells blank and notes where each goes; after curses'
 * refresh, ui_image_flush draws them, and only when where they go
 * changed (a sixel picture is erased by a full repaint first).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ncurses.h>

#include "export.h"
#include "figure.h"
#include "ui-draw.h"
#include "ui-image.h"
#include "ui-int.h"
#include "ui-pixels.h"

#define UI_PLACES 32
#define UI_VIEWERS 16
#define UI_IMAGE_COUNT 4096	/* figures kept, those to come too */

struct ui_img {
	uint32_t id;
	uint64_t seq;		/* its cell's request */
	int cell;
	char *png;		/* NULL: an attached UI's, bytes to come */
	size_t len;
	size_t at;		/* to come: its display entry in display */
	json_t *display;
	struct ui_pixmap pm;	/* decoded for the box bw x bh */
	unsigned bw, bh;
	bool failed;
	char why[128];
};

/* Where a kitty or sixel picture goes on the screen. */
struct ui_place {
	uint32_t id;
	int y, x;
	int skip, rows;		/* its rows left out above, and shown */
	int cols;
	bool redo;		/* ui_image_erase wrote over a row of it */
};

struct ui_images {
	struct ui_img *v;	/* oldest first */
	size_t n;
	size_t bytes;
	uint32_t next;
	struct ui_place place[UI_PLACES], drawn[UI_PLACES];
	int nplace, ndrawn;
	pid_t viewers[UI_VIEWERS];	/* their keepers, to reap */
	int nviewers;
};

static struct ui_images *
ui_images(struct ui *u)
{
	if (u->img == NULL)
		u->img = xcalloc(1, sizeof *u->img);
	return u->img;
}

static void
ui_img_drop(struct ui_images *s, size_t i)
{
	struct ui_img *m = &s->v[i];

	s->bytes -= m->len + (size_t)m->pm.w * m->pm.h * 3;
	json_decref(m->display);
	free(m->png);
	free(m->pm.px);
	memmove(m, m + 1, (s->n - i - 1) * sizeof *m);
	s->n--;
}

void
ui_image_free(struct ui *u)
{
	struct ui_images *s = u->img;

	if (s == NULL)
		return;
	while (s->n > 0)
		ui_img_drop(s, s->n - 1);
	free(s->v);
	free(s);
	u->img = NULL;
}

/* Let the oldest figures go while too much is kept, but not keep. */
static void
ui_img_bound(struct ui_images *s, uint32_t keep)
{
	size_t i = 0;

	while ((s->bytes > UI_IMAGE_KEEP || s->n > UI_IMAGE_COUNT) &&
	    i < s->n) {
		if (s->v[i].id == keep)
			i++;
		else
			ui_img_drop(s, i);
	}
}

static struct ui_img *
ui_img_find(struct ui *u, uint32_t id)
{
	struct ui_images *s = ui_images(u);
	size_t i;

	for (i = 0; id != 0 && i < s->n; i++)
		if (s->v[i].id == id)
			return &s->v[i];
	return NULL;
}

/* A new figure of r's display entry at, its bytes p (NULL: to come),
 * with its two lines; the new entry. */
static struct ui_img *
ui_img_add(struct ui *u, const struct response *r, size_t at, const char *p,
    size_t n)
{
	struct ui_images *s = ui_images(u);
	json_t *e = json_array_get(r->display, at);
	const char *path = json_string_value(json_object_get(e, "path"));
	struct ui_img *m;

	if (path == NULL)
		path = "?";
	if (p == NULL)
		n = (size_t)json_integer_value(json_object_get(e, "bytes"));
	if (n > UI_IMAGE_KEEP / 2)
		return NULL;
	s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
	m = &s->v[s->n++];
	*m = (struct ui_img){ .id = ++s->next, .seq = r->seq,
	    .cell = r->cell, .at = at };
	if (p != NULL) {
		m->png = xmalloc(n);
		memcpy(m->png, p, n);
		m->len = n;
		s->bytes += n;
	} else
		m->display = json_incref(r->display);
	ui_note_line(u, UL_IMAGE, "(figure %s: no longer kept, the "
	    "newest %zu MiB of figures are)", path, UI_IMAGE_KEEP >> 20);
	ui_line_at(u, u->nlines - 1)->img = m->id;
	ui_img_bound(s, m->id);
	return m;
}

void
ui_image_entry(struct ui *u, const struct response *r, size_t i)
{
	const struct figure *f;
	const char *type;

	f = figure_find(r->figs, r->nfigs, r->display, i);
	type = json_string_value(json_object_get(json_array_get(r->display,
	    i), "type"));
	if (f != NULL && f->len > 0)
		ui_img_add(u, r, i, f->p, f->len);
	else if (u->remote && type != NULL && strcmp(type, "image/png") == 0)
		/* the session sends an attached UI the bytes of the cells
		 * before it came afterwards (ui.c's hello;
		 * ui_image_figures) */
		ui_img_add(u, r, i, NULL, 0);
}

void
ui_image_figures(struct ui *u, uint64_t seq, const struct figure *figs,
    size_t n)
{
	struct ui_images *s = ui_images(u);
	const struct figure *f;
	struct ui_img *m;
	size_t i;

	for (i = 0; i < s->n; i++) {
		m = &s->v[i];
		if (m->seq != seq || m->png != NULL)
			continue;
		f = figure_find(figs, n, m->display, m->at);
		if (f == NULL || f->len == 0 || f->len > UI_IMAGE_KEEP / 2)
			continue;
		m->png = xmalloc(f->len);
		memcpy(m->png, f->p, f->len);
		m->len = f->len;
		s->bytes += f->len;
		u->dirty = true;
	}
	if (s->n > 0)
		ui_img_bound(s, s->v[s->n - 1].id);
}

/* How the image is shown: pixels, cells of colour, or a box. */
enum ui_show { SH_PIXELS, SH_CELLS, SH_BOX };

static enum ui_show
ui_img_show(struct ui *u)
{
	if (ui_term_gfx() != GFX_CELLS)
		return SH_PIXELS;
	if (!u->color || COLORS < 8 ||
	    strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		return SH_BOX;
	return SH_CELLS;
}

/* m decoded for w columns and hmax rows; false when it will not. */
static bool
ui_img_ready(struct ui *u, struct ui_img *m, int w, int hmax)
{
	struct ui_images *s = ui_images(u);
	unsigned bw = (unsigned)w, bh = 2 * (unsigned)hmax, cw, ch;
	char err[128];

	if (m->failed || m->png == NULL)
		return false;
	if (ui_img_show(u) == SH_PIXELS) {
		ui_term_cell(&cw, &ch);
		bw *= cw;
		bh = (unsigned)hmax * ch;
	}
	if (bw > UI_PIXMAP_MAX / 2)
		bw = UI_PIXMAP_MAX / 2;
	if (bh > UI_PIXMAP_MAX / 2)
		bh = UI_PIXMAP_MAX / 2;
	if (m->pm.px != NULL && m->bw == bw && m->bh == bh)
		return true;
	s->bytes -= (size_t)m->pm.w * m->pm.h * 3;
	free(m->pm.px);
	m->pm = (struct ui_pixmap){ 0 };
	m->bw = bw;
	m->bh = bh;
	if (ui_decode(m->png, m->len, bw, bh, &m->pm, err, sizeof err) < 0) {
		m->failed = true;
		snprintf(m->why, sizeof m->why, "%s", err);
		return false;
	}
	s->bytes += (size_t)m->pm.w * m->pm.h * 3;
	ui_img_bound(s, m->id);
	return true;
}

int
ui_image_rows(struct ui *u, const struct ui_line *l, int w, int hmax)
{
	struct ui_img *m = ui_img_find(u, l->img);
	unsigned cw, ch;

	if (m == NULL || w < 4 || hmax < 3 || !ui_img_ready(u, m, w, hmax))
		return 1;
	/* found again: making room for its pixels may have let older
	 * figures go, and moved it in the store */
	m = ui_img_find(u, l->img);
	switch (ui_img_show(u)) {
	case SH_BOX:
		return 3;
	case SH_CELLS:
		return (int)(m->pm.h + 1) / 2;
	case SH_PIXELS:
		break;
	}
	ui_term_cell(&cw, &ch);
	return (int)((m->pm.h + ch - 1) / ch);
}

/* One row of half blocks: the top pixel the foreground, the bottom the
 * background.  Pairs come from ncurses' own allocator, which reuses the
 * least recently used one when all are taken. */
static void
ui_img_cells_row(const struct ui_pixmap *pm, int y, int x, unsigned row)
{
	const uint8_t *t = pm->px + (size_t)2 * row * pm->w * 3, *b;
	bool wide = COLORS >= 256;
	cchar_t cc;
	unsigned i;
	int fg, bg, pair;

	for (i = 0; i < pm->w; i++, t += 3) {
		b = 2 * row + 1 < pm->h ? t + (size_t)pm->w * 3 : NULL;
		fg = wide ? pix_xterm256(t[0], t[1], t[2]) : pix_ansi8(t[0],
		    t[1], t[2]);
		bg = b == NULL ? -1 : wide ? pix_xterm256(b[0], b[1], b[2]) :
		    pix_ansi8(b[0], b[1], b[2]);
		pair = alloc_pair(fg, bg);
		if (pair < 0)
			pair = 0;
		setcchar(&cc, L"\u2580", A_NORMAL, 0, &pair);
		mvadd_wch(y, x + (int)i, &cc);
	}
}

/* The box of a figure shown without colours: its size inside. */
static void
ui_img_box(const struct ui_img *m, int x, int y, int w, int rows, int top)
{
	char s[128];
	int n, bw;

	n = snprintf(s, sizeof s, " figure %ux%u px: Esc v opens it ",
	    m->pm.iw, m->pm.ih);
	bw = n + 2 < w ? n + 2 : w;
	attrset(A_NORMAL);
	if (y >= top) {
		mvaddch(y, x, ACS_ULCORNER);
		mvhline(y, x + 1, ACS_HLINE, bw - 2);
		mvaddch(y, x + bw - 1, ACS_URCORNER);
	}
	if (y + 1 >= top) {
		mvaddch(y + 1, x, ACS_VLINE);
		mvaddnstr(y + 1, x + 1, s, bw - 2);
		mvaddch(y + 1, x + bw - 1, ACS_VLINE);
	}
	if (rows > 2 && y + 2 >= top) {
		mvaddch(y + 2, x, ACS_LLCORNER);
		mvhline(y + 2, x + 1, ACS_HLINE, bw - 2);
		mvaddch(y + 2, x + bw - 1, ACS_LRCORNER);
	}
}

void
ui_image_draw(struct ui *u, const struct ui_line *l, int x, int y, int w,
    int rows, int top)
{
	struct ui_images *s = ui_images(u);
	struct ui_img *m = ui_img_find(u, l->img);
	const char *text = l->text;
	int len = (int)l->len, i;
	unsigned cw, ch;
	char why[160];

	if (m != NULL && !m->failed && m->png == NULL) {
		text = "(figure: its bytes have not come from the session)";
		len = (int)strlen(text);
	}
	if (m == NULL || m->pm.px == NULL || rows < 2) {
		if (y < top)
			return;
		/* the text is the cell's path or the decoder's word:
		 * through ui_put, which shows what it cannot print */
		if (m != NULL && m->failed) {
			snprintf(why, sizeof why, "[figure: %s]", m->why);
			text = why;
			len = (int)strlen(why);
		}
		ui_put(y, x, w, text, (size_t)len, A_DIM);
		return;
	}
	switch (ui_img_show(u)) {
	case SH_BOX:
		ui_img_box(m, x, y, w, rows, top);
		return;
	case SH_CELLS:
		for (i = 0; i < rows && 2 * (unsigned)i < m->pm.h; i++)
			if (y + i >= top)
				ui_img_cells_row(&m->pm, y + i, x, (unsigned)i);
		return;
	case SH_PIXELS:
		break;
	}
	if (s->nplace == UI_PLACES)
		return;
	ui_term_cell(&cw, &ch);
	s->place[s->nplace++] = (struct ui_place){ .id = m->id, .x = x,
	    .y = y < top ? top : y, .skip = y < top ? top - y : 0,
	    .rows = y < top ? rows - (top - y) : rows,
	    .cols = (int)((m->pm.w + cw - 1) / cw) };
}

static bool
ui_place_same(const struct ui_place *a, const struct ui_place *b)
{
	return a->id == b->id && a->y == b->y && a->x == b->x &&
	    a->skip == b->skip && a->rows == b->rows && a->cols == b->cols;
}

/* Sixel pictures are the terminal's pixels, not curses' cells: each
 * old one not in this frame at the same place is erased before the
 * frame's refresh, then drawn where it goes now.  Only its cells, which
 * curses holds blank: a full repaint at each scroll step flickered.
 * They are written over with blanks: xterm's ECH and EL clear the
 * pixels shown but keep the picture, which comes back where curses
 * then scrolls a region of lines (CSR and an index); text written over
 * it takes it away.  All of an old one's rows go, not only those its
 * new place leaves, for the same scrolling.  A new picture on an
 * erased row is drawn again. */
void
ui_image_erase(struct ui *u)
{
	struct ui_images *s = ui_images(u);
	const struct ui_place *d;
	struct buf b;
	int i, j, y;

	if (ui_term_gfx() != GFX_SIXEL)
		return;
	if (u->focus == F_OVERLAY || u->lay.too_small)
		s->nplace = 0;
	for (i = 0; i < s->ndrawn; i++) {
		d = &s->drawn[i];
		for (j = 0; j < s->nplace; j++)
			if (ui_place_same(d, &s->place[j]))
				break;
		if (j < s->nplace)
			continue;
		buf_init(&b);
		buf_addstr(&b, "\033[m");
		for (j = 0; j < d->cols; j++)
			buf_add(&b, " ", 1);
		for (y = d->y; y < d->y + d->rows; y++) {
			ui_term_write(y, d->x, b.p, b.len);
			for (j = 0; j < s->nplace; j++)
				if (s->place[j].y <= y && y < s->place[j].y +
				    s->place[j].rows)
					s->place[j].redo = true;
		}
		buf_free(&b);
	}
}

/* A picture's rows from place p's, its pixels cropped to them. */
static void
ui_img_emit(struct ui_img *m, const struct ui_place *p, struct buf *b)
{
	unsigned cw, ch, y0, h;
	const uint8_t *px;

	ui_term_cell(&cw, &ch);
	y0 = (unsigned)p->skip * ch;
	if (y0 >= m->pm.h)
		return;
	h = (unsigned)p->rows * ch;
	if (h > m->pm.h - y0)
		h = m->pm.h - y0;
	px = m->pm.px + (size_t)y0 * m->pm.w * 3;
	if (ui_term_gfx() == GFX_SIXEL) {
		pix_sixel(px, m->pm.w, h, b);
		return;
	}
	/* kitty: raw RGB (f=24) in chunks of 4096 base64 bytes; q=2, no
	 * answers to read back; C=1, the cursor stays */
	{
		char *e = export_base64(px, (size_t)m->pm.w * h * 3);
		size_t len = strlen(e), off, k;

		for (off = 0; off == 0 || off < len; off += k) {
			k = len - off < 4096 ? len - off : 4096;
			if (off == 0)
				buf_printf(b, "\033_Ga=T,f=24,s=%u,v=%u,C=1,"
				    "q=2,m=%d;", m->pm.w, h, off + k < len);
			else
				buf_printf(b, "\033_Gm=%d;", off + k < len);
			buf_add(b, e + off, k);
			buf_addstr(b, "\033\\");
			if (k == 0)
				break;
		}
		free(e);
	}
}

void
ui_image_flush(struct ui *u)
{
	struct ui_images *s = ui_images(u);
	struct buf b;
	bool same = s->nplace == s->ndrawn;
	int i, j;

	if (ui_term_gfx() == GFX_CELLS)
		return;
	if (u->focus == F_OVERLAY || u->lay.too_small)
		s->nplace = 0;
	for (i = 0; same && i < s->nplace; i++)
		same = ui_place_same(&s->place[i], &s->drawn[i]);
	if (same) {
		s->nplace = 0;
		return;
	}
	if (ui_term_gfx() == GFX_KITTY) {
		/* d=A, not d=a: the pictures' data goes with their
		 * places, else each one sent again (every scroll step)
		 * stays in the terminal's memory until its quota */
		static const char del[] = "\033_Ga=d,d=A,q=2\033\\";

		ui_term_write(-1, -1, del, sizeof del - 1);
	}
	buf_init(&b);
	for (i = 0; i < s->nplace; i++) {
		struct ui_img *m = ui_img_find(u, s->place[i].id);

		/* a sixel picture still where it was, untouched, stays */
		for (j = 0; ui_term_gfx() == GFX_SIXEL && !s->place[i].redo &&
		    j < s->ndrawn; j++)
			if (ui_place_same(&s->place[i], &s->drawn[j]))
				break;
		if (m == NULL || m->pm.px == NULL || (ui_term_gfx() ==
		    GFX_SIXEL && !s->place[i].redo && j < s->ndrawn))
			continue;
		b.len = 0;
		ui_img_emit(m, &s->place[i], &b);
		ui_term_write(s->place[i].y, s->place[i].x, b.p, b.len);
	}
	buf_free(&b);
	for (i = 0; i < s->nplace; i++)
		s->place[i].redo = false;
	memcpy(s->drawn, s->place, sizeof s->place);
	s->ndrawn = s->nplace;
	s->nplace = 0;
}

/* In the keeper of a viewer: its own session, no terminal, no
 * descriptor of coil's but the pipe (moved to 3), the reaper of what
 * the viewer leaves behind (xdg-open starts a viewer and exits); it
 * runs the viewer and waits for them all, then leaves.  Never returns. */
static void __attribute__((noreturn))
ui_img_keeper(const char *viewer, const char *path, int out)
{
	int dn, e, keep = 3;
	sigset_t none;
	pid_t pid;

	setsid();
	/* fs(dev): the null device */
	dn = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0 ||
	    dup2(out, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
		_exit(127);
	close_fds_except(&keep, 1);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* the UI ignores SIGINT and the session SIGPIPE: the viewer
	 * starts as any program does, every signal its own */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	pid = fork();
	if (pid < 0) {
		e = errno;
		write_all(3, &e, sizeof e);
		_exit(127);
	}
	if (pid == 0) {
		/* the user's viewer ($COIL_VIEWER, else xdg-open on the
		 * user's PATH), on a file of ours: nothing a cell wrote
		 * picks the program */
		if (strpbrk(viewer, " \t") != NULL)	/* fs(exec): sh */
			execl("/bin/sh", "sh", "-c", "exec $0 \"$1\"", viewer,
			    path, (char *)NULL);
		else	/* fs(exec): the viewer itself, as above */
			execlp(viewer, viewer, path, (char *)NULL);
		e = errno;
		write_all(3, &e, sizeof e);
		_exit(127);
	}
	close(3);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	_exit(0);
}

/* Run viewer on path, detached: its keeper (ui_img_keeper) is ours to
 * reap (ui_image_reap), and the viewer and its children the keeper's,
 * so none of them is left a zombie of this process, which is the
 * session's subreaper (session.c).  0 when it started, else -1 with
 * why in err. */
static int
ui_img_run(struct ui_images *s, const char *viewer, const char *path,
    char *err, size_t len)
{
	int fd[2], e = 0;
	pid_t pid;
	ssize_t k;

	if (s->nviewers == UI_VIEWERS)
		return err_set(err, len, "%d viewers are open", UI_VIEWERS);
	if (pipe2(fd, O_CLOEXEC) < 0)
		return err_set(err, len, "%s", strerror(errno));
	pid = fork();
	if (pid == 0)
		ui_img_keeper(viewer, path, fd[1]);
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		return err_set(err, len, "%s", strerror(errno));
	}
	s->viewers[s->nviewers++] = pid;
	/* the pipe closes at the exec (a success) or after the errno */
	while ((k = read(fd[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(fd[0]);
	if (k == (ssize_t)sizeof e)
		return err_set(err, len, "%s", strerror(e));
	return 0;
}

bool
ui_image_reap(struct ui *u)
{
	struct ui_images *s = u->img;
	int i, n = 0;

	for (i = 0; s != NULL && i < s->nviewers; i++)
		if (waitpid(s->viewers[i], NULL, WNOHANG) == 0)
			s->viewers[n++] = s->viewers[i];
	if (s != NULL)
		s->nviewers = n;
	return n > 0;
}

void
ui_image_open(struct ui *u, bool cell)
{
	struct ui_images *s = ui_images(u);
	const char *dir = getenv("TMPDIR"), *viewer = getenv("COIL_VIEWER");
	struct ui_img *m = NULL;
	char path[4096], err[128];
	size_t i;
	int fd;

	for (i = s->n; i-- > 0 && m == NULL;)
		if (s->v[i].png != NULL && (!cell || (u->cell_sel < u->ncells &&
		    s->v[i].seq == u->cells[u->cell_sel].seq)))
			m = &s->v[i];
	u->dirty = true;
	if (m == NULL) {
		snprintf(u->note, sizeof u->note, "%s", cell ? "this cell "
		    "has no figure kept" : "no figure kept to open");
		return;
	}
	if (dir == NULL || *dir != '/')
		dir = "/tmp";
	if (viewer == NULL || *viewer == '\0')
		viewer = "xdg-open";
	snprintf(path, sizeof path, "%s/coil-figure-%d-XXXXXX.png", dir,
	    m->cell);
	/* fs(private): a new file of ours (O_EXCL, 0600: no link followed,
	 * none replaced) in the user's $TMPDIR: never the cell's path,
	 * which may be a link a cell planted */
	fd = mkstemps(path, 4);
	if (fd < 0 || write_all(fd, m->png, m->len) < 0) {
		snprintf(u->note, sizeof u->note, "cannot write '%.150s': %s; set "
		    "TMPDIR to a directory of yours", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	if (ui_img_run(s, viewer, path, err, sizeof err) < 0)
		snprintf(u->note, sizeof u->note, "cannot run '%.60s' (%.40s): set "
		    "COIL_VIEWER to an image viewer; the figure is in %.80s",
		    viewer, err, path);
	else
		snprintf(u->note, sizeof u->note, "'%.60s %.150s' opened cell "
		    "%d's figure", viewer, path, m->cell);
}
