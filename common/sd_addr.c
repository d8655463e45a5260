/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_addr.c — HOST:PORT parsing and formatting (see sd_addr.h). */
#include "sd_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_num.h"

static int parse_port(const char *s, int *port)
{
    uint64_t v;

    if (sd_num_parse_str(s, 1, 65535, &v) < 0)
        return -1;
    *port = (int)v;
    return 0;
}

int sd_addr_parse(const char *text, int default_port, struct sockaddr_storage *out,
                  socklen_t *outlen, const char **why)
{
    char host[256];
    const char *port_text = NULL, *colon;
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    size_t hlen;
    int port = default_port;

    if (text[0] == '[') { /* [v6]:port */
        const char *close = strchr(text, ']');

        if (!close || (close[1] && close[1] != ':')) {
            *why = "IPv6 addresses are written [ADDR] or [ADDR]:PORT";
            return -EINVAL;
        }
        hlen = (size_t)(close - text - 1);
        text++;
        port_text = close[1] ? close + 2 : NULL;
        hints.ai_flags = AI_NUMERICHOST;
    } else {
        colon = strrchr(text, ':');
        if (colon && strchr(text, ':') != colon) {
            *why = "IPv6 addresses must be written in brackets: [ADDR]:PORT";
            return -EINVAL;
        }
        hlen = colon ? (size_t)(colon - text) : strlen(text);
        port_text = colon ? colon + 1 : NULL;
    }
    if (hlen == 0 || hlen >= sizeof(host)) {
        *why = "missing or too long host name";
        return -EINVAL;
    }
    memcpy(host, text, hlen);
    host[hlen] = '\0';
    if (port_text && parse_port(port_text, &port) < 0) {
        *why = "port must be a number from 1 to 65535";
        return -EINVAL;
    }
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
        *why = "cannot resolve host";
        return -EINVAL;
    }
    memcpy(out, res->ai_addr, res->ai_addrlen);
    *outlen = res->ai_addrlen;
    freeaddrinfo(res);
    if (out->ss_family != AF_INET && out->ss_family != AF_INET6) {
        *why = "host is neither IPv4 nor IPv6";
        return -EINVAL;
    }
    sd_addr_set_port((struct sockaddr *)out, port);
    return 0;
}

int sd_addr_port(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    if (sa->sa_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    return 0;
}

void sd_addr_set_port(struct sockaddr *sa, int port)
{
    if (sa->sa_family == AF_INET)
        ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
    else if (sa->sa_family == AF_INET6)
        ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
}

int sd_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family || sd_addr_port(a) != sd_addr_port(b))
        return 0;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a;
        const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)b;

        return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0 &&
               x->sin6_scope_id == y->sin6_scope_id;
    }
    return 0;
}

int sd_addr_is_any(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

char *sd_addr_format(const struct sockaddr *sa, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
        snprintf(buf, len, "%s:%u", ip, ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
        snprintf(buf, len, "[%s]:%u", ip, ntohs(in6->sin6_port));
    } else {
        snprintf(buf, len, "(family %d)", sa->sa_family);
    }
    return buf;
}
