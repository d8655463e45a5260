/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_bridge.h — two bridges joined by a real soft-iWARP SMB Direct link on
 * loopback, for the bridge's tests: the passive side accepted asynchronously like the
 * relay's (a), the active side dialled like the shim's (b), each bridge fed by a stream
 * whose other end the test holds, the loop running in a thread of its own. */
#ifndef TH_BRIDGE_H
#define TH_BRIDGE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "provider.h"
#include "sd_loop.h"
#include "smbd_bridge.h"
#include "smbd_link.h"

#define TH_BRIDGE_END_MS 5000 /* the bound on a bridge's end the tests wait for */

struct th_bridge_side {
    int app_fd;                /* the test's end of the stream */
    int stream_fd;             /* the bridge's end (its fd in the bridge's log lines) */
    struct smbd_bridge *bridge;
    uint64_t chan_mem_peak;    /* the bridge's channel buffers at most (at its end) */
    uint64_t rdma_ios;         /* channel READs + WRITEs it moved by RDMA (at its end) */
    uint64_t spliced;          /* stream bytes it gave by reference (at its end) */
    uint64_t adopted;          /* stream bytes queued in the buffer they arrived in */
    int ended, end_err;        /* on_end ran (loop thread; read with __atomic_load_n) */
    char reason[256];
    uint64_t ended_at;
};

struct th_bridge_pair {
    struct sd_loop *loop;
    struct sd_listener *listener;
    int port;
    struct smbd_link_opts opts;
    struct smbd_link *passive, *active;
    struct th_bridge_side a, b; /* a: passive (relay-like), b: active (shim-like) */
    pthread_t loop_thread;
    char dial_why[256];
};

/* The providers of the passive and the active link (the listener is soft-iWARP's
 * either way); soft-iWARP unless a test sets another. */
extern const struct sd_provider_ops *th_bridge_provider;
extern const struct sd_provider_ops *th_bridge_provider_active;

/* Links up, bridges started with these options (NULL: none; b's stream is TCP when
 * tcp_b, else an AF_UNIX socketpair like a's), loop running in a thread. */
void th_bridge_setup(struct th_bridge_pair *p, int tcp_b, const struct smbd_bridge_opts *oa,
                     const struct smbd_bridge_opts *ob);
/* Closes the test's stream ends, waits (TH_BRIDGE_END_MS at most) until both bridges
 * ended, then stops the loop and checks each ended once. */
void th_bridge_teardown(struct th_bridge_pair *p);

/* Runs fn(ctx) on the loop thread and waits for it. */
void th_bridge_on_loop(struct th_bridge_pair *p, void (*fn)(void *ctx), void *ctx);

/* Reads fd until it reports EOF or ECONNRESET: the ms it took, or -1 after bound_ms.
 * reset (may be NULL): 1 when it was ECONNRESET. */
int th_bridge_wait_closed(int fd, int bound_ms, int *reset);

/* The TCP socket soft-iWARP accepted for the passive link (-1: not found). */
int th_bridge_accepted_socket(const struct th_bridge_pair *p);

/* Writes one Direct-TCP frame (blocking). */
void th_bridge_send_frame(int fd, const uint8_t *msg, size_t len);
/* Reads exactly len bytes within timeout_ms: 0, or -1 when they did not all come. */
int th_bridge_read_exact(int fd, uint8_t *buf, size_t len, int timeout_ms);
/* One frame within timeout_ms into buf (cap bytes): its length, or -1 when none came. */
long th_bridge_recv_frame(int fd, uint8_t *buf, size_t cap, int timeout_ms);

#endif
