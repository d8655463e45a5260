/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_version.c — the version the Makefile passes as SD_VERSION (see sd_version.h). */
#include "sd_version.h"

#ifndef SD_VERSION
#error "SD_VERSION is the Makefile's, read from debian/changelog"
#endif
_Static_assert(sizeof(SD_VERSION) > 1, "SD_VERSION is empty: debian/changelog's first line "
                                       "names no version");

const char *sd_version(void)
{
    return SD_VERSION;
}
