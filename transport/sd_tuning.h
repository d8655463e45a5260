/* transport/sd_tuning.h — named tuning settings of an SMB Direct link, shared by the
 * programs' command-line flags (--NAME VALUE) and any NAME=VALUE configuration. */
#ifndef SMBDIRECT_SD_TUNING_H
#define SMBDIRECT_SD_TUNING_H

#include <stddef.h>

#include "smbd_link.h"

/* One line per setting, "  --NAME N   meaning", for usage texts. */
extern const char sd_tuning_usage[];

/* The settings' names, for building option tables: i from 0 while non-NULL. */
const char *sd_tuning_name(size_t i);

/* Sets name (e.g. "max-send-size") from value in o. 0, or -EINVAL with a message
 * naming the setting in err. Ranges of related fields are checked afterwards by
 * smbd_config_check. */
int sd_tuning_set(struct smbd_link_opts *o, const char *name, const char *value, char *err,
                  size_t errlen);

#endif
