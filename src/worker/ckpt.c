/*
 * ckpt.c - checkpoints (see ckpt.h): the supervisor's list of them,
 * their lineage and memory.  Supervisor only.  The checkpoint process
 * and its copies for branches are ckpt-copy.c; the worker's side of the
 * fork, the pages it copies ahead, is ckpt-hot.c.  No Python.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "ckpt.h"
#include "util.h"

/* ---- lineage ------------------------------------------------------- */

struct ckpt_node *
ckpt_node_new(int cell, struct ckpt_node *parent)
{
	struct ckpt_node *n = xcalloc(1, sizeof *n);

	n->cell = cell;
	n->refs = 1;
	n->parent = parent != NULL ? ckpt_node_ref(parent) : NULL;
	n->depth = parent != NULL ? parent->depth + 1 : 0;
	return n;
}

struct ckpt_node *
ckpt_node_ref(struct ckpt_node *n)
{
	if (n != NULL)
		n->refs++;
	return n;
}

/* Iterative: a session of a million cells is a chain a million long. */
void
ckpt_node_unref(struct ckpt_node *n)
{
	while (n != NULL && --n->refs == 0) {
		struct ckpt_node *p = n->parent;

		free(n);
		n = p;
	}
}

static json_t *
ckpt_reversed(json_t *a)
{
	json_t *r = json_array();
	size_t i = json_array_size(a);

	while (i > 0)
		json_array_append(r, json_array_get(a, --i));
	json_decref(a);
	return r;
}

void
ckpt_node_diff(struct ckpt_node *from, struct ckpt_node *to,
    json_t **undone, json_t **redone)
{
	json_t *u = json_array(), *r = json_array();

	while (from != to) {
		if (from != NULL && (to == NULL || from->depth >= to->depth)) {
			if (from->depth > 0)
				json_array_append_new(u, json_integer(
				    from->cell));
			from = from->parent;
		} else {
			if (to->depth > 0)
				json_array_append_new(r, json_integer(to->cell));
			to = to->parent;
		}
	}
	*undone = ckpt_reversed(u);
	*redone = ckpt_reversed(r);
}

/* ---- the set ------------------------------------------------------- */

void
ckpt_set_init(struct ckpt_set *set, int max_auto,
    unsigned long long max_memory, ckpt_drop_fn on_drop, void *ctx)
{
	memset(set, 0, sizeof *set);
	set->max_auto = max_auto;
	set->max_memory = max_memory;
	set->on_drop = on_drop;
	set->ctx = ctx;
}

void
ckpt_set_free(struct ckpt_set *set)
{
	while (set->head != NULL)
		ckpt_drop(set, set->head);
}

static void
ckpt_unlink(struct ckpt_set *set, struct ckpt *ck)
{
	if (ck->prev != NULL)
		ck->prev->next = ck->next;
	else
		set->head = ck->next;
	if (ck->next != NULL)
		ck->next->prev = ck->prev;
	else
		set->tail = ck->prev;
	ck->prev = ck->next = NULL;
}

static void
ckpt_append(struct ckpt_set *set, struct ckpt *ck)
{
	ck->prev = set->tail;
	ck->next = NULL;
	if (set->tail != NULL)
		set->tail->next = ck;
	else
		set->head = ck;
	set->tail = ck;
}

struct ckpt *
ckpt_add(struct ckpt_set *set, enum ckpt_kind kind, struct ckpt_node *node,
    int sock, int pidfd, pid_t pid, int threads, double fork_ms)
{
	struct ckpt *ck = xcalloc(1, sizeof *ck);

	ck->kind = kind;
	ck->node = ckpt_node_ref(node);
	ck->sock = sock;
	ck->pidfd = pidfd;
	ck->pid = pid;
	ck->threads = threads;
	ck->fork_ms = fork_ms;
	ck->born_ms = now_ms();
	ckpt_append(set, ck);
	set->count++;
	if (kind == CKPT_AUTO)
		set->nauto++;
	return ck;
}

void
ckpt_drop(struct ckpt_set *set, struct ckpt *ck)
{
	if (set->on_drop != NULL)
		set->on_drop(set->ctx, ck);
	ckpt_unlink(set, ck);
	set->count--;
	if (ck->kind == CKPT_AUTO)
		set->nauto--;
	/* Closing the socket alone would do (the checkpoint exits at end of
	 * file); the kill gives its memory back at once.  init reaps it. */
	if (ck->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, ck->pidfd, SIGKILL, NULL, 0);
		close(ck->pidfd);
	}
	if (ck->sock >= 0)
		close(ck->sock);
	ckpt_node_unref(ck->node);
	free(ck->name);
	free(ck);
}

void
ckpt_touch(struct ckpt_set *set, struct ckpt *ck)
{
	ckpt_unlink(set, ck);
	ckpt_append(set, ck);
}

void
ckpt_set_kind(struct ckpt_set *set, struct ckpt *ck, enum ckpt_kind k)
{
	if (ck->kind == CKPT_AUTO)
		set->nauto--;
	ck->kind = k;
	if (k == CKPT_AUTO)
		set->nauto++;
}

const char *
ckpt_kind_name(enum ckpt_kind k)
{
	static const char *names[] = {
		[CKPT_AUTO] = "auto", [CKPT_PINNED] = "snapshot",
		[CKPT_PRISTINE] = "pristine", [CKPT_ATOMIC] = "atomic",
	};

	return names[k];
}

bool
ckpt_alive(const struct ckpt *ck)
{
	struct pollfd p;

	if (ck->sock < 0)
		return false;
	/* A pidfd turns readable when its process exits; without one, the
	 * private socket hangs up instead. */
	p.fd = ck->pidfd >= 0 ? ck->pidfd : ck->sock;
	p.events = POLLIN;
	p.revents = 0;
	if (poll(&p, 1, 0) == 1 && (ck->pidfd >= 0 ||
	    (p.revents & (POLLHUP | POLLERR | POLLIN))))
		return false;
	return true;
}

struct ckpt *
ckpt_of_node(struct ckpt_set *set, struct ckpt_node *node)
{
	struct ckpt *ck;

	for (ck = set->tail; ck != NULL; ck = ck->prev)
		if (ck->node == node && ck->sock >= 0)
			return ck;
	return NULL;
}

struct ckpt *
ckpt_find_name(struct ckpt_set *set, const char *name)
{
	struct ckpt *ck;

	for (ck = set->tail; ck != NULL; ck = ck->prev)
		if (ck->name != NULL && strcmp(ck->name, name) == 0)
			return ck;
	return NULL;
}

struct ckpt *
ckpt_pristine(struct ckpt_set *set)
{
	struct ckpt *ck;

	for (ck = set->tail; ck != NULL; ck = ck->prev)
		if (ck->kind == CKPT_PRISTINE)
			return ck;
	return NULL;
}

struct ckpt *
ckpt_find(struct ckpt_set *set, json_t *to)
{
	struct ckpt *ck;
	json_int_t cell;

	if (json_is_string(to))
		return ckpt_find_name(set, json_string_value(to));
	if (!json_is_integer(to))
		return NULL;
	cell = json_integer_value(to);
	if (cell == 0)
		return ckpt_pristine(set);
	/* Prefer one that is alive: a dead one is only the answer when it
	 * is the only one, so that the caller can say it died. */
	for (ck = set->tail; ck != NULL; ck = ck->prev)
		if (ck->node->cell == cell && ck->node->depth > 0 &&
		    ckpt_alive(ck))
			return ck;
	for (ck = set->tail; ck != NULL; ck = ck->prev)
		if (ck->node->cell == cell && ck->node->depth > 0 &&
		    ck->sock >= 0)
			return ck;
	return NULL;
}

static void
ckpt_describe(const struct ckpt *ck, char *out, size_t len)
{
	if (ck->name != NULL)
		snprintf(out, len, "snapshot '%s' (cell %d, pid %ld)", ck->name,
		    ck->node->cell, (long)ck->pid);
	else if (ck->kind == CKPT_PRISTINE)
		snprintf(out, len, "the pristine checkpoint (pid %ld)",
		    (long)ck->pid);
	else
		snprintf(out, len, "the checkpoint at cell %d (pid %ld)",
		    ck->node->cell, (long)ck->pid);
}

static void
ckpt_warn_dead(const struct ckpt *ck, json_t *warnings)
{
	char what[200], msg[400];

	if (warnings == NULL)
		return;
	ckpt_describe(ck, what, sizeof what);
	snprintf(msg, sizeof msg, "%s is gone: its process was killed from "
	    "outside coil", what);
	json_array_append_new(warnings, json_string(msg));
}

struct ckpt *
ckpt_nearest(struct ckpt_set *set, struct ckpt_node *node, json_t *warnings)
{
	struct ckpt *ck;

	for (; node != NULL; node = node->parent) {
		while ((ck = ckpt_of_node(set, node)) != NULL) {
			if (ckpt_alive(ck))
				return ck;
			ckpt_warn_dead(ck, warnings);
			ckpt_drop(set, ck);
		}
	}
	return NULL;
}

void
ckpt_prune(struct ckpt_set *set, json_t *warnings)
{
	struct ckpt *ck, *next;

	for (ck = set->head; ck != NULL; ck = next) {
		next = ck->next;
		if (ck->sock >= 0 && !ckpt_alive(ck)) {
			ckpt_warn_dead(ck, warnings);
			ckpt_drop(set, ck);
		}
	}
}

static struct ckpt *
ckpt_victim(struct ckpt_set *set, struct ckpt *keep)
{
	struct ckpt *ck;

	for (ck = set->head; ck != NULL; ck = ck->next)
		if (ck->kind == CKPT_AUTO && ck != keep && !ck->held &&
		    ck->sock >= 0)
			return ck;
	return NULL;
}

int
ckpt_limit(struct ckpt_set *set, struct ckpt *keep, int worker_pidfd)
{
	struct ckpt *v;
	long long mem;

	while (set->nauto > set->max_auto &&
	    (v = ckpt_victim(set, keep)) != NULL)
		ckpt_drop(set, v);
	if (set->max_memory == 0)
		return 0;
	/* Each drop changes what the others hold (a page two of them shared
	 * becomes the survivor's own), so measure again after each. */
	while ((mem = ckpt_memory(set, worker_pidfd)) >= 0 &&
	    (unsigned long long)mem > set->max_memory &&
	    (v = ckpt_victim(set, keep)) != NULL)
		ckpt_drop(set, v);
	return mem >= 0 ? 0 : -1;
}

int
ckpt_resume(struct ckpt *ck, int ctl, int out, int errfd, bool rearm,
    bool isolate)
{
	int fds[3] = { ctl, out, errfd };
	json_t *m = json_pack("{s:s, s:i, s:b, s:b}", "t", "resume", "cell",
	    ck->node->cell, "rearm", rearm, "isolate", isolate);
	int rc, saved;

	rc = chan_send(ck->sock, m, fds, 3);
	saved = errno;
	json_decref(m);
	close(ck->sock);
	ck->sock = -1;
	errno = saved;
	return rc;
}

/* ---- memory -------------------------------------------------------- */

/* The pid in our own namespace, from the pidfd's fdinfo: the pid the
 * worker reported is in its namespace, which need not be ours. */
pid_t
ckpt_pid_of(int pidfd)
{
	char path[64], line[256];
	FILE *f;
	long pid = 0;

	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
	/* fs(proc): the kernel's: /proc/self/fdinfo of a pidfd,
	 * /proc/PID/smaps_rollup of a checkpoint of the session's */
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Pid: %ld", &pid) == 1)
			break;
	fclose(f);
	return pid > 0 ? (pid_t)pid : 0;
}

int
ckpt_mem_read(int pidfd, pid_t fallback_pid, struct ckpt_mem *m)
{
	char path[64], line[256], key[64];
	long long kb;
	bool have_pss_anon = false;
	pid_t pid = pidfd >= 0 ? ckpt_pid_of(pidfd) : fallback_pid;
	FILE *f;

	memset(m, 0, sizeof *m);
	if (pid <= 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", (long)pid);
	/* fs(proc): the kernel's: /proc/self/fdinfo of a pidfd,
	 * /proc/PID/smaps_rollup of a checkpoint of the session's */
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "%63[^:]: %lld kB", key, &kb) != 2)
			continue;
		kb *= 1024;
		if (strcmp(key, "Rss") == 0)
			m->rss = kb;
		else if (strcmp(key, "Pss") == 0)
			m->pss = kb;
		else if (strcmp(key, "Pss_Anon") == 0) {
			m->pss_anon = kb;
			have_pss_anon = true;
		} else if (strcmp(key, "Anonymous") == 0)
			m->anon = kb;
		else if (strcmp(key, "Private_Clean") == 0 ||
		    strcmp(key, "Private_Dirty") == 0)
			m->priv += kb;
	}
	fclose(f);
	/* Kernels before 5.10 have no Pss_Anon: Pss counts the shared
	 * library pages too, a little more than the truth. */
	if (!have_pss_anon)
		m->pss_anon = m->pss;
	/* The pid may have been reused if the process died meanwhile. */
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		if (poll(&p, 1, 0) == 1)
			return -1;
	}
	return 0;
}

long long
ckpt_memory(struct ckpt_set *set, int worker_pidfd)
{
	struct ckpt_mem wm, m;
	struct ckpt *ck;
	long long total = 0;

	if (set->count == 0)
		return 0;
	if (ckpt_mem_read(worker_pidfd, 0, &wm) == -1)
		return -1;
	for (ck = set->head; ck != NULL; ck = ck->next)
		if (ck->sock >= 0 && ckpt_mem_read(ck->pidfd, ck->pid, &m) == 0)
			total += m.pss_anon;
	total += wm.pss_anon - wm.anon;
	return total > 0 ? total : 0;
}

static int
ckpt_cmp_born(const void *a, const void *b)
{
	const struct ckpt *x = *(struct ckpt *const *)a;
	const struct ckpt *y = *(struct ckpt *const *)b;

	if (x->born_ms != y->born_ms)
		return x->born_ms < y->born_ms ? -1 : 1;
	return x->node->depth - y->node->depth;
}

json_t *
ckpt_list(struct ckpt_set *set, struct ckpt_node *current, int worker_pidfd)
{
	struct ckpt **v = xcalloc((size_t)set->count + 1, sizeof *v);
	struct ckpt *ck;
	json_t *list = json_array(), *o;
	long long mem;
	int n = 0, i;
	int64_t now = now_ms();

	for (ck = set->head; ck != NULL; ck = ck->next)
		if (ck->sock >= 0)
			v[n++] = ck;
	qsort(v, (size_t)n, sizeof *v, ckpt_cmp_born);
	for (i = 0; i < n; i++) {
		struct ckpt_mem m;
		bool ok;

		ck = v[i];
		ok = ckpt_mem_read(ck->pidfd, ck->pid, &m) == 0;
		o = json_pack("{s:s?, s:o, s:s, s:f, s:o, s:o, s:i, s:I, s:f, "
		    "s:b}",
		    "name", ck->name,
		    "cell", json_integer(ck->node->cell),
		    "kind", ckpt_kind_name(ck->kind),
		    "age_s", (double)(now - ck->born_ms) / 1000.0,
		    "private", ok ? json_integer(m.priv) : json_null(),
		    "pss", ok ? json_integer(m.pss) : json_null(),
		    "threads", ck->threads,
		    /* as coil's own namespace sees it: a pid to kill or
		     * inspect from outside, not the worker's view */
		    "pid", (json_int_t)(ck->pidfd >= 0 &&
		    ckpt_pid_of(ck->pidfd) > 0 ? ckpt_pid_of(ck->pidfd) :
		    ck->pid),
		    "fork_ms", ck->fork_ms,
		    "current", ck->node == current);
		json_array_append_new(list, o);
	}
	free(v);
	mem = ckpt_memory(set, worker_pidfd);
	return json_pack("{s:o, s:i, s:o, s:i}", "checkpoints", list,
	    "count", n, "memory", mem >= 0 ? json_integer(mem) : json_null(),
	    "max_auto", set->max_auto);
}

json_t *
ckpt_restored(const struct ckpt *ck)
{
	return json_pack("{s:o, s:i}", "cell", ck->kind == CKPT_PRISTINE ?
	    json_null() : json_integer(ck->node->cell), "threads_lost",
	    ck->threads);
}
