/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_notify.c — sd_notify(3)'s protocol (relay_notify.h): each message
 * one datagram, sent to the address $NOTIFY_SOCKET names; systemd learns the sender's
 * PID from the socket's credentials (its socket asks for them), so nothing else is
 * attached. */
#include "relay_notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NOTIFY_MAX 1024

int relay_notify_open(struct relay_notify *n, const char *path)
{
    size_t len = path ? strlen(path) : 0;

    memset(n, 0, sizeof(*n));
    n->fd = -1;
    if (len == 0)
        return 0;
    if ((path[0] != '/' && path[0] != '@') || len < 2 || len > sizeof(n->addr.sun_path))
        return -EINVAL;
    n->addr.sun_family = AF_UNIX;
    memcpy(n->addr.sun_path, path, len);
    if (path[0] == '@')
        n->addr.sun_path[0] = '\0'; /* abstract: the name is the bytes after the NUL */
    n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    return n->fd < 0 ? -errno : 0;
}

int relay_notify_send(const struct relay_notify *n, const char *fmt, ...)
{
    char msg[NOTIFY_MAX];
    va_list ap;
    int len;

    if (n->fd < 0)
        return 0;
    va_start(ap, fmt);
    len = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (len < 0 || len >= (int)sizeof(msg))
        return -EMSGSIZE;
    for (;;) {
        if (sendto(n->fd, msg, (size_t)len, MSG_NOSIGNAL, (const struct sockaddr *)&n->addr,
                   n->addr_len) == len)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

void relay_notify_close(struct relay_notify *n)
{
    if (n->fd >= 0)
        close(n->fd);
    n->fd = -1;
}
