/* pingpong: the pipe floor for coil's round trip.
 *
 * Two processes bounce a 100-byte message over a pair of pipes N times.
 * Each round trip (parent write -> child read+write -> parent read) is timed
 * with CLOCK_MONOTONIC; the median is printed in nanoseconds.
 *
 *   pingpong N PARENT_CPU CHILD_CPU      (a CPU of -1 leaves it unpinned)
 *
 * Output: one line, "median_ns N".
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG 100

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("sched_setaffinity");
		exit(2);
	}
}

static int full(ssize_t (*io)(int, void *, size_t), int fd, char *buf)
{
	size_t done = 0;

	while (done < MSG) {
		ssize_t n = io(fd, buf + done, MSG - done);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static ssize_t wr(int fd, void *buf, size_t len)
{
	return write(fd, buf, len);
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int up[2], down[2];
	long n;
	long long *rtt;
	char buf[MSG];
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: pingpong N PARENT_CPU CHILD_CPU\n");
		return 2;
	}
	n = atol(argv[1]);
	if (n < 1 || pipe(up) || pipe(down))
		return 2;
	rtt = malloc(sizeof *rtt * (size_t)n);
	memset(buf, 'x', sizeof buf);

	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		pin(atoi(argv[3]));
		close(down[1]);
		close(up[0]);
		while (full(read, down[0], buf) == 0)
			if (full(wr, up[1], buf) != 0)
				break;
		_exit(0);
	}
	pin(atoi(argv[2]));
	close(down[0]);
	close(up[1]);
	for (long i = -n / 10; i < n; i++) {	/* first 10% is warm-up */
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (full(wr, down[1], buf) || full(read, up[0], buf))
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (i >= 0)
			rtt[i] = (b.tv_sec - a.tv_sec) * 1000000000LL +
				 (b.tv_nsec - a.tv_nsec);
	}
	close(down[1]);
	waitpid(pid, NULL, 0);
	qsort(rtt, (size_t)n, sizeof *rtt, cmp);
	printf("%lld %ld\n", rtt[n / 2], n);
	return 0;
}
