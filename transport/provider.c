/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/provider.c — helpers shared by every user of the provider interface. */
#include "provider.h"

#include <errno.h>
#include <string.h>

const char *sd_wc_status_str(enum sd_wc_status status)
{
    switch (status) {
    case SD_WC_SUCCESS: return "success";
    case SD_WC_FLUSHED: return "flushed (connection closed)";
    case SD_WC_LOCAL_LENGTH: return "incoming Send larger than the posted receive";
    case SD_WC_LOCAL_PROT: return "local buffer outside its registration";
    case SD_WC_REMOTE_ACCESS: return "the peer refused a remote memory access";
    case SD_WC_REMOTE_OP: return "the peer terminated the connection";
    case SD_WC_FATAL: return "transport failure";
    }
    return "unknown status";
}

const char *sd_cm_strerror(int err)
{
    if (err == -EACCES)
        return "refused by the server (its access policy or connection limits)";
    return strerror(-err);
}
