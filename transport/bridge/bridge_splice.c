/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_splice.c — READ data into a local stream by reference (see
 * bridge_splice.h). The bytes go user memory -> pipe (vmsplice: the pipe takes page
 * references, no copy) -> socket (splice: the socket takes them over), through one pipe
 * per process under a mutex; the pipe is empty between calls, since what the socket does
 * not take is read back out of it.
 *
 * When a held buffer may be reused: SIOCOUTQ on an AF_UNIX stream socket is the memory
 * charged for the data the peer has not read yet, each message counted at its truesize,
 * which is never less than its bytes. So (written - SIOCOUTQ) is never past what the
 * reader has read: a buffer whose end lies before it has been read whole. The difference
 * can be negative (on a new stream, the overhead of the first large message exceeds
 * everything written before it): then nothing is known to be read. */
#include "bridge_splice.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bridge_pool.h"
#include "log.h"
#include "sd_libc.h"

/* Bytes moved through the pipe per step: what the socket does not take of a step is
 * copied back out of the pipe, so a step bounds that waste. */
#define SPLICE_STEP (256u << 10)
#define PROBE_LEN (64u << 10)

static pthread_mutex_t pipe_lock = PTHREAD_MUTEX_INITIALIZER;
static int pipe_fds[2] = { -1, -1 };
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int usable;

static void atfork_prepare(void)
{
    pthread_mutex_lock(&pipe_lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&pipe_lock);
}

/* pipe_lock held (or no other thread): closes the pipe, if open. */
static void pipe_close_locked(void)
{
    if (pipe_fds[0] >= 0) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        pipe_fds[0] = pipe_fds[1] = -1;
    }
}

/* The child must not share the parent's pipe: it makes its own when it splices. */
static void atfork_child(void)
{
    pipe_close_locked();
    pthread_mutex_unlock(&pipe_lock);
}

/* pipe_lock held. 0, or -errno. */
static int pipe_open_locked(void)
{
    if (pipe_fds[0] >= 0)
        return 0;
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    (void)fcntl(pipe_fds[1], F_SETPIPE_SZ, (int)SPLICE_STEP); /* a smaller pipe only costs steps */
    return 0;
}

/* pipe_lock held: empties the pipe of n bytes the socket refused. 0, or -errno. */
static int pipe_discard_locked(size_t n)
{
    char scratch[16384];

    while (n > 0) {
        ssize_t r = read(pipe_fds[0], scratch, n < sizeof(scratch) ? n : sizeof(scratch));

        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        n -= (size_t)r;
    }
    return 0;
}

/* splice(2) into a socket whose reader is gone raises SIGPIPE (it has no MSG_NOSIGNAL);
 * bridge_splice_out blocks it meanwhile, and this takes it off the thread's pending set. */
static void take_sigpipe(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    (void)sigtimedwait(&set, NULL, &(struct timespec){ 0, 0 });
}

/* pipe_lock held: len bytes at data into fd as far as it takes them; returns the bytes it
 * took, or -errno when nothing went and splicing failed. */
static ssize_t splice_locked(int fd, const uint8_t *data, size_t len)
{
    size_t off = 0;
    int rc = pipe_open_locked();

    while (rc == 0 && off < len) {
        struct iovec v = { (void *)(uintptr_t)(data + off),
                           len - off < SPLICE_STEP ? len - off : SPLICE_STEP };
        ssize_t k = vmsplice(pipe_fds[1], &v, 1, SPLICE_F_NONBLOCK), m;

        if (k <= 0) {
            rc = k < 0 ? -errno : -EIO;
            break;
        }
        m = splice(pipe_fds[0], NULL, fd, NULL, (size_t)k, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
        if (m < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            rc = -errno;
        if (rc == -EPIPE)
            take_sigpipe();
        m = m > 0 ? m : 0;
        off += (size_t)m;
        if (m < k) {
            int drc = pipe_discard_locked((size_t)(k - m));

            rc = drc < 0 ? drc : rc;
            break;
        }
    }
    return off > 0 || rc == 0 ? (ssize_t)off : rc;
}

/* Once per process: splice a page-aligned buffer into a socketpair of our own and check
 * that SIOCOUTQ counts it (the rule for reusing buffers rests on that). */
static void probe(void)
{
    uint8_t *buf = mmap(NULL, PROBE_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    int sv[2] = { -1, -1 }, outq = 0;
    ssize_t n = -1;

    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    if (buf == MAP_FAILED)
        return;
    memset(buf, 0x5a, PROBE_LEN);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == 0) {
        pthread_mutex_lock(&pipe_lock);
        n = splice_locked(sv[0], buf, PROBE_LEN);
        usable = n == (ssize_t)PROBE_LEN && ioctl(sv[0], SIOCOUTQ, &outq) == 0 &&
                 outq >= (int)PROBE_LEN;
        if (!usable)
            pipe_close_locked();
        pthread_mutex_unlock(&pipe_lock);
        close(sv[0]);
        close(sv[1]);
    }
    munmap(buf, PROBE_LEN);
    if (!usable)
        sd_debug("bridge: READ data is copied into the program's socket (splicing %s)",
                 n < 0 ? strerror((int)-n) : "not counted by SIOCOUTQ");
}

int bridge_splice_usable(int fd)
{
    int domain = 0, type = 0;
    socklen_t dl = sizeof(domain), tl = sizeof(type);

    if (sd_libc()->getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0 || domain != AF_UNIX ||
        sd_libc()->getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM)
        return 0;
    pthread_once(&probe_once, probe);
    return usable;
}

void bridge_splice_init(struct bridge_splice *s, int fd, int want)
{
    *s = (struct bridge_splice){ .on = want && bridge_splice_usable(fd) };
}

ssize_t bridge_splice_out(struct bridge_splice *s, int fd, const uint8_t *data, size_t len)
{
    sigset_t pipe_set, old;
    ssize_t n;

    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    pthread_mutex_lock(&pipe_lock);
    n = splice_locked(fd, data, len);
    pthread_mutex_unlock(&pipe_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (n < 0) {
        s->on = 0;
        sd_debug("bridge: splicing into fd %d failed (%s): copying from now on", fd,
                 strerror((int)-n));
        return n;
    }
    s->bytes += (uint64_t)n;
    return n;
}

int bridge_splice_hold(struct bridge_splice *s, uint8_t *alloc, size_t cap, uint64_t end)
{
    struct bridge_spliced *h = malloc(sizeof(*h));

    if (!h) {
        bridge_pool_drop(alloc, cap);
        return -ENOMEM;
    }
    *h = (struct bridge_spliced){ .alloc = alloc, .cap = cap, .end = end };
    if (s->tail)
        s->tail->next = h;
    else
        s->head = h;
    s->tail = h;
    return 0;
}

/* Releases the held buffers that end at or before past, oldest first, by give. */
static void release_upto(struct bridge_splice *s, uint64_t past, void (*give)(void *, size_t))
{
    while (s->head && s->head->end <= past) {
        struct bridge_spliced *h = s->head;

        s->head = h->next;
        if (!s->head)
            s->tail = NULL;
        give(h->alloc, h->cap);
        free(h);
    }
}

void bridge_splice_reap(struct bridge_splice *s, int fd, uint64_t written)
{
    int unread;

    if (!s->head || ioctl(fd, SIOCOUTQ, &unread) < 0 || unread < 0)
        return;
    release_upto(s, written > (uint64_t)unread ? written - (uint64_t)unread : 0,
                 bridge_pool_put);
}

void bridge_splice_end(struct bridge_splice *s, int fd, uint64_t written)
{
    bridge_splice_reap(s, fd, written);
    release_upto(s, UINT64_MAX, bridge_pool_drop);
}

size_t bridge_splice_held(const struct bridge_splice *s)
{
    size_t n = 0;

    for (const struct bridge_spliced *h = s->head; h; h = h->next)
        n++;
    return n;
}
