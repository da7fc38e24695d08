/* shardidx.c - a direct-mapped cache of shard indexes and small shards'
 * bytes (see shardidx.h). */
#include "chunk/shardidx.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"

typedef struct slot {
    uint64_t k;
    uint64_t count;      /* entries of idx; 0: an empty slot, or a shard known absent */
    int absent;          /* shard k is absent (a 404 remembered) */
    uint64_t *idx;       /* 2 * count values */
    uint8_t *data;       /* the whole shard (n bytes), or NULL */
    size_t n;
    zf_stamp st;
    int loading;         /* a caller is reading shard k */
} slot;

struct zf_shardidx {
    pthread_mutex_t mu;
    pthread_cond_t done; /* a load ended */
    size_t budget;       /* most shard bytes kept by all caches together */
    slot slots[ZF_SHARDIDX_SLOTS];
};

static size_t kept_bytes; /* shard bytes kept by every cache (atomic) */

zf_shardidx *zf_shardidx_new(size_t budget)
{
    zf_shardidx *c = calloc(1, sizeof *c);
    if (c) {
        pthread_mutex_init(&c->mu, NULL);
        zf_deadline_cond_init(&c->done); /* waits end at a request's deadline */
        c->budget = budget;
    }
    return c;
}

/* free what slot s holds (its shard bytes leave the shared count) */
static void slot_clear(slot *s)
{
    if (s->data)
        __atomic_sub_fetch(&kept_bytes, s->n, __ATOMIC_RELAXED);
    free(s->idx);
    free(s->data);
    memset(s, 0, sizeof *s);
}

void zf_shardidx_free(zf_shardidx *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < ZF_SHARDIDX_SLOTS; i++)
        slot_clear(&c->slots[i]);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->done);
    free(c);
}

int zf_shardidx_get(zf_shardidx *c, uint64_t k, uint64_t pos, uint64_t *off, uint64_t *len,
                    zf_stamp *st, int *claimed)
{
    pthread_mutex_lock(&c->mu);
    slot *s = &c->slots[k % ZF_SHARDIDX_SLOTS];
    int late = 0; /* single flight: another caller reads this shard; at the thread's
                   * request deadline the caller goes on unclaimed (its own reads fail) */
    while (s->loading && s->k == k && !late)
        late = zf_deadline_wait(&c->done, &c->mu) == ETIMEDOUT;
    int hit = s->k == k && (s->absent || (s->count && pos < s->count));
    if (hit && s->absent) {
        memset(st, 0, sizeof *st); /* ZF_STORE_ABSENT */
    } else if (hit) {
        *off = s->idx[2 * pos];
        *len = s->idx[2 * pos + 1];
        *st = s->st;
    }
    *claimed = !hit && !s->loading;
    if (*claimed) { /* the caller reads the shard: others of it wait */
        slot_clear(s);
        s->k = k;
        s->loading = 1;
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

/* reserve n bytes of the shared budget: 1 if they fit */
static int reserve(const zf_shardidx *c, size_t n)
{
    size_t kept = __atomic_load_n(&kept_bytes, __ATOMIC_RELAXED);
    do {
        if (kept > c->budget || n > c->budget - kept)
            return 0;
    } while (!__atomic_compare_exchange_n(&kept_bytes, &kept, kept + n, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return 1;
}

int zf_shardidx_reserve(const zf_shardidx *c, size_t n)
{
    return n <= ZF_SHARD_WHOLE_MAX && reserve(c, n);
}

void zf_shardidx_unreserve(size_t n)
{
    __atomic_sub_fetch(&kept_bytes, n, __ATOMIC_RELAXED);
}

void zf_shardidx_put(zf_shardidx *c, uint64_t k, const uint64_t *idx, uint64_t count,
                     const zf_stamp *st, uint8_t *data, size_t n, size_t reserved)
{
    uint64_t *copy = NULL;
    if (idx && count && count <= ZF_SHARDIDX_MAX_BYTES / (2 * sizeof *idx)) {
        size_t bytes = (size_t)count * 2 * sizeof *idx;
        if ((copy = malloc(bytes)))
            memcpy(copy, idx, bytes);
    }
    pthread_mutex_lock(&c->mu);
    slot *s = &c->slots[k % ZF_SHARDIDX_SLOTS];
    if (s->loading && s->k == k) {
        s->loading = 0;
        s->absent = !idx && st && st->kind == ZF_STORE_ABSENT;
        if (copy) {
            s->idx = copy;
            s->count = count;
            s->st = *st;
            copy = NULL;
            if (data && n <= reserved) { /* its reservation shrinks to its size */
                zf_shardidx_unreserve(reserved - n);
                s->data = data;
                s->n = n;
                data = NULL;
            }
        }
        pthread_cond_broadcast(&c->done);
    }
    pthread_mutex_unlock(&c->mu);
    if (data) /* not kept: its reservation ends */
        zf_shardidx_unreserve(reserved);
    free(copy);
    free(data);
}

int zf_shardidx_copy(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t off, size_t len,
                     uint8_t *buf)
{
    pthread_mutex_lock(&c->mu);
    const slot *s = &c->slots[k % ZF_SHARDIDX_SLOTS];
    int kept = s->k == k && !s->loading && s->data && off <= s->n && len <= s->n - off &&
               !memcmp(&s->st, st, sizeof *st); /* the version the caller's index came from */
    if (kept)
        memcpy(buf, s->data + off, len);
    pthread_mutex_unlock(&c->mu);
    return kept;
}
