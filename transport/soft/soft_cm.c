/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_cm.c — soft-iWARP active connection setup over TCP: connect and
 * the MPA request/reply exchange (RFC 5044 7.1) under one deadline; plus what the
 * passive side shares with it: the socket options the data path wants and the
 * negotiation result. */
#include "soft_cm.h"
#include "soft_mpa.h"
#include "soft_qp.h"
#include "log.h"
#include "sd_clock.h"
#include "sd_libc.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

/* Sends all n bytes before the deadline (UINT64_MAX: none): 0, or -ETIMEDOUT/-errno. */
static int send_all(int fd, const uint8_t *p, size_t n, uint64_t deadline)
{
    while (n) {
        ssize_t w = sd_libc()->send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        int r = sd_poll_fd(fd, POLLOUT, deadline);
        if (r)
            return r;
    }
    return 0;
}

/* Reads exactly n bytes (never more: FPDUs may follow the MPA frame). */
static int recv_exact(int fd, uint8_t *p, size_t n, uint64_t deadline)
{
    while (n) {
        ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0)
            return -ECONNRESET;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        int w = sd_poll_fd(fd, POLLIN, deadline);
        if (w)
            return w;
    }
    return 0;
}

/* Reads the MPA reply frame into buf; returns its length or -errno. */
static int read_reply(int fd, uint8_t buf[SD_SOFT_MPA_FRAME_MAX], uint64_t deadline)
{
    int r = recv_exact(fd, buf, MPA_RR_HDR_LEN, deadline);
    if (r)
        return r;
    int pd_len = sd_soft_mpa_parse_hdr(buf, 1);
    if (pd_len < 0) {
        sd_warn("soft-iWARP: peer sent no valid MPA reply frame");
        return pd_len;
    }
    r = recv_exact(fd, buf + MPA_RR_HDR_LEN, (size_t)pd_len, deadline);
    return r ? r : MPA_RR_HDR_LEN + pd_len;
}

/* TCP_NODELAY as siw (FPDUs are whole messages); keepalive-free; the kernel's buffer
 * autotuning gives loopback and LAN links enough window. */
void sd_soft_tune_socket(int fd)
{
    int one = 1;
    if (sd_libc()->setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        sd_debug("soft-iWARP: TCP_NODELAY: %s", strerror(errno));
}

void sd_soft_fill_result(int fd, const struct sd_soft_mpa_result *neg, struct sd_cm_result *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    out->ird = neg->ird;
    out->ord = neg->ord;
    out->peer_legacy_le_header = neg->legacy_le;
    out->peer_private_data_len = neg->app_pd_len;
    if (neg->app_pd_len)
        memcpy(out->peer_private_data, neg->app_pd, neg->app_pd_len);
    socklen_t l = sizeof(out->local);
    sd_libc()->getsockname(fd, (struct sockaddr *)&out->local, &l);
    l = sizeof(out->peer);
    sd_libc()->getpeername(fd, (struct sockaddr *)&out->peer, &l);
}

static struct sd_qp *fail(int fd, int *err, int e)
{
    if (fd >= 0)
        close(fd);
    if (err)
        *err = e;
    return NULL;
}

static uint64_t deadline_of(int timeout_ms)
{
    return timeout_ms < 0 ? UINT64_MAX : sd_now_ms() + (uint64_t)timeout_ms;
}

struct sd_qp *sd_soft_connect(const struct sockaddr *addr, socklen_t addrlen,
                              const struct sd_cm_params *params, int timeout_ms,
                              struct sd_cm_result *result, int *err)
{
    uint64_t deadline = deadline_of(timeout_ms);
    if (!addr || !params)
        return fail(-1, err, -EINVAL);
    uint8_t frame[SD_SOFT_MPA_FRAME_MAX];
    int flen = sd_soft_mpa_build_request(params, params->want_crc, frame, sizeof(frame));
    if (flen < 0)
        return fail(-1, err, flen);
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(-1, err, -errno);
    if (sd_libc()->connect(fd, addr, addrlen) != 0) {
        if (errno != EINPROGRESS)
            return fail(fd, err, -errno);
        int r = sd_poll_fd(fd, POLLOUT, deadline);
        if (r)
            return fail(fd, err, r);
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        sd_libc()->getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (soerr)
            return fail(fd, err, -soerr);
    }
    sd_soft_tune_socket(fd);
    int r = send_all(fd, frame, (size_t)flen, deadline);
    if (r)
        return fail(fd, err, r);
    int rlen = read_reply(fd, frame, deadline);
    if (rlen < 0) {
        if (rlen == -ETIMEDOUT)
            sd_warn("soft-iWARP: no MPA reply within %d ms", timeout_ms);
        return fail(fd, err, rlen);
    }
    struct sd_soft_mpa_result neg;
    r = sd_soft_mpa_check_reply(frame, (size_t)rlen, params, params->want_crc, &neg);
    if (r)
        return fail(fd, err, r);
    struct sd_qp *qp = sd_soft_qp_create(fd, 0, neg.crc, neg.ird, neg.ord);
    if (!qp)
        return fail(fd, err, -ENOMEM);
    sd_soft_fill_result(fd, &neg, result);
    return qp;
}
