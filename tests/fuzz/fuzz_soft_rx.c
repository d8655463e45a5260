/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz_soft_rx.c — libFuzzer target for soft-iWARP's receive path: a
 * connected soft qp (transport/soft/, responder or not, with or without CRC) over a
 * socketpair, receives posted into a registered region that also allows remote Read
 * and Write, and the input as a program of FPDUs written to the peer end: each has
 * fuzzed DDP/RDMAP header and payload bytes inside valid MPA framing (length, pad,
 * CRC; the CRC sometimes wrong on purpose), tagged ones optionally aimed at the
 * region's STag, and raw unframed bytes now and then; some inputs grow every framed
 * FPDU past 16 KiB, as loopback's MSS makes them. The provider is progressed and its
 * completions polled after each. Checked: no crash, hang or sanitizer report; every
 * completion names a posted receive or the connection's end, and nothing completes
 * after CONN_LOST.
 * fuzz-sources: common/log.c common/sd_libc.c common/sd_fsm.c common/sd_clock.c common/sd_addr.c
 * fuzz-sources: common/sd_num.c transport/provider.c transport/sd_irdord.c
 * fuzz-sources: transport/soft/soft_*.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "soft/iwarp_wire.h"
#include "soft/soft_cm.h"
#include "soft/soft_qp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_RECVS  8
#define FZ_REGION 65536
#define FZ_LARGE  16384 /* a framed ULPDU grown to at least this: a loopback-sized FPDU */

struct fz {
    const uint8_t *p;
    size_t left;
};

static uint8_t take8(struct fz *f)
{
    uint8_t v = 0;

    if (f->left) {
        v = *f->p++;
        f->left--;
    }
    return v;
}

/* Frames ulpdu (len bytes) as an MPA FPDU into out; returns its length. */
static size_t frame(const uint8_t *ulpdu, size_t len, int crc, int bad_crc, uint8_t *out)
{
    size_t pad = sd_iw_mpa_pad((uint32_t)len), n = 2 + len + pad;

    sd_iw_put16(out, (uint16_t)len);
    memcpy(out + 2, ulpdu, len);
    memset(out + 2 + len, 0, pad);
    sd_iw_put_crc(out + n, crc ? sd_crc32c(out, n) ^ (uint32_t)bad_crc : 0);
    return n + 4;
}

/* Progresses the qp, drains what it wrote to the peer and its completions. 1 once the
 * connection is lost. */
static int pump(struct sd_qp *qp, int peer, uint64_t posted_mask)
{
    struct sd_wc wc[16];
    uint8_t scratch[65536];
    int n, lost = 0;

    sd_soft_provider.progress(qp);
    while (recv(peer, scratch, sizeof(scratch), MSG_DONTWAIT) > 0)
        ;
    while ((n = sd_soft_provider.poll_cq(qp, wc, 16)) > 0) {
        for (int i = 0; i < n; i++) {
            if (lost)
                abort(); /* nothing completes after CONN_LOST */
            if (wc[i].opcode == SD_WC_CONN_LOST)
                lost = 1;
            else if (wc[i].opcode == SD_WC_RECV &&
                     (wc[i].wr_id >= FZ_RECVS || !(posted_mask & (1u << wc[i].wr_id))))
                abort(); /* a completion for a receive never posted */
        }
    }
    return lost;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t region[FZ_REGION];
    static int quiet;
    struct fz f = { data, size };
    static uint8_t ulpdu[FZ_LARGE + 2048 * 8], out[sizeof(ulpdu) + 12];
    uint8_t flags = take8(&f);
    int sv[2], crc = flags & 1, lost = 0, steps = 0;
    struct sd_qp *qp;
    struct sd_mr mr;

    if (!quiet++)
        sd_log_set_level(SD_LOG_OFF);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
        return 0;
    qp = sd_soft_qp_create(sv[0], flags & 2, crc, (flags >> 2 & 3) + 1, 4);
    if (!qp || sd_soft_provider.reg_mr(qp, region, sizeof(region),
                                       SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_READ |
                                           SD_ACCESS_REMOTE_WRITE, &mr) < 0) {
        if (qp)
            sd_soft_provider.destroy(qp);
        else
            close(sv[0]);
        close(sv[1]);
        return 0;
    }
    for (uint64_t i = 0; i < FZ_RECVS; i++) {
        struct sd_sge s = { region + i * 1024, 1024, &mr };

        sd_soft_provider.post_recv(qp, i, &s);
    }
    while (f.left && !lost && steps++ < 64) {
        uint8_t kind = take8(&f);
        size_t len = take8(&f) | (size_t)(take8(&f) & 7) << 8, n;

        if (len > f.left)
            len = f.left;
        memcpy(ulpdu, f.p, len);
        f.p += len;
        f.left -= len;
        if ((kind & 3) == 3) { /* raw bytes, no framing */
            n = len;
            memcpy(out, ulpdu, len);
        } else {
            /* a tagged header aimed at the region: its STag and an offset inside it */
            if ((kind & 4) && len >= DDP_TAGGED_HDR_LEN && (ulpdu[0] & DDP_FLAG_TAGGED)) {
                sd_iw_put32(ulpdu + 2, mr.rkey);
                sd_iw_put64(ulpdu + 6, mr.addr + (uint64_t)(kind >> 3) * 256);
            }
            if (flags & 16) { /* the input's bytes repeated to a large payload */
                size_t big = FZ_LARGE + len * 8;

                for (size_t i = len; i < big; i++)
                    ulpdu[i] = len ? ulpdu[i % len] : (uint8_t)i;
                len = big;
            }
            n = frame(ulpdu, len, crc, (kind & 3) == 2, out);
        }
        if (send(sv[1], out, n, MSG_NOSIGNAL) < 0)
            break;
        lost = pump(qp, sv[1], (1u << FZ_RECVS) - 1);
    }
    shutdown(sv[1], SHUT_WR);
    for (int i = 0; i < 4 && !lost; i++)
        lost = pump(qp, sv[1], (1u << FZ_RECVS) - 1);
    sd_soft_provider.dereg_mr(qp, &mr);
    sd_soft_provider.destroy(qp);
    close(sv[1]);
    return 0;
}
