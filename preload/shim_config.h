/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_config.h — the shim's view of its settings: every SMBDIRECT_* variable
 * it reads, parsed once by the settings module (transport/settings) on the first
 * connect() the shim looks at, and the link options they make. */
#ifndef SMBDIRECT_SHIM_CONFIG_H
#define SMBDIRECT_SHIM_CONFIG_H

#include "sd_settings.h"
#include "smbd_link.h"

struct shim_config {
    int valid;                  /* 0: some value was invalid; see error */
    char error[320];            /* the first problem, naming the variable and value */
    struct sd_settings set;     /* every setting; an invalid one keeps its default */
    struct smbd_link_opts link; /* active role; provider and Appendix A header unset */
};

/* Reads and validates every variable into cfg. Returns 0, or -1 when a value is
 * invalid (cfg->valid = 0, cfg->error set, and one error line logged). The log
 * level (SMBDIRECT_LOG) is applied as a side effect. */
int shim_config_load(struct shim_config *cfg);

/* The process-wide configuration, loaded on first use. */
const struct shim_config *shim_config_get(void);

#endif
