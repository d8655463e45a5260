/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_negotiate.c — connection negotiation in both roles: sending
 * the Negotiate Request (MS-SMBD 3.1.5.2) and Response (3.1.5.3), and verifying a
 * received Request (3.1.5.6) or Response (3.1.5.7). */
#include "smbd_conn_int.h"

#include <errno.h>
#include <string.h>

#include "log.h"

/* Negotiate messages travel outside the credit scheme: post them as they are. */
static int send_raw(struct smbd_conn *c, struct smbd_send_slot *s, uint32_t len)
{
    s->data_len = 0;
    s->remaining = 0;
    return smbd_post_slot(c, s, len, 1);
}

int smbd_send_negotiate_request(struct smbd_conn *c) /* 3.1.5.2 */
{
    struct smbd_negotiate_req req = {
        .min_version = SMBD_VERSION_1_0,
        .max_version = SMBD_VERSION_1_0,
        .credits_requested = c->neg.send_credit_target,
        .preferred_send_size = c->neg.max_send_size,
        .max_receive_size = c->neg.max_receive_size,
        .max_fragmented_size = c->neg.max_fragmented_recv_size,
    };
    struct smbd_send_slot *s = smbd_slot_get(c, 0);

    if (!s)
        return -ENOMEM;
    return send_raw(c, s, (uint32_t)smbd_encode_negotiate_req(&req, s->buf, c->send_buf_size));
}

/* 3.1.5.3 with a failure status: every field but the versions and Status is zero,
 * then a graceful termination once the response went out. */
static void refuse(struct smbd_conn *c, uint32_t status, const char *why)
{
    struct smbd_negotiate_resp resp = {
        .min_version = SMBD_VERSION_1_0,
        .max_version = SMBD_VERSION_1_0,
        .status = status,
    };
    struct smbd_send_slot *s = smbd_slot_get(c, 0);
    int sent = s && send_raw(c, s, (uint32_t)smbd_encode_negotiate_resp(&resp, s->buf,
                                                                         c->send_buf_size)) == 0;

    smbd_terminate_as(c, sent ? SMBD_ST_REFUSING : SMBD_ST_TERMINATED, -ECONNREFUSED,
                      "refusing the Negotiate Request with status 0x%08x: %s", (unsigned)status,
                      why);
}

void smbd_recv_negotiate_request(struct smbd_conn *c, const uint8_t *buf, uint32_t len,
                                 uint64_t now_ms) /* 3.1.5.6 */
{
    struct smbd_negotiate_req req;
    struct smbd_negotiate_resp resp;
    struct smbd_send_slot *s;
    const char *why;
    uint16_t granted;

    if (smbd_decode_negotiate_req(buf, len, &req, &why)) {
        smbd_terminate(c, -EPROTO, "%s", why);
        return;
    }
    if (req.min_version > SMBD_VERSION_1_0 || req.max_version < SMBD_VERSION_1_0) {
        refuse(c, SMBD_STATUS_NOT_SUPPORTED,
               "the version range does not include 0x0100 (MS-SMBD 3.1.5.6)");
        return;
    }
    if (req.credits_requested == 0) {
        smbd_terminate(c, -EPROTO, "Negotiate Request with CreditsRequested 0 (MS-SMBD 3.1.5.6)");
        return;
    }
    if (req.max_receive_size < SMBD_MIN_RECEIVE_SIZE) {
        smbd_terminate(c, -EPROTO, "Negotiate Request with MaxReceiveSize %u < 128 (MS-SMBD 3.1.5.6)",
                       (unsigned)req.max_receive_size);
        return;
    }
    if (req.max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE) {
        smbd_terminate(c, -EPROTO,
                       "Negotiate Request with MaxFragmentedSize %u < 131072 (MS-SMBD 3.1.5.6)",
                       (unsigned)req.max_fragmented_size);
        return;
    }
    if (req.preferred_send_size < c->neg.max_receive_size)
        c->neg.max_receive_size = req.preferred_send_size;
    if (c->neg.max_receive_size < SMBD_MIN_RECEIVE_SIZE)
        c->neg.max_receive_size = SMBD_MIN_RECEIVE_SIZE;
    c->neg.protocol = SMBD_VERSION_1_0;
    c->receive_credit_target = req.credits_requested;
    if (req.max_receive_size < c->neg.max_send_size)
        c->neg.max_send_size = req.max_receive_size;
    c->neg.max_fragmented_send_size = req.max_fragmented_size;

    granted = smbd_credits_take_grant(c); /* 3.1.5.9 */
    if (granted == 0) {
        refuse(c, SMBD_STATUS_INSUFFICIENT_RESOURCES,
               "no receive credits can be offered (MS-SMBD 3.1.5.6)");
        return;
    }
    resp = (struct smbd_negotiate_resp){
        .min_version = SMBD_VERSION_1_0,
        .max_version = SMBD_VERSION_1_0,
        .negotiated_version = c->neg.protocol,
        .credits_requested = c->neg.send_credit_target,
        .credits_granted = granted,
        .status = SMBD_STATUS_SUCCESS,
        .max_read_write_size = c->neg.max_read_write_size,
        .preferred_send_size = c->neg.max_send_size,
        .max_receive_size = c->neg.max_receive_size,
        .max_fragmented_size = c->neg.max_fragmented_recv_size,
    };
    s = smbd_slot_get(c, now_ms);
    if (!s || send_raw(c, s, (uint32_t)smbd_encode_negotiate_resp(&resp, s->buf,
                                                                  c->send_buf_size))) {
        smbd_terminate(c, -ECONNRESET, "cannot send the Negotiate Response (MS-SMBD 3.1.5.3)");
        return;
    }
    smbd_become_established(c, now_ms);
}

void smbd_recv_negotiate_response(struct smbd_conn *c, const uint8_t *buf, uint32_t len,
                                  uint64_t now_ms) /* 3.1.5.7 */
{
    struct smbd_negotiate_resp r;
    const char *why;
    int err;

    if (smbd_decode_negotiate_resp(buf, len, &r, &why)) {
        smbd_terminate(c, -EPROTO, "%s", why);
        return;
    }
    if (r.status != SMBD_STATUS_SUCCESS) {
        smbd_terminate(c, -ECONNREFUSED,
                       "the peer refused negotiation with status 0x%08x (MS-SMBD 3.1.5.7)",
                       (unsigned)r.status);
        return;
    }
    if (r.negotiated_version != SMBD_VERSION_1_0)
        why = "NegotiatedVersion is not 0x0100";
    else if (r.max_receive_size < SMBD_MIN_RECEIVE_SIZE)
        why = "MaxReceiveSize is below 128";
    else if (r.max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE)
        why = "MaxFragmentedSize is below 131072";
    else if (r.credits_granted == 0)
        why = "CreditsGranted is 0";
    else if (r.credits_requested == 0)
        why = "CreditsRequested is 0";
    else if (r.preferred_send_size > c->neg.max_receive_size)
        why = "PreferredSendSize exceeds our MaxReceiveSize";
    else
        why = NULL;
    if (why) {
        smbd_terminate(c, -EPROTO, "invalid Negotiate Response: %s (MS-SMBD 3.1.5.7)", why);
        return;
    }
    c->neg.protocol = SMBD_VERSION_1_0;
    c->receive_credit_target = r.credits_requested;
    if (r.preferred_send_size < c->neg.max_receive_size)
        c->neg.max_receive_size = r.preferred_send_size;
    if (c->neg.max_receive_size < SMBD_MIN_RECEIVE_SIZE)
        c->neg.max_receive_size = SMBD_MIN_RECEIVE_SIZE;
    if (r.max_receive_size < c->neg.max_send_size)
        c->neg.max_send_size = r.max_receive_size;
    c->neg.max_read_write_size = r.max_read_write_size < c->cfg.max_read_write_size
                                 ? r.max_read_write_size : c->cfg.max_read_write_size;
    c->send_credits = r.credits_granted;
    c->stats.credits_received += r.credits_granted;
    c->neg.max_fragmented_send_size = r.max_fragmented_size;
    /* 3.1.5.9: the receives, of the MaxReceiveSize just negotiated, are posted; they are
     * granted with our first message. */
    if ((err = smbd_recv_pool_resize(c)) != 0) {
        smbd_terminate(c, err, "cannot post receives of %u bytes: %s (MS-SMBD 3.1.5.7)",
                       (unsigned)c->neg.max_receive_size, strerror(-err));
        return;
    }
    if (smbd_credits_peek_grant(c) == 0) {
        smbd_terminate(c, -ECONNRESET, "no receive credits can be offered (MS-SMBD 3.1.5.7)");
        return;
    }
    smbd_become_established(c, now_ms);
}
