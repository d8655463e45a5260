/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_crc32c.c — CRC32c for MPA FPDUs (RFC 5044 4.4, RFC 3385):
 * the SSE4.2 crc32 instruction when the CPU has it (checked once at run time),
 * a byte-wise table otherwise. */
#include "iwarp_wire.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY_REFLECTED 0x82f63b78u

static uint32_t crc_table[256];
static uint32_t (*crc_impl)(uint32_t, const void *, size_t);
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static uint32_t crc_by_table(uint32_t state, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len--)
        state = crc_table[(state ^ *p++) & 0xff] ^ (state >> 8);
    return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_by_sse42(uint32_t state, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t s = state;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        s = __builtin_ia32_crc32di(s, v);
        p += 8;
        len -= 8;
    }
    uint32_t s32 = (uint32_t)s;
    while (len--)
        s32 = __builtin_ia32_crc32qi(s32, *p++);
    return s32;
}
#endif

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ ((c & 1) ? CRC32C_POLY_REFLECTED : 0);
        crc_table[i] = c;
    }
    crc_impl = crc_by_table;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        crc_impl = crc_by_sse42;
#endif
}

uint32_t sd_crc32c_update(uint32_t state, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return crc_impl(state, buf, len);
}

uint32_t sd_crc32c_update_table(uint32_t state, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return crc_by_table(state, buf, len);
}
