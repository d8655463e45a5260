/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_tcp.c — SMB2 messages over a TCP socket (MS-SMB2 2.1), blocking calls
 * bounded by poll deadlines (see cf_tcp.h). */
#include "cf_tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sd_bytes.h"
#include "sd_clock.h"

#define HDR 4u

int cf_tcp_connect(const struct sockaddr *addr, socklen_t len, int timeout_ms)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err = 0;
    socklen_t elen = sizeof(err);

    if (fd < 0)
        return -errno;
    if (connect(fd, addr, len) < 0 && errno != EINPROGRESS)
        err = errno;
    else if (sd_poll_fd(fd, POLLOUT, sd_now_ms() + (uint64_t)timeout_ms) < 0)
        err = ETIMEDOUT;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
        err = errno;
    if (err) {
        close(fd);
        return -err;
    }
    return fd;
}

int cf_tcp_send(int fd, const void *msg, size_t len, int timeout_ms)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;
    uint8_t hdr[HDR];
    const uint8_t *p = msg;
    size_t off = 0;
    ssize_t n;

    if (len > CF_TCP_MAX_MSG)
        return -EMSGSIZE;
    sd_put_be32(hdr, (uint32_t)len);
    while (off < HDR + len) {
        const uint8_t *from = off < HDR ? hdr + off : p + (off - HDR);
        size_t left = off < HDR ? HDR - off : HDR + len - off;

        n = send(fd, from, left, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            if (sd_poll_fd(fd, POLLOUT, deadline) < 0)
                return -ETIMEDOUT;
            continue;
        }
        if (n < 0)
            return errno == EPIPE || errno == ECONNRESET ? -ENOTCONN : -errno;
        off += (size_t)n;
    }
    return 0;
}

/* Reads exactly len bytes before deadline: 0, or a negative errno. */
static int read_all(int fd, uint8_t *buf, size_t len, uint64_t deadline)
{
    size_t off = 0;
    ssize_t n;

    while (off < len) {
        n = recv(fd, buf + off, len - off, 0);
        if (n == 0)
            return -ENOTCONN;
        if (n < 0 && errno == ECONNRESET)
            return -ENOTCONN;
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -errno;
        if (n < 0 && sd_poll_fd(fd, POLLIN, deadline) < 0)
            return -ETIMEDOUT;
        if (n > 0)
            off += (size_t)n;
    }
    return 0;
}

int cf_tcp_recv(int fd, int timeout_ms, struct cf_msg **msg)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;
    uint8_t hdr[HDR];
    struct cf_msg *m;
    uint32_t len;
    int rc = read_all(fd, hdr, HDR, deadline);

    if (rc < 0)
        return rc;
    if (hdr[0] != 0)
        return -EPROTO;
    len = sd_be32(hdr);
    m = calloc(1, sizeof(*m) + len);
    if (!m)
        return -ENOMEM;
    m->len = len;
    rc = read_all(fd, m->data, len, deadline);
    if (rc < 0) {
        free(m);
        return rc;
    }
    *msg = m;
    return 0;
}
