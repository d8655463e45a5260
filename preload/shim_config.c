/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_config.c — the shim's settings, read from the environment once by the
 * settings module. Any invalid value makes the configuration invalid: the shim then
 * fails connects to intercepted ports with EINVAL (shim_tunnel.c) and every other
 * socket passes through. */
#include "shim_config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "log.h"

int shim_config_load(struct shim_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->valid = sd_settings_from_env(&cfg->set, SD_PROG_SHIM, cfg->error,
                                      sizeof(cfg->error)) == 0;
    sd_log_set_level(cfg->set.log_level);
    sd_settings_link_opts(&cfg->set, SMBD_ROLE_ACTIVE, &cfg->link);
    if (cfg->valid)
        return 0;
    sd_error("%s; connects to SMB ports will fail with EINVAL until it is fixed", cfg->error);
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
