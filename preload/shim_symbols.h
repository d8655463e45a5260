/* preload/shim_symbols.h — the real libc socket calls behind the interposed ones,
 * resolved once with dlsym(RTLD_NEXT), and the per-thread guard that makes every
 * socket call made by the shim itself (or by its engine thread) pass straight through. */
#ifndef SMBDIRECT_SHIM_SYMBOLS_H
#define SMBDIRECT_SHIM_SYMBOLS_H

#include <sys/socket.h>

struct shim_real_calls {
    int (*connect)(int fd, const struct sockaddr *addr, socklen_t len);
    int (*getpeername)(int fd, struct sockaddr *addr, socklen_t *len);
    int (*getsockname)(int fd, struct sockaddr *addr, socklen_t *len);
    int (*getsockopt)(int fd, int level, int name, void *val, socklen_t *len);
    int (*setsockopt)(int fd, int level, int name, const void *val, socklen_t len);
};

/* The next definitions after the shim (libc's). A symbol that cannot be resolved
 * is replaced by a stub failing with ENOSYS, so the pointers are never NULL. */
const struct shim_real_calls *shim_real(void);

/* 1 when the calling thread is inside the shim (dialing, or the engine thread):
 * interposed calls then do nothing but call the real function. */
int shim_guard_active(void);
void shim_guard_enter(void);
void shim_guard_leave(void);

#endif
