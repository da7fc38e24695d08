/* shardidx.c - the kept shard indexes of every array in one table (see
 * shardidx.h): a hash table of entries, the idle ones on a list from least
 * to most recently used, those holding a shard's bytes also on a list in
 * the order they were kept, and each array's spans, all under one lock. */
#include "chunk/shardidx.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"

#define BUCKETS 65536 /* a power of two */

/* what is kept of one shard index (or read for it: loading) */
typedef struct entry {
    struct entry *chain;          /* the next in its bucket */
    struct entry *older, *newer;  /* the idle list (not while loading) */
    struct entry *sib, *sib_prev; /* its array's entries */
    struct entry *wprev, *wnext;  /* the entries holding shards' bytes (data) */
    const zf_shardidx *owner;
    zf_shard_at at;
    zf_stamp st;                  /* of the version it was read from */
    uint64_t count;               /* entries of idx */
    uint64_t *idx;                /* the index (2 * count values), or NULL */
    char *damage;                 /* why the index was refused, or NULL */
    int absent;                   /* the shard is absent (a 404 remembered) */
    int loading;                  /* a caller is reading it */
    uint8_t *data;                /* the whole shard (n bytes), or NULL */
    size_t n;
    uint64_t parts, served;       /* bytes of its inner chunks; copied out of data */
    size_t charged;               /* bytes it counts in index_bytes (data: in data_bytes) */
    uint64_t copied_ms;           /* when data was last copied from (or kept) */
} entry;

/* bytes [off, off + len) of shard k, version st: several neighbouring inner
 * chunks read in one request (zf_shardidx_fetch) */
typedef struct span {
    uint64_t k;
    zf_stamp st;
    uint64_t off, len;   /* len 0: an empty span */
    uint64_t parts;      /* bytes of its inner chunks (len less the gaps) */
    uint64_t served;     /* bytes copied out of it: freed once all parts were */
    uint64_t used;       /* when it was last claimed or copied from (T.tick) */
    uint8_t *data;       /* len bytes, or NULL while loading */
    int loading;         /* its claimer is reading it */
} span;

struct zf_shardidx {
    size_t budget;       /* most bytes kept by all arrays together after its shard bytes */
    size_t index_budget; /* ... after its indexes: budget, at least ZF_SHARDIDX_INDEX_MIN */
    entry *own;          /* its entries (linked by sib) */
    span spans[ZF_SHARDIDX_SPANS];
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t done;           /* a load ended */
    entry *bucket[BUCKETS];
    entry *oldest, *newest;        /* the idle entries, least recently used first */
    entry *wfirst, *wlast;         /* those holding a shard's bytes, first kept first */
    uint64_t tick;
} T = {.mu = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t T_once = PTHREAD_ONCE_INIT;
/* bytes kept by every array (atomic): indexes (and their entries), and
 * shards' bytes (whole shards, spans, and the reads of them in flight) */
static size_t index_bytes, data_bytes;

static void table_init(void)
{
    zf_deadline_cond_init(&T.done); /* waits end at a request's deadline */
}

zf_shardidx *zf_shardidx_new(size_t budget)
{
    pthread_once(&T_once, table_init);
    zf_shardidx *c = calloc(1, sizeof *c);
    if (c) {
        c->budget = budget;
        c->index_budget = budget > ZF_SHARDIDX_INDEX_MIN ? budget : ZF_SHARDIDX_INDEX_MIN;
    }
    return c;
}

int zf_shardidx_fits(const zf_shardidx *c, uint64_t count)
{
    return count <= (c->index_budget - sizeof(entry)) / (2 * sizeof(uint64_t));
}

/* ---- the table (T.mu held) ---------------------------------------------- */

static entry **bucket_of(const zf_shardidx *c, zf_shard_at at)
{
    uint64_t h = (uint64_t)(uintptr_t)c ^ at.k * 0x9E3779B97F4A7C15ull ^
                 (at.off + at.level) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return &T.bucket[h & (BUCKETS - 1)];
}

static entry *find(const zf_shardidx *c, zf_shard_at at)
{
    for (entry *e = *bucket_of(c, at); e; e = e->chain)
        if (e->owner == c && e->at.k == at.k && e->at.off == at.off && e->at.level == at.level)
            return e;
    return NULL;
}

static void idle_unlink(entry *e)
{
    *(e->older ? &e->older->newer : &T.oldest) = e->newer;
    *(e->newer ? &e->newer->older : &T.newest) = e->older;
    e->older = e->newer = NULL;
}

/* make idle e the most recently used */
static void idle_push(entry *e)
{
    e->older = T.newest;
    *(T.newest ? &T.newest->newer : &T.oldest) = e;
    T.newest = e;
}

static void touch(entry *e)
{
    idle_unlink(e);
    idle_push(e);
}

/* a new loading entry for shard at of c, or NULL if out of memory */
static entry *entry_add(zf_shardidx *c, zf_shard_at at)
{
    entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    entry **b = bucket_of(c, at);
    e->owner = c;
    e->at = at;
    e->loading = 1;
    e->chain = *b;
    *b = e;
    e->sib = c->own;
    if (c->own)
        c->own->sib_prev = e;
    c->own = e;
    return e;
}

/* e holds data[0..n) (reserved in data_bytes): it joins the list of shards'
 * bytes kept */
static void whole_keep(entry *e, uint8_t *data, size_t n)
{
    e->data = data;
    e->n = n;
    e->copied_ms = zf_deadline_now_ms();
    e->wprev = T.wlast;
    *(T.wlast ? &T.wlast->wnext : &T.wfirst) = e;
    T.wlast = e;
}

/* free the shard's bytes e holds (its index stays) */
static void whole_drop(entry *e)
{
    if (!e->data)
        return;
    *(e->wprev ? &e->wprev->wnext : &T.wfirst) = e->wnext;
    *(e->wnext ? &e->wnext->wprev : &T.wlast) = e->wprev;
    e->wprev = e->wnext = NULL;
    free(e->data);
    e->data = NULL;
    __atomic_sub_fetch(&data_bytes, e->n, __ATOMIC_RELAXED);
}

/* unlink e from everything and free it; what it kept leaves the counts */
static void entry_drop(zf_shardidx *c, entry *e)
{
    entry **p = bucket_of(c, e->at);
    while (*p != e)
        p = &(*p)->chain;
    *p = e->chain;
    *(e->sib_prev ? &e->sib_prev->sib : &c->own) = e->sib;
    if (e->sib)
        e->sib->sib_prev = e->sib_prev;
    if (!e->loading)
        idle_unlink(e);
    whole_drop(e);
    __atomic_sub_fetch(&index_bytes, e->charged, __ATOMIC_RELAXED);
    free(e->idx);
    free(e->damage);
    free(e);
}

/* add n bytes to *count if that stays within budget: 1 if they fit */
static int reserve(size_t *count, size_t budget, size_t n)
{
    size_t kept = __atomic_load_n(count, __ATOMIC_RELAXED);
    do {
        if (kept > budget || n > budget - kept)
            return 0;
    } while (!__atomic_compare_exchange_n(count, &kept, kept + n, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return 1;
}

static void unreserve(size_t n)
{
    __atomic_sub_fetch(&data_bytes, n, __ATOMIC_RELAXED);
}

void zf_shardidx_unreserve(size_t n)
{
    unreserve(n);
}

/* reserve n bytes of indexes within budget, dropping the least recently
 * used idle entries (of any array) as long as that helps: 1 if they fit */
static int index_room(size_t budget, size_t n)
{
    while (!reserve(&index_bytes, budget, n)) {
        if (!T.oldest || n > budget)
            return 0;
        entry_drop((zf_shardidx *)T.oldest->owner, T.oldest);
    }
    return 1;
}

/* shards' bytes kept (in the order they were kept) data_room looks at, at
 * most, for some not copied from for ZF_WHOLE_IDLE_MS */
#define IDLE_SCAN 64
#define ZF_WHOLE_IDLE_MS 1000

/* reserve n bytes of shards' bytes within budget (a whole-shard read or a
 * span), freeing the bytes of shards no one copied from for a while, as
 * long as that helps: 1 if they fit.  Bytes in use are not pushed out: a
 * shard without room is read by ranges instead */
static int data_room(size_t budget, size_t n)
{
    uint64_t now = zf_deadline_now_ms();
    while (!reserve(&data_bytes, budget, n)) {
        entry *e = T.wfirst;
        for (unsigned i = 0; e && now - e->copied_ms < ZF_WHOLE_IDLE_MS && i < IDLE_SCAN; i++)
            e = e->wnext;
        if (!e || now - e->copied_ms < ZF_WHOLE_IDLE_MS || n > budget)
            return 0;
        whole_drop(e);
    }
    return 1;
}

/* ---- indexes ------------------------------------------------------------ */

/* what entry e holds for position pos into ent, st, err: ZF_SHARD_MISS if
 * nothing usable */
static int entry_result(const entry *e, uint64_t pos, uint64_t *ent, zf_stamp *st, char *err,
                        size_t errcap)
{
    if (e->damage) {
        *st = e->st;
        snprintf(err, errcap, "%s", e->damage);
        return ZF_SHARD_DAMAGED;
    }
    if (e->absent) {
        memset(st, 0, sizeof *st); /* ZF_STORE_ABSENT */
        return ZF_SHARD_HIT;
    }
    if (pos >= e->count)
        return ZF_SHARD_MISS;
    ent[0] = e->idx[2 * pos];
    ent[1] = e->idx[2 * pos + 1];
    *st = e->st;
    return ZF_SHARD_HIT;
}

int zf_shardidx_get(zf_shardidx *c, zf_shard_at at, uint64_t pos, const zf_stamp *now,
                    uint64_t *ent, zf_stamp *st, char *err, size_t errcap, int *claimed,
                    int *whole)
{
    pthread_mutex_lock(&T.mu);
    entry *e;
    int late = 0; /* single flight: another caller reads it; at the thread's request
                   * deadline the caller goes on unclaimed (its own reads fail) */
    while ((e = find(c, at)) && e->loading && !late)
        late = zf_deadline_wait(&T.done, &T.mu) == ETIMEDOUT;
    int res = ZF_SHARD_MISS;
    if (e && !e->loading && (!now || zf_stamp_same_version(&e->st, now))) /* (absent: zeros) */
        res = entry_result(e, pos, ent, st, err, errcap);
    if (res != ZF_SHARD_MISS)
        touch(e);
    *whole = res != ZF_SHARD_MISS && e->data;
    *claimed = 0;
    if (res == ZF_SHARD_MISS && !(e && e->loading)) { /* the caller reads it: others wait */
        if (e)
            entry_drop(c, e); /* another version */
        *claimed = entry_add(c, at) != NULL;
    }
    pthread_mutex_unlock(&T.mu);
    return res;
}

int zf_shardidx_reserve(const zf_shardidx *c, size_t n)
{
    if (n > ZF_SHARD_WHOLE_MAX)
        return 0;
    pthread_mutex_lock(&T.mu);
    int ok = data_room(c->budget, n);
    pthread_mutex_unlock(&T.mu);
    return ok;
}

/* keep in loading entry e what zf_shardidx_put was given: 1 if kept; what it
 * keeps of *idx and *data (the whole shard, kept with an index only) is
 * then e's, and NULL */
static int entry_fill(zf_shardidx *c, entry *e, uint64_t **idx, uint64_t count,
                      const zf_stamp *st, const char *damage, uint8_t **data, size_t n)
{
    size_t want = sizeof *e + (*idx ? (size_t)count * 2 * sizeof **idx : 0) +
                  (damage ? strlen(damage) + 1 : 0);
    if (!st || (!*idx && !damage && st->kind != ZF_STORE_ABSENT) ||
        (damage && !(e->damage = strdup(damage))))
        return 0;
    if (!index_room(c->index_budget, want)) {
        free(e->damage);
        e->damage = NULL;
        return 0;
    }
    e->charged = want;
    e->st = *st;
    e->absent = !*idx && !damage;
    e->count = *idx ? count : 0;
    e->idx = *idx;
    *idx = NULL;
    if (e->idx && *data) { /* its reservation becomes part of the entry's */
        whole_keep(e, *data, n); /* (its reservation in data_bytes becomes e's) */
        *data = NULL;
        for (uint64_t k = 0; k < count; k++)
            e->parts += e->idx[2 * k] == UINT64_MAX ? 0 : e->idx[2 * k + 1];
    }
    return 1;
}

void zf_shardidx_put(zf_shardidx *c, zf_shard_at at, uint64_t *idx, uint64_t count,
                     const zf_stamp *st, const char *damage, uint8_t *data, size_t n,
                     size_t reserved)
{
    if (data && n > reserved) { /* (cannot be: read within the reservation) */
        free(data);
        data = NULL;
    }
    unreserve(data ? reserved - n : reserved); /* the reservation shrinks to the bytes read */
    pthread_mutex_lock(&T.mu);
    entry *e = find(c, at);
    if (e && e->loading) {
        e->loading = 0;
        if (entry_fill(c, e, &idx, count, st, damage, &data, n))
            idle_push(e);
        else
            entry_drop(c, e);
        pthread_cond_broadcast(&T.done);
    }
    pthread_mutex_unlock(&T.mu);
    if (data) /* not kept: its reservation ends */
        unreserve(n);
    free(data);
    free(idx);
}

/* ---- the bytes of remote shards ------------------------------------------ */

/* the outermost index of shard k, version st, kept (not loading), or NULL */
static entry *kept_index(const zf_shardidx *c, uint64_t k, const zf_stamp *st)
{
    entry *e = find(c, (zf_shard_at){k, 0, 0});
    return e && !e->loading && e->idx && zf_stamp_same_version(&e->st, st) ? e : NULL;
}

/* copy [off, off + len) of shard k, version st, from its whole bytes: 1 if
 * they are kept; they are freed once every inner chunk was copied out */
static int copy_whole(const zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t off,
                      size_t len, uint8_t *buf)
{
    entry *e = kept_index(c, k, st); /* the version the caller's index came from */
    int kept = e && e->data && off <= e->n && len <= e->n - off;
    if (!kept)
        return 0;
    memcpy(buf, e->data + off, len);
    e->served += len;
    e->copied_ms = zf_deadline_now_ms();
    if (e->served >= e->parts) /* read through: only the index stays */
        whole_drop(e);
    return 1;
}

/* free what span h holds (its bytes leave the shared count) */
static void span_clear(span *h)
{
    if (h->data)
        unreserve((size_t)h->len);
    free(h->data);
    memset(h, 0, sizeof *h);
}

/* the span of shard k, version st, loaded or loading, holding [off, off + len) */
static span *span_holding(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t off,
                          size_t len)
{
    for (size_t i = 0; i < ZF_SHARDIDX_SPANS; i++) {
        span *h = &c->spans[i];
        if (h->len && h->k == k && off >= h->off && off - h->off <= h->len &&
            len <= h->len - (off - h->off) && zf_stamp_same_version(&h->st, st))
            return h;
    }
    return NULL;
}

/* copy [off, off + len) out of loaded span h; freed once every inner chunk
 * of it was copied out */
static void span_copy(span *h, uint64_t off, size_t len, uint8_t *buf)
{
    memcpy(buf, h->data + (off - h->off), len);
    h->used = ++T.tick;
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

/* is index entry j of e a stored inner chunk inside the shard (of size bytes)? */
static int entry_valid(const entry *e, uint64_t j, uint64_t size)
{
    uint64_t off = e->idx[2 * j], len = e->idx[2 * j + 1];
    return off <= size && len <= size - off;
}

/* plan a span of shard k (index e) from the inner chunk at position pos on
 * (C order): it and the following stored ones, each starting at most
 * ZF_SPAN_GAP bytes after the previous one ends, none in another span, at
 * most ZF_SHARD_WHOLE_MAX bytes in all; 1 if it holds two inner chunks or more */
static int span_plan(const zf_shardidx *c, const entry *e, uint64_t pos, span *h)
{
    uint64_t k = e->at.k;
    if (pos >= e->count || !entry_valid(e, pos, e->st.size) ||
        e->idx[2 * pos + 1] > ZF_SHARD_WHOLE_MAX ||
        span_overlaps(c, k, e->idx[2 * pos], e->idx[2 * pos + 1]))
        return 0;
    uint64_t start = e->idx[2 * pos], end = start + e->idx[2 * pos + 1], chunks = 1;
    h->parts = e->idx[2 * pos + 1];
    for (uint64_t j = pos + 1; j < e->count; j++) {
        uint64_t off = e->idx[2 * j], len = e->idx[2 * j + 1];
        if (off == UINT64_MAX && len == UINT64_MAX)
            continue; /* an empty inner chunk: nothing to read */
        if (!entry_valid(e, j, e->st.size) || off < end || off - end > ZF_SPAN_GAP ||
            len > ZF_SHARD_WHOLE_MAX - (off - start) || span_overlaps(c, k, off, len))
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
    entry *e = kept_index(c, k, st);
    if (!e)
        return 0;
    touch(e); /* (not the one to drop for the span's room) */
    span plan = {0}, *h = NULL; /* replaces an empty span, else the least recently used */
    for (size_t i = 0; i < ZF_SHARDIDX_SPANS; i++) {
        span *s = &c->spans[i];
        if (!s->loading && (!h || (h->len && (!s->len || s->used < h->used))))
            h = s;
    }
    if (!h || !span_plan(c, e, pos, &plan) || off < plan.off || off - plan.off > plan.len ||
        len > plan.len - (off - plan.off))
        return 0; /* (the caller's range lies in the inner chunk at pos: checked all the same) */
    if (!data_room(c->budget, (size_t)plan.len))
        return 0;
    span_clear(h);
    *h = plan;
    h->k = k;
    h->st = *st;
    h->loading = 1;
    h->used = ++T.tick;
    claim->off = h->off;
    claim->len = (size_t)h->len;
    claim->slot = (int)(h - c->spans);
    return 1;
}

int zf_shardidx_fetch(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t pos,
                      uint64_t off, size_t len, uint8_t *buf, zf_span_claim *claim)
{
    if (claim)
        claim->slot = -1;
    pthread_mutex_lock(&T.mu);
    int kept = copy_whole(c, k, st, off, len, buf), late = 0;
    span *h;
    while (!kept && !late && (h = span_holding(c, k, st, off, len))) {
        if (h->data) { /* read for a neighbour: no request */
            span_copy(h, off, len, buf);
            kept = 1;
        } else { /* single flight: wait for its reader (to the thread's deadline) */
            late = zf_deadline_wait(&T.done, &T.mu) == ETIMEDOUT;
        }
    }
    if (!kept && !late && claim)
        span_claim(c, k, st, pos, off, len, claim);
    pthread_mutex_unlock(&T.mu);
    return kept;
}

void zf_shardidx_put_span(zf_shardidx *c, const zf_span_claim *claim, uint8_t *data,
                          uint64_t off, size_t len, uint8_t *buf)
{
    pthread_mutex_lock(&T.mu);
    span *h = &c->spans[claim->slot];
    h->loading = 0;
    if (data) { /* its reservation becomes its kept bytes */
        h->data = data;
        span_copy(h, off, len, buf);
    } else { /* not read: the waiting readers read their own ranges */
        unreserve(claim->len);
        memset(h, 0, sizeof *h);
    }
    pthread_cond_broadcast(&T.done);
    pthread_mutex_unlock(&T.mu);
}

void zf_shardidx_free(zf_shardidx *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&T.mu);
    while (c->own)
        entry_drop(c, c->own);
    for (size_t i = 0; i < ZF_SHARDIDX_SPANS; i++)
        span_clear(&c->spans[i]);
    pthread_mutex_unlock(&T.mu);
    free(c);
}
