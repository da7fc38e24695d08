/* pool.c - bounded free list of large buffers. */
#include "chunk/pool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define ZF_POOL_SLOTS 16          /* idle buffers at most */
#define ZF_POOL_MIN (256u << 10) /* smaller ones are cheap to malloc: not kept */
#define ZF_HUGE ((size_t)2 << 20)   /* a transparent huge page (x86-64, arm64 4K) */

typedef struct slot {
    void *buf;
    size_t cap;
} slot;

struct zf_pool {
    pthread_mutex_t mu;
    size_t limit, idle;
    unsigned n;
    slot s[ZF_POOL_SLOTS];
};

zf_pool *zf_pool_new(size_t limit)
{
    zf_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->limit = limit;
    pthread_mutex_init(&p->mu, NULL);
    return p;
}

void zf_pool_free(zf_pool *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->n; i++)
        free(p->s[i].buf);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void *zf_pool_alloc(size_t bytes)
{
    if (bytes < 2 * ZF_HUGE)
        return malloc(bytes ? bytes : 1);
    void *p;
    if (posix_memalign(&p, ZF_HUGE, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes & ~(ZF_HUGE - 1), MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
    return p;
}

void *zf_pool_take(zf_pool *p, size_t min, size_t *cap)
{
    pthread_mutex_lock(&p->mu);
    unsigned best = p->n;
    for (unsigned i = 0; i < p->n; i++)
        if (p->s[i].cap >= min && (best == p->n || p->s[i].cap < p->s[best].cap))
            best = i;
    void *buf = NULL;
    if (best < p->n) {
        buf = p->s[best].buf;
        *cap = p->s[best].cap;
        p->idle -= *cap;
        p->s[best] = p->s[--p->n];
    }
    pthread_mutex_unlock(&p->mu);
    return buf;
}

void zf_pool_give(zf_pool *p, void *buf, size_t cap)
{
    if (!buf)
        return;
    pthread_mutex_lock(&p->mu);
    int keep = cap >= ZF_POOL_MIN && p->n < ZF_POOL_SLOTS && cap <= p->limit - p->idle;
    if (keep) {
        p->s[p->n++] = (slot){buf, cap};
        p->idle += cap;
    }
    pthread_mutex_unlock(&p->mu);
    if (!keep)
        free(buf);
}
