/*
 * record.h - transcripts: a session written down as it happens, one
 * JSON object a line (the format is in man/coil.1, TRANSCRIPTS, and
 * share/example.transcript).
 *
 * The first line is the header: {"coil_transcript": RECORD_FORMAT,
 * "coil", "python", "started", "pid", "mode", "sandbox", "options"};
 * each line after it is one event of the session hub as
 * session_event_json gives it, with "t" (UTC, ISO 8601 with
 * milliseconds) first and "cell" when the event concerns one: a
 * request queued ("queued", with "request"), started, its stream
 * output, its response ("response"), a request cancelled, background
 * output, the worker's changes and warnings.
 *
 * The writer is a hub observer (session.h), attached by session_new, so
 * a transcript holds exactly what the clients were told, whatever the
 * front end.  A line goes out whole; each response, cancellation,
 * worker event and warning is flushed as it is written (with the lines
 * before it), so a coil that crashes loses nothing already answered.  A failed write ends the recording with one
 * message on stderr, never the session.
 *
 * Default transcripts (agent and MCP sessions) go to
 * $XDG_STATE_HOME/coil/transcripts/ (~/.local/state when unset), named
 * by their start time; the newest RECORD_KEEP are kept.  One that no
 * request reached is removed when the session ends.
 *
 * Supervisor only; no Python.  record_close frees what record_open
 * made.
 *
 * Layer: an observer of the hub, beside the front ends.  It reads the
 * events it is handed and writes them through session-event.c, which
 * needs nothing of the hub's: session_new opens it and the hub calls
 * record_event, and nothing here calls back into the session.
 */
#ifndef COIL_RECORD_H
#define COIL_RECORD_H

#include <stdbool.h>
#include <stdio.h>

#include "opts.h"
#include "session.h"

#define RECORD_FORMAT	1	/* the newest format this coil reads */
#define RECORD_KEEP	100	/* default transcripts kept */

struct record;

/* Open opts->record for appending and write the header: NULL with a
 * message when it cannot be opened. */
struct record *record_open(const struct coil_opts *opts, char *err,
    size_t errlen);
/* With --resume (opts->resume) the transcript opens held: nothing is
 * written, not even the header, while the transcript's cells run again
 * (they are in the file already), until record_resumed writes the
 * header, with "resumed" (the report, borrowed) in it: the mark a
 * replay reads as the same session going on, not a new one.  Before
 * it, a last line cut short (a crash mid-write) is cut off at cut_at,
 * the end of the last whole line (-1: none was cut), or (newline) a
 * last line that is whole but lacks its newline gets one.  A branch's
 * transcript opened while its parent's is held is held with it. */
void record_resumed(struct record *r, json_t *resumed, long long cut_at,
    bool newline);
/* The transcript of branch session, forked from session from at cell:
 * beside parent's, its name parent's with ".SESSION" before the
 * extension, made in the directory parent walked before any cell ran;
 * its header says "branch": {"session", "parent", "cell",
 * "parent_transcript"}.  NULL with a message when it cannot be. */
struct record *record_open_branch(const struct record *parent,
    const struct coil_opts *opts, const char *session, const char *from,
    int cell, char *err, size_t errlen);
/* The hub callback (ctx: the record). */
void record_event(void *ctx, const struct session_event *ev);
void record_close(struct record *r);

/* The path of the directory of default transcripts: a new string, or
 * NULL with a message.  It is made (mode 0700, with its parents) and
 * walked (hostfs.h) by record_default_path and record_list. */
char *record_dir(char *err, size_t errlen);
/* A new default transcript's path in record_dir, after removing the
 * oldest so that at most RECORD_KEEP - 1 stay: a new string, or NULL
 * with a message. */
char *record_default_path(char *err, size_t errlen);
/* coil --transcripts: one line per default transcript, oldest first:
 * start time, cells, errors, crashes and timeouts, duration, path.
 * Returns the exit status. */
int record_list(FILE *out);

/* The time now as the transcripts write it, into buf (at least 32). */
void record_now(char *buf, size_t len);

#endif
