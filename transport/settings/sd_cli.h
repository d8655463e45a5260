/* transport/settings/sd_cli.h — command-line options shared by the programs in tools/:
 * --transport soft|rdma, --timeout MS and the SMB Direct tuning settings, parsed with
 * getopt_long() and one error wording for every tool. */
#ifndef SMBDIRECT_SD_CLI_H
#define SMBDIRECT_SD_CLI_H

#include <getopt.h>
#include <stddef.h>

#include "provider.h"
#include "smbd_link.h"

/* Parses the value of --transport. NULL for anything but "soft" or "rdma". */
const struct sd_provider_ops *sd_cli_transport(const char *value);

/* Parses the value of --timeout (milliseconds, 1..3600000). 0, or -1 when invalid. */
int sd_cli_timeout_ms(const char *value, int *out);

/* Messages for invalid values, printf formats taking the value as their one %s. */
#define SD_CLI_TRANSPORT_ERROR "--transport must be soft or rdma, not '%s'"
#define SD_CLI_TIMEOUT_ERROR   "--timeout must be milliseconds from 1 to 3600000, not '%s'"

/* getopt_long() values of the shared options; a tool numbers its own from
 * SD_CLI_OPT_OWN up. */
enum {
    SD_CLI_OPT_TRANSPORT = 256,
    SD_CLI_OPT_TIMEOUT,
    SD_CLI_OPT_HELP,
    SD_CLI_OPT_TUNING,
    SD_CLI_OPT_OWN
};

/* Entries of an options table: the tool's own, one per tuning setting, the end. */
#define SD_CLI_MAX_OPTS 48

/* Fills opts (SD_CLI_MAX_OPTS entries) for getopt_long(): the n entries of fixed (the
 * tool's options, --transport/--timeout/--help among them with the values above), one
 * entry per SMB Direct tuning setting (value SD_CLI_OPT_TUNING), the zero entry. */
void sd_cli_options(struct option *opts, const struct option *fixed, size_t n);

/* Handles one getopt_long() result o (optstring ":", opts from sd_cli_options(), idx
 * its longindex; optarg and optind as getopt_long() left them) for what all tools
 * share: --transport, --timeout and tuning settings are applied to lo; a bad value, a
 * missing value (':') or an unknown option is an error. Returns 0 when applied, 1 when
 * o is the tool's own (SD_CLI_OPT_HELP or from SD_CLI_OPT_OWN), or -1 with the message
 * for the user in err. */
int sd_cli_apply(int o, const struct option *opts, int idx, char *const *argv,
                 struct smbd_link_opts *lo, char *err, size_t errlen);

#endif
