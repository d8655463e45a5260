/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_pinned.c — see th_pinned.h. */
#include "th_pinned.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static const struct sd_provider_ops *wrapped_base;
static struct sd_provider_ops wrapped;
static _Atomic size_t live, peak;
static _Atomic size_t refuse_past = SIZE_MAX;
static _Atomic unsigned refused;

static int pin_reg(struct sd_qp *qp, void *base, size_t len, int access, struct sd_mr *mr)
{
    size_t now = atomic_load(&live), limit = atomic_load(&refuse_past);
    int err;

    if (len > limit || now > limit - len) {
        atomic_fetch_add(&refused, 1);
        return -ENOMEM;
    }
    err = wrapped_base->reg_mr(qp, base, len, access, mr);
    if (err == 0) {
        now = atomic_fetch_add(&live, len) + len;
        if (now > atomic_load(&peak))
            atomic_store(&peak, now);
    }
    return err;
}

static int pin_dereg(struct sd_qp *qp, struct sd_mr *mr)
{
    size_t len = mr->length;
    int err = wrapped_base->dereg_mr(qp, mr);

    if (err == 0)
        atomic_fetch_sub(&live, len);
    return err;
}

const struct sd_provider_ops *th_pinning_ops(const struct sd_provider_ops *base)
{
    wrapped_base = base;
    wrapped = *base;
    wrapped.pins_memory = 1;
    wrapped.reg_mr = pin_reg;
    wrapped.dereg_mr = pin_dereg;
    return &wrapped;
}

void th_pinning_refuse_past(size_t bytes)
{
    atomic_store(&refuse_past, bytes);
    atomic_store(&peak, atomic_load(&live));
    atomic_store(&refused, 0);
}

size_t th_pinning_live(void) { return atomic_load(&live); }
size_t th_pinning_peak(void) { return atomic_load(&peak); }
unsigned th_pinning_refused(void) { return atomic_load(&refused); }

static struct rlimit saved_rl;
static int saved;

void th_memlock_set(uint64_t bytes)
{
    struct rlimit rl;

    if (!saved) {
        if (getrlimit(RLIMIT_MEMLOCK, &saved_rl) < 0)
            abort();
        saved = 1;
    }
    rl = saved_rl;
    rl.rlim_cur = bytes < rl.rlim_max ? (rlim_t)bytes : rl.rlim_max;
    if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
        abort();
}

void th_memlock_restore(void)
{
    if (saved)
        setrlimit(RLIMIT_MEMLOCK, &saved_rl);
}
