/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_libc.h — libc's definitions of the socket calls the preload shim
 * interposes (preload/exports.map), resolved once with dlsym(RTLD_NEXT). Code in
 * common/ and transport/ makes these calls only through sd_libc(), so inside
 * libsmbdirect.so they never land in the shim's own interposers; the shim uses it
 * for its "real" calls too. scripts/check-layers enforces it. */
#ifndef SMBDIRECT_SD_LIBC_H
#define SMBDIRECT_SD_LIBC_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct sd_libc {
    int (*connect)(int fd, const struct sockaddr *addr, socklen_t len);
    int (*getpeername)(int fd, struct sockaddr *addr, socklen_t *len);
    int (*getsockname)(int fd, struct sockaddr *addr, socklen_t *len);
    int (*getsockopt)(int fd, int level, int name, void *val, socklen_t *len);
    int (*setsockopt)(int fd, int level, int name, const void *val, socklen_t len);
    ssize_t (*write)(int fd, const void *buf, size_t len);
    ssize_t (*writev)(int fd, const struct iovec *iov, int iovcnt);
    ssize_t (*send)(int fd, const void *buf, size_t len, int flags);
    ssize_t (*sendto)(int fd, const void *buf, size_t len, int flags,
                      const struct sockaddr *addr, socklen_t addr_len);
    ssize_t (*sendmsg)(int fd, const struct msghdr *msg, int flags);
};

/* The next definitions after the object holding this code: libc's, whether that
 * object is libsmbdirect.so (preloaded: libc comes after it) or a program linking the
 * core library (a tool, a unit test). No symbol versions are asked for. A name that
 * cannot be resolved gets a stub failing with ENOSYS, so no pointer is ever NULL. */
const struct sd_libc *sd_libc(void);

#endif
