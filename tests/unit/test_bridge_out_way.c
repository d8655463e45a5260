/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_out_way.c — the bridge's way into its stream (transport/bridge/
 * bridge_to_stream.c), chosen once at start and logged once: between a relay bridge
 * (channel server) and a shim bridge (channel client) joined by soft-iWARP (th_bridge.h),
 * the program's READs go by the channel and their data, each in a channel buffer,
 * reaches the program intact. By reference (the shim's socketpair with splice_reads):
 * every byte of every READ's data went by splice, none of the headers. By copy
 * (splice_reads off, or a TCP stream, which takes no spliced pages): not one byte did.
 * The relay's side, without splice_reads, is by copy throughout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "smbd_bridge.h"
#include "th_bridge.h"
#include "th_smb2.h"
#include "th_stderr.h"

#define WAY_READS 6
#define WAY_LEN (1u << 20) /* each READ's data: a channel buffer from bridge_pool */
#define WAY_LOG "READ data goes into the stream "

static void read_data(uint8_t *b, uint64_t id, uint32_t len)
{
    for (uint32_t k = 0; k < len; k++)
        b[k] = (uint8_t)(id * 7 + k * 5);
}

/* The lines of log naming the way of the bridge on stream fd; the last one's way in way. */
static int way_lines(const char *log, int fd, char *way, size_t waylen)
{
    char key[64];
    int n = 0;

    snprintf(key, sizeof(key), "bridge fd %d: " WAY_LOG, fd);
    for (const char *p = strstr(log, key); p; p = strstr(p + 1, key)) {
        const char *w = p + strlen(key);

        snprintf(way, waylen, "%.*s", (int)strcspn(w, "\n"), w);
        n++;
    }
    return n;
}

/* WAY_READS READs of WAY_LEN bytes, one after another, the backend answering each with
 * data; then the ways both bridges logged and what each gave by reference. */
static void way_run(int tcp_b, int splice_reads, const char *want_way, uint64_t want_spliced)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096,
                                           .splice_reads = splice_reads };
    static char log[1u << 20];
    enum sd_log_level level = sd_log_get_level();
    uint8_t small[256], *msg = malloc(80 + WAY_LEN), *got = malloc(80 + WAY_LEN + 64);
    struct th_bridge_pair p;
    struct th_stderr cap;
    char way[64] = "";

    assert_non_null(msg);
    assert_non_null(got);
    sd_log_set_level(SD_LOG_DEBUG);
    th_stderr_begin(&cap);
    th_bridge_setup(&p, tcp_b, &relay, &shim);
    th_bridge_send_frame(p.a.app_fd, small, th_smb2_negotiate_resp(small, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p.b.app_fd, got, 256, 5000), 129);
    for (uint64_t id = 1; id <= WAY_READS; id++) {
        const struct th_hdr h = { .command = 8, .message_id = id };
        size_t hl;

        th_bridge_send_frame(p.b.app_fd, msg, th_smb2_plain_read(msg, id, WAY_LEN));
        assert_true(th_bridge_recv_frame(p.a.app_fd, got, 80 + WAY_LEN, 5000) > 64);
        assert_int_equal(got[12], 8); /* the READ, inline to the backend */
        hl = th_smb2_read_resp(msg, &h, 80, WAY_LEN, 0);
        read_data(msg + hl, id, WAY_LEN);
        th_bridge_send_frame(p.a.app_fd, msg, hl + WAY_LEN);
        assert_int_equal(th_bridge_recv_frame(p.b.app_fd, got, 80 + WAY_LEN + 64, 5000),
                         80 + WAY_LEN);
        assert_memory_equal(got + 80, msg + hl, WAY_LEN);
    }
    th_bridge_teardown(&p);
    th_stderr_end(&cap, log, sizeof(log));
    sd_log_set_level(level);
    free(msg);
    free(got);
    assert_int_equal(p.b.rdma_ios, WAY_READS); /* every READ by the channel */
    assert_int_equal(way_lines(log, p.b.stream_fd, way, sizeof(way)), 1);
    assert_string_equal(way, want_way);
    assert_int_equal(p.b.spliced, want_spliced);
    if (!tcp_b && !splice_reads) /* by copy: what the socketpair did not take at once was */
        assert_true(p.b.adopted > 0); /* queued in its channel buffer, not copied */
    assert_int_equal(way_lines(log, p.a.stream_fd, way, sizeof(way)), 1);
    assert_string_equal(way, "by copy");
    assert_int_equal(p.a.spliced, 0);
}

static void test_by_reference_splices_every_reads_data(void **state)
{
    (void)state;
    way_run(0, 1, "by reference (splice)", (uint64_t)WAY_READS * WAY_LEN);
}

static void test_by_copy_when_splicing_is_off(void **state)
{
    (void)state;
    way_run(0, 0, "by copy", 0);
}

static void test_by_copy_into_a_tcp_stream(void **state)
{
    (void)state;
    way_run(1, 1, "by copy", 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_reference_splices_every_reads_data),
        cmocka_unit_test(test_by_copy_when_splicing_is_off),
        cmocka_unit_test(test_by_copy_into_a_tcp_stream),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
