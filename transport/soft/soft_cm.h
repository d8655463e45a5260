/* transport/soft/soft_cm.h — soft-iWARP connection management: TCP connect, listen
 * and accept plus the MPA exchange, bounded by the caller's timeout. */
#ifndef SMBDIRECT_SOFT_CM_H
#define SMBDIRECT_SOFT_CM_H

#include "provider.h"

struct sd_qp *sd_soft_connect(const struct sockaddr *addr, socklen_t addrlen,
                              const struct sd_cm_params *params, int timeout_ms,
                              struct sd_cm_result *result, int *err);
struct sd_listener *sd_soft_listen(const struct sockaddr *addr, socklen_t addrlen, int backlog,
                                   int *err);
int sd_soft_listener_fd(struct sd_listener *l);
struct sd_qp *sd_soft_accept(struct sd_listener *l, const struct sd_cm_params *params,
                             int timeout_ms, struct sd_cm_result *result, int *err);
void sd_soft_listener_close(struct sd_listener *l);

#endif
