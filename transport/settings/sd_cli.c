/* transport/settings/sd_cli.c — command-line options shared by the programs in tools/. */
#include "sd_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_tuning.h"

const struct sd_provider_ops *sd_cli_transport(const char *value)
{
    if (strcmp(value, "soft") == 0)
        return &sd_soft_provider;
    if (strcmp(value, "rdma") == 0)
        return &sd_verbs_provider;
    return NULL;
}

int sd_cli_timeout_ms(const char *value, int *out)
{
    char *end;
    long v;

    if (value[0] < '0' || value[0] > '9')
        return -1;
    errno = 0;
    v = strtol(value, &end, 10);
    if (errno || *end || v < 1 || v > 3600000)
        return -1;
    *out = (int)v;
    return 0;
}

void sd_cli_options(struct option *opts, const struct option *fixed, size_t n)
{
    memcpy(opts, fixed, n * sizeof(*fixed));
    for (size_t i = 0; sd_tuning_name(i) && n < SD_CLI_MAX_OPTS - 1; i++)
        opts[n++] = (struct option){ sd_tuning_name(i), required_argument, NULL,
                                     SD_CLI_OPT_TUNING };
    opts[n] = (struct option){ 0 };
}

int sd_cli_apply(int o, const struct option *opts, int idx, char *const *argv,
                 struct smbd_link_opts *lo, char *err, size_t errlen)
{
    char why[256];

    switch (o) {
    case SD_CLI_OPT_TRANSPORT:
        lo->provider = sd_cli_transport(optarg);
        if (lo->provider)
            return 0;
        snprintf(err, errlen, SD_CLI_TRANSPORT_ERROR, optarg);
        return -1;
    case SD_CLI_OPT_TIMEOUT:
        if (sd_cli_timeout_ms(optarg, &lo->timeout_ms) == 0)
            return 0;
        snprintf(err, errlen, SD_CLI_TIMEOUT_ERROR, optarg);
        return -1;
    case SD_CLI_OPT_TUNING:
        if (sd_tuning_set(lo, opts[idx].name, optarg, why, sizeof(why)) == 0)
            return 0;
        snprintf(err, errlen, "--%s", why);
        return -1;
    case ':':
        snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
        return -1;
    default:
        if (o == SD_CLI_OPT_HELP || o >= SD_CLI_OPT_OWN)
            return 1;
        snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
        return -1;
    }
}
