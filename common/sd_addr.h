/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_addr.h — "HOST:PORT" text <-> socket address, for the programs'
 * command lines and for log lines ("[v6addr]:port" for IPv6). */
#ifndef SMBDIRECT_SD_ADDR_H
#define SMBDIRECT_SD_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

/* Parses HOST[:PORT] (HOST a name, IPv4 address or [IPv6] address; PORT 1-65535).
 * default_port is used when PORT is absent (0: the port stays 0 for the caller to
 * choose or reject). Resolves names with getaddrinfo (first result). 0, or -EINVAL
 * with *why set. */
int sd_addr_parse(const char *text, int default_port, struct sockaddr_storage *out,
                  socklen_t *outlen, const char **why);

/* Writes "a.b.c.d:port" or "[v6]:port" into buf; returns buf. */
char *sd_addr_format(const struct sockaddr *sa, char *buf, size_t len);

/* The port of an AF_INET/AF_INET6 address (host order; 0 for other families), and
 * setting it. */
int sd_addr_port(const struct sockaddr *sa);
void sd_addr_set_port(struct sockaddr *sa, int port);

/* 1 when a and b are the same AF_INET/AF_INET6 address and port (an IPv6 scope id
 * too), else 0 (other families never compare equal). */
int sd_addr_equal(const struct sockaddr *a, const struct sockaddr *b);

/* 1 when sa is the IPv4 or IPv6 wildcard address (0.0.0.0, ::): every local address. */
int sd_addr_is_any(const struct sockaddr *sa);

#define SD_ADDR_STRLEN 64

#endif
