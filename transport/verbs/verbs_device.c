/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_device.c — is there an RDMA device at all, and is the one
 * that routes to a destination iWARP (MS-SMB2: port 5445 and the MS-SMBD Appendix A
 * header) or InfiniBand/RoCE (port 445)? Fails fast without a device. */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "verbs_priv.h"
#include "sd_clock.h"

#define SD_VERBS_RESOLVE_MS 2000

int sd_verbs_device_present(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);

    if (!list)
        return 0; /* ENOSYS: no kernel RDMA support */
    ibv_free_device_list(list);
    return n > 0;
}

int sd_verbs_require_device(const char *what)
{
    if (sd_verbs_device_present())
        return 0;
    sd_error("no RDMA device: %s needs rdma-core with an RDMA device; use "
             "SMBDIRECT_TRANSPORT=soft for userspace soft-iWARP", what);
    return -ENODEV;
}

int sd_verbs_is_iwarp(const struct sockaddr *dst, socklen_t dstlen)
{
    struct rdma_event_channel *ch = NULL;
    struct rdma_cm_id *id = NULL;
    struct sd_verbs_cm_event ev;
    int rc;

    if (!dst || dstlen < sizeof(struct sockaddr_in))
        return -EINVAL;
    rc = sd_verbs_require_device("is_iwarp");
    if (rc)
        return rc;
    rc = sd_verbs_new_cm_id(&ch, &id);
    if (rc)
        return rc;
    if (rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, SD_VERBS_RESOLVE_MS))
        rc = -errno;
    if (!rc)
        rc = sd_verbs_wait_cm_event(ch, (long long)sd_now_ms() + SD_VERBS_RESOLVE_MS + 500, &ev);
    if (!rc && ev.type != RDMA_CM_EVENT_ADDR_RESOLVED)
        rc = ev.status < 0 ? ev.status : -EHOSTUNREACH;
    if (!rc && (!id->verbs || !id->verbs->device))
        rc = -ENODEV;
    if (!rc)
        rc = id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
    if (rc < 0)
        sd_warn("verbs: no RDMA device reaches the destination: %s", strerror(-rc));
    rdma_destroy_id(id);
    rdma_destroy_event_channel(ch);
    /* No route over RDMA means no device for this destination. */
    return rc == -EHOSTUNREACH || rc == -EADDRNOTAVAIL || rc == -ENETUNREACH ? -ENODEV : rc;
}
