/*
 * sbx.h: what the pieces of the sandbox share; not for the rest of coil,
 * which sees only sandbox.h.
 *
 * sandbox.c is the driver: it holds the two ordered step tables (init's,
 * run by sandbox_enter, and the worker's, run by sandbox_apply) and the
 * one sbx_state of the process.  Each mechanism is a file of its own
 * (sbx-cgroup.c, sbx-ns.c, sbx-root.c, sbx-tmp.c, sbx-limits.c,
 * sbx-landlock.c, sbx-seccomp.c), the report and its guarantees are sbx-report.c, and
 * the helpers below are sbx-util.c.
 *
 * A step gets one struct sbx: the call's conf, report and error buffer,
 * and the process's state.  It puts its mechanism in force and marks it
 * on, or marks it missing (the machine lacks it) and returns 0; it
 * returns -1 with the error buffer filled only when a mechanism failed
 * half-way, and the caller must then not run user code.
 *
 * Nothing here is thread-safe: init and the worker run it while
 * single-threaded.
 */
#ifndef COIL_SBX_H
#define COIL_SBX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

/* The worker's uid outside its user namespace when coil runs as root: an
 * unused, unprivileged uid per session.  Below 2^31 and far above the
 * ranges /etc/subuid hands out.  The probe's sessions are numbered from
 * WORKER_UID_SPAN up, above any pid. */
#define WORKER_UID_BASE 2000000000L
#define WORKER_UID_SPAN 100000000L

/* A dir of the configuration, absolute and free of symlinks. */
struct sbx_bind {
	char *path;
	bool rw;
	int fd;			/* detached clone for the new root, or -1 */
	int src;		/* the dir, held since the start (the
				   venv's), cloned instead of path; -1 */
};

/* A growing list of strings; each is the list's (sbx_strv_add copies). */
struct sbx_strv {
	char **v;
	size_t n;
};

/* A Landlock rule in force, for the audit hook's words. */
struct sbx_ll_rule {
	char *path;
	uint64_t access;
};

/*
 * What the sandbox keeps for the life of a process: one, the driver's,
 * handed to each step.  A fork inherits it as it stands, and that is how
 * it travels: init fills the paths and the masks in sandbox_enter, the
 * worker it forks reads them, adds the Landlock rules in sandbox_apply
 * and reads it all again in sandbox_audit_conf.  Nothing in it is ever
 * freed: it lives as long as the process.
 */
struct sbx_state {
	/* The dirs of the configuration, made absolute and free of
	 * symlinks, so that a bind mount, a Landlock rule and the audit
	 * hook all speak of the same path.  Filled by sandbox_enter
	 * (init) or, without it, sandbox_apply (worker). */
	struct sbx_paths {
		bool ready;
		char workdir[PATH_MAX];
		char tmpdir[PATH_MAX];	/* "" until root_tmp chose it */
		struct sbx_bind *b;	/* allow_read, python_paths, workdir,
					   allow_write, and root_tmp's host
					   dir if it made one; sorted by
					   path */
		size_t nb;
	} paths;
	struct sbx_strv masked;		/* the credentials the new root
					   covers (root_build) */
	struct sbx_landlock {		/* what ll_apply put in force */
		struct sbx_ll_rule *v;
		size_t n;
		struct sbx_strv hidden;	/* /etc entries left out */
		uint64_t handled;
	} ll;
	int parent_pidfd;		/* init, until the end of
					   sandbox_enter: a pidfd on the
					   supervisor (sbx-ns.c); -1 */
	int tmp_lock_fd;		/* init: its hold on a temp dir made
					   on the host (root_tmp); -1 */
	int notify_fd;			/* worker, strict: the checkpoint
					   gate's listener (sc_apply); -1 */
};

/* One call of sandbox_enter or sandbox_apply, handed to each step. */
struct sbx {
	const struct sandbox_conf *c;
	struct sandbox_report *r;
	struct sbx_state *st;		/* the process's */
	char *err;
	size_t len;
	/* sandbox_enter's, passed from step to step */
	pid_t session;			/* names the cgroup and temp dir */
	int userns;			/* root: the worker's user namespace,
					   not entered yet; -1 */
	long outside;			/* the worker's uid outside */
	bool root;			/* coil runs as uid 0 */
	bool pid1;			/* init is PID 1 of its own PID
					   namespace */
};

typedef int sbx_step_fn(struct sbx *);

/* ---- sbx-util.c: helpers ---------------------------------------------- */

/* Out of memory ends the process (EXIT_NOMEM), nothing else. */
void *sbx_realloc(void *p, size_t n);
char *sbx_strdup(const char *s);
char *sbx_asprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void sbx_strv_add(struct sbx_strv *, const char *s);

/* "what: strerror(e); hint" into a caller's buffer (e 0: no strerror,
 * hint NULL: no hint). */
void sbx_seterr(char *err, size_t len, int e, const char *hint,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Set mechanism m's state, errno and detail in the report. */
void sbx_mark(struct sandbox_report *, enum sandbox_mech m,
    enum sandbox_state, int e, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
bool sbx_is_on(const struct sandbox_report *, enum sandbox_mech m);
/* conf->skip asks not to try m (tests degrade on purpose): then marks it
 * missing and returns true. */
bool sbx_skipped(const struct sandbox_conf *, struct sandbox_report *,
    enum sandbox_mech m);

/* All of s, or -1 with errno. */
int sbx_write_file(const char *path, const char *s);
/* Up to len-1 bytes, NUL-terminated: the count, or -1 with errno. */
ssize_t sbx_read_file(const char *path, char *buf, size_t len);
/* 4294967296 -> "4G"; a size that is no whole unit stays in bytes. */
void sbx_fmt_size(char *buf, size_t len, unsigned long long b);
/* Is the coil a session's name (coil.<N>, coil-<N>-XXXXXX) stands for
 * gone?  See sbx-util.c. */
bool sbx_owner_dead(long n);

/* The device nodes the new /dev holds and Landlock allows. */
extern const char *const sbx_dev_nodes[];
extern const size_t sbx_n_dev_nodes;

/* ---- sandbox.c: the driver --------------------------------------------- */

/* Add path, resolved, to the binds (writable if rw), keeping them sorted;
 * -1 with err filled (opt names the option) if it cannot be resolved. */
int sbx_paths_add(struct sbx_paths *, const char *opt, const char *path,
    bool rw, char *err, size_t len);

/* ---- the steps, by file, in the order the driver runs them ------------ */

/* sbx-cgroup.c (init) */
sbx_step_fn cg_enter;
long cg_cpus_allowed(void);
void cg_cleanup(pid_t session);
void cg_sweep_stale(pid_t session);

/* sbx-ns.c: user, PID, network and IPC namespaces (init) */
pid_t ns_spawn(const struct sandbox_conf *, struct sandbox_report *,
    struct sbx_state *);
sbx_step_fn ns_userns_self;
sbx_step_fn ns_net_ipc;
sbx_step_fn ns_userns_make;
sbx_step_fn ns_userns_enter;
int ns_userns_mapped(long inside, long outside, long ginside,
    long goutside);

/* sbx-root.c: the mount namespace and the new root (init) */
sbx_step_fn root_mountns;
sbx_step_fn root_build;
/* sbx-tmp.c: the private temp dir (init), and its removal (supervisor) */
sbx_step_fn root_tmp;
void root_tmp_sweep(const char *base, pid_t session);

/* sbx-limits.c: the worker's environment, rlimits, capabilities and
 * no_new_privs */
char **lim_env(const struct sandbox_conf *, char *const *env,
    const char *tmpdir);
sbx_step_fn lim_env_scrub;
sbx_step_fn lim_rlimits;
sbx_step_fn lim_caps;
sbx_step_fn lim_nnp;

/* sbx-landlock.c, sbx-seccomp.c (worker, seccomp last) */
sbx_step_fn ll_apply;
void ll_letters(uint64_t access, char a[4]);	/* "rwx" or less */
sbx_step_fn sc_apply;

/* sbx-report.c */
void rep_unmet(const struct sandbox_report *, char *err, size_t len);
json_t *rep_audit_conf(const struct sandbox_conf *,
    const struct sandbox_report *, const struct sbx_state *);

#endif /* COIL_SBX_H */
