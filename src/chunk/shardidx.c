/* shardidx.c - a direct-mapped cache of shard indexes (see shardidx.h). */
#include "chunk/shardidx.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    uint64_t k;
    uint64_t count;      /* entries of idx; 0: an empty slot, or a shard known absent */
    int absent;          /* shard k is absent (a 404 remembered) */
    uint64_t *idx;       /* 2 * count values */
    zf_stamp st;
    int loading;         /* a caller is reading the index of shard k */
} slot;

struct zf_shardidx {
    pthread_mutex_t mu;
    pthread_cond_t done; /* a load ended */
    slot slots[ZF_SHARDIDX_SLOTS];
};

zf_shardidx *zf_shardidx_new(void)
{
    zf_shardidx *c = calloc(1, sizeof *c);
    if (c) {
        pthread_mutex_init(&c->mu, NULL);
        pthread_cond_init(&c->done, NULL);
    }
    return c;
}

void zf_shardidx_free(zf_shardidx *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < ZF_SHARDIDX_SLOTS; i++)
        free(c->slots[i].idx);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->done);
    free(c);
}

int zf_shardidx_get(zf_shardidx *c, uint64_t k, uint64_t pos, uint64_t *off, uint64_t *len,
                    zf_stamp *st, int *claimed)
{
    pthread_mutex_lock(&c->mu);
    slot *s = &c->slots[k % ZF_SHARDIDX_SLOTS];
    while (s->loading && s->k == k) /* single flight: another caller reads this index */
        pthread_cond_wait(&c->done, &c->mu);
    int hit = s->k == k && (s->absent || (s->count && pos < s->count));
    if (hit && s->absent) {
        memset(st, 0, sizeof *st); /* ZF_STORE_ABSENT */
    } else if (hit) {
        *off = s->idx[2 * pos];
        *len = s->idx[2 * pos + 1];
        *st = s->st;
    }
    *claimed = !hit && !s->loading;
    if (*claimed) { /* the caller reads the index: others of this shard wait for it */
        free(s->idx);
        *s = (slot){.k = k, .loading = 1};
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void zf_shardidx_put(zf_shardidx *c, uint64_t k, const uint64_t *idx, uint64_t count,
                     const zf_stamp *st)
{
    uint64_t *copy = NULL;
    size_t bytes = 0;
    if (idx && count && count <= ZF_SHARDIDX_MAX_BYTES / (2 * sizeof *idx)) {
        bytes = (size_t)count * 2 * sizeof *idx;
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
        }
        pthread_cond_broadcast(&c->done);
    }
    pthread_mutex_unlock(&c->mu);
    free(copy);
}
