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

uint64_t zf_array_next_id(void)
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
    a->id = zf_array_next_id();
    if (zf_array_init_ticks(a)) {
        zf_array_free(a);
        return NULL;
    }
    if (zf_pipeline_partial(a->meta.pipeline) && /* inner chunks read one by one */
        !(a->shards = zf_shardidx_new(zf_cache_capacity(cache) / 4))) {
        zf_array_free(a);
        return NULL;
    }
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
    zf_cache_cancel(a->cache, zf_array_owner(a)); /* no background load may still use a */
    zf_meta_clear(&a->meta);
    zf_snap_free(a->snap);
    free(a->learned.v);
    zf_shardidx_free(a->shards);
    pthread_mutex_destroy(&a->mu);
    free(a->path);
    free(a->cft);
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

/* convert the stored CF elements of read chunk `index` at v into ticks
 * (convert.h; *coarser: of a coarser unit) */
static int convert_chunk(const zf_array *a, uint64_t index, int64_t *v, unsigned *coarser,
                         char *err, size_t errcap)
{
    uint64_t origin[ZF_MAX_DIMS], valid[ZF_MAX_DIMS];
    zf_array_chunk_origin(a, index, origin);
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        uint64_t left = a->meta.shape[d] - origin[d];
        valid[d] = left < a->meta.read_chunks[d] ? left : a->meta.read_chunks[d];
    }
    return zf_convert_chunk(zf_array_cf(a), v, a->meta.ndim, a->meta.read_chunks, valid, coarser,
                            err, errcap);
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
    out->coarser = 0;
    if (rc == ZF_OK && a->meta.cf.how != ZF_CF_NATIVE)
        rc = convert_chunk(a, index, v, &out->coarser, err, errcap);
    if (rc) {
        if (v != buf)
            free(v);
        return rc;
    }
    out->values = v;
    out->n = elems;
    return ZF_OK;
}

/* read (part of) the stored value at key into raw and decode it; the
 * version read is checked against the snapshot (zf_array_check_version) */
static int load_stored(zf_array *a, uint64_t index, const char *key, int64_t *buf,
                       zf_store_buf *raw, zf_chunk *out, char *err, size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline;
    size_t rawn = 0;
    int rc;
    if (!zf_pipeline_partial(p)) { /* one request: the read returns its stamp */
        zf_stamp st;
        rc = zf_store_read(a->store, key, zf_pipeline_max_encoded(p), raw, &rawn, &st, err, errcap);
        rc = zf_array_check_version(a, index, key, rc, &st, err, errcap);
    } else { /* an inner chunk of a shard (array_shard.c) */
        rc = zf_array_read_inner(a, index, key, raw, &rawn, &p, err, errcap);
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

/* should the failure of read chunk index be logged?  Always for a chunk of
 * a local store; for a remote one, or an inner chunk of a shard, unless its
 * stored chunk's failure was logged within ZF_TOLD_QUIET_MS (array_impl.h) */
static int first_report(zf_array *a, uint64_t index)
{
    if (!a->store->remote && !a->shards)
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

int zf_array_news(zf_array *a, zf_told_why *t, const char *why)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    zf_fp fp;
    zf_fp_init(&fp);
    zf_fp_add(&fp, why, strlen(why));
    pthread_mutex_lock(&a->mu);
    int news = !*why || fp.a != t->fp.a || fp.b != t->fp.b || now - t->ms >= ZF_TOLD_QUIET_MS;
    if (news) {
        t->fp = fp;
        t->ms = now;
    }
    pthread_mutex_unlock(&a->mu);
    return news;
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
    int fill_rc;
    const char *fill_err;
    int64_t fill = zf_array_fill_ticks(a, &fill_rc, &fill_err);
    if (rc == ZF_ENOTFOUND && fill_rc) { /* CF: a fill value beyond int64 ticks */
        rc = fill_rc;
        snprintf(err, sizeof err, "missing, and its fill value: %s", fill_err);
    }
    if (rc == ZF_ENOTFOUND) { /* a missing chunk (or empty inner chunk): the fill value */
        out->n = zf_array_chunk_elems(a);
        out->values = NULL;
        out->constant = fill;
        out->coarser = 0;
        return ZF_OK;
    }
    if (rc == ZF_ERANGE) { /* a time stamp outside the ns range: cftime objects (ticks.c) */
        zf_array_note_outside(a);
        return ZF_ECORRUPT;
    }
    if (rc != ZF_OK) {
        /* a failure of the store is for the read that meets it, not for an
         * abandoned one nor one for no one (it is not kept: the next read
         * meets it again); damage is a verdict on the bytes, kept: said
         * when found, whoever finds it */
        int failure = rc == ZF_ENOMEM || rc == ZF_EIO || rc == ZF_ESTALE;
        if (!zf_deadline_cancelled() && !(failure && zf_deadline_unattended()) &&
            first_report(a, index) && (rc != ZF_EIO || zf_array_news(a, &a->told_read, err)))
            zf_log("chunk %s/%s: %s%s%s", zf_store_path(a->store), key, zf_strerror(rc),
                   *err ? ": " : "", err);
        return failure ? rc : ZF_ECORRUPT;
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
        !zf_deadline_unattended() && first_report(a, index))
        zf_log("chunk %s/%s: the request's time budget was spent", zf_store_path(a->store), key);
    return ZF_EIO;
}

int zf_array_get_chunk(zf_array *a, uint64_t index, zf_chunk **out)
{
    size_t bytes = (size_t)zf_array_chunk_elems(a) * sizeof(int64_t);
    int rc = zf_cache_get(a->cache, zf_array_owner(a), index, bytes, load_chunk, a, out);
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
    zf_cache_prefetch(a->cache, zf_array_owner(a), index, bytes, load_chunk, a);
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
