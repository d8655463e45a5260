/* transport/settings/sd_tuning.h — named tuning settings of an SMB Direct link, shared by the
 * programs' command-line flags (--NAME VALUE) and any NAME=VALUE configuration, and the
 * tuned defaults the shim and the relay start from. */
#ifndef SMBDIRECT_SD_TUNING_H
#define SMBDIRECT_SD_TUNING_H

#include <stddef.h>

#include "smbd_link.h"

/* The preferred send size the shim and the relay start from (the engine's own default
 * stays at the MS-SMBD Appendix B 1364): the largest PreferredSendSize Windows Server
 * accepts (MS-SMBD 3.1.5.6, Appendix B note <5>: larger values fail the negotiation
 * with STATUS_INSUFFICIENT_RESOURCES). The negotiated MaxSendSize is still capped by
 * the peer's MaxReceiveSize (3.1.5.7), so peers that receive 1364 bytes get 1364. */
#define SD_TUNED_MAX_SEND_SIZE 8136u
/* RDMA Read depths (MS-SMBD 6.1 IRD/ORD) the shim and the programs offer and ask for;
 * providers clamp them to what the device supports. */
#define SD_TUNED_RDMA_READ_DEPTH 16u

/* smbd_config_default for role, with the tuned defaults above. */
void sd_tuning_defaults(struct smbd_config *cfg, enum smbd_role role);

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
