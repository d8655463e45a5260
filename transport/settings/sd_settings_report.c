/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_report.c — what loading a program's settings found
 * besides the values: where each came from and the problems met, an error for the
 * program they concern and a warning for the others (see sd_settings.h). */
#include "sd_settings.h"

#include <stdarg.h>
#include <string.h>

void sd_settings_report_init(struct sd_settings_report *r, enum sd_program prog)
{
    memset(r, 0, sizeof(*r)); /* SD_ORIGIN_DEFAULT everywhere */
    r->prog = prog;
}

/* Appends " the relay and the probe" for a mask of programs to buf. */
static void add_progs(char *buf, size_t len, unsigned progs)
{
    int left = __builtin_popcount(progs);

    for (int p = 0; p < SD_PROG_COUNT; p++) {
        size_t n = strlen(buf);

        if (!(progs & SD_PROG_BIT(p)))
            continue;
        left--;
        snprintf(buf + n, len - n, " the %s%s", sd_settings_prog_names[p],
                 left > 1 ? "," : left == 1 ? " and" : "");
    }
}

void sd_settings_report_add(struct sd_settings_report *r, unsigned progs, const char *fmt,
                            ...)
{
    int is_error = (progs & SD_PROG_BIT(r->prog)) != 0;
    char text[SD_REPORT_TEXT], whose[64] = "";
    struct sd_settings_problem *p;
    va_list ap;
    size_t n;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (is_error) {
        if (r->errors++ == 0)
            snprintf(r->error, sizeof(r->error), "%s", text);
    } else {
        r->warnings++;
        add_progs(whose, sizeof(whose), progs);
    }
    if (r->kept == SD_REPORT_KEPT)
        return;
    p = &r->problem[r->kept++];
    p->is_error = is_error;
    snprintf(p->text, sizeof(p->text), "%s", text);
    n = strlen(p->text);
    if (!is_error)
        snprintf(p->text + n, sizeof(p->text) - n, "; this concerns%s, not the %s", whose,
                 sd_settings_prog_names[r->prog]);
}

void sd_settings_report_from(struct sd_settings_report *r, enum sd_setting_id id,
                             enum sd_origin origin, unsigned line)
{
    r->origin[id] = origin;
    r->line[id] = line;
}

char *sd_settings_report_source(const struct sd_settings_report *r, enum sd_setting_id id,
                                char *buf, size_t len)
{
    switch (r->origin[id]) {
    case SD_ORIGIN_DEFAULT: snprintf(buf, len, "default"); break;
    case SD_ORIGIN_FILE: snprintf(buf, len, "%s:%u", r->file, r->line[id]); break;
    case SD_ORIGIN_ENV: snprintf(buf, len, "environment %s", sd_settings_table[id].env); break;
    case SD_ORIGIN_FLAG: snprintf(buf, len, "flag --%s", sd_settings_table[id].flag); break;
    }
    return buf;
}
