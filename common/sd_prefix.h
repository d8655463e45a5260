/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_prefix.h — address prefixes (CIDR: "10.0.0.0/8", "fd00::/8", a bare address
 * for one host) and lists of them: the relay's access list (SMBDIRECT_ALLOW). Parsing
 * and matching only, no I/O. An IPv4-mapped IPv6 peer (::ffff:a.b.c.d, a dual-stack
 * listener's view of an IPv4 client) matches the IPv4 prefixes. */
#ifndef SMBDIRECT_SD_PREFIX_H
#define SMBDIRECT_SD_PREFIX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SD_PREFIX_MAX 64

struct sd_prefix {
    int family;        /* AF_INET or AF_INET6 */
    uint8_t addr[16];  /* network order; 4 bytes used for AF_INET, host bits zero */
    uint8_t bits;      /* prefix length: 0-32 or 0-128 */
};

struct sd_prefix_list {
    struct sd_prefix p[SD_PREFIX_MAX];
    int n;
};

/* Parses "PREFIX[,PREFIX...]" (blanks around entries allowed; at least one, at most
 * SD_PREFIX_MAX, numeric addresses only). A prefix with host bits set is refused, as a
 * likely typo ("10.1.2.3/8"). 0, or -1 with what is wrong with which entry in err. */
int sd_prefix_parse_list(const char *text, struct sd_prefix_list *out, char *err, size_t errlen);

/* 1 when sa (AF_INET or AF_INET6) lies in one of the list's prefixes, else 0. */
int sd_prefix_list_match(const struct sd_prefix_list *l, const struct sockaddr *sa);

/* Writes the list back as text ("10.0.0.0/8, ::1/128"); returns buf. */
char *sd_prefix_list_format(const struct sd_prefix_list *l, char *buf, size_t len);

#endif
