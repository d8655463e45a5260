/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_smb2cli.c — smb2cli_conn_max_{write,read,trans}_size: the sizes
 * Samba's client library (libcli-smb-common, called from liblibsmb: smbclient, smbget,
 * smbcacls...) gives each SMB2 WRITE, READ and IOCTL/QUERY request. For a tunneled
 * connection the real value is lowered with shim_iosize_cap so every message fits the
 * SMB Direct connection: a signed or sealed session's READ/WRITE can never use the
 * RDMA channel (the signature covers the data), so it must fit inline in the peer's
 * MaxFragmentedSize (MS-SMBD 3.1.4.2); one the channel carries takes the channel's
 * I/O size. The connection is found by its socket names, which Samba took from
 * getsockname/getpeername of the tunneled fd. Other programs never call these; other
 * connections get the real value.
 *
 * Samba's definitions are found with shim_real_lookup: after the shim in lookup order
 * when its libraries came with the program (smbclient, smbget), else from the calling
 * library (libsmbclient dlopen()ed by Python without RTLD_GLOBAL). */
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include "log.h"
#include "shim_fdtable.h"
#include "shim_iosize.h"
#include "shim_real.h"

struct smbXcli_conn; /* Samba's, opaque here */

typedef uint32_t conn_size_fn(struct smbXcli_conn *conn);
typedef const struct sockaddr_storage *conn_addr_fn(struct smbXcli_conn *conn);

struct real_fns {
    conn_size_fn *size[3]; /* indexed by enum shim_io_kind */
    conn_addr_fn *local, *remote;
};

static const char *const size_names[3] = {
    [SHIM_IO_READ] = "smb2cli_conn_max_read_size",
    [SHIM_IO_WRITE] = "smb2cli_conn_max_write_size",
    [SHIM_IO_TRANS] = "smb2cli_conn_max_trans_size",
};

static struct real_fns real;  /* under real_lock */
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;

/* The real definitions, as far as they are found (the missing ones looked up again). */
static struct real_fns real_for(const void *caller)
{
    struct real_fns r;

    pthread_mutex_lock(&real_lock);
    for (int i = 0; i < 3; i++)
        if (!real.size[i])
            real.size[i] = (conn_size_fn *)shim_real_lookup(size_names[i], caller);
    if (!real.local)
        real.local = (conn_addr_fn *)shim_real_lookup("smbXcli_conn_local_sockaddr", caller);
    if (!real.remote)
        real.remote = (conn_addr_fn *)shim_real_lookup("smbXcli_conn_remote_sockaddr", caller);
    r = real;
    pthread_mutex_unlock(&real_lock);
    return r;
}

static uint32_t capped_size(struct smbXcli_conn *conn, enum shim_io_kind kind,
                            const void *caller)
{
    const struct sockaddr_storage *local, *remote;
    struct shim_fd_info info;
    struct real_fns fns = real_for(caller);
    uint32_t wanted, cap;

    if (!fns.size[kind]) { /* only reachable if Samba's library is gone: be safe */
        sd_error("%s called but Samba's definition is not found", size_names[kind]);
        return 65536;
    }
    wanted = fns.size[kind](conn);
    if (!fns.local || !fns.remote || !(local = fns.local(conn)) ||
        !(remote = fns.remote(conn)) || !shim_fdtable_find_by_names(local, remote, &info))
        return wanted;
    cap = shim_iosize_cap(&info.io, kind, wanted);
    if (cap < wanted && kind != SHIM_IO_TRANS && !info.io.inline_only &&
        cap == info.io.channel_io_size)
        sd_debug("SMB2 %s size %u lowered to %u, the RDMA channel's I/O size "
                 "(SMBDIRECT_CHANNEL_IO_SIZE)", kind == SHIM_IO_READ ? "READ" : "WRITE", wanted,
                 cap);
    else if (cap < wanted)
        sd_debug("SMB2 %s size %u lowered to %u to fit the SMB Direct connection%s",
                 kind == SHIM_IO_READ ? "READ" : kind == SHIM_IO_WRITE ? "WRITE" : "IOCTL/QUERY",
                 wanted, cap, info.io.inline_only ? " (READ/WRITE go inline)" : "");
    return cap;
}

uint32_t smb2cli_conn_max_write_size(struct smbXcli_conn *conn)
{
    return capped_size(conn, SHIM_IO_WRITE, __builtin_return_address(0));
}

uint32_t smb2cli_conn_max_read_size(struct smbXcli_conn *conn)
{
    return capped_size(conn, SHIM_IO_READ, __builtin_return_address(0));
}

uint32_t smb2cli_conn_max_trans_size(struct smbXcli_conn *conn)
{
    return capped_size(conn, SHIM_IO_TRANS, __builtin_return_address(0));
}
