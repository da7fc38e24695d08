/* shardidx.h - the shard indexes every sharded array has read, and shards'
 * bytes: each index is read and checked once per version of its shard.
 *
 * An inner chunk is found through its shard's index (and, nested, through
 * the indexes of the shards within it); a sharded array of N inner chunks
 * per shard that read the index again for each would read N times the
 * index.  So every index read (zf_pipeline_decode_index: decoded and
 * checked) is kept with the stamp its shard had: the outermost index of
 * stored chunk k, and each nested shard's, keyed by its level and its byte
 * offset in the stored chunk (zf_shard_at).  A kept index serves only
 * callers of that version: a local store's reader stats the shard and
 * compares the stamp (zf_shardidx_get's now) unless the shard's bytes are
 * kept, a remote one takes the kept version (checked against the array's
 * snapshot by the caller) and saves the HEAD.  An index that failed its checks is kept as that verdict, with
 * its reason, so a damaged shard of N inner chunks is read and refused
 * once, not N times; a remote shard found absent (a 404) is kept as such.
 * Concurrent readers of one index read it once (single flight).
 *
 * With the outermost index, an array also keeps the whole bytes of a shard
 * of at most ZF_SHARD_WHOLE_MAX bytes, read at once (one GET: then every
 * inner chunk of it costs no request, and on a local store no system call),
 * until each of its inner chunks was copied out; they serve the version
 * they were read from, whatever the shard is now.  A larger remote shard's
 * inner chunks are coalesced once its index is kept: the first one missing is
 * read with the stored inner chunks that follow it in the index (C order),
 * each starting at most ZF_SPAN_GAP bytes after the previous one ends, at
 * most ZF_SHARD_WHOLE_MAX bytes in all, in one ranged GET (a span); those
 * that follow are then copied from the span without a request, and it is
 * freed once each of its inner chunks was copied out (or replaced by a
 * newer span).  A span carries the version of the index it was planned from
 * and serves only callers of that version.
 *
 * Memory: the indexes every array keeps (16 bytes per inner chunk, and
 * their entries) stay within the budget of the array that adds one (a
 * quarter of cache_size: array.c), at least ZF_SHARDIDX_INDEX_MIN, so that
 * a tiny cache still reads a shard's index once; the least recently used
 * go first.  An index larger than that is never read (zf_shardidx_fits).
 * Shards' bytes kept (whole shards, spans) and the reads of them in flight
 * stay within another such budget (no minimum): a whole-shard read reserves
 * twice the size of the last shard of its array read whole, at first
 * 1 MiB, at most ZF_SHARD_WHOLE_MAX (a larger shard fails that read,
 * costing a request, and is read by spans), spans, at most
 * ZF_SHARDIDX_SPANS per array, are reserved before they are read, and to
 * make room only shards' bytes no one copied from for a second are freed;
 * without room a shard's inner chunks are read by ranges, one each.
 * Thread-safe. */
#ifndef ZF_SHARDIDX_H
#define ZF_SHARDIDX_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define ZF_SHARD_WHOLE_MAX ((size_t)8 << 20)
#define ZF_SHARDIDX_INDEX_MIN ((size_t)4 << 20)
#define ZF_SHARDIDX_SPANS 8
#define ZF_SPAN_GAP ((uint64_t)64 << 10)

/* One array's part of the kept indexes. */
typedef struct zf_shardidx zf_shardidx;

/* Which shard's index: stored chunk k itself (level 0, off 0), or the shard
 * nested `level` levels down in it that starts at byte off of it. */
typedef struct zf_shard_at {
    uint64_t k, off;
    unsigned level;
} zf_shard_at;

/* What zf_shardidx_get found. */
enum {
    ZF_SHARD_MISS = 0,    /* nothing kept for that version */
    ZF_SHARD_HIT = 1,     /* the index (or the shard's absence) */
    ZF_SHARD_DAMAGED = 2  /* the index was refused: the reason */
};

/* A new array's part, whose additions keep everything kept within budget
 * bytes; NULL if out of memory. */
zf_shardidx *zf_shardidx_new(size_t budget);

/* Free it and everything it keeps; NULL is allowed. */
void zf_shardidx_free(zf_shardidx *c);

/* Could an index of count entries be kept (within the budget, or
 * ZF_SHARDIDX_INDEX_MIN)? */
int zf_shardidx_fits(const zf_shardidx *c, uint64_t count);

/* Look up the index of shard `at`: ZF_SHARD_HIT with *st the stamp it was
 * read from and ent[0..1] its entry pos (offset, length), or st->kind
 * ZF_STORE_ABSENT (ent untouched) if the shard is known absent;
 * ZF_SHARD_DAMAGED with *st and the reason it was refused in err; else
 * ZF_SHARD_MISS.  *whole: the shard's bytes are kept with it (those of that
 * version: zf_shardidx_fetch).  now (may be NULL: any version kept) is the
 * shard's stamp: what was kept of another version is not used.  Single
 * flight: while one caller reads an index, others asking for it wait (at
 * most until their thread's request deadline, base/deadline.h: then a miss,
 * not claimed); on a miss *claimed says whether this caller is that one,
 * and must then end the claim with zf_shardidx_put. */
int zf_shardidx_get(zf_shardidx *c, zf_shard_at at, uint64_t pos, const zf_stamp *now,
                    uint64_t *ent, zf_stamp *st, char *err, size_t errcap, int *claimed,
                    int *whole);

/* Reserve n (at most ZF_SHARD_WHOLE_MAX) bytes of the budget for a
 * whole-shard read of at most n bytes about to start: 1 if they fit
 * (zf_shardidx_put, or zf_shardidx_unreserve, ends the reservation), else 0. */
int zf_shardidx_reserve(const zf_shardidx *c, size_t n);

/* End a reservation of n bytes whose read brought no data to put. */
void zf_shardidx_unreserve(size_t n);

/* End a claimed read of shard `at`, read from version st: keep idx (2 *
 * count values, malloc'd: ownership passes here), or the verdict damage
 * (the reason its index was refused; copied), or, with both NULL and st
 * absent, that the shard is absent; with st NULL nothing is kept (the
 * waiting callers read it themselves).  data[0..n) (malloc'd, ownership
 * passes here; may be NULL) is the whole shard, read under a reservation of
 * reserved bytes that this ends: kept with its index, else freed.  Wakes the
 * callers waiting for it. */
void zf_shardidx_put(zf_shardidx *c, zf_shard_at at, uint64_t *idx, uint64_t count,
                     const zf_stamp *st, const char *damage, uint8_t *data, size_t n,
                     size_t reserved);

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
 * at most until the thread's request deadline).  Else 0 and, if claim
 * (NULL: no spans, a local store) and claim->slot is not -1, the caller is
 * to read claim's span (that inner chunk and the following stored ones: see
 * the header) and end the claim with zf_shardidx_put_span; else it reads
 * just its range. */
int zf_shardidx_fetch(zf_shardidx *c, uint64_t k, const zf_stamp *st, uint64_t pos,
                      uint64_t off, size_t len, uint8_t *buf, zf_span_claim *claim);

/* End a claimed span read: keep data (claim->len malloc'd bytes; ownership
 * passes here) and copy the caller's bytes [off, off + len) from it into
 * buf, or with data NULL (the read failed) release its reservation; wake
 * the callers waiting for it. */
void zf_shardidx_put_span(zf_shardidx *c, const zf_span_claim *claim, uint8_t *data,
                          uint64_t off, size_t len, uint8_t *buf);

#endif
