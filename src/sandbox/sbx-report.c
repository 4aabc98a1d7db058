/*
 * sbx-report.c: the report of what holds.  One entry per mechanism, set by
 * the steps; the guarantees a person is promised (the rule table below)
 * and the mechanisms that give each; the report in words and in JSON
 * (supervisor), the audit hook's configuration (worker), and the probe
 * that runs the real steps in a throw-away init and worker for `coil
 * --sandbox-report` (supervisor).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sbx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit.h"

extern char **environ;

static const char *const mech_names[SANDBOX_M_COUNT] = {
	[SANDBOX_M_CGROUP_PIDS] = "cgroup pids",
	[SANDBOX_M_CGROUP_MEMORY] = "cgroup memory",
	[SANDBOX_M_USERNS] = "user namespace",
	[SANDBOX_M_MOUNTNS] = "mount namespace",
	[SANDBOX_M_PIDNS] = "pid namespace",
	[SANDBOX_M_NETNS] = "network namespace",
	[SANDBOX_M_IPCNS] = "ipc namespace",
	[SANDBOX_M_ENV] = "environment",
	[SANDBOX_M_RLIMITS] = "rlimits",
	[SANDBOX_M_CAPS] = "capabilities",
	[SANDBOX_M_NNP] = "no_new_privs",
	[SANDBOX_M_LANDLOCK_FS] = "landlock files",
	[SANDBOX_M_LANDLOCK_NET] = "landlock tcp",
	[SANDBOX_M_LANDLOCK_SCOPE] = "landlock scopes",
	[SANDBOX_M_SECCOMP] = "seccomp",
	[SANDBOX_M_SECCOMP_STRICT] = "seccomp strict",
	[SANDBOX_M_CKPT_GATE] = "checkpoint gate",
};

static const char *const state_names[] = {
	[SANDBOX_UNTRIED] = "untried",
	[SANDBOX_ON] = "on",
	[SANDBOX_OFF] = "off",
	[SANDBOX_MISSING] = "missing",
	[SANDBOX_FAILED] = "failed",
};

const char *
sandbox_mech_name(enum sandbox_mech m)
{
	return (unsigned)m < SANDBOX_M_COUNT ? mech_names[m] : "?";
}

void
sandbox_report_init(struct sandbox_report *r, enum sandbox_profile p)
{
	struct utsname u;
	int i;

	memset(r, 0, sizeof *r);
	r->profile = p;
	r->worker_uid = (long)geteuid();
	if (uname(&u) == 0)
		snprintf(r->kernel, sizeof r->kernel, "%s", u.release);
	if (p == SANDBOX_NONE)
		for (i = 0; i < SANDBOX_M_COUNT; i++)
			sbx_mark(r, i, SANDBOX_OFF, 0, "profile none");
}

/* ---- the guarantees ---------------------------------------------------- */

static bool
r_net(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_NETNS) || sbx_is_on(r, SANDBOX_M_SECCOMP);
}

static bool
r_read(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_LANDLOCK_FS);
}

static bool
r_write(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_LANDLOCK_FS) ||
	    (sbx_is_on(r, SANDBOX_M_MOUNTNS) && sbx_is_on(r, SANDBOX_M_USERNS));
}

static bool
r_signal(const struct sandbox_report *r)
{
	return (sbx_is_on(r, SANDBOX_M_PIDNS) ||
	    sbx_is_on(r, SANDBOX_M_LANDLOCK_SCOPE)) &&
	    sbx_is_on(r, SANDBOX_M_SECCOMP);
}

static bool
r_memory(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_CGROUP_MEMORY);
}

static bool
r_procs(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_CGROUP_PIDS) ||
	    (r->worker_uid != 0 && sbx_is_on(r, SANDBOX_M_USERNS) &&
	    sbx_is_on(r, SANDBOX_M_RLIMITS));
}

static bool
r_files(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_RLIMITS);
}

static bool
r_die(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_PIDNS);
}

static bool
r_root(const struct sandbox_report *r)
{
	if (r->worker_uid != 0)
		return true;
	return sbx_is_on(r, SANDBOX_M_CAPS) &&
	    sbx_is_on(r, SANDBOX_M_SECCOMP) &&
	    sbx_is_on(r, SANDBOX_M_LANDLOCK_FS);
}

static bool
r_env(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_ENV);
}

static bool
r_sockets(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_MOUNTNS) &&
	    (sbx_is_on(r, SANDBOX_M_NETNS) ||
	    sbx_is_on(r, SANDBOX_M_LANDLOCK_SCOPE));
}

static bool
r_kernel(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_SECCOMP) && sbx_is_on(r, SANDBOX_M_NNP);
}

static bool
r_setid(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_SECCOMP);
}

static bool
r_strict(const struct sandbox_report *r)
{
	return sbx_is_on(r, SANDBOX_M_SECCOMP_STRICT);
}

#define P_STD (1 << SANDBOX_STANDARD)
#define P_STRICT (1 << SANDBOX_STRICT)
#define P_BOTH (P_STD | P_STRICT)

static const struct rule {
	const char *text;
	const char *by;			/* mechanisms that give it */
	const char *lifted_by;
	int profiles;
	bool net;			/* wanted only without --allow-net */
	bool (*holds)(const struct sandbox_report *);
} rules[] = {
	{ "no network", "network namespace, seccomp (sockets), landlock tcp",
	  "--allow-net", P_BOTH, true, r_net },
	{ "reads limited to the system's shared files (Python's own under "
	  "strict), the work directory and --allow-read", "landlock files, "
	  "mount namespace, user namespace", "--allow-read DIR", P_BOTH, false,
	  r_read },
	{ "writes only in the work directory, the private tmp and "
	  "--allow-write", "landlock files, mount namespace",
	  "--allow-write DIR", P_BOTH, false, r_write },
	{ "no unix socket of the machine (docker, dbus, X11)", "mount "
	  "namespace (pathname), network namespace or landlock scopes "
	  "(abstract)", "--allow-write DIR", P_BOTH, false, r_sockets },
	{ "no signals or tracing of processes outside the session",
	  "pid namespace, landlock scopes, seccomp", NULL, P_BOTH, false,
	  r_signal },
	{ "memory limited, swap off", "cgroup memory (rlimits: per process)",
	  "--memory SIZE", P_BOTH, false, r_memory },
	{ "process count limited", "cgroup pids, RLIMIT_NPROC in the user "
	  "namespace", "--max-procs N", P_BOTH, false, r_procs },
	{ "file size and open files limited", "rlimits", "--max-file-size SIZE",
	  P_BOTH, false, r_files },
	{ "every process it starts dies with the session", "pid namespace",
	  NULL, P_BOTH, false, r_die },
	{ "root is not special", "user namespace, capabilities, seccomp, "
	  "landlock", NULL, P_BOTH, false, r_root },
	{ "no secrets in the environment", "environment", NULL, P_BOTH, false,
	  r_env },
	{ "no ptrace, mount, namespace, bpf, io_uring or module calls",
	  "seccomp, no_new_privs", NULL, P_BOTH, false, r_kernel },
	{ "no set-uid or set-gid files (the work dir's files are the host's)",
	  "seccomp", NULL, P_BOTH, false, r_setid },
	{ "no new processes or programs; no socket but socketpair",
	  "seccomp strict", "--sandbox standard", P_STRICT, false, r_strict },
};

static bool
rule_wanted(const struct rule *ru, const struct sandbox_report *r,
    bool allow_net)
{
	if (!(ru->profiles & (1 << r->profile)))
		return false;
	if (ru->net && allow_net && r->profile != SANDBOX_STRICT)
		return false;
	return true;
}

/* --allow-net is not in the report; it shows as the netns being off. */
static bool
report_allow_net(const struct sandbox_report *r)
{
	return r->m[SANDBOX_M_NETNS].state == SANDBOX_OFF &&
	    r->profile != SANDBOX_NONE;
}

bool
sandbox_report_complete(const struct sandbox_report *r)
{
	size_t i;
	bool net = report_allow_net(r);

	for (i = 0; i < sizeof rules / sizeof *rules; i++)
		if (rule_wanted(&rules[i], r, net) && !rules[i].holds(r))
			return false;
	return true;
}

/* conf->require and the report is not complete: the error for
 * sandbox_apply, naming each guarantee lost and what would give it. */
void
rep_unmet(const struct sandbox_report *r, char *err, size_t len)
{
	size_t i, n;
	int ln;

	ln = snprintf(err, len, "--sandbox-require: not enforced here:");
	n = ln > 0 ? (size_t)ln : 0;
	for (i = 0; i < sizeof rules / sizeof *rules && n < len; i++) {
		if (!rule_wanted(&rules[i], r, report_allow_net(r)) ||
		    rules[i].holds(r))
			continue;
		ln = snprintf(err + n, len - n, " %s (needs %s);",
		    rules[i].text, rules[i].by);
		n += ln > 0 ? (size_t)ln : 0;
	}
	if (n < len)
		snprintf(err + n, len - n, " see `coil --sandbox-report`");
}

/* ---- report output (supervisor) --------------------------------------- */

void
sandbox_report_print(const struct sandbox_report *r, FILE *f)
{
	size_t i;
	int m;
	bool net = report_allow_net(r);

	fprintf(f, "sandbox %s on Linux %s, Landlock ABI %d: %s\n",
	    sandbox_profile_name(r->profile), r->kernel, r->landlock_abi,
	    r->profile == SANDBOX_NONE ? "no protection asked for" :
	    sandbox_report_complete(r) ? "every protection holds" :
	    "some protections are missing");
	for (m = 0; m < SANDBOX_M_COUNT; m++)
		fprintf(f, "  %-8s %-18s %s\n", state_names[r->m[m].state],
		    mech_names[m], r->m[m].detail);
	if (r->profile == SANDBOX_NONE)
		return;
	fprintf(f, "guarantees:\n");
	for (i = 0; i < sizeof rules / sizeof *rules; i++) {
		if (!rule_wanted(&rules[i], r, net))
			continue;
		fprintf(f, "  %-6s %s", rules[i].holds(r) ? "holds" : "NOT",
		    rules[i].text);
		if (rules[i].lifted_by != NULL)
			fprintf(f, " (lift: %s)", rules[i].lifted_by);
		fputc('\n', f);
	}
}

json_t *
sandbox_report_json(const struct sandbox_report *r)
{
	json_t *o, *mech, *rl;
	size_t i;
	int m;
	bool net = report_allow_net(r);

	mech = json_object();
	for (m = 0; m < SANDBOX_M_COUNT; m++)
		json_object_set_new(mech, mech_names[m], json_pack("{s:s,s:s}",
		    "state", state_names[r->m[m].state], "detail",
		    r->m[m].detail));
	rl = json_array();
	for (i = 0; i < sizeof rules / sizeof *rules; i++) {
		if (!rule_wanted(&rules[i], r, net))
			continue;
		json_array_append_new(rl, json_pack("{s:s,s:b,s:s,s:s?}",
		    "rule", rules[i].text, "holds", rules[i].holds(r), "by",
		    rules[i].by, "lifted_by", rules[i].lifted_by));
	}
	o = json_pack("{s:s,s:b,s:s,s:i,s:I,s:o,s:o}", "profile",
	    sandbox_profile_name(r->profile), "complete",
	    r->profile == SANDBOX_NONE || sandbox_report_complete(r),
	    "kernel", r->kernel, "landlock_abi", r->landlock_abi,
	    "worker_uid", (json_int_t)r->worker_uid, "mechanisms", mech,
	    "rules", rl);
	return o;
}

/* ---- the audit hook's configuration (worker) --------------------------- */

/* sandbox_audit_conf, from the worker's state (st). */
json_t *
rep_audit_conf(const struct sandbox_conf *c, const struct sandbox_report *r,
    const struct sbx_state *st)
{
	json_t *o, *rl, *hid, *masked;
	size_t i;
	bool strict = c->profile == SANDBOX_STRICT;

	rl = json_array();
	for (i = 0; i < st->ll.n; i++) {
		char a[4];

		ll_letters(st->ll.v[i].access, a);
		json_array_append_new(rl, json_pack("[s,s]", st->ll.v[i].path,
		    a));
	}
	hid = json_array();
	for (i = 0; i < st->ll.hidden.n; i++)
		json_array_append_new(hid, json_string(st->ll.hidden.v[i]));
	masked = json_array();
	for (i = 0; i < st->masked.n; i++) {
		json_array_append_new(hid, json_string(st->masked.v[i]));
		json_array_append_new(masked, json_string(st->masked.v[i]));
	}
	/* "root": coil runs as root (the worker is uid 0 outside, or a
	 * uid of its own whose binds are id-mapped to their owners), so an
	 * --allow-read of a root-owned dir gives its files to the worker;
	 * the hook's words say which option lifts a denial from that */
	o = json_pack("{s:s,s:s,s:s,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:b,"
	    "s:o,s:o,s:o,s:b,s:I,s:I,s:I,s:I}",
	    "profile", sandbox_profile_name(c->profile),
	    "workdir", st->paths.workdir,
	    "tmpdir", st->paths.tmpdir,
	    "allow_net", c->allow_net && !strict,
	    "net_enforced", r_net(r),
	    "landlock_fs", sbx_is_on(r, SANDBOX_M_LANDLOCK_FS),
	    "mount_root", sbx_is_on(r, SANDBOX_M_MOUNTNS),
	    "idmap", sbx_is_on(r, SANDBOX_M_USERNS) &&
	    r->worker_uid >= WORKER_UID_BASE,
	    "signals_scoped", sbx_is_on(r, SANDBOX_M_PIDNS) ||
	    sbx_is_on(r, SANDBOX_M_LANDLOCK_SCOPE),
	    "exec", !(strict && sbx_is_on(r, SANDBOX_M_SECCOMP_STRICT)),
	    "fork", !(strict && sbx_is_on(r, SANDBOX_M_SECCOMP_STRICT)),
	    "socket", !(strict && sbx_is_on(r, SANDBOX_M_SECCOMP_STRICT)),
	    "setid", !r_setid(r),
	    "rules", rl, "hidden", hid, "masked", masked,
	    "root", r->worker_uid == 0 || r->worker_uid >= WORKER_UID_BASE,
	    "memory", (json_int_t)c->memory,
	    "max_procs", (json_int_t)c->max_procs,
	    "max_file_size", (json_int_t)c->max_file_size,
	    "max_files", (json_int_t)c->max_files);
	return o;
}

/* ---- probe (supervisor) ---------------------------------------------- */

static ssize_t
read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The probe's init: the real steps, and a worker that writes the report
 * it got to fd. */
static void __attribute__((noreturn))
probe_init(const struct sandbox_conf *c, struct sandbox_report *r, int fd)
{
	char err[512];
	pid_t w;
	char **env;

	if (sandbox_enter(c, r, err, sizeof err) < 0) {
		if (write(fd, r, sizeof *r) < 0)
			_exit(EXIT_SANDBOX);
		_exit(EXIT_SANDBOX);
	}
	w = fork();
	if (w == 0) {
		env = sandbox_env(c, environ);
		environ = env;
		sandbox_apply(c, r, err, sizeof err);
		if (write(fd, r, sizeof *r) < 0)
			_exit(EXIT_PROTOCOL);
		_exit(0);
	}
	if (w > 0)
		while (waitpid(w, NULL, 0) < 0 && errno == EINTR)
			;
	_exit(0);
}

void
sandbox_probe(const struct sandbox_conf *conf, struct sandbox_report *out)
{
	struct sandbox_conf c;
	int p[2];
	pid_t pid;
	struct sandbox_report r;

	sandbox_report_init(out, conf->profile);
	if (conf->profile == SANDBOX_NONE)
		return;
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	/* the session cgroup is named after the probe's init: its pid is
	 * not known before the fork, so use a number no process has */
	c = *conf;
	c.require = false;
	c.session = (pid_t)(WORKER_UID_SPAN + getpid());
	sandbox_report_init(&r, c.profile);
	pid = sandbox_spawn(&c, &r);
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		probe_init(&c, &r, p[1]);
	}
	close(p[1]);
	if (read_full(p[0], &r, sizeof r) == (ssize_t)sizeof r)
		*out = r;
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	sandbox_cleanup(&c);
}
