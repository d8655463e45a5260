/* tools/smbdirect-probe.c — connects to an SMB Direct server, negotiates, prints the
 * negotiated parameters one per line ("Name: value") and disconnects. A diagnostic in
 * the spirit of rdma-core's rping: does SMB Direct work to this host, and with what. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "portmap.h"
#include "sd_addr.h"
#include "sd_cli.h"
#include "sd_tuning.h"
#include "smbd_link.h"

#define PROBE_DEFAULT_TIMEOUT_MS 5000
#define PROBE_SMB_PORT           445  /* the SMB port whose SMB Direct port is probed */

static const char usage_text[] =
    "Usage: smbdirect-probe [OPTION]... HOST[:PORT]\n"
    "\n"
    "Connect to the SMB Direct (MS-SMBD) server at HOST, negotiate, print the negotiated\n"
    "parameters and disconnect. PORT defaults to 5445 for soft-iWARP and iWARP devices\n"
    "and to 445 for InfiniBand/RoCE devices. IPv6 addresses are written [ADDR]:PORT.\n"
    "\n"
    "Options:\n"
    "  --transport soft|rdma    soft: userspace soft-iWARP over TCP, no RDMA NIC needed\n"
    "                           (default); rdma: an RDMA device through rdma-core\n"
    "  --timeout MS             bound on connect + negotiate (default 5000)\n"
    "  --help                   show this help and exit\n"
    "\n"
    "SMB Direct settings offered:\n"
    "%s"
    "\n"
    "Output on success (stdout), one \"Name: value\" per line:\n"
    "  peer, transport, version, credits.send_target, credits.send_granted,\n"
    "  credits.receive_max, MaxSendSize, MaxReceiveSize, MaxFragmentedSize.send,\n"
    "  MaxFragmentedSize.recv, MaxReadWriteSize, IRD, ORD\n"
    "\n"
    "Environment:\n"
    "  SMBDIRECT_LOG=error|warn|info|debug   diagnostic detail (default error)\n"
    "\n"
    "Exit status: 0 negotiated, 1 connect or negotiate failed (the reason is printed),\n"
    "2 bad arguments.\n"
    "\n"
    "Example:\n"
    "  smbdirect-probe 127.0.0.1          # a local smbdirect-relay on port 5445\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "smbdirect-probe: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'smbdirect-probe --help' for more information.\n");
    return 2;
}

static void print_params(const struct smbd_link *k, const char *peer, const char *transport)
{
    const struct sd_cm_result *cm = smbd_link_cm(k);
    struct smbd_params p;

    smbd_conn_query(smbd_link_conn(k), &p);
    printf("peer: %s\n", peer);
    printf("transport: %s\n", transport);
    printf("version: 0x%04x\n", p.neg.protocol);
    printf("credits.send_target: %u\n", p.neg.send_credit_target);
    printf("credits.send_granted: %u\n", p.send_credits);
    printf("credits.receive_max: %u\n", p.neg.receive_credit_max);
    printf("MaxSendSize: %u\n", p.neg.max_send_size);
    printf("MaxReceiveSize: %u\n", p.neg.max_receive_size);
    printf("MaxFragmentedSize.send: %u\n", p.neg.max_fragmented_send_size);
    printf("MaxFragmentedSize.recv: %u\n", p.neg.max_fragmented_recv_size);
    printf("MaxReadWriteSize: %u\n", p.neg.max_read_write_size);
    printf("IRD: %u\n", cm->ird);
    printf("ORD: %u\n", cm->ord);
}

int main(int argc, char **argv)
{
    static const struct option fixed[] = {
        { "transport", required_argument, NULL, SD_CLI_OPT_TRANSPORT },
        { "timeout", required_argument, NULL, SD_CLI_OPT_TIMEOUT },
        { "help", no_argument, NULL, SD_CLI_OPT_HELP },
    };
    struct option opts[SD_CLI_MAX_OPTS];
    struct smbd_link_opts lo = { .provider = &sd_soft_provider,
                                 .ird = SD_TUNED_RDMA_READ_DEPTH,
                                 .ord = SD_TUNED_RDMA_READ_DEPTH,
                                 .timeout_ms = PROBE_DEFAULT_TIMEOUT_MS };
    struct sockaddr_storage dst;
    socklen_t dstlen;
    struct smbd_link *k = NULL;
    char err[300], peer[SD_ADDR_STRLEN];
    const char *why;
    int o, idx, iwarp, rc;

    sd_tuning_defaults(&lo.cfg, SMBD_ROLE_ACTIVE);
    sd_log_set_level(SD_LOG_ERROR); /* failures are printed below; SMBDIRECT_LOG overrides */
    if (sd_log_init_from_env() < 0)
        return 2;
    sd_cli_options(opts, fixed, sizeof(fixed) / sizeof(fixed[0]));

    opterr = 0;
    while ((o = getopt_long(argc, argv, ":", opts, &idx)) != -1) {
        rc = sd_cli_apply(o, opts, idx, argv, &lo, err, sizeof(err));
        if (rc < 0)
            return usage_error("%s", err);
        if (rc > 0) { /* --help is the only option of the probe's own */
            printf(usage_text, sd_tuning_usage);
            return 0;
        }
    }
    if (optind != argc - 1)
        return usage_error("%s", optind >= argc ? "missing HOST[:PORT]"
                                                : "exactly one HOST[:PORT] is expected");
    if (sd_addr_parse(argv[optind], 0, &dst, &dstlen, &why) < 0) {
        snprintf(err, sizeof(err), "'%s': %s", argv[optind], why);
        return usage_error("%s", err);
    }
    if ((why = smbd_config_check(&lo.cfg)))
        return usage_error("invalid SMB Direct setting: %s", why);

    iwarp = lo.provider->is_iwarp((struct sockaddr *)&dst, dstlen);
    if (iwarp < 0) {
        fprintf(stderr, "smbdirect-probe: no %s device reaches %s: %s\n", lo.provider->name,
                argv[optind], strerror(-iwarp));
        return 1;
    }
    lo.smbd_ird_ord_header = iwarp; /* MS-SMBD Appendix A: iWARP only */
    if (sd_addr_port((struct sockaddr *)&dst) == 0) {
        const struct pm_map defaults = { .n = 0 };

        sd_addr_set_port((struct sockaddr *)&dst, pm_rdma_port(&defaults, PROBE_SMB_PORT, iwarp));
    }
    sd_addr_format((struct sockaddr *)&dst, peer, sizeof(peer));

    rc = smbd_link_dial((struct sockaddr *)&dst, dstlen, &lo, &k, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "smbdirect-probe: %s\n", err);
        return 1;
    }
    print_params(k, peer, lo.provider->name);
    smbd_link_free(k);
    return 0;
}
