/* transport/settings/sd_tuning.c — the table of named link settings and the tuned defaults
 * (see sd_tuning.h). */
#include "sd_tuning.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tuning_field {
    T_CREDITS, T_SEND_CREDIT_TARGET, T_RECEIVE_CREDIT_MAX, T_MAX_SEND, T_MAX_RECEIVE,
    T_MAX_FRAGMENTED, T_MAX_READ_WRITE, T_KEEPALIVE, T_IRD, T_ORD
};

struct tuning {
    const char *name;
    enum tuning_field field;
    uint64_t min, max;
};

static const struct tuning tunings[] = {
    { "credits", T_CREDITS, SMBD_MIN_PEER_CREDITS, 65535 },
    { "send-credit-target", T_SEND_CREDIT_TARGET, 1, 65535 },
    { "receive-credit-max", T_RECEIVE_CREDIT_MAX, SMBD_MIN_PEER_CREDITS, 65535 },
    { "max-send-size", T_MAX_SEND, 1, UINT32_MAX },
    { "max-receive-size", T_MAX_RECEIVE, 1, UINT32_MAX },
    { "max-fragmented-size", T_MAX_FRAGMENTED, 1, UINT32_MAX },
    { "max-read-write-size", T_MAX_READ_WRITE, 1, UINT32_MAX },
    { "keepalive", T_KEEPALIVE, 0, UINT32_MAX / 1000 },
    { "ird", T_IRD, 1, 65535 },
    { "ord", T_ORD, 1, 65535 },
};

const char sd_tuning_usage[] =
    "  --credits N              receive credits offered and send credits asked for\n"
    "                           (sets both of the next two; default 255)\n"
    "  --send-credit-target N   send credits asked of the peer (default 255)\n"
    "  --receive-credit-max N   receives posted and credits granted (default 255)\n"
    "  --max-send-size BYTES    preferred send size (default 8136)\n"
    "  --max-receive-size BYTES size of each posted receive (default 8192)\n"
    "  --max-fragmented-size BYTES\n"
    "                           largest message reassembled from fragments\n"
    "  --max-read-write-size BYTES\n"
    "                           largest RDMA read/write (default 8388608)\n"
    "  --keepalive SECONDS      idle time before a keepalive (0: none; default 120)\n"
    "  --ird N, --ord N         RDMA read depths offered and asked for (default 16)\n";

void sd_tuning_defaults(struct smbd_config *cfg, enum smbd_role role)
{
    smbd_config_default(cfg, role);
    cfg->max_send_size = SD_TUNED_MAX_SEND_SIZE;
}

static const struct tuning *tuning_find(const char *name)
{
    for (size_t i = 0; i < sizeof(tunings) / sizeof(tunings[0]); i++)
        if (strcmp(tunings[i].name, name) == 0)
            return &tunings[i];
    return NULL;
}

const char *sd_tuning_name(size_t i)
{
    return i < sizeof(tunings) / sizeof(tunings[0]) ? tunings[i].name : NULL;
}

int sd_tuning_set(struct smbd_link_opts *o, const char *name, const char *value, char *err,
                  size_t errlen)
{
    const struct tuning *t = tuning_find(name);
    struct smbd_config *c = &o->cfg;
    unsigned long long v;
    char *end;

    if (!t) {
        snprintf(err, errlen, "unknown setting '%s'", name);
        return -EINVAL;
    }
    errno = 0;
    v = value && value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
    if (!value || value[0] < '0' || value[0] > '9' || errno || *end || v < t->min ||
        v > t->max) {
        snprintf(err, errlen, "%s: '%s' is not a number from %llu to %llu", name,
                 value ? value : "", (unsigned long long)t->min, (unsigned long long)t->max);
        return -EINVAL;
    }
    switch (t->field) {
    case T_CREDITS: c->send_credit_target = c->receive_credit_max = (uint16_t)v; break;
    case T_SEND_CREDIT_TARGET: c->send_credit_target = (uint16_t)v; break;
    case T_RECEIVE_CREDIT_MAX: c->receive_credit_max = (uint16_t)v; break;
    case T_MAX_SEND: c->max_send_size = (uint32_t)v; break;
    case T_MAX_RECEIVE: c->max_receive_size = (uint32_t)v; break;
    case T_MAX_FRAGMENTED: c->max_fragmented_recv_size = (uint32_t)v; break;
    case T_MAX_READ_WRITE: c->max_read_write_size = (uint32_t)v; break;
    case T_KEEPALIVE: c->keepalive_interval_ms = (uint32_t)v * 1000u; break;
    case T_IRD: o->ird = (uint32_t)v; break;
    case T_ORD: o->ord = (uint32_t)v; break;
    }
    return 0;
}
