/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_sockopt.c — TCP-looking socket options on tunneled fds. Values the
 * program sets at IPPROTO_TCP/IP/IPV6 level are remembered in the fd table and read
 * back; unset ones read as a fresh Linux TCP socket's defaults. SOL_SOCKET options go
 * to the socketpair end, which implements them, except the identity ones. */
#include "shim_sockopt.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "sd_libc.h"
#include "shim_fdtable.h"

struct shim_opt_default {
    int level, name, value;
};

/* Linux defaults (tcp(7), ip(7), ipv6(7)) for options a program may read back. */
static const struct shim_opt_default opt_defaults[] = {
    { IPPROTO_TCP, TCP_NODELAY, 0 },        { IPPROTO_TCP, TCP_MAXSEG, 1448 },
    { IPPROTO_TCP, TCP_CORK, 0 },           { IPPROTO_TCP, TCP_KEEPIDLE, 7200 },
    { IPPROTO_TCP, TCP_KEEPINTVL, 75 },     { IPPROTO_TCP, TCP_KEEPCNT, 9 },
    { IPPROTO_TCP, TCP_SYNCNT, 6 },         { IPPROTO_TCP, TCP_LINGER2, 60 },
    { IPPROTO_TCP, TCP_DEFER_ACCEPT, 0 },   { IPPROTO_TCP, TCP_QUICKACK, 1 },
    { IPPROTO_TCP, TCP_USER_TIMEOUT, 0 },   { IPPROTO_TCP, TCP_WINDOW_CLAMP, 0 },
    { IPPROTO_TCP, TCP_NOTSENT_LOWAT, 0 },  { IPPROTO_IP, IP_TOS, 0 },
    { IPPROTO_IP, IP_TTL, 64 },             { IPPROTO_IPV6, IPV6_TCLASS, 0 },
    { IPPROTO_IPV6, IPV6_UNICAST_HOPS, 64 }, { IPPROTO_IPV6, IPV6_V6ONLY, 0 },
};

/* The Linux default of an int option we emulate, or NULL for other options. */
static const struct shim_opt_default *find_default(int level, int name)
{
    for (size_t i = 0; i < sizeof(opt_defaults) / sizeof(opt_defaults[0]); i++)
        if (opt_defaults[i].level == level && opt_defaults[i].name == name)
            return &opt_defaults[i];
    return NULL;
}

static int is_inet_level(int level)
{
    return level == IPPROTO_TCP || level == IPPROTO_IP || level == IPPROTO_IPV6;
}

/* Copies an int option out like the kernel: at most *len bytes, *len updated. */
static int put_int(int value, void *val, socklen_t *len)
{
    socklen_t n;

    if (!len || (int)*len < 0) {
        errno = len ? EINVAL : EFAULT;
        return -1;
    }
    n = *len < sizeof(int) ? *len : sizeof(int);
    if (n && !val) {
        errno = EFAULT;
        return -1;
    }
    memcpy(val, &value, n);
    *len = n;
    return 0;
}

/* TCP_INFO of a connected socket with nothing measured. */
static int put_tcp_info(void *val, socklen_t *len)
{
    struct tcp_info ti;
    socklen_t n;

    if (!len || (int)*len < 0 || (*len && !val)) {
        errno = len && (int)*len < 0 ? EINVAL : EFAULT;
        return -1;
    }
    memset(&ti, 0, sizeof(ti));
    ti.tcpi_state = TCP_ESTABLISHED;
    n = *len < sizeof(ti) ? *len : sizeof(ti);
    memcpy(val, &ti, n);
    *len = n;
    return 0;
}

static int get_inet_level(int fd, int level, int name, void *val, socklen_t *len)
{
    int value;
    const struct shim_opt_default *d = find_default(level, name);

    if (level == IPPROTO_TCP && name == TCP_INFO)
        return put_tcp_info(val, len);
    if (!d) {
        errno = ENOPROTOOPT;
        return -1;
    }
    if (shim_fdtable_get_opt(fd, level, name, &value) == 0)
        return put_int(value, val, len);
    return put_int(d->value, val, len);
}

int shim_sockopt_get(int fd, int level, int name, void *val, socklen_t *len, int *rc)
{
    struct shim_fd_info info;
    int err;

    if (!shim_fdtable_lookup(fd, &info))
        return 0;
    if (is_inet_level(level)) {
        *rc = get_inet_level(fd, level, name, val, len);
        return 1;
    }
    if (level != SOL_SOCKET)
        return 0;
    switch (name) {
    case SO_DOMAIN: *rc = put_int(info.family, val, len); return 1;
    case SO_PROTOCOL: *rc = put_int(IPPROTO_TCP, val, len); return 1;
    case SO_TYPE: *rc = put_int(SOCK_STREAM, val, len); return 1;
    case SO_ERROR:
        /* A lost SMB Direct connection reads as the error a reset TCP socket has. */
        err = shim_fdtable_take_error(fd);
        if (err <= 0)
            return 0;
        *rc = put_int(err, val, len);
        return 1;
    default: return 0;
    }
}

int shim_sockopt_set(int fd, int level, int name, const void *val, socklen_t len, int *rc)
{
    int value;

    if (!is_inet_level(level) || !shim_fdtable_lookup(fd, NULL))
        return 0;
    *rc = -1;
    if (len > 0 && !val) {
        errno = EFAULT;
        return 1;
    }
    /* The int options we emulate are remembered; others (TCP_CONGESTION, IP_OPTIONS...)
     * have no meaning on the tunnel and are accepted as they are. */
    if (find_default(level, name)) {
        if (len < sizeof(int)) {
            errno = EINVAL; /* as tcp(7)/ip(7) do */
            return 1;
        }
        memcpy(&value, val, sizeof(int));
        shim_fdtable_set_opt(fd, level, name, value);
    }
    *rc = 0;
    return 1;
}

void shim_sockopt_carry(int from, int to)
{
    const struct sd_libc *libc = sd_libc();

    for (size_t i = 0; i < sizeof(opt_defaults) / sizeof(opt_defaults[0]); i++) {
        const struct shim_opt_default *d = &opt_defaults[i];
        int value;
        socklen_t len = sizeof(value);

        if (d->level == IPPROTO_TCP && d->name == TCP_MAXSEG)
            continue; /* measured on a connection, not chosen by the program */
        if (libc->getsockopt(from, d->level, d->name, &value, &len) == 0 &&
            len == sizeof(value) && value != d->value)
            shim_fdtable_set_opt(to, d->level, d->name, value);
    }
}
