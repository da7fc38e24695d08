/* array_shard.c - one inner chunk of a shard, read by itself (arrays whose
 * inner chunks are read one by one: zf_pipeline_partial): the shard's
 * version, the entry of its index and of the index of each shard nested in
 * it, each index read and checked once per version of the shard through the
 * kept indexes (shardidx.h), and the inner chunk's bytes (from the shard's
 * bytes kept, when they are: a small shard is read whole). */
#include "array_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* byte range of one (inner) chunk inside a shard file */
typedef struct range {
    uint64_t off, len;
} range;

/* where the read chunk starting at element origin lies: stored chunk k at
 * key (version st; its outermost inner chunk at pos).  unchecked: st is
 * the version kept (a local store), not yet confirmed by a stat: bytes kept
 * of it serve, the file is read only once a stat finds it still that
 * version, else stale is set (the read is tried again from a stat) */
typedef struct inner_at {
    const char *key;
    uint64_t k, pos;
    const uint64_t *origin;
    zf_stamp st;
    int unchecked, stale;
} inner_at;

/* the result of a ranged read of a stored chunk (shard) just seen present
 * (stamped, or its index kept): absent now, it was deleted since, a change
 * of the store, never the fill value */
static int read_seen(int rc, char *err, size_t errcap)
{
    if (rc != ZF_ENOTFOUND)
        return rc;
    snprintf(err, errcap, "deleted since it was seen; remount or reopen to see it");
    return ZF_ESTALE;
}

/* the stamp of w's shard now into *st (size, version); a stamp that makes
 * no sense says nothing of the shard's bytes: ZF_EIO */
static int stamp_shard(const zf_array *a, const inner_at *w, zf_stamp *st, char *err,
                       size_t errcap)
{
    int rc = zf_store_stamp_why(a->store, w->key, st, err, errcap);
    return rc == ZF_ECORRUPT ? ZF_EIO : rc;
}

/* is the local shard of w still the version w has (w->unchecked: not
 * known yet)?  ZF_ESTALE, and w->stale set, if not */
static int confirm_version(zf_array *a, inner_at *w, char *err, size_t errcap)
{
    zf_stamp now;
    int rc = w->unchecked ? stamp_shard(a, w, &now, err, errcap) : ZF_OK;
    if (rc == ZF_OK && w->unchecked && !zf_stamp_same_version(&now, &w->st)) {
        snprintf(err, errcap, "rewritten while it was read");
        w->stale = 1;
        rc = ZF_ESTALE;
    }
    w->unchecked = rc != ZF_OK;
    return rc;
}

/* bytes r of w's shard into buf: from its bytes kept (the whole shard, or
 * a span read for a neighbour), else with the inner chunks that follow them
 * in one read (a span, kept for those: shardidx.h), else alone */
static int read_bytes(zf_array *a, inner_at *w, range r, uint8_t *buf, char *err, size_t errcap)
{
    zf_span_claim claim = {0, 0, -1};
    if (zf_shardidx_fetch(a->shards, w->k, &w->st, w->pos, r.off, (size_t)r.len, buf, &claim))
        return ZF_OK;
    int rc = confirm_version(a, w, err, errcap); /* the file is read: still that version? */
    if (rc || claim.slot < 0) {
        if (claim.slot >= 0) /* (not read: the waiting readers read their own ranges) */
            zf_shardidx_put_span(a->shards, &claim, NULL, r.off, (size_t)r.len, buf);
        return rc ? rc : read_seen(zf_store_read_range(a->store, w->key, r.off, (size_t)r.len,
                                                       buf, err, errcap), err, errcap);
    }
    uint8_t *span = malloc(claim.len); /* reserved by the claim */
    rc = span ? read_seen(zf_store_read_range(a->store, w->key, claim.off, claim.len, span, err,
                                              errcap), err, errcap)
              : ZF_ENOMEM;
    if (rc) {
        free(span);
        span = NULL;
    }
    zf_shardidx_put_span(a->shards, &claim, span, r.off, (size_t)r.len, buf); /* ends the claim */
    return rc;
}

/* can the index of a shard of pipeline p be kept?  Else why not, in err */
static int index_fits(const zf_array *a, const zf_pipeline *p, char *err, size_t errcap)
{
    uint64_t count = zf_pipeline_inner_count(p);
    if (zf_shardidx_fits(a->shards, count))
        return ZF_OK;
    snprintf(err, errcap, "its index of %llu inner chunks is larger than the shard index cache "
             "(a quarter of cache_size, at least 4 MiB) can hold", (unsigned long long)count);
    return ZF_EUNSUPPORTED;
}

/* decode and check (zf_pipeline_decode_index) the index of a shard of n
 * bytes, of pipeline p, whose index bytes are at in, into a new array *idx */
static int decode_index(const zf_pipeline *p, const uint8_t *in, uint64_t n, uint64_t **idx,
                        char *err, size_t errcap)
{
    uint64_t *out = malloc(2 * zf_pipeline_inner_count(p) * sizeof *out);
    if (!out) {
        snprintf(err, errcap, "out of memory");
        return ZF_ENOMEM;
    }
    int rc = zf_pipeline_decode_index(p, in, n, out, err, errcap);
    if (rc) {
        free(out);
        return rc;
    }
    *idx = out;
    return ZF_OK;
}

/* read, decode and check the index of the shard (of pipeline p) occupying
 * bytes r of w's stored chunk into a new array *idx; *verdict says whether
 * a failure is the index's (its bytes are damaged), not the store's */
static int read_index(zf_array *a, inner_at *w, const zf_pipeline *p, range r,
                      uint64_t **idx, int *verdict, char *err, size_t errcap)
{
    int at_start, rc = index_fits(a, p, err, errcap);
    size_t ib = zf_pipeline_index_bytes(p, &at_start);
    *verdict = 0;
    if (rc)
        return rc;
    if (ib > r.len) {
        snprintf(err, errcap, "shard of %llu bytes is smaller than its index (%zu bytes)",
                 (unsigned long long)r.len, ib);
        *verdict = 1;
        return ZF_ECORRUPT;
    }
    uint8_t *raw = malloc(ib);
    if (!raw)
        return ZF_ENOMEM;
    range at = {at_start ? r.off : r.off + r.len - ib, ib};
    rc = read_bytes(a, w, at, raw, err, errcap);
    if (rc == ZF_OK) {
        rc = decode_index(p, raw, r.len, idx, err, errcap);
        *verdict = rc == ZF_ECORRUPT;
    }
    free(raw);
    return rc;
}

/* narrow r from a shard to the inner chunk of entry ent (offset, length);
 * ZF_ENOTFOUND if it is empty */
static int select_inner(const uint64_t *ent, range *r, char *err, size_t errcap)
{
    uint64_t off = ent[0], len = ent[1];
    if (off == UINT64_MAX && len == UINT64_MAX)
        return ZF_ENOTFOUND;
    if (off > r->len || len > r->len - off) { /* (the index was checked: cannot be) */
        snprintf(err, errcap, "a shard index entry points outside the shard");
        return ZF_ECORRUPT;
    }
    r->off += off;
    r->len = len;
    return ZF_OK;
}

/* the entry of position at_pos in the index of shard `at` (pipeline p,
 * bytes r of w's stored chunk) into ent: kept for w's version, else read,
 * checked and kept for the next caller (claimed: this caller holds the
 * claim already) */
static int index_entry(zf_array *a, inner_at *w, zf_shard_at at, const zf_pipeline *p,
                       range r, uint64_t at_pos, int claimed, uint64_t *ent, char *err,
                       size_t errcap)
{
    if (!claimed) {
        zf_stamp kept;
        int whole;
        int res = zf_shardidx_get(a->shards, at, at_pos, &w->st, ent, &kept, err, errcap,
                                  &claimed, &whole);
        if (res == ZF_SHARD_HIT)
            return ZF_OK;
        if (res == ZF_SHARD_DAMAGED)
            return ZF_ECORRUPT;
    }
    uint64_t *idx = NULL;
    int verdict;
    int rc = read_index(a, w, p, r, &idx, &verdict, err, errcap);
    if (rc == ZF_OK) {
        ent[0] = idx[2 * at_pos];
        ent[1] = idx[2 * at_pos + 1];
    }
    if (claimed) /* the index, or the verdict on it; else nothing: the waiters read it */
        zf_shardidx_put(a->shards, at, idx, zf_pipeline_inner_count(p),
                        rc == ZF_OK || verdict ? &w->st : NULL, verdict ? err : NULL, NULL, 0, 0);
    else
        free(idx);
    return rc;
}

/* position (C order) of the inner chunk holding element e of a shard */
static uint64_t inner_position(unsigned ndim, const uint64_t *e, const uint64_t *shard,
                               const uint64_t *inner)
{
    uint64_t k = 0;
    for (unsigned d = 0; d < ndim; d++)
        k = k * (shard[d] / inner[d]) + e[d] / inner[d];
    return k;
}

/* position of the outermost inner chunk holding element origin in its shard */
static uint64_t outer_position(const zf_array *a, const uint64_t *origin)
{
    const uint64_t *inner;
    uint64_t e[ZF_MAX_DIMS];
    for (unsigned d = 0; d < a->meta.ndim; d++)
        e[d] = origin[d] % a->meta.chunks[d];
    zf_pipeline_inner(a->meta.pipeline, &inner);
    return inner_position(a->meta.ndim, e, a->meta.chunks, inner);
}

/* walk the shard levels down to the innermost chunk holding w's element,
 * narrowing r (the stored chunk) to it, *pp its pipeline; ent0: the
 * outermost entry at w->pos, if known, else its index is read (claimed:
 * this caller holds the claim for it) */
static int locate_inner(zf_array *a, inner_at *w, const uint64_t *ent0, int claimed,
                        range *r, const zf_pipeline **pp, char *err, size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline, *next;
    const uint64_t *shard = a->meta.chunks, *inner;
    uint64_t e[ZF_MAX_DIMS];
    for (unsigned d = 0; d < a->meta.ndim; d++)
        e[d] = w->origin[d] % shard[d];
    for (unsigned level = 0; zf_pipeline_partial(p) && (next = zf_pipeline_inner(p, &inner));
         level++) {
        uint64_t ent[2], at_pos = inner_position(a->meta.ndim, e, shard, inner);
        int rc = ZF_OK;
        if (level == 0 && ent0)
            memcpy(ent, ent0, sizeof ent);
        else
            rc = index_entry(a, w, (zf_shard_at){w->k, level ? r->off : 0, level}, p, *r, at_pos,
                             level == 0 && claimed, ent, err, errcap);
        if (rc == ZF_OK)
            rc = select_inner(ent, r, err, errcap);
        if (rc)
            return rc;
        for (unsigned d = 0; d < a->meta.ndim; d++)
            e[d] %= inner[d];
        shard = inner;
        p = next;
    }
    *pp = p;
    return ZF_OK;
}

/* read the whole shard of w (at most `most` bytes, reserved) in one
 * request, its stamp into w->st, and keep it with its index for the inner
 * chunks (this caller holds the claim for its index: ended here when
 * something is kept); the outermost entry at w->pos into ent.
 * ZF_EUNSUPPORTED if it is larger (then read by ranges); a damaged index is
 * ZF_ECORRUPT with *damaged set (kept as that verdict); else as a read */
static int read_whole_shard(zf_array *a, inner_at *w, size_t most, uint64_t *ent, int *damaged,
                            char *err, size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline;
    zf_store_buf b = {NULL, 0};
    size_t n = 0;
    uint64_t *idx = NULL;
    int at_start, rc = index_fits(a, p, err, errcap);
    size_t ib = zf_pipeline_index_bytes(p, &at_start);
    if (rc == ZF_OK)
        rc = zf_store_read(a->store, w->key, most, &b, &n, &w->st, err, errcap);
    if (rc == ZF_ECORRUPT) { /* larger than reserved (or cut short): by ranges */
        rc = ZF_EUNSUPPORTED;
        if (most == ZF_SHARD_WHOLE_MAX) /* shards too large to read whole */
            __atomic_store_n(&a->whole_off, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&a->whole_hint, ZF_SHARD_WHOLE_MAX, __ATOMIC_RELAXED);
    } else if (rc == ZF_OK) { /* the next read reserves twice the largest seen */
        size_t hint = n < ZF_SHARD_WHOLE_MAX / 2 ? 2 * n + 4096 : ZF_SHARD_WHOLE_MAX;
        hint = hint < ZF_SHARD_WHOLE_MAX ? hint : ZF_SHARD_WHOLE_MAX;
        __atomic_store_n(&a->whole_hint, hint, __ATOMIC_RELAXED);
    }
    if (rc == ZF_OK && w->st.size != n) { /* decoded (net.h): inner chunks are read by ranges */
        snprintf(err, errcap, "stored as %llu bytes with a content coding (%zu decoded); a "
                 "shard's inner chunks are read by byte ranges, which such a coding makes "
                 "meaningless", (unsigned long long)w->st.size, n);
        rc = ZF_ECORRUPT;
    } else if (rc == ZF_OK) {
        const uint8_t *at = at_start || n < ib ? b.p : b.p + n - ib; /* (too short: refused) */
        rc = decode_index(p, at, n, &idx, err, errcap);
        *damaged = rc == ZF_ECORRUPT;
    }
    if (rc != ZF_OK && !*damaged) { /* the claim goes on: by ranges, or the caller ends it */
        zf_shardidx_unreserve(most);
        free(b.p);
        return rc;
    }
    if (rc == ZF_OK)
        memcpy(ent, idx + 2 * w->pos, 2 * sizeof *ent);
    else
        free(b.p);
    zf_shardidx_put(a->shards, (zf_shard_at){w->k, 0, 0}, idx, zf_pipeline_inner_count(p),
                    &w->st, *damaged ? err : NULL, rc == ZF_OK ? b.p : NULL, n, most);
    return rc;
}

/* the version of w's shard into w->st through what is kept: its outermost
 * entry at w->pos into ent (*have) or the verdict on its index (*damaged,
 * the reason in err); else the shard read whole (small shards: kept), or
 * its stamp (a local stat, a remote HEAD).  A local shard's kept version is
 * taken unchecked (read_bytes stats it before the file is read), or with
 * fresh stat'ed first.  *claimed: a claim on its index this caller holds
 * (on a failure, the caller ends it) */
static int shard_version(zf_array *a, inner_at *w, int fresh, uint64_t *ent, int *have,
                         int *damaged, int *claimed, char *err, size_t errcap)
{
    zf_shard_at at0 = {w->k, 0, 0};
    int whole, remote = a->store->remote;
    int res = zf_shardidx_get(a->shards, at0, w->pos, NULL, ent, &w->st, err, errcap, claimed,
                              &whole);
    w->unchecked = !remote && res != ZF_SHARD_MISS;
    if (w->unchecked && fresh) { /* kept for the shard as it was: still that version? */
        zf_stamp kept = w->st;
        int rc = stamp_shard(a, w, &w->st, err, errcap);
        w->unchecked = 0;
        if (rc || !zf_stamp_same_version(&kept, &w->st)) /* another version: read its index */
            return rc;
    }
    *damaged = res == ZF_SHARD_DAMAGED;
    *have = res == ZF_SHARD_HIT && w->st.kind != ZF_STORE_ABSENT;
    if (res != ZF_SHARD_MISS) /* (the version is checked first, then the verdict) */
        return res == ZF_SHARD_HIT && !*have ? ZF_ENOTFOUND : ZF_OK;
    size_t most = __atomic_load_n(&a->whole_hint, __ATOMIC_RELAXED);
    int rc = ZF_EUNSUPPORTED;
    if (*claimed && !__atomic_load_n(&a->whole_off, __ATOMIC_RELAXED) &&
        zf_shardidx_reserve(a->shards, most)) {
        rc = read_whole_shard(a, w, most, ent, damaged, err, errcap);
        *claimed = rc != ZF_OK && !*damaged; /* else ended, something kept */
        *have = rc == ZF_OK;
        if (*damaged)
            return ZF_OK;
    }
    if (rc != ZF_EUNSUPPORTED)
        return rc;
    return stamp_shard(a, w, &w->st, err, errcap);
}

/* zf_array_read_inner once; fresh: a local shard's kept version is stat'ed
 * first; *stale: it was another version by the time the file was read */
static int read_inner_once(zf_array *a, uint64_t index, const char *key, zf_store_buf *raw,
                           size_t *rawn, const zf_pipeline **pp, int fresh, int *stale,
                           char *err, size_t errcap)
{
    uint64_t origin[ZF_MAX_DIMS], ent[2];
    zf_array_chunk_origin(a, index, origin);
    inner_at w = {key, zf_array_stored_index(a, index), outer_position(a, origin), origin, {0},
                  0, 0};
    int have = 0, damaged = 0, claimed = 0;
    int rc = shard_version(a, &w, fresh, ent, &have, &damaged, &claimed, err, errcap);
    rc = zf_array_check_version(a, index, key, rc, &w.st, err, errcap);
    if (rc == ZF_OK && w.st.kind != ZF_STORE_FILE) {
        snprintf(err, errcap, "not a regular file");
        rc = ZF_ECORRUPT;
    }
    if (rc == ZF_OK && damaged) /* the verdict kept on its index (the reason in err) */
        rc = ZF_ECORRUPT;
    int absent = rc == ZF_ENOTFOUND && a->store->remote; /* and so at the snapshot: kept */
    if (rc && claimed) /* no index read: absent, or the waiting readers try themselves */
        zf_shardidx_put(a->shards, (zf_shard_at){w.k, 0, 0}, NULL, 0, absent ? &w.st : NULL, NULL,
                        NULL, 0, 0);
    range r = {0, w.st.size};
    if (rc == ZF_OK)
        rc = locate_inner(a, &w, have ? ent : NULL, claimed, &r, pp, err, errcap);
    *rawn = (size_t)r.len;
    if (rc == ZF_OK)
        rc = zf_store_buf_reserve(raw, *rawn);
    if (rc == ZF_OK)
        rc = read_bytes(a, &w, r, raw->p, err, errcap);
    *stale = w.stale;
    return rc;
}

int zf_array_read_inner(zf_array *a, uint64_t index, const char *key, zf_store_buf *raw,
                        size_t *rawn, const zf_pipeline **pp, char *err, size_t errcap)
{
    int stale = 0;
    int rc = read_inner_once(a, index, key, raw, rawn, pp, 0, &stale, err, errcap);
    if (stale) /* what was kept of a local shard is of another version now */
        rc = read_inner_once(a, index, key, raw, rawn, pp, 1, &stale, err, errcap);
    return rc;
}
