/*
 * sdfd.c - the sockets systemd passes (see sdfd.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdfd.h"
#include "util.h"

#define SDFD_START	3	/* SD_LISTEN_FDS_START */
#define SDFD_MAX	64	/* more than a .socket unit passes */

static struct {
	bool read;		/* sdfd_init ran */
	int n;			/* sockets passed to us; -1: LISTEN_FDS unset */
	long pid;		/* LISTEN_PID when it named another process */
	char *names;		/* LISTEN_FDNAMES, as given, or NULL */
	char bad[128];		/* why LISTEN_FDS was not taken, or "" */
	bool taken[SDFD_MAX];
} sdfd = { .n = -1 };

void
sdfd_init(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS"),
	    *names = getenv("LISTEN_FDNAMES");
	char *end;
	long p, n = -1;
	int fd;

	if (sdfd.read)
		return;
	sdfd.read = true;
	if (fds != NULL) {
		errno = 0;
		n = strtol(fds, &end, 10);
		if (errno != 0 || end == fds || *end != '\0' || n < 0 ||
		    n > SDFD_MAX) {
			snprintf(sdfd.bad, sizeof sdfd.bad, "LISTEN_FDS is "
			    "'%.40s', not a count from 0 to %d", fds,
			    SDFD_MAX);
			n = -1;
		}
	}
	if (n >= 0 && (pid == NULL || (errno = 0, p = strtol(pid, &end, 10),
	    errno != 0 || end == pid || *end != '\0') ||
	    p != (long)getpid())) {
		/* For another process (a parent's, inherited): not ours to
		 * touch, as sd_listen_fds(3) says. */
		sdfd.pid = pid != NULL ? strtol(pid, NULL, 10) : 0;
		if (pid == NULL)
			snprintf(sdfd.bad, sizeof sdfd.bad, "LISTEN_FDS is set "
			    "but LISTEN_PID is not: the sockets' process is "
			    "unknown");
		else if (sdfd.pid <= 0)
			snprintf(sdfd.bad, sizeof sdfd.bad, "LISTEN_PID is "
			    "'%.40s', not a process id", pid);
		n = -1;
	}
	for (fd = SDFD_START; n > 0 && fd < SDFD_START + n; fd++)
		if (set_cloexec(fd, true) == -1) {
			snprintf(sdfd.bad, sizeof sdfd.bad, "LISTEN_FDS is %ld "
			    "but fd %d is not open", n, fd);
			n = -1;
		}
	sdfd.n = (int)n;
	if (n >= 0 && names != NULL)
		sdfd.names = xstrdup(names);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

bool
sdfd_spec(const char *value)
{
	return value != NULL && strncmp(value, "systemd", 7) == 0 &&
	    (value[7] == '\0' || value[7] == ':');
}

/* The name of the i-th socket ("" when none was given) into out. */
static void
sdfd_name(int i, char *out, size_t len)
{
	const char *p = sdfd.names;
	size_t n;

	for (; p != NULL && i > 0; i--)
		p = (p = strchr(p, ':')) != NULL ? p + 1 : NULL;
	n = p != NULL ? strcspn(p, ":") : 0;
	if (n >= len)
		n = len - 1;
	memcpy(out, p != NULL ? p : "", n);
	out[n] = '\0';
}

/* The index of the passed socket spec names, or -1 with err. */
static int
sdfd_pick(const char *spec, const char *opt, char *err, size_t len)
{
	const char *want = spec[7] == ':' ? spec + 8 : NULL;
	char name[256];
	int i;

	if (sdfd.n < 0 && sdfd.bad[0] != '\0')
		return err_set(err, len, "%s %s: %s", opt, spec, sdfd.bad);
	if (sdfd.n < 0 && sdfd.pid != 0)
		return err_set(err, len, "%s %s: the sockets passed are for "
		    "another process (LISTEN_PID %ld, coil is %ld): start coil "
		    "itself from the .socket unit, with no process forked in "
		    "between", opt, spec, sdfd.pid, (long)getpid());
	if (sdfd.n <= 0)
		return err_set(err, len, "%s %s: no socket was passed (%s): "
		    "start coil from a systemd .socket unit or "
		    "systemd-socket-activate", opt, spec, sdfd.n < 0 ?
		    "LISTEN_FDS and LISTEN_PID are not set" :
		    "LISTEN_FDS is 0");
	if (want == NULL && sdfd.n > 1)
		return err_set(err, len, "%s systemd: %d sockets were passed "
		    "(LISTEN_FDNAMES '%s'): pick one with systemd:NAME", opt,
		    sdfd.n, sdfd.names != NULL ? sdfd.names : "");
	for (i = 0; want != NULL && i < sdfd.n; i++) {
		sdfd_name(i, name, sizeof name);
		if (strcmp(name, want) == 0)
			break;
	}
	if (want != NULL && i == sdfd.n)
		return err_set(err, len, "%s %s: no socket of that name was "
		    "passed (LISTEN_FDNAMES '%s')", opt, spec,
		    sdfd.names != NULL ? sdfd.names : "");
	if (want == NULL)
		i = 0;
	if (sdfd.taken[i])
		return err_set(err, len, "%s %s: that socket is taken by "
		    "another option already", opt, spec);
	return i;
}

/* What fd is, in words: "a unix datagram socket", "a TCP socket that
 * does not listen", "a regular file". */
static void
sdfd_describe(int domain, int type, bool listening, char *out, size_t len)
{
	const char *fam = domain == AF_UNIX ? "unix" : domain == AF_INET ?
	    "IPv4" : domain == AF_INET6 ? "IPv6" : "non-IP, non-unix",
	    *ty = type == SOCK_STREAM ? "stream" : type == SOCK_DGRAM ?
	    "datagram" : type == SOCK_SEQPACKET ? "seqpacket" : "raw";

	snprintf(out, len, "a%s %s %s socket%s", domain == AF_INET ||
	    domain == AF_INET6 ? "n" : "", fam, ty, listening ||
	    type != SOCK_STREAM ? "" : " that does not listen");
}

/* Whether the unix socket fd is bound to an absolute path. */
static bool
sdfd_has_path(int fd)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof sa;

	memset(&sa, 0, sizeof sa);
	return getsockname(fd, (struct sockaddr *)&sa, &len) == 0 &&
	    len > offsetof(struct sockaddr_un, sun_path) &&
	    sa.sun_path[0] == '/';
}

int
sdfd_take(const char *spec, enum sdfd_kind kind, const char *opt,
    char *err, size_t len)
{
	int i, fd, domain = 0, type = 0, acc = 0;
	socklen_t sl = sizeof domain;
	struct stat st;
	char what[96];
	bool ok;

	if ((i = sdfd_pick(spec, opt, err, len)) < 0)
		return -1;
	fd = SDFD_START + i;
	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
		return err_set(err, len, "%s %s: fd %d, passed as a socket, is "
		    "not one: check the .socket unit", opt, spec, fd);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &sl) == -1 ||
	    (sl = sizeof type, getsockopt(fd, SOL_SOCKET, SO_TYPE, &type,
	    &sl)) == -1 || (sl = sizeof acc, getsockopt(fd, SOL_SOCKET,
	    SO_ACCEPTCONN, &acc, &sl)) == -1)
		return err_set(err, len, "%s %s: fd %d: %s", opt, spec, fd,
		    strerror(errno));
	sdfd_describe(domain, type, acc != 0, what, sizeof what);
	ok = type == SOCK_STREAM && acc != 0 && (kind == SDFD_UNIX ?
	    domain == AF_UNIX : domain == AF_INET || domain == AF_INET6);
	if (!ok)
		return err_set(err, len, "%s %s: the socket passed (fd %d) is "
		    "%s; %s takes a listening %s (%s in the .socket unit)%s",
		    opt, spec, fd, what, opt, kind == SDFD_UNIX ?
		    "unix stream socket" : "TCP socket", kind == SDFD_UNIX ?
		    "ListenStream=/PATH" : "ListenStream=ADDR:PORT", acc == 0 &&
		    type == SOCK_STREAM ? "; a connection (Accept=yes) is "
		    "served as stdin: coil --mcp with StandardInput=socket" :
		    "");
	if (kind == SDFD_UNIX && !sdfd_has_path(fd))
		return err_set(err, len, "%s %s: the socket passed (fd %d) is "
		    "not bound to an absolute path (it is abstract, unnamed "
		    "or relative), and coil --attach is given one: set "
		    "ListenStream=/PATH in the .socket unit", opt, spec, fd);
	if (set_nonblock(fd, true) == -1)
		return err_set(err, len, "%s %s: fd %d: %s", opt, spec, fd,
		    strerror(errno));
	sdfd.taken[i] = true;
	return fd;
}
