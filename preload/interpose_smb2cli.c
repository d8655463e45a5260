/* preload/interpose_smb2cli.c — smb2cli_conn_max_{write,read,trans}_size: the sizes
 * Samba's client library (libcli-smb-common, called from liblibsmb: smbclient, smbget,
 * smbcacls...) gives each SMB2 WRITE, READ and IOCTL/QUERY request. For a tunneled
 * connection the real value is lowered with shim_iosize_cap so every message fits the
 * SMB Direct connection: a signed or sealed session's READ/WRITE can never use the
 * RDMA channel (the signature covers the data), so it must fit inline in the peer's
 * MaxFragmentedSize (MS-SMBD 3.1.4.2). The connection is found by its socket names,
 * which Samba took from getsockname/getpeername of the tunneled fd. Other programs
 * never call these; other connections get the real value. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include "log.h"
#include "shim_fdtable.h"
#include "shim_iosize.h"

struct smbXcli_conn; /* Samba's, opaque here */

typedef uint32_t conn_size_fn(struct smbXcli_conn *conn);
typedef const struct sockaddr_storage *conn_addr_fn(struct smbXcli_conn *conn);

static struct {
    conn_size_fn *size[3]; /* indexed by enum shim_io_kind */
    conn_addr_fn *local, *remote;
} real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

/* Samba's definitions are the next ones after this library in lookup order. */
static void resolve_real(void)
{
    static const char *const size_names[3] = {
        [SHIM_IO_READ] = "smb2cli_conn_max_read_size",
        [SHIM_IO_WRITE] = "smb2cli_conn_max_write_size",
        [SHIM_IO_TRANS] = "smb2cli_conn_max_trans_size",
    };

    for (int i = 0; i < 3; i++)
        real.size[i] = (conn_size_fn *)dlsym(RTLD_NEXT, size_names[i]);
    real.local = (conn_addr_fn *)dlsym(RTLD_NEXT, "smbXcli_conn_local_sockaddr");
    real.remote = (conn_addr_fn *)dlsym(RTLD_NEXT, "smbXcli_conn_remote_sockaddr");
}

static uint32_t capped_size(struct smbXcli_conn *conn, enum shim_io_kind kind)
{
    const struct sockaddr_storage *local, *remote;
    struct shim_fd_info info;
    uint32_t wanted, cap;

    pthread_once(&real_once, resolve_real);
    if (!real.size[kind]) { /* only reachable if Samba's library is gone: be safe */
        sd_error("smb2cli_conn_max_*_size called but Samba's definition is not loaded");
        return 65536;
    }
    wanted = real.size[kind](conn);
    if (!real.local || !real.remote || !(local = real.local(conn)) ||
        !(remote = real.remote(conn)) || !shim_fdtable_find_by_names(local, remote, &info))
        return wanted;
    cap = shim_iosize_cap(&info.io, kind, wanted);
    if (cap < wanted)
        sd_debug("SMB2 %s size %u lowered to %u to fit the SMB Direct connection%s",
                 kind == SHIM_IO_READ ? "READ" : kind == SHIM_IO_WRITE ? "WRITE" : "IOCTL/QUERY",
                 wanted, cap, info.io.inline_only ? " (READ/WRITE go inline)" : "");
    return cap;
}

uint32_t smb2cli_conn_max_write_size(struct smbXcli_conn *conn)
{
    return capped_size(conn, SHIM_IO_WRITE);
}

uint32_t smb2cli_conn_max_read_size(struct smbXcli_conn *conn)
{
    return capped_size(conn, SHIM_IO_READ);
}

uint32_t smb2cli_conn_max_trans_size(struct smbXcli_conn *conn)
{
    return capped_size(conn, SHIM_IO_TRANS);
}
