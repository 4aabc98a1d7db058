/*
 * session-branch.c - branches (see session-int.h): a session forked
 * into named sessions that start from one state, each with its own
 * worker, cells, checkpoints, deadlines and queue; the ops that make,
 * list, end and adopt them; and which session serves a request.
 *
 * A branch is a copy of a checkpoint: the source session's checkpoint
 * of the state asked for (the state after its last cell by default:
 * one is ordered first when none is kept) copies itself once for each
 * branch (ckpt_clone_ask: a process adopted by init, as every checkpoint
 * whose worker died), and the copy is resumed as the branch's worker,
 * in a Landlock domain of its own nested in its source's
 * (sandbox_scope_self), so that no branch's cells can signal, trace or
 * read the memory of another branch's worker, nor of the session it
 * came from.  The source's cells, whose domain holds the branch's, can
 * still signal it: a fork does not take the source's worker away.
 *
 * All branches live in the one sandbox main started: one init, one
 * cgroup (--memory and --max-procs hold for them all together, and
 * the rlimits for each process), one work directory.  Copy-on-write
 * makes a branch cost only the pages it writes.
 *
 * Layer: ops, beside session-ops.c.  Calls down into the worker's
 * process (session_resume), ckpt.c, the checkpoint policy and the
 * outbox; nothing above.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "sandbox.h"
#include "session-int.h"

/* How long a checkpoint has to copy itself: a fork of a stopped
 * process, a millisecond or so for a few hundred MB. */
#define BRANCH_CLONE_MS 5000

/* ---- a session's own fields ---------------------------------------- */

void
session_init_fields(struct session *s, const struct coil_opts *opts)
{
	s->opts = opts;
	s->queue_tail = &s->queue;
	s->orphan_warnings = json_array();
	life_init(&s->life);
	link_init(&s->ctl, -1);
	s->out = s->err = s->pidfd = s->gate_fd = -1;
	s->pfd_at = -1;
	usage_init(&s->usage);
	buf_init(&s->start_err);
	outbuf_init(&s->ob_out, opts->max_output);
	outbuf_init(&s->ob_err, opts->max_output);
	ckpt_set_init(&s->ck, opts->checkpoints, opts->checkpoint_memory,
	    session_ckpt_dropped, s);
	/* The order an exec's streams came in: for the keeper, and for
	 * the history lines an attaching client gets. */
	s->runs = xcalloc(1, sizeof *s->runs);
}

void
session_free_fields(struct session *s)
{
	struct sreq *r, *next;

	session_close_worker(s);
	if (s->run != NULL)
		sreq_free(s->run);
	for (r = s->queue; r != NULL; r = next) {
		next = r->next;
		sreq_free(r);
	}
	outbuf_free(&s->ob_out);
	outbuf_free(&s->ob_err);
	free(s->runs);
	buf_free(&s->start_err);
	json_decref(s->orphan_warnings);
	json_decref(s->sandbox);
	/* a branch's gate may still be its copies' (main's is closed
	 * with the hub) */
	if (s != s->hub)
		session_gate_retire(s);
	else if (s->gate_fd >= 0)
		close(s->gate_fd);
	ckpt_node_unref(s->node);
	free(s->died_idle);
	session_redo_free(s);
	free(s->python);
	free(s->name);
	free(s->parent);
}

/* ---- names ----------------------------------------------------------- */

static struct session *
session_find(struct session *hub, const char *name)
{
	int i;

	for (i = 0; i < hub->nall; i++)
		if (strcmp(hub->all[i]->name, name) == 0)
			return hub->all[i];
	return NULL;
}

/* "main, b1, b2": a new string. */
static char *
session_names(struct session *hub)
{
	struct buf b;
	int i;

	buf_init(&b);
	for (i = 0; i < hub->nall; i++)
		buf_printf(&b, "%s%s", i > 0 ? ", " : "", hub->all[i]->name);
	if (b.len == 0)
		buf_addstr(&b, "none");
	return buf_take(&b);
}

/* A branch's name goes into transcripts' names and people's screens: a
 * letter, then letters, digits, '_', '-' or '.', 64 at most. */
static bool
session_branch_name_ok(const char *name, size_t len, char *why, size_t wlen)
{
	size_t i;
	char c;

	if (len == 0 || len > 64 || strlen(name) != len)
		return err_set(why, wlen, "a session's name is 1 to 64 "
		    "characters"), false;
	for (i = 0; i < len; i++) {
		c = name[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (i > 0 && ((c >= '0' && c <= '9') || c == '_' ||
		    c == '-' || c == '.')))
			continue;
		return err_set(why, wlen, "'%.64s' is no session name: a "
		    "letter first, then letters, digits, '_', '-' or '.'",
		    name), false;
	}
	return true;
}

/* An interrupt that names no session stops the client's cell: in its
 * default session if one runs there, else wherever one of its runs. */
static struct session *
session_running_for(struct session *hub, int client, const char *home)
{
	struct session *t = session_find(hub, home);
	int i;

	if (t != NULL && t->run != NULL)
		return t;
	for (i = 0; i < hub->nall; i++)
		if (hub->all[i]->run != NULL &&
		    hub->all[i]->run->client == client)
			return hub->all[i];
	return NULL;
}

struct session *
session_route(struct session *hub, int client, json_t *req, enum op op,
    char *why, size_t len)
{
	json_t *js = json_object_get(req, "session");
	struct sclient *c = session_client(hub, client);
	const char *name;
	struct session *t;
	char *names;

	/* these name the session they act on, and the hub serves them */
	if (op == OP_SESSIONS)
		return hub;
	name = json_is_string(js) ? json_string_value(js) :
	    c != NULL && c->home != NULL ? c->home : "main";
	if (op == OP_INTERRUPT && !json_is_string(js) &&
	    (t = session_running_for(hub, client, name)) != NULL)
		return t;
	if ((t = session_find(hub, name)) != NULL)
		return op == OP_CLOSE || op == OP_ADOPT ? hub : t;
	names = session_names(hub);
	if (json_is_string(js))
		err_set(why, len, "no session '%.64s' (the sessions are: %s)",
		    name, names);
	else
		err_set(why, len, "your session '%.64s' was closed: name one "
		    "with \"session\", or adopt one (the sessions are: %s)",
		    name, names);
	free(names);
	return NULL;
}

bool
session_fork_pending(const struct session *hub)
{
	const struct sreq *r;
	int i;

	for (i = 0; i < hub->nall; i++) {
		if (hub->all[i]->run != NULL && hub->all[i]->run->op == OP_FORK)
			return true;
		for (r = hub->all[i]->queue; r != NULL; r = r->next)
			if (r->op == OP_FORK)
				return true;
	}
	return false;
}

void
session_limbo_hold(struct session *hub, struct sreq *r)
{
	r->next = NULL;
	*hub->limbo_tail = r;
	hub->limbo_tail = &r->next;
}

/* ---- a branch ------------------------------------------------------- */

static struct session *
session_branch_new(struct session *src, const char *name,
    struct ckpt_node *node)
{
	struct session *hub = src->hub, *b = xcalloc(1, sizeof *b);

	session_init_fields(b, hub->opts);
	b->hub = hub;
	b->name = xstrdup(name);
	b->parent = xstrdup(src->name);
	b->fork_cell = node->cell;
	b->cells = node->cell;
	b->node = ckpt_node_ref(node);
	b->export = export_keeper();
	b->export_fed = true;
	b->python = src->python != NULL ? xstrdup(src->python) : NULL;
	b->sandbox = json_incref(src->sandbox);
	hub->all = xrealloc(hub->all, (size_t)(hub->nall + 1) *
	    sizeof *hub->all);
	hub->all[hub->nall++] = b;
	return b;
}

/* Take b out of the hub's lists (all sessions, init's spawns). */
static void
session_unlist(struct session *b)
{
	struct session *hub = b->hub;
	int i, n = 0;

	for (i = 0; i < hub->nall; i++)
		if (hub->all[i] != b)
			hub->all[n++] = hub->all[i];
	hub->nall = n;
	/* init still answers its spawn: the answer is nobody's now */
	for (i = 0; i < hub->nspawns; i++)
		if (hub->spawns[i] == b)
			hub->spawns[i] = NULL;
}

void
session_branch_free(struct session *b)
{
	session_unlist(b);
	/* its worker first, then its checkpoints: all of it dies */
	session_signal(b, SIGKILL);
	ckpt_set_free(&b->ck);
	session_free_fields(b);
	export_free(b->export);
	free(b);
}

static char *session_fork_name(struct session *hub, struct sreq *r);

/* A strict sandbox's fork gates, watched while a checkpoint copies
 * itself: its forks wait for our answer (session_gate_fd). */
static void
session_gate_watch(void *ctx, int fd)
{
	session_gate_fd(ctx, fd);
}

/* Whether the copy a checkpoint sent is not what it should be: a new
 * child of init, alive, of the pid it names, no process we know (the
 * checkpoint runs in an image a cell may have patched: it could name
 * another session's worker, to have us signal that one for it). */
static bool
session_copy_known(struct session *hub, const struct ckpt_copy *copy,
    char *why, size_t len)
{
	pid_t outer = link_check_copy(copy->sock, copy->pidfd, copy->pid,
	    hub->init.pid, why, len);
	const struct ckpt *k;
	struct session *b;
	int i;

	if (outer <= 0)
		return true;
	for (i = 0; i < hub->nall; i++) {
		b = hub->all[i];
		if (b->pidfd >= 0 && ckpt_pid_of(b->pidfd) == outer)
			return err_set(why, len, "the copy names session '%s''s "
			    "worker", b->name), true;
		for (k = b->ck.head; k != NULL; k = k->next)
			if (k->pidfd >= 0 && ckpt_pid_of(k->pidfd) == outer)
				return err_set(why, len, "the copy names a "
				    "checkpoint of session '%s'", b->name),
				    true;
	}
	return false;
}

/* The gates watched while the checkpoint copies itself (a strict
 * sandbox's: its forks wait for our answer). */
static void
session_clone_watch(struct session *hub, struct ckpt_watch *w)
{
	int i;

	*w = (struct ckpt_watch){ .n = 0, .fn = session_gate_watch,
	    .ctx = hub };
	for (i = 0; i < hub->nall && w->n < CKPT_WATCH_MAX; i++)
		if (hub->all[i]->gate_fd >= 0)
			w->fd[w->n++] = hub->all[i]->gate_fd;
	for (i = hub->ngates - 1; i >= 0 && w->n < CKPT_WATCH_MAX; i--)
		w->fd[w->n++] = hub->gates[i];	/* the newest first */
}

/* One branch of src from the next copy cl gives, called name: made and
 * resuming, or NULL with why. */
static struct session *
session_branch_make(struct session *src, struct ckpt_cloning *cl,
    const char *name, char *why, size_t len)
{
	struct session *hub = src->hub, *b;
	struct ckpt *ck = cl->ck, *bck;
	struct ckpt_watch w;
	struct ckpt_copy copy;
	uint64_t t0 = now_ns();

	session_clone_watch(hub, &w);
#ifdef COIL_TEST_HOOKS
	/* tests/agent/branch-many.py: a fork slow enough that the first
	 * branches say hello while the loop is held */
	if (getenv("COIL_TEST_SLOW_CLONE_MS") != NULL)
		usleep((useconds_t)atoi(getenv("COIL_TEST_SLOW_CLONE_MS")) *
		    1000);
#endif
	if (ckpt_clone_next(cl, &w, BRANCH_CLONE_MS, &copy, why, len) == -1)
		return NULL;
	if (session_copy_known(hub, &copy, why, len)) {
		/* never signalled: its pidfd may be of another's process */
		close(copy.sock);
		close(copy.pidfd);
		return NULL;
	}
	b = session_branch_new(src, name, ck->node);
	bck = ckpt_add(&b->ck, CKPT_AUTO, ck->node, copy.sock, copy.pidfd,
	    copy.pid, ck->threads, (double)(now_ns() - t0) / 1e6);
	if (session_resume(b, bck) == -1) {
		err_set(why, len, "the copy of the checkpoint at cell %d could "
		    "not be resumed: %s", ck->node->cell, strerror(errno));
		session_branch_free(b);
		return NULL;
	}
	b->fork_ms = (double)(now_ns() - t0) / 1e6;
	return b;
}

/*
 * n branches of src from ck, each named by the fork's request r; their
 * names into made.  The copies are all ordered at once: the checkpoint
 * forks them one after the other while each is resumed as it comes, so
 * that the branches' workers start (their Landlock domains, their
 * hellos, their re-arms) on the other CPUs meanwhile.  Returns how many
 * were made; why says what stopped the rest.
 */
static int
session_branches_make(struct session *src, struct ckpt *ck, struct sreq *r,
    int n, json_t *made, char *why, size_t len)
{
	struct session *hub = src->hub, *b;
	struct ckpt_cloning cl;
	struct ckpt_watch w;
	char *name;
	int i = 0;

	hub->cloning = ck->pidfd >= 0 ? ckpt_pid_of(ck->pidfd) : 0;
	hub->cloning_passes = 2 * n;	/* each copy's, and its child's */
	if (ckpt_clone_ask(ck, n, &cl, why, len) == 0) {
		for (i = 0; i < n; i++) {
			name = session_fork_name(hub, r);
			b = session_branch_make(src, &cl, name, why, len);
			free(name);
			if (b == NULL)
				break;
			json_array_append_new(made, json_string(b->name));
		}
		session_clone_watch(hub, &w);
		ckpt_clone_end(&cl, &w, BRANCH_CLONE_MS);
	}
	hub->cloning = 0;
	hub->cloning_passes = 0;
	return i;
}

/* fork's checkpoint of the source's state: "from"'s, or one of the
 * state now.  NULL when r was answered or waits for one (requeued). */
static struct ckpt *
session_fork_source(struct session *s, struct sreq *r)
{
	json_t *from = json_object_get(r->req, "from");
	struct ckpt *ck;

	if (from != NULL && !json_is_null(from)) {
		ck = ckpt_find(&s->ck, from);
		if (ck != NULL && ckpt_alive(ck))
			return ck;
		if (json_is_string(from))
			session_answer(r, response_invalid("no snapshot '%.64s' "
			    "in session '%s': see its snapshots", json_string_value(
			    from), s->name));
		else
			session_answer(r, response_invalid("no checkpoint at "
			    "cell %lld in session '%s' (it was dropped, or the "
			    "cell ran no code): see its snapshots, or snapshot "
			    "the states to branch from", (long long)
			    json_integer_value(from), s->name));
		return NULL;
	}
	ck = s->current;
	if (ck != NULL && ckpt_alive(ck) && ck->node == s->node)
		return ck;
	if (!r->fork_waited && life_ready(&s->life)) {
		/* none of the state now: one is ordered, and the fork
		 * waits for it at the queue's head (session_may_serve) */
		r->fork_waited = true;
		session_order_ckpt(s, LINK_CK_AUTO, s->node->cell);
		r->next = s->queue;
		s->queue = r;
		if (r->next == NULL)
			s->queue_tail = &r->next;
		return NULL;
	}
	session_answer(r, response_invalid("no checkpoint of session '%s' at "
	    "cell %d could be taken to branch from (the warnings say why)",
	    s->name, s->node->cell));
	return NULL;
}

/* fork's checks, before anything is made: 0, or -1 with r answered. */
static int
session_fork_check(struct session *s, struct sreq *r, int n)
{
	struct session *hub = s->hub;
	const char *name = json_string_value(json_object_get(r->req, "name"));
	const char *files = json_string_value(json_object_get(r->req,
	    "files"));
	char why[300];

	if (files != NULL && strcmp(files, "shared") != 0) {
		session_answer(r, response_invalid(strcmp(files, "private") ==
		    0 ? "files \"private\" cannot be given here: a branch is "
		    "a copy of a worker the sandbox has already confined, and "
		    "Landlock lets no confined process change its mounts, so "
		    "it cannot get a view of the work directory of its own; "
		    "branches share the work directory (give each its own "
		    "subdirectory)" : "'files' must be \"shared\" or "
		    "\"private\""));
		return -1;
	}
	if (name != NULL && n > 1) {
		session_answer(r, response_invalid("give 'name' for one branch, "
		    "or 'n' for several (named b1, b2, ...)"));
		return -1;
	}
	if (hub->nall + n > hub->max_sessions) {
		session_answer(r, response_invalid("%d more session%s would pass "
		    "--max-sessions (%d; %d open): close one first", n, n > 1 ?
		    "s" : "", hub->max_sessions, hub->nall));
		return -1;
	}
	if (name != NULL && (!session_branch_name_ok(name, json_string_length(
	    json_object_get(r->req, "name")), why, sizeof why) ||
	    (session_find(hub, name) != NULL && err_set(why, sizeof why,
	    "a session is called '%s' already", name)) ||
	    (strcmp(name, "main") == 0 && err_set(why, sizeof why,
	    "'main' is the name of the session coil starts with")))) {
		session_answer(r, response_invalid("%s", why));
		return -1;
	}
	return 0;
}

/* The name of the next branch: fork's "name", or b1, b2, ... (a new
 * string). */
static char *
session_fork_name(struct session *hub, struct sreq *r)
{
	const char *name = json_string_value(json_object_get(r->req, "name"));
	char gen[32];

	if (name != NULL)
		return xstrdup(name);
	do
		snprintf(gen, sizeof gen, "b%d", ++hub->next_branch);
	while (session_find(hub, gen) != NULL);
	return xstrdup(gen);
}

void
session_fork(struct session *s, struct sreq *r)
{
	json_t *jn = json_object_get(r->req, "n"), *made;
	int n = json_is_integer(jn) ? (int)json_integer_value(jn) : 1, i;
	struct response *resp;
	struct ckpt *ck;
	uint64_t t0 = now_ns();
	char why[300] = "";

	if (session_fork_check(s, r, n) == -1 ||
	    (ck = session_fork_source(s, r)) == NULL)
		return;
	made = json_array();
	i = session_branches_make(s, ck, r, n, made, why, sizeof why);
	if (json_array_size(made) == 0) {
		json_decref(made);
		session_answer(r, response_invalid("no branch could be made: "
		    "%s", why));
		return;
	}
	resp = response_new(ST_OK);
	response_set(resp, "sessions", made);
	response_set(resp, "parent", json_string(s->name));
	response_set(resp, "cell", json_integer(ck->node->cell));
	if (ck->name != NULL)
		response_set(resp, "from", json_string(ck->name));
	response_set(resp, "files", json_string("shared"));
	response_set(resp, "fork_ms", json_real(round((double)(now_ns() -
	    t0) / 1e4) / 100));
	response_set(resp, "note", json_string("the work directory is "
	    "shared: a file one session writes, the others see"));
	if (i < n)
		response_warn(resp, why);
	session_answer(r, resp);
}

/* ---- listing, closing, adopting -------------------------------------- */

/* A worker's memory: what it alone holds, and what it shares (with
 * its source and the checkpoints, copy-on-write). */
static json_t *
session_memory(struct session *b, long long *priv, long long *shared)
{
	struct ckpt_mem m;

	if (b->pidfd < 0 || ckpt_mem_read(b->pidfd, 0, &m) == -1)
		return json_null();
	*priv += m.priv;
	*shared += m.rss - m.priv;
	return json_pack("{s:I, s:I}", "private", (json_int_t)m.priv,
	    "shared", (json_int_t)(m.rss - m.priv));
}

static const char *
session_state(const struct session *b)
{
	if (b->run != NULL && b->run->op == OP_EXEC)
		return "running";
	if (life_ready(&b->life))
		return "idle";
	return life_alive(&b->life) ? "busy" : "starting";
}

/* The list, for the client asking (its default marked). */
static json_t *
session_list(struct session *hub, int client, long long *priv,
    long long *shared)
{
	struct sclient *c = session_client(hub, client);
	const char *home = c != NULL && c->home != NULL ? c->home : "main";
	json_t *list = json_array(), *o;
	struct session *b;
	int i;

	for (i = 0; i < hub->nall; i++) {
		b = hub->all[i];
		o = json_pack("{s:s, s:s?, s:o, s:i, s:s, s:b, s:s}", "name",
		    b->name, "parent", b->parent, "from_cell", b->parent !=
		    NULL ? json_integer(b->fork_cell) : json_null(), "cell",
		    b->cells, "state", session_state(b), "default",
		    strcmp(b->name, home) == 0, "files", "shared");
		if (b->parent == NULL)
			json_object_set_new(o, "parent", json_null());
		json_object_set_new(o, "memory", session_memory(b, priv,
		    shared));
		json_object_set_new(o, "checkpoints", json_integer(b->ck.count));
		if (b->isolation[0] != '\0')
			json_object_set_new(o, "isolated", strcmp(b->isolation,
			    "yes") == 0 ? json_true() : json_string(
			    b->isolation));
		json_array_append_new(list, o);
	}
	return list;
}

void
session_sessions(struct session *s, struct sreq *r)
{
	struct response *resp = response_new(ST_OK);
	long long priv = 0, shared = 0;

	response_set(resp, "sessions", session_list(s->hub, r->client, &priv,
	    &shared));
	response_set(resp, "memory", json_pack("{s:I, s:I}", "private",
	    (json_int_t)priv, "shared", (json_int_t)shared));
	response_set(resp, "max", json_integer(s->hub->max_sessions));
	session_answer(r, resp);
}

json_t *
session_branches_summary(struct session *hub)
{
	long long priv = 0, shared = 0;
	json_t *list = session_list(hub, 0, &priv, &shared);
	json_t *o = json_pack("{s:i, s:i, s:{s:I, s:I}}", "count",
	    (int)json_array_size(list), "max", hub->max_sessions, "memory",
	    "private", (json_int_t)priv, "shared", (json_int_t)shared);

	json_decref(list);
	return o;
}

/* The open session close or adopt names, or NULL with r answered. */
static struct session *
session_named(struct session *hub, struct sreq *r, const char *name)
{
	struct session *b = session_find(hub, name);
	char *names;

	if (b != NULL)
		return b;
	names = session_names(hub);
	session_answer(r, response_invalid("no session '%.64s' (the sessions "
	    "are: %s)", name, names));
	free(names);
	return NULL;
}

/* The requests of b answered, why: it ends under them.  A cell being
 * run again after a restore is no one's; the one whose answer waits
 * for it (redo.held) is answered. */
static void
session_end_answer(struct session *b, const char *why)
{
	struct sreq *r;

	if ((r = b->run) != NULL) {
		b->run = NULL;
		if (r->redo > 0)
			sreq_free(r);
		else
			session_answer(r, response_invalid("the session '%s' "
			    "%s while this ran", b->name, why));
	}
	if ((r = b->redo.held) != NULL) {
		b->redo.held = NULL;
		session_answer(r, response_invalid("the session '%s' %s while "
		    "this ran", b->name, why));
	}
	while ((r = b->queue) != NULL) {
		b->queue = r->next;
		if (r->redo > 0) {
			sreq_free(r);
			continue;
		}
		session_answer(r, response_invalid("the session '%s' %s before "
		    "this request ran", b->name, why));
	}
	b->queue_tail = &b->queue;
}

void
session_branches_reap(struct session *hub)
{
	struct session *b;
	char why[sizeof b->failure + 16];
	int i;

	for (i = hub->nall - 1; i >= 0; i--) {
		b = hub->all[i];
		if (b == hub || !b->failed)
			continue;
		snprintf(why, sizeof why, "ended (%s)", b->failure);
		session_end_answer(b, why);
		session_branch_free(b);
	}
}

void
session_close(struct session *s, struct sreq *r)
{
	struct session *hub = s->hub, *b;
	const char *name = json_string_value(json_object_get(r->req,
	    "session"));
	struct response *resp;

	if ((b = session_named(hub, r, name)) == NULL)
		return;
	if (hub->nall == 1) {
		session_answer(r, response_invalid("'%s' is the last session: "
		    "shutdown ends coil", name));
		return;
	}
	resp = response_new(ST_OK);
	response_set(resp, "closed", json_string(b->name));
	response_set(resp, "cell", json_integer(b->cells));
	session_answer(r, resp);
	session_end_answer(b, "was closed");
	if (b != hub) {
		session_branch_free(b);
		return;
	}
	/* main: its worker and checkpoints go; the hub stays, and keeps
	 * its gate answered for the branches' forks */
	session_unlist(hub);
	hub->closed = true;
	session_signal(hub, SIGKILL);
	session_close_worker(hub);
	ckpt_set_free(&hub->ck);
	session_gate_retire(hub);
}

int
session_set_home(struct session *s, int client, const char *name)
{
	struct sclient *c = session_client(s->hub, client);

	if (c == NULL || session_find(s->hub, name) == NULL)
		return -1;
	free(c->home);
	c->home = strcmp(name, "main") == 0 ? NULL : xstrdup(name);
	return 0;
}

void
session_adopt(struct session *s, struct sreq *r)
{
	struct session *hub = s->hub, *b;
	const char *name = json_string_value(json_object_get(r->req,
	    "session"));
	struct sclient *c = session_client(hub, r->client);
	struct response *resp;

	if ((b = session_named(hub, r, name)) == NULL)
		return;
	resp = response_new(ST_OK);
	response_set(resp, "session", json_string(b->name));
	response_set(resp, "was", json_string(c != NULL && c->home != NULL ?
	    c->home : "main"));
	response_set(resp, "cell", json_integer(b->cells));
	session_set_home(hub, r->client, b->name);
	session_answer(r, resp);
}
