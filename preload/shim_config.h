/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_config.h — the shim's view of its settings: the configuration file's
 * lines and every SMBDIRECT_* variable it takes, loaded once by the settings module
 * (transport/settings) on the first connect() the shim looks at, and the link options
 * they make. */
#ifndef SMBDIRECT_SHIM_CONFIG_H
#define SMBDIRECT_SHIM_CONFIG_H

#include "sd_settings.h"
#include "smbd_link.h"

struct shim_config {
    int valid;                  /* 0: a problem concerns the shim; see report.error */
    struct sd_settings set;     /* every setting; an invalid one keeps the value before */
    struct smbd_link_opts link; /* active role; provider and Appendix A header unset */
    struct sd_settings_report report; /* the file read, each problem (the first error:
                                       * report.error, naming the variable or FILE:LINE) */
};

/* Loads and validates the file's lines and every variable into cfg. Returns 0, or -1
 * when a problem concerns the shim (cfg->valid = 0, one error line logged); each
 * warning (another program's bad line) is logged too. The log level (SMBDIRECT_LOG,
 * log) is applied as a side effect. */
int shim_config_load(struct shim_config *cfg);

/* The process-wide configuration, loaded on first use. */
const struct shim_config *shim_config_get(void);

#endif
