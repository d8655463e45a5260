/* transport/bridge/smbd_link_int.h — what the bridge needs from a link beyond smbd_link.h:
 * the engine itself, re-pointing its upcalls, and letting an sd_loop drive the
 * provider fd and the engine's timers. Internal to transport/. */
#ifndef SMBDIRECT_SMBD_LINK_INT_H
#define SMBDIRECT_SMBD_LINK_INT_H

#include "sd_loop.h"
#include "smbd_link.h"

struct smbd_conn *smbd_link_engine(struct smbd_link *k);

/* From now on the engine's upcalls go to up/ctx (NULL: the link keeps them, as while
 * negotiating; then completions stop being polled once the link is established, so no
 * message is delivered to nobody). The link delivers by fragments: up->deliver_fragment
 * must be set, up->deliver is not used. */
void smbd_link_set_upper(struct smbd_link *k, const struct smbd_upper *up, void *ctx);

/* loop watches the provider fd and runs the engine's timers; after(ctx) (may be NULL)
 * runs at the end of each such callback, outside any engine call. Polls the provider
 * once right away, for completions it may already hold. 0 or -errno. */
int smbd_link_attach(struct smbd_link *k, struct sd_loop *loop, void (*after)(void *ctx),
                     void *ctx);
void smbd_link_detach(struct smbd_link *k);

/* Moves completions and refreshes the fd watch and the timer. Call it after engine
 * calls made outside the link's own callbacks (sends, pause/resume of receives). */
void smbd_link_kick(struct smbd_link *k);

#endif
