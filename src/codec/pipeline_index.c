/* pipeline_index.c - a shard's index (sharding_indexed), decoded and checked
 * against the shard before any inner chunk is located with it.
 *
 * The checks bound the work a shard can cost: every entry lies in the
 * shard's chunk bytes (not in its index), is no larger than the largest
 * encoding of an inner chunk, and no two entries share a byte, so decoding
 * every inner chunk of a shard reads each of its stored bytes at most once. */
#include "codec/pipeline.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "pipeline_impl.h"

/* one stored inner chunk: its bytes [off, off + len) */
typedef struct extent {
    uint64_t off, len;
} extent;

static int by_offset(const void *x, const void *y)
{
    const extent *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* do two of the n stored extents at e (any order; sorted here) share a byte?
 * The byte where they meet into *at */
static int extents_overlap(extent *e, uint64_t n, uint64_t *at)
{
    qsort(e, (size_t)n, sizeof *e, by_offset);
    for (uint64_t i = 1; i < n; i++)
        if (e[i].off < e[i - 1].off + e[i - 1].len) {
            *at = e[i].off;
            return 1;
        }
    return 0;
}

/* entry k, not empty, lies in the chunk bytes [lo, hi) and is no larger than
 * most bytes?  Else the reason in err */
static int entry_fits(uint64_t k, uint64_t off, uint64_t len, uint64_t lo, uint64_t hi,
                      size_t most, char *err, size_t errcap)
{
    if (off < lo || off > hi || len > hi - off) {
        snprintf(err, errcap, "shard index entry %llu (%llu bytes at %llu) lies outside the "
                 "shard's chunk bytes %llu..%llu", (unsigned long long)k, (unsigned long long)len,
                 (unsigned long long)off, (unsigned long long)lo, (unsigned long long)hi);
        return 0;
    }
    if (len > most) {
        snprintf(err, errcap, "shard index entry %llu: %llu bytes, more than any encoding of an "
                 "inner chunk (%zu)", (unsigned long long)k, (unsigned long long)len, most);
        return 0;
    }
    return 1;
}

/* the checks of the header on a decoded index of a shard of n bytes */
static int check_index(const zf_pipeline *p, const uint64_t *idx, uint64_t n, char *err,
                       size_t errcap)
{
    uint64_t lo = p->index_at_start ? p->index_bytes : 0;
    uint64_t hi = p->index_at_start ? n : n - p->index_bytes;
    size_t most = p->inner ? zf_pipeline_max_encoded(p->inner) : SIZE_MAX; /* a frame: the
                                                        caller's inner chunks (strings) */
    uint64_t end = 0, stored = 0;
    int in_order = 1; /* entries in position order do not go back: no overlap */
    for (uint64_t k = 0; k < p->inner_count; k++) {
        uint64_t off = idx[2 * k], len = idx[2 * k + 1];
        if (off == UINT64_MAX && len == UINT64_MAX)
            continue; /* an empty inner chunk */
        if (!entry_fits(k, off, len, lo, hi, most, err, errcap))
            return ZF_ECORRUPT;
        if (len == 0)
            continue; /* no byte to share */
        in_order &= off >= end;
        end = off + len;
        stored++;
    }
    if (in_order)
        return ZF_OK;
    extent *e = malloc((size_t)stored * sizeof *e);
    if (!e) {
        snprintf(err, errcap, "out of memory");
        return ZF_ENOMEM;
    }
    uint64_t i = 0, at = 0;
    for (uint64_t k = 0; k < p->inner_count; k++)
        if (idx[2 * k] != UINT64_MAX && idx[2 * k + 1] != 0)
            e[i++] = (extent){idx[2 * k], idx[2 * k + 1]};
    int overlap = extents_overlap(e, stored, &at);
    free(e);
    if (overlap) {
        snprintf(err, errcap, "shard index entries overlap at byte %llu", (unsigned long long)at);
        return ZF_ECORRUPT;
    }
    return ZF_OK;
}

int zf_pipeline_decode_index(const zf_pipeline *p, const uint8_t *in, uint64_t shard_bytes,
                             uint64_t *out, char *err, size_t errcap)
{
    if (shard_bytes < p->index_bytes) {
        snprintf(err, errcap, "shard of %llu bytes is smaller than its index (%zu bytes)",
                 (unsigned long long)shard_bytes, p->index_bytes);
        return ZF_ECORRUPT;
    }
    int rc = zf_pipeline_decode(p->index, in, p->index_bytes, out, err, errcap);
    return rc ? rc : check_index(p, out, shard_bytes, err, errcap);
}
