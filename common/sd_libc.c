/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_libc.c — resolves libc's socket calls once (pthread_once +
 * dlsym(RTLD_NEXT), no symbol versions); see sd_libc.h. */
#include "sd_libc.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

static struct sd_libc calls;
static pthread_once_t calls_once = PTHREAD_ONCE_INIT;

static int missing_connect(int fd, const struct sockaddr *a, socklen_t l)
{
    (void)fd, (void)a, (void)l;
    errno = ENOSYS;
    return -1;
}

static int missing_getname(int fd, struct sockaddr *a, socklen_t *l)
{
    (void)fd, (void)a, (void)l;
    errno = ENOSYS;
    return -1;
}

static int missing_getsockopt(int fd, int lv, int n, void *v, socklen_t *l)
{
    (void)fd, (void)lv, (void)n, (void)v, (void)l;
    errno = ENOSYS;
    return -1;
}

static int missing_setsockopt(int fd, int lv, int n, const void *v, socklen_t l)
{
    (void)fd, (void)lv, (void)n, (void)v, (void)l;
    errno = ENOSYS;
    return -1;
}

static ssize_t missing_write(int fd, const void *b, size_t l)
{
    (void)fd, (void)b, (void)l;
    errno = ENOSYS;
    return -1;
}

static ssize_t missing_writev(int fd, const struct iovec *iov, int n)
{
    (void)fd, (void)iov, (void)n;
    errno = ENOSYS;
    return -1;
}

static ssize_t missing_send(int fd, const void *b, size_t l, int f)
{
    (void)fd, (void)b, (void)l, (void)f;
    errno = ENOSYS;
    return -1;
}

static ssize_t missing_sendto(int fd, const void *b, size_t l, int f, const struct sockaddr *a,
                              socklen_t al)
{
    (void)fd, (void)b, (void)l, (void)f, (void)a, (void)al;
    errno = ENOSYS;
    return -1;
}

static ssize_t missing_sendmsg(int fd, const struct msghdr *m, int f)
{
    (void)fd, (void)m, (void)f;
    errno = ENOSYS;
    return -1;
}

/* POSIX (dlsym) guarantees a void * from dlsym converts to a function pointer;
 * storing through a void ** is the form it documents. */
#define RESOLVE(field, fallback)                                                              \
    do {                                                                                      \
        void *p = dlsym(RTLD_NEXT, #field);                                                   \
        calls.field = fallback;                                                               \
        if (p)                                                                                \
            *(void **)&calls.field = p;                                                       \
    } while (0)

static void resolve_all(void)
{
    RESOLVE(connect, missing_connect);
    RESOLVE(getpeername, missing_getname);
    RESOLVE(getsockname, missing_getname);
    RESOLVE(getsockopt, missing_getsockopt);
    RESOLVE(setsockopt, missing_setsockopt);
    RESOLVE(write, missing_write);
    RESOLVE(writev, missing_writev);
    RESOLVE(send, missing_send);
    RESOLVE(sendto, missing_sendto);
    RESOLVE(sendmsg, missing_sendmsg);
}

const struct sd_libc *sd_libc(void)
{
    pthread_once(&calls_once, resolve_all);
    return &calls;
}
