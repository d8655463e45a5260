/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings.h — every setting of the shim, the relay and the probe:
 * one table (sd_settings_table.c, the only place a default or a bound is written), the
 * typed values its rows parse to, and what those values make of an SMB Direct link.
 * Front ends: the configuration file (sd_settings_file.c), the environment
 * (sd_settings_env.c) and the command line (sd_settings_argv.c), in that order of
 * precedence from low to high; sd_settings_doc.c renders the table for --help, the docs
 * and the example configuration file. */
#ifndef SMBDIRECT_SD_SETTINGS_H
#define SMBDIRECT_SD_SETTINGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "addrmap.h"
#include "log.h"
#include "portmap.h"
#include "provider.h"
#include "sd_prefix.h"
#include "smbd_link.h"

/* The programs that take settings. A row says which of them read its environment
 * variable and which take its flag, as masks of SD_PROG_BIT(program). */
enum sd_program { SD_PROG_SHIM, SD_PROG_RELAY, SD_PROG_PROBE, SD_PROG_COUNT };
#define SD_PROG_BIT(p) (1u << (p))

/* The rows of the table, in the order the docs list them. */
enum sd_setting_id {
    SD_SET_TRANSPORT,
    SD_SET_PORTS,
    SD_SET_PORTMAP,
    SD_SET_ADDRMAP,
    SD_SET_FALLBACK,
    SD_SET_LOG,
    SD_SET_CONNECT_TIMEOUT,
    SD_SET_CREDITS,
    SD_SET_MAX_SEND_SIZE,
    SD_SET_MAX_RECEIVE_SIZE,
    SD_SET_MAX_FRAGMENTED_SIZE,
    SD_SET_MAX_READ_WRITE_SIZE,
    SD_SET_KEEPALIVE,
    SD_SET_IRD,
    SD_SET_ORD,
    SD_SET_RDMA_THRESHOLD,
    SD_SET_CHANNEL_IO_SIZE,
    SD_SET_CHANNEL_MEMORY,
    SD_SET_CHANNEL_MEMORY_TOTAL,
    SD_SET_SOCKBUF,
    SD_SET_SOFT_CRC,
    SD_SET_SOFT_HANDSHAKE_MS,
    SD_SET_LISTEN,
    SD_SET_BACKEND,
    SD_SET_ALLOW,
    SD_SET_MAX_CONNECTIONS,
    SD_SET_MAX_CONNECTIONS_PER_CLIENT,
    SD_SET_DRAIN_TIME,
    SD_SET_STATUS_SOCKET,
    SD_SET_LOOPS,
    SD_SET_BUSY_POLL,
    SD_SET_DIRECT_SEND,
    SD_SET_SPLICE,
    SD_SET_COUNT
};

enum sd_kind {
    SD_KIND_NUMBER,  /* whole decimal number in [min, max] (common/sd_num.h) */
    SD_KIND_CHOICE,  /* one of the words in choices */
    SD_KIND_PORTS,   /* port list (pm_parse_ports) */
    SD_KIND_PORTMAP, /* port map (pm_parse_map) */
    SD_KIND_ADDRMAP, /* address map (am_parse) */
    SD_KIND_LOG,     /* log level name (sd_log_parse_level) */
    SD_KIND_HOSTPORT, /* HOST:PORT, port required (sd_addr_parse); empty: unset */
    SD_KIND_PREFIXES, /* address prefix list (sd_prefix_parse_list) */
    SD_KIND_PATH,     /* a UNIX socket's path (absolute); empty: none */
};

enum sd_unit { SD_UNIT_NONE, SD_UNIT_BYTES, SD_UNIT_US, SD_UNIT_MS, SD_UNIT_S };

struct sd_setting {
    const char *env;            /* environment variable, NULL when none */
    const char *flag;           /* long option without its "--", NULL when none */
    unsigned env_progs;         /* programs reading env (0 when env is NULL) */
    unsigned flag_progs;        /* programs taking --flag (0 when flag is NULL) */
    enum sd_kind kind;
    enum sd_unit unit;          /* NUMBER */
    uint64_t min, max;          /* NUMBER: inclusive bounds */
    const char *const *choices; /* CHOICE: the words, NULL-terminated, in enum order */
    const char *def[SD_PROG_COUNT]; /* each program's default, as text a user could give */
    const char *help;           /* what it does, one sentence */
};

extern const struct sd_setting sd_settings_table[SD_SET_COUNT];

enum sd_transport {
    SD_TRANSPORT_AUTO, /* verbs when an RDMA device exists, else soft-iWARP */
    SD_TRANSPORT_RDMA, /* rdma-core verbs */
    SD_TRANSPORT_SOFT, /* userspace soft-iWARP over TCP */
    SD_TRANSPORT_TCP,  /* the shim tunnels nothing; the tools refuse it */
};

enum sd_fallback {
    SD_FALLBACK_TCP,  /* SMB Direct failed: connect over TCP as the program asked */
    SD_FALLBACK_NONE, /* SMB Direct failed: the program's connect() fails */
};

/* A HOST:PORT setting: len 0 while unset. */
struct sd_hostport {
    struct sockaddr_storage addr;
    socklen_t len;
};

#define SD_PATH_MAX 108 /* sun_path: the only paths the table holds are sockets' */

/* Every setting's value, one field per row. */
struct sd_settings {
    enum sd_transport transport;
    struct pm_ports ports;
    struct pm_map portmap;
    struct am_map addrmap;
    enum sd_fallback fallback;
    enum sd_log_level log_level;
    uint32_t connect_timeout_ms;
    uint32_t credits;
    uint32_t max_send_size;
    uint32_t max_receive_size;
    uint32_t max_fragmented_size;
    uint32_t max_read_write_size;
    uint32_t keepalive_s;
    uint32_t ird, ord;
    uint32_t rdma_threshold;
    uint32_t channel_io_size;
    uint32_t channel_memory, channel_memory_total;
    uint32_t sockbuf;
    int soft_crc;
    uint32_t soft_handshake_ms;
    struct sd_hostport listen, backend;
    struct sd_prefix_list allow;
    uint32_t max_connections, max_connections_per_client;
    uint32_t drain_time_s;
    char status_socket[SD_PATH_MAX];
    uint32_t loops; /* 0: one per CPU the relay may run on */
    uint32_t busy_poll_us;
    int direct_send; /* the shim: the program's thread sends its own requests */
    int splice;      /* the shim: large READ data into the program's socket by reference */
};

/* s = every default of prog. */
void sd_settings_defaults(struct sd_settings *s, enum sd_program prog);

/* Sets row id of s from text; empty text means prog's default. 0, or -1 (s
 * untouched) with what the row accepts in why, e.g. "use a whole number from 3 to
 * 255"; the front ends put the variable or flag and the value in front of it. */
int sd_settings_set(struct sd_settings *s, enum sd_program prog, enum sd_setting_id id,
                    const char *text, char *why, size_t whylen);

/* The words of a CHOICE or LOG row joined with sep, the last two with last, each
 * between open and close (e.g. "use auto, rdma, soft or tcp"). Returns buf. */
char *sd_settings_words(const struct sd_setting *row, const char *open, const char *close,
                        const char *sep, const char *last, char *buf, size_t len);

/* The link options s makes for role: the engine's defaults (smbd_config_default) with
 * the sizes, credits, keepalive, IRD/ORD, MPA CRC wish and timeout of s; the negotiate
 * timer never outlives the timeout. provider and smbd_ird_ord_header are left 0: they
 * depend on the peer (sd_settings_reach). */
void sd_settings_link_opts(const struct sd_settings *s, enum smbd_role role,
                           struct smbd_link_opts *o);

/* The listener parameters s makes (the soft-iWARP handshake time), with backlog. */
void sd_settings_listen_params(const struct sd_settings *s, int backlog,
                               struct sd_listen_params *lp);

/* The provider a transport starts with: verbs for rdma, soft-iWARP for soft, for auto
 * verbs when rdma-core reports a device, else soft-iWARP. NULL for tcp. */
const struct sd_provider_ops *sd_settings_provider(enum sd_transport t);

/* The provider that reaches dst, starting from p = sd_settings_provider(t): p when
 * its device reaches dst, else with auto soft-iWARP (which reaches everything). 0
 * with *out and *is_iwarp (1: iWARP, port 5445 and the Appendix A header), or the
 * negative errno of p's is_iwarp. */
int sd_settings_reach(enum sd_transport t, const struct sd_provider_ops *p,
                      const struct sockaddr *dst, socklen_t len,
                      const struct sd_provider_ops **out, int *is_iwarp);

/* ---- configuration file front end (sd_settings_file.c) ---- */

#define SD_CONFIG_DEFAULT "/etc/smbdirect/smbdirect.conf"

/* The file's key for row id: its variable's name without SMBDIRECT_, in lower case
 * ("credits", "max_send_size"). Returns buf. */
const char *sd_settings_key(enum sd_setting_id id, char *buf, size_t len);

/* Applies the configuration file to s: the one SMBDIRECT_CONFIG names (empty: none),
 * else SD_CONFIG_DEFAULT when it exists. "key = value" lines ('#' starts a comment)
 * before any section header are for every program that takes the key, those after
 * [shim], [relay] or [probe] for that program ([global] goes back to every program).
 * Every line is checked for every program it concerns; those for prog are applied.
 * 0, or -1 with "FILE:LINE: what is wrong" in err (s then holds the lines before it). */
int sd_settings_from_file(struct sd_settings *s, enum sd_program prog, char *err,
                          size_t errlen);

/* ---- environment front end (sd_settings_env.c) ---- */

/* s = prog's defaults, then the configuration file (sd_settings_from_file), then
 * every variable prog reads, each read once; unset or empty keeps what the file or the
 * default gave. All are read; the first error (the file's, else the first invalid
 * variable: "NAME='VALUE' is invalid: use ...") is described in err. 0, or -1. */
int sd_settings_from_env(struct sd_settings *s, enum sd_program prog, char *err,
                         size_t errlen);

/* ---- command-line front end (sd_settings_argv.c) ---- */

/* A program's own options (getopt_long entries; val from 1 to SD_ARGV_OWN_MAX_VAL,
 * not '?' or ':'; at most SD_ARGV_OWN_MAX of them; one whose val is a letter is also
 * -LETTER, as 'h' makes -h the same as --help) reach it through this callback with
 * optarg or NULL: 0, or -1 with one line for the user in err. */
#define SD_ARGV_OWN_MAX     16
#define SD_ARGV_OWN_MAX_VAL 0xfff
typedef int (*sd_argv_own_cb)(void *ctx, int val, const char *arg, char *err, size_t errlen);

/* s = sd_settings_from_env(prog), then getopt_long over argv: the program's own
 * options and --FLAG VALUE for every row prog takes as a flag (a flag overrides the
 * variable; the last of a repeated flag wins). Refuses transport tcp: the tools speak
 * SMB Direct only. Returns the index of the first operand, or -1 with one line for
 * the user in err ("--credits: '999' is invalid: use a whole number from 3 to 255"). */
int sd_settings_from_argv(struct sd_settings *s, enum sd_program prog, int argc,
                          char **argv, const struct option *own, size_t nown,
                          sd_argv_own_cb cb, void *ctx, char *err, size_t errlen);

/* ---- rendering (sd_settings_doc.c) ---- */

/* The --help block of a tool: its flags, then the variables it reads (one line each
 * for those a flag above describes). */
void sd_settings_usage(FILE *out, enum sd_program prog);
/* The variables prog reads, as --help text (also the smbdirect wrapper's, for the
 * shim). */
void sd_settings_usage_env(FILE *out, enum sd_program prog);
/* The example configuration file's entries: each key commented out at its default,
 * after its help. */
void sd_settings_conf(FILE *out);
/* README.md's table of every setting. */
void sd_settings_markdown(FILE *out);
/* The man pages' ENVIRONMENT entries of the shim's variables (roff). */
void sd_settings_man(FILE *out);

#endif
