/* preload/shim_config.h — every SMBDIRECT_* setting of the shim, read from the
 * environment and validated once, on the first connect() the shim looks at. */
#ifndef SMBDIRECT_SHIM_CONFIG_H
#define SMBDIRECT_SHIM_CONFIG_H

#include <stdint.h>

#include "portmap.h"
#include "smbd_conn.h"

enum shim_transport {
    SHIM_TRANSPORT_AUTO, /* verbs when an RDMA device exists, else soft-iWARP */
    SHIM_TRANSPORT_RDMA, /* rdma-core verbs */
    SHIM_TRANSPORT_SOFT, /* userspace soft-iWARP over TCP */
    SHIM_TRANSPORT_TCP,  /* tunnel nothing */
};

enum shim_fallback {
    SHIM_FALLBACK_TCP,  /* SMB Direct failed: connect over TCP as the program asked */
    SHIM_FALLBACK_NONE, /* SMB Direct failed: the program's connect() fails */
};

#define SHIM_DEFAULT_PORTS "445"
#define SHIM_DEFAULT_CONNECT_TIMEOUT_MS 10000
#define SHIM_DEFAULT_SOCKBUF (4 * 1024 * 1024)

struct shim_config {
    int valid;                  /* 0: some value was invalid; see error */
    char error[320];            /* the first problem, naming the variable and value */
    enum shim_transport transport;
    struct pm_ports ports;      /* SMBDIRECT_PORTS (default 445 even when invalid) */
    struct pm_map portmap;      /* SMBDIRECT_PORTMAP */
    enum shim_fallback fallback;
    struct smbd_config smbd;    /* tuning, active role */
    int connect_timeout_ms;     /* SMBDIRECT_CONNECT_TIMEOUT: RDMA connect + negotiate */
    int sockbuf_bytes;          /* SMBDIRECT_SOCKBUF: socketpair SO_SNDBUF/SO_RCVBUF */
};

/* Reads and validates every variable into cfg. Returns 0, or -1 when a value is
 * invalid (cfg->valid = 0, cfg->error set, and one error line logged). The log
 * level (SMBDIRECT_LOG) is applied as a side effect. */
int shim_config_load(struct shim_config *cfg);

/* The process-wide configuration, loaded on first use. */
const struct shim_config *shim_config_get(void);

#endif
