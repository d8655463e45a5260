/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_epoll.h — epoll registrations made on a TCP socket before connect()
 * survive the swap. The tunnel puts a socketpair end in place of the program's socket
 * (dup3 onto the same fd number), a different open file: the kernel drops the epoll
 * registrations of the old one with it. Just before the swap, the process's epoll
 * instances are read (/proc/self/fdinfo lists each registration: target fd, events,
 * data, inode) for those of this socket; just after, each is made again on the new end
 * with the same events and data. Nothing is tracked between connects, and nothing is
 * read for a program that registers nothing. */
#ifndef SMBDIRECT_SHIM_EPOLL_H
#define SMBDIRECT_SHIM_EPOLL_H

#include <sys/epoll.h>

#include "shim_fdtable.h"

/* One registration of the socket in one epoll instance. */
struct shim_epoll_reg {
    int epfd;
    struct epoll_event ev;
};

#define SHIM_EPOLL_MAX_REGS 16 /* epoll instances one socket may be carried into */

/* Before the swap: the registrations of fd (its socket is sock_key) in this process's
 * epoll instances, at most max; returns how many. */
int shim_epoll_find(int fd, const struct shim_fd_key *sock_key, struct shim_epoll_reg *out,
                    int max);

/* After the swap: registers fd again in each instance with the same events and data.
 * Returns how many were made. */
int shim_epoll_restore(int fd, const struct shim_epoll_reg *regs, int n);

#endif
