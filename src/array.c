/* array.c - chunk keys, loading and decoding for one array. */
#include "array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "log.h"

struct zf_array {
    const zf_store *store;
    zf_cache *cache;
    char *path;
    zf_meta meta;
    uint64_t id;              /* cache owner id, unique per array */
    uint64_t grid[ZF_MAX_DIMS];
    uint64_t nchunks;
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
    a->nchunks = 1;
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        a->grid[d] = (a->meta.shape[d] + a->meta.chunks[d] - 1) / a->meta.chunks[d];
        a->nchunks *= a->grid[d]; /* <= nelems (or 0), so no overflow */
    }
    return a;
}

void zf_array_free(zf_array *a)
{
    if (!a)
        return;
    zf_meta_clear(&a->meta);
    free(a->path);
    free(a);
}

const zf_meta *zf_array_meta(const zf_array *a)
{
    return &a->meta;
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

/* full store key of chunk `index` */
static int chunk_store_key(const zf_array *a, uint64_t index, char *buf, size_t cap)
{
    uint64_t coords[ZF_MAX_DIMS];
    for (unsigned d = a->meta.ndim; d-- > 0;) {
        coords[d] = index % a->grid[d];
        index /= a->grid[d];
    }
    size_t len = 0;
    if (*a->path)
        len = (size_t)snprintf(buf, cap, "%s/", a->path);
    if (len >= cap)
        return ZF_EINVAL;
    return zf_meta_chunk_key(&a->meta, coords, buf + len, cap - len);
}

static int64_t *fill_values(uint64_t n, int64_t fill)
{
    int64_t *v = malloc(n * sizeof *v);
    if (v)
        for (uint64_t i = 0; i < n; i++)
            v[i] = fill;
    return v;
}

/* cache loader: read, decode, or fill */
static int load_chunk(void *ctx, uint64_t index, int64_t **values, uint64_t *n)
{
    zf_array *a = ctx;
    char key[4096];
    int rc = chunk_store_key(a, index, key, sizeof key);
    if (rc)
        return rc;
    uint64_t elems = zf_pipeline_chunk_elems(a->meta.pipeline);
    uint8_t *raw = NULL;
    size_t rawn = 0;
    rc = zf_store_read(a->store, key, zf_pipeline_max_encoded(a->meta.pipeline), &raw, &rawn);
    if (rc == ZF_ENOTFOUND) {
        *values = fill_values(elems, a->meta.fill);
        *n = elems;
        return *values ? ZF_OK : ZF_ENOMEM;
    }
    char err[256] = "";
    int64_t *out = NULL;
    if (rc == ZF_OK && !(out = malloc(elems * sizeof *out)))
        rc = ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = zf_pipeline_decode(a->meta.pipeline, raw, rawn, out, err, sizeof err);
    else if (rc == ZF_ECORRUPT)
        snprintf(err, sizeof err, "not a regular file, or larger than any valid encoding");
    free(raw);
    if (rc != ZF_OK) {
        zf_log("chunk %s/%s: %s%s%s", zf_store_path(a->store), key, zf_strerror(rc),
               *err ? ": " : "", err);
        free(out);
        return rc == ZF_ENOMEM ? rc : rc == ZF_EIO ? ZF_EIO : ZF_ECORRUPT;
    }
    *values = out;
    *n = elems;
    return ZF_OK;
}

int zf_array_get_chunk(zf_array *a, uint64_t index, zf_chunk **out)
{
    return zf_cache_get(a->cache, a->id, index, load_chunk, a, out);
}

void zf_array_put_chunk(zf_array *a, zf_chunk *chunk)
{
    zf_cache_put(a->cache, chunk);
}

int zf_array_chunk_present(const zf_array *a, uint64_t index)
{
    char key[4096];
    if (chunk_store_key(a, index, key, sizeof key))
        return 0;
    return zf_store_kind(a->store, key) != 0;
}
