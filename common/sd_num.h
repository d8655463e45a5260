/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_num.h — the one number parser of the project: strict unsigned decimal
 * (digits only: no sign, blanks, base prefix or suffix), range-checked without
 * overflow. Settings, port lists, HOST:PORT and every other number read from text go
 * through it, so "what is a valid number" has one answer. */
#ifndef SMBDIRECT_SD_NUM_H
#define SMBDIRECT_SD_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Parses exactly the len bytes at s as a decimal in [min, max] into *out. 0, or -1
 * (*out untouched) when empty, not all digits, or out of range. */
int sd_num_parse(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out);

/* The same for a NUL-terminated string. */
int sd_num_parse_str(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
