/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_argv.c — the command-line front end of the tools:
 * getopt_long over a tool's own options and one --FLAG VALUE per setting row, each
 * value checked and kept to be applied over the file and the variables
 * (sd_settings_load; see sd_settings.h). */
#include "sd_settings.h"

#include <stdio.h>
#include <string.h>

/* getopt_long value of a setting's flag: above every value a tool may use. */
#define SETTING_VAL(id) (SD_ARGV_OWN_MAX_VAL + 1 + (id))

/* getopt's short options: ":" (a missing value is reported as ':'), then every own
 * option whose val is a letter, as -LETTER (with ':' when it takes a value). */
static void build_shortopts(char *shortopts, const struct option *own, size_t nown)
{
    size_t n = 0;

    shortopts[n++] = ':';
    for (size_t i = 0; i < nown; i++) {
        int v = own[i].val;

        if (!((v >= 'a' && v <= 'z') || (v >= 'A' && v <= 'Z')))
            continue;
        shortopts[n++] = (char)v;
        if (own[i].has_arg == required_argument)
            shortopts[n++] = ':';
    }
    shortopts[n] = '\0';
}

/* Whether val is one of the program's own options. After a '?', getopt's optopt is an
 * own option's val when that option was given a value it takes none of (--help=x), else
 * the unknown short option's letter (or 0 after an unknown long option). */
static int is_own(const struct option *own, size_t nown, int val)
{
    for (size_t i = 0; i < nown; i++)
        if (own[i].val == val)
            return 1;
    return 0;
}

/* opts = own, one entry per flag of prog, the zero entry. */
static void build_options(struct option *opts, enum sd_program prog, const struct option *own,
                          size_t nown)
{
    size_t n = nown;

    if (nown)
        memcpy(opts, own, nown * sizeof(*own)); /* own may be NULL when nown is 0 */
    for (int id = 0; id < SD_SET_COUNT; id++)
        if (sd_settings_table[id].flag_progs & SD_PROG_BIT(prog))
            opts[n++] = (struct option){ sd_settings_table[id].flag, required_argument, NULL,
                                         SETTING_VAL(id) };
    opts[n] = (struct option){ 0 };
}

int sd_settings_parse_argv(enum sd_program prog, int argc, char **argv,
                           const struct option *own, size_t nown, sd_argv_own_cb cb,
                           void *ctx, struct sd_settings_flags *flags, char *err,
                           size_t errlen)
{
    struct option opts[SD_ARGV_OWN_MAX + SD_SET_COUNT + 1];
    char shortopts[2 * SD_ARGV_OWN_MAX + 2];
    struct sd_settings scratch;
    char why[256];
    int o;

    if (nown > SD_ARGV_OWN_MAX) {
        snprintf(err, errlen, "more than %d options of the program's own", SD_ARGV_OWN_MAX);
        return -1;
    }
    memset(flags, 0, sizeof(*flags));
    sd_settings_defaults(&scratch, prog);
    build_options(opts, prog, own, nown);
    build_shortopts(shortopts, own, nown);
    optind = 0; /* glibc: start afresh, also when called again */
    opterr = 0;
    while ((o = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        if (o > SD_ARGV_OWN_MAX_VAL) {
            enum sd_setting_id id = (enum sd_setting_id)(o - SETTING_VAL(0));

            if (sd_settings_set(&scratch, prog, id, optarg, why, sizeof(why)) == 0) {
                flags->arg[id] = optarg;
                continue;
            }
            snprintf(err, errlen, "--%s: '%s' is invalid: %s", sd_settings_table[id].flag,
                     optarg, why);
            return -1;
        }
        if (o == ':') {
            snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
            return -1;
        }
        if (o == '?' && optopt && !is_own(own, nown, optopt)) {
            /* an unknown -X, alone or in a cluster (within -qX optind has not moved on) */
            snprintf(err, errlen, "unknown option '-%c'", optopt);
            return -1;
        }
        if (o == '?') {
            snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
            return -1;
        }
        if (cb(ctx, o, optarg, err, errlen) < 0)
            return -1;
    }
    return optind;
}
