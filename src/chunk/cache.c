/* cache.c - LRU chunk cache with per-key single-flight loading. */
#include "chunk/cache.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"
#include "base/err.h"

enum { LOADING, READY, FAILED };

typedef struct entry {
    zf_chunk pub;          /* first member: a zf_chunk* is an entry* */
    uint64_t owner, index;
    int state, err;
    unsigned refs;         /* callers + 1 while linked in the table */
    int linked;
    size_t bytes;
    struct entry *hnext;   /* hash chain */
    struct entry *prev, *next; /* LRU list, most recent at head */
} entry;

/* a background load waiting for a prefetch thread */
typedef struct job {
    uint64_t owner, index;
    size_t bytes;
    zf_chunk_loader load;
    void *ctx;
} job;

typedef struct worker {
    struct zf_cache *c;
    pthread_t tid;
    int active;     /* loading a chunk of owner */
    uint64_t owner;
} worker;

struct zf_cache {
    pthread_mutex_t mu;
    pthread_cond_t loaded;
    size_t capacity, used;
    zf_pool *pool;              /* loaders' scratch buffers */
    size_t nbuckets, count;
    entry **buckets;
    entry *head, *tail;
    pthread_cond_t work, idle;  /* prefetch: a job was queued; a worker finished one */
    job queue[ZF_PREFETCH_QUEUE];
    unsigned nqueued, nworkers;
    worker *workers;
    int stop;
};

static size_t hash(uint64_t owner, uint64_t index)
{
    uint64_t h = owner * 0x9E3779B97F4A7C15ull ^ (index + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

zf_cache *zf_cache_new(size_t capacity)
{
    zf_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->nbuckets = 256;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    c->pool = zf_pool_new(capacity / 8);
    if (!c->buckets || !c->pool) {
        free(c->buckets);
        zf_pool_free(c->pool);
        free(c);
        return NULL;
    }
    c->capacity = capacity;
    pthread_mutex_init(&c->mu, NULL);
    zf_deadline_cond_init(&c->loaded); /* waits for a load end at a request's deadline */
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->idle, NULL);
    return c;
}

static void entry_free(entry *e)
{
    free((void *)e->pub.values);
    free(e);
}

static void stop_workers(zf_cache *c)
{
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->mu);
    for (unsigned i = 0; i < c->nworkers; i++)
        pthread_join(c->workers[i].tid, NULL);
    free(c->workers);
}

void zf_cache_free(zf_cache *c)
{
    if (!c)
        return;
    stop_workers(c);
    for (entry *e = c->head, *n; e; e = n) {
        n = e->next;
        entry_free(e);
    }
    free(c->buckets);
    zf_pool_free(c->pool);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->loaded);
    pthread_cond_destroy(&c->work);
    pthread_cond_destroy(&c->idle);
    free(c);
}

static entry **slot(zf_cache *c, uint64_t owner, uint64_t index)
{
    entry **p = &c->buckets[hash(owner, index) & (c->nbuckets - 1)];
    while (*p && ((*p)->owner != owner || (*p)->index != index))
        p = &(*p)->hnext;
    return p;
}

static void grow(zf_cache *c)
{
    size_t n = c->nbuckets * 2;
    entry **b = calloc(n, sizeof *b);
    if (!b)
        return; /* keep the old table: longer chains, still correct */
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (entry *e = c->buckets[i], *next; e; e = next) {
            next = e->hnext;
            size_t h = hash(e->owner, e->index) & (n - 1);
            e->hnext = b[h];
            b[h] = e;
        }
    }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = n;
}

static void lru_unlink(zf_cache *c, entry *e)
{
    if (e->prev) e->prev->next = e->next; else c->head = e->next;
    if (e->next) e->next->prev = e->prev; else c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push(zf_cache *c, entry *e)
{
    e->next = c->head;
    e->prev = NULL;
    if (c->head) c->head->prev = e; else c->tail = e;
    c->head = e;
}

/* remove from table and LRU; drops the table's reference */
static void unlink_entry(zf_cache *c, entry *e)
{
    *slot(c, e->owner, e->index) = e->hnext;
    lru_unlink(c, e);
    e->linked = 0;
    c->count--;
    c->used -= e->bytes;
    if (--e->refs == 0)
        entry_free(e);
}

/* evict least recently used entries no one holds while over capacity; the
 * values buffer of one of them that is exactly `bytes` long (0: none) is not
 * freed but returned, for a load to decode into */
static void *reclaim(zf_cache *c, size_t bytes)
{
    void *keep = NULL;
    entry *e = c->tail;
    while (c->used > c->capacity && e) {
        entry *prev = e->prev;
        if (e->refs == 1 && e->state == READY) {
            if (!keep && bytes && e->pub.values && (size_t)e->pub.n * sizeof(int64_t) == bytes) {
                keep = (void *)e->pub.values;
                e->pub.values = NULL;
            }
            unlink_entry(c, e);
        }
        e = prev;
    }
    return keep;
}

static void evict(zf_cache *c)
{
    reclaim(c, 0);
}

/* wait for a load in progress, at most until the calling thread's request
 * deadline; returns with a reference held or an error (ZF_ETIMEDOUT: the
 * deadline came first; the load goes on) */
static int wait_loaded(zf_cache *c, entry *e, zf_chunk **out)
{
    int late = 0;
    e->refs++;
    while (e->state == LOADING && !late)
        late = zf_deadline_wait(&c->loaded, &c->mu) == ETIMEDOUT && e->state == LOADING;
    if (e->state == READY) {
        *out = &e->pub;
        return ZF_OK;
    }
    int rc = late ? ZF_ETIMEDOUT : e->err;
    if (--e->refs == 0)
        entry_free(e);
    return rc;
}

/* load e, whose `bytes` are counted from the start: a load in progress takes
 * its room in the cache, and the buffer of the entry it evicts to make that
 * room is the one it decodes into (no fresh pages per chunk) */
static int load_new(zf_cache *c, entry *e, size_t bytes, zf_chunk_loader load, void *ctx,
                    zf_chunk **out)
{
    e->bytes = bytes + sizeof(entry);
    c->used += e->bytes;
    void *buf = reclaim(c, bytes);
    pthread_mutex_unlock(&c->mu);
    zf_chunk got = {NULL, 0, 0, 0};
    int rc = load(ctx, e->index, buf, &got);
    if (buf && got.values != buf)
        free(buf); /* not used (a missing chunk, an error) */
    pthread_mutex_lock(&c->mu);
    if (rc == ZF_OK) {
        e->pub = got;
        c->used -= e->bytes;
        e->bytes = (got.values ? (size_t)got.n * sizeof(int64_t) : 0) + sizeof(entry);
        c->used += e->bytes;
        e->state = READY;
        *out = &e->pub;
        evict(c);
    } else {
        e->state = FAILED;
        e->err = rc;
        e->refs--;          /* ours; the table's still holds e */
        unlink_entry(c, e); /* drops the table's: frees e unless a waiter holds it */
    }
    pthread_cond_broadcast(&c->loaded);
    return rc;
}

/* a new entry for (owner, index), loaded by this caller (lock held) */
static int miss(zf_cache *c, uint64_t owner, uint64_t index, size_t bytes, zf_chunk_loader load,
                void *ctx, zf_chunk **out)
{
    entry *e = calloc(1, sizeof *e);
    if (!e)
        return ZF_ENOMEM;
    e->owner = owner;
    e->index = index;
    e->state = LOADING;
    e->refs = 2; /* the table's and ours */
    e->linked = 1;
    e->hnext = NULL;
    *slot(c, owner, index) = e;
    lru_push(c, e);
    if (++c->count > c->nbuckets)
        grow(c);
    return load_new(c, e, bytes, load, ctx, out);
}

int zf_cache_get(zf_cache *c, uint64_t owner, uint64_t index, size_t bytes, zf_chunk_loader load,
                 void *ctx, zf_chunk **out)
{
    pthread_mutex_lock(&c->mu);
    entry *e;
    int rc;
    do { /* a load cut short by its own caller's deadline answers no one else: load again */
        if ((e = *slot(c, owner, index))) {
            lru_unlink(c, e);
            lru_push(c, e);
            rc = wait_loaded(c, e, out);
        } else {
            rc = miss(c, owner, index, bytes, load, ctx, out);
        }
    } while (e && rc == ZF_ETIMEDOUT && !zf_deadline_spent());
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void zf_cache_put(zf_cache *c, zf_chunk *chunk)
{
    if (!chunk)
        return;
    entry *e = (entry *)chunk;
    pthread_mutex_lock(&c->mu);
    if (--e->refs == 0)
        entry_free(e);
    else if (e->linked)
        evict(c);
    pthread_mutex_unlock(&c->mu);
}

zf_pool *zf_cache_pool(zf_cache *c)
{
    return c->pool;
}

int zf_cache_room(zf_cache *c, size_t bytes)
{
    pthread_mutex_lock(&c->mu);
    int ok = c->used <= c->capacity && bytes + sizeof(entry) <= c->capacity - c->used;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

/* ---------------------------------------------------------------- prefetch */

/* run queued jobs until the cache stops; a job whose chunk is already in the
 * table (loaded or loading) is skipped */
static void *prefetch_worker(void *arg)
{
    worker *w = arg;
    zf_cache *c = w->c;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->stop && !c->nqueued)
            pthread_cond_wait(&c->work, &c->mu);
        if (c->stop)
            break;
        job j = c->queue[0];
        memmove(c->queue, c->queue + 1, --c->nqueued * sizeof *c->queue);
        if (*slot(c, j.owner, j.index))
            continue;
        w->active = 1;
        w->owner = j.owner;
        pthread_mutex_unlock(&c->mu);
        zf_chunk *ch;
        if (zf_cache_get(c, j.owner, j.index, j.bytes, j.load, j.ctx, &ch) == ZF_OK)
            zf_cache_put(c, ch);
        pthread_mutex_lock(&c->mu);
        w->active = 0;
        pthread_cond_broadcast(&c->idle);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* start prefetch threads until there are `threads` (lock held; slots for
 * ZF_PREFETCH_MAX_THREADS are allocated: running workers point into them) */
static void add_workers(zf_cache *c, unsigned threads)
{
    sigset_t all, old; /* signals are for the threads that serve requests */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (c->nworkers < threads && c->nworkers < ZF_PREFETCH_MAX_THREADS) {
        worker *w = &c->workers[c->nworkers];
        w->c = c;
        if (pthread_create(&w->tid, NULL, prefetch_worker, w) != 0)
            break;
        c->nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int zf_cache_start_prefetch(zf_cache *c, unsigned threads)
{
    if (c->workers || !threads ||
        !(c->workers = calloc(ZF_PREFETCH_MAX_THREADS, sizeof *c->workers)))
        return ZF_ENOMEM;
    pthread_mutex_lock(&c->mu);
    add_workers(c, threads);
    pthread_mutex_unlock(&c->mu);
    return c->nworkers ? ZF_OK : ZF_ENOMEM;
}

void zf_cache_want_prefetch(zf_cache *c, unsigned threads)
{
    pthread_mutex_lock(&c->mu);
    if (c->nworkers && !c->stop && c->nworkers < threads)
        add_workers(c, threads);
    pthread_mutex_unlock(&c->mu);
}

size_t zf_cache_capacity(const zf_cache *c)
{
    return c->capacity;
}

static int queued(const zf_cache *c, uint64_t owner, uint64_t index)
{
    for (unsigned i = 0; i < c->nqueued; i++)
        if (c->queue[i].owner == owner && c->queue[i].index == index)
            return 1;
    return 0;
}

void zf_cache_prefetch(zf_cache *c, uint64_t owner, uint64_t index, size_t bytes,
                       zf_chunk_loader load, void *ctx)
{
    pthread_mutex_lock(&c->mu);
    /* the chunk must fit four times over: the reader's, those ahead, slack */
    if (c->nworkers && !c->stop && bytes <= c->capacity / 4 && c->nqueued < ZF_PREFETCH_QUEUE &&
        !*slot(c, owner, index) && !queued(c, owner, index)) {
        c->queue[c->nqueued++] = (job){owner, index, bytes, load, ctx};
        pthread_cond_signal(&c->work);
    }
    pthread_mutex_unlock(&c->mu);
}

static int busy_with(const zf_cache *c, uint64_t owner)
{
    for (unsigned i = 0; i < c->nworkers; i++)
        if (c->workers[i].active && c->workers[i].owner == owner)
            return 1;
    return 0;
}

void zf_cache_cancel(zf_cache *c, uint64_t owner)
{
    pthread_mutex_lock(&c->mu);
    unsigned k = 0;
    for (unsigned i = 0; i < c->nqueued; i++)
        if (c->queue[i].owner != owner)
            c->queue[k++] = c->queue[i];
    c->nqueued = k;
    while (busy_with(c, owner))
        pthread_cond_wait(&c->idle, &c->mu);
    pthread_mutex_unlock(&c->mu);
}
