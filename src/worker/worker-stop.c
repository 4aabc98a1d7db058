/*
 * worker-stop.c - when an interrupt reached the worker (see
 * worker-int.h).  Worker only.
 *
 * init sends WORKER_STOP_SIGNAL to the worker alone right before the
 * SIGINT to its group (init_interrupt).  The SIGINT itself may leave no
 * trace here: os.system ignores it while its command runs (system(3)),
 * and the command, which gets it, ends and lets the cell go on.  This
 * one is caught whatever the cell waits in, and its time, on the
 * CLOCK_MONOTONIC the supervisor and worker.py's started_ns and
 * ended_ns read, tells the supervisor exactly whether the interrupt
 * came before the cell's code ended (session-reply.c).  A cell may
 * change the handler: that mislabels its own answer and nothing else.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "exit.h"
#include "util.h"
#include "worker.h"
#include "worker-int.h"

/* When the first interrupt since worker_stop_clear came, 0: none. */
static uint64_t worker_stop_ns;

static void
worker_stop_caught(int sig)
{
	struct timespec ts;
	uint64_t none = 0, ns;

	(void)sig;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return;
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	/* any thread may take it: the first since the request began */
	__atomic_compare_exchange_n(&worker_stop_ns, &none, ns, false,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void
worker_stop_arm(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = worker_stop_caught;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(WORKER_STOP_SIGNAL, &sa, NULL) == -1)
		fatal_code(EXIT_SETUP, errno, "worker: cannot catch its "
		    "interrupt's signal");
}

void
worker_stop_clear(void)
{
	__atomic_store_n(&worker_stop_ns, 0, __ATOMIC_RELAXED);
}

void
worker_stop_tell(json_t *reply)
{
	uint64_t ns = __atomic_load_n(&worker_stop_ns, __ATOMIC_RELAXED);

	if (ns != 0)
		json_object_set_new(reply, "interrupt_ns", json_integer(
		    (json_int_t)ns));
}
