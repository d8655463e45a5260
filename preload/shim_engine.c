/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_engine.c — the engine thread: one sd_loop per process, run on a thread
 * with every signal blocked (the program's handlers never run on it and its syscalls
 * are never interrupted); tunnels are handed over with sd_loop_post and bridged with
 * smbd_bridge_start. */
#include "shim_engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sd_loop.h"
#include "shim_config.h"
#include "shim_guard.h"
#include "shim_sigcheck.h"
#include "shim_sigkeys.h"
#include "smbd_bridge.h"
#include "smbd_link_note.h"

/* The most the program's exit waits for its tunnels to end in order. */
#define SHIM_EXIT_WAIT_MS 1000

struct shim_tunnel_job {
    struct sd_loop *loop;
    struct smbd_link *link;
    int engine_fd;
    struct shim_fd_key app_key;
    struct smbd_bridge *bridge;          /* once started */
    struct shim_sigcheck_stats sig;      /* the program's signed requests (engine's loop) */
    struct shim_tunnel_job *prev, *next; /* in live_jobs (inside the engine's loop) */
};

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tunnels_ended = PTHREAD_COND_INITIALIZER;
static struct sd_loop *engine_loop; /* NULL until started in this process */
static unsigned live_tunnels;       /* bridges handed over and not ended (engine_lock) */
static struct shim_tunnel_job *live_jobs; /* the same, as a list (inside the engine's loop:
                                             its thread, or shim_engine_feed) */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_prepare(void)
{
    pthread_mutex_lock(&engine_lock);
    shim_fdtable_atfork_prepare();
    shim_sigkeys_atfork_prepare();
}

static void atfork_parent(void)
{
    shim_sigkeys_atfork_parent();
    shim_fdtable_atfork_parent();
    pthread_mutex_unlock(&engine_lock);
}

/* The child has no engine thread: the parent's loop (its epoll fd is shared with the
 * parent) must never be touched here, so it is forgotten, not freed. */
static void atfork_child(void)
{
    shim_sigkeys_atfork_child();
    shim_fdtable_atfork_child();
    engine_loop = NULL;
    live_tunnels = 0;
    live_jobs = NULL; /* the parent's, served by the parent's engine */
    pthread_mutex_unlock(&engine_lock);
}

/* Runs on the engine thread: every tunnel's program is exiting. */
static void finish_tunnels(void *ctx)
{
    (void)ctx;
    for (struct shim_tunnel_job *j = live_jobs; j; j = j->next)
        smbd_bridge_finish(j->bridge); /* the bridge ends later, from the loop */
}

/* exit(): like the kernel with a TCP socket, the engine delivers what the program wrote
 * before exiting (and the answers it awaits arrive) and ends each tunnel in order,
 * which the program's exit waits for, at most SHIM_EXIT_WAIT_MS; without this wait
 * the engine thread died with the process mid-way (the tunnel's end unlogged). Then the
 * signing keys the shim learned are wiped (only a process with a tunnel learns any, and
 * its first tunnel registered this handler). */
static void wait_tunnels_at_exit(void)
{
    struct timespec deadline;
    int rc = 0;

    pthread_mutex_lock(&engine_lock);
    if (!engine_loop || live_tunnels == 0 || sd_loop_post(engine_loop, finish_tunnels, NULL) < 0) {
        pthread_mutex_unlock(&engine_lock);
        shim_sigkeys_wipe_all();
        return;
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += (long)SHIM_EXIT_WAIT_MS % 1000 * 1000000L;
    deadline.tv_sec += SHIM_EXIT_WAIT_MS / 1000 + deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    while (live_tunnels > 0 && rc == 0)
        rc = pthread_cond_timedwait(&tunnels_ended, &engine_lock, &deadline);
    if (live_tunnels > 0)
        sd_warn("exit: %u SMB Direct tunnel(s) still open after %d ms; they end with the "
                "process", live_tunnels, SHIM_EXIT_WAIT_MS);
    pthread_mutex_unlock(&engine_lock);
    shim_sigkeys_wipe_all();
}

static void register_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    atexit(wait_tunnels_at_exit);
}

static void *engine_main(void *arg)
{
    struct sd_loop *loop = arg;
    int rc;

    shim_guard_enter(); /* safety net: a connect on this thread is the engine's own */
    rc = sd_loop_run(loop);
    sd_error("engine loop stopped (%s): open SMB Direct tunnels of this process are dead",
             strerror(rc < 0 ? -rc : EIO));
    return NULL;
}

/* Caller holds engine_lock. */
static int start_engine(void)
{
    sigset_t all, old;
    pthread_t tid;
    pthread_attr_t attr;
    struct sd_loop *loop = sd_loop_new();
    int rc;

    if (!loop)
        return -ENOMEM;
    /* the thread does not run yet: its loop may be set up from here */
    sd_loop_set_busy_poll(loop, shim_config_get()->set.busy_poll_us);
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits the full mask */
    rc = pthread_create(&tid, &attr, engine_main, loop);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        sd_loop_free(loop);
        return -rc;
    }
    engine_loop = loop;
    sd_debug("engine thread started");
    return 0;
}

int shim_engine_ensure(void)
{
    int rc = 0;

    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&engine_lock);
    if (!engine_loop)
        rc = start_engine();
    pthread_mutex_unlock(&engine_lock);
    return rc;
}

/* A tunnel's bridge ended (or never started): its signing keys wiped, off the live list,
 * and an exit waiting for it learns. Engine thread. */
static void job_forget(struct shim_tunnel_job *job)
{
    shim_sigkeys_forget_tunnel(&job->app_key);
    if (job->prev)
        job->prev->next = job->next;
    else
        live_jobs = job->next;
    if (job->next)
        job->next->prev = job->prev;
    pthread_mutex_lock(&engine_lock);
    live_tunnels--;
    pthread_cond_broadcast(&tunnels_ended);
    pthread_mutex_unlock(&engine_lock);
    free(job);
}

static void tunnel_ended(void *ctx, const struct smbd_bridge_stats *st, int err)
{
    struct shim_tunnel_job *job = ctx;
    struct sd_loop_poll_stats poll;

    sd_info("tunnel ended (%s): %llu messages / %llu bytes sent, %llu of them from where they "
            "lay, %llu / %llu delivered; of the program's %llu bytes, %llu sent from its own "
            "thread; of the %llu it was given, %llu by reference, %llu queued without a copy; its "
            "signed requests: %llu "
            "verified, %llu failed, %llu without a key, %llu too large to check",
            err ? strerror(-err) : "closed by the program",
            (unsigned long long)st->smbd.msgs_sent, (unsigned long long)st->smbd.bytes_sent,
            (unsigned long long)st->smbd.bytes_sent_owned,
            (unsigned long long)st->smbd.msgs_delivered,
            (unsigned long long)st->smbd.bytes_delivered,
            (unsigned long long)st->stream_bytes_in, (unsigned long long)st->stream_bytes_fed,
            (unsigned long long)st->stream_bytes_out,
            (unsigned long long)st->stream_bytes_spliced,
            (unsigned long long)st->stream_bytes_adopted,
            (unsigned long long)job->sig.verified, (unsigned long long)job->sig.failed,
            (unsigned long long)job->sig.no_key, (unsigned long long)job->sig.too_large);
    if (st->chan.rdma_reads || st->chan.rdma_writes)
        sd_info("RDMA channel: %llu WRITEs / %llu bytes read by the server, %llu READs / %llu "
                "bytes written by it, %llu of them signed again, buffers peak %llu bytes, "
                "memory waits %llu (%llu ms), %llu bytes of WRITE data registered where they lay",
                (unsigned long long)st->chan.rdma_reads,
                (unsigned long long)st->chan.rdma_read_bytes,
                (unsigned long long)st->chan.rdma_writes,
                (unsigned long long)st->chan.rdma_write_bytes,
                (unsigned long long)st->chan.rdma_signed,
                (unsigned long long)st->chan.mem_peak, (unsigned long long)st->chan.mem_waits,
                (unsigned long long)st->chan.mem_wait_ms,
                (unsigned long long)st->chan.in_place_bytes);
    sd_loop_poll_stats(engine_loop, &poll); /* the engine's loop, all its tunnels so far */
    sd_debug("engine loop: %llu waits ended by busy polling, %llu polls ran out, %llu sleeps",
             (unsigned long long)poll.hits, (unsigned long long)poll.misses,
             (unsigned long long)poll.sleeps);
    shim_fdtable_tunnel_ended(&job->app_key, err);
    job_forget(job);
}

/* The program's READ/WRITE on this tunnel must fit inline from now on
 * (interpose_smb2cli.c reads it). */
static void tunnel_inline_only(void *ctx)
{
    struct shim_tunnel_job *job = ctx;

    shim_fdtable_set_inline_only(&job->app_key);
}

/* A whole SMB2 message of the program on this tunnel: its signatures checked with the
 * learned keys (inside the engine's loop). */
static void tunnel_request(void *ctx, const uint8_t *msg, size_t len)
{
    struct shim_tunnel_job *job = ctx;

    shim_sigcheck_request(&job->app_key, msg, len, &job->sig);
}

/* The signing key of an SMB2 session on this tunnel, for the bridge to sign again the
 * READ/WRITE it moves by the RDMA channel (engine's loop). */
static int tunnel_signing_key(void *ctx, uint64_t session_id, struct smb2_sign_key *key)
{
    struct shim_tunnel_job *job = ctx;

    return shim_sigkeys_get(&job->app_key, session_id, key);
}

/* 1 when the server said it holds no session keys (an smbdirect-relay): it refuses a
 * signed READ/WRITE over the channel, so a signed session's I/O stays inline. */
static int peer_is_keyless(const struct smbd_link *link)
{
    const struct sd_cm_result *cm = smbd_link_cm(link);

    return (smbd_link_note_decode(cm->peer_private_data, cm->peer_private_data_len) &
            SMBD_LINK_NOTE_KEYLESS) != 0;
}

/* Runs on the engine thread. */
static void start_bridge(void *ctx)
{
    struct shim_tunnel_job *job = ctx;
    int keyless = peer_is_keyless(job->link);

    const struct smbd_bridge_opts opts = {
        .channel = BRIDGE_CHAN_CLIENT,
        .channel_threshold = shim_config_get()->set.rdma_threshold,
        .channel_memory = shim_config_get()->set.channel_memory,
        .channel_memory_total = shim_config_get()->set.channel_memory_total,
        .on_inline_io = tunnel_inline_only,
        .splice_reads = shim_config_get()->set.splice,
        .on_request = tunnel_request,
        .signing_key = keyless ? NULL : tunnel_signing_key,
    };

    job->next = live_jobs; /* counted in live_tunnels since shim_engine_attach */
    if (live_jobs)
        live_jobs->prev = job;
    live_jobs = job;
    if (keyless)
        sd_debug("the server is a keyless relay: a signed session's READ/WRITE stay inline");
    job->bridge = smbd_bridge_start(job->loop, job->link, job->engine_fd, &opts, tunnel_ended, job);
    if (!job->bridge) {
        sd_error("cannot start the SMB Direct bridge: the tunnel is closed");
        shim_fdtable_tunnel_ended(&job->app_key, -ECONNRESET);
        job_forget(job);
    }
}

size_t shim_engine_feed(const struct shim_fd_key *app_key, const struct iovec *iov, int iovcnt)
{
    struct sd_loop *loop;
    sigset_t all, old;
    size_t taken = 0;

    /* No handler of the program runs while a lock is held here (one that wrote on the
     * tunnel again, or jumped out, would leave it held for ever). */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_mutex_lock(&engine_lock);
    loop = engine_loop; /* NULL in a fork child: its tunnels are its parent's engine's */
    pthread_mutex_unlock(&engine_lock);
    if (loop) {
        shim_guard_enter(); /* the calls rdma-core and the provider make go to libc */
        sd_loop_enter(loop);
        for (struct shim_tunnel_job *j = live_jobs; j; j = j->next) {
            if (j->bridge && j->app_key.dev == app_key->dev && j->app_key.ino == app_key->ino) {
                taken = smbd_bridge_feed(j->bridge, iov, iovcnt);
                break;
            }
        }
        sd_loop_leave(loop);
        shim_guard_leave();
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return taken;
}

int shim_engine_attach(struct smbd_link *link, int engine_fd, const struct shim_fd_key *app_key)
{
    struct shim_tunnel_job *job = malloc(sizeof(*job));
    int rc = -ENOMEM;

    if (job) {
        pthread_mutex_lock(&engine_lock);
        *job = (struct shim_tunnel_job){ .loop = engine_loop, .link = link,
                                         .engine_fd = engine_fd, .app_key = *app_key };
        /* Counted from here: an exit that follows waits for it (the tasks run in order,
         * so this one is started, and on the live list, before finish_tunnels runs). */
        rc = engine_loop ? sd_loop_post(engine_loop, start_bridge, job) : -ESRCH;
        live_tunnels += rc == 0;
        pthread_mutex_unlock(&engine_lock);
        if (rc == 0)
            return 0;
    }
    free(job);
    smbd_link_free(link);
    close(engine_fd);
    return rc;
}
