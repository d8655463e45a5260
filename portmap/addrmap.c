/* SPDX-License-Identifier: BSD-3-Clause */
/* portmap/addrmap.c — strict parsing of the address map (SMBDIRECT_ADDRMAP) and the
 * lookup of a server's TCP address in it (see addrmap.h). */
#include "addrmap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "pm_list.h"


/* Bytes of ip's family. */
static size_t ip_size(sa_family_t family)
{
    return family == AF_INET ? sizeof(struct in_addr) : sizeof(struct in6_addr);
}

/* ip from the family and the address bytes, an IPv4-mapped IPv6 address as IPv4. */
static void ip_set(struct am_ip *ip, sa_family_t family, const void *bytes)
{
    memset(ip, 0, sizeof(*ip));
    if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)bytes)) {
        ip->family = AF_INET;
        memcpy(ip->bytes, (const unsigned char *)bytes + 12, sizeof(struct in_addr));
        return;
    }
    ip->family = family;
    memcpy(ip->bytes, bytes, ip_size(family));
}

static int ip_equal(const struct am_ip *a, const struct am_ip *b)
{
    return a->family == b->family && memcmp(a->bytes, b->bytes, ip_size(a->family)) == 0;
}

/* 1 for 0.0.0.0 and ::, which name no host. */
static int ip_unspecified(const struct am_ip *ip)
{
    static const unsigned char zero[16];

    return memcmp(ip->bytes, zero, ip_size(ip->family)) == 0;
}

/* Parses exactly [s, s+len) as a numeric address: IPv6 only when v6_only (it was in
 * brackets), else IPv4 or IPv6. 0 or -1. */
static int parse_ip(const char *s, size_t len, int v6_only, struct am_ip *ip)
{
    char text[INET6_ADDRSTRLEN];
    unsigned char bytes[sizeof(struct in6_addr)];

    if (len == 0 || len >= sizeof(text))
        return -1;
    memcpy(text, s, len);
    text[len] = '\0';
    if (!v6_only && inet_pton(AF_INET, text, bytes) == 1) {
        ip_set(ip, AF_INET, bytes);
        return 0;
    }
    if (inet_pton(AF_INET6, text, bytes) == 1) {
        ip_set(ip, AF_INET6, bytes);
        return 0;
    }
    return -1;
}

/* Parses one side of an entry, [s, s+len): A.B.C.D, an IPv6 address or [IPv6], and
 * when port is not NULL A.B.C.D:PORT or [IPv6]:PORT too (*port 0 without one). 0, or
 * -1 with err. */
static int parse_side(const char *s, size_t len, struct am_ip *ip, uint16_t *port, char *err,
                      size_t errlen)
{
    const char *end = s + len, *host = s, *port_text = NULL;
    const char *colon = memchr(s, ':', len);
    size_t host_len = len;
    int bracket = len > 0 && s[0] == '[';

    if (bracket) {
        const char *close = memchr(s, ']', len);

        if (!close || (close + 1 < end && close[1] != ':')) {
            pm_fail(err, errlen, "'%.*s' is not [IPv6 address] or [IPv6 address]:port",
                    PM_SHOWN(len), s);
            return -1;
        }
        host = s + 1;
        host_len = (size_t)(close - host);
        port_text = close + 1 < end ? close + 2 : NULL;
    } else if (colon && !memchr(colon + 1, ':', (size_t)(end - colon - 1))) {
        host_len = (size_t)(colon - s); /* one colon: A.B.C.D:PORT; more: IPv6 */
        port_text = colon + 1;
    }
    if (port_text && !port) {
        pm_fail(err, errlen, "'%.*s': the server's address takes no port (the map applies "
                "to every tunneled port)", PM_SHOWN(len), s);
        return -1;
    }
    if (port_text && pm_parse_port(port_text, (size_t)(end - port_text), port) < 0) {
        pm_fail(err, errlen, "'%.*s': the port is not a number 1..65535", PM_SHOWN(len), s);
        return -1;
    }
    if (!port_text && port)
        *port = 0;
    if (parse_ip(host, host_len, bracket, ip) < 0) {
        if (bracket)
            pm_fail(err, errlen, "'%.*s' is not a numeric IPv6 address (brackets are for "
                    "IPv6 only)", PM_SHOWN(len), s);
        else
            pm_fail(err, errlen, "'%.*s' is not a numeric IPv4 or IPv6 address (names are "
                    "not resolved; an IPv6 address with a port is written [ADDR]:PORT)",
                    PM_SHOWN(host_len), host);
        return -1;
    }
    if (ip_unspecified(ip)) {
        pm_fail(err, errlen, "'%.*s' names no host", PM_SHOWN(host_len), host);
        return -1;
    }
    return 0;
}

const struct am_entry *am_find(const struct am_map *m, const struct sockaddr *addr)
{
    struct am_ip ip;

    if (addr->sa_family == AF_INET)
        ip_set(&ip, AF_INET, &((const struct sockaddr_in *)addr)->sin_addr);
    else if (addr->sa_family == AF_INET6)
        ip_set(&ip, AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr);
    else
        return NULL;
    for (int i = 0; i < m->n; i++)
        if (ip_equal(&m->e[i].from, &ip))
            return &m->e[i];
    return NULL;
}

int am_parse(const char *spec, struct am_map *out, char *err, size_t errlen)
{
    const char *pos = spec;
    struct pm_token t;
    char shown[INET6_ADDRSTRLEN];

    out->n = 0;
    if (!spec || !*spec)
        return 0;
    while (pm_next_token(&pos, &t)) {
        const char *eq = memchr(t.start, '=', t.len);
        struct am_entry e;
        size_t from_len = eq ? (size_t)(eq - t.start) : 0;

        if (!eq || memchr(eq + 1, '=', t.len - from_len - 1)) {
            pm_fail(err, errlen, "'%.*s' is not addr=rdmaaddr[:port] (e.g. "
                    "\"10.0.0.5=192.168.100.5:5445\")", PM_SHOWN(t.len), t.start);
            return -1;
        }
        if (parse_side(t.start, from_len, &e.from, NULL, err, errlen) < 0 ||
            parse_side(eq + 1, t.len - from_len - 1, &e.to, &e.port, err, errlen) < 0)
            return -1;
        for (int i = 0; i < out->n; i++) {
            if (ip_equal(&out->e[i].from, &e.from)) {
                pm_fail(err, errlen, "%s is mapped twice",
                        am_ip_format(&e.from, shown, sizeof(shown)));
                return -1;
            }
        }
        if (out->n == AM_MAX_ENTRIES) {
            pm_fail(err, errlen, "more than %d entries", AM_MAX_ENTRIES);
            return -1;
        }
        out->e[out->n++] = e;
    }
    return 0;
}

socklen_t am_dest(const struct am_entry *e, uint16_t port, struct sockaddr_storage *dst)
{
    struct sockaddr_in *in = (struct sockaddr_in *)dst;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)dst;

    memset(dst, 0, sizeof(*dst));
    if (e->to.family == AF_INET) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        memcpy(&in->sin_addr, e->to.bytes, sizeof(in->sin_addr));
        return sizeof(*in);
    }
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    memcpy(&in6->sin6_addr, e->to.bytes, sizeof(in6->sin6_addr));
    return sizeof(*in6);
}

char *am_ip_format(const struct am_ip *ip, char *buf, size_t len)
{
    if (!inet_ntop(ip->family, ip->bytes, buf, (socklen_t)len) && len > 0)
        buf[0] = '\0'; /* len below INET6_ADDRSTRLEN */
    return buf;
}
