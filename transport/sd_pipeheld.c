/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/sd_pipeheld.c — RDMA Write payload held in pipes (see sd_pipeheld.h).
 *
 * Each holder has a queue of pipes: the last one fills (splice from the socket, or a
 * write of bytes the provider had already read), the first one empties (splice into the
 * consumer's socket); a pipe emptied ahead of the last goes back to the spare list. A
 * pipe buffer holds at most one page of spliced data however few bytes it carries, so
 * a pipe is full when the kernel says so, not at a byte count: a splice that takes
 * nothing while the socket still has bytes (FIONREAD) means the pipe is full. */
#include "sd_pipeheld.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "log.h"
#include "sd_libc.h"

#define PIPE_CAP (1u << 20)          /* asked of F_SETPIPE_SZ: Linux's default pipe-max-size */
#define PIPE_CAP_MIN (256u << 10)    /* a pipe granted less is not worth its syscalls */
#define HOLDER_PIPES 16              /* enough for the largest channel I/O (16 MiB) */
#define SPARE_MAX ((int)(SD_PIPEHELD_BUDGET / PIPE_CAP_MIN))

struct held_pipe {
    int rfd, wfd;
    size_t cap;   /* what F_SETPIPE_SZ granted */
    size_t bytes; /* held in it now */
    int full;     /* it took nothing more while the socket had bytes */
};

struct sd_pipeheld {
    uint8_t *base;
    size_t len;
    size_t filled;  /* bytes [0, filled) of the region went into pipes */
    size_t drained; /* and [0, drained) of them have left (emitted) */
    int split;      /* no more pipes: the region's bytes from filled on are in memory */
    int head, n;    /* pipes[head..n) hold [drained, filled) in order */
    struct held_pipe pipes[HOLDER_PIPES];
    struct sd_pipeheld *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static struct sd_pipeheld *holders;
static struct held_pipe spare[SPARE_MAX];
static int nspare;
static size_t budget_used; /* capacity of every open pipe, in holders and spare */
static int refused;        /* the kernel refused a pipe's size: no more tries */
static struct sd_pipeheld_stats stats;

static void pipe_close(struct held_pipe *p)
{
    close(p->rfd);
    close(p->wfd);
    budget_used -= p->cap;
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child gets copies of the parent's pipes, not its data's owners: it starts empty. */
static void atfork_child(void)
{
    while (holders) {
        struct sd_pipeheld *h = holders;

        holders = h->next;
        for (int i = h->head; i < h->n; i++)
            pipe_close(&h->pipes[i]);
        free(h);
    }
    while (nspare > 0)
        pipe_close(&spare[--nspare]);
    pthread_mutex_unlock(&lock);
}

static void register_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* lock held: an empty pipe from the spare list or a new one within the budget; 0, or -1
 * when there is none. */
static int pipe_get(struct held_pipe *out)
{
    int fds[2];
    int cap;

    if (nspare > 0) {
        *out = spare[--nspare];
        return 0;
    }
    if (refused || budget_used + PIPE_CAP > SD_PIPEHELD_BUDGET)
        return -1;
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0)
        return -1;
    cap = fcntl(fds[1], F_SETPIPE_SZ, (int)PIPE_CAP);
    if (cap < (int)PIPE_CAP_MIN) {
        /* fs.pipe-max-size below PIPE_CAP, or the user's pipe pages (fs.pipe-user-pages-*)
         * spent: READ data is then placed in memory, as without pipes */
        sd_info("pipes for RDMA Write data: the kernel refused a %u-byte pipe (%s): "
                "the data is placed in memory from now on", PIPE_CAP,
                cap < 0 ? strerror(errno) : "too small");
        refused = 1;
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    *out = (struct held_pipe){ .rfd = fds[0], .wfd = fds[1], .cap = (size_t)cap };
    budget_used += (size_t)cap;
    return 0;
}

/* lock held: an emptied pipe goes back to the spare list. */
static void pipe_put(struct held_pipe *p)
{
    p->bytes = 0;
    p->full = 0;
    if (nspare < SPARE_MAX)
        spare[nspare++] = *p;
    else
        pipe_close(p);
}

/* lock held: the pipe that fills next, or NULL (the holder is split from here on). */
static struct held_pipe *tail_pipe(struct sd_pipeheld *h)
{
    if (h->n > h->head && !h->pipes[h->n - 1].full)
        return &h->pipes[h->n - 1];
    if (h->n == HOLDER_PIPES || pipe_get(&h->pipes[h->n]) != 0) {
        h->split = 1;
        return NULL;
    }
    return &h->pipes[h->n++];
}

static struct sd_pipeheld *find_locked(const uint8_t *addr)
{
    for (struct sd_pipeheld *h = holders; h; h = h->next)
        if (addr >= h->base && addr < h->base + h->len)
            return h;
    return NULL;
}

static void unlink_locked(struct sd_pipeheld *h)
{
    for (struct sd_pipeheld **pp = &holders; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            return;
        }
}

/* lock held: h's held bytes into their place in memory; h is gone. A read that fails
 * (it cannot, on a pipe holding the bytes) leaves the rest where it was, and says so. */
static void materialize_locked(struct sd_pipeheld *h)
{
    size_t pos = h->drained;

    for (int i = h->head; i < h->n; i++) {
        struct held_pipe *p = &h->pipes[i];

        while (p->bytes > 0) {
            ssize_t k = read(p->rfd, h->base + pos, p->bytes);

            if (k <= 0) {
                sd_warn("pipes for RDMA Write data: reading %zu held bytes back failed (%s)",
                        p->bytes, k < 0 ? strerror(errno) : "end of pipe");
                break;
            }
            p->bytes -= (size_t)k;
            pos += (size_t)k;
            stats.copied += (uint64_t)k;
        }
        if (p->bytes == 0)
            pipe_put(p);
        else
            pipe_close(p);
    }
    unlink_locked(h);
    free(h);
}

struct sd_pipeheld *sd_pipeheld_begin(uint8_t *base, size_t len, size_t off)
{
    struct sd_pipeheld *h;

    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&lock);
    h = find_locked(base);
    if (h && (h->base != base || h->len != len || off < h->filled ||
              (off > h->filled && !h->split))) {
        /* another region's holder, or a write out of order: everything held into memory */
        materialize_locked(h);
        h = NULL;
    }
    if (h && off == 0 && h->drained == h->filled) {
        h->filled = h->drained = 0; /* a new use of an emptied region */
        h->split = 0;
    }
    if (h && h->split)
        h = NULL; /* the tail goes to memory */
    if (!h && off == 0 && !refused && (h = calloc(1, sizeof(*h)))) {
        h->base = base;
        h->len = len;
        h->next = holders;
        holders = h;
    }
    pthread_mutex_unlock(&lock);
    return h;
}

/* lock held: the socket still has bytes for a pipe that took none. */
static int socket_has_bytes(int fd)
{
    int avail = 0;

    return ioctl(fd, FIONREAD, &avail) == 0 && avail > 0;
}

ssize_t sd_pipeheld_splice_in(struct sd_pipeheld *h, int fd, size_t n)
{
    ssize_t rc = -ENOSPC;

    pthread_mutex_lock(&lock);
    for (;;) {
        struct held_pipe *p = tail_pipe(h);
        ssize_t k;

        if (!p)
            break;
        k = splice(fd, NULL, p->wfd, NULL, n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (k > 0) {
            p->bytes += (size_t)k;
            h->filled += (size_t)k;
            stats.held += (uint64_t)k;
            rc = k;
            break;
        }
        if (k == 0) {
            rc = 0; /* end of stream */
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN) {
            rc = -errno;
            break;
        }
        if (!socket_has_bytes(fd)) {
            rc = -EAGAIN;
            break;
        }
        p->full = 1; /* the next pass takes another pipe */
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

size_t sd_pipeheld_write_in(struct sd_pipeheld *h, const uint8_t *p, size_t n)
{
    size_t took = 0;

    pthread_mutex_lock(&lock);
    while (took < n) {
        struct held_pipe *t = tail_pipe(h);
        ssize_t k;

        if (!t)
            break;
        k = sd_libc()->write(t->wfd, p + took, n - took);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            t->full = 1;
            continue;
        }
        t->bytes += (size_t)k;
        took += (size_t)k;
    }
    h->filled += took;
    stats.held += took;
    pthread_mutex_unlock(&lock);
    return took;
}

ssize_t sd_pipeheld_emit(const uint8_t *addr, size_t len, int fd)
{
    struct sd_pipeheld *h;
    ssize_t moved = 0;
    size_t off;

    pthread_mutex_lock(&lock);
    h = find_locked(addr);
    off = h ? (size_t)(addr - h->base) : 0;
    if (h && off != h->drained && off < h->filled) {
        /* the consumer is not where the pipes are: everything into memory */
        materialize_locked(h);
        h = NULL;
    }
    if (!h || off >= h->filled) {
        pthread_mutex_unlock(&lock);
        return -ENOENT;
    }
    while ((size_t)moved < len && h->head < h->n) {
        struct held_pipe *p = &h->pipes[h->head];
        size_t want = len - (size_t)moved < p->bytes ? len - (size_t)moved : p->bytes;
        ssize_t k = want ? splice(p->rfd, NULL, fd, NULL, want,
                                  SPLICE_F_MOVE | SPLICE_F_NONBLOCK)
                         : 0;

        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            if (moved == 0 && errno != EAGAIN)
                moved = -errno;
            break;
        }
        p->bytes -= (size_t)k;
        h->drained += (size_t)k;
        moved += k;
        if (p->bytes == 0 && h->head < h->n - 1)
            pipe_put(&h->pipes[h->head++]); /* a later pipe holds the next bytes */
        else if ((size_t)k < want || p->bytes == 0)
            break;
    }
    pthread_mutex_unlock(&lock);
    return moved;
}

void sd_pipeheld_materialize(const uint8_t *addr, size_t len)
{
    pthread_mutex_lock(&lock);
    for (struct sd_pipeheld *h = holders, *next; h; h = next) {
        next = h->next;
        if (h->base < addr + len && addr < h->base + h->len)
            materialize_locked(h);
    }
    pthread_mutex_unlock(&lock);
}

void sd_pipeheld_release(const uint8_t *addr, size_t len)
{
    pthread_mutex_lock(&lock);
    for (struct sd_pipeheld *h = holders, *next; h; h = next) {
        next = h->next;
        if (h->base < addr || h->base >= addr + len)
            continue;
        for (int i = h->head; i < h->n; i++) {
            if (h->pipes[i].bytes == 0)
                pipe_put(&h->pipes[i]);
            else
                pipe_close(&h->pipes[i]); /* what nobody took is dropped with its pipe */
        }
        unlink_locked(h);
        free(h);
    }
    pthread_mutex_unlock(&lock);
}

void sd_pipeheld_get_stats(struct sd_pipeheld_stats *out)
{
    pthread_mutex_lock(&lock);
    *out = stats;
    pthread_mutex_unlock(&lock);
}
