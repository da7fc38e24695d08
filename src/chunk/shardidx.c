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

/* bytes [off, off + len) of shard k, version st: several neighbouring inner
 * chunks read in one request (zf_shardidx_fetch) */
typedef struct span {
    uint64_t k;
    zf_stamp st;
    uint64_t off, len;   /* len 0: an empty span */
    uint64_t parts;      /* bytes of its inner chunks (len less the gaps) */
    uint64_t served;     /* bytes copied out of it: freed once all parts were */
    uint64_t used;       /* when it was last claimed or copied from (c->tick) */
    uint8_t *data;       /* len bytes, or NULL while loading */
    int loading;         /* its claimer is reading it */
} span;

struct zf_shardidx {
    pthread_mutex_t mu;
    pthread_cond_t done; /* a load ended */
    size_t budget;       /* most shard bytes kept by all caches together */
    uint64_t tick;
    slot slots[ZF_SHARDIDX_SLOTS];
    span spans[ZF_SHARDIDX_SPANS];
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

/* free what span h holds (its bytes leave the shared count) */
static void span_clear(span *h)
{
    if (h->data)
        __atomic_sub_fetch(&kept_bytes, (size_t)h->len, __ATOMIC_RELAXED);
    free(h->data);
    memset(h, 0, sizeof *h);
}

void zf_shardidx_free(zf_shardidx *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < ZF_SHARDIDX_SLOTS; i++)
        slot_clear(&c->slots[i]);
    for (size_t i = 0; i < ZF_SHARDIDX_SPANS; i++)
        span_clear(&c->spans[i]);
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

/* copy [off, off + len) of shard k, version st, from its slot's whole bytes:
 * 1 if they are kept there */
static int copy_whole(const slot *s, uint64_t k, const zf_stamp *st, uint64_t off, size_t len,
                      uint8_t *buf)
{
    int kept = s->k == k && !s->loading && s->data && off <= s->n && len <= s->n - off &&
               !memcmp(&s->st, st, sizeof *st); /* the version the caller's index came from */
    if (kept)
        memcpy(buf, s->data + off, len);
    return kept;
}

/* the span of shard k, version st, loaded or loading, holding [off, off + len) */
static span *span_holding(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t off,
                          size_t len)
{
    for (size_t i = 0; i < ZF_SHARDIDX_SPANS; i++) {
        span *h = &c->spans[i];
        if (h->len && h->k == k && off >= h->off && off - h->off <= h->len &&
            len <= h->len - (off - h->off) && !memcmp(&h->st, st, sizeof *st))
            return h;
    }
    return NULL;
}

/* copy [off, off + len) out of loaded span h; freed once every inner chunk
 * of it was copied out */
static void span_copy(zf_shardidx *c, span *h, uint64_t off, size_t len, uint8_t *buf)
{
    memcpy(buf, h->data + (off - h->off), len);
    h->used = ++c->tick;
    h->served += len;
    if (h->served >= h->parts)
        span_clear(h);
}

/* does [off, off + len) of shard k meet another span of it? */
static int span_overlaps(const zf_shardidx *c, uint64_t k, uint64_t off, uint64_t len)
{
    for (size_t i = 0; i < ZF_SHARDIDX_SPANS; i++) {
        const span *h = &c->spans[i];
        if (h->len && h->k == k && off < h->off + h->len && h->off < off + len)
            return 1;
    }
    return 0;
}

/* is index entry j of s a stored inner chunk inside the shard (of size bytes)? */
static int entry_valid(const slot *s, uint64_t j, uint64_t size)
{
    uint64_t off = s->idx[2 * j], len = s->idx[2 * j + 1];
    return off <= size && len <= size - off;
}

/* plan a span of shard k from the inner chunk at position pos on (C order):
 * it and the following stored ones, each starting at most ZF_SPAN_GAP bytes
 * after the previous one ends, none in another span, at most
 * ZF_SHARD_WHOLE_MAX bytes in all; 1 if it holds two inner chunks or more */
static int span_plan(const zf_shardidx *c, const slot *s, uint64_t pos, span *h)
{
    if (pos >= s->count || !entry_valid(s, pos, s->st.size) ||
        s->idx[2 * pos + 1] > ZF_SHARD_WHOLE_MAX ||
        span_overlaps(c, s->k, s->idx[2 * pos], s->idx[2 * pos + 1]))
        return 0;
    uint64_t start = s->idx[2 * pos], end = start + s->idx[2 * pos + 1], chunks = 1;
    h->parts = s->idx[2 * pos + 1];
    for (uint64_t j = pos + 1; j < s->count; j++) {
        uint64_t off = s->idx[2 * j], len = s->idx[2 * j + 1];
        if (off == UINT64_MAX && len == UINT64_MAX)
            continue; /* an empty inner chunk: nothing to read */
        if (!entry_valid(s, j, s->st.size) || off < end || off - end > ZF_SPAN_GAP ||
            len > ZF_SHARD_WHOLE_MAX - (off - start) || span_overlaps(c, s->k, off, len))
            break;
        end = off + len;
        h->parts += len;
        chunks++;
    }
    h->off = start;
    h->len = end - start;
    return chunks > 1 && h->len > 0;
}

/* claim a span of shard k, version st, from position pos on, holding the
 * caller's [off, off + len), for the caller to read, with its bytes
 * reserved: 1 if one was planned and fits */
static int span_claim(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t pos,
                      uint64_t off, size_t len, zf_span_claim *claim)
{
    const slot *s = &c->slots[k % ZF_SHARDIDX_SLOTS];
    if (s->k != k || s->loading || !s->count || memcmp(&s->st, st, sizeof *st))
        return 0;
    span plan = {0}, *h = NULL; /* replaces an empty span, else the least recently used */
    for (size_t i = 0; i < ZF_SHARDIDX_SPANS; i++) {
        span *e = &c->spans[i];
        if (!e->loading && (!h || (h->len && (!e->len || e->used < h->used))))
            h = e;
    }
    if (!h || !span_plan(c, s, pos, &plan) || off < plan.off || off - plan.off > plan.len ||
        len > plan.len - (off - plan.off) || !reserve(c, (size_t)plan.len))
        return 0; /* (the caller's range lies in the inner chunk at pos: checked all the same) */
    span_clear(h);
    *h = plan;
    h->k = k;
    h->st = *st;
    h->loading = 1;
    h->used = ++c->tick;
    claim->off = h->off;
    claim->len = (size_t)h->len;
    claim->slot = (int)(h - c->spans);
    return 1;
}

int zf_shardidx_fetch(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t pos,
                      uint64_t off, size_t len, uint8_t *buf, zf_span_claim *claim)
{
    claim->slot = -1;
    pthread_mutex_lock(&c->mu);
    int kept = copy_whole(&c->slots[k % ZF_SHARDIDX_SLOTS], k, st, off, len, buf), late = 0;
    span *h;
    while (!kept && !late && (h = span_holding(c, k, st, off, len))) {
        if (h->data) { /* read for a neighbour: no request */
            span_copy(c, h, off, len, buf);
            kept = 1;
        } else { /* single flight: wait for its reader (to the thread's deadline) */
            late = zf_deadline_wait(&c->done, &c->mu) == ETIMEDOUT;
        }
    }
    if (!kept && !late)
        span_claim(c, k, st, pos, off, len, claim);
    pthread_mutex_unlock(&c->mu);
    return kept;
}

void zf_shardidx_put_span(zf_shardidx *c, const zf_span_claim *claim, uint8_t *data,
                          uint64_t off, size_t len, uint8_t *buf)
{
    pthread_mutex_lock(&c->mu);
    span *h = &c->spans[claim->slot];
    h->loading = 0;
    if (data) { /* its reservation becomes its kept bytes */
        h->data = data;
        span_copy(c, h, off, len, buf);
    } else { /* not read: the waiting readers read their own ranges */
        zf_shardidx_unreserve(claim->len);
        memset(h, 0, sizeof *h);
    }
    pthread_cond_broadcast(&c->done);
    pthread_mutex_unlock(&c->mu);
}
