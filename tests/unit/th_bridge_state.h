/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_bridge_state.h — a live bridge's lifecycle (enum bridge_state,
 * transport/bridge/bridge_int.h) seen from the test thread, for the pairs of th_bridge.h:
 * its state now and what it waits for, read on the loop thread; the program's exit and
 * smbd_bridge_stop made there; and the changes of state each bridge logged (bridge_enter's
 * debug line), captured from stderr for the length of a test. */
#ifndef TH_BRIDGE_STATE_H
#define TH_BRIDGE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "bridge_int.h"
#include "th_bridge.h"

struct th_bridge_peek {
    int ended;                   /* on_end ran: nothing below is filled in */
    enum bridge_state state;
    enum bridge_deliver deliver;
    size_t queued;               /* delivered bytes the stream has not taken */
    size_t send_queued;          /* bytes in the engine's send queue */
    int recv_paused;             /* receive credits paused (queued is high) */
    int answers_known;           /* client role: the program's requests are tracked ... */
    size_t answers_due;          /* ... and these are not answered yet */
    int chan_busy;               /* the peer may still access channel buffers */
    int stream_held;             /* the stream is not read now (send queue full, or a
                                    message waits for memory) */
    uint64_t stream_in;          /* bytes read from the stream */
};

/* s's bridge now, read on the loop thread. */
struct th_bridge_peek th_bridge_peek(struct th_bridge_pair *p, struct th_bridge_side *s);
/* Whether s's bridge is in state within ms (looked at every 2 ms). */
int th_bridge_wait_state(struct th_bridge_pair *p, struct th_bridge_side *s,
                         enum bridge_state state, int ms);
/* Whether s's bridge ends within ms. */
int th_bridge_wait_ended(struct th_bridge_side *s, int ms);
/* The shim's exit handler (smbd_bridge_finish), on the loop thread. */
void th_bridge_finish(struct th_bridge_pair *p, struct th_bridge_side *s);
/* smbd_bridge_stop, on the loop thread. */
void th_bridge_stop(struct th_bridge_pair *p, struct th_bridge_side *s);

/* cmocka setup and teardown of a test that reads the bridges' traces: debug lines on, stderr
 * captured; at teardown restored, and what was captured printed if the test failed before
 * it collected it. */
int th_bridge_trace_setup(void **state);
int th_bridge_trace_teardown(void **state);
/* Ends the capture (after th_bridge_teardown): the traces below read what it holds. */
void th_bridge_trace_collect(void);
/* The states s's bridge went through, "OPEN HALF_CLOSED ...", from the changes it logged
 * (refused ones left out), into out. */
const char *th_bridge_trace(const struct th_bridge_side *s, char *out, size_t len);

#endif
