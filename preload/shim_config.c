/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_config.c — the shim's settings, loaded once by the settings module from
 * the configuration file and the environment. A problem that concerns the shim (a bad
 * variable, a bad line the shim takes, a file that cannot be read) makes the
 * configuration invalid: the shim then fails connects to intercepted ports with EINVAL
 * (shim_tunnel.c) and every other socket passes through. Another program's bad line is
 * a warning in the log. */
#include "shim_config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "log.h"

int shim_config_load(struct shim_config *cfg)
{
    const struct sd_settings_report *r = &cfg->report;

    memset(cfg, 0, sizeof(*cfg));
    cfg->valid = sd_settings_load(&cfg->set, SD_PROG_SHIM, NULL, NULL, &cfg->report) == 0;
    sd_log_set_level(cfg->set.log_level);
    sd_settings_link_opts(&cfg->set, SMBD_ROLE_ACTIVE, &cfg->link);
    for (unsigned i = 0; i < r->kept; i++)
        if (!r->problem[i].is_error)
            sd_warn("%s", r->problem[i].text);
    if (cfg->valid)
        return 0;
    sd_error("%s; connects to SMB ports will fail with EINVAL until it is fixed", r->error);
    return -1;
}

static struct shim_config process_config;
static pthread_once_t process_config_once = PTHREAD_ONCE_INIT;

static void load_process_config(void)
{
    int saved = errno;

    shim_config_load(&process_config);
    errno = saved;
}

const struct shim_config *shim_config_get(void)
{
    pthread_once(&process_config_once, load_process_config);
    return &process_config;
}
