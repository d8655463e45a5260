/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/tools/hostile_smbd.c — a test-only SMB Direct server that misbehaves on purpose
 * (issue 12: the client role against a hostile server). It listens with the soft-iWARP
 * provider, accepts one connection after another, and breaks MS-SMBD in the one way
 * --mode names: a bad Negotiate Response, or after a good one a malformed Data Transfer,
 * credits withheld, keepalives unanswered, a message cut by a disconnect or an RDMAP
 * Terminate, or garbage bytes on the TCP stream under MPA (or, on a plain TCP listener,
 * in place of the MPA reply). Built into build/tests, never
 * installed; tests/bats/shim_hostile.bats runs a program under the shim against it.
 *
 *   hostile-smbd --listen 127.0.0.1:PORT --mode NAME      (--list: the modes)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwarp_wire.h"
#include "provider.h"
#include "sd_addr.h"
#include "sd_bytes.h"
#include "sd_clock.h"
#include "smbd_wire.h"

#define NRECV 16
#define RECV_SIZE 8192u
#define SEND_SIZE 65536u
#define WAIT_MS 10000
#define LINGER_MS 30000 /* how long a connection may take to end after the misdeed */

struct hs {
    const struct sd_provider_ops *ops;
    struct sd_qp *qp;
    uint8_t recv_mem[NRECV][RECV_SIZE];
    uint8_t send_mem[SEND_SIZE];
    struct sd_mr recv_mr, send_mr;
    uint32_t received;          /* messages received */
    uint32_t last_len;          /* the last one's length and slot */
    uint32_t last_slot;
    struct smbd_negotiate_req req; /* the client's Negotiate Request */
    int lost;
};

/* What a mode does: changes to the good Negotiate Response, then (when it gets that
 * far) its misdeed once the client has sent its first Data Transfer. */
struct mode {
    const char *name;
    const char *what;
    void (*negotiate)(struct smbd_negotiate_resp *r, size_t *len);
    int (*act)(struct hs *h);   /* NULL: nothing after the Negotiate Response */
    int (*raw)(int fd);         /* set: plain TCP instead, this on each accepted socket */
};

/* ---- provider plumbing ---- */

static int post_recv(struct hs *h, uint32_t i)
{
    struct sd_sge sge = { h->recv_mem[i], RECV_SIZE, &h->recv_mr };

    return h->ops->post_recv(h->qp, i, &sge);
}

static int pre_accept(struct sd_qp *qp, void *arg)
{
    struct hs *h = arg;
    int err;

    h->qp = qp;
    err = h->ops->reg_mr(qp, h->recv_mem, sizeof(h->recv_mem), SD_ACCESS_LOCAL_WRITE,
                         &h->recv_mr);
    if (err == 0)
        err = h->ops->reg_mr(qp, h->send_mem, sizeof(h->send_mem), SD_ACCESS_LOCAL_WRITE,
                             &h->send_mr);
    for (uint32_t i = 0; err == 0 && i < NRECV; i++)
        err = post_recv(h, i);
    return err;
}

/* Handles completions, waiting for the provider's fd up to deadline when none came. */
static void pump(struct hs *h, uint64_t deadline)
{
    struct sd_wc wc[16];
    int n, got = 0;

    for (int waited = 0; !got && !h->lost && !waited;) {
        h->ops->progress(h->qp);
        while ((n = h->ops->poll_cq(h->qp, wc, 16)) > 0)
            for (int i = 0; i < n; i++, got++) {
                if (wc[i].opcode == SD_WC_CONN_LOST)
                    h->lost = 1;
                else if (wc[i].opcode == SD_WC_RECV && wc[i].status == SD_WC_SUCCESS) {
                    h->received++;
                    h->last_len = wc[i].byte_len;
                    h->last_slot = (uint32_t)wc[i].wr_id;
                    post_recv(h, h->last_slot);
                }
            }
        if (got || h->lost)
            break;
        struct pollfd p = { h->ops->fd(h->qp), (short)h->ops->poll_events(h->qp), 0 };

        poll(&p, 1, sd_ms_until(deadline));
        waited = sd_ms_until(deadline) == 0;
    }
}

/* Waits until the client has sent count messages: 0, or -1 (timeout, connection lost). */
static int wait_received(struct hs *h, uint32_t count)
{
    uint64_t deadline = sd_now_ms() + WAIT_MS;

    while (h->received < count && !h->lost && sd_ms_until(deadline) > 0)
        pump(h, deadline);
    return h->received >= count ? 0 : -1;
}

static int send_bytes(struct hs *h, size_t len)
{
    struct sd_sge sge = { h->send_mem, (uint32_t)len, &h->send_mr };
    int rc = h->ops->post_send(h->qp, 1, &sge, 1, 0, 1);

    h->ops->progress(h->qp);
    return rc;
}

/* One Data Transfer message: header fields as given, then pay bytes of payload at
 * DataOffset 24 (whatever the header claims), the whole message len bytes long. */
static int send_data(struct hs *h, struct smbd_data_hdr d, uint32_t pay)
{
    uint8_t *p = h->send_mem;

    memset(p, 0, SMBD_DATA_OFFSET);
    sd_put_le16(p, d.credits_requested);
    sd_put_le16(p + 2, d.credits_granted);
    sd_put_le16(p + 4, d.flags);
    sd_put_le32(p + 8, d.remaining_data_length);
    sd_put_le32(p + 12, d.data_offset);
    sd_put_le32(p + 16, d.data_length);
    memset(p + SMBD_DATA_OFFSET, 0xfe, pay);
    return send_bytes(h, SMBD_DATA_OFFSET + pay);
}

static struct smbd_data_hdr good_hdr(uint32_t len)
{
    return (struct smbd_data_hdr){ .credits_requested = NRECV, .credits_granted = 1,
                                   .data_offset = len ? SMBD_DATA_OFFSET : 0,
                                   .data_length = len };
}

/* ---- the modes ---- */

static void neg_version(struct smbd_negotiate_resp *r, size_t *len)
{
    (void)len;
    r->negotiated_version = r->max_version = 0x0200;
}
static void neg_status(struct smbd_negotiate_resp *r, size_t *len)
{
    (void)len;
    r->status = SMBD_STATUS_NOT_SUPPORTED;
}
static void neg_recv_size(struct smbd_negotiate_resp *r, size_t *len)
{
    (void)len;
    r->max_receive_size = 64;
}
static void neg_credits(struct smbd_negotiate_resp *r, size_t *len)
{
    (void)len;
    r->credits_granted = 0;
}
static void neg_frag_size(struct smbd_negotiate_resp *r, size_t *len)
{
    (void)len;
    r->max_fragmented_size = 4096;
}
static void neg_truncated(struct smbd_negotiate_resp *r, size_t *len)
{
    (void)r;
    *len = 20;
}
static void neg_one_credit(struct smbd_negotiate_resp *r, size_t *len)
{
    (void)len;
    r->credits_granted = 1;
}

static int act_misaligned(struct hs *h)
{
    struct smbd_data_hdr d = good_hdr(16);

    d.data_offset = 28; /* not 8-byte aligned */
    return send_data(h, d, 16);
}
static int act_past_end(struct hs *h)
{
    struct smbd_data_hdr d = good_hdr(4000); /* claims 4000 bytes, carries 16 */

    return send_data(h, d, 16);
}
static int act_oversized(struct hs *h)
{
    /* One byte more than the client's posted receives hold (its MaxReceiveSize). */
    uint32_t pay = h->req.max_receive_size + 1 - SMBD_DATA_OFFSET;

    if (SMBD_DATA_OFFSET + pay > SEND_SIZE)
        return -EMSGSIZE;
    return send_data(h, good_hdr(pay), pay);
}
static int act_remaining(struct hs *h)
{
    struct smbd_data_hdr d = good_hdr(64);

    d.remaining_data_length = h->req.max_fragmented_size; /* 64 + this exceed it */
    return send_data(h, d, 64);
}
static int act_zero_requested(struct hs *h)
{
    struct smbd_data_hdr d = good_hdr(64);

    d.credits_requested = 0;
    return send_data(h, d, 64);
}
static int act_silent(struct hs *h)
{
    (void)h; /* receives whatever comes (keepalives too) and never answers */
    return 0;
}
static int act_cut_disconnect(struct hs *h)
{
    struct smbd_data_hdr d = good_hdr(64);
    int rc;

    d.remaining_data_length = 1000; /* the rest never comes */
    if ((rc = send_data(h, d, 64)) == 0) {
        usleep(200 * 1000);
        h->ops->progress(h->qp);
        h->ops->disconnect(h->qp);
    }
    return rc;
}

/* An RDMAP Terminate (RFC 5040 4.8) written straight onto the TCP stream as one MPA
 * FPDU (RFC 5044 4), after the first fragment of a message. */
static int act_cut_terminate(struct hs *h)
{
    struct smbd_data_hdr d = good_hdr(64);
    struct sd_iw_hdr t = { .last = 1, .ddp_version = DDP_VERSION, .rdmap_version = RDMAP_VERSION,
                           .opcode = RDMAP_TERMINATE, .qn = RDMAP_QN_TERMINATE, .msn = 1 };
    struct sd_iw_term term = { TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
                               RDMAP_ECODE_UNSPECIFIED, 0 };
    uint8_t f[64];
    size_t n = MPA_LEN_SIZE;
    int rc;

    d.remaining_data_length = 1000;
    if ((rc = send_data(h, d, 64)) != 0)
        return rc;
    usleep(200 * 1000);
    h->ops->progress(h->qp);
    n += sd_iw_hdr_encode(&t, f + n);
    sd_iw_term_encode(&term, f + n);
    n += RDMAP_TERM_CTRL_LEN;
    f[0] = (uint8_t)((n - MPA_LEN_SIZE) >> 8);
    f[1] = (uint8_t)(n - MPA_LEN_SIZE);
    while (n % 4)
        f[n++] = 0;
    sd_put_be32(f + n, sd_crc32c(f, n));
    n += MPA_CRC_SIZE;
    return write(h->ops->fd(h->qp), f, n) == (ssize_t)n ? 0 : -errno;
}

/* Bytes that are no FPDU at all: an MPA length past any ULPDU, then junk. */
static int act_garbage(struct hs *h)
{
    uint8_t junk[256];

    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(0xff - i * 7);
    return write(h->ops->fd(h->qp), junk, sizeof(junk)) == (ssize_t)sizeof(junk) ? 0 : -errno;
}

/* No MPA at all: the client's MPA request (RFC 5044 7.1.2) is answered with junk that
 * is no reply frame, on a plain TCP socket. */
static int raw_junk_reply(int fd)
{
    uint8_t buf[512];
    static const char junk[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";

    if (read(fd, buf, sizeof(buf)) <= 0)
        return -EIO;
    return write(fd, junk, sizeof(junk) - 1) == (ssize_t)sizeof(junk) - 1 ? 0 : -errno;
}

static const struct mode modes[] = {
    { "neg-version", "Negotiate Response with NegotiatedVersion 0x0200", neg_version, NULL, NULL },
    { "neg-status", "Negotiate Response with Status STATUS_NOT_SUPPORTED", neg_status, NULL,
      NULL },
    { "neg-recv-size", "Negotiate Response with MaxReceiveSize 64", neg_recv_size, NULL, NULL },
    { "neg-credits", "Negotiate Response with CreditsGranted 0", neg_credits, NULL, NULL },
    { "neg-frag-size", "Negotiate Response with MaxFragmentedSize 4096", neg_frag_size, NULL,
      NULL },
    { "neg-truncated", "Negotiate Response of 20 bytes", neg_truncated, NULL, NULL },
    { "data-misaligned", "Data Transfer with DataOffset 28", NULL, act_misaligned, NULL },
    { "data-past-end", "Data Transfer whose DataLength runs past the message", NULL,
      act_past_end, NULL },
    { "data-oversized", "Data Transfer one byte larger than the client's MaxReceiveSize", NULL,
      act_oversized, NULL },
    { "data-remaining", "Data Transfer with RemainingDataLength = the client's MaxFragmentedSize",
      NULL, act_remaining, NULL },
    { "data-zero-requested", "Data Transfer with CreditsRequested 0", NULL, act_zero_requested,
      NULL },
    { "no-credits", "grants 1 credit at negotiate, then none ever, and stays silent",
      neg_one_credit, act_silent, NULL },
    { "no-keepalive-answer", "never sends anything after the Negotiate Response", NULL,
      act_silent, NULL },
    { "cut-disconnect", "first fragment of a message, then a disconnect", NULL,
      act_cut_disconnect, NULL },
    { "cut-terminate", "first fragment of a message, then an RDMAP Terminate", NULL,
      act_cut_terminate, NULL },
    { "garbage", "256 bytes of junk on the TCP stream after the negotiation", NULL,
      act_garbage, NULL },
    { "garbage-mpa", "junk instead of an MPA reply frame (plain TCP)", NULL, NULL,
      raw_junk_reply },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

/* ---- one connection ---- */

static void report(const struct mode *m, int rc)
{
    fprintf(stderr, "hostile-smbd: %s: %s (%s)\n", m->name, m->what, rc ? strerror(-rc) : "done");
}

static void serve(struct hs *h, const struct mode *m)
{
    struct smbd_negotiate_resp r;
    const char *why;
    size_t len = SMBD_NEGOTIATE_RESP_SIZE;
    uint64_t deadline;

    if (wait_received(h, 1) != 0) {
        fprintf(stderr, "hostile-smbd: no Negotiate Request\n");
        return;
    }
    if (smbd_decode_negotiate_req(h->recv_mem[h->last_slot], h->last_len, &h->req, &why)) {
        fprintf(stderr, "hostile-smbd: bad Negotiate Request: %s\n", why);
        return;
    }
    r = (struct smbd_negotiate_resp){
        .min_version = SMBD_VERSION_1_0, .max_version = SMBD_VERSION_1_0,
        .negotiated_version = SMBD_VERSION_1_0, .credits_requested = NRECV,
        .credits_granted = NRECV, .status = SMBD_STATUS_SUCCESS,
        .max_read_write_size = 1u << 20,
        .preferred_send_size = h->req.max_receive_size < RECV_SIZE ? h->req.max_receive_size
                                                                   : RECV_SIZE,
        .max_receive_size = RECV_SIZE, .max_fragmented_size = 1u << 20 };
    if (m->negotiate)
        m->negotiate(&r, &len);
    smbd_encode_negotiate_resp(&r, h->send_mem, sizeof(h->send_mem));
    if (send_bytes(h, len) != 0)
        return;
    fprintf(stderr, "hostile-smbd: %s: sent the Negotiate Response\n", m->name);
    /* The client grants its receive credits with its first Data Transfer (3.1.5.9). */
    if (m->act && wait_received(h, 2) == 0) {
        int rc = m->act(h);

        report(m, rc);
    }
    deadline = sd_now_ms() + LINGER_MS;
    while (!h->lost && sd_ms_until(deadline) > 0)
        pump(h, deadline);
    fprintf(stderr, "hostile-smbd: %s: connection %s\n", m->name,
            h->lost ? "ended" : "still up; dropping it");
}

/* The plain TCP modes: each accepted socket gets m->raw, then is held until the
 * client closes it (or LINGER_MS). */
static int serve_raw(const struct mode *m, const struct sockaddr_storage *addr,
                     socklen_t addrlen)
{
    int one = 1, l = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (l < 0 || bind(l, (const struct sockaddr *)addr, addrlen) != 0 || listen(l, 8) != 0) {
        fprintf(stderr, "hostile-smbd: cannot listen: %s\n", strerror(errno));
        return 1;
    }
    for (;;) {
        int fd = accept(l, NULL, NULL), rc;
        uint8_t sink[256];

        if (fd < 0)
            continue;
        rc = m->raw(fd);
        report(m, rc);
        struct pollfd p = { fd, POLLIN, 0 };

        while (poll(&p, 1, LINGER_MS) > 0 && read(fd, sink, sizeof(sink)) > 0)
            ;
        close(fd);
    }
}

int main(int argc, char **argv)
{
    const struct sd_provider_ops *ops = &sd_soft_provider;
    const struct mode *m = NULL;
    const char *listen_at = NULL, *mode = NULL, *why = NULL;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    struct sd_listener *l;
    int err = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list")) {
            for (size_t k = 0; k < NMODES; k++)
                printf("%-20s %s\n", modes[k].name, modes[k].what);
            return 0;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--listen"))
            listen_at = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--mode"))
            mode = argv[++i];
        else
            listen_at = NULL, i = argc;
    }
    for (size_t k = 0; mode && k < NMODES; k++)
        if (!strcmp(modes[k].name, mode))
            m = &modes[k];
    if (!listen_at || !m || sd_addr_parse(listen_at, 5445, &addr, &addrlen, &why) != 0) {
        fprintf(stderr, "usage: hostile-smbd --listen HOST:PORT --mode NAME (--list)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (m->raw)
        return serve_raw(m, &addr, addrlen);
    struct sd_listen_params lp = { .backlog = 8, .handshake_ms = 5000 };

    l = ops->listen((struct sockaddr *)&addr, addrlen, &lp, &err);
    if (!l) {
        fprintf(stderr, "hostile-smbd: cannot listen on %s: %s\n", listen_at, strerror(-err));
        return 1;
    }
    for (;;) {
        static struct hs h;
        struct sd_cm_result res;

        memset(&h, 0, sizeof(h));
        h.ops = ops;
        struct sd_cm_params cp = { .ird = 16, .ord = 16, .smbd_ird_ord_header = 1,
                                   .pre_accept = pre_accept, .pre_accept_arg = &h };
        struct sd_qp *qp = ops->accept(l, &cp, -1, &res, &err);

        if (!qp) {
            fprintf(stderr, "hostile-smbd: accept failed: %s\n", strerror(-err));
            continue;
        }
        serve(&h, m);
        ops->dereg_mr(qp, &h.recv_mr);
        ops->dereg_mr(qp, &h.send_mr);
        ops->destroy(qp);
    }
}
