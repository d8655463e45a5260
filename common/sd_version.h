/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_version.h — the package's version, as debian/changelog's first entry gives
 * it (its one copy: the Makefile reads it from there and compiles it into sd_version.c),
 * for the programs' --version, the relay's start line and status, and the shim's log. */
#ifndef SMBDIRECT_SD_VERSION_H
#define SMBDIRECT_SD_VERSION_H

/* "0.2.0": the version this build carries. */
const char *sd_version(void);

#endif
