/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_fdtable.h — the table of tunneled fds. An entry is keyed by the
 * (st_dev, st_ino) of the program's socketpair end and every lookup fstat()s the fd,
 * so a close the shim never saw (close_range, closefrom, exec, dup2 over it) can never
 * make another socket look tunneled; dup'ed copies and fork children see the entry. */
#ifndef SMBDIRECT_SHIM_FDTABLE_H
#define SMBDIRECT_SHIM_FDTABLE_H

#include <sys/socket.h>
#include <sys/types.h>

#include "shim_iosize.h"

struct shim_fd_key {
    dev_t dev;
    ino_t ino;
};

/* LOST entries kept for fds the program has not closed yet; the oldest goes first. */
#define SHIM_FDTABLE_MAX_LOST 256
/* TCP/IP-level options remembered per tunnel (more than shim_sockopt.c emulates). */
#define SHIM_FDTABLE_MAX_OPTS 24

enum shim_fd_state {
    SHIM_FD_CONNECTED, /* the engine is bridging it */
    SHIM_FD_LOST,      /* the SMB Direct connection ended under the program */
};

/* What the program believes the socket is. */
struct shim_fd_info {
    int family;                      /* AF_INET or AF_INET6 */
    struct sockaddr_storage peer;    /* the address the program connected to */
    socklen_t peer_len;
    struct sockaddr_storage local;   /* a plausible local inet address */
    socklen_t local_len;
    int status_flags;                /* O_NONBLOCK... at connect() */
    int fd_flags;                    /* FD_CLOEXEC at connect() */
    enum shim_fd_state state;
    int pending_error;               /* reported once by SO_ERROR (errno value) */
    struct shim_iosize_limits io;    /* how large the program's SMB2 READ/WRITE may be */
};

/* 1 and a copy in *out when a CONNECTED tunnel has exactly these local and peer inet
 * addresses (what getsockname/getpeername answer for it), else 0. */
int shim_fdtable_find_by_names(const struct sockaddr_storage *local,
                               const struct sockaddr_storage *peer, struct shim_fd_info *out);

/* The engine learnt that the tunnel's READ/WRITE go inline from now on (io.inline_only). */
void shim_fdtable_set_inline_only(const struct shim_fd_key *key);

/* The key of fd (an open socket), or -1 with errno set. */
int shim_fd_key_of(int fd, struct shim_fd_key *key);

/* Adds fd (already the program's socketpair end). engine_fd is the engine's end,
 * closed in fork children (-1: none). 0 or -ENOMEM/-errno. */
int shim_fdtable_add(int fd, int engine_fd, const struct shim_fd_info *info);

/* 1 and a copy in *out (may be NULL) when fd is tunneled, else 0. Cheap when
 * nothing is tunneled (no syscall). */
int shim_fdtable_lookup(int fd, struct shim_fd_info *out);

/* 1 and fd's key in *key when fd is a CONNECTED tunnel, else 0. Cheap when nothing is
 * tunneled (no syscall); errno is kept. */
int shim_fdtable_connected(int fd, struct shim_fd_key *key);

/* The SO_ERROR of a tunneled fd: its pending error (then cleared), else 0. -1 when
 * fd is not tunneled. */
int shim_fdtable_take_error(int fd);

/* Socket options the program set at TCP/IP level (which AF_UNIX would reject):
 * remembered per tunnel so getsockopt reads them back. set: 0 or -ENOSPC/-ENOENT;
 * get: 0 with *value, or -ENOENT when never set (or fd not tunneled). */
int shim_fdtable_set_opt(int fd, int level, int name, int value);
int shim_fdtable_get_opt(int fd, int level, int name, int *value);

/* The engine reports the end of a tunnel: err 0 (the program closed every copy of its
 * end) drops the entry; otherwise the entry stays, LOST, with err as pending SO_ERROR. */
void shim_fdtable_tunnel_ended(const struct shim_fd_key *key, int err);

/* Number of entries (tests, logs). */
int shim_fdtable_count(void);

/* fork() support: prepare/parent keep the table consistent; child also closes the
 * parent engine's ends of the socketpairs (the parent's engine keeps serving them). */
void shim_fdtable_atfork_prepare(void);
void shim_fdtable_atfork_parent(void);
void shim_fdtable_atfork_child(void);

/* Drops every entry (tests). */
void shim_fdtable_clear(void);

#endif
