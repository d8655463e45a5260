/* SPDX-License-Identifier: BSD-3-Clause */
/* portmap/portmap.h — the static SMB Direct port map: which TCP ports the shim
 * tunnels (SMBDIRECT_PORTS) and which SMB Direct port each one maps to
 * (SMBDIRECT_PORTMAP, else the per-transport default). */
#ifndef SMBDIRECT_PORTMAP_H
#define SMBDIRECT_PORTMAP_H

#include <stddef.h>
#include <stdint.h>

#define PM_MAX_ENTRIES 32

/* SMB Direct default ports (MS-SMB2 2.1): iWARP 5445, InfiniBand/RoCE the TCP port. */
#define PM_IWARP_DEFAULT_PORT 5445

struct pm_ports {
    uint16_t port[PM_MAX_ENTRIES];
    int n;
};

struct pm_map {
    struct {
        uint16_t tcp, rdma;
    } e[PM_MAX_ENTRIES];
    int n;
};

/* Parses a port list such as SMBDIRECT_PORTS = "445[,PORT...]" (1..65535, no
 * duplicates, at most PM_MAX_ENTRIES, at least one). 0, or -1 with a message naming
 * the bad token in err (the caller names where the text came from). */
int pm_parse_ports(const char *spec, struct pm_ports *out, char *err, size_t errlen);

/* Parses a port map such as SMBDIRECT_PORTMAP = "tcpport:rdmaport[,...]"; "" is the
 * empty map. Each TCP port appears at most once. 0, or -1 with a message naming the
 * bad entry in err (the caller names where the text came from). */
int pm_parse_map(const char *spec, struct pm_map *out, char *err, size_t errlen);

/* 1 when port is in p, else 0. */
int pm_ports_contains(const struct pm_ports *p, uint16_t port);

/* The SMB Direct port for tcp_port: an explicit map entry wins; else 5445 when the
 * device is iWARP (soft-iWARP included), the TCP port itself on InfiniBand/RoCE. */
uint16_t pm_rdma_port(const struct pm_map *m, uint16_t tcp_port, int is_iwarp);

#endif
