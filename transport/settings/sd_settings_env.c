/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_env.c — the environment front end: each SMBDIRECT_*
 * variable a program reads, read once and parsed by its row, over what the
 * configuration file set (see sd_settings.h). */
#include "sd_settings.h"

#include <stdio.h>
#include <stdlib.h>

int sd_settings_from_env(struct sd_settings *s, enum sd_program prog, char *err,
                         size_t errlen)
{
    char why[256];
    int rc;

    sd_settings_defaults(s, prog);
    rc = sd_settings_from_file(s, prog, err, errlen);
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];
        const char *v;

        if (!(row->env_progs & SD_PROG_BIT(prog)) || !(v = getenv(row->env)) || !*v)
            continue; /* unset or empty: the file's value or the default */
        if (sd_settings_set(s, prog, (enum sd_setting_id)id, v, why, sizeof(why)) == 0)
            continue;
        /* The first error is the one to report: later ones are read and kept quiet. */
        if (rc == 0)
            snprintf(err, errlen, "%s='%s' is invalid: %s", row->env, v, why);
        rc = -1;
    }
    return rc;
}
