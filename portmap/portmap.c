/* SPDX-License-Identifier: BSD-3-Clause */
/* portmap/portmap.c — strict parsing of port lists and port maps (SMBDIRECT_PORTS,
 * SMBDIRECT_PORTMAP) and the SMB Direct port lookup (MS-SMB2 2.1: iWARP 5445, IB/RoCE
 * the TCP port itself). */
#include "portmap.h"

#include <string.h>

#include "pm_list.h"

int pm_parse_ports(const char *spec, struct pm_ports *out, char *err, size_t errlen)
{
    const char *pos = spec;
    struct pm_token t;
    uint16_t port;

    out->n = 0;
    if (!spec || !*spec) {
        pm_fail(err, errlen, "the list is empty: give TCP ports like \"445\" or \"445,8445\"");
        return -1;
    }
    while (pm_next_token(&pos, &t)) {
        if (pm_parse_port(t.start, t.len, &port) < 0) {
            pm_fail(err, errlen, "'%.*s' is not a port number 1..65535", PM_SHOWN(t.len),
                    t.start);
            return -1;
        }
        if (pm_ports_contains(out, port)) {
            pm_fail(err, errlen, "port %u is listed twice", port);
            return -1;
        }
        if (out->n == PM_MAX_ENTRIES) {
            pm_fail(err, errlen, "more than %d ports", PM_MAX_ENTRIES);
            return -1;
        }
        out->port[out->n++] = port;
    }
    return 0;
}

/* The map entry for tcp_port, or -1. */
static int pm_map_find(const struct pm_map *m, uint16_t tcp_port)
{
    for (int i = 0; i < m->n; i++)
        if (m->e[i].tcp == tcp_port)
            return i;
    return -1;
}

int pm_parse_map(const char *spec, struct pm_map *out, char *err, size_t errlen)
{
    const char *pos = spec;
    struct pm_token t;
    uint16_t tcp, rdma;

    out->n = 0;
    if (!spec || !*spec)
        return 0;
    while (pm_next_token(&pos, &t)) {
        const char *colon = memchr(t.start, ':', t.len);
        size_t tcp_len = colon ? (size_t)(colon - t.start) : 0;

        if (!colon || pm_parse_port(t.start, tcp_len, &tcp) < 0 ||
            pm_parse_port(colon + 1, t.len - tcp_len - 1, &rdma) < 0) {
            pm_fail(err, errlen,
                    "'%.*s' is not tcpport:rdmaport with ports 1..65535 (e.g. \"445:5445\")",
                    PM_SHOWN(t.len), t.start);
            return -1;
        }
        if (pm_map_find(out, tcp) >= 0) {
            pm_fail(err, errlen, "TCP port %u is mapped twice", tcp);
            return -1;
        }
        if (out->n == PM_MAX_ENTRIES) {
            pm_fail(err, errlen, "more than %d entries", PM_MAX_ENTRIES);
            return -1;
        }
        out->e[out->n].tcp = tcp;
        out->e[out->n].rdma = rdma;
        out->n++;
    }
    return 0;
}

int pm_ports_contains(const struct pm_ports *p, uint16_t port)
{
    for (int i = 0; i < p->n; i++)
        if (p->port[i] == port)
            return 1;
    return 0;
}

uint16_t pm_rdma_port(const struct pm_map *m, uint16_t tcp_port, int is_iwarp)
{
    int i = m ? pm_map_find(m, tcp_port) : -1;

    if (i >= 0)
        return m->e[i].rdma;
    /* MS-SMB2 2.1: SMB Direct listens on 5445 over iWARP, on 445 over IB/RoCE. */
    return is_iwarp ? PM_IWARP_DEFAULT_PORT : tcp_port;
}
