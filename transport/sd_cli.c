/* transport/sd_cli.c — command-line options shared by the programs in tools/. */
#include "sd_cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
