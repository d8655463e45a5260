/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_real.h — the real definition of a name the shim interposes in a library
 * other than libc (Samba's client library, GnuTLS): the one after the shim in lookup
 * order (RTLD_NEXT) when the library came with the program (smbclient, smbget), else the
 * one the calling library sees. A library dlopen()ed without RTLD_GLOBAL, as Python
 * loads libsmbclient for its smbc module, is outside the order RTLD_NEXT walks; it still
 * calls the shim's definition (the shim is first in the global scope), so the name is
 * then looked up from the object holding the return address, opened again with
 * RTLD_NOLOAD, whose dlsym searches it and its dependencies. */
#ifndef SMBDIRECT_SHIM_REAL_H
#define SMBDIRECT_SHIM_REAL_H

/* name's definition other than the shim's: RTLD_NEXT's, else the scope of the object
 * holding caller (the interposer's return address). NULL when neither has one. Takes the
 * dynamic loader's lock: callers keep what it returns. */
void *shim_real_lookup(const char *name, const void *caller);

#endif
