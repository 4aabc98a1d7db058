/*
 * ui-int.h - what the curses UI's files share (ui.h is the contract):
 *   ui.c        the loop, the terminal, signals, the two back ends
 *               (a session in this process, or an attach socket)
 *   ui-model.c  what the screen shows, as data: the scrollback, every
 *               cell of the session, the namespace; fed by events
 *   ui-lines.c  the scrollback's lines and the store of their text
 *   ui-wire.c   an attach socket's line read into those events
 *   ui-draw.c   the panes and overlays drawn with ncursesw
 *   ui-input.c  readline in the input window, keys dispatched
 *   ui-keys.c   the key table and the :-commands, F1's help from both
 *   ui-replay.c coil --replay FILE stepped through (n, a, g N)
 *   ui-branch.c the session's branches: fork here, switch, the picker,
 *               two branches' namespaces compared
 * Supervisor only; single-threaded.
 */
#ifndef COIL_UI_INT_H
#define COIL_UI_INT_H

/* The note Ctrl-C leaves while the running cell is interrupted. */
#define UI_NOTE_INTERRUPTING "interrupting the cell"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "opts.h"
#include "session.h"
#include "ui-layout.h"
#include "util.h"

#define UI_SESSION_MAX 64	/* bytes of a branch's name */

/* What a scrollback line is: the marker and colour it is drawn with. */
enum ui_kind {
	UL_HEAD,	/* "── [3] agent ──" */
	UL_CODE,	/* the cell's source */
	UL_OUT,		/* stdout */
	UL_ERR,		/* stderr: marked "!" whatever the colours */
	UL_FAIL,	/* the cell's error, one line */
	UL_NOTE,	/* coil's own words: worker, warnings, the end */
	UL_RES,		/* the result, "Out[3]: 84" (ui-record.c) */
	UL_HINT,	/* the error's hint, marked "?" */
	UL_DISP,	/* one display entry: its line's disp is its index
			   in the cell's answer's "display" (an image's
			   drawing hangs under it) */
	UL_IMAGE,	/* a figure (ui-image.c), its text shown without it */
};

/* What part of a cell's answer a scrollback line shows: the pager
 * (ui-record.c) opens that part whole. */
enum ui_field {
	FD_NONE, FD_CODE, FD_OUT, FD_ERR, FD_RESULT, FD_ERROR, FD_HINT,
	FD_WARN, FD_DISP, FD_RESTORED, FD_NOTE,
};

/* What became of a finished cell's state. */
enum ui_mark { MK_NONE, MK_LOST, MK_ROLLED };

#define UI_LINE_MAX 4096	/* bytes kept of one line, a cut's marker
				   too: the drawing's arrays are this long */
#define UI_LINE_TAIL 1024	/* of them, the line's last bytes */
#define UI_LINE_MARK 64		/* of them, room for the cut's marker */
#define UI_LINE_HEAD (UI_LINE_MAX - UI_LINE_MARK - UI_LINE_TAIL)
/* Whole answers the cell list keeps: this many bytes a scrollback line
 * (10 MiB by default), an effect counted as UI_KEEP_PER_EFFECT. */
#define UI_KEEP_PER_LINE 1024
#define UI_KEEP_PER_EFFECT 256

struct ui_line {	/* 16 bytes on 64 bits; --scrollback holds 10000 */
	char *text;		/* len bytes in ui-lines.c's store, not
				   NUL-terminated */
	union {
		int disp;	/* UL_DISP: the entry's index */
		uint32_t img;	/* UL_IMAGE: its figure's number */
	};
	uint16_t len;
	unsigned char kind : 4;	/* enum ui_kind */
	unsigned char field : 4;	/* enum ui_field */
	bool open : 1;		/* output may still continue it */
	bool cut : 1;		/* bytes past UI_LINE_MAX were left out:
				   text is head, marker, tail */
};

/* One cell of the session, whoever ran it. */
struct ui_cell {
	uint64_t seq;
	int cell;		/* 0 until it started */
	char origin[80];	/* agent, person, replay; an attached
				   person's with its name: "person
				   alice@pts/3" */
	char *code;
	bool shown;		/* its header is in the scrollback */
	bool done;
	int64_t started_ms;
	struct response *resp;	/* what is kept of its answer, the UI's
				   own copy (ui-model.c's ui_answer_keep) */
	size_t weight;		/* the bytes of it a trim lets go of */
	bool trimmed;		/* resp holds its status and times only */
	unsigned char mark;	/* enum ui_mark */
	char session[UI_SESSION_MAX + 1];	/* the branch it ran on,
					   "" for main */
	size_t head_no, end_no;	/* its block's first and last lines, as
				   ui_line_no counts (shown: valid) */
};

/* What the person's requests were for, to route their answers. */
enum ui_why {
	W_NONE, W_EXEC, W_VARS, W_PING, W_INSPECT, W_COMPLETE, W_OP,
	W_SESSIONS, W_FORK, W_CMP, W_CLOSE,
};

/* What the answer to our sessions request is for (ui-branch.c). */
enum ui_br_want { BR_NONE, BR_PICK, BR_NEXT, BR_PREV, BR_SWITCH, BR_HOME };

enum ui_focus { F_INPUT, F_NS, F_CELLS, F_OVERLAY, F_REPLAY, F_RECORD };

struct ui;
struct ui_replay;
struct ui_images;
typedef void (*ui_yes_fn)(struct ui *u, const char *arg);

struct ui {
	const struct coil_opts *opts;
	/* the back end: a session here, or a socket to one */
	struct session *s;
	int client;
	struct conn io;
	bool remote;
	char name[80];		/* the session's name for us (attached),
				   or "" */
	uint64_t own_run;	/* attached: the seq of our newest cell
				   that started */
	char *ended;		/* why the session ended, or NULL */

	/* requests: ids we gave, and what each was for */
	json_int_t next_id;
	struct { json_int_t id; enum ui_why why; } pend[64];
	int npend;
	json_int_t want_id;	/* a synchronous call waits for it */
	struct response *reply;	/* and its answer, a reference */

	/* the model */
	struct ui_line *lines;	/* a ring of cap lines */
	struct ui_store *store;	/* their text (ui-lines.c) */
	size_t cap, head, nlines;
	size_t dropped;		/* lines the ring let go of, ever */
	size_t streamed;	/* bytes of output since malloc_trim */
	uint64_t at_seq;	/* the cell new lines are of, and */
	unsigned char at_field;	/* the field */
	struct { uint64_t seq; char op[12]; int to; } ops[8];
	int nops;		/* rollbacks and resets queued, any client's */
	struct ui_cell *cells;
	size_t ncells;
	size_t kept, keep;	/* bytes of whole answers kept, the most */
	size_t untrimmed;	/* cells before this one are trimmed */
	uint64_t running;	/* the seq of the running cell, or 0 */
	uint64_t stopped;	/* the seq of the cell a person stopped */
	size_t last;		/* the last answered cell + 1, or 0 */
	json_t *vars;		/* the namespace, sorted by name */
	int vars_cell;
	char profile[16];
	int checkpoints;	/* the cell of the newest one, -1: none */
	char note[256];		/* one message for the status line */

	/* the view */
	struct ui_layout lay;
	unsigned show;
	int cols, rows;
	enum ui_focus focus, back;	/* back: where an overlay returns */
	size_t scroll;		/* output lines scrolled up from the end */
	size_t ns_sel, cell_sel;
	size_t rec_sel;		/* F_RECORD: the line picked (ui_line_no) */
	char find[64];		/* the record's search, and it is typed */
	bool finding;
	char filter[64];
	bool filtering;
	char *ov_title;
	struct buf ov;		/* the overlay's text */
	size_t ov_scroll;	/* ui-draw.c keeps it within the text */
	size_t ov_code[2];	/* bytes [0] to [1] of ov are Python code,
				   drawn in syntax colour; equal: none */
	char **matches;		/* completions to show, NULL-ended */
	char *ask;		/* a yes/no question, or NULL */
	ui_yes_fn ask_fn;
	char *ask_arg;
	bool dirty;
	int64_t drawn_ms;
	bool color;

	/* the input */
	struct buf cell;	/* lines of the cell typed so far */
	bool incomplete;
	bool drop_cell;		/* Ctrl-D at ... came while it was run */
	bool waiting;		/* our exec is in flight */
	struct buf typed;	/* lines entered meanwhile, each ending '\n' */
	bool esc;		/* an Esc came: the next key may be ours */
	int indent;		/* spaces the next ... line starts with */
	char *reading;		/* our cell's input() prompt, or NULL */
	uint64_t reading_seq;	/* that cell's seq */
	bool quit;

	/* the branches (ui-branch.c) */
	char sess[UI_SESSION_MAX + 1];	/* the one the person is on */
	bool branched;		/* there are (or were) branches: requests
				   name their session, headers theirs */
	json_t *branches;	/* the newest sessions answer's list */
	size_t br_sel;		/* the picker's line */
	bool picking;		/* the overlay is the branch picker */
	enum ui_br_want br_want;
	char br_target[UI_SESSION_MAX + 1];	/* BR_SWITCH's */
	struct { char name[UI_SESSION_MAX + 1]; json_int_t id;
	    json_t *vars; int cell; } cmp[2];	/* :compare's two */

	struct ui_replay *rp;	/* --replay's steps, or NULL */
	struct ui_images *img;	/* the figures kept (ui-image.c) */
};

/* ui.c */
json_int_t ui_submit(struct ui *u, json_t *req, enum ui_why why);
/* Ctrl-C on a running cell: ours is interrupted at once, another
 * client's (the agent's, another person's) once the person says yes. */
void ui_interrupt_running(struct ui *u);
/* The answer to req (a reference: response_free it), NULL when none
 * came in timeout_ms. */
struct response *ui_call(struct ui *u, json_t *req, int timeout_ms);
void ui_interrupt(struct ui *u);

/* ui-model.c */
void ui_model_init(struct ui *u, size_t scrollback);
void ui_model_free(struct ui *u);
/* One event of the session's, borrowed: own when it concerns one of
 * our requests (its answer, or its cell asking for a line).  The
 * in-process session's come as it made them; an attach socket's as
 * ui-wire.c read them from their lines.  Output is ev->data's bytes. */
void ui_event(struct ui *u, const struct session_event *ev, bool own);
/* EV_OUTPUT or EV_BACKGROUND: len bytes of cell seq's (0: none) stream
 * (2: stderr, else stdout). */
void ui_output(struct ui *u, enum session_ev kind, uint64_t seq,
    int stream, const char *data, size_t len);
void ui_own_reply(struct ui *u, enum ui_why why, const struct response *r);
/* A cell that finished before we attached: ev is its EV_QUEUED with its
 * answer (resp, or NULL), order the order its streams came in. */
void ui_history(struct ui *u, const struct session_event *ev,
    json_t *order);
/* The cell an answer names, as its line shows it: an op's own field
 * (a rollback's), else exec's.  False when it names none. */
bool ui_answer_cell(const struct response *r, int *cell);
/* An answer's measures, 0 where its line says null. */
double ui_answer_cpu_ms(const struct response *r);
double ui_answer_mib(const struct response *r);
void ui_note_line(struct ui *u, enum ui_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A line's number for good (line i is ui_line_no(u, i)): what a cell's
 * block and the picked line hold, past the ring's turns. */
#define ui_line_no(u, i) ((u)->dropped + (i))
struct ui_cell *ui_cell_of(struct ui *u, uint64_t seq);
void ui_cell_show(struct ui *u, struct ui_cell *c);
void ui_set_vars(struct ui *u, json_t *vars, int cell);
size_t ui_vars_shown(struct ui *u, size_t *idx, size_t max);
void ui_vars_summary(json_t *v, char *out, size_t len);
void ui_save_output(struct ui *u, const char *path, char *msg, size_t len);
void ui_save_notebook(struct ui *u, const char *path);	/* %save */
const struct ui_cell *ui_last_answer(struct ui *u);

/* ui-lines.c: the scrollback's ring of lines and their text */
void ui_lines_init(struct ui *u, size_t scrollback);
void ui_lines_free(struct ui *u);
struct ui_line *ui_line_at(struct ui *u, size_t i);	/* 0: oldest */
struct ui_line *ui_last_line(struct ui *u);	/* NULL: none */
/* A new line at the end, of u->at_seq's u->at_field; the oldest goes
 * when the ring is full.  Its text grows with ui_line_add (a line past
 * UI_LINE_MAX keeps its head and tail, and says what it left out);
 * ui_line_clear empties it. */
struct ui_line *ui_push(struct ui *u, enum ui_kind kind);
void ui_line_add(struct ui *u, struct ui_line *l, const char *p, size_t n);
void ui_line_clear(struct ui *u, struct ui_line *l);
void ui_close_line(struct ui *u);
/* The cell (or op) line i is of, 0: none. */
uint64_t ui_line_seq(struct ui *u, size_t i);
/* The last line moved up to index pos, below the lines before it. */
void ui_line_move(struct ui *u, size_t pos);

/* ui-record.c: a cell's block in the record, past its output, as its
 * answer said it (ui_record_answer), what became of it (lost, rolled
 * back), the ops that move the namespace (rollback, reset), and the
 * record's own keys (F5: search, jump, open a field whole) */
void ui_record_answer(struct ui *u, struct ui_cell *c,
    const struct response *r);
/* An op queued, started or answered: true when it was one of ours
 * (a rollback's or reset's, any client's) */
bool ui_record_op(struct ui *u, const struct session_event *ev);
/* c whole, as F3 shows it; code[0] to code[1] its code's bytes in b. */
void ui_cell_detail(const struct ui_cell *c, struct buf *b,
    size_t code[2]);
/* "123 bytes", "4.5 KiB", "1.0 MiB" */
void ui_size(char *out, size_t len, unsigned long long n);

/* ui-pager.c: the record's focus (F5), its search and jumps, and any
 * field of a cell opened whole in the pager */
void ui_record_focus(struct ui *u);
bool ui_record_key(struct ui *u, int key);	/* the search took it */
void ui_record_find(struct ui *u);	/* / */
void ui_record_again(struct ui *u);	/* n */
void ui_record_back(struct ui *u);	/* N */
void ui_record_prev_cell(struct ui *u);
void ui_record_next_cell(struct ui *u);
void ui_record_move(struct ui *u, long d);	/* lines, PgUp/PgDn too */
void ui_record_open(struct ui *u);	/* the picked line's field whole */

/* ui-draw.c */
void ui_draw_setup(struct ui *u);
void ui_draw(struct ui *u);
void ui_draw_input(struct ui *u);
void ui_overlay(struct ui *u, const char *title, char *text);
/* The same, bytes from to to of text Python code (syntax colour). */
void ui_overlay_code(struct ui *u, const char *title, char *text,
    size_t from, size_t to);

/* ui-input.c */
void ui_input_start(struct ui *u);
void ui_input_end(struct ui *u);
void ui_key(struct ui *u, int key);
int ui_input_lines(struct ui *u);
void ui_input_asked(struct ui *u, const struct session_event *ev);
const char *ui_prompt(const struct ui *u);
/* The prompt of readline's row and its attribute: a search's while
 * Ctrl-R searches, "(running) " while our cell runs, else ui_prompt. */
const char *ui_input_prompt(struct ui *u, unsigned *attr);
/* Lines typed ahead while our cell runs (u->typed); the input shows
 * at most UI_QUEUED_ROWS rows of them. */
#define UI_QUEUED_ROWS 3
size_t ui_typed_ahead(const struct ui *u);
/* Ctrl-C at the input: a search ends, the history is at its newest
 * entry again, the lines typed ahead go (the note says how many). */
void ui_input_cancel(struct ui *u);

/* ui-keys.c */
bool ui_bound(struct ui *u, int key);	/* a binding took the key */
bool ui_filter_key(struct ui *u, int key);	/* the / filter took it */
/* key typed into s (size bytes): Backspace or a printable character;
 * false when it is neither, or s is full */
bool ui_edit_key(char *s, size_t size, int key);
void ui_command(struct ui *u, const char *line);	/* after the ':' */
/* Ask question (taken) on the input line; fn(arg) runs on 'y'. */
void ui_ask(struct ui *u, ui_yes_fn fn, const char *arg, char *question);
void ui_help_text(struct buf *b);

/* ui-wire.c: one line of an attach socket, read once into the structs
 * the model reads.  The line is the session's word, checked all the
 * same: a member of the wrong type is an error (err says which). */
enum ui_wire_kind {
	UW_EVENT,	/* ev, one of the session's events */
	UW_ANSWER,	/* ev: EV_RESPONSE, the answer to a request of ours */
	UW_HISTORY,	/* ev: EV_QUEUED with resp (ui_history), order */
	UW_FIGURES,	/* ev.seq's figures (figs), asked for in our hello */
	UW_END,		/* the session ended or refused us: why */
	UW_OTHER,	/* an event this UI does not know: nothing to do */
};

struct ui_wire {
	enum ui_wire_kind kind;
	struct session_event ev;	/* pointers into line, info, resp */
	const char *why;	/* UW_END */
	json_t *order;		/* UW_HISTORY: borrowed from line, or NULL */
	/* owned */
	json_t *line;
	json_t *info;		/* the members not read into ev */
	struct response *resp;
	struct figure *figs;	/* UW_FIGURES: nfigs of them */
	size_t nfigs;
};

int ui_wire_read(struct ui_wire *w, const char *p, size_t n, char *err,
    size_t len);
void ui_wire_free(struct ui_wire *w);

/* ui-branch.c: the session's branches.  The UI never adopts: the
 * person's requests name the branch they are on (an agent sharing the
 * hub keeps its default), and each event says which branch it is of. */
void ui_branch_init(struct ui *u);
void ui_branch_free(struct ui *u);
/* The branch ev is of, NULL: main (or a session without branches). */
const char *ui_ev_session(const struct session_event *ev);
/* Whether name (NULL or "": main) is the branch the person is on. */
bool ui_branch_here(const struct ui *u, const char *name);
/* req, about to go out, names the person's branch (unless it names
 * one already) once the session has branches. */
void ui_branch_request(struct ui *u, json_t *req);
/* An event seen: the session has branches once one names a branch. */
void ui_branch_event(struct ui *u, const struct session_event *ev);
/* Our own answers for W_SESSIONS, W_FORK, W_CMP, W_CLOSE; and that of
 * an exec of ours that was a magic (%fork, %switch). */
void ui_branch_reply(struct ui *u, enum ui_why why,
    const struct response *r);
void ui_branch_magic(struct ui *u, const struct response *r);
/* A cell answered as it ran: a branch's namespace asked for when no
 * namespace event came for it. */
void ui_branch_answered(struct ui *u, const struct ui_cell *c);
void ui_branch_fork(struct ui *u, const char *name);	/* :fork, Esc f */
/* The UI starts on branch name (--replay --from handed it over). */
void ui_branch_start(struct ui *u, const char *name);
void ui_branch_switch(struct ui *u, const char *name);	/* :switch */
void ui_branch_close(struct ui *u, const char *name);	/* :close */
void ui_branch_pick(struct ui *u);	/* F6: the picker */
void ui_branch_next(struct ui *u);	/* Esc n */
void ui_branch_prev(struct ui *u);	/* Esc p */
void ui_branch_compare(struct ui *u, const char *a, const char *b);
/* The picker's keys (the overlay while picking): false when not
 * picking, or the key is not the picker's */
bool ui_branch_key(struct ui *u, int key);
/* The branch's name for the status line: "" on main without
 * branches. */
const char *ui_branch_status(const struct ui *u);

/* ui-replay.c: the keys do nothing (a note says why) without a replay */
int ui_replay_open(struct ui *u, char *err, size_t len);
void ui_replay_free(struct ui *u);
void ui_replay_next(struct ui *u);
void ui_replay_all(struct ui *u);
void ui_replay_stop(struct ui *u);	/* Ctrl-C */
void ui_replay_goto(struct ui *u);	/* g: N is typed next */
bool ui_replay_key(struct ui *u, int key);	/* g's N took the key */
void ui_replay_diffs(struct ui *u);
void ui_replay_focus(struct ui *u);
/* "replay: cell i of n |" put before the status line s */
void ui_replay_status(struct ui *u, char *s, size_t len);

#endif
