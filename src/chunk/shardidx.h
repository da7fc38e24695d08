/* shardidx.h - a bounded cache of shard indexes, for remote stores.
 *
 * Reading one inner chunk of a shard takes the shard's size and version (a
 * HEAD), its index (a ranged GET) and the inner chunk (another): three round
 * trips.  An array of a remote store keeps the outermost index of recently
 * read shards (or that a shard is absent: a store that cannot be listed
 * would answer 404 for each of its inner chunks), with the stamp the shard had when its index was read, so the
 * next inner chunk of that shard costs one ranged GET.  The version checked
 * against the array's snapshot is the cached one (a shard rewritten while
 * its index is cached shows as a damaged chunk, not as another version);
 * concurrent readers of one shard read its index once.
 * Memory: at most ZF_SHARDIDX_SLOTS indexes of at most ZF_SHARDIDX_MAX_BYTES
 * each (larger ones are not kept).  Thread-safe. */
#ifndef ZF_SHARDIDX_H
#define ZF_SHARDIDX_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define ZF_SHARDIDX_SLOTS 64
#define ZF_SHARDIDX_MAX_BYTES ((size_t)256 << 10)

typedef struct zf_shardidx zf_shardidx;

/* A new, empty cache; NULL if out of memory. */
zf_shardidx *zf_shardidx_new(void);

/* Free it; NULL is allowed. */
void zf_shardidx_free(zf_shardidx *c);

/* Entry pos (offset, length) of the index of stored chunk k, and the shard's
 * stamp when the index was read; 1 if cached (st->kind ZF_STORE_ABSENT, off
 * and len untouched: the shard is known to be absent), else 0.  Single flight: while
 * one caller reads a shard's index, others asking for it wait; on a miss
 * *claimed says whether this caller is that one, and must then call
 * zf_shardidx_put (with idx NULL if it could not read the index). */
int zf_shardidx_get(zf_shardidx *c, uint64_t k, uint64_t pos, uint64_t *off, uint64_t *len,
                    zf_stamp *st, int *claimed);

/* End a claimed load of stored chunk k's index: keep idx (2 * count values,
 * read from version st; copied, unless NULL, too large or out of memory), or
 * with idx NULL and st absent, that the shard is absent; wake the callers
 * waiting for it.  No effect on a slot not claimed for k. */
void zf_shardidx_put(zf_shardidx *c, uint64_t k, const uint64_t *idx, uint64_t count,
                     const zf_stamp *st);

#endif
