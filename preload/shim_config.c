/* preload/shim_config.c — strict parsing of the shim's environment: SMBDIRECT_TRANSPORT,
 * _PORTS, _PORTMAP, _FALLBACK, _LOG, and the tuning variables. Any invalid value makes
 * the configuration invalid: the shim then fails connects to intercepted ports with
 * EINVAL (shim_tunnel.c) and every other socket passes through. */
#include "shim_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_tuning.h"

/* Records the first error only: it is the one the user must fix first. */
static void config_fail(struct shim_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void config_fail(struct shim_config *cfg, const char *fmt, ...)
{
    va_list ap;

    if (!cfg->valid)
        return;
    cfg->valid = 0;
    va_start(ap, fmt);
    vsnprintf(cfg->error, sizeof(cfg->error), fmt, ap);
    va_end(ap);
}

/* The value of var, or NULL when unset or empty (both mean "use the default"). */
static const char *env_value(const char *var)
{
    const char *v = getenv(var);

    return v && *v ? v : NULL;
}

/* Strict decimal in [min, max]: no sign, blanks or suffix. 0 or -1. */
static int parse_decimal(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;

    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (max - (unsigned long)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (unsigned long)(*s - '0');
    }
    if (v < min)
        return -1;
    *out = v;
    return 0;
}

/* Reads var as a decimal in [min, max] into *out; unset keeps *out. */
static void read_number(struct shim_config *cfg, const char *var, unsigned long min,
                        unsigned long max, unsigned long *out)
{
    const char *v = env_value(var);

    if (v && parse_decimal(v, min, max, out) < 0)
        config_fail(cfg, "%s='%s' is invalid: use a whole number from %lu to %lu", var, v, min,
                    max);
}

static void read_transport(struct shim_config *cfg)
{
    static const struct { const char *name; enum shim_transport t; } names[] = {
        { "auto", SHIM_TRANSPORT_AUTO }, { "rdma", SHIM_TRANSPORT_RDMA },
        { "soft", SHIM_TRANSPORT_SOFT }, { "tcp", SHIM_TRANSPORT_TCP },
    };
    const char *v = env_value("SMBDIRECT_TRANSPORT");

    cfg->transport = SHIM_TRANSPORT_AUTO;
    if (!v)
        return;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(v, names[i].name) == 0) {
            cfg->transport = names[i].t;
            return;
        }
    }
    config_fail(cfg, "SMBDIRECT_TRANSPORT='%s' is invalid: use auto, rdma, soft or tcp", v);
}

static void read_fallback(struct shim_config *cfg)
{
    const char *v = env_value("SMBDIRECT_FALLBACK");

    cfg->fallback = SHIM_FALLBACK_TCP;
    if (!v || strcmp(v, "tcp") == 0)
        return;
    if (strcmp(v, "none") == 0)
        cfg->fallback = SHIM_FALLBACK_NONE;
    else
        config_fail(cfg, "SMBDIRECT_FALLBACK='%s' is invalid: use tcp or none", v);
}

static void read_ports(struct shim_config *cfg)
{
    const char *ports = env_value("SMBDIRECT_PORTS");
    const char *map = env_value("SMBDIRECT_PORTMAP");
    char err[200];

    if (ports && pm_parse_ports(ports, &cfg->ports, err, sizeof(err)) < 0) {
        config_fail(cfg, "%s (SMBDIRECT_PORTS='%s')", err, ports);
        ports = NULL;
    }
    /* With no usable list, the default one still decides which connects fail. */
    if (!ports && pm_parse_ports(SHIM_DEFAULT_PORTS, &cfg->ports, NULL, 0) < 0)
        cfg->ports.n = 0;
    cfg->portmap.n = 0;
    if (map && pm_parse_map(map, &cfg->portmap, err, sizeof(err)) < 0)
        config_fail(cfg, "%s (SMBDIRECT_PORTMAP='%s')", err, map);
}

/* SMBDIRECT_CREDITS, _MAX_SEND_SIZE, _MAX_RECEIVE_SIZE, _MAX_FRAGMENTED_SIZE,
 * _MAX_READ_WRITE_SIZE, _KEEPALIVE over the engine's active-role defaults. */
static void read_tuning(struct shim_config *cfg)
{
    struct smbd_config *s = &cfg->smbd;
    unsigned long credits = s->receive_credit_max, send = s->max_send_size;
    unsigned long recv = s->max_receive_size, frag = s->max_fragmented_recv_size;
    unsigned long rw = s->max_read_write_size, keepalive = s->keepalive_interval_ms / 1000;
    const char *bad;

    /* MS-SMBD 2.2.1 / 3.1.5.2: credits are 16-bit and at least 1 (the engine needs 3,
     * see smbd_config_check); tshark and the Linux peers expect <= 255.
     * Sizes: MaxReceiveSize >= 128, MaxFragmentedSize >= 131072 (MS-SMBD 3.1.5.6). Keepalive 0 sends none (3.1.6.2 timer unset). */
    read_number(cfg, "SMBDIRECT_CREDITS", SMBD_MIN_PEER_CREDITS, 255, &credits);
    read_number(cfg, "SMBDIRECT_MAX_SEND_SIZE", 128, 1024 * 1024, &send);
    read_number(cfg, "SMBDIRECT_MAX_RECEIVE_SIZE", 128, 1024 * 1024, &recv);
    read_number(cfg, "SMBDIRECT_MAX_FRAGMENTED_SIZE", 131072, 64UL * 1024 * 1024, &frag);
    read_number(cfg, "SMBDIRECT_MAX_READ_WRITE_SIZE", 4096, 64UL * 1024 * 1024, &rw);
    read_number(cfg, "SMBDIRECT_KEEPALIVE", 0, 3600, &keepalive);
    s->receive_credit_max = (uint16_t)credits;
    s->send_credit_target = (uint16_t)credits;
    s->max_send_size = (uint32_t)send;
    s->max_receive_size = (uint32_t)recv;
    s->max_fragmented_recv_size = (uint32_t)frag;
    s->max_read_write_size = (uint32_t)rw;
    s->keepalive_interval_ms = (uint32_t)keepalive * 1000;
    bad = smbd_config_check(s);
    if (bad)
        config_fail(cfg, "SMB Direct tuning rejected by the engine: %s "
                    "(check SMBDIRECT_CREDITS and SMBDIRECT_MAX_* values)", bad);
}

static void read_limits(struct shim_config *cfg)
{
    unsigned long timeout = SHIM_DEFAULT_CONNECT_TIMEOUT_MS, sockbuf = SHIM_DEFAULT_SOCKBUF;

    read_number(cfg, "SMBDIRECT_CONNECT_TIMEOUT", 1, 600000, &timeout);
    read_number(cfg, "SMBDIRECT_SOCKBUF", 65536, 256UL * 1024 * 1024, &sockbuf);
    cfg->connect_timeout_ms = (int)timeout;
    cfg->sockbuf_bytes = (int)sockbuf;
    /* The negotiate is part of the connect: it never outlives the connect timeout. */
    if (cfg->smbd.negotiate_timeout_ms > (uint32_t)timeout)
        cfg->smbd.negotiate_timeout_ms = (uint32_t)timeout;
}

int shim_config_load(struct shim_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->valid = 1;
    if (sd_log_init_from_env() < 0)
        config_fail(cfg, "SMBDIRECT_LOG='%s' is invalid: use debug, info, warn or error",
                    getenv("SMBDIRECT_LOG"));
    sd_tuning_defaults(&cfg->smbd, SMBD_ROLE_ACTIVE);
    read_transport(cfg);
    read_ports(cfg);
    read_fallback(cfg);
    read_tuning(cfg);
    read_limits(cfg);
    if (cfg->valid)
        return 0;
    sd_error("%s; connects to SMB ports will fail with EINVAL until it is fixed", cfg->error);
    return -1;
}

static struct shim_config process_config;
static pthread_once_t process_config_once = PTHREAD_ONCE_INIT;

static void load_process_config(void)
{
    int saved = errno;

    shim_config_load(&process_config);
    errno = saved;
}

const struct shim_config *shim_config_get(void)
{
    pthread_once(&process_config_once, load_process_config);
    return &process_config;
}
