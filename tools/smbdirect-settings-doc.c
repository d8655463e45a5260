/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/smbdirect-settings-doc.c — prints the settings table as one of the blocks the
 * docs carry between "settings:begin" and "settings:end" markers; scripts/settings-docs
 * (make docs) splices them in and the unit tier checks they are current. Built, not
 * installed. */
#include <stdio.h>
#include <string.h>

#include "sd_settings.h"

int main(int argc, char **argv)
{
    const char *f = argc == 2 ? argv[1] : "";

    if (strcmp(f, "--markdown") == 0) {
        sd_settings_markdown(stdout);
    } else if (strcmp(f, "--conf") == 0) {
        sd_settings_conf(stdout);
    } else if (strcmp(f, "--man") == 0) {
        sd_settings_man(stdout);
    } else if (strcmp(f, "--man-keys") == 0) {
        sd_settings_man_keys(stdout);
    } else if (strcmp(f, "--wrapper") == 0) { /* a here-document for tools/smbdirect.in */
        printf("    cat <<'SETTINGS'\n");
        sd_settings_usage_env(stdout, SD_PROG_SHIM);
        printf("SETTINGS\n");
    } else {
        fprintf(stderr, "Usage: smbdirect-settings-doc --markdown|--man|--man-keys|--wrapper|--conf\n");
        return 2;
    }
    return ferror(stdout) ? 1 : 0;
}
