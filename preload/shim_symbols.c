/* preload/shim_symbols.c — resolves the real socket calls once (pthread_once +
 * dlsym(RTLD_NEXT), no symbol versions) and keeps the per-thread recursion guard. */
#include "shim_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

static struct shim_real_calls real_calls;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static _Thread_local int guard_depth;

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

/* POSIX (dlsym) guarantees a void * from dlsym converts to a function pointer;
 * storing through a void ** is the form it documents. */
#define RESOLVE(field, fallback)                                                              \
    do {                                                                                      \
        void *p = dlsym(RTLD_NEXT, #field);                                                   \
        real_calls.field = fallback;                                                          \
        if (p)                                                                                \
            *(void **)&real_calls.field = p;                                                  \
    } while (0)

static void resolve_all(void)
{
    RESOLVE(connect, missing_connect);
    RESOLVE(getpeername, missing_getname);
    RESOLVE(getsockname, missing_getname);
    RESOLVE(getsockopt, missing_getsockopt);
    RESOLVE(setsockopt, missing_setsockopt);
}

const struct shim_real_calls *shim_real(void)
{
    pthread_once(&real_once, resolve_all);
    return &real_calls;
}

int shim_guard_active(void) { return guard_depth > 0; }
void shim_guard_enter(void) { guard_depth++; }
void shim_guard_leave(void) { guard_depth--; }
