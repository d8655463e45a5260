/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_env.c — the environment front end: each SMBDIRECT_*
 * variable a program reads, read once and parsed by its row, over what the
 * configuration file set; and loading a program's settings from all the front ends in
 * their order (see sd_settings.h). */
#include "sd_settings.h"

#include <stdio.h>
#include <stdlib.h>

void sd_settings_from_env(struct sd_settings *s, struct sd_settings_report *r)
{
    char why[256];

    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];
        const char *v;

        if (!(row->env_progs & SD_PROG_BIT(r->prog)) || !(v = getenv(row->env)) || !*v)
            continue; /* unset or empty: the file's value or the default */
        if (sd_settings_set(s, r->prog, (enum sd_setting_id)id, v, why, sizeof(why)) == 0)
            sd_settings_report_from(r, (enum sd_setting_id)id, SD_ORIGIN_ENV, 0);
        else
            sd_settings_report_add(r, SD_PROG_BIT(r->prog), "%s='%s' is invalid: %s",
                                   row->env, v, why);
    }
}

int sd_settings_load(struct sd_settings *s, enum sd_program prog, const char *file,
                     const struct sd_settings_flags *flags, struct sd_settings_report *r)
{
    char why[256];

    sd_settings_defaults(s, prog);
    sd_settings_report_init(r, prog);
    sd_settings_from_file(s, file, r);
    sd_settings_from_env(s, r);
    for (int id = 0; flags && id < SD_SET_COUNT; id++) {
        const char *arg = flags->arg[id];

        /* Checked when parsed (sd_settings_parse_argv); a name may resolve no more. */
        if (!arg)
            continue;
        if (sd_settings_set(s, prog, (enum sd_setting_id)id, arg, why, sizeof(why)) == 0)
            sd_settings_report_from(r, (enum sd_setting_id)id, SD_ORIGIN_FLAG, 0);
        else
            sd_settings_report_add(r, SD_PROG_BIT(prog), "--%s: '%s' is invalid: %s",
                                   sd_settings_table[id].flag, arg, why);
    }
    return r->errors ? -1 : 0;
}
