/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/smbdirect-probe.c — connects to an SMB Direct server, negotiates, prints the
 * negotiated parameters one per line ("Name: value") and disconnects; SMBDIRECT_ADDRMAP
 * may send it to the host's RDMA address instead, which it says first. A diagnostic in
 * the spirit of rdma-core's rping: does SMB Direct work to this host, and with what.
 * With --conformance it runs the MS-SMBD server conformance cases (conformance/)
 * against the host instead and prints one row per case. */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "addrmap.h"
#include "cf_case.h"
#include "log.h"
#include "portmap.h"
#include "sd_addr.h"
#include "sd_settings.h"
#include "sd_version.h"
#include "smbd_link.h"

#define PROBE_SMB_PORT 445 /* the SMB port whose SMB Direct port is probed */

static const char usage_head[] =
    "Usage: smbdirect-probe [OPTION]... HOST[:PORT]\n"
    "       smbdirect-probe --conformance [--user USER%PASS] [--share NAME] [--cases GLOB]\n"
    "                       [OPTION]... HOST[:PORT]\n"
    "       smbdirect-probe --check-config[=shim] [FILE] [OPTION]...\n"
    "       smbdirect-probe --help | --version\n"
    "\n"
    "Connect to the SMB Direct (MS-SMBD) server at HOST, negotiate, print the negotiated\n"
    "parameters and disconnect. PORT defaults to 5445 for soft-iWARP and iWARP devices\n"
    "and to 445 for InfiniBand/RoCE devices. IPv6 addresses are written [ADDR]:PORT.\n"
    "When SMBDIRECT_ADDRMAP maps HOST's address, the probe dials the RDMA address it\n"
    "maps to instead: on PORT when given, else on the map's port, else the default.\n"
    "\n"
    "With --conformance, run the MS-SMBD server conformance cases against HOST instead\n"
    "(groups SmbdNegotiate: raw Negotiate Requests; SmbdDataTransfer: fragments, malformed\n"
    "Data Transfer messages, keepalives; SmbdCreditMgmt: credits withheld and spent;\n"
    "Smb2OverRdma and RemoteInvalidation: SMB2 over SMB Direct with the READ/WRITE RDMA\n"
    "channel; Smb2Multichannel: a signed session over TCP to HOST's port 445 and a\n"
    "channel bound to it over SMB Direct, which need --user) and print one row per case:\n"
    "its name, PASS, FAIL or SKIP, and what was seen.\n"
    "\n"
    "Settings come from the configuration file (/etc/smbdirect/smbdirect.conf, its\n"
    "[probe] section; SMBDIRECT_CONFIG names another), then the environment, then the\n"
    "flags below (smbdirect.conf(5)).\n"
    "\n"
    "Options:\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            print the version and exit\n"
    "  --conformance            run the conformance cases\n"
    "  --user USER%PASS         log in to SMB2 with NTLMv2 as USER (DOMAIN\\USER\n"
    "                           accepted); default anonymous\n"
    "  --share NAME             the share the SMB2 cases use (default share); they\n"
    "                           create and delete files named sdconf-*\n"
    "  --cases GLOB             only the cases whose name or GROUP/NAME matches\n"
    "                           GLOB (fnmatch), e.g. 'RemoteInvalidation/*'\n"
    "  --list-cases             print every case as GROUP/NAME and exit\n"
    "  --keepalive-wait SECONDS how long the idle cases wait for the server's keepalive\n"
    "                           (1-600, default 5); a server whose KeepaliveInterval is\n"
    "                           longer makes them SKIP (smbdirect-relay: --keepalive)\n"
    "  --check-config[=shim]    check the configuration file (FILE, else the one the\n"
    "                           probe reads) for the probe, or with =shim for the shim\n"
    "                           (what smbdirect --check-config runs), print the\n"
    "                           settings in force with where each comes from, and\n"
    "                           exit (1 when it has an error)\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Output on success (stdout), one \"Name: value\" per line:\n"
    "  peer, transport, version, credits.send_target, credits.send_granted,\n"
    "  credits.receive_max, MaxSendSize, MaxReceiveSize, MaxFragmentedSize.send,\n"
    "  MaxFragmentedSize.recv, MaxReadWriteSize, IRD, ORD\n"
    "\n"
    "Output of --conformance (stdout): a header line, one line per case (name, PASS,\n"
    "FAIL or SKIP, detail: for SKIP the reason, for FAIL what was seen against what\n"
    "was expected), then \"N cases: N passed, N failed, N skipped\".\n"
    "\n"
    "When SMBDIRECT_ADDRMAP maps HOST's address, either output starts with the line\n"
    "\"address map: ADDR -> RDMAADDR:PORT\" (the address dialled, with its port).\n"
    "\n"
    "Exit status: 0 negotiated (--conformance: no case failed), 1 connect or negotiate\n"
    "failed (the reason is printed; --conformance: a case failed), 2 bad arguments.\n"
    "\n"
    "Examples:\n"
    "  smbdirect-probe 127.0.0.1          # a local smbdirect-relay on port 5445\n"
    "  smbdirect-probe --conformance --user alice%secret 127.0.0.1\n";

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

/* The probe's own options. */
enum { OPT_CONFORMANCE = 1, OPT_USER, OPT_SHARE, OPT_CASES, OPT_LIST_CASES, OPT_KEEPALIVE_WAIT,
       OPT_CHECK_CONFIG, OPT_HELP = 'h', OPT_VERSION = 'V' };

struct probe_opts {
    int conformance;
    int check_config;           /* --check-config: for check_prog */
    enum sd_program check_prog; /* the probe, or the shim (=shim) */
    char *user;            /* USER%PASS, split in place */
    const char *password;
    const char *share;
    const char *cases;
    int keepalive_wait_ms;
};

static int probe_option(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    struct probe_opts *po = ctx;

    switch (val) {
    case OPT_CONFORMANCE: po->conformance = 1; return 0;
    case OPT_SHARE:
        if (!*arg || strpbrk(arg, "\\/")) {
            snprintf(err, errlen, "--share: '%s' is invalid: use a share name", arg);
            return -1;
        }
        po->share = arg;
        return 0;
    case OPT_CASES: po->cases = arg; return 0;
    case OPT_CHECK_CONFIG:
        po->check_config = 1;
        po->check_prog = SD_PROG_PROBE;
        if (arg && strcmp(arg, "shim") == 0)
            po->check_prog = SD_PROG_SHIM;
        else if (arg && strcmp(arg, "probe") != 0) {
            snprintf(err, errlen, "--check-config: '%s' is invalid: use shim or probe", arg);
            return -1;
        }
        return 0;
    case OPT_KEEPALIVE_WAIT: {
        char *end;
        unsigned long v = strtoul(arg, &end, 10);

        if (!*arg || *end || *arg == '-' || v < 1 || v > 600) {
            snprintf(err, errlen, "--keepalive-wait: '%s' is invalid: use 1-600 seconds", arg);
            return -1;
        }
        po->keepalive_wait_ms = (int)v * 1000;
        return 0;
    }
    case OPT_USER: {
        char *pct = strchr(arg, '%');

        if (!pct || pct == arg) {
            snprintf(err, errlen, "--user: '%s' is invalid: use USER%%PASS", arg);
            return -1;
        }
        free(po->user);
        po->user = strdup(arg);
        if (!po->user) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        po->user[pct - arg] = 0;
        po->password = po->user + (pct - arg) + 1;
        return 0;
    }
    case OPT_LIST_CASES: cf_list(stdout); exit(0);
    case OPT_VERSION: printf("smbdirect-probe %s\n", sd_version()); exit(0);
    }
    fputs(usage_head, stdout);
    sd_settings_usage(stdout, SD_PROG_PROBE);
    fputs(usage_tail, stdout);
    exit(0);
}

/* --check-config[=shim] [FILE]: the settings in force and the problems; the exit
 * status. The shim has no flags: the probe's have no say in its settings. */
static int check_config(const struct probe_opts *po, const struct sd_settings_flags *flags,
                        int nargs, char **args)
{
    struct sd_settings_report rep;
    struct sd_settings set;
    int shim = po->check_prog == SD_PROG_SHIM;

    if (nargs > 1)
        return usage_error("unexpected argument '%s'", args[1]);
    for (int id = 0; shim && id < SD_SET_COUNT; id++)
        if (flags->arg[id])
            return usage_error("--%s: the shim takes no flags (its settings come from the "
                               "file and the environment)", sd_settings_table[id].flag);
    sd_settings_load(&set, po->check_prog, nargs ? args[0] : NULL, shim ? NULL : flags, &rep);
    return sd_settings_check_config(stdout, stderr, &set, &rep);
}

/* The conformance run: the target from the link options, then the cases. */
static int conformance(const struct probe_opts *po, const struct smbd_link_opts *lo,
                       const struct sockaddr_storage *dst, socklen_t dstlen, const char *host,
                       const struct sockaddr_storage *given, socklen_t givenlen)
{
    struct cf_target t = { .provider = lo->provider, .addr = *dst, .addrlen = dstlen,
                           .ird = lo->ird, .ord = lo->ord,
                           .smbd_ird_ord_header = lo->smbd_ird_ord_header,
                           .want_crc = lo->want_crc, .timeout_ms = lo->timeout_ms,
                           .credits = lo->cfg.receive_credit_max,
                           .max_send_size = lo->cfg.max_send_size,
                           .max_receive_size = lo->cfg.max_receive_size,
                           .max_fragmented_size = lo->cfg.max_fragmented_recv_size };
    struct cf_ctx ctx = { .t = &t, .user = po->user, .password = po->password,
                          .share = po->share ? po->share : "share",
                          .keepalive_wait_ms = po->keepalive_wait_ms ? po->keepalive_wait_ms
                                                                     : CF_KEEPALIVE_WAIT_MS };
    struct cf_totals tot;

    snprintf(t.host, sizeof(t.host), "%s", host);
    /* the Smb2Multichannel cases' TCP channel: the SMB port at HOST and at the address
     * dialled */
    t.tcp_host = *given;
    t.tcp_host_len = givenlen;
    t.tcp_rdma = *dst;
    t.tcp_rdma_len = dstlen;
    sd_addr_set_port((struct sockaddr *)&t.tcp_host, PROBE_SMB_PORT);
    sd_addr_set_port((struct sockaddr *)&t.tcp_rdma, PROBE_SMB_PORT);
    snprintf(ctx.run_id, sizeof(ctx.run_id), "%ld-%ld", (long)getpid(), (long)time(NULL));
    srand((unsigned)(getpid() ^ time(NULL)));
    tot = cf_run(&ctx, po->cases, stdout);
    if (tot.run == 0) {
        fprintf(stderr, "smbdirect-probe: --cases: no case matches '%s' (see --list-cases)\n",
                po->cases);
        return 2;
    }
    return tot.failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const struct option own[] = {
        { "help", no_argument, NULL, OPT_HELP },
        { "conformance", no_argument, NULL, OPT_CONFORMANCE },
        { "user", required_argument, NULL, OPT_USER },
        { "share", required_argument, NULL, OPT_SHARE },
        { "cases", required_argument, NULL, OPT_CASES },
        { "list-cases", no_argument, NULL, OPT_LIST_CASES },
        { "keepalive-wait", required_argument, NULL, OPT_KEEPALIVE_WAIT },
        { "version", no_argument, NULL, OPT_VERSION },
        { "check-config", optional_argument, NULL, OPT_CHECK_CONFIG },
    };
    struct probe_opts po = { 0 };
    const struct sd_provider_ops *provider;
    const struct am_entry *mapped;
    struct smbd_link_opts lo;
    struct sd_settings set;
    struct sd_settings_flags flags;
    struct sd_settings_report rep;
    struct sockaddr_storage dst, given;
    socklen_t dstlen, givenlen;
    struct smbd_link *k = NULL;
    char err[600], peer[SD_ADDR_STRLEN], from[SD_ADDR_STRLEN], to[SD_ADDR_STRLEN] = "";
    const char *why;
    int first, iwarp, rc;

    first = sd_settings_parse_argv(SD_PROG_PROBE, argc, argv, own, sizeof(own) / sizeof(own[0]),
                                   probe_option, &po, &flags, err, sizeof(err));
    if (first < 0)
        return usage_error("%s", err);
    if (po.check_config)
        return check_config(&po, &flags, argc - first, argv + first);
    if (sd_settings_load(&set, SD_PROG_PROBE, NULL, &flags, &rep) < 0)
        return usage_error("%s", rep.error);
    for (unsigned i = 0; i < rep.kept; i++) /* its log level would hide them */
        fprintf(stderr, "smbdirect-probe: warning: %s\n", rep.problem[i].text);
    sd_log_set_level(set.log_level);
    if (first >= 0 && !po.conformance &&
        (po.user || po.share || po.cases || po.keepalive_wait_ms))
        return usage_error("%s",
                           "--user, --share, --cases and --keepalive-wait go with --conformance");
    if (first != argc - 1)
        return usage_error("%s", first >= argc ? "missing HOST[:PORT]"
                                               : "exactly one HOST[:PORT] is expected");
    if (sd_addr_parse(argv[first], 0, &dst, &dstlen, &why) < 0) {
        snprintf(err, sizeof(err), "'%s': %s", argv[first], why);
        return usage_error("%s", err);
    }
    given = dst;
    givenlen = dstlen;
    if ((mapped = am_find(&set.addrmap, (struct sockaddr *)&dst)) != NULL) {
        int port = sd_addr_port((struct sockaddr *)&dst); /* 0: none given */

        am_ip_format(&mapped->from, from, sizeof(from));
        am_ip_format(&mapped->to, to, sizeof(to));
        dstlen = am_dest(mapped, (uint16_t)(port ? port : mapped->port), &dst);
    }
    sd_settings_link_opts(&set, SMBD_ROLE_ACTIVE, &lo);
    provider = sd_settings_provider(set.transport);
    rc = sd_settings_reach(set.transport, provider, (struct sockaddr *)&dst, dstlen,
                           &lo.provider, &iwarp);
    if (rc < 0) {
        fprintf(stderr, "smbdirect-probe: no %s device reaches %s%s%s: %s\n", provider->name,
                argv[first], mapped ? " mapped to " : "", to, strerror(-rc));
        return 1;
    }
    lo.smbd_ird_ord_header = iwarp; /* MS-SMBD Appendix A: iWARP only */
    if (sd_addr_port((struct sockaddr *)&dst) == 0) {
        const struct pm_map defaults = { .n = 0 };

        sd_addr_set_port((struct sockaddr *)&dst, pm_rdma_port(&defaults, PROBE_SMB_PORT, iwarp));
    }
    sd_addr_format((struct sockaddr *)&dst, peer, sizeof(peer));
    if (mapped)
        printf("address map: %s -> %s\n", from, peer);
    if (po.conformance) {
        char host[SD_ADDR_STRLEN];

        /* the SMB2 tree path names the host: its address without the port */
        if (getnameinfo((struct sockaddr *)&dst, dstlen, host, sizeof(host), NULL, 0,
                        NI_NUMERICHOST) != 0)
            snprintf(host, sizeof(host), "%s", peer);
        rc = conformance(&po, &lo, &dst, dstlen, host, &given, givenlen);
        free(po.user);
        return rc;
    }

    rc = smbd_link_dial((struct sockaddr *)&dst, dstlen, &lo, &k, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "smbdirect-probe: %s\n", err);
        return 1;
    }
    print_params(k, peer, lo.provider->name);
    smbd_link_free(k);
    return 0;
}
