/*
 * landlock-compat.h: the Landlock interface up to ABI 7, for headers that
 * stop earlier.
 *
 * Debian 12's linux-libc-dev (6.1) knows ABI 2 at most: one field in struct
 * landlock_ruleset_attr, no network rules, no scopes, no TRUNCATE or
 * IOCTL_DEV.  The kernel coil runs on may be much newer, so this header
 * carries the newer ABI itself.  It deliberately does not include
 * <linux/landlock.h>: the ruleset attribute grew two fields and the old
 * header's struct of the same name would be too short.  Everything here is
 * fixed by the kernel's UAPI and never changes meaning; what a given kernel
 * supports is found at run time with landlock_create_ruleset(...,
 * LANDLOCK_CREATE_RULESET_VERSION), never assumed from these definitions.
 *
 * Only sbx-landlock.c includes this file.
 */
#ifndef COIL_LANDLOCK_COMPAT_H
#define COIL_LANDLOCK_COMPAT_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The three syscalls have the same number on every architecture. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* Ruleset attribute: handled_access_net since ABI 4, scoped since ABI 6.
 * The kernel accepts a shorter size from older callers, so pass the size
 * that matches the ABI in use (see sbx-landlock.c). */
struct coil_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define COIL_LANDLOCK_ATTR_SIZE_V1 8	/* handled_access_fs only */
#define COIL_LANDLOCK_ATTR_SIZE_V4 16	/* + handled_access_net */
#define COIL_LANDLOCK_ATTR_SIZE_V6 24	/* + scoped */

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_CREATE_RULESET_ERRATA
#define LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#endif

/* Rule types; the old header has an enum with PATH_BENEATH only. */
#define COIL_LANDLOCK_RULE_PATH_BENEATH 1
#define COIL_LANDLOCK_RULE_NET_PORT 2	/* ABI 4 */

struct coil_landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct coil_landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

/* Filesystem rights.  ABI 1: bits 0-12; ABI 2: REFER; ABI 3: TRUNCATE;
 * ABI 5: IOCTL_DEV. */
#ifndef LANDLOCK_ACCESS_FS_EXECUTE
#define LANDLOCK_ACCESS_FS_EXECUTE	(1ULL << 0)
#define LANDLOCK_ACCESS_FS_WRITE_FILE	(1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE	(1ULL << 2)
#define LANDLOCK_ACCESS_FS_READ_DIR	(1ULL << 3)
#define LANDLOCK_ACCESS_FS_REMOVE_DIR	(1ULL << 4)
#define LANDLOCK_ACCESS_FS_REMOVE_FILE	(1ULL << 5)
#define LANDLOCK_ACCESS_FS_MAKE_CHAR	(1ULL << 6)
#define LANDLOCK_ACCESS_FS_MAKE_DIR	(1ULL << 7)
#define LANDLOCK_ACCESS_FS_MAKE_REG	(1ULL << 8)
#define LANDLOCK_ACCESS_FS_MAKE_SOCK	(1ULL << 9)
#define LANDLOCK_ACCESS_FS_MAKE_FIFO	(1ULL << 10)
#define LANDLOCK_ACCESS_FS_MAKE_BLOCK	(1ULL << 11)
#define LANDLOCK_ACCESS_FS_MAKE_SYM	(1ULL << 12)
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)
#endif

/* Network rights, ABI 4. */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP	(1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP	(1ULL << 1)
#endif

/* Scopes, ABI 6: the domain may not reach abstract unix sockets or signal
 * processes outside itself. */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL		(1ULL << 1)
#endif

/* landlock_restrict_self() flags, ABI 7: audit logging of denials.  coil
 * keeps the kernel's defaults (log denials of the sandboxed program itself)
 * and does not pass these; they are here so the header is complete. */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON	(1U << 1)
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif

/* Filesystem rights per ABI, lowest first: index = ABI - 1. */
static const uint64_t coil_landlock_fs_by_abi[] = {
	(1ULL << 13) - 1,	/* 1 */
	(1ULL << 14) - 1,	/* 2: REFER */
	(1ULL << 15) - 1,	/* 3: TRUNCATE */
	(1ULL << 15) - 1,	/* 4: network, no new fs right */
	(1ULL << 16) - 1,	/* 5: IOCTL_DEV */
	(1ULL << 16) - 1,	/* 6: scopes */
	(1ULL << 16) - 1,	/* 7: logging flags */
};
#define COIL_LANDLOCK_ABI_KNOWN 7

static inline int
coil_landlock_create_ruleset(const struct coil_landlock_ruleset_attr *attr,
    size_t size, uint32_t flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int
coil_landlock_add_rule(int ruleset_fd, int rule_type, const void *attr,
    uint32_t flags)
{
	return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, attr,
	    flags);
}

static inline int
coil_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

/* The running kernel's ABI: >= 1, or -1 with errno (ENOSYS: not built in,
 * EOPNOTSUPP: built in but disabled at boot). */
static inline int
coil_landlock_abi(void)
{
	return coil_landlock_create_ruleset(NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
}

#endif /* COIL_LANDLOCK_COMPAT_H */
