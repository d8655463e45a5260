/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_int.h — private to transport/settings/: what its files
 * share beside sd_settings.h, the text appender of the renderings (sd_settings_doc.c)
 * and of the values in force (sd_settings_show.c). */
#ifndef SMBDIRECT_SD_SETTINGS_INT_H
#define SMBDIRECT_SD_SETTINGS_INT_H

#include <stddef.h>

#include "sd_settings.h"

/* Appends to buf (of len bytes, holding a string), cut at its end. */
void sd_settings_add(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
