/* transport/link/smbd_link_int.h — what the bridge needs from a link beyond smbd_link.h:
 * the engine itself, handing its upcalls to the bridge, and letting an sd_loop drive
 * the provider fd, the engine's timers and the requests the owner's calls queue.
 * For the bridge (the owner of an established link). */
#ifndef SMBDIRECT_SMBD_LINK_INT_H
#define SMBDIRECT_SMBD_LINK_INT_H

#include "sd_loop.h"
#include "smbd_link.h"

struct smbd_conn *smbd_link_engine(struct smbd_link *k);
const struct sd_provider_ops *smbd_link_provider(const struct smbd_link *k);

/* From now on the engine calls up/ctx directly (NULL: the link's own upcalls again, as
 * while negotiating; then completions stop being polled once the link is established,
 * so no message is delivered to nobody). up->deliver_fragment must be set. */
void smbd_link_set_upper(struct smbd_link *k, const struct smbd_upper *up, void *ctx);

/* loop watches the provider fd and runs the engine's timers, and before it sleeps moves
 * whatever the owner's engine calls (smbd_conn_send, pause/resume, disconnect) asked
 * of the provider (a prepare hook); after(ctx) (may be NULL) runs at the end of each
 * such callback, outside any engine call. Polls the provider once right away, for
 * completions it may already hold. 0 or -errno. */
int smbd_link_attach(struct smbd_link *k, struct sd_loop *loop, void (*after)(void *ctx),
                     void *ctx);
void smbd_link_detach(struct smbd_link *k);

#endif
