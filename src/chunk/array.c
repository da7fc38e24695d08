/* array.c - chunk keys, loading and decoding for one array (the stored
 * chunks present and the version check of each read: present.c; taking
 * the snapshot of them: snapshot.c). */
#include "array_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/deadline.h"
#include "base/err.h"
#include "base/log.h"
#include "chunk/convert.h"
#include "chunk/shardidx.h"

static uint64_t next_id(void)
{
    static uint64_t counter;
    return __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
}

zf_array *zf_array_new(const zf_store *store, const char *path, zf_meta *meta, zf_cache *cache)
{
    zf_array *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return NULL;
    }
    a->store = store;
    a->cache = cache;
    pthread_mutex_init(&a->mu, NULL);
    a->meta = *meta;
    memset(meta, 0, sizeof *meta);
    a->id = next_id();
    if (a->meta.cf.how != ZF_CF_NATIVE) /* the fill value as ticks, as every chunk */
        a->fill_rc = zf_convert_one(&a->meta.cf, a->meta.cf.fill_raw, &a->meta.fill, a->fill_err,
                                    sizeof a->fill_err);
    if (store->remote && zf_pipeline_partial(a->meta.pipeline))
        a->shards = zf_shardidx_new(zf_cache_capacity(cache) / 4); /* NULL: none kept */
    a->whole_hint = ZF_SHARD_WHOLE_MAX / 8; /* a larger shard raises it (read_whole_shard) */
    a->nchunks = 1;
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        a->grid[d] = (a->meta.shape[d] + a->meta.read_chunks[d] - 1) / a->meta.read_chunks[d];
        a->nchunks *= a->grid[d]; /* <= nelems (or 0), so no overflow */
    }
    return a;
}

void zf_array_free(zf_array *a)
{
    if (!a)
        return;
    zf_cache_cancel(a->cache, a->id); /* no background load may still use a */
    zf_meta_clear(&a->meta);
    zf_snap_free(a->snap);
    free(a->learned.v);
    zf_shardidx_free(a->shards);
    pthread_mutex_destroy(&a->mu);
    free(a->path);
    free(a);
}

const zf_meta *zf_array_meta(const zf_array *a)
{
    return &a->meta;
}

const zf_fp *zf_array_origin(const zf_array *a)
{
    return &a->origin;
}

const zf_store *zf_array_store(const zf_array *a)
{
    return a->store;
}

const char *zf_array_path(const zf_array *a)
{
    return a->path;
}

uint64_t zf_array_grid(const zf_array *a, unsigned d)
{
    return a->grid[d];
}

uint64_t zf_array_nchunks(const zf_array *a)
{
    return a->nchunks;
}

/* full store key of the stored chunk (or shard) holding read-grid chunk `index` */
static int chunk_store_key(const zf_array *a, uint64_t index, char *buf, size_t cap)
{
    uint64_t coords[ZF_MAX_DIMS];
    zf_array_chunk_origin(a, index, coords);
    for (unsigned d = 0; d < a->meta.ndim; d++)
        coords[d] /= a->meta.chunks[d];
    size_t len = 0;
    if (*a->path)
        len = (size_t)snprintf(buf, cap, "%s/", a->path);
    if (len >= cap)
        return ZF_EINVAL;
    return zf_meta_chunk_key(&a->meta, coords, buf + len, cap - len);
}

/* convert the stored CF elements of read chunk `index` at v into ticks (convert.h) */
static int convert_chunk(const zf_array *a, uint64_t index, int64_t *v, char *err, size_t errcap)
{
    uint64_t origin[ZF_MAX_DIMS], valid[ZF_MAX_DIMS];
    zf_array_chunk_origin(a, index, origin);
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        uint64_t left = a->meta.shape[d] - origin[d];
        valid[d] = left < a->meta.read_chunks[d] ? left : a->meta.read_chunks[d];
    }
    return zf_convert_chunk(&a->meta.cf, v, a->meta.ndim, a->meta.read_chunks, valid, err, errcap);
}

/* decode `raw` with pipeline p into buf (room for its chunk elements), or a
 * new array of them when buf is NULL; stored CF elements become ticks */
static int decode_chunk(const zf_array *a, uint64_t index, const zf_pipeline *p,
                        const uint8_t *raw, size_t rawn, int64_t *buf, zf_chunk *out, char *err,
                        size_t errcap)
{
    uint64_t elems = zf_pipeline_chunk_elems(p);
    int64_t *v = buf ? buf : zf_pool_alloc((size_t)elems * sizeof *v);
    if (!v)
        return ZF_ENOMEM;
    int rc = zf_pipeline_decode(p, raw, rawn, v, err, errcap);
    if (rc == ZF_OK && a->meta.cf.how != ZF_CF_NATIVE)
        rc = convert_chunk(a, index, v, err, errcap);
    if (rc) {
        if (v != buf)
            free(v);
        return rc;
    }
    out->values = v;
    out->n = elems;
    return ZF_OK;
}

/* byte range of one (inner) chunk inside a shard file */
typedef struct range {
    uint64_t off, len;
} range;

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

/* read and decode the index of the shard occupying r; *idx gets 2*count values */
static int read_index(const zf_array *a, const char *key, const zf_pipeline *p, range r,
                      uint64_t **idx, char *err, size_t errcap)
{
    int at_start;
    size_t ib = zf_pipeline_index_bytes(p, &at_start);
    if (ib > r.len) {
        snprintf(err, errcap, "shard of %llu bytes is smaller than its index (%zu bytes)",
                 (unsigned long long)r.len, ib);
        return ZF_ECORRUPT;
    }
    uint8_t *raw = malloc(ib);
    uint64_t *out = malloc(2 * zf_pipeline_inner_count(p) * sizeof *out);
    int rc = raw && out ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = read_seen(zf_store_read_range(a->store, key, at_start ? r.off : r.off + r.len - ib,
                                           ib, raw, err, errcap), err, errcap);
    if (rc == ZF_OK)
        rc = zf_pipeline_decode_index(p, raw, ib, out, err, errcap);
    free(raw);
    if (rc) {
        free(out);
        return rc;
    }
    *idx = out;
    return ZF_OK;
}

/* narrow r from a shard to inner chunk k of it; ZF_ENOTFOUND if it is empty */
static int select_inner(const uint64_t *idx, uint64_t k, range *r, char *err, size_t errcap)
{
    uint64_t off = idx[2 * k], len = idx[2 * k + 1];
    if (off == UINT64_MAX && len == UINT64_MAX)
        return ZF_ENOTFOUND;
    if (off > r->len || len > r->len - off) {
        snprintf(err, errcap, "shard index entry %llu points outside the shard", (unsigned long long)k);
        return ZF_ECORRUPT;
    }
    r->off += off;
    r->len = len;
    return ZF_OK;
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

/* walk the shard levels down to the innermost chunk holding element origin;
 * cached: r is already the outermost level's inner chunk (shardidx.h).  The
 * outermost index read (stored chunk k, version st) is kept for the next. */
static int locate_inner(const zf_array *a, const char *key, uint64_t k, const zf_stamp *st,
                        int cached, uint64_t *origin, range *r, const zf_pipeline **pp, char *err,
                        size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline;
    const uint64_t *shard = a->meta.chunks, *inner;
    uint64_t e[ZF_MAX_DIMS];
    for (unsigned d = 0; d < a->meta.ndim; d++)
        e[d] = origin[d] % shard[d];
    const zf_pipeline *next;
    for (int level = 0; zf_pipeline_partial(p) && (next = zf_pipeline_inner(p, &inner)); level++) {
        uint64_t *idx = NULL;
        int rc = level == 0 && cached ? ZF_OK : read_index(a, key, p, *r, &idx, err, errcap);
        if (level == 0 && a->shards && !cached) /* (claimed by the caller: ends the claim) */
            zf_shardidx_put(a->shards, k, idx, zf_pipeline_inner_count(p), st, NULL, 0, 0);
        if (rc == ZF_OK && idx)
            rc = select_inner(idx, inner_position(a->meta.ndim, e, shard, inner), r, err, errcap);
        free(idx);
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

/* read the whole shard at key (at most `most` bytes, reserved; st its
 * stamp) in one request and keep it with its index for the inner chunks
 * (shardidx.h); the outermost index entry of position pos into ent.
 * ZF_EUNSUPPORTED if it is larger (then read by ranges), else as a read. */
static int read_whole_shard(zf_array *a, const char *key, uint64_t k, uint64_t pos, size_t most,
                            zf_stamp *st, uint64_t *ent, char *err, size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline;
    zf_store_buf b = {NULL, 0};
    size_t n = 0, count = (size_t)zf_pipeline_inner_count(p);
    int at_start, rc = zf_store_read(a->store, key, most, &b, &n, st, err, errcap);
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
    size_t ib = zf_pipeline_index_bytes(p, &at_start);
    if (rc == ZF_OK && st->size != n) { /* decoded (net.h): its inner chunks are read by ranges */
        snprintf(err, errcap, "stored as %llu bytes with a content coding (%zu decoded); a "
                 "shard's inner chunks are read by byte ranges, which such a coding makes "
                 "meaningless", (unsigned long long)st->size, n);
        rc = ZF_ECORRUPT;
    }
    if (rc == ZF_OK && ib > n) {
        snprintf(err, errcap, "shard of %zu bytes is smaller than its index (%zu bytes)", n, ib);
        rc = ZF_ECORRUPT;
    }
    uint64_t *idx = rc == ZF_OK ? malloc(2 * count * sizeof *idx) : NULL;
    if (rc == ZF_OK && !idx)
        rc = ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = zf_pipeline_decode_index(p, b.p + (at_start ? 0 : n - ib), ib, idx, err, errcap);
    if (rc == ZF_OK && pos < count) {
        ent[0] = idx[2 * pos];
        ent[1] = idx[2 * pos + 1];
        zf_shardidx_put(a->shards, k, idx, count, st, b.p, n, most); /* ends claim, reservation */
        b.p = NULL;
    } else {
        zf_shardidx_unreserve(most);
        rc = rc ? rc : ZF_ECORRUPT;
    }
    free(idx);
    free(b.p);
    return rc;
}

/* read bytes r of shard k (at key, version st), lying in its outermost
 * inner chunk at position pos, into buf: from the bytes kept of the shard,
 * else with the inner chunks that follow it in one ranged GET (a span,
 * kept for them: shardidx.h), else alone */
static int read_inner(zf_array *a, const char *key, uint64_t k, uint64_t pos,
                      const zf_stamp *st, range r, uint8_t *buf, char *err, size_t errcap)
{
    zf_span_claim claim = {0, 0, -1};
    if (a->shards && zf_shardidx_fetch(a->shards, k, st, pos, r.off, (size_t)r.len, buf, &claim))
        return ZF_OK;
    if (claim.slot < 0)
        return read_seen(zf_store_read_range(a->store, key, r.off, (size_t)r.len, buf, err, errcap),
                         err, errcap);
    uint8_t *span = malloc(claim.len); /* reserved by the claim */
    int rc = span ? read_seen(zf_store_read_range(a->store, key, claim.off, claim.len, span, err,
                                                  errcap), err, errcap)
                  : ZF_ENOMEM;
    if (rc) {
        free(span);
        span = NULL;
    }
    zf_shardidx_put_span(a->shards, &claim, span, r.off, (size_t)r.len, buf); /* ends the claim */
    return rc;
}

/* read (part of) the stored value at key into raw and decode it; the
 * version read is checked against the snapshot (zf_array_check_version) */
static int load_stored(zf_array *a, uint64_t index, const char *key, int64_t *buf,
                       zf_store_buf *raw, zf_chunk *out, char *err, size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline;
    size_t rawn = 0;
    zf_stamp st;
    int rc;
    if (!zf_pipeline_partial(p)) { /* one request: the read returns its stamp */
        rc = zf_store_read(a->store, key, zf_pipeline_max_encoded(p), raw, &rawn, &st, err, errcap);
        rc = zf_array_check_version(a, index, key, rc, &st, err, errcap);
    } else {
        uint64_t origin[ZF_MAX_DIMS], k = zf_array_stored_index(a, index), ent[2];
        zf_array_chunk_origin(a, index, origin);
        uint64_t pos = outer_position(a, origin);
        int claimed = 0, cached = a->shards && zf_shardidx_get(a->shards, k, pos, &ent[0], &ent[1],
                                                               &st, &claimed);
        size_t most = __atomic_load_n(&a->whole_hint, __ATOMIC_RELAXED);
        int whole = claimed && !__atomic_load_n(&a->whole_off, __ATOMIC_RELAXED) &&
                    zf_shardidx_reserve(a->shards, most); /* else by ranges */
        rc = ZF_EUNSUPPORTED;
        if (whole && (rc = read_whole_shard(a, key, k, pos, most, &st, ent, err, errcap)) == ZF_OK)
            cached = 1, claimed = 0; /* kept, with its index: as if it had been */
        if (rc == ZF_EUNSUPPORTED)
            rc = cached ? ZF_OK : zf_store_stamp_why(a->store, key, &st, err, errcap); /* size, version */
        if (rc == ZF_ECORRUPT) /* a HEAD that makes no sense says nothing of the shard's bytes */
            rc = ZF_EIO;
        if (cached && st.kind == ZF_STORE_ABSENT)
            rc = ZF_ENOTFOUND;
        rc = zf_array_check_version(a, index, key, rc, &st, err, errcap);
        int absent = rc == ZF_ENOTFOUND; /* and so at the snapshot: kept (a change is not) */
        if (rc == ZF_OK && st.kind != ZF_STORE_FILE) {
            snprintf(err, errcap, "not a regular file");
            rc = ZF_ECORRUPT;
        }
        range r = {0, st.size};
        if (rc == ZF_OK && cached) /* the outermost index entry, checked as if read */
            rc = select_inner(ent, 0, &r, err, errcap);
        if (rc == ZF_OK)
            rc = locate_inner(a, key, k, &st, cached, origin, &r, &p, err, errcap);
        else if (claimed) /* no index read: absent, or the waiting readers try themselves */
            zf_shardidx_put(a->shards, k, NULL, 0, absent ? &st : NULL, NULL, 0, 0);
        if (rc == ZF_OK && r.len > zf_pipeline_max_encoded(p)) {
            snprintf(err, errcap, "inner chunk of %llu bytes is larger than any valid encoding",
                     (unsigned long long)r.len);
            rc = ZF_ECORRUPT;
        }
        rawn = (size_t)r.len;
        if (rc == ZF_OK)
            rc = zf_store_buf_reserve(raw, rawn);
        if (rc == ZF_OK)
            rc = read_inner(a, key, k, pos, &st, r, raw->p, err, errcap);
    }
    if (rc == ZF_OK)
        rc = decode_chunk(a, index, p, raw->p, rawn, buf, out, err, errcap);
    return rc;
}

uint64_t zf_array_chunk_elems(const zf_array *a)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < a->meta.ndim; d++)
        n *= a->meta.read_chunks[d];
    return n;
}

/* should the failure of read chunk index be logged?  Always for a local
 * store; for a remote one, unless its stored chunk's failure was logged
 * within ZF_TOLD_QUIET_MS (array_impl.h) */
static int first_report(zf_array *a, uint64_t index)
{
    if (!a->store->remote)
        return 1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    uint64_t k = zf_array_stored_index(a, index) + 1;
    int first = 1;
    pthread_mutex_lock(&a->mu);
    for (unsigned i = 0; first && i < ZF_TOLD_KEYS; i++)
        first = !(a->told[i] == k && now - a->told_ms[i] < ZF_TOLD_QUIET_MS);
    if (first) {
        a->told[a->told_next] = k;
        a->told_ms[a->told_next] = now;
        a->told_next = (a->told_next + 1) % ZF_TOLD_KEYS;
    }
    pthread_mutex_unlock(&a->mu);
    return first;
}

/* read (into raw, or a scratch buffer from the cache's pool if NULL), decode
 * (into buf, or new memory if NULL), or fill */
static int load_into(zf_array *a, uint64_t index, int64_t *buf, zf_store_buf *raw,
                     zf_chunk *out)
{
    char key[ZF_KEY_MAX], err[256] = "";
    zf_pool *pool = zf_cache_pool(a->cache);
    zf_store_buf tmp = {NULL, 0};
    if (!raw)
        tmp.p = zf_pool_take(pool, 0, &tmp.cap);
    int rc = chunk_store_key(a, index, key, sizeof key);
    if (rc == ZF_OK && zf_array_snapshot_absent(a, index))
        rc = ZF_ENOTFOUND; /* remote: a request saved, the fill value as the index has it */
    else if (rc == ZF_OK)
        rc = load_stored(a, index, key, buf, raw ? raw : &tmp, out, err, sizeof err);
    zf_pool_give(pool, tmp.p, tmp.cap);
    if (rc == ZF_ENOTFOUND && a->fill_rc) { /* CF: a fill value beyond int64 ticks */
        rc = a->fill_rc;
        snprintf(err, sizeof err, "missing, and its fill value: %s", a->fill_err);
    }
    if (rc == ZF_ENOTFOUND) { /* a missing chunk (or empty inner chunk): the fill value */
        out->n = zf_array_chunk_elems(a);
        out->values = NULL;
        out->constant = a->meta.fill;
        return ZF_OK;
    }
    if (rc != ZF_OK) {
        if (!zf_deadline_cancelled() && first_report(a, index)) /* not for an abandoned read */
            zf_log("chunk %s/%s: %s%s%s", zf_store_path(a->store), key, zf_strerror(rc),
                   *err ? ": " : "", err);
        return rc == ZF_ENOMEM || rc == ZF_EIO || rc == ZF_ESTALE ? rc : ZF_ECORRUPT;
    }
    return ZF_OK;
}

/* cache loader: decodes into buf when the cache has one; a store failure
 * once the thread's request deadline is spent is that deadline's
 * (ZF_ETIMEDOUT: other readers of the chunk load it again) */
static int load_chunk(void *ctx, uint64_t index, void *buf, zf_chunk *out)
{
    int rc = load_into(ctx, index, buf, NULL, out);
    return rc == ZF_EIO && zf_deadline_spent() ? ZF_ETIMEDOUT : rc;
}

int zf_array_decode(zf_array *a, uint64_t index, int64_t *buf, zf_store_buf *raw,
                    zf_chunk *out)
{
    return load_into(a, index, buf, raw, out);
}

int zf_array_cache_room(const zf_array *a, unsigned chunks)
{
    return zf_cache_room(a->cache, (size_t)zf_array_chunk_elems(a) * sizeof(int64_t) * chunks);
}

/* the request's deadline came while chunk index was loading: say so, once
 * (a load of this thread's own has said it already) and fail as the store
 * would */
static int report_late(zf_array *a, uint64_t index)
{
    char key[ZF_KEY_MAX];
    if (chunk_store_key(a, index, key, sizeof key) == ZF_OK && !zf_deadline_cancelled() &&
        first_report(a, index))
        zf_log("chunk %s/%s: the request's time budget was spent", zf_store_path(a->store), key);
    return ZF_EIO;
}

int zf_array_get_chunk(zf_array *a, uint64_t index, zf_chunk **out)
{
    size_t bytes = (size_t)zf_array_chunk_elems(a) * sizeof(int64_t);
    int rc = zf_cache_get(a->cache, a->id, index, bytes, load_chunk, a, out);
    return rc == ZF_ETIMEDOUT ? report_late(a, index) : rc;
}

void zf_array_put_chunk(zf_array *a, zf_chunk *chunk)
{
    zf_cache_put(a->cache, chunk);
}

void zf_array_prefetch(zf_array *a, uint64_t index)
{
    size_t bytes = (size_t)zf_array_chunk_elems(a) * sizeof(int64_t);
    if (index >= a->nchunks)
        return;
    if (a->store->remote) /* as many loads in flight as the store serves at once */
        zf_cache_want_prefetch(a->cache, zf_array_read_ahead(a, 2));
    zf_cache_prefetch(a->cache, a->id, index, bytes, load_chunk, a);
}

uint64_t zf_array_shard_of(const zf_array *a, uint64_t index)
{
    return zf_array_stored_index(a, index);
}

unsigned zf_array_read_ahead(const zf_array *a, unsigned local)
{
    if (!a->store->remote)
        return local;
    size_t bytes = (size_t)zf_array_chunk_elems(a) * sizeof(int64_t) + 1;
    size_t room = zf_cache_capacity(a->cache) / 2 / bytes; /* half the cache: the rest is the reader's */
    unsigned n = a->store->parallel < ZF_PREFETCH_MAX_THREADS ? a->store->parallel
                                                              : ZF_PREFETCH_MAX_THREADS;
    n = room < n ? (unsigned)room : n;
    return n > local ? n : local;
}
