/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings.h — every setting of the shim, the relay and the probe:
 * one table (sd_settings_table.c, the only place a default or a bound is written), the
 * typed values its rows parse to, and what those values make of an SMB Direct link.
 * Front ends: the configuration file (sd_settings_file.c), the environment
 * (sd_settings_env.c) and the command line (sd_settings_argv.c), in that order of
 * precedence from low to high; sd_settings_load (sd_settings_env.c) runs them, and a
 * report (sd_settings_report.c) says where each value came from and what was wrong.
 * sd_settings_doc.c renders the table for --help, the docs and the example
 * configuration file; sd_settings_show.c the settings in force (--check-config). */
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

/* The programs that take settings. A row says which of them take it (each reads its
 * environment variable and its key in the configuration file) and which of those also
 * take its flag, as masks of SD_PROG_BIT(program). */
enum sd_program { SD_PROG_SHIM, SD_PROG_RELAY, SD_PROG_PROBE, SD_PROG_COUNT };
#define SD_PROG_BIT(p) (1u << (p))
#define SD_PROG_ALL ((1u << SD_PROG_COUNT) - 1)

/* "shim", "relay", "probe": the programs' section names in the file, and their names
 * in messages and docs. */
extern const char *const sd_settings_prog_names[SD_PROG_COUNT];

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
    SD_SET_SERVE_ADDRESSES,
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
    const char *env;            /* environment variable (every row has one) */
    const char *flag;           /* long option without its "--", NULL when none */
    unsigned env_progs;         /* programs taking it: each reads env and the file's key */
    unsigned flag_progs;        /* those also taking --flag (0 when flag is NULL) */
    enum sd_kind kind;
    enum sd_unit unit;          /* NUMBER */
    uint64_t min, max;          /* NUMBER: inclusive bounds */
    const char *const *choices; /* CHOICE: the words, NULL-terminated, in enum order */
    const char *def[SD_PROG_COUNT]; /* each program's default, as text a user could give */
    const char *help;           /* what it does, one sentence */
    const char *brief;          /* README.md's table: the gist of help, true on its own;
                                 * NULL when help itself is as short */
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
    struct sd_prefix_list serve_addresses; /* the relay's own addresses it serves */
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
 * 255"; the front ends put the variable or flag and the value in front of it. The
 * relay and the probe refuse transport tcp: they speak SMB Direct only. */
int sd_settings_set(struct sd_settings *s, enum sd_program prog, enum sd_setting_id id,
                    const char *text, char *why, size_t whylen);

/* Row id's field in s (a uint32_t for a NUMBER row, an int-sized enum or int for a
 * CHOICE row, the row kind's type for the others). */
const void *sd_settings_field(const struct sd_settings *s, enum sd_setting_id id);

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

/* ---- what loading found (sd_settings_report.c) ---- */

/* Where a value in force came from. */
enum sd_origin { SD_ORIGIN_DEFAULT, SD_ORIGIN_FILE, SD_ORIGIN_ENV, SD_ORIGIN_FLAG };

#define SD_REPORT_TEXT 512 /* one problem: "FILE:LINE: what is wrong" */
#define SD_REPORT_KEPT 16  /* problems kept in full; later ones are counted */
#define SD_REPORT_PATH 256

/* One problem met: "FILE:LINE: what is wrong", "NAME='VALUE' is invalid: ..."; a
 * warning's text ends naming the programs it concerns. */
struct sd_settings_problem {
    int is_error;
    char text[SD_REPORT_TEXT];
};

/* What loading one program's settings found besides the values, kept apart from
 * struct sd_settings (which the relay's SIGHUP compares whole): the file read, where
 * each value came from and the problems met. A problem is an error when it concerns
 * prog (a line prog takes, or one whose owner is unknown): prog must not run on it.
 * Any other is a warning: another program's line, which prog goes on without. */
struct sd_settings_report {
    enum sd_program prog;
    char file[SD_REPORT_PATH];           /* the configuration file read; "" when none */
    enum sd_origin origin[SD_SET_COUNT]; /* of each row's value in force */
    unsigned line[SD_SET_COUNT];         /* SD_ORIGIN_FILE: the file's line */
    unsigned errors, warnings;           /* problems met */
    char error[SD_REPORT_TEXT];          /* the first error; "" when none */
    unsigned kept;                       /* problems in problem[], in the order met */
    struct sd_settings_problem problem[SD_REPORT_KEPT];
};

/* r = nothing found yet for prog: every value the default. */
void sd_settings_report_init(struct sd_settings_report *r, enum sd_program prog);

/* Adds a problem concerning the programs in progs (a mask): an error when r's program
 * is one of them, else a warning that says whose it is. */
void sd_settings_report_add(struct sd_settings_report *r, unsigned progs, const char *fmt,
                            ...) __attribute__((format(printf, 3, 4)));

/* Row id's value in force came from origin (line: the file's, else 0). */
void sd_settings_report_from(struct sd_settings_report *r, enum sd_setting_id id,
                             enum sd_origin origin, unsigned line);

/* Where row id's value came from: "default", "FILE:LINE", "environment SMBDIRECT_X"
 * or "flag --x". Returns buf. */
char *sd_settings_report_source(const struct sd_settings_report *r, enum sd_setting_id id,
                                char *buf, size_t len);

/* ---- configuration file front end (sd_settings_file.c) ---- */

#define SD_CONFIG_DEFAULT "/etc/smbdirect/smbdirect.conf"

/* The file's key for row id: its variable's name without SMBDIRECT_, in lower case
 * ("credits", "max_send_size"). Returns buf. */
const char *sd_settings_key(enum sd_setting_id id, char *buf, size_t len);

/* Applies the configuration file to s for r's program: file, else the one
 * SMBDIRECT_CONFIG names (empty: none), else SD_CONFIG_DEFAULT when it exists.
 * "key = value" lines ('#' starts a comment) before any section header are for every
 * program that takes the key, those after [shim], [relay] or [probe] for that program
 * ([global] goes back to every program). Every line is checked for every program it
 * concerns; those for r's program that are right are applied, each problem goes to r
 * (sd_settings_report_add: a line is the error of the programs it concerns; a section
 * header, a key or a line that names no program concerns every program, as does a
 * file that cannot be read; the lines after an unknown section header are nobody's). */
void sd_settings_from_file(struct sd_settings *s, const char *file,
                           struct sd_settings_report *r);

/* ---- environment front end (sd_settings_env.c) ---- */

/* Applies to s every variable r's program reads, each read once; unset or empty keeps
 * what the file or the default gave. An invalid one is an error in r
 * ("NAME='VALUE' is invalid: use ...") and leaves the value before it. */
void sd_settings_from_env(struct sd_settings *s, struct sd_settings_report *r);

/* ---- command-line front end (sd_settings_argv.c) ---- */

/* The setting flags of a command line: for each row, the last value given (checked
 * already), or NULL. */
struct sd_settings_flags {
    const char *arg[SD_SET_COUNT];
};

/* A program's own options (getopt_long entries; val from 1 to SD_ARGV_OWN_MAX_VAL,
 * not '?' or ':'; at most SD_ARGV_OWN_MAX of them; one whose val is a letter is also
 * -LETTER, as 'h' makes -h the same as --help) reach it through this callback with
 * optarg or NULL: 0, or -1 with one line for the user in err. */
#define SD_ARGV_OWN_MAX     16
#define SD_ARGV_OWN_MAX_VAL 0xfff
typedef int (*sd_argv_own_cb)(void *ctx, int val, const char *arg, char *err, size_t errlen);

/* getopt_long over argv: the program's own options and --FLAG VALUE for every row prog
 * takes as a flag, each value checked (the last of a repeated flag wins) into flags.
 * Returns the index of the first operand (getopt_long moves them behind the options),
 * or -1 with one line for the user in err ("--credits: '999' is invalid: use a whole
 * number from 3 to 255"). */
int sd_settings_parse_argv(enum sd_program prog, int argc, char **argv,
                           const struct option *own, size_t nown, sd_argv_own_cb cb,
                           void *ctx, struct sd_settings_flags *flags, char *err,
                           size_t errlen);

/* ---- all of them (sd_settings_env.c) ---- */

/* s = prog's settings: its defaults, then the configuration file (file, as
 * sd_settings_from_file), then the environment, then flags (NULL: none), each over the
 * one before; r = where each came from and every problem. 0, or -1 when r holds an
 * error (r->error: the first): prog must not run on s, which holds every value that
 * was right. */
int sd_settings_load(struct sd_settings *s, enum sd_program prog, const char *file,
                     const struct sd_settings_flags *flags, struct sd_settings_report *r);

/* ---- the settings in force (sd_settings_show.c) ---- */

/* --check-config: prints on out r's program's settings s as a configuration file (its
 * section header, then each key it takes with its value in force and, as a comment,
 * where that came from: "# default", "# FILE:LINE", "# environment SMBDIRECT_X",
 * "# flag --x") when r holds no error, and r's problems on diag (the errors as they
 * are, "FILE:LINE: what is wrong", the warnings after "warning: "). 0 when r holds no
 * error, else 1. */
int sd_settings_check_config(FILE *out, FILE *diag, const struct sd_settings *s,
                             const struct sd_settings_report *r);

/* ---- rendering (sd_settings_doc.c) ---- */

/* The --help block of a tool: its flags, then the variables it reads (one line each
 * for those a flag above describes). */
void sd_settings_usage(FILE *out, enum sd_program prog);
/* The variables prog reads, as --help text (also the smbdirect wrapper's, for the
 * shim): a variable of one of prog's flags by name, the others in full. */
void sd_settings_usage_env(FILE *out, enum sd_program prog);
/* The example configuration file's entries: each key commented out at its default,
 * after its help. */
void sd_settings_conf(FILE *out);
/* README.md's table of every setting. */
void sd_settings_markdown(FILE *out);
/* The man pages' ENVIRONMENT entries of the shim's variables (roff). */
void sd_settings_man(FILE *out);
/* Row id's value in s as text that sd_settings_set takes back to the same value
 * ("255", "soft", "445,8445", "none"). Returns buf. */
char *sd_settings_format(const struct sd_settings *s, enum sd_setting_id id, char *buf,
                         size_t len);
/* smbdirect.conf(5)'s KEYS entries: every key, the programs taking it, its values and
 * defaults, its variable and flag (roff). */
void sd_settings_man_keys(FILE *out);

#endif
