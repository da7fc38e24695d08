/* deadline.c - the per-thread request deadline (deadline.h). */
#include "base/deadline.h"

#include <errno.h>
#include <time.h>

static _Thread_local uint64_t thread_deadline = ZF_DEADLINE_NONE;

uint64_t zf_deadline_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t zf_deadline_after(uint64_t ms)
{
    uint64_t now = zf_deadline_now_ms();
    return ms >= ZF_DEADLINE_NONE - now ? ZF_DEADLINE_NONE : now + ms;
}

void zf_deadline_set(uint64_t abs_ms)
{
    thread_deadline = abs_ms;
}

void zf_deadline_clear(void)
{
    thread_deadline = ZF_DEADLINE_NONE;
}

uint64_t zf_deadline_bound(uint64_t own_abs_ms)
{
    return own_abs_ms < thread_deadline ? own_abs_ms : thread_deadline;
}

uint64_t zf_deadline_remaining_ms(void)
{
    if (thread_deadline == ZF_DEADLINE_NONE)
        return ZF_DEADLINE_NONE;
    uint64_t now = zf_deadline_now_ms();
    return thread_deadline > now ? thread_deadline - now : 0;
}

int zf_deadline_spent(void)
{
    return zf_deadline_remaining_ms() == 0;
}

void zf_deadline_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

int zf_deadline_wait(pthread_cond_t *cv, pthread_mutex_t *mu)
{
    uint64_t d = thread_deadline;
    if (d == ZF_DEADLINE_NONE)
        return pthread_cond_wait(cv, mu);
    struct timespec ts = {.tv_sec = (time_t)(d / 1000), .tv_nsec = (long)(d % 1000) * 1000000};
    int rc = pthread_cond_timedwait(cv, mu, &ts);
    return rc == ETIMEDOUT || zf_deadline_spent() ? ETIMEDOUT : 0;
}
