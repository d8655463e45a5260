/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_addrmap.c — address map parsing (every error path names the bad
 * entry or address; test_settings checks that the variable is named around it), the
 * lookup of a program's address in it and the address dialled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "addrmap.h"

static void expect_error(const char *spec, const char *want)
{
    struct am_map m;
    char err[256] = "";

    if (am_parse(spec, &m, err, sizeof(err)) != -1)
        fail_msg("spec '%s' accepted", spec);
    if (!strstr(err, want))
        fail_msg("spec '%s': error '%s' lacks '%s'", spec, err, want);
}

/* Parses spec, which must succeed. */
static void parse_ok(const char *spec, struct am_map *m)
{
    char err[256] = "";

    if (am_parse(spec, m, err, sizeof(err)) != 0)
        fail_msg("spec '%s' rejected: %s", spec, err);
}

/* A socket address of numeric text and port. */
static struct sockaddr_storage sa(const char *ip, uint16_t port)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

    memset(&ss, 0, sizeof(ss));
    if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
    } else {
        assert_int_equal(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
    }
    return ss;
}

/* The address dialled for ip under m with port (0: the entry's): "ADDR:PORT" or
 * "[ADDR]:PORT", or "unmapped". */
static const char *dialled(const struct am_map *m, const char *ip, uint16_t port, char *buf,
                           size_t len)
{
    struct sockaddr_storage from = sa(ip, 445), dst;
    const struct am_entry *e = am_find(m, (struct sockaddr *)&from);
    char text[INET6_ADDRSTRLEN];
    socklen_t dlen;

    if (!e)
        return "unmapped";
    dlen = am_dest(e, port ? port : e->port, &dst);
    if (dst.ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&dst;

        assert_int_equal(dlen, sizeof(*in));
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
        snprintf(buf, len, "%s:%u", text, ntohs(in->sin_port));
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&dst;

        assert_int_equal(dlen, sizeof(*in6));
        inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
        snprintf(buf, len, "[%s]:%u", text, ntohs(in6->sin6_port));
    }
    return buf;
}

static void test_valid(void **state)
{
    struct am_map m;
    char buf[80], text[INET6_ADDRSTRLEN];

    (void)state;
    parse_ok("", &m);
    assert_int_equal(m.n, 0);
    parse_ok("10.0.0.5=192.168.100.5, 10.0.0.6=192.168.100.6:5445 ,"
             "[2001:db8::5]=[fd00::5]:445,2001:db8::6=fd00::6,[2001:db8::7]=[fd00::7],"
             "10.0.0.8=fd00::8,2001:db8::9=192.168.100.9:9445", &m);
    assert_int_equal(m.n, 7);
    assert_int_equal(m.e[0].port, 0);
    assert_int_equal(m.e[1].port, 5445);
    assert_string_equal(am_ip_format(&m.e[2].from, text, sizeof(text)), "2001:db8::5");
    assert_string_equal(am_ip_format(&m.e[2].to, text, sizeof(text)), "fd00::5");
    assert_string_equal(dialled(&m, "10.0.0.5", 5445, buf, sizeof(buf)), "192.168.100.5:5445");
    assert_string_equal(dialled(&m, "10.0.0.6", 0, buf, sizeof(buf)), "192.168.100.6:5445");
    assert_string_equal(dialled(&m, "2001:db8::5", 0, buf, sizeof(buf)), "[fd00::5]:445");
    assert_string_equal(dialled(&m, "2001:db8::6", 445, buf, sizeof(buf)), "[fd00::6]:445");
    assert_string_equal(dialled(&m, "2001:db8::7", 1, buf, sizeof(buf)), "[fd00::7]:1");
    /* Across families both ways. */
    assert_string_equal(dialled(&m, "10.0.0.8", 445, buf, sizeof(buf)), "[fd00::8]:445");
    assert_string_equal(dialled(&m, "2001:db8::9", 0, buf, sizeof(buf)), "192.168.100.9:9445");
    /* Addresses not in the map, including a near miss. */
    assert_string_equal(dialled(&m, "10.0.0.50", 445, buf, sizeof(buf)), "unmapped");
    assert_string_equal(dialled(&m, "192.168.100.5", 445, buf, sizeof(buf)), "unmapped");
    assert_string_equal(dialled(&m, "2001:db8::55", 445, buf, sizeof(buf)), "unmapped");
}

/* An IPv4 server reached through an IPv6 socket (::ffff:a.b.c.d) is the same server:
 * it matches its IPv4 entry, and spelled that way in the map it is that entry. */
static void test_ipv4_mapped(void **state)
{
    struct am_map m;
    char buf[80], text[INET6_ADDRSTRLEN];

    (void)state;
    parse_ok("10.0.0.5=192.168.100.5,[::ffff:10.0.0.6]=::ffff:192.168.100.6", &m);
    assert_string_equal(dialled(&m, "::ffff:10.0.0.5", 445, buf, sizeof(buf)),
                        "192.168.100.5:445");
    assert_string_equal(dialled(&m, "10.0.0.6", 445, buf, sizeof(buf)), "192.168.100.6:445");
    assert_string_equal(am_ip_format(&m.e[1].from, text, sizeof(text)), "10.0.0.6");
    expect_error("10.0.0.5=192.168.100.5,::ffff:10.0.0.5=192.168.100.6",
                 "10.0.0.5 is mapped twice");
}

static void test_other_family_is_unmapped(void **state)
{
    struct sockaddr_storage ss;
    struct am_map m;

    (void)state;
    parse_ok("10.0.0.5=192.168.100.5", &m);
    memset(&ss, 0, sizeof(ss));
    ss.ss_family = AF_UNIX;
    assert_null(am_find(&m, (struct sockaddr *)&ss));
}

static void test_errors(void **state)
{
    (void)state;
    /* Not SRC=DST. */
    expect_error("10.0.0.5", "'10.0.0.5' is not addr=rdmaaddr[:port]");
    expect_error("10.0.0.5=1.2.3.4=5.6.7.8", "'10.0.0.5=1.2.3.4=5.6.7.8' is not addr=");
    expect_error("10.0.0.5=192.168.100.5,", "'' is not addr=");
    expect_error(",10.0.0.5=192.168.100.5", "'' is not addr=");
    expect_error("10.0.0.5=192.168.100.5,,10.0.0.6=192.168.100.6", "'' is not addr=");
    /* Addresses that are not numeric, or not addresses. */
    expect_error("server1=192.168.100.5", "'server1' is not a numeric IPv4 or IPv6 address");
    expect_error("10.0.0.5=storage1", "'storage1' is not a numeric");
    expect_error("10.0.0.5=", "'' is not a numeric");
    expect_error("=192.168.100.5", "'' is not a numeric");
    expect_error("10.0.0.256=192.168.100.5", "'10.0.0.256' is not a numeric");
    expect_error("10.0.5=192.168.100.5", "'10.0.5' is not a numeric");
    expect_error("10.0.0.5=fe80::1%eth0", "'fe80::1%eth0' is not a numeric");
    expect_error("10.0.0.5=[192.168.100.5]:445", "'[192.168.100.5]:445' is not a numeric IPv6");
    expect_error("[server1]=192.168.100.5", "'[server1]' is not a numeric IPv6");
    expect_error("0.0.0.0=192.168.100.5", "'0.0.0.0' names no host");
    expect_error("10.0.0.5=[::]:5445", "'::' names no host");
    /* Ports: the RDMA side only, 1..65535, IPv6 in brackets. */
    expect_error("10.0.0.5:445=192.168.100.5",
                 "'10.0.0.5:445': the server's address takes no port");
    expect_error("[2001:db8::5]:445=fd00::5", "'[2001:db8::5]:445': the server's address");
    expect_error("10.0.0.5=192.168.100.5:0",
                 "'192.168.100.5:0': the port is not a number 1..65535");
    expect_error("10.0.0.5=192.168.100.5:65536", "'192.168.100.5:65536': the port");
    expect_error("10.0.0.5=192.168.100.5:", "'192.168.100.5:': the port");
    expect_error("10.0.0.5=192.168.100.5:+445", "'192.168.100.5:+445': the port");
    expect_error("10.0.0.5=[fd00::5]:", "'[fd00::5]:': the port");
    expect_error("10.0.0.5=[fd00::5", "'[fd00::5' is not [IPv6 address]");
    expect_error("10.0.0.5=[fd00::5]445", "'[fd00::5]445' is not [IPv6 address]");
    /* Each server once. */
    expect_error("10.0.0.5=192.168.100.5,10.0.0.5=192.168.100.6", "10.0.0.5 is mapped twice");
    expect_error("2001:db8::5=fd00::5,[2001:db8:0::5]=fd00::6", "2001:db8::5 is mapped twice");
}

static void test_too_many(void **state)
{
    char spec[AM_MAX_ENTRIES * 40 + 64];
    struct am_map m;
    size_t n = 0;

    (void)state;
    for (int i = 0; i < AM_MAX_ENTRIES; i++)
        n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%s10.0.0.%d=192.168.100.%d",
                              i ? "," : "", i + 1, i + 1);
    parse_ok(spec, &m);
    assert_int_equal(m.n, AM_MAX_ENTRIES);
    snprintf(spec + n, sizeof(spec) - n, ",10.0.1.1=192.168.101.1");
    expect_error(spec, "more than 32 entries");
}

static void test_long_entry_is_quoted_in_part(void **state)
{
    char spec[300], err[256];
    struct am_map m;

    (void)state;
    memset(spec, 'x', sizeof(spec) - 1);
    spec[sizeof(spec) - 1] = '\0';
    assert_int_equal(am_parse(spec, &m, err, sizeof(err)), -1);
    assert_true(strlen(err) < 64 + 80);
    assert_int_equal(am_parse(spec, &m, NULL, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_ipv4_mapped),
        cmocka_unit_test(test_other_family_is_unmapped),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_too_many),
        cmocka_unit_test(test_long_entry_is_quoted_in_part),
    };
    return cmocka_run_group_tests_name("addrmap", tests, NULL, NULL);
}
