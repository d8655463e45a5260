/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_args.c — smbdirect-relay's command line: its usage text, its own
 * flags (--status, --drop-address, --check-config...) beside the settings' flags, and
 * the settings loaded from the configuration file, the environment and the flags, at
 * start and again for SIGHUP's reload (relay.h). */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "relay.h"
#include "sd_version.h"

static const char usage_head[] =
    "Usage: smbdirect-relay --listen HOST:PORT --backend HOST:PORT [OPTION]...\n"
    "       smbdirect-relay --status [--json] [--status-socket PATH]\n"
    "       smbdirect-relay --drop-address IP [--status-socket PATH]\n"
    "       smbdirect-relay --check-config [FILE] [OPTION]...\n"
    "       smbdirect-relay --help | --version\n"
    "\n"
    "Accept SMB Direct (MS-SMBD) connections on HOST:PORT and bridge each one to its own\n"
    "TCP connection to an SMB server that speaks only TCP, such as Samba's smbd.\n"
    "\n"
    "Each accepted connection is negotiated as the SMB Direct passive side, then a TCP\n"
    "connection to the backend is opened and SMB2 messages are carried both ways (the\n"
    "4-byte Direct-TCP prefix on the TCP side, SMB Direct messages on the other). A\n"
    "connection that fails or ends never disturbs the others.\n"
    "\n"
    "Settings come from the configuration file (/etc/smbdirect/smbdirect.conf, its\n"
    "[relay] section; SMBDIRECT_CONFIG names another), then the environment, then the\n"
    "flags below: --listen and --backend may be given in any of them. A bad line for\n"
    "the relay stops it; another program's is a warning (smbdirect.conf(5)).\n"
    "\n"
    "Options:\n"
    "  --status                 print the live status of the relay serving the status\n"
    "                           socket, and exit (1 when no relay answers)\n"
    "  --json                   with --status: as one JSON object\n"
    "  --drop-address IP        make the relay serving the status socket end at once\n"
    "                           every connection made to its address IP (one a cluster\n"
    "                           moves away), print how many, and exit (1 when no relay\n"
    "                           answers)\n"
    "  --check-config           check the configuration file (FILE, else the one the\n"
    "                           relay reads), print the settings in force with where\n"
    "                           each comes from, and exit (1 when it has an error)\n"
    "  --log-stats              print a second line of counters when a connection ends\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            print the version and exit\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Output (stderr, one line each, stable for scripts; at the log level notice unless\n"
    "said, with its syslog priority in front when stderr is the systemd journal):\n"
    "  relay: smbdirect-relay VERSION listening on ADDR (TRANSPORT), backend ADDR,\n"
    "         N event loops\n"
    "  relay: open files: limit L, P per connection, K kept for the relay:\n"
    "         max_connections N   (at start: what --max-connections 0 gives)\n"
    "  relay: conn N from ADDR established: version 0xVVVV credits T/M send S recv R\n"
    "         frag F peer_frag P rw W ird I ord O, backend ADDR via port N\n"
    "  relay: conn N closed: smbd_in M msgs B bytes, smbd_out M msgs B bytes,\n"
    "         fragments in F out F, reason TEXT\n"
    "  relay: conn N channel: rdma_read N ops B bytes (WRITE data), rdma_write N ops B\n"
    "         bytes (READ data), buffers peak B bytes, memory waits N (T ms)   (when\n"
    "         the SMB2 RDMA read/write channel was used; the peak is bounded by\n"
    "         --channel-memory, past which an I/O waits: N waits, T ms in all)\n"
    "  relay: conn N failed: client ADDR: TEXT   (error)\n"
    "  relay: refused a connection from ADDR: TEXT   (warn; at most once a minute per\n"
    "         ADDR)\n"
    "  relay: backend ADDR is down (connect: TEXT); refusing new connections   (error;\n"
    "         then checked every 2 s)\n"
    "  relay: backend ADDR is back; admitting again (down N s, N connections refused)\n"
    "\n"
    "SIGINT or SIGTERM stops accepting and lets live connections end for up to\n"
    "--drain-time, then ends the rest; a second signal ends them at once; exit status 0.\n"
    "SIGHUP re-reads the configuration: the access list, the connection limits, the\n"
    "drain time and the log level change at once, live connections untouched; other\n"
    "changes are logged as needing a restart. Exit status 2 means bad arguments, 1 a\n"
    "failure to start (e.g. the listen address is in use). Under systemd (Type=notify,\n"
    "$NOTIFY_SOCKET) the relay sends READY=1 once it listens, RELOADING=1 and READY=1\n"
    "around a SIGHUP, STOPPING=1 when it drains, and its live connections as STATUS=.\n"
    "\n"
    "Example:\n"
    "  smbdirect-relay --listen 127.0.0.1:5445 --backend 127.0.0.1:445\n";

enum { OPT_LOG_STATS = 1, OPT_STATUS, OPT_JSON, OPT_DROP_ADDRESS, OPT_CHECK_CONFIG,
       OPT_HELP = 'h', OPT_VERSION = 'V' };

static const struct option relay_options[] = {
    { "log-stats", no_argument, NULL, OPT_LOG_STATS },
    { "status", no_argument, NULL, OPT_STATUS },
    { "json", no_argument, NULL, OPT_JSON },
    { "drop-address", required_argument, NULL, OPT_DROP_ADDRESS },
    { "help", no_argument, NULL, OPT_HELP },
    { "version", no_argument, NULL, OPT_VERSION },
    { "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
};
#define RELAY_OPTION_COUNT (sizeof(relay_options) / sizeof(relay_options[0]))

static int ignore_own_option(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    (void)ctx, (void)val, (void)arg, (void)err, (void)errlen;
    return 0;
}

/* The warnings of r (other programs' bad lines), and its errors too when as_warnings. */
static void print_problems(const struct sd_settings_report *r, int as_warnings)
{
    for (unsigned i = 0; i < r->kept; i++)
        if (as_warnings || !r->problem[i].is_error)
            sd_warn("warning: %s", r->problem[i].text);
}

static int usage_error(const char *fmt, const char *arg)
{
    char msg[700];

    /* As every program says it, and at error priority for the journal (a unit's bad
     * setting); the relay's own lines say "relay:" again after it. */
    snprintf(msg, sizeof(msg), fmt, arg);
    sd_log_set_program("smbdirect-relay");
    sd_error("%s", msg);
    sd_log_set_program("relay");
    fputs("Try 'smbdirect-relay --help' for more information.\n", stderr);
    return 2;
}

static int relay_option(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    struct relay_args *a = ctx;

    struct in6_addr ip;

    switch (val) {
    case OPT_LOG_STATS: a->r->log_stats = 1; break;
    case OPT_STATUS: a->status = 1; break;
    case OPT_JSON: a->json = 1; break;
    case OPT_DROP_ADDRESS:
        if (inet_pton(AF_INET, arg, &ip) != 1 && inet_pton(AF_INET6, arg, &ip) != 1) {
            snprintf(err, errlen, "--drop-address: '%s' is not an IPv4 or IPv6 address", arg);
            return -1;
        }
        a->drop = arg;
        break;
    case OPT_CHECK_CONFIG: a->check_config = 1; break;
    case OPT_HELP:
        fputs(usage_head, stdout);
        sd_settings_usage(stdout, SD_PROG_RELAY);
        fputs(usage_tail, stdout);
        exit(0);
    case OPT_VERSION:
        printf("smbdirect-relay %s\n", sd_version());
        exit(0);
    }
    return 0;
}

/* What the relay needs to start that the settings lack, or NULL. */
static const char *relay_missing(const struct sd_settings *s)
{
    if (s->listen.len && s->backend.len)
        return NULL;
    return "--listen HOST:PORT and --backend HOST:PORT are required (or listen and backend "
           "in the configuration file, SMBDIRECT_LISTEN and SMBDIRECT_BACKEND)";
}

int relay_args_check_config(const struct relay *r, const struct relay_args *a)
{
    const char *missing = relay_missing(&r->set);

    if (sd_settings_check_config(stdout, stderr, &r->set, &a->rep) != 0)
        return 1;
    if (!missing)
        return 0;
    fprintf(stderr, "smbdirect-relay: %s\n", missing);
    return 1;
}

int relay_args_parse(int argc, char **argv, struct relay *r, struct relay_args *a)
{
    struct sd_settings_flags flags;
    char err[600];
    int first = sd_settings_parse_argv(SD_PROG_RELAY, argc, argv, relay_options,
                                       RELAY_OPTION_COUNT, relay_option, a, &flags, err,
                                       sizeof(err));
    const char *file = NULL;

    if (first < 0)
        return usage_error("%s", err);
    if (a->check_config && first < argc)
        file = argv[first++];
    if (first < argc)
        return usage_error("unexpected argument '%s'", argv[first]);
    if (a->json && !a->status)
        return usage_error("%s", "--json goes with --status");
    if (a->drop && (a->status || a->check_config))
        return usage_error("%s", "--drop-address goes alone (with --status-socket)");
    a->query = a->status || a->drop;
    if (sd_settings_load(&r->set, SD_PROG_RELAY, file, &flags, &a->rep) < 0 && !a->query &&
        !a->check_config)
        return usage_error("%s", a->rep.error);
    sd_log_set_level(r->set.log_level);
    if (a->check_config)
        return 0;
    /* --status and --drop-address only need the status socket: a broken file must not
     * keep them from reaching the relay that serves (the path from a flag, the
     * environment, the file's line if right, else the default). */
    print_problems(&a->rep, a->query);
    if (!a->query && relay_missing(&r->set))
        return usage_error("%s", relay_missing(&r->set));
    r->argc = argc;
    r->argv = argv;
    return 0;
}

int relay_args_reload(const struct relay *r, struct sd_settings *next, char *why, size_t len)
{
    struct sd_settings_flags flags;
    struct sd_settings_report rep;
    int rc;

    if (sd_settings_parse_argv(SD_PROG_RELAY, r->argc, r->argv, relay_options,
                               RELAY_OPTION_COUNT, ignore_own_option, NULL, &flags, why,
                               len) < 0)
        return -1;
    rc = sd_settings_load(next, SD_PROG_RELAY, NULL, &flags, &rep);
    print_problems(&rep, 0);
    if (rc < 0)
        snprintf(why, len, "%s", rep.error);
    return rc < 0 ? -1 : 0;
}
