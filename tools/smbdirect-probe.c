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
#include "sd_settings.h"
#include "smbd_link.h"

#define PROBE_SMB_PORT 445 /* the SMB port whose SMB Direct port is probed */

static const char usage_head[] =
    "Usage: smbdirect-probe [OPTION]... HOST[:PORT]\n"
    "\n"
    "Connect to the SMB Direct (MS-SMBD) server at HOST, negotiate, print the negotiated\n"
    "parameters and disconnect. PORT defaults to 5445 for soft-iWARP and iWARP devices\n"
    "and to 445 for InfiniBand/RoCE devices. IPv6 addresses are written [ADDR]:PORT.\n"
    "\n"
    "Options:\n"
    "  --help                   show this help and exit\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Output on success (stdout), one \"Name: value\" per line:\n"
    "  peer, transport, version, credits.send_target, credits.send_granted,\n"
    "  credits.receive_max, MaxSendSize, MaxReceiveSize, MaxFragmentedSize.send,\n"
    "  MaxFragmentedSize.recv, MaxReadWriteSize, IRD, ORD\n"
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

enum { OPT_HELP = 1 }; /* the probe's only option of its own */

static int probe_option(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    (void)ctx;
    (void)val;
    (void)arg;
    (void)err;
    (void)errlen;
    fputs(usage_head, stdout);
    sd_settings_usage(stdout, SD_PROG_PROBE);
    fputs(usage_tail, stdout);
    exit(0);
}

int main(int argc, char **argv)
{
    static const struct option own[] = { { "help", no_argument, NULL, OPT_HELP } };
    const struct sd_provider_ops *provider;
    struct smbd_link_opts lo;
    struct sd_settings set;
    struct sockaddr_storage dst;
    socklen_t dstlen;
    struct smbd_link *k = NULL;
    char err[600], peer[SD_ADDR_STRLEN];
    const char *why;
    int first, iwarp, rc;

    first = sd_settings_from_argv(&set, SD_PROG_PROBE, argc, argv, own, 1, probe_option, NULL,
                                  err, sizeof(err));
    if (first < 0)
        return usage_error("%s", err);
    sd_log_set_level(set.log_level);
    if (first != argc - 1)
        return usage_error("%s", first >= argc ? "missing HOST[:PORT]"
                                               : "exactly one HOST[:PORT] is expected");
    if (sd_addr_parse(argv[first], 0, &dst, &dstlen, &why) < 0) {
        snprintf(err, sizeof(err), "'%s': %s", argv[first], why);
        return usage_error("%s", err);
    }
    sd_settings_link_opts(&set, SMBD_ROLE_ACTIVE, &lo);
    provider = sd_settings_provider(set.transport);
    rc = sd_settings_reach(set.transport, provider, (struct sockaddr *)&dst, dstlen,
                           &lo.provider, &iwarp);
    if (rc < 0) {
        fprintf(stderr, "smbdirect-probe: no %s device reaches %s: %s\n", provider->name,
                argv[first], strerror(-rc));
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
