/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_fds.c — the open-file limit and the connections it leaves room
 * for. Each connection holds its provider's descriptors (provider.h, fds_per_qp) and
 * its backend socket; the relay keeps FDS_RESERVED for itself and FDS_PER_LOOP for
 * each event loop. A max_connections of 0 is that room; an explicit one above it is
 * warned about (connections past the room would fail on EMFILE instead of being
 * refused). */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "relay.h"

/* The relay's own descriptors: standard input, output and error, the signalfd, the
 * status socket and the clients it serves at once, systemd's notify socket, the
 * backend check, the configuration file a SIGHUP reads, the listener (with
 * soft-iWARP its epoll and timer, and the handshakes in progress before their
 * admission). */
#define FDS_RESERVED 256
#define FDS_PER_LOOP 2 /* its epoll and its eventfd */

void relay_fds_raise(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
        return;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) /* EPERM: the unit's SystemCallFilter= */
        sd_log(errno == EPERM ? SD_LOG_DEBUG : SD_LOG_WARN,
               "cannot raise the open-file limit to its hard limit %llu: %s",
               (unsigned long long)rl.rlim_max, strerror(errno));
}

void relay_fds_fit(const struct relay *r, struct sd_settings *s, int at_start)
{
    const struct sd_setting *row = &sd_settings_table[SD_SET_MAX_CONNECTIONS];
    unsigned per = r->opts.provider->fds_per_qp + 1; /* and the backend socket */
    unsigned kept = FDS_RESERVED + FDS_PER_LOOP * r->nloops;
    unsigned long long limit = 0, room;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        limit = rl.rlim_cur;
    room = limit > kept ? (limit - kept) / per : 0;
    if (room > row->max)
        room = row->max;
    if (room == 0)
        room = 1;
    if (s->max_connections == 0) {
        s->max_connections = (uint32_t)room;
        if (at_start)
            sd_notice("open files: limit %llu, %u per connection, %u kept for the relay: "
                      "max_connections %u", limit, per, kept, s->max_connections);
    } else if (s->max_connections > room) {
        sd_warn("open files: limit %llu, %u per connection, %u kept for the relay: room for "
                "%llu connections, fewer than max_connections %u; connections past that "
                "fail (raise LimitNOFILE= or ulimit -n)", limit, per, kept, room,
                s->max_connections);
    } else if (at_start) {
        sd_notice("open files: limit %llu, %u per connection, %u kept for the relay: room for "
                  "%llu connections, max_connections %u", limit, per, kept, room,
                  s->max_connections);
    }
}
