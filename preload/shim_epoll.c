/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_epoll.c — finding a socket's epoll registrations in /proc/self/fdinfo
 * and making them again after the swap (see shim_epoll.h). */
#include "shim_epoll.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 when fd n of this process is an epoll instance. */
static int is_epoll(int n)
{
    char path[64], target[64];
    ssize_t len;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", n);
    len = readlink(path, target, sizeof(target) - 1);
    if (len < 0)
        return 0;
    target[len] = '\0';
    return strcmp(target, "anon_inode:[eventpoll]") == 0;
}

/* Adds epfd's registrations of (fd, ino) to out; fdinfo lines read
 * "tfd: FD events: HEX data: HEX pos:N ino:HEX sdev:HEX" (Linux >= 3.8). */
static int scan_instance(int epfd, int fd, unsigned long ino, struct shim_epoll_reg *out,
                         int n, int max)
{
    char path[64], line[256];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
    if (!(f = fopen(path, "re")))
        return n;
    while (n < max && fgets(line, sizeof(line), f)) {
        int tfd;
        unsigned events;
        uint64_t data;
        unsigned long tino;

        if (sscanf(line, "tfd: %d events: %x data: %" SCNx64 " pos:%*d ino:%lx", &tfd, &events,
                   &data, &tino) == 4 &&
            tfd == fd && tino == ino) {
            out[n].epfd = epfd;
            out[n].ev.events = events;
            out[n].ev.data.u64 = data;
            n++;
        }
    }
    fclose(f);
    return n;
}

int shim_epoll_find(int fd, const struct shim_fd_key *sock_key, struct shim_epoll_reg *out,
                    int max)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0, saved = errno;

    if (!d)
        return 0; /* no /proc: registrations made before connect() cannot be carried */
    while (n < max && (e = readdir(d)) != NULL) {
        char *end;
        long epfd = strtol(e->d_name, &end, 10);

        if (*end != '\0' || end == e->d_name || epfd == dirfd(d) || epfd == fd ||
            !is_epoll((int)epfd))
            continue;
        n = scan_instance((int)epfd, fd, (unsigned long)sock_key->ino, out, n, max);
    }
    closedir(d);
    errno = saved;
    return n;
}

int shim_epoll_restore(int fd, const struct shim_epoll_reg *regs, int n)
{
    int made = 0, saved = errno;

    for (int i = 0; i < n; i++) {
        struct epoll_event ev = regs[i].ev;

        if (epoll_ctl(regs[i].epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
            made++;
    }
    errno = saved;
    return made;
}
