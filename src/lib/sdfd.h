/*
 * sdfd.h - the sockets systemd passes a service (socket activation,
 * sd_listen_fds(3)'s protocol), read without libsystemd.
 *
 * systemd (and systemd-socket-activate) starts coil with the sockets of
 * its .socket unit open from fd 3 on: LISTEN_FDS says how many,
 * LISTEN_PID that they are for this process (a variable inherited from
 * a parent names the parent), LISTEN_FDNAMES names them (FileDescriptor
 * Name=, colon-separated).  sdfd_init reads the three once, at the
 * start of main, marks the sockets close-on-exec and unsets the
 * variables, so that no process coil starts (the worker, a cell's
 * programs) believes they are its own.  --listen systemd and --http
 * systemd then take one (sdfd_take): "systemd" the only one passed,
 * "systemd:NAME" the one of that name.
 *
 * Per-connection activation (Accept=yes, StandardInput=socket) needs
 * none of this: the connection is coil's stdin and stdout.
 *
 * Supervisor only, single-threaded.
 */
#ifndef COIL_SDFD_H
#define COIL_SDFD_H

#include <stdbool.h>
#include <stddef.h>

/* What the socket taken must be. */
enum sdfd_kind {
	SDFD_UNIX,	/* a unix stream socket bound to a path (--listen) */
	SDFD_INET,	/* a TCP socket, IPv4 or IPv6 (--http) */
};

/* Read LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES, mark the sockets
 * that are this process's close-on-exec, unset the three.  Once. */
void sdfd_init(void);

/* Whether an option's value asks for a passed socket: "systemd" or
 * "systemd:NAME". */
bool sdfd_spec(const char *value);

/* The passed socket spec names (see above), checked to be a listening
 * stream socket of kind, made non-blocking: its descriptor, which the
 * caller owns from now on, or -1 with err saying what was passed
 * instead and what to do.  opt names the option in messages. */
int sdfd_take(const char *spec, enum sdfd_kind kind, const char *opt,
    char *err, size_t len);

#endif
