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
 * Samba's definitions are found with RTLD_NEXT when its libraries came with the program
 * (smbclient, smbget). A library dlopen()ed without RTLD_GLOBAL, as Python loads
 * libsmbclient for its smbc module, is outside the lookup order RTLD_NEXT walks; it still
 * calls these (the shim is first in the global scope), so the definitions are then looked
 * up from the calling library: the object holding the return address, opened again with
 * RTLD_NOLOAD, whose dlsym searches it and its dependencies. */
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
static int real_next_done;    /* RTLD_NEXT tried */
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;

/* name's definition in handle's search scope, unless it is the shim's own (the main
 * program's handle searches the global scope, where the shim comes first). */
static void *lookup(void *handle, const char *name)
{
    Dl_info found, self;
    void *fn = dlsym(handle, name);

    if (fn && dladdr(fn, &found) && dladdr((void *)lookup, &self) &&
        found.dli_fbase == self.dli_fbase)
        return NULL;
    return fn;
}

/* Fills the missing entries of r from handle's scope. */
static void fill(struct real_fns *r, void *handle)
{
    for (int i = 0; i < 3; i++)
        if (!r->size[i])
            r->size[i] = (conn_size_fn *)lookup(handle, size_names[i]);
    if (!r->local)
        r->local = (conn_addr_fn *)lookup(handle, "smbXcli_conn_local_sockaddr");
    if (!r->remote)
        r->remote = (conn_addr_fn *)lookup(handle, "smbXcli_conn_remote_sockaddr");
}

/* The real definitions, as far as they are found: after the shim in lookup order, else
 * from the library at caller (see the top of the file). */
static struct real_fns real_for(const void *caller, enum shim_io_kind kind)
{
    struct real_fns r;
    Dl_info info;
    void *handle;

    pthread_mutex_lock(&real_lock);
    if (!real_next_done) {
        fill(&real, RTLD_NEXT);
        real_next_done = 1;
    }
    if ((!real.size[kind] || !real.local || !real.remote) && dladdr(caller, &info) &&
        info.dli_fname && (handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
        fill(&real, handle);
        dlclose(handle); /* only drops the reference RTLD_NOLOAD took */
    }
    r = real;
    pthread_mutex_unlock(&real_lock);
    return r;
}

static uint32_t capped_size(struct smbXcli_conn *conn, enum shim_io_kind kind,
                            const void *caller)
{
    const struct sockaddr_storage *local, *remote;
    struct shim_fd_info info;
    struct real_fns fns = real_for(caller, kind);
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
