/*
 * life-test.c - unit tests of session-life.c: the worker's state
 * machine, walked through the lives the session gives it (a fresh
 * start, a run stopped at its deadline, a resume and its re-arm, a
 * replacement on purpose, a death under a run), its counters, and a
 * pair the table lacks, which must end the process.
 *
 * A TAP program: exits 1 if any test failed.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckpt.h"
#include "session-life.h"
#include "util.h"
#include "tap.h"

static bool
is(const struct life *l, enum life_state st)
{
	if (l->state == st)
		return true;
	printf("#   state %s, wanted %s\n", life_state_name(l->state),
	    life_state_name(st));
	return false;
}

/* A fresh worker: spawned, hello, a run stopped at its deadline that
 * replies all the same. */
static void
test_fresh(void)
{
	struct life l;

	life_init(&l);
	tap_ok(is(&l, LIFE_NONE) && !life_alive(&l), "a new life is none");
	life_spawned(&l);
	tap_ok(is(&l, LIFE_STARTING) && life_starting(&l) && l.spawns == 1,
	    "spawned: starting, one spawn owed its answer");
	tap_ok(life_hello(&l, true) == NULL && is(&l, LIFE_READY) &&
	    l.pristine_owed, "hello of a fresh worker: ready, pristine owed");
	life_sent(&l);
	tap_ok(is(&l, LIFE_RUNNING) && life_serving(&l) && life_busy(&l),
	    "a request sent: running, serving");
	life_deadline(&l);
	life_deadline(&l);
	tap_ok(is(&l, LIFE_STOPPING) && life_serving(&l),
	    "SIGINT for the run (twice): stopping, still serving");
	life_replied(&l);
	tap_ok(is(&l, LIFE_READY) && !life_serving(&l),
	    "its reply: ready again");
	life_no_pristine(&l);
	tap_ok(!l.pristine_owed, "no pristine checkpoint owed once code ran");
}

/* A resumed checkpoint: its deadline, its hello, its re-arm. */
static void
test_resume(void)
{
	struct ckpt auto_ck = { .kind = CKPT_AUTO };
	struct ckpt atomic_ck = { .kind = CKPT_ATOMIC };
	struct life l;

	life_init(&l);
	life_resumed(&l, &auto_ck, 5000);
	tap_ok(is(&l, LIFE_RESUMING) && life_starting(&l) &&
	    l.resuming == &auto_ck && l.resume_deadline > 0,
	    "resumed: resuming, with a deadline");
	tap_ok(!life_resume_expired(&l, l.resume_deadline - 1) &&
	    life_resume_expired(&l, l.resume_deadline) &&
	    !life_resume_expired(&l, l.resume_deadline + 1),
	    "its deadline runs out once, not before");
	tap_ok(life_hello(&l, true) == &auto_ck && is(&l, LIFE_READY) &&
	    l.resuming == NULL && l.rearm == &auto_ck && !l.pristine_owed,
	    "hello: ready, the checkpoint due to be re-armed, no pristine");
	tap_ok(life_rearm_take(&l) == &auto_ck && l.rearm == NULL,
	    "the re-arm arrives: taken once");
	life_died(&l);
	life_resumed(&l, &atomic_ck, 5000);
	tap_ok(life_hello(&l, true) == &atomic_ck && l.rearm == NULL,
	    "an atomic cell's checkpoint is not re-armed");
	life_died(&l);
	life_resumed(&l, &auto_ck, 5000);
	life_forget(&l, &auto_ck);
	tap_ok(l.resuming == NULL && !life_resume_expired(&l, INT64_MAX) &&
	    is(&l, LIFE_RESUMING), "a dropped checkpoint is forgotten");
}

/* Replaced on purpose, and dead under a run. */
static void
test_death(void)
{
	struct life l;

	life_init(&l);
	life_spawned(&l);
	life_hello(&l, false);
	life_killed(&l, AFTER_ROLLBACK);
	tap_ok(is(&l, LIFE_DYING) && life_busy(&l) && !life_serving(&l) &&
	    l.after == AFTER_ROLLBACK, "killed for a rollback: dying");
	life_died(&l);
	tap_ok(is(&l, LIFE_NONE) && !life_died_under(&l) &&
	    l.after == AFTER_ROLLBACK,
	    "its death keeps what the run waits for");
	life_answered(&l);
	tap_ok(l.after == AFTER_NONE, "answered: the run waits no more");
	life_spawned(&l);
	life_hello(&l, false);
	life_sent(&l);
	life_died(&l);
	tap_ok(life_died_under(&l) && l.after == AFTER_DIED &&
	    !life_died_under(&l), "a death under a run: restore the newest");
}

/* What init owes, and how often a start may fail. */
static void
test_counts(void)
{
	struct life l;

	life_init(&l);
	life_spawned(&l);
	life_died(&l);
	life_spawned(&l);
	tap_ok(!life_spawn_done(&l) && life_spawn_done(&l) &&
	    !life_spawn_done(&l), "only the newest spawn's answer names it");
	life_int_sent(&l);
	life_int_sent(&l);
	life_int_done(&l);
	tap_ok(l.ints_owed == 1, "an interrupt init has not sent is owed");
	tap_ok(life_init_gone(&l) == 1 && l.ints_owed == 0 && l.spawns == 0,
	    "init gone before a hello: an early death, nothing owed");
	tap_ok(life_start_failed(&l) == 1 && life_start_failed(&l) == 2,
	    "failed starts counted in a row");
	life_hello(&l, false);
	tap_ok(l.failed_starts == 0 && life_init_gone(&l) == 0,
	    "a hello ends both runs of failures");
	life_gate_pass(&l);
	tap_ok(life_gate_close(&l) && !life_gate_close(&l),
	    "the gate's pass is seen once");
}

/* A pair the table lacks is a broken invariant: the process ends,
 * naming the event and the state. */
static void
test_refused(void)
{
	char msg[512] = "";
	int status = 0, p[2];
	ssize_t n, got = 0;
	struct life l;
	pid_t pid;

	if (pipe(p) == -1 || (pid = fork()) == -1) {
		tap_ok(false, "pipe or fork failed");
		return;
	}
	if (pid == 0) {
		dup2(p[1], 2);
		life_init(&l);
		life_sent(&l);	/* a request to no worker */
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], msg + got, sizeof msg - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	waitpid(pid, &status, 0);
	tap_ok(!(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
	    strstr(msg, "cannot take 'sent' when none") != NULL,
	    "a request sent to no worker ends the process, saying so");
	if (strstr(msg, "cannot take") == NULL)
		tap_diag_bytes("stderr", msg, (size_t)got);
}

int
main(void)
{
	test_fresh();
	test_resume();
	test_death();
	test_counts();
	test_refused();
	return tap_done();
}
