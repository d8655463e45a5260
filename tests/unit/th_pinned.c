/* tests/unit/th_pinned.c — see th_pinned.h. */
#include "th_pinned.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
static struct __user_cap_data_struct saved_caps[_LINUX_CAPABILITY_U32S_3];
static int saved;

static int caps(int set, struct __user_cap_data_struct *d)
{
    struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

    return (int)syscall(set ? SYS_capset : SYS_capget, &h, d);
}

void th_memlock_set(uint64_t bytes)
{
    struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
    struct rlimit rl;

    if (!saved) {
        if (getrlimit(RLIMIT_MEMLOCK, &saved_rl) < 0 || caps(0, saved_caps) < 0)
            abort();
        saved = 1;
    }
    d[0] = saved_caps[0];
    d[1] = saved_caps[1];
    d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
    if (caps(1, d) < 0)
        abort();
    rl = saved_rl;
    rl.rlim_cur = bytes < rl.rlim_max ? (rlim_t)bytes : rl.rlim_max;
    if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
        abort();
}

void th_memlock_restore(void)
{
    if (!saved)
        return;
    setrlimit(RLIMIT_MEMLOCK, &saved_rl);
    caps(1, saved_caps);
}
