/*
 * worker-fds.c - the worker's descriptors (see worker-int.h): fd 1 and 2,
 * which a cell may close or replace, the copies kept of them to put
 * back, and the control socket's high number.  Worker only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "worker-int.h"

/* Copies of fd 1 and 2 at high numbers, and what they referred to. */
static int worker_saved_fd[3] = { -1, -1, -1 };
static struct stat worker_saved_st[3];

/* A cell may close or replace fd 1 and 2; put the pipes back so the next
 * cell's output is still captured.  Returns how many were repaired. */
int
worker_repair_fds(void)
{
	struct stat st;
	int fd, n = 0;

	for (fd = 1; fd <= 2; fd++) {
		if (fstat(fd, &st) == 0 &&
		    st.st_ino == worker_saved_st[fd].st_ino &&
		    st.st_dev == worker_saved_st[fd].st_dev)
			continue;
		dup2(worker_saved_fd[fd], fd);
		n++;
	}
	return n;
}

void
worker_save_fds(void)
{
	int fd;

	for (fd = 1; fd <= 2; fd++) {
		worker_saved_fd[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 100);
		if (worker_saved_fd[fd] == -1 ||
		    fstat(fd, &worker_saved_st[fd]) == -1)
			fatal_code(EXIT_SETUP, errno, "worker: cannot keep fd "
			    "%d", fd);
	}
}

int
worker_kept_fd(int fd)
{
	return worker_saved_fd[fd];
}

/*
 * The control socket goes to a high descriptor, close-on-exec: out of
 * the way of a cell that closes or reuses low ones (os.closerange(3,
 * 256) before a daemon's fork), and never inherited by a program it
 * runs.  It hides nothing from code in this process, which can always
 * find it in /proc/self/fd: the supervisor checks every frame (link.h).
 */
int
worker_high_fd(int fd)
{
	struct rlimit rl;
	rlim_t top = 1024;
	int nfd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
		top = rl.rlim_cur;
	if (top <= 200)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)top - 1);
	if (nfd == -1)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)top / 2);
	if (nfd == -1)
		return fd;
	close(fd);
	return nfd;
}

/* Make fd 1 and 2, and the copies worker_save_fds keeps of them, refer
 * to out and err.  The copies keep their numbers: worker.py knows them.
 * worker_point_fds also notes what they are. */
void
worker_aim_fds(int out, int err)
{
	if (dup2(out, 1) == -1 || dup2(err, 2) == -1 ||
	    dup3(out, worker_saved_fd[1], O_CLOEXEC) == -1 ||
	    dup3(err, worker_saved_fd[2], O_CLOEXEC) == -1)
		_exit(EXIT_SETUP);
}

void
worker_point_fds(int out, int err)
{
	worker_aim_fds(out, err);
	if (fstat(1, &worker_saved_st[1]) == -1 ||
	    fstat(2, &worker_saved_st[2]) == -1)
		_exit(EXIT_SETUP);
}
