/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_tunnel.c — decides at connect() whether to tunnel (an SMB port, a TCP
 * socket), dials SMB Direct synchronously (a non-blocking connect() still returns 0 or
 * the real error at once), swaps the program's fd for a socketpair end (so every later
 * read, write, poll and close of the program works on a real kernel fd; see
 * docs/ARCHITECTURE.md "File descriptors in the program's fd space") and hands the
 * other end to the engine; on failure falls back to TCP (to the address the program
 * asked for) or fails with the real error per SMBDIRECT_FALLBACK. SMBDIRECT_ADDRMAP
 * may send the dial to another address: the server's RDMA interface. */
#include "shim_tunnel.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "sd_addr.h"
#include "sd_libc.h"
#include "sd_version.h"
#include "shim_config.h"
#include "shim_engine.h"
#include "shim_epoll.h"
#include "shim_fdtable.h"
#include "shim_guard.h"
#include "shim_sockopt.h"
#include "smbd_link.h"


/* The inet port of addr when it is a complete AF_INET/AF_INET6 address, else 0. */
static unsigned inet_port(const struct sockaddr *addr, socklen_t len)
{
    if (!addr || len < (socklen_t)sizeof(sa_family_t))
        return 0;
    if (addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in))
        return ntohs(((const struct sockaddr_in *)addr)->sin_port);
    if (addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6))
        return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
    return 0;
}

static socklen_t inet_len(int family)
{
    return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

static void set_inet_port(struct sockaddr_storage *ss, unsigned port)
{
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

/* A fresh, unconnected TCP stream socket: the only kind we tunnel. A socket already
 * connected or connecting is left to the kernel (EISCONN, EALREADY...). */
static int is_fresh_tcp_socket(int fd)
{
    const struct sd_libc *libc = sd_libc();
    int type = 0, proto = 0;
    socklen_t l = sizeof(type);
    struct tcp_info ti;

    if (libc->getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM)
        return 0;
    l = sizeof(proto);
    if (libc->getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0 || proto != IPPROTO_TCP)
        return 0;
    l = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    if (libc->getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0 || ti.tcpi_state != TCP_CLOSE)
        return 0;
    return 1;
}

static const struct sd_provider_ops *chosen_provider;
static pthread_once_t provider_once = PTHREAD_ONCE_INIT;

static void choose_provider(void)
{
    shim_guard_enter(); /* rdma-core's device scan must not come back here */
    chosen_provider = sd_settings_provider(shim_config_get()->set.transport);
    shim_guard_leave();
    /* the shim's first line of a process at debug: which build, on what */
    sd_debug("libsmbdirect %s: SMB Direct provider: %s", sd_version(), chosen_provider->name);
}

/* The provider for dst and whether it is iWARP (sd_settings_reach: in auto mode a
 * verbs device that does not reach dst leaves the connection to soft-iWARP). 0 or
 * -errno. */
static int pick_provider(const struct sockaddr *dst, socklen_t len,
                         const struct sd_provider_ops **out, int *is_iwarp)
{
    pthread_once(&provider_once, choose_provider);
    return sd_settings_reach(shim_config_get()->set.transport, chosen_provider, dst, len, out,
                             is_iwarp);
}

struct dial_result {
    struct smbd_link *link;
    unsigned rdma_port;
    const char *provider;
    char via[SD_ADDR_STRLEN + 32]; /* " via ADDR:PORT (address map)", or "" */
    char why[200];
};

/* RDMA connect + MS-SMBD negotiate to addr's host, or to its RDMA address in the
 * address map, on the mapped port (the address map's, else the port map's). The
 * provider is the one that reaches the address dialled. 0 or -errno. */
static int dial(const struct shim_config *cfg, const struct sockaddr *addr, socklen_t len,
                struct dial_result *res)
{
    const struct am_entry *mapped = am_find(&cfg->set.addrmap, addr);
    unsigned tcp_port = inet_port(addr, len);
    struct sockaddr_storage dst;
    struct smbd_link_opts o = cfg->link;
    char where[SD_ADDR_STRLEN];
    socklen_t dlen;
    int is_iwarp = 0, rc;

    memset(&dst, 0, sizeof(dst));
    if (mapped) {
        dlen = am_dest(mapped, (uint16_t)tcp_port, &dst);
    } else {
        dlen = inet_len(addr->sa_family);
        memcpy(&dst, addr, dlen);
    }
    shim_guard_enter(); /* safety net: connects by libraries under the provider pass through */
    rc = pick_provider((struct sockaddr *)&dst, dlen, &o.provider, &is_iwarp);
    res->provider = rc == 0 ? o.provider->name : "none";
    res->rdma_port = mapped && mapped->port
                         ? mapped->port
                         : pm_rdma_port(&cfg->set.portmap, (uint16_t)tcp_port, is_iwarp);
    set_inet_port(&dst, res->rdma_port);
    if (mapped)
        snprintf(res->via, sizeof(res->via), " via %s (address map)",
                 sd_addr_format((struct sockaddr *)&dst, where, sizeof(where)));
    if (rc < 0) {
        snprintf(res->why, sizeof(res->why), "no RDMA device reaches the server");
    } else {
        o.smbd_ird_ord_header = is_iwarp; /* MS-SMBD Appendix A: iWARP only */
        rc = smbd_link_dial((struct sockaddr *)&dst, dlen, &o, &res->link, res->why,
                            sizeof(res->why));
    }
    shim_guard_leave();
    return rc;
}

/* Big buffers on both ends: the socketpair is the only copy between the program and
 * the engine, and throughput follows how much it can hold. */
static void grow_buffers(int fd, int bytes)
{
    const struct sd_libc *libc = sd_libc();

    if (libc->setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)) < 0)
        libc->setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
    if (libc->setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0)
        libc->setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

/* Socket options the program may have set before connect() that change how its
 * reads and writes behave; they move with it to its new socket. */
static void carry_socket_options(int from, int to)
{
    static const int names[] = { SO_RCVTIMEO, SO_SNDTIMEO, SO_LINGER, SO_KEEPALIVE };
    const struct sd_libc *libc = sd_libc();
    char val[sizeof(struct timeval) > sizeof(struct linger) ? sizeof(struct timeval)
                                                            : sizeof(struct linger)];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        socklen_t l = sizeof(val);
        if (libc->getsockopt(from, SOL_SOCKET, names[i], val, &l) == 0)
            libc->setsockopt(to, SOL_SOCKET, names[i], val, l);
    }
}

static void describe_local(int fd, struct smbd_link *link, int family, struct shim_fd_info *in)
{
    const struct sd_cm_result *cm = smbd_link_cm(link);
    const struct sd_libc *libc = sd_libc();
    socklen_t l = sizeof(in->local);

    in->local_len = inet_len(family);
    if (cm && cm->local.ss_family == family) {
        memcpy(&in->local, &cm->local, in->local_len);
    } else if (libc->getsockname(fd, (struct sockaddr *)&in->local, &l) < 0 ||
               in->local.ss_family != family) {
        memset(&in->local, 0, sizeof(in->local));
        in->local.ss_family = (sa_family_t)family;
    }
}

static void describe_io_limits(struct smbd_link *link, const struct shim_config *cfg,
                              struct shim_iosize_limits *io)
{
    struct smbd_params p;

    memset(&p, 0, sizeof(p));
    smbd_conn_query(smbd_link_conn(link), &p);
    io->peer_max_fragmented = p.neg.max_fragmented_send_size;
    io->own_max_fragmented = p.neg.max_fragmented_recv_size;
    io->max_read_write = p.neg.max_read_write_size;
    io->channel_threshold = cfg->set.rdma_threshold;
    io->channel_io_size = cfg->set.channel_io_size;
    io->inline_only = 0;
    /* Where registered memory is budgeted (RLIMIT_MEMLOCK), one I/O registers at most
     * what the link reserved for it, and a message the program sends inline must fit
     * the send buffers the connection can always have. */
    if (smbd_link_io_limit(link) != UINT32_MAX) {
        size_t can_send = smbd_conn_send_capacity(smbd_link_conn(link));

        if (smbd_link_io_limit(link) < io->channel_io_size)
            io->channel_io_size = smbd_link_io_limit(link);
        if (can_send < io->peer_max_fragmented)
            io->peer_max_fragmented = (uint32_t)can_send;
    }
}

/* Swaps the program's fd for a socketpair end bridged to link. Consumes link.
 * 0 or -errno (the program's fd is then unchanged only if the swap did not happen). */
static int swap_in_tunnel(int fd, const struct shim_config *cfg, const struct sockaddr *addr,
                          struct smbd_link *link)
{
    struct shim_fd_info info;
    struct shim_fd_key key, old_key;
    int sv[2], status = fcntl(fd, F_GETFL), fdflags = fcntl(fd, F_GETFD), rc;
    struct shim_epoll_reg regs[SHIM_EPOLL_MAX_REGS];
    int nregs = shim_fd_key_of(fd, &old_key) == 0
                    ? shim_epoll_find(fd, &old_key, regs, SHIM_EPOLL_MAX_REGS) : 0;

    memset(&key, 0, sizeof(key));
    rc = (status < 0 || fdflags < 0) ? -errno : shim_engine_ensure();
    if (rc == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        rc = -errno;
    if (rc < 0) {
        smbd_link_free(link);
        return rc;
    }
    memset(&info, 0, sizeof(info));
    info.family = addr->sa_family;
    info.peer_len = inet_len(addr->sa_family);
    memcpy(&info.peer, addr, info.peer_len);
    info.status_flags = status;
    info.fd_flags = fdflags;
    describe_local(fd, link, info.family, &info);
    describe_io_limits(link, cfg, &info.io);
    grow_buffers(sv[0], (int)cfg->set.sockbuf);
    grow_buffers(sv[1], (int)cfg->set.sockbuf);
    carry_socket_options(fd, sv[0]);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    /* sv[0] and the fd it becomes are one socket: one key before and after dup3. */
    if (shim_fd_key_of(sv[0], &key) < 0 || (rc = shim_fdtable_add(sv[0], sv[1], &info)) < 0) {
        rc = rc < 0 ? rc : -errno;
        goto fail;
    }
    shim_sockopt_carry(fd, sv[0]);
    if (((status & O_NONBLOCK) && fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0) ||
        dup3(sv[0], fd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
        rc = -errno;
        shim_fdtable_tunnel_ended(&key, 0);
        goto fail;
    }
    close(sv[0]);
    /* The fd is swapped: from here the program talks to the engine or sees EOF. Its
     * epoll registrations went with the old socket: made again on the new end. */
    if (nregs > 0 && shim_epoll_restore(fd, regs, nregs) < nregs)
        sd_warn("fd %d: an epoll registration made before connect() could not be made again "
                "on the tunnel", fd);
    if ((rc = shim_engine_attach(link, sv[1], &key)) < 0) {
        sd_error("fd %d: cannot hand the tunnel to the engine: %s", fd, strerror(-rc));
        shim_fdtable_tunnel_ended(&key, -ECONNRESET);
    }
    return 0;
fail:
    close(sv[0]);
    close(sv[1]);
    smbd_link_free(link);
    return rc;
}

/* The program asked for TCP to addr and SMB Direct did not work out. */
static int fall_back(int fd, const struct shim_config *cfg, const struct sockaddr *addr,
                     socklen_t len, const struct dial_result *res, int err)
{
    char where[SD_ADDR_STRLEN], reason[400];
    const char *what = strerror(-err);
    int said = strstr(res->why, what) != NULL; /* the dial's reason may name it already */

    sd_addr_format(addr, where, sizeof(where));
    snprintf(reason, sizeof(reason), "SMB Direct to %s (%s, port %u)%s failed: %s%s%s", where,
             res->provider, res->rdma_port, res->via, res->why,
             said || !res->why[0] ? "" : ": ", said ? "" : what);
    if (cfg->set.fallback == SD_FALLBACK_TCP) {
        sd_warn("%s; using TCP instead (SMBDIRECT_FALLBACK=tcp)", reason);
        return sd_libc()->connect(fd, addr, len);
    }
    sd_error("%s; connect() fails (SMBDIRECT_FALLBACK=none)", reason);
    errno = -err;
    return -1;
}

int shim_tunnel_connect(int fd, const struct sockaddr *addr, socklen_t len, int *rc)
{
    const struct shim_config *cfg;
    struct dial_result res;
    unsigned port;
    int saved = errno, err;
    char where[SD_ADDR_STRLEN];

    if (shim_guard_active())
        return 0;
    if (shim_fdtable_lookup(fd, NULL)) {
        errno = EISCONN;
        *rc = -1;
        return 1;
    }
    port = inet_port(addr, len);
    if (port == 0)
        return 0;
    cfg = shim_config_get();
    if ((cfg->valid && cfg->set.transport == SD_TRANSPORT_TCP) ||
        !pm_ports_contains(&cfg->set.ports, (uint16_t)port) || !is_fresh_tcp_socket(fd)) {
        errno = saved;
        return 0;
    }
    *rc = -1;
    if (!cfg->valid) {
        sd_error("connect() to port %u fails with EINVAL: %s", port, cfg->report.error);
        errno = EINVAL;
        return 1;
    }
    memset(&res, 0, sizeof(res));
    err = dial(cfg, addr, len, &res);
    if (err == 0) {
        sd_addr_format(addr, where, sizeof(where));
        err = swap_in_tunnel(fd, cfg, addr, res.link);
        if (err == 0) {
            sd_info("fd %d: %s tunneled over SMB Direct (%s, port %u)%s", fd, where,
                    res.provider, res.rdma_port, res.via);
            errno = saved;
            *rc = 0;
            return 1;
        }
        snprintf(res.why, sizeof(res.why), "local setup of the tunnel failed");
    }
    *rc = fall_back(fd, cfg, addr, len, &res, err);
    return 1;
}
