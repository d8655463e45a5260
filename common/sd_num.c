/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_num.c — strict decimal parsing (see sd_num.h). */
#include "sd_num.h"

#include <string.h>

int sd_num_parse(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (!s || len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');

        if (d > 9 || d > max || v > (max - d) / 10) /* not a digit, or past max */
            return -1;
        v = v * 10 + d;
    }
    if (v < min)
        return -1;
    *out = v;
    return 0;
}

int sd_num_parse_str(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    return sd_num_parse(s, s ? strlen(s) : 0, min, max, out);
}
