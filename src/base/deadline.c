/* deadline.c - the per-thread request deadline and its cancellation
 * (deadline.h). */
#include "base/deadline.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

/* a request being served: its ticket and cancellation flag, in the
 * calling thread's storage; listed in `active` while it lasts */
typedef struct request {
    uint64_t ticket;
    int cancelled;             /* atomic */
    struct request *next;
} request;

static _Thread_local uint64_t thread_deadline = ZF_DEADLINE_NONE;
static _Thread_local const int *thread_cancel; /* the request's flag (own or adopted) */
static _Thread_local request thread_request;
static _Thread_local int thread_listed;
static _Thread_local int thread_unattended; /* the request is for no one */

static pthread_mutex_t active_mu = PTHREAD_MUTEX_INITIALIZER;
static request *active;        /* requests begun and not ended */
static uint64_t next_ticket = 1;
static volatile int stopping;  /* atomic: zf_deadline_cancel_all */

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

/* take the thread's own request out of the active list */
static void unlist(void)
{
    if (!thread_listed)
        return;
    pthread_mutex_lock(&active_mu);
    for (request **pp = &active; *pp; pp = &(*pp)->next)
        if (*pp == &thread_request) {
            *pp = thread_request.next;
            break;
        }
    pthread_mutex_unlock(&active_mu);
    thread_listed = 0;
}

void zf_deadline_clear(void)
{
    unlist();
    thread_deadline = ZF_DEADLINE_NONE;
    thread_cancel = NULL;
    thread_unattended = 0;
}

void zf_deadline_set_unattended(void)
{
    thread_unattended = 1;
}

int zf_deadline_unattended(void)
{
    return thread_unattended;
}

uint64_t zf_deadline_begin(uint64_t abs_ms)
{
    unlist();
    request *r = &thread_request;
    __atomic_store_n(&r->cancelled, 0, __ATOMIC_RELAXED);
    pthread_mutex_lock(&active_mu);
    r->ticket = next_ticket++;
    r->next = active;
    active = r;
    pthread_mutex_unlock(&active_mu);
    thread_listed = 1;
    thread_deadline = abs_ms;
    thread_cancel = &r->cancelled;
    thread_unattended = 0;
    return r->ticket;
}

void zf_deadline_end(void)
{
    zf_deadline_clear();
}

void zf_deadline_cancel(uint64_t ticket)
{
    pthread_mutex_lock(&active_mu);
    for (request *r = active; r; r = r->next)
        if (r->ticket == ticket)
            __atomic_store_n(&r->cancelled, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&active_mu);
}

void zf_deadline_cancel_all(void)
{
    __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
}

int zf_deadline_stopping(void)
{
    return __atomic_load_n(&stopping, __ATOMIC_ACQUIRE);
}

int zf_deadline_flag_set(const int *flag)
{
    return zf_deadline_stopping() || (flag && __atomic_load_n(flag, __ATOMIC_ACQUIRE));
}

int zf_deadline_cancelled(void)
{
    return zf_deadline_flag_set(thread_cancel);
}

zf_deadline_ctx zf_deadline_save(void)
{
    return (zf_deadline_ctx){thread_deadline, thread_cancel, thread_unattended};
}

void zf_deadline_restore(zf_deadline_ctx ctx)
{
    unlist();
    thread_deadline = ctx.abs_ms;
    thread_cancel = ctx.cancel;
    thread_unattended = ctx.unattended;
}

/* a helper thread of zf_deadline_workers: fn under the caller's request */
typedef struct worker_call {
    void *(*fn)(void *);
    void *arg;
    zf_deadline_ctx ctx;
} worker_call;

static void *worker_run(void *p)
{
    const worker_call *w = p;
    zf_deadline_restore(w->ctx);
    w->fn(w->arg);
    zf_deadline_clear();
    return NULL;
}

void zf_deadline_workers(unsigned n, void *(*fn)(void *), void *arg)
{
    worker_call w = {fn, arg, zf_deadline_save()};
    pthread_t tid[ZF_WORKERS_MAX];
    unsigned started = 0;
    for (unsigned i = 1; i < n && i < ZF_WORKERS_MAX; i++)
        if (pthread_create(&tid[started], NULL, worker_run, &w) == 0)
            started++;
    fn(arg);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
}

const int *zf_deadline_flag(void)
{
    return thread_cancel;
}

uint64_t zf_deadline_bound(uint64_t own_abs_ms)
{
    if (zf_deadline_cancelled())
        return 0;
    return own_abs_ms < thread_deadline ? own_abs_ms : thread_deadline;
}

uint64_t zf_deadline_remaining_ms(void)
{
    if (zf_deadline_cancelled())
        return 0;
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
    if (zf_deadline_spent())
        return ETIMEDOUT;
    /* wake by the deadline, and often enough to see a cancellation */
    uint64_t until = zf_deadline_after(ZF_DEADLINE_POLL_MS);
    int by_deadline = thread_deadline <= until;
    if (by_deadline)
        until = thread_deadline;
    struct timespec ts = {.tv_sec = (time_t)(until / 1000), .tv_nsec = (long)(until % 1000) * 1000000};
    int rc = pthread_cond_timedwait(cv, mu, &ts);
    if (zf_deadline_spent() || (rc == ETIMEDOUT && by_deadline))
        return ETIMEDOUT;
    return 0;
}
