/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_server.h — the server role of the SMB2 READ/WRITE RDMA channel
 * for the relay, I/O-free: the relay's glue hands it every complete SMB2 request of the
 * SMB Direct client (chan_server_plan_request) and every response of the TCP backend
 * (chan_server_on_response). It validates channel requests as an SMB Direct server
 * must (MS-SMB2 3.3.5.12, 3.3.5.13), keeps the channel I/Os by MessageId until their
 * final response, and says what each response means: data to RDMA-write into the
 * client's buffer (MS-SMBD 3.1.4.5), a token to remote-invalidate with the response's
 * Send (MS-SMBD 3.1.4.2). The glue RDMA-reads a WRITE's data (MS-SMBD 3.1.4.6) and
 * forwards the requests rewritten inline (chan_server_build.h). */
#ifndef SMBDIRECT_CHAN_SERVER_H
#define SMBDIRECT_CHAN_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "chan_table.h"

struct chan_server {
    uint16_t dialect;      /* from the backend's NEGOTIATE response; 0: not decided */
    uint32_t max_io;       /* the relay's MaxReadWriteSize */
    /* Outstanding channel I/Os; released ones are taken out with
     * chan_table_take_released (teardown: chan_table_release_all first). */
    struct chan_table ios;
};

void chan_server_init(struct chan_server *cs, uint32_t max_io);
/* Frees the table; take the released cookies first (see ios). */
void chan_server_fini(struct chan_server *cs);

/* What to do with one request of the client. */
struct chan_server_plan {
    enum chan_kind kind;        /* CHAN_PASS: forward unchanged */
    uint64_t message_id;
    uint32_t size;              /* bytes of the I/O: READ Length, WRITE RemainingBytes */
    uint32_t channel;
    int invalidate;             /* SMB2_CHANNEL_RDMA_V1_INVALIDATE */
    const uint8_t *descs;       /* the descriptor list inside msg (chan_desc_get) */
    size_t ndescs;
    const char *why;            /* rejected: the rule broken */
};

/* Plans one complete SMB2 request of the client. Returns 0 with plan->kind: PASS for
 * anything but a READ or WRITE whose Channel is RDMA_V1 or RDMA_V1_INVALIDATE (an
 * encrypted or compressed message passes: its Channel cannot be seen); READ or WRITE
 * for a valid channel request. Otherwise plan->why names the rule and the return is
 *  -ENOTSUP: valid, but the relay cannot forward it: signed (it cannot re-sign the
 *            rewrite) or in a compound chain (it cannot rewrite a member);
 *  -EINVAL:  invalid, what a server fails with STATUS_INVALID_PARAMETER (MS-SMB2
 *            3.3.5.12, 3.3.5.13): any channel before dialect 3.0 (RDMA_V1_INVALIDATE on 3.0 is served
 *            without remote invalidation: plan->invalidate 0);
 *            ChannelInfoOffset inside the fixed part (< 64 + 48) or the list past the
 *            message; ChannelInfoLength 0 or not a multiple of 16 (so at most 4095
 *            descriptors); a zero-length descriptor; descriptor lengths summing to
 *            less than the I/O; an I/O larger than max_io; a WRITE with Length or
 *            DataOffset non-zero.
 * The relay ends the connection on either, naming plan->why (bridge_chan_server.c): it
 * cannot answer in the backend's name, and the backend never sees the request. */
int chan_server_plan_request(const struct chan_server *cs, const uint8_t *msg, size_t len,
                             struct chan_server_plan *plan);

/* Remembers a planned READ or WRITE with a decoded copy of its descriptors (for the
 * RDMA Read of a WRITE's data and the RDMA Write of a READ's) and cookie; call while
 * the planned message is still valid. 0 and *io (valid until released and taken),
 * -EINVAL (plan not READ or WRITE), -EEXIST (MessageId outstanding already), -ENOMEM. */
int chan_server_track(struct chan_server *cs, const struct chan_server_plan *plan, void *cookie,
                      const struct chan_io **io);

enum chan_server_action {
    CHAN_SERVER_PASS,        /* send the response unchanged */
    CHAN_SERVER_WRITE_DATA,  /* RDMA-write data into io's descriptors, then send
                                chan_build_channel_read_response(data_len) */
    CHAN_SERVER_ERROR,       /* the backend broke the protocol: end the connection */
};

struct chan_server_result {
    enum chan_server_action action;
    int invalidate;          /* send the response with Send with Invalidate of token */
    uint32_t token;
    const struct chan_io *io;   /* WRITE_DATA: the READ (descs, cookie); also released */
    const uint8_t *data;        /* WRITE_DATA: the data read, inside msg (NULL if none) */
    uint32_t data_len;
    const char *why;            /* ERROR: one line naming the violation */
};

/* Handles one complete SMB2 message of the backend. Learns the dialect from a
 * NEGOTIATE response (a 0x02FF answer: not decided). Walks a compound chain; a final
 * response (not STATUS_PENDING with SMB2_FLAGS_ASYNC_COMMAND, MS-SMB2 3.3.4.2) to a
 * tracked MessageId releases its I/O and, when RDMA_V1_INVALIDATE was asked, makes the
 * response carry the invalidation of its first descriptor's Token (the one ksmbd
 * invalidates; one per message, the first such I/O's). A tracked READ answered with a
 * non-error status is WRITE_DATA with the DataOffset/DataLength bytes; ERROR when they
 * lie outside the response or exceed the READ's size, the READ response does not
 * decode, is part of a chain or is signed (neither can be rewritten). Anything else
 * passes. */
void chan_server_on_response(struct chan_server *cs, const uint8_t *msg, size_t len,
                             struct chan_server_result *res);

#endif
