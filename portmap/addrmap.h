/* SPDX-License-Identifier: BSD-3-Clause */
/* portmap/addrmap.h — the address map (SMBDIRECT_ADDRMAP): a server's TCP address ->
 * the address, and optionally the port, of its RDMA interface, for servers that carry
 * RDMA on a network apart from the address their name resolves to. Numeric addresses
 * only (the shim sees only the address a program connects to); parsing does no I/O. */
#ifndef SMBDIRECT_ADDRMAP_H
#define SMBDIRECT_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define AM_MAX_ENTRIES 32

/* An IPv4 or IPv6 address; an IPv4-mapped IPv6 address is kept as its IPv4 one. */
struct am_ip {
    sa_family_t family;      /* AF_INET or AF_INET6 */
    unsigned char bytes[16]; /* the in_addr (first 4 bytes) or in6_addr */
};

struct am_entry {
    struct am_ip from, to; /* the server's TCP address, its RDMA address */
    uint16_t port;         /* the RDMA port, 0 when none is given */
};

struct am_map {
    struct am_entry e[AM_MAX_ENTRIES];
    int n;
};

/* Parses an address map such as "10.0.0.5=192.168.100.5,10.0.0.6=192.168.100.6:5445,
 * [2001:db8::5]=[fd00::5]:445"; "" is the empty map. An IPv6 address is written in
 * brackets when a port follows (bare otherwise, brackets allowed); the source takes
 * no port; each source appears at most once; at most AM_MAX_ENTRIES entries. 0, or -1
 * with a message naming the bad entry in err (the caller names where the text came
 * from). */
int am_parse(const char *spec, struct am_map *out, char *err, size_t errlen);

/* The entry whose source is addr's host (AF_INET or AF_INET6; any port), or NULL. */
const struct am_entry *am_find(const struct am_map *m, const struct sockaddr *addr);

/* *dst = e's RDMA address with port (host order); returns its length. */
socklen_t am_dest(const struct am_entry *e, uint16_t port, struct sockaddr_storage *dst);

/* Writes ip without a port ("10.0.0.5", "2001:db8::5") into buf of at least
 * INET6_ADDRSTRLEN bytes; returns buf. */
char *am_ip_format(const struct am_ip *ip, char *buf, size_t len);

#endif
