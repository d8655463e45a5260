/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_show.c — --check-config: a program's settings in
 * force written as a configuration file, each with where it came from, and the
 * problems loading them met (see sd_settings.h). */
#include "sd_settings.h"

#include <string.h>

#define SOURCE_COLUMN 40 /* where "# source" starts after a short "key = value" */
#define VALUE_MAX 4096   /* the longest value: a full address map */

int sd_settings_check_config(FILE *out, FILE *diag, const struct sd_settings *s,
                             const struct sd_settings_report *r)
{
    const char *name = sd_settings_prog_names[r->prog];

    for (unsigned i = 0; i < r->kept; i++)
        fprintf(diag, "%s%s\n", r->problem[i].is_error ? "" : "warning: ", r->problem[i].text);
    if (r->errors + r->warnings > r->kept)
        fprintf(diag, "(%u more problems not shown)\n", r->errors + r->warnings - r->kept);
    if (r->errors)
        return 1;
    fprintf(out, "# The %s's settings in force and where each comes from\n", name);
    fprintf(out, "# Configuration file: %s\n", *r->file ? r->file : "none");
    fprintf(out, "[%s]\n", name);
    for (int id = 0; id < SD_SET_COUNT; id++) {
        char key[64], value[VALUE_MAX], source[SD_REPORT_PATH + 64];
        int n;

        if (!(sd_settings_table[id].env_progs & SD_PROG_BIT(r->prog)))
            continue;
        sd_settings_key((enum sd_setting_id)id, key, sizeof(key));
        sd_settings_format(s, (enum sd_setting_id)id, value, sizeof(value));
        sd_settings_report_source(r, (enum sd_setting_id)id, source, sizeof(source));
        n = fprintf(out, "%s =%s%s", key, *value ? " " : "", value);
        fprintf(out, "%*s# %s\n", n < SOURCE_COLUMN ? SOURCE_COLUMN - n : 2, "", source);
    }
    return 0;
}
