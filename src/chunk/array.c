/* array.c - chunk keys, loading and decoding for one array. */
#include "chunk/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "chunk/convert.h"

struct zf_array {
    const zf_store *store;
    zf_cache *cache;
    char *path;
    zf_meta meta;
    uint64_t id;              /* cache owner id, unique per array */
    uint64_t grid[ZF_MAX_DIMS];
    uint64_t nchunks;
    zf_fp *stamps;            /* stamp digest per stored chunk, from zf_array_snapshot */
    uint64_t present;         /* how many of them were present (not absent) */
    int fill_rc;              /* CF: converting the fill value failed (convert.h) */
    char fill_err[160];
};

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
    a->meta = *meta;
    memset(meta, 0, sizeof *meta);
    a->id = next_id();
    if (a->meta.cf.how != ZF_CF_NATIVE) /* the fill value as ticks, as every chunk */
        a->fill_rc = zf_convert_one(&a->meta.cf, a->meta.cf.fill_raw, &a->meta.fill, a->fill_err,
                                    sizeof a->fill_err);
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
    free(a->stamps);
    free(a->path);
    free(a);
}

const zf_meta *zf_array_meta(const zf_array *a)
{
    return &a->meta;
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

/* first element of read-grid chunk `index` */
static void chunk_origin(const zf_array *a, uint64_t index, uint64_t *origin)
{
    for (unsigned d = a->meta.ndim; d-- > 0;) {
        origin[d] = index % a->grid[d] * a->meta.read_chunks[d];
        index /= a->grid[d];
    }
}

/* full store key of the stored chunk (or shard) holding read-grid chunk `index` */
static int chunk_store_key(const zf_array *a, uint64_t index, char *buf, size_t cap)
{
    uint64_t coords[ZF_MAX_DIMS];
    chunk_origin(a, index, coords);
    for (unsigned d = 0; d < a->meta.ndim; d++)
        coords[d] /= a->meta.chunks[d];
    size_t len = 0;
    if (*a->path)
        len = (size_t)snprintf(buf, cap, "%s/", a->path);
    if (len >= cap)
        return ZF_EINVAL;
    return zf_meta_chunk_key(&a->meta, coords, buf + len, cap - len);
}

static void chunk_origin(const zf_array *a, uint64_t index, uint64_t *origin);

/* convert the stored CF elements of read chunk `index` at v into ticks (convert.h) */
static int convert_chunk(const zf_array *a, uint64_t index, int64_t *v, char *err, size_t errcap)
{
    uint64_t origin[ZF_MAX_DIMS], valid[ZF_MAX_DIMS];
    chunk_origin(a, index, origin);
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
        rc = zf_store_read_range(a->store, key, at_start ? r.off : r.off + r.len - ib, ib, raw,
                                 err, errcap);
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

/* walk the shard levels down to the innermost chunk holding element origin */
static int locate_inner(const zf_array *a, const char *key, uint64_t *origin, range *r,
                        const zf_pipeline **pp, char *err, size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline;
    const uint64_t *shard = a->meta.chunks, *inner;
    uint64_t e[ZF_MAX_DIMS];
    for (unsigned d = 0; d < a->meta.ndim; d++)
        e[d] = origin[d] % shard[d];
    const zf_pipeline *next;
    while (zf_pipeline_partial(p) && (next = zf_pipeline_inner(p, &inner))) {
        uint64_t *idx = NULL;
        int rc = read_index(a, key, p, *r, &idx, err, errcap);
        if (rc == ZF_OK)
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

/* read (part of) the stored value at key into raw and decode it */
static int load_stored(zf_array *a, uint64_t index, const char *key, int64_t *buf,
                       zf_store_buf *raw, zf_chunk *out, char *err, size_t errcap)
{
    const zf_pipeline *p = a->meta.pipeline;
    size_t rawn = 0;
    int rc;
    if (!zf_pipeline_partial(p)) {
        rc = zf_store_read(a->store, key, zf_pipeline_max_encoded(p), raw, &rawn, NULL, err, errcap);
    } else {
        uint64_t origin[ZF_MAX_DIMS];
        chunk_origin(a, index, origin);
        zf_stamp st;
        rc = zf_store_stamp(a->store, key, &st);
        if (rc == ZF_OK && st.kind != ZF_STORE_FILE) {
            snprintf(err, errcap, "not a regular file");
            rc = ZF_ECORRUPT;
        }
        range r = {0, st.size};
        if (rc == ZF_OK)
            rc = locate_inner(a, key, origin, &r, &p, err, errcap);
        if (rc == ZF_OK && r.len > zf_pipeline_max_encoded(p)) {
            snprintf(err, errcap, "inner chunk of %llu bytes is larger than any valid encoding",
                     (unsigned long long)r.len);
            rc = ZF_ECORRUPT;
        }
        rawn = (size_t)r.len;
        if (rc == ZF_OK)
            rc = zf_store_buf_reserve(raw, rawn);
        if (rc == ZF_OK)
            rc = zf_store_read_range(a->store, key, r.off, rawn, raw->p, err, errcap);
    }
    if (rc == ZF_OK)
        rc = decode_chunk(a, index, p, raw->p, rawn, buf, out, err, errcap);
    return rc;
}

/* linear index (C order over the stored-chunk grid) of the chunk holding read chunk index */
static uint64_t stored_index(const zf_array *a, uint64_t index)
{
    uint64_t origin[ZF_MAX_DIMS], k = 0;
    chunk_origin(a, index, origin);
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        uint64_t g = (a->meta.shape[d] + a->meta.chunks[d] - 1) / a->meta.chunks[d];
        k = k * g + origin[d] / a->meta.chunks[d];
    }
    return k;
}

/* digest of key's stamp now */
static zf_fp stamp_digest(const zf_array *a, const char *key)
{
    zf_stamp st;
    zf_store_stamp(a->store, key, &st); /* an error leaves st absent: a change, too */
    return zf_stamp_digest(&st);
}

/* does key's stamp now have the digest then? */
static int same_stamp(const zf_array *a, const char *key, const zf_fp *then)
{
    zf_fp now = stamp_digest(a, key);
    return now.a == then->a && now.b == then->b;
}

/* ZF_ESTALE if the stored chunk no longer matches its snapshot stamp */
static int check_stamp(const zf_array *a, uint64_t index, const char *key, char *err, size_t errcap)
{
    const zf_fp *stamps = __atomic_load_n(&a->stamps, __ATOMIC_ACQUIRE);
    if (!stamps)
        return ZF_OK;
    if (same_stamp(a, key, &stamps[stored_index(a, index)]))
        return ZF_OK;
    snprintf(err, errcap, "rewritten since its size was computed; remount or reopen to see it");
    return ZF_ESTALE;
}

uint64_t zf_array_chunk_elems(const zf_array *a)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < a->meta.ndim; d++)
        n *= a->meta.read_chunks[d];
    return n;
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
    if (rc == ZF_OK)
        rc = check_stamp(a, index, key, err, sizeof err);
    if (rc == ZF_OK)
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
        zf_log("chunk %s/%s: %s%s%s", zf_store_path(a->store), key, zf_strerror(rc),
               *err ? ": " : "", err);
        return rc == ZF_ENOMEM || rc == ZF_EIO || rc == ZF_ESTALE ? rc : ZF_ECORRUPT;
    }
    return ZF_OK;
}

/* cache loader: decodes into buf when the cache has one */
static int load_chunk(void *ctx, uint64_t index, void *buf, zf_chunk *out)
{
    return load_into(ctx, index, buf, NULL, out);
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

int zf_array_get_chunk(zf_array *a, uint64_t index, zf_chunk **out)
{
    size_t bytes = (size_t)zf_array_chunk_elems(a) * sizeof(int64_t);
    return zf_cache_get(a->cache, a->id, index, bytes, load_chunk, a, out);
}

void zf_array_put_chunk(zf_array *a, zf_chunk *chunk)
{
    zf_cache_put(a->cache, chunk);
}

void zf_array_prefetch(zf_array *a, uint64_t index)
{
    size_t bytes = (size_t)zf_array_chunk_elems(a) * sizeof(int64_t);
    if (index < a->nchunks)
        zf_cache_prefetch(a->cache, a->id, index, bytes, load_chunk, a);
}

/* number of stored chunks (shards) along each dimension, and in all */
static uint64_t stored_grid(const zf_array *a, uint64_t *grid)
{
    uint64_t total = 1;
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        grid[d] = (a->meta.shape[d] + a->meta.chunks[d] - 1) / a->meta.chunks[d];
        total *= grid[d]; /* <= nelems (or 0), so no overflow */
    }
    return total;
}

/* called with the index (C order over the stored grid) and stamp of every
 * stored chunk present in the store */
typedef void (*stamp_fn)(void *ctx, uint64_t k, const zf_stamp *st);

/* the linear index of coords over grid into *k; -1 if coords lie outside it */
static int grid_index(unsigned ndim, const uint64_t *grid, const uint64_t *coords, uint64_t *k)
{
    *k = 0;
    for (unsigned d = 0; d < ndim; d++) {
        if (coords[d] >= grid[d])
            return -1;
        *k = *k * grid[d] + coords[d];
    }
    return 0;
}

typedef struct dir_ctx {
    const zf_array *a;
    const uint64_t *grid;
    const char *dir;   /* the listed directory, relative to the array's */
    stamp_fn fn;
    void *ctx;
} dir_ctx;

/* one entry of a listed chunk directory: a chunk of the grid, or ignored */
static int dir_entry(void *arg, const zf_store_entry *e)
{
    dir_ctx *c = arg;
    char rel[ZF_KEY_MAX];
    uint64_t coords[ZF_MAX_DIMS], k;
    int n = snprintf(rel, sizeof rel, "%s%s%s", c->dir, *c->dir ? "/" : "", e->name);
    if (n > 0 && (size_t)n < sizeof rel && zf_meta_chunk_coords(&c->a->meta, rel, coords) == ZF_OK &&
        grid_index(c->a->meta.ndim, c->grid, coords, &k) == 0)
        c->fn(c->ctx, k, &e->stamp);
    return 0;
}

/* list the directory holding the chunk at coords, calling fn for the chunks in it */
static void list_chunk_dir(const zf_array *a, const uint64_t *grid, uint64_t *coords,
                           stamp_fn fn, void *ctx)
{
    char rel[ZF_KEY_MAX], key[ZF_KEY_MAX];
    if (zf_meta_chunk_key(&a->meta, coords, rel, sizeof rel) != ZF_OK)
        return;
    char *slash = strrchr(rel, '/');
    if (slash)
        *slash = '\0';
    else
        *rel = '\0';
    int n = snprintf(key, sizeof key, "%s%s%s", a->path, *a->path && *rel ? "/" : "", rel);
    if (n < 0 || (size_t)n >= sizeof key)
        return;
    dir_ctx c = {a, grid, rel, fn, ctx};
    zf_store_list(a->store, key, dir_entry, &c); /* a missing directory holds no chunk */
}

/* stamp every stored chunk key one by one */
static void stamp_each(const zf_array *a, const uint64_t *grid, uint64_t total, stamp_fn fn,
                       void *ctx)
{
    uint64_t coords[ZF_MAX_DIMS] = {0};
    char key[ZF_KEY_MAX];
    size_t plen = *a->path ? (size_t)snprintf(key, sizeof key, "%s/", a->path) : 0;
    for (uint64_t k = 0; k < total; k++) {
        zf_stamp st;
        if (plen < sizeof key &&
            zf_meta_chunk_key(&a->meta, coords, key + plen, sizeof key - plen) == ZF_OK &&
            zf_store_stamp(a->store, key, &st) == ZF_OK)
            fn(ctx, k, &st);
        for (unsigned d = a->meta.ndim; d-- > 0;) {
            if (++coords[d] < grid[d])
                break;
            coords[d] = 0;
        }
    }
}

/* fn for every stored chunk present, asking the store in bulk: each
 * directory holding two or more chunks of the grid is listed once (with the
 * stamps of what it holds); chunks alone in their directory are stamped */
static void stamp_stored(const zf_array *a, stamp_fn fn, void *ctx)
{
    uint64_t grid[ZF_MAX_DIMS], total = stored_grid(a, grid), coords[ZF_MAX_DIMS] = {0};
    unsigned n = a->meta.ndim;
    int nested = a->meta.separator == '/' && n > 0; /* one directory per row of the last axis */
    uint64_t per_dir = nested ? grid[n - 1] : total;
    if (total == 0)
        return;
    if (per_dir < 2) {
        stamp_each(a, grid, total, fn, ctx);
        return;
    }
    if (!nested) {
        list_chunk_dir(a, grid, coords, fn, ctx);
        return;
    }
    for (uint64_t row = 0; row < total / per_dir; row++) { /* coords[n - 1] stays 0 */
        list_chunk_dir(a, grid, coords, fn, ctx);
        for (unsigned d = n - 1; d-- > 0;) {
            if (++coords[d] < grid[d])
                break;
            coords[d] = 0;
        }
    }
}

typedef struct snap_ctx {
    zf_fp *stamps;
    uint64_t present;
} snap_ctx;

static void take_stamp(void *ctx, uint64_t k, const zf_stamp *st)
{
    snap_ctx *c = ctx;
    c->stamps[k] = zf_stamp_digest(st);
    c->present++;
}

static void fp_meta(const zf_array *a, zf_fp *fp)
{
    const zf_meta *m = &a->meta;
    char codecs[1024];
    zf_pipeline_describe(m->pipeline, codecs, sizeof codecs);
    zf_fp_add(fp, a->path, strlen(a->path)); /* not the store's: chunk stamps name the files */
    zf_fp_add(fp, m->shape, sizeof m->shape);
    zf_fp_add(fp, m->chunks, sizeof m->chunks);
    zf_fp_add(fp, m->read_chunks, sizeof m->read_chunks);
    zf_fp_add(fp, m->dtype_text, strlen(m->dtype_text));
    zf_fp_add(fp, &m->fill, sizeof m->fill);
    zf_fp_add(fp, &m->key_v2, sizeof m->key_v2);
    zf_fp_add(fp, &m->separator, 1);
    zf_fp_add(fp, codecs, strlen(codecs));
    zf_cf_fingerprint(&m->cf, fp);
    for (unsigned d = 0; d < m->ndim; d++)
        zf_fp_add(fp, m->dim_names[d] ? m->dim_names[d] : "", m->dim_names[d] ? strlen(m->dim_names[d]) + 1 : 0);
}

int zf_array_snapshot(zf_array *a, zf_fp *fp)
{
    uint64_t grid[ZF_MAX_DIMS], total = stored_grid(a, grid);
    if (total > SIZE_MAX / sizeof(zf_fp))
        return ZF_ENOMEM;
    snap_ctx c = {malloc(total ? (size_t)total * sizeof(zf_fp) : 1), 0};
    if (!c.stamps)
        return ZF_ENOMEM;
    zf_stamp absent;
    memset(&absent, 0, sizeof absent);
    zf_fp none = zf_stamp_digest(&absent);
    for (uint64_t k = 0; k < total; k++)
        c.stamps[k] = none;
    stamp_stored(a, take_stamp, &c);
    fp_meta(a, fp);
    zf_fp_add(fp, c.stamps, (size_t)total * sizeof *c.stamps);
    a->present = c.present; /* before the stamps are published */
    zf_fp *old = __atomic_exchange_n(&a->stamps, c.stamps, __ATOMIC_ACQ_REL);
    free(old);
    return ZF_OK;
}

typedef struct changed_ctx {
    const zf_fp *stamps;
    uint64_t present;
    int changed;
} changed_ctx;

static void compare_stamp(void *ctx, uint64_t k, const zf_stamp *st)
{
    changed_ctx *c = ctx;
    zf_fp now = zf_stamp_digest(st);
    c->changed |= now.a != c->stamps[k].a || now.b != c->stamps[k].b;
    c->present++;
}

int zf_array_changed(const zf_array *a)
{
    changed_ctx c = {__atomic_load_n(&a->stamps, __ATOMIC_ACQUIRE), 0, 0};
    if (!c.stamps)
        return 0;
    stamp_stored(a, compare_stamp, &c);
    return c.changed || c.present != a->present; /* present then, gone now */
}

static void count_present(void *ctx, uint64_t k, const zf_stamp *st)
{
    if (st->kind == ZF_STORE_FILE)
        (*(uint64_t *)ctx)++;
}

int zf_array_count_stored(const zf_array *a, uint64_t limit, uint64_t *present, uint64_t *expected)
{
    uint64_t grid[ZF_MAX_DIMS];
    *expected = stored_grid(a, grid);
    *present = 0;
    if (*expected > limit)
        return ZF_EUNSUPPORTED;
    stamp_stored(a, count_present, present);
    return ZF_OK;
}
