/*
 * record.c - transcripts written as the session goes (see record.h), the
 * directory of default ones, and coil --transcripts.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hostfs.h"
#include "options.h"
#include "record.h"
#include "util.h"

struct record {
	FILE *f;
	char *path;
	struct hostfs_dir dir;	/* path's directory, held since the start */
	char *name;		/* path's name in it */
	bool broken;		/* a write failed: nothing more is written */
	bool fleeting;		/* a default transcript no request has
				   reached yet: removed if none does */
	bool held;		/* --resume: nothing written until
				   record_resumed */
	json_t *header;		/* the header it will write then */
};

void
record_now(char *buf, size_t len)
{
	/* Three lines a cell, most in the same second as the one before:
	 * the date is formatted once a second. */
	static time_t last = -1;
	static char day[24];
	static size_t daylen;
	struct timespec ts;
	struct tm tm;
	long ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != last) {
		gmtime_r(&ts.tv_sec, &tm);
		daylen = strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
		last = ts.tv_sec;
	}
	if (len < daylen + 6) {
		snprintf(buf, len, "%s", day);
		return;
	}
	ms = ts.tv_nsec / 1000000;
	memcpy(buf, day, daylen);
	buf[daylen] = '.';
	buf[daylen + 1] = (char)('0' + ms / 100);
	buf[daylen + 2] = (char)('0' + ms / 10 % 10);
	buf[daylen + 3] = (char)('0' + ms % 10);
	buf[daylen + 4] = 'Z';
	buf[daylen + 5] = '\0';
}

/* A write failed: said once; the recording ends, not the session. */
static void
record_broke(struct record *r)
{
	coil_warn("transcript '%s' not written on: %s", r->path,
	    strerror(errno));
	r->broken = true;
}

/* Write one object as a line (stolen); flush when asked. */
static void
record_write(struct record *r, json_t *o, bool flush)
{
	char *line;
	bool ok;

	if (r->broken) {
		json_decref(o);
		return;
	}
	/* One string, one fwrite: jansson's dumpf writes piece by piece. */
	line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(o);
	if (line == NULL)
		fatal("cannot encode a transcript line");
	ok = fputs(line, r->f) != EOF && putc('\n', r->f) != EOF &&
	    (!flush || fflush(r->f) == 0);
	free(line);
	if (!ok)
		record_broke(r);
}

static json_t *
record_header(const struct coil_opts *opts)
{
	char now[32];
	const char *mode = opts->replay != NULL ? "replay" :
	    opts->mode == MODE_AGENT ? "agent" : opts->mode == MODE_MCP ? "mcp" :
	    opts->ui ? "ui" : "plain";

	record_now(now, sizeof now);
	return json_pack("{s:i, s:s, s:s, s:s, s:I, s:s, s:s, s:o, s:o}",
	    "coil_transcript", RECORD_FORMAT, "coil", PACKAGE_VERSION,
	    "python", PYTHON_EMBED_VERSION, "started", now, "pid",
	    (json_int_t)getpid(), "mode", mode, "sandbox",
	    sandbox_profile_name(opts->sbx.profile), "venv",
	    opts->sbx.venv != NULL ? json_string(opts->sbx.venv) :
	    json_null(), "options", options_json(opts));
}

struct record *
record_open(const struct coil_opts *opts, char *err, size_t errlen)
{
	struct record *r = xcalloc(1, sizeof *r);
	char why[256];
	int fd = -1;

	/* Walked and opened before any cell runs, and appended to through
	 * that descriptor only: a cell that swaps the file or its
	 * directory later changes nothing of what is written where. */
	if (hostfs_walk(opts->record, HOSTFS_PARENT, &r->dir, &r->name, why,
	    sizeof why) == 0)
		fd = hostfs_open(&r->dir, r->name, HOSTFS_APPEND, why,
		    sizeof why);
	if (fd != -1 && (r->f = fdopen(fd, "a")) == NULL) {
		snprintf(why, sizeof why, "%s", strerror(errno));
		close(fd);
	}
	if (r->f == NULL) {
		err_set(err, errlen, "cannot write the transcript '%s': %s",
		    opts->record, why);
		hostfs_close(&r->dir);
		free(r->name);
		free(r);
		return NULL;
	}
	/* Lines go out whole or not at all where a flush is due; the
	 * buffer holds the queued and started lines of a cell until its
	 * output or response flushes them. */
	setvbuf(r->f, NULL, _IOFBF, 1 << 16);
	r->path = xstrdup(opts->record);
	r->fleeting = opts->record_default;
	r->held = opts->resume != NULL;
	r->header = r->held ? record_header(opts) : NULL;
	if (!r->held)
		record_write(r, record_header(opts), true);
	return r;
}

/* FILE.jsonl's name with ".NAME" before its extension (a new string):
 * the transcript of branch NAME beside its parent's. */
static char *
record_branch_name(const char *parent, const char *session)
{
	const char *dot = strrchr(parent, '.');
	char *s;

	if (dot == NULL || dot == parent)
		dot = parent + strlen(parent);
	xasprintf(&s, "%.*s.%s%s", (int)(dot - parent), parent, session, dot);
	return s;
}

struct record *
record_open_branch(const struct record *parent, const struct coil_opts *opts,
    const char *session, const char *from, int cell, char *err,
    size_t errlen)
{
	struct record *r;
	char why[256];
	json_t *h;
	int fd;

	if (parent->broken || parent->dir.magic)
		return err_set(err, errlen, "'%s' is no file a name can be "
		    "made beside", parent->path), NULL;
	r = xcalloc(1, sizeof *r);
	r->dir = parent->dir;
	r->dir.fd = fcntl(parent->dir.fd, F_DUPFD_CLOEXEC, 3);
	r->name = record_branch_name(parent->name, session);
	xasprintf(&r->path, "%.*s%s", (int)(strlen(parent->path) -
	    strlen(parent->name)), parent->path, r->name);
	/* fs(walked): beside the parent's transcript, in its directory
	 * held since the start, no link followed */
	fd = r->dir.fd < 0 ? -1 : hostfs_open(&r->dir, r->name,
	    HOSTFS_APPEND, why, sizeof why);
	if (fd != -1 && (r->f = fdopen(fd, "a")) == NULL) {
		snprintf(why, sizeof why, "%s", strerror(errno));
		close(fd);
	}
	if (r->f == NULL) {
		err_set(err, errlen, "cannot write the transcript '%s': %s",
		    r->path, r->dir.fd < 0 ? strerror(errno) : why);
		record_close(r);
		return NULL;
	}
	setvbuf(r->f, NULL, _IOFBF, 1 << 16);
	h = record_header(opts);
	json_object_set_new(h, "branch", json_pack("{s:s, s:s, s:i, s:s}",
	    "session", session, "parent", from, "cell", cell,
	    "parent_transcript", parent->path));
	/* a branch the resume's cells make again: held with its parent,
	 * its cells in its file already */
	r->held = parent->held;
	if (r->held)
		r->header = h;
	else
		record_write(r, h, true);
	return r;
}

/* Which events a transcript keeps: not the namespace (it holds the
 * values' reprs, and replay does not need them) nor checkpoints. */
static bool
record_keeps(enum session_ev kind)
{
	return kind != EV_NAMESPACE && kind != EV_CHECKPOINT;
}

/* A request's id as JSON: null and integers without the encoder. */
static void
record_put_id(FILE *f, json_t *id)
{
	char *s;

	if (id == NULL || json_is_null(id)) {
		fputs("null", f);
	} else if (json_is_integer(id)) {
		fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
	} else if ((s = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT |
	    JSON_REAL_PRECISION(17))) != NULL) {
		fputs(s, f);
		free(s);
	}
}

/* A cell's queued, started and response lines, written as
 * session_event_json would build them but without building them: the
 * response's text is the one its client is sent (response_text).  False
 * when ev is not one of those plain cases. */
static bool
record_fast(struct record *r, const struct session_event *ev,
    const char *now)
{
	const char *text = NULL;
	size_t len = 0;
	json_t *by;
	bool ok;

	if (ev->info != NULL || ev->seq == 0 || (ev->kind != EV_STARTED &&
	    ev->kind != EV_RESPONSE && ev->kind != EV_QUEUED) ||
	    (ev->kind == EV_QUEUED && ev->req == NULL))
		return false;
	fprintf(r->f, "{\"t\":\"%s\",\"event\":\"%s\",\"id\":", now,
	    session_ev_names[ev->kind]);
	record_put_id(r->f, ev->id);
	fprintf(r->f, ",\"seq\":%llu,\"origin\":\"%s\"",
	    (unsigned long long)ev->seq, origin_names[ev->origin]);
	/* a branch's name is checked: letters, digits, '_', '-', '.' */
	if (ev->session != NULL)
		fprintf(r->f, ",\"session\":\"%s\"", ev->session);
	if (ev->by != NULL) {
		/* the client's name beside its origin (session_name) */
		by = json_string(ev->by);
		fputs(",\"by\":", r->f);
		json_dumpf(by, r->f, JSON_ENCODE_ANY);
		json_decref(by);
	}
	if (ev->kind == EV_QUEUED) {
		fputs(",\"request\":", r->f);
		json_dumpf(ev->req, r->f, JSON_COMPACT | JSON_REAL_PRECISION(17));
	} else if (ev->kind == EV_RESPONSE) {
		text = response_text(ev->resp, 0, &len);
		fputs(",\"response\":", r->f);
		fwrite(text, 1, len - 1, r->f);		/* not its newline */
	}
	if (ev->cell > 0)
		fprintf(r->f, ",\"cell\":%d", ev->cell);
	ok = fputs("}\n", r->f) != EOF &&
	    (ev->kind != EV_RESPONSE || fflush(r->f) == 0);
	if (!ok)
		record_broke(r);
	return true;
}

void
record_event(void *ctx, const struct session_event *ev)
{
	struct record *r = ctx;
	char now[32];
	json_t *o, *e;

	if (!record_keeps(ev->kind) || r->broken || r->held)
		return;
	if (ev->kind == EV_QUEUED)
		r->fleeting = false;
	record_now(now, sizeof now);
	if (record_fast(r, ev, now))
		return;
	o = json_pack("{s:s}", "t", now);
	e = session_event_json(ev);
	json_object_update(o, e);
	json_decref(e);
	if (ev->cell > 0 && json_object_get(o, "cell") == NULL)
		json_object_set_new(o, "cell", json_integer(ev->cell));
	/* A cell's lines reach the disk with its answer, or sooner when
	 * the buffer fills: nothing answered is lost. */
	record_write(r, o, ev->kind != EV_QUEUED && ev->kind != EV_STARTED &&
	    ev->kind != EV_OUTPUT);
}

void
record_resumed(struct record *r, json_t *resumed, long long cut_at,
    bool newline)
{
	int fd = fileno(r->f);
	struct stat st;

	if (!r->held)
		return;
	r->held = false;
	/* fs(walked): the transcript's descriptor, opened through hostfs's
	 * walk before any cell ran; what follows a cut line is ours */
	if (cut_at >= 0 && fstat(fd, &st) == 0 && st.st_size > cut_at &&
	    ftruncate(fd, (off_t)cut_at) == -1)
		coil_warn("transcript '%s': cannot cut its last line off: %s",
		    r->path, strerror(errno));
	else if (newline && putc('\n', r->f) == EOF)
		record_broke(r);
	json_object_set(r->header, "resumed", resumed);
	record_write(r, r->header, true);
	r->header = NULL;
}

void
record_close(struct record *r)
{
	if (r == NULL)
		return;
	json_decref(r->header);
	if (r->f != NULL && fclose(r->f) != 0 && !r->broken)
		coil_warn("transcript '%s': %s", r->path, strerror(errno));
	/* A session asked nothing (an MCP client's probe of the server,
	 * an agent that left at once) leaves no default transcript to
	 * crowd out the ones that hold cells. */
	if (r->fleeting)
		hostfs_remove(&r->dir, r->name);
	hostfs_close(&r->dir);
	free(r->name);
	free(r->path);
	free(r);
}

/* ---- the directory of default transcripts --------------------------- */

char *
record_dir(char *err, size_t errlen)
{
	char *state = hostfs_state_dir(), *dir;

	if (state == NULL) {
		err_set(err, errlen, "neither XDG_STATE_HOME nor HOME is an "
		    "absolute path: set one, or pass --no-record");
		return NULL;
	}
	xasprintf(&dir, "%s/transcripts", state);
	free(state);
	return dir;
}

/* The directory of default transcripts, made (each new directory 0700:
 * transcripts hold what cells saw) and walked (hostfs.h): 0, or -1 with
 * err.  *path: a new string. */
static int
record_dir_open(struct hostfs_dir *d, char **path, char *err, size_t errlen)
{
	char why[256];

	if ((*path = record_dir(err, errlen)) == NULL)
		return -1;
	if (hostfs_walk(*path, HOSTFS_MKDIRS, d, NULL, why, sizeof why) == -1) {
		err_set(err, errlen, "cannot use '%s': %s", *path, why);
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

/* Ours: the names record_default_path gives. */
static bool
record_ours(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 6 && d->d_name[0] >= '0' && d->d_name[0] <= '9' &&
	    strcmp(d->d_name + n - 6, ".jsonl") == 0;
}

static int
record_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the default transcripts in d, sorted (by start time):
 * their count, *names a new array of new strings; -1 with errno. */
static int
record_names(const struct hostfs_dir *d, char ***names)
{
	struct dirent *e;
	DIR *dir;
	size_t n = 0, cap = 0;
	/* fs(walked): the transcripts dir, reached through hostfs's walk */
	int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*names = NULL;
	if (fd == -1 || (dir = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	while ((e = readdir(dir)) != NULL) {
		if (!record_ours(e))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 128;
			*names = xrealloc(*names, cap * sizeof **names);
		}
		(*names)[n++] = xstrdup(e->d_name);
	}
	closedir(dir);
	if (n > 0)
		qsort(*names, n, sizeof **names, record_name_cmp);
	return (int)n;
}

char *
record_default_path(char *err, size_t errlen)
{
	struct hostfs_dir d;
	char **names, *dir, *path, stamp[32];
	int n, i;
	time_t t = time(NULL);
	struct tm tm;

	if (record_dir_open(&d, &dir, err, errlen) == -1)
		return NULL;
	n = record_names(&d, &names);
	for (i = 0; i < n; i++) {
		/* The names sort by start time: the oldest go, leaving
		 * room for this one.  One already gone is no matter; a
		 * link is removed, never followed. */
		if (i < n - (RECORD_KEEP - 1))
			hostfs_remove(&d, names[i]);
		free(names[i]);
	}
	free(names);
	hostfs_close(&d);
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	xasprintf(&path, "%s/%s-%ld.jsonl", dir, stamp, (long)getpid());
	free(dir);
	return path;
}

/* ---- coil --transcripts --------------------------------------------- */

/* Milliseconds since the epoch of a time as record_now writes it, or
 * -1. */
static int64_t
record_parse_time(const char *s)
{
	struct tm tm = { 0 };
	const char *p;

	if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	return (int64_t)timegm(&tm) * 1000 + (*p == '.' ? atoi(p + 1) : 0);
}

struct record_sum {
	char started[32];
	int cells, errors, crashes;
	int64_t t0, t1;
};

static void
record_sum_line(struct record_sum *sum, json_t *o)
{
	json_t *resp = json_object_get(o, "response");
	const char *st = json_string_value(json_object_get(resp, "status"));
	int64_t t = record_parse_time(json_string_value(json_object_get(o,
	    "t")));

	if (t >= 0)
		sum->t1 = t;
	if (!json_is_object(resp) || st == NULL ||
	    json_object_get(resp, "output") == NULL)
		return;		/* only exec answers are cells */
	sum->cells++;
	if (strcmp(st, "error") == 0)
		sum->errors++;
	if (strcmp(st, "crashed") == 0 || strcmp(st, "timeout") == 0)
		sum->crashes++;
}

/* Sum one transcript up; -1 when its first line is no header. */
static int
record_sum(const struct hostfs_dir *d, const char *name,
    struct record_sum *sum)
{
	char err[512], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	json_t *o;
	int lineno = 0, fd;
	FILE *f;

	memset(sum, 0, sizeof *sum);
	/* A link or FIFO among them is not followed, nor waited on. */
	if ((fd = hostfs_open(d, name, HOSTFS_READ, err, sizeof err)) == -1)
		return -1;
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return -1;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		o = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, NULL);
		if (++lineno == 1) {
			const char *s = json_string_value(json_object_get(o,
			    "started"));

			if (s == NULL) {
				json_decref(o);
				break;
			}
			snprintf(sum->started, sizeof sum->started, "%s", s);
			sum->t0 = sum->t1 = record_parse_time(s);
		} else if (json_is_object(o)) {
			record_sum_line(sum, o);
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
	return sum->started[0] != '\0' ? 0 : -1;
}

int
record_list(FILE *out)
{
	struct hostfs_dir d;
	struct record_sum sum;
	char err[512], *dir, **names;
	int n, i;

	if (record_dir_open(&d, &dir, err, sizeof err) == -1) {
		coil_error("%s", err);
		return 2;
	}
	if ((n = record_names(&d, &names)) < 0) {
		coil_error("cannot list '%s': %s", dir, strerror(errno));
		hostfs_close(&d);
		free(dir);
		return 2;
	}
	if (n == 0)
		fprintf(out, "no transcripts in %s\n", dir);
	else
		fprintf(out, "%-24s %6s %6s %7s %9s  %s\n", "started", "cells",
		    "errors", "crashes", "duration", "transcript");
	for (i = 0; i < n; i++) {
		if (record_sum(&d, names[i], &sum) == 0)
			fprintf(out, "%-24s %6d %6d %7d %8.1fs  %s/%s\n",
			    sum.started, sum.cells, sum.errors, sum.crashes,
			    (double)(sum.t1 - sum.t0) / 1000, dir, names[i]);
		free(names[i]);
	}
	free(names);
	hostfs_close(&d);
	free(dir);
	return 0;
}
