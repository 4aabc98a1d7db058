/*
 * ui-lines.c - the scrollback's lines (see ui-int.h): a ring of at most
 * --scrollback lines, each cut at UI_LINE_MAX bytes, so a flood of any
 * size holds bounded memory; and the store their text lives in.
 *
 * A line's text is not a block of malloc's: 10,000 lines of a flood
 * would pay malloc's header and rounding on each (112 bytes for 99 of
 * text).  Texts are packed back to back in chunks of UI_CHUNK bytes,
 * each counting the bytes of it still in use.  The ring lets go of its
 * oldest line first, so the oldest chunk empties and is freed as the
 * lines it held leave.  (Chunks mapped on their own, outside malloc's
 * heap, did worse: the holes a flood's freed buffers leave in the heap
 * were then reused by nothing.)  A
 * line grows in place while it is the last text of its chunk (an open
 * line is, but for a mark added to an old header); otherwise it moves
 * to the newest chunk and leaves its old bytes counted free.
 *
 * The cell each line is of is kept once a run of lines (struct ui_run),
 * not in each line: a flood's 10,000 lines are one cell's.
 *
 * A cut line (past UI_LINE_MAX) keeps what the cut needs, struct
 * ui_cut, in the store just before its text: only cut lines pay for
 * it.  Supervisor only; single-threaded.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui-int.h"

#define UI_CHUNK ((size_t)64 * 1024)

_Static_assert(UI_LINE_MAX <= USHRT_MAX, "a line's length and a cut "
    "line's head and tail fit their fields");
_Static_assert(sizeof(void *) != 8 || sizeof(struct ui_line) <= 16,
    "a scrollback line stays 16 bytes");

/* What a cut line keeps past its text, just before it in the store. */
struct ui_cut {
	unsigned long long left;	/* the bytes left out */
	unsigned short head;	/* the head's bytes */
	unsigned short tail;	/* the tail's bytes, the text's last */
};

_Static_assert(sizeof(struct ui_cut) + UI_LINE_MAX <= UI_CHUNK,
    "a line fits a chunk");

struct ui_chunk {
	char *base;		/* UI_CHUNK bytes, malloc's */
	size_t used;		/* bytes given out, from base */
	size_t live;		/* of them, still a line's */
};

/* Lines from line number from (ui_line_no) on are of cell seq, up to
 * the next run's: a cell's block is one run, or a few. */
struct ui_run {
	size_t from;
	uint64_t seq;
};

struct ui_store {
	struct ui_chunk *c;	/* oldest first; the last takes new text */
	size_t n, cap;
	struct ui_run *r;	/* r[r0] to r[nr - 1], by from */
	size_t r0, nr, rcap;
};

/* ---- the store ----------------------------------------------------- */

static struct ui_chunk *
ul_chunk_of(struct ui_store *s, const char *p)
{
	size_t i;

	/* the ring lets go of the oldest first: usually c[0] */
	for (i = 0; i < s->n; i++)
		if (p >= s->c[i].base && p < s->c[i].base + UI_CHUNK)
			return &s->c[i];
	abort();		/* not the store's: a bug */
}

static char *
ul_alloc(struct ui_store *s, size_t n)
{
	struct ui_chunk *c = s->n > 0 ? &s->c[s->n - 1] : NULL;

	if (c == NULL || c->used + n > UI_CHUNK) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 16;
			s->c = xrealloc(s->c, s->cap * sizeof *s->c);
		}
		c = &s->c[s->n++];
		*c = (struct ui_chunk){ .base = xmalloc(UI_CHUNK) };
	}
	c->used += n;
	c->live += n;
	return c->base + c->used - n;
}

/* The n bytes at p are no line's any more. */
static void
ul_release(struct ui_store *s, char *p, size_t n)
{
	struct ui_chunk *c;
	size_t i;

	if (p == NULL || n == 0)
		return;
	c = ul_chunk_of(s, p);
	c->live -= n;
	if (p + n == c->base + c->used)
		c->used -= n;	/* the last text: taken back at once */
	if (c->live > 0)
		return;
	c->used = 0;
	if (c == &s->c[s->n - 1])
		return;		/* the newest stays, empty, for the next */
	free(c->base);
	i = (size_t)(c - s->c);
	memmove(c, c + 1, (s->n - i - 1) * sizeof *c);
	s->n--;
}

/* The had bytes at p (NULL when had is 0) with room for add more after
 * them: in place when p is its chunk's last text and the chunk has the
 * room, else moved. */
static char *
ul_grow(struct ui_store *s, char *p, size_t had, size_t add)
{
	struct ui_chunk *c;
	char *q;

	/* an empty line holds no bytes: its pointer may be of a chunk
	 * gone since */
	if (had == 0)
		p = NULL;
	if (add == 0)
		return p;
	c = p != NULL ? ul_chunk_of(s, p) : NULL;
	if (c != NULL && p + had == c->base + c->used && c->used + add <=
	    UI_CHUNK) {
		c->used += add;
		c->live += add;
		return p;
	}
	q = ul_alloc(s, had + add);
	if (had > 0)
		memcpy(q, p, had);
	ul_release(s, p, had);
	return q;
}

static void
ul_store_free(struct ui_store *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		free(s->c[i].base);
	free(s->c);
	free(s->r);
	free(s);
}

/* ---- the cells lines are of ------------------------------------------- */

/* A run put at r[i], the ones from there on moved up. */
static void
ul_run_insert(struct ui_store *s, size_t i, size_t from, uint64_t seq)
{
	if (s->nr == s->rcap) {
		s->rcap = s->rcap ? 2 * s->rcap : 16;
		s->r = xrealloc(s->r, s->rcap * sizeof *s->r);
	}
	memmove(&s->r[i + 1], &s->r[i], (s->nr - i) * sizeof *s->r);
	s->r[i] = (struct ui_run){ from, seq };
	s->nr++;
}

/* The first line at or past no is the ring's oldest: the runs before
 * its own go, and the array is packed once half of it is gone. */
static void
ul_run_drop(struct ui_store *s, size_t no)
{
	while (s->nr - s->r0 >= 2 && s->r[s->r0 + 1].from <= no)
		s->r0++;
	if (s->r0 > 64 && s->r0 > s->nr / 2) {
		memmove(s->r, &s->r[s->r0], (s->nr - s->r0) * sizeof *s->r);
		s->nr -= s->r0;
		s->r0 = 0;
	}
}

/* The run line number no is in: the last that starts at or before it
 * (s->nr when none does). */
static size_t
ul_run_at(const struct ui_store *s, size_t no)
{
	size_t lo = s->r0, hi = s->nr, mid;

	while (lo < hi) {		/* the first run past no */
		mid = lo + (hi - lo) / 2;
		if (s->r[mid].from <= no)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > s->r0 ? lo - 1 : s->nr;
}

uint64_t
ui_line_seq(struct ui *u, size_t i)
{
	size_t k = ul_run_at(u->store, ui_line_no(u, i));

	return k < u->store->nr ? u->store->r[k].seq : 0;
}

/* The last line moved to index pos, the lines from pos on one down:
 * its run goes with it. */
void
ui_line_move(struct ui *u, size_t pos)
{
	struct ui_store *s = u->store;
	size_t last = u->nlines - 1, at = ui_line_no(u, pos), j, k;
	uint64_t seq = ui_line_seq(u, last);
	struct ui_line keep = *ui_line_at(u, last);

	if (pos >= last)
		return;
	for (j = last; j > pos; j--)
		*ui_line_at(u, j) = *ui_line_at(u, j - 1);
	*ui_line_at(u, pos) = keep;
	if (s->r[s->nr - 1].from == ui_line_no(u, last))
		s->nr--;	/* the moved line's own run */
	for (k = s->r0; k < s->nr; k++)
		if (s->r[k].from >= at)
			s->r[k].from++;
	k = at > 0 ? ul_run_at(s, at - 1) : s->nr;
	if (k < s->nr && s->r[k].seq == seq)
		return;		/* the run before takes it */
	k = k < s->nr ? k + 1 : s->r0;
	ul_run_insert(s, k, at, seq);
	/* the line it pushed down keeps the run it was of */
	if (k > s->r0 && (k + 1 == s->nr || s->r[k + 1].from > at + 1))
		ul_run_insert(s, k + 1, at + 1, s->r[k - 1].seq);
}

/* ---- lines --------------------------------------------------------- */

static struct ui_cut
ul_cut_of(const struct ui_line *l)
{
	struct ui_cut k = { 0, 0, 0 };

	if (l->cut)
		memcpy(&k, l->text - sizeof k, sizeof k);
	return k;
}

/* Where l's bytes in the store start, and how many they are. */
static char *
ul_bytes(const struct ui_line *l, size_t *n)
{
	*n = l->len + (l->cut ? sizeof(struct ui_cut) : 0);
	return l->cut ? l->text - sizeof(struct ui_cut) : l->text;
}

void
ui_lines_init(struct ui *u, size_t scrollback)
{
	u->cap = scrollback > 0 ? scrollback : 1;
	u->lines = xcalloc(u->cap, sizeof *u->lines);
	u->store = xcalloc(1, sizeof *u->store);
}

void
ui_lines_free(struct ui *u)
{
	free(u->lines);
	u->lines = NULL;
	u->nlines = 0;
	ul_store_free(u->store);
	u->store = NULL;
}

struct ui_line *
ui_line_at(struct ui *u, size_t i)
{
	return &u->lines[(u->head + i) % u->cap];
}

struct ui_line *
ui_last_line(struct ui *u)
{
	return u->nlines > 0 ? ui_line_at(u, u->nlines - 1) : NULL;
}

void
ui_line_clear(struct ui *u, struct ui_line *l)
{
	size_t n;
	char *p = ul_bytes(l, &n);

	ul_release(u->store, p, n);
	l->text = NULL;
	l->len = 0;
	l->cut = false;
}

/* The view scrolled up stays on the lines it shows; the picked line
 * and the cells' blocks count lines for good (ui_line_no). */
struct ui_line *
ui_push(struct ui *u, enum ui_kind kind)
{
	struct ui_line *l;
	struct ui_cell *c;

	if (u->nlines == u->cap) {
		ui_line_clear(u, &u->lines[u->head]);
		u->head = (u->head + 1) % u->cap;
		u->nlines--;
		u->dropped++;
		ul_run_drop(u->store, u->dropped);
		if (u->rec_sel < u->dropped)
			u->rec_sel = u->dropped;
	}
	l = ui_line_at(u, u->nlines++);
	*l = (struct ui_line){ .kind = kind & 0xf, .open = true,
	    .field = u->at_field & 0xf };
	if (u->store->nr == u->store->r0 ||
	    u->store->r[u->store->nr - 1].seq != u->at_seq)
		ul_run_insert(u->store, u->store->nr, ui_line_no(u,
		    u->nlines - 1), u->at_seq);
	if (u->scroll > 0 && u->scroll + 1 < u->nlines)
		u->scroll++;
	c = u->at_seq > 0 ? ui_cell_of(u, u->at_seq) : NULL;
	if (c != NULL && c->shown)
		c->end_no = ui_line_no(u, u->nlines - 1);
	u->dirty = true;
	return l;
}

/* A line past UI_LINE_MAX: its head, a marker saying what was left
 * out, and its last UI_LINE_TAIL bytes (the end of a 1 MB line is often
 * what says what it was), n more bytes p coming. */
static void
ul_cut(struct ui *u, struct ui_line *l, const char *p, size_t n)
{
	struct ui_cut k = ul_cut_of(l);
	size_t had = l->cut ? k.tail : l->len, h = l->cut ? k.head :
	    UI_LINE_HEAD, t, a, total, m, old;
	char mid[UI_LINE_TAIL], mark[UI_LINE_MARK], *q, *was;
	char size[22];		/* ui_size's most: "17592186044416.0 MiB" */

	if (!l->cut) {
		/* the head ends on a character's first byte */
		if (h > l->len)
			h = l->len;
		while (h > 0 && h < l->len && (l->text[h] & 0xc0) == 0x80)
			h--;
		had = l->len - h;
	}
	total = had + n;
	t = total < UI_LINE_TAIL ? total : UI_LINE_TAIL;
	a = t > n ? t - n : 0;		/* of the old bytes, kept */
	if (a > 0)
		memcpy(mid, l->text + l->len - a, a);
	memcpy(mid + a, p + (n - (t - a)), t - a);
	while (t > 0 && (mid[0] & 0xc0) == 0x80)
		memmove(mid, mid + 1, --t);
	k.left += total - t;
	k.head = (unsigned short)h;
	k.tail = (unsigned short)t;
	ui_size(size, sizeof size, k.left);
	snprintf(mark, sizeof mark, " \u2026[%s left out: F5, o shows it "
	    "whole]\u2026 ", size);
	m = strlen(mark);
	q = ul_alloc(u->store, sizeof k + h + m + t);
	memcpy(q, &k, sizeof k);
	if (h > 0)
		memcpy(q + sizeof k, l->text, h);
	memcpy(q + sizeof k + h, mark, m);
	memcpy(q + sizeof k + h + m, mid, t);
	was = ul_bytes(l, &old);
	ul_release(u->store, was, old);
	l->text = q + sizeof k;
	l->len = (uint16_t)(h + m + t);
	l->cut = true;
}

void
ui_line_add(struct ui *u, struct ui_line *l, const char *p, size_t n)
{
	size_t k;

	if (n == 0)
		return;
	if (!l->cut && l->len + n > UI_LINE_MAX && l->len < UI_LINE_HEAD) {
		/* the head first, to a character's end */
		k = UI_LINE_HEAD - l->len;
		while (k > 0 && (p[k] & 0xc0) == 0x80)
			k--;
		if (k > 0) {
			l->text = ul_grow(u->store, l->text, l->len, k);
			memcpy(l->text + l->len, p, k);
			l->len = (uint16_t)(l->len + k);
		}
		p += k;
		n -= k;
	}
	if (l->cut || l->len + n > UI_LINE_MAX) {
		ul_cut(u, l, p, n);
		return;
	}
	l->text = ul_grow(u->store, l->text, l->len, n);
	memcpy(l->text + l->len, p, n);
	l->len = (uint16_t)(l->len + n);
}

void
ui_close_line(struct ui *u)
{
	struct ui_line *l = ui_last_line(u);

	if (l != NULL)
		l->open = false;
}
