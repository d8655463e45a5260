/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_prefix.c — address prefixes and prefix lists (see sd_prefix.h). */
#include "sd_prefix.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "sd_num.h"

/* The address bytes of sa as a prefix's family sees them: IPv4-mapped IPv6 addresses
 * count as IPv4. NULL for other families. */
static const uint8_t *addr_bytes(const struct sockaddr *sa, int *family)
{
    static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

    if (sa->sa_family == AF_INET) {
        *family = AF_INET;
        return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
    }
    if (sa->sa_family == AF_INET6) {
        const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

        if (memcmp(b, mapped, sizeof(mapped)) == 0) {
            *family = AF_INET;
            return b + 12;
        }
        *family = AF_INET6;
        return b;
    }
    return NULL;
}

static int in_prefix(const struct sd_prefix *p, const uint8_t *a)
{
    unsigned full = p->bits / 8, rest = p->bits % 8;

    if (memcmp(p->addr, a, full) != 0)
        return 0;
    return rest == 0 || ((p->addr[full] ^ a[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/* One entry: "ADDR" or "ADDR/BITS". */
static int parse_one(const char *s, size_t len, struct sd_prefix *p, char *err, size_t errlen)
{
    char text[64];
    const char *slash;
    uint64_t bits;
    unsigned max, nbytes;

    if (len == 0 || len >= sizeof(text)) {
        snprintf(err, errlen, "%s address prefix", len ? "too long an" : "an empty");
        return -1;
    }
    memcpy(text, s, len);
    text[len] = '\0';
    slash = strchr(text, '/');
    if (slash)
        text[slash - text] = '\0';
    memset(p, 0, sizeof(*p));
    if (inet_pton(AF_INET, text, p->addr) == 1)
        p->family = AF_INET;
    else if (inet_pton(AF_INET6, text, p->addr) == 1)
        p->family = AF_INET6;
    else {
        snprintf(err, errlen, "'%.*s' is not an IPv4 or IPv6 address prefix (e.g. 10.0.0.0/8, "
                 "fd00::/8, 192.0.2.7)", (int)len, s);
        return -1;
    }
    max = p->family == AF_INET ? 32 : 128;
    nbytes = max / 8;
    if (slash && sd_num_parse_str(slash + 1, 0, max, &bits) < 0) {
        snprintf(err, errlen, "'%.*s': the prefix length must be 0 to %u", (int)len, s, max);
        return -1;
    }
    p->bits = (uint8_t)(slash ? bits : max);
    for (unsigned i = 0; i < nbytes; i++) {
        unsigned keep = p->bits >= 8 * (i + 1) ? 8 : p->bits > 8 * i ? p->bits - 8 * i : 0;
        uint8_t mask = (uint8_t)(keep ? 0xff << (8 - keep) : 0);

        if (p->addr[i] & (uint8_t)~mask) {
            snprintf(err, errlen, "'%.*s' has bits set past its /%u prefix", (int)len, s,
                     p->bits);
            return -1;
        }
    }
    return 0;
}

int sd_prefix_parse_list(const char *text, struct sd_prefix_list *out, char *err, size_t errlen)
{
    struct sd_prefix_list l = { .n = 0 };
    const char *s = text;

    for (;;) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);

        while (len && isspace((unsigned char)*s))
            s++, len--;
        while (len && isspace((unsigned char)s[len - 1]))
            len--;
        if (l.n == SD_PREFIX_MAX) {
            snprintf(err, errlen, "more than %d address prefixes", SD_PREFIX_MAX);
            return -1;
        }
        if (parse_one(s, len, &l.p[l.n], err, errlen) < 0)
            return -1;
        l.n++;
        if (!end)
            break;
        s = end + 1;
    }
    *out = l;
    return 0;
}

int sd_prefix_list_match(const struct sd_prefix_list *l, const struct sockaddr *sa)
{
    int family;
    const uint8_t *a = addr_bytes(sa, &family);

    for (int i = 0; a && i < l->n; i++)
        if (l->p[i].family == family && in_prefix(&l->p[i], a))
            return 1;
    return 0;
}

char *sd_prefix_list_format(const struct sd_prefix_list *l, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (int i = 0; i < l->n && n < len; i++) {
        char a[INET6_ADDRSTRLEN];

        inet_ntop(l->p[i].family, l->p[i].addr, a, sizeof(a));
        n += (size_t)snprintf(buf + n, len - n, "%s%s/%u", i ? ", " : "", a, l->p[i].bits);
    }
    return buf;
}
