/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_real.c — finds the definition behind an interposed library name
 * (shim_real.h): RTLD_NEXT, else the calling object's own scope. */
#include "shim_real.h"

#include <dlfcn.h>
#include <stddef.h>

/* name's definition in handle's search scope, unless it is the shim's own (the main
 * program's handle searches the global scope, where the shim comes first). */
static void *outside_shim(void *handle, const char *name)
{
    Dl_info found, self;
    void *fn = dlsym(handle, name);

    if (fn && dladdr(fn, &found) && dladdr((void *)outside_shim, &self) &&
        found.dli_fbase == self.dli_fbase)
        return NULL;
    return fn;
}

void *shim_real_lookup(const char *name, const void *caller)
{
    void *fn = outside_shim(RTLD_NEXT, name), *handle;
    Dl_info info;

    if (!fn && caller && dladdr(caller, &info) && info.dli_fname &&
        (handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
        fn = outside_shim(handle, name);
        dlclose(handle); /* only drops the reference RTLD_NOLOAD took */
    }
    return fn;
}
