/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_notify.h — systemd's service notification protocol (sd_notify(3)),
 * without libsystemd: one datagram of "NAME=VALUE" lines per message to the AF_UNIX
 * socket $NOTIFY_SOCKET names (a path, or "@name" in the abstract namespace), which
 * systemd sets for a Type=notify service. No I/O but the socket's. */
#ifndef SMBDIRECT_RELAY_NOTIFY_H
#define SMBDIRECT_RELAY_NOTIFY_H

#include <sys/socket.h>
#include <sys/un.h>

struct relay_notify {
    int fd;                  /* -1: off (no socket named) */
    struct sockaddr_un addr; /* where each message goes */
    socklen_t addr_len;
};

/* Sets n up for the socket named by path ($NOTIFY_SOCKET's value): NULL or "" turns
 * notifications off (0, every send does nothing). -EINVAL for a name that is neither
 * an absolute path nor "@..." or does not fit, -errno when no socket can be made; n
 * is then off. */
int relay_notify_open(struct relay_notify *n, const char *path);
/* Sends one message ("READY=1", "STATUS=...", several separated by '\n'), at most
 * 1 KiB. 0 (or off), -errno. */
int relay_notify_send(const struct relay_notify *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void relay_notify_close(struct relay_notify *n);

#endif
