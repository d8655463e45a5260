/* SPDX-License-Identifier: BSD-3-Clause */
/* portmap/pm_list.c — list entries, ports and error text shared by the port and
 * address maps (see pm_list.h). */
#include "pm_list.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sd_num.h"

void pm_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int pm_next_token(const char **pos, struct pm_token *t)
{
    const char *p = *pos, *end;

    if (!p)
        return 0;
    end = strchr(p, ',');
    if (!end)
        end = p + strlen(p);
    *pos = *end ? end + 1 : NULL;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    t->start = p;
    t->len = (size_t)(end - p);
    return 1;
}

int pm_parse_port(const char *s, size_t len, uint16_t *out)
{
    uint64_t v;

    if (sd_num_parse(s, len, 1, 65535, &v) < 0)
        return -1;
    *out = (uint16_t)v;
    return 0;
}
