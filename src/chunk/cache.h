/* cache.h - bounded, refcounted cache of decoded chunks.
 *
 * Contract:
 *  - Entries are keyed by (owner, index): owner identifies an array, index a
 *    chunk of it.  An entry's values are immutable once loaded.
 *  - zf_cache_get returns an entry holding one reference for the caller, who
 *    must give it back with zf_cache_put.  The cache holds its own reference
 *    while the entry is resident.
 *  - On a miss exactly one caller runs the loader; concurrent callers of the
 *    same key wait for it and share the result (or its error).  Errors are not
 *    cached: a later get loads again.  A caller whose thread has a request
 *    deadline (base/deadline.h) waits at most until then, or until its
 *    request is cancelled (or the process stops): ZF_ETIMEDOUT, and
 *    the load goes on for the others; a load that its own caller's deadline
 *    cut short (the loader's ZF_ETIMEDOUT) is loaded again by the waiters
 *    that still have time.
 *  - Resident bytes (values plus a small per-entry overhead) are kept at or
 *    under the capacity by evicting least recently used entries that no caller
 *    holds.  Entries still held may push the total over capacity until they are
 *    put; memory is therefore bounded by capacity + the chunks in use.
 *  - A load counts its expected bytes from the start: it evicts to make room
 *    before it runs, and decodes into the buffer of an entry it evicted when
 *    that has the right size (no fresh pages per chunk).
 *  - Loaders' scratch buffers (stored bytes) are kept between loads in the
 *    cache's pool, at most capacity / 8 idle bytes: memory is bounded by
 *    1.125 x capacity + the chunks held by callers + loaders' scratch in use.
 *  - Prefetch (optional): background threads load chunks a reader will want
 *    next into the cache, taking no reference; a reader asking for a chunk
 *    being prefetched waits for that load (single flight) instead of loading
 *    it again.  At most ZF_PREFETCH_QUEUE requests wait; more are dropped.
 *  - All functions are thread-safe. */
#ifndef ZF_CACHE_H
#define ZF_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "chunk/pool.h"

typedef struct zf_cache zf_cache;

typedef struct zf_chunk {
    const int64_t *values; /* n decoded values, C order of the chunk; NULL when
                              every value is `constant` (a missing chunk) */
    uint64_t n;
    int64_t constant;
    unsigned coarser;      /* values are ticks of 1000^coarser array units (a CF
                              float chunk beyond int64 ns: convert.h); else 0 */
} zf_chunk;

/* Load chunk `index` of `owner` into *out: either values (malloc'd; ownership
 * passes to the cache) or values NULL and every one of the n values equal to
 * constant (costs no memory).  buf is NULL or a buffer of exactly the bytes
 * given to zf_cache_get: the loader may decode into it and return it as
 * values; the cache frees it otherwise.  Returns 0 or a zf_err: ZF_ETIMEDOUT
 * when its thread's request deadline cut the load short (callers waiting for
 * it with time left then load it again). */
typedef int (*zf_chunk_loader)(void *ctx, uint64_t index, void *buf, zf_chunk *out);

/* New cache bounded to capacity bytes; NULL on allocation failure. */
zf_cache *zf_cache_new(size_t capacity);

/* Free the cache and every entry; no entry may still be held.  NULL is allowed. */
void zf_cache_free(zf_cache *c);

/* Look up (owner, index), loading it with load(ctx, ...) on a miss; bytes is
 * its expected decoded size.  On success *out holds one reference (release
 * with zf_cache_put).  ZF_ETIMEDOUT: another thread's load of it was still
 * running at the calling thread's request deadline. */
int zf_cache_get(zf_cache *c, uint64_t owner, uint64_t index, size_t bytes, zf_chunk_loader load,
                 void *ctx, zf_chunk **out);

/* Give back a reference obtained from zf_cache_get; NULL is allowed. */
void zf_cache_put(zf_cache *c, zf_chunk *chunk);

/* The cache's pool of idle scratch buffers (owned by the cache), for loaders. */
zf_pool *zf_cache_pool(zf_cache *c);

/* Would an entry of `bytes` bytes fit now without evicting another? */
int zf_cache_room(zf_cache *c, size_t bytes);

#define ZF_PREFETCH_QUEUE 64
#define ZF_PREFETCH_MAX_THREADS 64

/* Start `threads` prefetch threads (stopped and joined by zf_cache_free; at
 * most ZF_PREFETCH_MAX_THREADS).  Returns 0, or ZF_ENOMEM if none could be
 * started. */
int zf_cache_start_prefetch(zf_cache *c, unsigned threads);

/* If prefetch was started, have at least `threads` prefetch threads (at most
 * ZF_PREFETCH_MAX_THREADS): readers of a remote store keep that many loads
 * in flight.  Best effort. */
void zf_cache_want_prefetch(zf_cache *c, unsigned threads);

/* The capacity the cache was made with, in bytes. */
size_t zf_cache_capacity(const zf_cache *c);

/* Ask for (owner, index) to be loaded in the background unless it is already
 * there, queued, or the cache is too small to keep it (bytes: its expected
 * decoded size).  No effect without prefetch threads.  ctx must stay valid
 * until the load ran or zf_cache_cancel(owner) returned. */
void zf_cache_prefetch(zf_cache *c, uint64_t owner, uint64_t index, size_t bytes,
                       zf_chunk_loader load, void *ctx);

/* Drop the queued prefetches of owner and wait for those running. */
void zf_cache_cancel(zf_cache *c, uint64_t owner);

#endif
