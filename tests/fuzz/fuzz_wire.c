/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz_wire.c — libFuzzer target for the MS-SMBD codec: every decoder gets
 * the input; whatever decodes must re-encode to the same bytes (reserved fields and
 * padding aside) and a decoded Data Transfer payload must lie inside the input.
 * fuzz-sources: transport/smbd/smbd_wire.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "smbd_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Compares out with in, except bytes [skip, skip + 2) (a Reserved field). */
static void check_same(const uint8_t *in, const uint8_t *out, size_t n, size_t skip)
{
    for (size_t i = 0; i < n; i++)
        if ((i < skip || i >= skip + 2) && in[i] != out[i])
            abort();
}

static void fuzz_negotiate(const uint8_t *data, size_t size)
{
    struct smbd_negotiate_req req;
    struct smbd_negotiate_resp resp;
    uint8_t out[SMBD_NEGOTIATE_RESP_SIZE];
    const char *why = NULL;

    if (smbd_decode_negotiate_req(data, size, &req, &why) == 0) {
        if (smbd_encode_negotiate_req(&req, out, sizeof(out)) != SMBD_NEGOTIATE_REQ_SIZE)
            abort();
        check_same(data, out, SMBD_NEGOTIATE_REQ_SIZE, 4);
    } else if (!why || size >= SMBD_NEGOTIATE_REQ_SIZE) {
        abort();
    }
    why = NULL;
    if (smbd_decode_negotiate_resp(data, size, &resp, &why) == 0) {
        if (smbd_encode_negotiate_resp(&resp, out, sizeof(out)) != SMBD_NEGOTIATE_RESP_SIZE)
            abort();
        check_same(data, out, SMBD_NEGOTIATE_RESP_SIZE, 6);
    } else if (!why || size >= SMBD_NEGOTIATE_RESP_SIZE) {
        abort();
    }
}

static void fuzz_data(const uint8_t *data, size_t size)
{
    struct smbd_data_hdr h;
    uint8_t out[SMBD_DATA_OFFSET];
    const char *why = NULL;
    volatile uint8_t sink = 0;

    if (smbd_decode_data_hdr(data, size, &h, &why) != 0) {
        if (!why)
            abort();
        return;
    }
    if ((uint64_t)h.data_offset + h.data_length > size || h.data_offset % 8 ||
        (h.data_length == 0) != (h.data_offset == 0) || h.flags & ~SMBD_FLAG_RESPONSE_REQUESTED)
        abort();
    if (h.data_length) {       /* touch both ends of the payload (ASan checks bounds) */
        sink ^= data[h.data_offset];
        sink ^= data[h.data_offset + h.data_length - 1];
    }
    if (h.data_offset == 0 || h.data_offset == SMBD_DATA_OFFSET) {
        int n = smbd_encode_data_hdr(&h, out, sizeof(out));
        if (n != (h.data_length ? (int)SMBD_DATA_OFFSET : (int)SMBD_DATA_HEADER_SIZE))
            abort();
        check_same(data, out, SMBD_DATA_HEADER_SIZE, 6);
    }
    (void)sink;
}

static void fuzz_buffer_desc(const uint8_t *data, size_t size)
{
    uint64_t off;
    uint32_t tok, len;
    uint8_t out[SMBD_BUFFER_DESC_SIZE];

    if (smbd_decode_buffer_desc(data, size, &off, &tok, &len) != 0) {
        if (size >= SMBD_BUFFER_DESC_SIZE)
            abort();
        return;
    }
    if (smbd_encode_buffer_desc(off, tok, len, out, sizeof(out)) != SMBD_BUFFER_DESC_SIZE ||
        memcmp(out, data, SMBD_BUFFER_DESC_SIZE) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_negotiate(data, size);
    fuzz_data(data, size);
    fuzz_buffer_desc(data, size);
    return 0;
}
