/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings.c — parsing one setting's text into its typed value,
 * the defaults, and what the values make of a link and a provider (see sd_settings.h). */
#include "sd_settings.h"

#include <stdio.h>
#include <string.h>

#include "sd_addr.h"
#include "sd_num.h"

/* A parsed value, before it is stored in its field. */
union sd_value {
    uint64_t num;
    unsigned word;
    enum sd_log_level level;
    struct pm_ports ports;
    struct pm_map map;
    struct sd_hostport hostport;
    struct sd_prefix_list prefixes;
    char path[SD_PATH_MAX];
    struct am_map addrmap;
};

/* Row id's field in s. */
static void *field(struct sd_settings *s, enum sd_setting_id id)
{
    switch (id) {
    case SD_SET_TRANSPORT: return &s->transport;
    case SD_SET_PORTS: return &s->ports;
    case SD_SET_PORTMAP: return &s->portmap;
    case SD_SET_ADDRMAP: return &s->addrmap;
    case SD_SET_FALLBACK: return &s->fallback;
    case SD_SET_LOG: return &s->log_level;
    case SD_SET_CONNECT_TIMEOUT: return &s->connect_timeout_ms;
    case SD_SET_CREDITS: return &s->credits;
    case SD_SET_MAX_SEND_SIZE: return &s->max_send_size;
    case SD_SET_MAX_RECEIVE_SIZE: return &s->max_receive_size;
    case SD_SET_MAX_FRAGMENTED_SIZE: return &s->max_fragmented_size;
    case SD_SET_MAX_READ_WRITE_SIZE: return &s->max_read_write_size;
    case SD_SET_KEEPALIVE: return &s->keepalive_s;
    case SD_SET_IRD: return &s->ird;
    case SD_SET_ORD: return &s->ord;
    case SD_SET_RDMA_THRESHOLD: return &s->rdma_threshold;
    case SD_SET_CHANNEL_IO_SIZE: return &s->channel_io_size;
    case SD_SET_CHANNEL_MEMORY: return &s->channel_memory;
    case SD_SET_CHANNEL_MEMORY_TOTAL: return &s->channel_memory_total;
    case SD_SET_SOCKBUF: return &s->sockbuf;
    case SD_SET_SOFT_CRC: return &s->soft_crc;
    case SD_SET_SOFT_HANDSHAKE_MS: return &s->soft_handshake_ms;
    case SD_SET_LISTEN: return &s->listen;
    case SD_SET_BACKEND: return &s->backend;
    case SD_SET_ALLOW: return &s->allow;
    case SD_SET_SERVE_ADDRESSES: return &s->serve_addresses;
    case SD_SET_MAX_CONNECTIONS: return &s->max_connections;
    case SD_SET_MAX_CONNECTIONS_PER_CLIENT: return &s->max_connections_per_client;
    case SD_SET_DRAIN_TIME: return &s->drain_time_s;
    case SD_SET_STATUS_SOCKET: return s->status_socket;
    case SD_SET_LOOPS: return &s->loops;
    case SD_SET_BUSY_POLL: return &s->busy_poll_us;
    case SD_SET_DIRECT_SEND: return &s->direct_send;
    case SD_SET_SPLICE: return &s->splice;
    case SD_SET_COUNT: break;
    }
    return NULL;
}

/* A CHOICE row's field is an enum or an int, read and written as an int (an enum of
 * non-negative values is unsigned int here, which an int may access). */
_Static_assert(sizeof(enum sd_transport) == sizeof(int) &&
                   sizeof(enum sd_fallback) == sizeof(int),
               "CHOICE fields are int-sized");

static void store(struct sd_settings *s, enum sd_setting_id id, const union sd_value *v)
{
    void *f = field(s, id);

    switch (sd_settings_table[id].kind) {
    case SD_KIND_NUMBER: *(uint32_t *)f = (uint32_t)v->num; break;
    case SD_KIND_CHOICE: *(int *)f = (int)v->word; break;
    case SD_KIND_LOG: *(enum sd_log_level *)f = v->level; break;
    case SD_KIND_PORTS: *(struct pm_ports *)f = v->ports; break;
    case SD_KIND_PORTMAP: *(struct pm_map *)f = v->map; break;
    case SD_KIND_ADDRMAP: *(struct am_map *)f = v->addrmap; break;
    case SD_KIND_HOSTPORT: *(struct sd_hostport *)f = v->hostport; break;
    case SD_KIND_PREFIXES: *(struct sd_prefix_list *)f = v->prefixes; break;
    case SD_KIND_PATH: memcpy(f, v->path, sizeof(v->path)); break;
    }
}

static const char *const unit_words[] = {
    [SD_UNIT_NONE] = "", [SD_UNIT_BYTES] = " of bytes",
    [SD_UNIT_US] = " of microseconds", [SD_UNIT_MS] = " of milliseconds",
    [SD_UNIT_S] = " of seconds",
};

/* The i-th word of a CHOICE or LOG row, NULL past the last. */
static const char *word(const struct sd_setting *row, unsigned i)
{
    if (row->kind == SD_KIND_LOG)
        return i <= SD_LOG_ERROR ? sd_log_level_name((enum sd_log_level)i) : NULL;
    return row->choices[i];
}

char *sd_settings_words(const struct sd_setting *row, const char *open, const char *close,
                        const char *sep, const char *last, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (unsigned i = 0; word(row, i) && n < len; i++) {
        const char *between = i == 0 ? "" : word(row, i + 1) ? sep : last;

        n += (size_t)snprintf(buf + n, len - n, "%s%s%s%s", between, open, word(row, i), close);
    }
    return buf;
}

/* HOST:PORT with the port required; empty text leaves it unset. */
static int parse_hostport(const char *text, struct sd_hostport *hp, char *why, size_t whylen)
{
    const char *bad = NULL;

    memset(hp, 0, sizeof(*hp));
    if (!*text)
        return 0;
    if (sd_addr_parse(text, 0, &hp->addr, &hp->len, &bad) == 0 &&
        sd_addr_port((struct sockaddr *)&hp->addr) == 0)
        bad = "a port is required";
    if (!bad)
        return 0;
    snprintf(why, whylen, "%s: use HOST:PORT (a name, an IPv4 address or an [IPv6] address)",
             bad);
    return -1;
}

/* An absolute path short enough for a UNIX socket, or none (stored empty). */
static int parse_path(const char *text, char *path, char *why, size_t whylen)
{
    if (strcmp(text, "none") == 0)
        text = "";
    else if (text[0] != '/' || strlen(text) >= SD_PATH_MAX) {
        snprintf(why, whylen, "use an absolute path of at most %d bytes, or none",
                 SD_PATH_MAX - 1);
        return -1;
    }
    snprintf(path, SD_PATH_MAX, "%s", text);
    return 0;
}

/* Parses text for row into v. 0, or -1 with what the row accepts in why. */
static int parse(const struct sd_setting *row, const char *text, union sd_value *v, char *why,
                 size_t whylen)
{
    char words[128];

    switch (row->kind) {
    case SD_KIND_NUMBER:
        if (sd_num_parse_str(text, row->min, row->max, &v->num) == 0)
            return 0;
        snprintf(why, whylen, "use a whole number%s from %llu to %llu", unit_words[row->unit],
                 (unsigned long long)row->min, (unsigned long long)row->max);
        return -1;
    case SD_KIND_PORTS:
        return pm_parse_ports(text, &v->ports, why, whylen);
    case SD_KIND_PORTMAP:
        return pm_parse_map(text, &v->map, why, whylen);
    case SD_KIND_HOSTPORT:
        return parse_hostport(text, &v->hostport, why, whylen);
    case SD_KIND_PREFIXES:
        return sd_prefix_parse_list(text, &v->prefixes, why, whylen);
    case SD_KIND_PATH:
        return parse_path(text, v->path, why, whylen);
    case SD_KIND_ADDRMAP:
        return am_parse(text, &v->addrmap, why, whylen);
    case SD_KIND_LOG:
        if (sd_log_parse_level(text, &v->level) == 0)
            return 0;
        break;
    case SD_KIND_CHOICE:
        for (v->word = 0; row->choices[v->word]; v->word++)
            if (strcmp(text, row->choices[v->word]) == 0)
                return 0;
        break;
    }
    snprintf(why, whylen, "use %s",
             sd_settings_words(row, "", "", ", ", " or ", words, sizeof(words)));
    return -1;
}

int sd_settings_set(struct sd_settings *s, enum sd_program prog, enum sd_setting_id id,
                    const char *text, char *why, size_t whylen)
{
    const struct sd_setting *row = &sd_settings_table[id];
    union sd_value v;

    memset(&v, 0, sizeof(v)); /* unused bytes too: settings compare with memcmp (SIGHUP) */
    if (!*text)
        text = row->def[prog];
    if (parse(row, text, &v, why, whylen) < 0)
        return -1;
    if (id == SD_SET_TRANSPORT && v.word == SD_TRANSPORT_TCP && prog != SD_PROG_SHIM) {
        snprintf(why, whylen, "the relay and the probe speak SMB Direct only (tcp is for "
                 "the shim)");
        return -1;
    }
    store(s, id, &v);
    return 0;
}

const void *sd_settings_field(const struct sd_settings *s, enum sd_setting_id id)
{
    return field((struct sd_settings *)s, id);
}

void sd_settings_defaults(struct sd_settings *s, enum sd_program prog)
{
    char why[256];

    memset(s, 0, sizeof(*s));
    /* Every default parses (test_settings checks each against its bounds). */
    for (int id = 0; id < SD_SET_COUNT; id++)
        sd_settings_set(s, prog, (enum sd_setting_id)id, "", why, sizeof(why));
}

void sd_settings_link_opts(const struct sd_settings *s, enum smbd_role role,
                           struct smbd_link_opts *o)
{
    struct smbd_config *c = &o->cfg;

    memset(o, 0, sizeof(*o));
    smbd_config_default(c, role);
    c->receive_credit_max = (uint16_t)s->credits;
    c->send_credit_target = (uint16_t)s->credits;
    c->max_send_size = s->max_send_size;
    c->max_receive_size = s->max_receive_size;
    c->max_fragmented_recv_size = s->max_fragmented_size;
    c->max_read_write_size = s->max_read_write_size;
    c->keepalive_interval_ms = s->keepalive_s * 1000u; /* 0: no keepalive (3.1.6.2) */
    /* The negotiation is part of the connect or accept: it never outlives its bound. */
    if (c->negotiate_timeout_ms > s->connect_timeout_ms)
        c->negotiate_timeout_ms = s->connect_timeout_ms;
    o->ird = s->ird;
    o->ord = s->ord;
    o->want_crc = s->soft_crc;
    o->timeout_ms = (int)s->connect_timeout_ms;
    /* The shim's I/O is at most the channel's size; the relay's at most MaxReadWriteSize. */
    o->io_size = role == SMBD_ROLE_ACTIVE ? s->channel_io_size : 0;
}

void sd_settings_listen_params(const struct sd_settings *s, int backlog,
                               struct sd_listen_params *lp)
{
    lp->backlog = backlog;
    lp->handshake_ms = (int)s->soft_handshake_ms;
}

const struct sd_provider_ops *sd_settings_provider(enum sd_transport t)
{
    switch (t) {
    case SD_TRANSPORT_AUTO:
        return sd_verbs_device_present() ? &sd_verbs_provider : &sd_soft_provider;
    case SD_TRANSPORT_RDMA: return &sd_verbs_provider;
    case SD_TRANSPORT_SOFT: return &sd_soft_provider;
    case SD_TRANSPORT_TCP: break;
    }
    return NULL;
}

int sd_settings_reach(enum sd_transport t, const struct sd_provider_ops *p,
                      const struct sockaddr *dst, socklen_t len,
                      const struct sd_provider_ops **out, int *is_iwarp)
{
    int rc = p->is_iwarp(dst, len);

    if (rc < 0 && t == SD_TRANSPORT_AUTO && p != &sd_soft_provider) {
        p = &sd_soft_provider;
        rc = p->is_iwarp(dst, len);
    }
    if (rc < 0)
        return rc;
    *out = p;
    *is_iwarp = rc;
    return 0;
}
