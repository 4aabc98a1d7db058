/*
 * sandbox.h: the --sandbox profiles (none, standard, strict), enforced by
 * the kernel, and the report of what this machine actually gives.
 *
 * Model-written code is untrusted, so the boundary is the kernel: user,
 * mount, PID, network and IPC namespaces, cgroup limits, rlimits, dropped
 * capabilities, no_new_privs, Landlock and seccomp.  src/worker/audit.py only puts
 * each denial into words; nothing relies on it.
 *
 * Who calls what (coil's process model, see DESIGN.md):
 *
 *   supervisor  sandbox_conf_init, sandbox_parse_profile,
 *               sandbox_spawn (instead of fork() to create init),
 *               sandbox_probe (coil --sandbox-report), sandbox_report_print,
 *               sandbox_report_json, sandbox_gate_answer (strict only),
 *               sandbox_sweep (at start), sandbox_cleanup (after init
 *               has been reaped, and in the fatal teardown)
 *   init        sandbox_enter, once, before it forks the worker
 *   worker      sandbox_env, then sandbox_apply (before Python starts), then
 *               after Py_Initialize: sandbox_audit_conf, for src/worker/audit.py;
 *               strict: sandbox_take_notify_fd, passed to the supervisor
 *
 * The order inside is fixed and each step fails closed, naming the errno
 * and a hint:
 *   sandbox_spawn  PID namespace (and, not root, a user namespace)
 *   sandbox_enter  cgroup (create, limit, join) -> network and IPC
 *                  namespaces -> mount namespace with a new root ->
 *                  root only: the worker's user namespace, entered last
 *   sandbox_apply  environment scrub -> rlimits -> capabilities ->
 *                  no_new_privs -> Landlock -> seccomp (last)
 * Namespaces come before the rlimits only because init creates them and
 * the worker, init's child, sets its own limits; the kernel order that
 * matters (no_new_privs before Landlock and seccomp, seccomp last) holds.
 *
 * A mechanism the machine lacks (ENOSYS, EOPNOTSUPP, EPERM from a container
 * policy, a read-only cgroupfs) is recorded as missing and the session goes
 * on with what holds; with conf->require, sandbox_apply then returns -1 if
 * a guarantee of the profile is lost (the report names the guarantees and
 * the mechanisms that give each).  An unexpected failure half-way through a
 * mechanism always returns -1: the caller must not run user code then.
 *
 * Nothing here links or calls Python.  Nothing here is thread-safe: init
 * and the worker call it while single-threaded.
 */
#ifndef COIL_SANDBOX_H
#define COIL_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

enum sandbox_profile { SANDBOX_NONE, SANDBOX_STANDARD, SANDBOX_STRICT };

struct sandbox_conf {
	enum sandbox_profile profile;
	const char *workdir;		/* absolute, exists; default: the cwd */
	const char *tmp_base;		/* $TMPDIR if absolute, else /tmp
					   (also when NULL): where init makes
					   the private temp dir when the mount
					   namespace cannot give one (see
					   sandbox_enter) */
	const char **allow_read;	/* --allow-read DIR, repeatable */
	size_t n_allow_read;
	const char **allow_write;	/* --allow-write DIR, repeatable */
	size_t n_allow_write;
	const char **python_paths;	/* read-only dirs the embedded Python
					   needs outside /usr (a venv, a
					   prefix); may be NULL */
	size_t n_python_paths;
	const char *venv;		/* the virtualenv cells use, its real
					   path as the supervisor resolved it
					   before any cell ran, or NULL: cells
					   read it (a bind of venv_fd where no
					   other bind holds it) and the worker's
					   environment names it (VIRTUAL_ENV,
					   its bin/ first on PATH) */
	int venv_fd;			/* O_PATH of that dir, held since the
					   start: init binds what was opened
					   then, never the path again; -1 */
	const char *state_dir;		/* coil's own (history, transcripts):
					   when it lies in a dir cells see,
					   the mount namespace covers it with
					   an empty read-only dir and makes
					   each dir on the way a mount point,
					   which no cell can rename; may be
					   NULL */
	bool allow_net;			/* --allow-net */
	bool require;			/* --sandbox-require */
	bool ckpt_gate;			/* strict: let the worker fork its own
					   checkpoints through the supervisor's
					   gate (sandbox_gate_answer), which
					   must then answer every request: a
					   fork waits until it does; false: no
					   fork at all under strict */
	unsigned long long memory;	/* --memory, bytes; default 4 GiB */
	long max_procs;			/* --max-procs; processes and threads */
	unsigned long long max_file_size; /* --max-file-size, bytes */
	long max_files;			/* open files per process */
	pid_t session;			/* names the session cgroup coil.<N>:
					   the supervisor's pid; 0 = the
					   parent of the process calling
					   sandbox_enter */
	unsigned skip;			/* 1 << SANDBOX_M_*: mechanisms not
					   to try, reported missing (tests
					   degrade on purpose with it) */
};

/* Defaults: standard, memory 4 GiB, 256 processes, 1 GiB files, 1024 open
 * files, cwd as workdir (the pointer stays NULL: sandbox_enter uses the
 * cwd), the checkpoint gate on. */
void sandbox_conf_init(struct sandbox_conf *);

/* "none", "standard", "strict": 0, else -1. */
int sandbox_parse_profile(const char *s, enum sandbox_profile *p);
const char *sandbox_profile_name(enum sandbox_profile);


/*
 * The report: one entry per mechanism, in the order they are applied.  It
 * is plain old data, with no pointers, so a worker may send it to the
 * supervisor as bytes over its control socket (both are the same binary).
 * init fills the namespace and cgroup entries in sandbox_enter, the worker
 * inherits that copy when init forks it, and sandbox_apply fills the rest.
 */
enum sandbox_mech {
	SANDBOX_M_CGROUP_PIDS,
	SANDBOX_M_CGROUP_MEMORY,
	SANDBOX_M_USERNS,
	SANDBOX_M_MOUNTNS,
	SANDBOX_M_PIDNS,
	SANDBOX_M_NETNS,
	SANDBOX_M_IPCNS,
	SANDBOX_M_ENV,
	SANDBOX_M_RLIMITS,
	SANDBOX_M_CAPS,
	SANDBOX_M_NNP,
	SANDBOX_M_LANDLOCK_FS,
	SANDBOX_M_LANDLOCK_NET,
	SANDBOX_M_LANDLOCK_SCOPE,
	SANDBOX_M_SECCOMP,
	SANDBOX_M_SECCOMP_STRICT,
	SANDBOX_M_CKPT_GATE,
	SANDBOX_M_COUNT
};

enum sandbox_state {
	SANDBOX_UNTRIED = 0,	/* not reached (e.g. sandbox_enter not run) */
	SANDBOX_ON,		/* in force */
	SANDBOX_OFF,		/* not wanted by this profile or its options */
	SANDBOX_MISSING,	/* the machine does not give it */
	SANDBOX_FAILED,		/* tried and failed: see detail */
};

struct sandbox_mech_report {
	int state;		/* enum sandbox_state */
	int err;		/* errno when MISSING or FAILED */
	char detail[256];	/* what holds, or what failed and the hint */
};

struct sandbox_report {
	int profile;		/* enum sandbox_profile */
	int landlock_abi;	/* 0: no Landlock */
	char kernel[80];	/* uname release */
	long worker_uid;	/* the worker's uid outside its namespaces */
	struct sandbox_mech_report m[SANDBOX_M_COUNT];
};

void sandbox_report_init(struct sandbox_report *, enum sandbox_profile);

/* The mechanism's short name, e.g. "pid namespace". */
const char *sandbox_mech_name(enum sandbox_mech);

/* Whether every guarantee of the profile holds (each guarantee is given by
 * one or more mechanisms, see sbx-report.c's rule table). */
bool sandbox_report_complete(const struct sandbox_report *);

/* Supervisor, for `coil --sandbox-report` and the start-up banner: run the
 * real steps in a throw-away init and worker and report what they got.
 * Costs a few milliseconds and leaves nothing behind (its cgroup is
 * removed).  conf->require is ignored. */
void sandbox_probe(const struct sandbox_conf *, struct sandbox_report *);

/* Human-readable: one line per mechanism, then one per guarantee. */
void sandbox_report_print(const struct sandbox_report *, FILE *);

/* For ping: {"profile", "complete", "kernel", "landlock_abi",
 * "mechanisms": {name: {"state", "detail"}}, "rules": [{"rule", "holds",
 * "by", "lifted_by"}]}.  Returns a new reference. */
json_t *sandbox_report_json(const struct sandbox_report *);

/*
 * Supervisor: fork() for init, to be called instead of it (single-threaded,
 * like fork).  The child is PID 1 of a new PID namespace, so that when init
 * dies (it has PR_SET_PDEATHSIG(SIGKILL) on the supervisor, set here) the
 * kernel kills every process of the session; not root, it is also in a user
 * namespace that maps its uid to itself.  In the child getppid() returns 0:
 * do not test it to detect the supervisor's death, the pdeathsig covers it.
 * Where the kernel refuses the namespaces it falls back to fork() and says
 * so in the child's copy of the report.  Under SANDBOX_NONE it is fork().
 */
pid_t sandbox_spawn(const struct sandbox_conf *, struct sandbox_report *);

/*
 * init, once, before it forks the worker.  Joins the session cgroup, enters
 * new network, IPC and mount namespaces, builds the worker's root (system
 * dirs read-only, the work dir and --allow-* dirs at their own paths, a
 * private /tmp and /dev/shm, the session's own /proc), and pivots into
 * it.  The cells' private temp dir (TMPDIR) is then that root's /tmp, a
 * tmpfs that vanishes with the mount namespace; only without the new
 * root is it a dir on the host, coil-<session>-XXXXXX under
 * conf->tmp_base, which init holds locked (flock).  As root it then
 * becomes the worker's unprivileged uid in a user namespace of its own
 * (init needs no privilege after this: it only forks and reaps),
 * re-arming PR_SET_PDEATHSIG, which the kernel clears on a change of
 * uid.  Also setsid() and PR_SET_DUMPABLE 0.
 *
 * On return the cwd is the work directory.  Under SANDBOX_NONE it does
 * nothing and returns 0.  Returns -1 with err filled on an unexpected
 * failure; a mechanism the machine lacks is only recorded.
 */
int sandbox_enter(const struct sandbox_conf *, struct sandbox_report *,
    char *err, size_t errlen);

/*
 * Worker, before Python starts, with fds 0, 1, 2 and the control socket
 * open and nothing else; after `environ = sandbox_env(...)`.  Erases the
 * original environment block, sets rlimits (DATA, FSIZE with SIGXFSZ
 * ignored so writes fail with EFBIG, NOFILE, CORE 0, NPROC), drops every
 * capability, sets no_new_privs, then Landlock, then seccomp.  Its own
 * forks (checkpoints) inherit all of it.  Returns 0, or -1 with err filled
 * (see sandbox_enter), or when conf->require and a guarantee of the
 * profile does not hold.
 */
int sandbox_apply(const struct sandbox_conf *, struct sandbox_report *,
    char *err, size_t errlen);

/*
 * Worker: the environment for Python.  Under none, a copy of env.  Else an
 * allow-list (PATH, LANG, LC_*, TZ, USER, LOGNAME, PIP_FIND_LINKS, the
 * thread counts if the user set them; proxies and CA bundles with
 * allow_net) plus HOME=workdir,
 * TMPDIR=TMP=TEMP=the private temp dir (MPLCONFIGDIR, XDG_CACHE_HOME in it),
 * MPLBACKEND=Agg, and OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and friends set
 * to the CPUs this process may use.  Under every profile VIRTUAL_ENV is
 * conf->venv (or unset) and its bin/ leads PATH.  Returns a NULL-terminated
 * array the caller frees with sandbox_env_free.
 */
char **sandbox_env(const struct sandbox_conf *, char *const *env);
void sandbox_env_free(char **);

/*
 * Worker, after sandbox_apply and Py_Initialize: the `conf` dict src/worker/audit.py
 * needs to explain denials: profile, workdir, tmpdir, allow_net, the
 * Landlock rules actually in force, what the kernel enforces.  Returns a new
 * reference.
 */
json_t *sandbox_audit_conf(const struct sandbox_conf *,
    const struct sandbox_report *);

/*
 * Strict with conf->ckpt_gate: sandbox_apply installs a seccomp filter that
 * sends every fork, vfork and non-thread clone to a listener instead of
 * running it.  This returns that listener fd (once; -1 otherwise).  The
 * worker must pass it to the supervisor (SCM_RIGHTS) and close it before
 * running any user code.  Checkpoints inherit the filter, so the same fd
 * gates them when one is resumed.
 */
int sandbox_take_notify_fd(void);

/*
 * Supervisor, strict only: the notify fd is readable.  Reads one request
 * and lets it run only if it is a plain fork (fork(2), or clone(2)
 * without CLONE_VM: what glibc's fork does) and allow(ctx, tid) says
 * yes for the thread that asks (its pid in the supervisor's PID
 * namespace): the supervisor says yes only to a fork it expects, the
 * worker's own checkpoint or the copy of a checkpoint it asked for
 * (session-ckpt.c), once.  Returns 1 allowed, 0 refused (the caller
 * gets EPERM), -1 on error (errno; ENOENT: the caller died).
 */
typedef bool (*sandbox_gate_fn)(void *ctx, pid_t tid);
int sandbox_gate_answer(int notify_fd, sandbox_gate_fn allow, void *ctx);

/*
 * A worker resumed as a session's branch, before any Python runs: a
 * Landlock domain of its own nested in the one it shares with the
 * checkpoint it was copied from, scoped for signals and abstract unix
 * sockets (ABI 6), so that no cell of another branch can signal it,
 * trace it, read its memory through /proc or reach its sockets, nor it
 * theirs.  0, or -1 with why (the kernel has no scopes; the layers are
 * spent).
 */
int sandbox_scope_self(char *why, size_t len);

/*
 * Supervisor, after init has been reaped (or to end a session that has no
 * PID namespace): kill what is left in the session's cgroups (v1 pids and
 * memory, v2) and remove them, and remove its temp dir if init made one
 * on the host.  conf->session names them (0: the caller's pid).
 */
void sandbox_cleanup(const struct sandbox_conf *);

/* Whether this process spawned an init since its last sandbox_cleanup
 * (a session freed has cleaned up after itself). */
bool sandbox_cleanup_owed(void);

/*
 * Supervisor, at start: remove what coils that died without
 * sandbox_cleanup (SIGKILL, a crash) left behind: coil.<N> cgroups beside
 * the one this session would use, and coil-<N>-XXXXXX dirs under
 * conf->tmp_base, each only when coil N is gone (no such pid in this PID
 * namespace), a cgroup only when empty (rmdir refuses a busy one), a dir
 * only when it is ours and no init holds its lock.  Never this session's.
 */
void sandbox_sweep(const struct sandbox_conf *);

/* init, after sandbox_enter: the descriptor it must keep open for the
 * session's life (the lock on a temp dir made on the host), or -1. */
int sandbox_held_fd(void);

#endif /* COIL_SANDBOX_H */
