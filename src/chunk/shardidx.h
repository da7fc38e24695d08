/* shardidx.h - a bounded cache of shards' indexes (and of shards' bytes),
 * for remote stores.
 *
 * Reading one inner chunk of a shard takes the shard's size and version (a
 * HEAD), its index (a ranged GET) and the inner chunk (another): three round
 * trips.  An array of a remote store keeps, for recently read shards, the
 * outermost index with the stamp the shard had when it was read, and for a
 * shard of at most ZF_SHARD_WHOLE_MAX bytes its whole bytes, read in one GET
 * (so every inner chunk of it costs no request at all).  A larger shard's
 * inner chunks are coalesced once its index is kept: the first one missing
 * is read with the stored inner chunks that follow it in the index (C
 * order), each starting at most ZF_SPAN_GAP bytes after the previous one
 * ends, at most ZF_SHARD_WHOLE_MAX bytes in all, in one ranged GET (a span);
 * those that follow are then copied from the span without a request, and it
 * is freed once each of its inner chunks was copied out (or replaced by a
 * newer span).  It remembers shards found absent, too (a store that cannot
 * be listed would answer 404 for each of their inner chunks).  The version
 * checked against the array's snapshot is the kept one: a span carries the
 * version of the index it was planned from and serves only callers of that
 * version.  Concurrent readers of one shard, or of one span, read it once
 * (single flight).
 * Memory: at most ZF_SHARDIDX_SLOTS indexes of at most ZF_SHARDIDX_MAX_BYTES
 * each per array (larger ones are not kept: the shard's inner chunks are
 * then read one by one), and shard bytes kept by all arrays together, and
 * whole-shard reads in flight (what each reserved: twice the size of the
 * last shard of its array read whole, at first 1 MiB, at most
 * ZF_SHARD_WHOLE_MAX; a larger shard fails that read, costing a request, and
 * is read by spans), and spans kept or in flight (at most ZF_SHARDIDX_SPANS
 * per array, each of at most ZF_SHARD_WHOLE_MAX bytes, reserved before it
 * is read), at most the budget given to zf_shardidx_new (a quarter of
 * cache_size: array.c); without room a shard is read by ranges, one inner
 * chunk each.
 * Thread-safe. */
#ifndef ZF_SHARDIDX_H
#define ZF_SHARDIDX_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define ZF_SHARDIDX_SLOTS 64
#define ZF_SHARDIDX_MAX_BYTES ((size_t)256 << 10)
#define ZF_SHARD_WHOLE_MAX ((size_t)8 << 20)
#define ZF_SHARDIDX_SPANS 8
#define ZF_SPAN_GAP ((uint64_t)64 << 10)

typedef struct zf_shardidx zf_shardidx;

/* A new, empty cache whose shard bytes, with every other cache's, stay
 * within budget bytes; NULL if out of memory. */
zf_shardidx *zf_shardidx_new(size_t budget);

/* Free it; NULL is allowed. */
void zf_shardidx_free(zf_shardidx *c);

/* Entry pos (offset, length) of the index of stored chunk k, and the shard's
 * stamp when it was read; 1 if cached (st->kind ZF_STORE_ABSENT, off and len
 * untouched: the shard is known to be absent), else 0.  Single flight: while
 * one caller reads a shard, others asking for it wait (at most until their
 * thread's request deadline, base/deadline.h: then a miss, not claimed); on
 * a miss *claimed says whether this caller is that one, and must then call
 * zf_shardidx_put (with idx NULL if it could not read the index). */
int zf_shardidx_get(zf_shardidx *c, uint64_t k, uint64_t pos, uint64_t *off, uint64_t *len,
                    zf_stamp *st, int *claimed);

/* Reserve n (at most ZF_SHARD_WHOLE_MAX) bytes of the budget for a
 * whole-shard read of at most n bytes about to start: 1 if they fit
 * (zf_shardidx_put with its data, or zf_shardidx_unreserve, ends the
 * reservation), else 0. */
int zf_shardidx_reserve(const zf_shardidx *c, size_t n);

/* End a reservation of n bytes whose read brought no data to put. */
void zf_shardidx_unreserve(size_t n);

/* End a claimed read of stored chunk k: keep idx (2 * count values, read
 * from version st; copied, unless NULL, too large or out of memory) and the
 * shard's bytes data[0..n) (malloc'd, read under a reservation of reserved
 * bytes that this ends; ownership passes here: kept with the index, else
 * freed; may be NULL), or with idx NULL and st absent, that the
 * shard is absent; wake the callers waiting for it.  No effect (data freed)
 * on a slot not claimed for k. */
void zf_shardidx_put(zf_shardidx *c, uint64_t k, const uint64_t *idx, uint64_t count,
                     const zf_stamp *st, uint8_t *data, size_t n, size_t reserved);

/* A span of a shard a caller is to read (zf_shardidx_fetch): bytes
 * [off, off + len); slot -1 when there is none. */
typedef struct zf_span_claim {
    uint64_t off;
    size_t len;
    int slot;
} zf_span_claim;

/* Copy bytes [off, off + len) of stored chunk k, version st (lying in the
 * outermost inner chunk at position pos, C order), into buf: 1 if they are
 * kept (the whole shard, or a span read for a neighbour: no request needed).
 * Waits while a span holding them is read by another caller (single flight,
 * at most until the thread's request deadline).  Else 0 and, if claim->slot
 * is not -1, the caller is to read claim's span (that inner chunk and the
 * following stored ones: see the header) and end the claim with
 * zf_shardidx_put_span; else it reads just its range. */
int zf_shardidx_fetch(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t pos,
                      uint64_t off, size_t len, uint8_t *buf, zf_span_claim *claim);

/* End a claimed span read: keep data (claim->len malloc'd bytes; ownership
 * passes here) and copy the caller's bytes [off, off + len) from it into
 * buf, or with data NULL (the read failed) release its reservation; wake
 * the callers waiting for it. */
void zf_shardidx_put_span(zf_shardidx *c, const zf_span_claim *claim, uint8_t *data,
                          uint64_t off, size_t len, uint8_t *buf);

#endif
