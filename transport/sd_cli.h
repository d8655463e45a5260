/* transport/sd_cli.h — command-line options shared by the programs in tools/:
 * --transport soft|rdma and --timeout MS, with one error wording for both. */
#ifndef SMBDIRECT_SD_CLI_H
#define SMBDIRECT_SD_CLI_H

#include "provider.h"

/* Parses the value of --transport. NULL for anything but "soft" or "rdma". */
const struct sd_provider_ops *sd_cli_transport(const char *value);

/* Parses the value of --timeout (milliseconds, 1..3600000). 0, or -1 when invalid. */
int sd_cli_timeout_ms(const char *value, int *out);

/* Messages for invalid values, printf formats taking the value as their one %s. */
#define SD_CLI_TRANSPORT_ERROR "--transport must be soft or rdma, not '%s'"
#define SD_CLI_TIMEOUT_ERROR   "--timeout must be milliseconds from 1 to 3600000, not '%s'"

#endif
