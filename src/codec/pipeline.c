/* pipeline.c - chunk codec chain: bytes->bytes codecs, bytes or
 * sharding_indexed, numcodecs filters, transpose.
 *
 * Element types through the chain: the pipeline yields the array's type
 * (elem).  The numcodecs filters (v2 "filters", v3 numcodecs.delta /
 * .fixedscaleoffset / .astype, in encode order) each read one type and yield
 * another; the first yields the array's type (same bits), each next one the
 * type the previous reads, and the bytes stage holds the last one's (selem).
 * The bytes->bytes stage must produce exactly elems x selem.size bytes.
 * Byte orders follow zarr-python, which views each stage's memory as the
 * next stage's dtype: stored elements are read in the last filter's order
 * (v3: whatever "bytes" says, as zarr-python does), a filter's output is
 * swapped iff the next reader's order differs, and at the end v2 views the
 * result as the array's dtype while v3 takes values as they are. */
#include "codec/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "filter_impl.h"
#include "base/err.h"
#include "base/json.h"

#define ZF_MAX_CODECS 16

struct zf_pipeline {
    unsigned ndim;
    int v3;
    uint64_t shape[ZF_MAX_DIMS];  /* logical chunk shape */
    uint64_t sshape[ZF_MAX_DIMS]; /* the shape the array->bytes codec sees */
    unsigned perm[ZF_MAX_DIMS];   /* decoded axis i is logical axis perm[i] */
    int transposed;               /* perm is not the identity */
    zf_elem elem;                 /* the decoded element type (the array's) */
    unsigned esize;               /* bytes per element: 1, 2, 4 or 8 */
    int array_big;                /* byte order the last filter's output is viewed in */
    unsigned nfilters;            /* numcodecs array->array filters, in encode order */
    zf_filter *filters[ZF_MAX_CODECS];
    zf_elem selem;                /* the element type of the bytes stage */
    int big_endian;               /* byte order of the stored elements */
    uint64_t elems;
    size_t nbytes;                /* elems * esize */
    size_t sbytes;                /* elems * selem.size: what the bytes stage holds */
    unsigned ncodecs;             /* bytes->bytes, in encode order */
    zf_codec *codecs[ZF_MAX_CODECS];
    zf_pipeline *inner;           /* sharding: pipeline of one inner chunk */
    zf_pipeline *index;           /* sharding: pipeline of the shard index */
    uint64_t inner_shape[ZF_MAX_DIMS];   /* inner chunk, in the sharded (stored) axes */
    uint64_t inner_logical[ZF_MAX_DIMS]; /* the same box in the logical axes */
    uint64_t inner_count;         /* inner chunks per shard */
    int index_at_start;
    size_t index_bytes;           /* encoded size of the shard index */
    uint8_t fill[8];              /* element of empty inner chunks (esize bytes) */
};

static zf_pipeline *pipeline_new(unsigned ndim, const uint64_t *shape, zf_elem elem, char *err,
                                 size_t errcap)
{
    unsigned esize = elem.size;
    if ((esize != 1 && esize != 2 && esize != 4 && esize != 8) ||
        (elem.kind == ZF_ELEM_FLOAT && esize < 4)) {
        snprintf(err, errcap, "elements of %u bytes are not supported", esize);
        return NULL;
    }
    zf_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errcap, "out of memory");
        return NULL;
    }
    p->ndim = ndim;
    p->elem = p->selem = elem;
    p->esize = esize;
    p->array_big = ZF_HOST_BIG;
    p->elems = 1;
    for (unsigned i = 0; i < ndim; i++) {
        p->shape[i] = p->sshape[i] = shape[i];
        p->perm[i] = i;
        if (shape[i] && p->elems > UINT64_MAX / shape[i]) {
            snprintf(err, errcap, "chunk element count overflows");
            free(p);
            return NULL;
        }
        p->elems *= shape[i];
    }
    if (p->elems > (UINT64_C(1) << 56)) {
        snprintf(err, errcap, "chunk of %llu elements is too large", (unsigned long long)p->elems);
        free(p);
        return NULL;
    }
    p->nbytes = p->sbytes = (size_t)p->elems * esize; /* <= 2^59 */
    return p;
}

void zf_pipeline_free(zf_pipeline *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->ncodecs; i++)
        zf_codec_free(p->codecs[i]);
    for (unsigned i = 0; i < p->nfilters; i++)
        zf_filter_free(p->filters[i]);
    zf_pipeline_free(p->inner);
    zf_pipeline_free(p->index);
    free(p);
}

uint64_t zf_pipeline_chunk_elems(const zf_pipeline *p)
{
    return p->elems;
}

zf_elem zf_pipeline_elem(const zf_pipeline *p)
{
    return p->elem;
}

/* most bytes the bytes->bytes stages may produce: the chunk, or a whole shard */
static size_t bytes_cap(const zf_pipeline *p)
{
    if (!p->inner)
        return p->sbytes;
    size_t per = zf_pipeline_max_encoded(p->inner);
    if (per > (SIZE_MAX / 4 - p->index_bytes) / p->inner_count)
        return SIZE_MAX / 4;
    return p->index_bytes + (size_t)p->inner_count * per;
}

size_t zf_pipeline_max_encoded(const zf_pipeline *p)
{
    size_t n = bytes_cap(p);
    for (unsigned i = 0; i < p->ncodecs; i++)
        n = zf_codec_bound(n);
    return n;
}

/* compose a transpose order (encode direction) onto the current permutation */
static int add_transpose(zf_pipeline *p, const cJSON *config, char *err, size_t errcap)
{
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(config, "order");
    unsigned o[ZF_MAX_DIMS];
    unsigned char seen[ZF_MAX_DIMS] = {0};
    if (cJSON_IsString(order) && (!strcmp(order->valuestring, "C") || !strcmp(order->valuestring, "F"))) {
        for (unsigned i = 0; i < p->ndim; i++)
            o[i] = order->valuestring[0] == 'C' ? i : p->ndim - 1 - i;
    } else {
        if (!cJSON_IsArray(order) || (unsigned)cJSON_GetArraySize(order) != p->ndim) {
            snprintf(err, errcap, "transpose: \"order\" must list %u axes", p->ndim);
            return ZF_ECORRUPT;
        }
        unsigned i = 0;
        for (const cJSON *a = order->child; a; a = a->next, i++) {
            int64_t v;
            if (!zf_json_int(a, 0, (int64_t)p->ndim - 1, &v) || seen[v]) {
                snprintf(err, errcap, "transpose: \"order\" is not a permutation");
                return ZF_ECORRUPT;
            }
            seen[v] = 1;
            o[i] = (unsigned)v;
        }
    }
    static const char *const keys[] = {"order", NULL};
    int rc = zf_json_only_keys(config, keys, "transpose", err, errcap);
    if (rc)
        return rc;
    unsigned np[ZF_MAX_DIMS];
    for (unsigned i = 0; i < p->ndim; i++)
        np[i] = p->perm[o[i]];
    memcpy(p->perm, np, sizeof np);
    p->transposed = 0;
    for (unsigned i = 0; i < p->ndim; i++) {
        p->transposed |= p->perm[i] != i;
        p->sshape[i] = p->shape[p->perm[i]];
    }
    if (p->transposed && p->nfilters) {
        snprintf(err, errcap, "transpose with numcodecs filters is not supported "
                              "(zarr-python cannot read it back)");
        return ZF_EUNSUPPORTED;
    }
    return ZF_OK;
}

/* the "bytes" array->bytes codec: only its endianness matters, and not even
 * that after numcodecs filters (zarr-python views the stored bytes as the
 * last filter's dtype, whatever "endian" says) */
static int set_bytes(zf_pipeline *p, const cJSON *config, char *err, size_t errcap)
{
    const cJSON *e = config ? cJSON_GetObjectItemCaseSensitive(config, "endian") : NULL;
    static const char *const keys[] = {"endian", NULL};
    unsigned ssize = p->selem.size;
    if (!e && ssize == 1) /* one-byte values have no byte order */
        return zf_json_only_keys(config, keys, "bytes", err, errcap);
    if (!cJSON_IsString(e) || (strcmp(e->valuestring, "little") && strcmp(e->valuestring, "big"))) {
        snprintf(err, errcap, "bytes: \"endian\" must be \"little\" or \"big\" for %u-byte values",
                 ssize);
        return ZF_ECORRUPT;
    }
    p->big_endian = ssize > 1 && !strcmp(e->valuestring, "big");
    if (p->nfilters)
        p->big_endian = zf_filter_encoded(p->filters[p->nfilters - 1]).big;
    return zf_json_only_keys(config, keys, "bytes", err, errcap);
}

/* append a numcodecs filter: it must yield the bits of the type the previous
 * stage reads (the array's, for the first); the bytes stage then holds the
 * type it reads */
static int add_filter(zf_pipeline *p, zf_filter *f, char *err, size_t errcap)
{
    zf_elem want = p->nfilters ? zf_filter_encoded(p->filters[p->nfilters - 1]).elem : p->elem;
    zf_elem got = zf_filter_decoded(f).elem;
    int rc = ZF_OK;
    if (p->nfilters == ZF_MAX_CODECS) {
        snprintf(err, errcap, "more than %d filters", ZF_MAX_CODECS);
        rc = ZF_EUNSUPPORTED;
    } else if (!zf_elem_same_bits(want, got) && p->nfilters == 0) {
        snprintf(err, errcap, "%s: decodes to %s, but the array has %s elements",
                 zf_filter_name(f), zf_elem_name(got), zf_elem_name(want));
        rc = ZF_EUNSUPPORTED;
    } else if (!zf_elem_same_bits(want, got)) {
        snprintf(err, errcap, "%s: decodes to %s, but %s reads %s elements", zf_filter_name(f),
                 zf_elem_name(got), zf_filter_name(p->filters[p->nfilters - 1]),
                 zf_elem_name(want));
        rc = ZF_EUNSUPPORTED;
    } else if (p->v3 && p->transposed) {
        snprintf(err, errcap, "%s after transpose is not supported "
                              "(zarr-python cannot read it back)", zf_filter_name(f));
        rc = ZF_EUNSUPPORTED;
    }
    if (rc) {
        zf_filter_free(f);
        return rc;
    }
    if (p->v3 && p->nfilters == 0) /* v3 takes the first filter's values as they are */
        p->array_big = zf_filter_decoded(f).big;
    p->filters[p->nfilters++] = f;
    p->selem = zf_filter_encoded(f).elem;
    p->sbytes = (size_t)p->elems * p->selem.size;
    p->big_endian = zf_filter_encoded(f).big;
    return ZF_OK;
}

static int add_codec(zf_pipeline *p, zf_codec *c, char *err, size_t errcap)
{
    if (p->ncodecs == ZF_MAX_CODECS) {
        zf_codec_free(c);
        snprintf(err, errcap, "more than %d codecs", ZF_MAX_CODECS);
        return ZF_EUNSUPPORTED;
    }
    p->codecs[p->ncodecs++] = c;
    return ZF_OK;
}

/* the sharding_indexed array->bytes codec: inner chunks readable one by one */
static int set_sharding(zf_pipeline *p, const cJSON *config, char *err, size_t errcap)
{
    static const char *const keys[] = {"chunk_shape", "codecs", "index_codecs", "index_location", NULL};
    int rc = zf_json_only_keys(config, keys, "sharding_indexed", err, errcap);
    if (rc)
        return rc;
    if (p->nfilters) {
        snprintf(err, errcap, "sharding_indexed after %s is not supported",
                 zf_filter_name(p->filters[p->nfilters - 1]));
        return ZF_EUNSUPPORTED;
    }
    const cJSON *cs = config ? cJSON_GetObjectItemCaseSensitive(config, "chunk_shape") : NULL;
    if (!cJSON_IsArray(cs) || (unsigned)cJSON_GetArraySize(cs) != p->ndim) {
        snprintf(err, errcap, "sharding_indexed: \"chunk_shape\" must list %u sizes", p->ndim);
        return ZF_ECORRUPT;
    }
    uint64_t grid[ZF_MAX_DIMS + 1];
    unsigned d = 0;
    p->inner_count = 1;
    for (const cJSON *c = cs->child; c; c = c->next, d++) {
        int64_t v;
        if (!zf_json_int(c, 1, INT64_MAX, &v) || p->sshape[d] % (uint64_t)v) {
            snprintf(err, errcap, "sharding_indexed: inner chunk shape must divide the shard shape%s",
                     p->transposed ? " (as transposed)" : "");
            return ZF_ECORRUPT;
        }
        p->inner_shape[d] = (uint64_t)v;
        p->inner_logical[p->perm[d]] = (uint64_t)v;
        grid[d] = p->sshape[d] / (uint64_t)v;
        p->inner_count *= grid[d];
    }
    grid[p->ndim] = 2;
    if (p->inner_count > ZF_MAX_SHARD_CHUNKS) {
        snprintf(err, errcap, "sharding_indexed: more than 2^24 inner chunks per shard");
        return ZF_EUNSUPPORTED;
    }
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(config, "index_location");
    if (loc && (!cJSON_IsString(loc) || (strcmp(loc->valuestring, "start") && strcmp(loc->valuestring, "end")))) {
        snprintf(err, errcap, "sharding_indexed: \"index_location\" must be \"start\" or \"end\"");
        return ZF_ECORRUPT;
    }
    p->index_at_start = loc && !strcmp(loc->valuestring, "start");
    if ((rc = zf_pipeline_from_v3(cJSON_GetObjectItemCaseSensitive(config, "codecs"), p->ndim,
                                  p->inner_shape, p->elem, &p->inner, err, errcap)) ||
        (rc = zf_pipeline_from_v3(cJSON_GetObjectItemCaseSensitive(config, "index_codecs"),
                                  p->ndim + 1, grid, (zf_elem){ZF_ELEM_UINT, 8}, &p->index, err,
                                  errcap)))
        return rc;
    p->index_bytes = p->index->nbytes;
    for (unsigned i = 0; i < p->index->ncodecs; i++) {
        if (strcmp(zf_codec_name(p->index->codecs[i]), "crc32c")) {
            snprintf(err, errcap, "sharding_indexed: index codec \"%s\" has no fixed size",
                     zf_codec_name(p->index->codecs[i]));
            return ZF_EUNSUPPORTED;
        }
        p->index_bytes += 4;
    }
    return ZF_OK;
}

/* one v3 codec entry; *stage tracks array->array (0), bytes seen (1) */
static int add_v3_entry(zf_pipeline *p, const cJSON *entry, int *stage, char *err, size_t errcap)
{
    const char *name;
    const cJSON *config;
    int rc = zf_json_entry(entry, &name, &config, err, errcap);
    if (rc)
        return rc;
    int is_shard = !strcmp(name, "sharding_indexed");
    if (!strcmp(name, "transpose") || !strcmp(name, "bytes") || is_shard) {
        if (*stage != 0) {
            snprintf(err, errcap, "codec \"%s\" after the array->bytes codec", name);
            return ZF_ECORRUPT;
        }
        if (strcmp(name, "transpose"))
            *stage = 1;
        if (is_shard)
            return set_sharding(p, config, err, errcap);
        return *stage ? set_bytes(p, config, err, errcap) : add_transpose(p, config, err, errcap);
    }
    if (!strncmp(name, "numcodecs.", 10)) {
        zf_filter *f = NULL;
        rc = zf_filter_parse(name + 10, config, 1, p->elem, &f, err, errcap);
        if (rc != ZF_ENOTFOUND) {
            if (rc == ZF_OK && *stage != 0) {
                zf_filter_free(f);
                snprintf(err, errcap, "array->array codec \"%s\" after the array->bytes codec", name);
                return ZF_ECORRUPT;
            }
            return rc ? rc : add_filter(p, f, err, errcap);
        }
    }
    zf_codec *c = NULL;
    rc = zf_codec_from_v3(entry, p->elem.size, &c, err, errcap);
    if (rc == ZF_ENOTFOUND) {
        snprintf(err, errcap, "unsupported codec \"%s\"", name);
        return ZF_EUNSUPPORTED;
    }
    if (rc)
        return rc;
    if (*stage != 1) {
        zf_codec_free(c);
        snprintf(err, errcap, "bytes->bytes codec \"%s\" before the array->bytes codec", name);
        return ZF_ECORRUPT;
    }
    return add_codec(p, c, err, errcap);
}

int zf_pipeline_from_v3(const cJSON *codecs, unsigned ndim, const uint64_t *chunk_shape,
                        zf_elem elem, zf_pipeline **out, char *err, size_t errcap)
{
    if (!cJSON_IsArray(codecs) || cJSON_GetArraySize(codecs) == 0) {
        snprintf(err, errcap, "\"codecs\" must be a non-empty array");
        return ZF_ECORRUPT;
    }
    zf_pipeline *p = pipeline_new(ndim, chunk_shape, elem, err, errcap);
    if (!p)
        return ZF_EUNSUPPORTED;
    p->v3 = 1;
    int stage = 0, rc = ZF_OK;
    for (const cJSON *e = codecs->child; e && rc == ZF_OK; e = e->next)
        rc = add_v3_entry(p, e, &stage, err, errcap);
    if (rc == ZF_OK && stage != 1) {
        snprintf(err, errcap, "no array->bytes codec");
        rc = ZF_ECORRUPT;
    }
    if (rc) {
        zf_pipeline_free(p);
        return rc;
    }
    *out = p;
    return ZF_OK;
}

/* one entry of a v2 "filters" list: a numcodecs array filter (before any
 * bytes filter) or a bytes->bytes codec */
static int add_v2_filter(zf_pipeline *p, const cJSON *f, char *err, size_t errcap)
{
    const cJSON *id = cJSON_IsObject(f) ? cJSON_GetObjectItemCaseSensitive(f, "id") : NULL;
    if (!cJSON_IsString(id)) {
        snprintf(err, errcap, "a filter has no string \"id\"");
        return ZF_ECORRUPT;
    }
    zf_filter *af = NULL;
    int rc = zf_filter_parse(id->valuestring, f, 0, p->elem, &af, err, errcap);
    if (rc == ZF_OK && p->ncodecs) {
        zf_filter_free(af);
        snprintf(err, errcap, "filter \"%s\" after the bytes filter \"%s\" is not supported",
                 id->valuestring, zf_codec_name(p->codecs[p->ncodecs - 1]));
        return ZF_EUNSUPPORTED;
    }
    if (rc != ZF_ENOTFOUND)
        return rc ? rc : add_filter(p, af, err, errcap);
    zf_codec *c = NULL;
    rc = zf_codec_from_v2(f, &c, err, errcap);
    if (rc == ZF_ENOTFOUND) {
        snprintf(err, errcap, "unsupported filter \"%.64s\"", id->valuestring);
        return ZF_EUNSUPPORTED;
    }
    return rc ? rc : add_codec(p, c, err, errcap);
}

/* the v2 "filters" (null or a list) and "compressor" (null or an object) */
static int add_v2_codecs(zf_pipeline *p, const cJSON *compressor, const cJSON *filters,
                         char *err, size_t errcap)
{
    int rc = ZF_OK;
    if (filters && !cJSON_IsNull(filters)) {
        if (!cJSON_IsArray(filters)) {
            snprintf(err, errcap, "\"filters\" must be null or a list");
            return ZF_ECORRUPT;
        }
        for (const cJSON *f = filters->child; f && rc == ZF_OK; f = f->next)
            rc = add_v2_filter(p, f, err, errcap);
    }
    if (rc || !compressor || cJSON_IsNull(compressor))
        return rc;
    zf_codec *c = NULL;
    rc = zf_codec_from_v2(compressor, &c, err, errcap);
    if (rc == ZF_ENOTFOUND) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(compressor, "id");
        snprintf(err, errcap, "unsupported compressor \"%.64s\"", id->valuestring);
        return ZF_EUNSUPPORTED;
    }
    return rc ? rc : add_codec(p, c, err, errcap);
}

int zf_pipeline_from_v2(const cJSON *compressor, const cJSON *filters, int big_endian,
                        char order, unsigned ndim, const uint64_t *chunk_shape,
                        zf_elem elem, zf_pipeline **out, char *err, size_t errcap)
{
    zf_pipeline *p = pipeline_new(ndim, chunk_shape, elem, err, errcap);
    if (!p)
        return ZF_EUNSUPPORTED;
    p->array_big = p->big_endian = big_endian && elem.size > 1;
    if (order == 'F') {
        for (unsigned i = 0; i < ndim; i++) {
            p->perm[i] = ndim - 1 - i;
            p->sshape[i] = chunk_shape[ndim - 1 - i];
        }
        p->transposed = ndim > 1;
    }
    int rc = add_v2_codecs(p, compressor, filters, err, errcap);
    if (rc) {
        zf_pipeline_free(p);
        return rc;
    }
    *out = p;
    return ZF_OK;
}

/* strides of the decoded (permuted) layout, per logical axis */
static void permuted_strides(const zf_pipeline *p, uint64_t *lstride)
{
    uint64_t dstride[ZF_MAX_DIMS], s = 1;
    for (unsigned i = p->ndim; i-- > 0;) {
        dstride[i] = s;
        s *= p->shape[p->perm[i]];
    }
    for (unsigned i = 0; i < p->ndim; i++)
        lstride[p->perm[i]] = dstride[i];
}

/* One gather loop per element width, so each copy is a plain load/store. */
#define ZF_UNTRANSPOSE(T)                                                                    \
    static void untranspose_##T(const zf_pipeline *p, const T *src, T *dst)                  \
    {                                                                                        \
        uint64_t lstride[ZF_MAX_DIMS], idx[ZF_MAX_DIMS] = {0};                               \
        unsigned n = p->ndim;                                                                \
        permuted_strides(p, lstride);                                                        \
        uint64_t inner = p->shape[n - 1], inner_stride = lstride[n - 1];                     \
        for (uint64_t done = 0; done < p->elems; done += inner) {                            \
            uint64_t off = 0;                                                                \
            for (unsigned k = 0; k + 1 < n; k++)                                             \
                off += idx[k] * lstride[k];                                                  \
            for (uint64_t j = 0; j < inner; j++)                                             \
                dst[done + j] = src[off + j * inner_stride];                                 \
            for (unsigned k = n - 1; k-- > 0;) {                                             \
                if (++idx[k] < p->shape[k])                                                  \
                    break;                                                                   \
                idx[k] = 0;                                                                  \
            }                                                                                \
        }                                                                                    \
    }
ZF_UNTRANSPOSE(uint8_t)
ZF_UNTRANSPOSE(uint16_t)
ZF_UNTRANSPOSE(uint32_t)
ZF_UNTRANSPOSE(uint64_t)

/* gather a decoded (permuted) chunk into C order of the logical shape */
static void untranspose(const zf_pipeline *p, const void *src, void *dst)
{
    switch (p->esize) {
    case 1: untranspose_uint8_t(p, src, dst); break;
    case 2: untranspose_uint16_t(p, src, dst); break;
    case 4: untranspose_uint32_t(p, src, dst); break;
    default: untranspose_uint64_t(p, src, dst); break;
    }
}

static int is_host_order(int big)
{
    return big == ZF_HOST_BIG;
}

static int no_memory(char *err, size_t errcap)
{
    snprintf(err, errcap, "out of memory");
    return ZF_ENOMEM;
}

static void *alloc(size_t n)
{
    return malloc(n ? n : 1);
}

/* run the bytes->bytes codecs backwards.  The last stage writes into direct
 * (capacity bytes_cap) when given; otherwise into a new buffer (*res, caller
 * frees).  *resn gets the decoded size. */
static int decode_bytes(const zf_pipeline *p, const uint8_t *in, size_t n, uint8_t *direct,
                        uint8_t **res, size_t *resn, char *err, size_t errcap)
{
    const uint8_t *cur = in;
    size_t curn = n;
    uint8_t *owned = NULL;
    int rc = ZF_OK;
    for (unsigned i = p->ncodecs; i-- > 0 && rc == ZF_OK;) {
        size_t cap = bytes_cap(p);
        for (unsigned k = 0; k < i; k++)
            cap = zf_codec_bound(cap);
        uint8_t *dst = i == 0 && direct ? direct : malloc(cap ? cap : 1);
        size_t got = 0;
        if (!dst) {
            snprintf(err, errcap, "out of memory");
            rc = ZF_ENOMEM;
        } else {
            rc = zf_codec_decode(p->codecs[i], cur, curn, dst, cap, &got, err, errcap);
        }
        free(owned);
        owned = dst == direct ? NULL : dst;
        cur = dst;
        curn = got;
    }
    if (rc) {
        free(owned);
        return rc;
    }
    *res = owned;
    *resn = curn;
    return ZF_OK;
}

/* the bytes stage of an unsharded chunk: decoded bytes -> a new buffer of
 * the stored elements in the machine's byte order (*res, caller frees) */
static int stored_elems(const zf_pipeline *p, const uint8_t *in, size_t n, uint8_t **res,
                        char *err, size_t errcap)
{
    uint8_t *buf = NULL;
    size_t len = n;
    int rc = ZF_OK;
    if (p->ncodecs)
        rc = decode_bytes(p, in, n, NULL, &buf, &len, err, errcap);
    if (rc == ZF_OK && len != p->sbytes) {
        snprintf(err, errcap, "chunk decodes to %zu bytes, expected %zu", len, p->sbytes);
        rc = ZF_ECORRUPT;
    }
    if (rc == ZF_OK && !buf) {
        if (!(buf = alloc(len)))
            rc = no_memory(err, errcap);
        else if (len)
            memcpy(buf, in, len);
    }
    if (rc) {
        free(buf);
        return rc;
    }
    if (!is_host_order(p->big_endian))
        zf_elem_swap(buf, p->elems, p->selem.size);
    *res = buf;
    return ZF_OK;
}

/* the numcodecs filters backwards: the stored elements at buf (clobbered)
 * -> the array's elements at dst, in the machine's byte order */
static int run_filters(const zf_pipeline *p, uint8_t *buf, void *dst, char *err, size_t errcap)
{
    void *cur = buf;
    int rc = ZF_OK;
    for (unsigned k = p->nfilters; k-- > 0 && rc == ZF_OK;) {
        const zf_filter *f = p->filters[k];
        zf_dtype dec = zf_filter_decoded(f);
        void *next = k ? alloc((size_t)p->elems * dec.elem.size) : dst;
        if (!next) {
            rc = no_memory(err, errcap);
            break;
        }
        rc = zf_filter_decode(f, cur, next, p->elems, err, errcap);
        int reader_big = k ? zf_filter_encoded(p->filters[k - 1]).big : p->array_big;
        if (rc == ZF_OK && dec.big != reader_big) /* the next reader views these bytes */
            zf_elem_swap(next, p->elems, dec.elem.size);
        if (cur != buf)
            free(cur);
        cur = next;
    }
    if (rc && cur != buf && cur != dst)
        free(cur);
    return rc;
}

/* an unsharded chunk: bytes stage, filters, transpose */
static int decode_array(const zf_pipeline *p, const uint8_t *in, size_t n, void *out,
                        char *err, size_t errcap)
{
    uint8_t *buf = NULL, *tmp = NULL;
    int rc = stored_elems(p, in, n, &buf, err, errcap);
    void *elems = buf; /* the array's elements in stored (memory) order */
    if (rc == ZF_OK && p->nfilters) {
        if (!p->transposed)
            elems = out;
        else if (!(elems = tmp = alloc(p->nbytes)))
            rc = no_memory(err, errcap);
        if (rc == ZF_OK)
            rc = run_filters(p, buf, elems, err, errcap);
    }
    if (rc == ZF_OK && p->transposed)
        untranspose(p, elems, out);
    else if (rc == ZF_OK && elems != out)
        memcpy(out, elems, p->nbytes);
    free(buf);
    free(tmp);
    return rc;
}

/* copy inner chunk k (C order of its own shape) into its place in the shard
 * (C order of the shard in the axes the sharding codec sees) */
static void scatter_inner(const zf_pipeline *p, uint64_t k, const uint8_t *src, uint8_t *dst)
{
    size_t es = p->esize;
    unsigned n = p->ndim;
    uint64_t origin[ZF_MAX_DIMS], idx[ZF_MAX_DIMS] = {0}, stride[ZF_MAX_DIMS], s = 1;
    for (unsigned d = n; d-- > 0;) {
        uint64_t g = p->sshape[d] / p->inner_shape[d];
        origin[d] = k % g * p->inner_shape[d];
        k /= g;
        stride[d] = s;
        s *= p->sshape[d];
    }
    uint64_t inner = n ? p->inner_shape[n - 1] : 1, total = p->inner->elems;
    for (uint64_t done = 0; done < total; done += inner) {
        uint64_t off = 0;
        for (unsigned d = 0; d < n; d++)
            off += (origin[d] + idx[d]) * stride[d];
        memcpy(dst + off * es, src + done * es, inner * es);
        for (unsigned d = n - 1; n && d-- > 0;) {
            if (++idx[d] < p->inner_shape[d])
                break;
            idx[d] = 0;
        }
    }
}

/* decode a whole shard held in memory into out (C order of the shard, in
 * the axes the sharding codec sees) */
static int decode_shard(const zf_pipeline *p, const uint8_t *in, size_t n, uint8_t *out,
                        char *err, size_t errcap)
{
    if (n < p->index_bytes) {
        snprintf(err, errcap, "shard of %zu bytes is smaller than its index", n);
        return ZF_ECORRUPT;
    }
    if (n > bytes_cap(p)) { /* as a whole-shard read refuses it (zf_pipeline_max_encoded) */
        snprintf(err, errcap, "shard of %zu bytes is larger than any valid encoding (%zu)", n,
                 bytes_cap(p));
        return ZF_ECORRUPT;
    }
    const uint8_t *ib = p->index_at_start ? in : in + n - p->index_bytes;
    uint64_t *idx = malloc(2 * p->inner_count * sizeof *idx);
    uint8_t *tmp = malloc(p->inner->nbytes ? p->inner->nbytes : 1);
    int rc = idx && tmp ? ZF_OK : ZF_ENOMEM;
    if (rc)
        snprintf(err, errcap, "out of memory");
    else
        rc = zf_pipeline_decode(p->index, ib, p->index_bytes, idx, err, errcap);
    for (uint64_t k = 0; rc == ZF_OK && k < p->inner_count; k++) {
        uint64_t off = idx[2 * k], len = idx[2 * k + 1];
        if (off == UINT64_MAX && len == UINT64_MAX) {
            for (uint64_t i = 0; i < p->inner->elems; i++)
                memcpy(tmp + i * p->esize, p->fill, p->esize);
        } else if (off > n || len > n - off) {
            snprintf(err, errcap, "shard index entry %llu points outside the shard", (unsigned long long)k);
            rc = ZF_ECORRUPT;
            break;
        } else {
            rc = zf_pipeline_decode(p->inner, in + off, (size_t)len, tmp, err, errcap);
        }
        if (rc == ZF_OK)
            scatter_inner(p, k, tmp, out);
    }
    free(idx);
    free(tmp);
    return rc;
}

/* a sharded chunk: bytes->bytes codecs over the whole shard, the shard,
 * then the transpose before it */
static int decode_sharded(const zf_pipeline *p, const uint8_t *in, size_t n, void *out,
                          char *err, size_t errcap)
{
    uint8_t *bytes = NULL, *tmp = NULL;
    size_t len = n;
    int rc = ZF_OK;
    if (p->ncodecs)
        rc = decode_bytes(p, in, n, NULL, &bytes, &len, err, errcap);
    if (rc == ZF_OK && p->transposed && !(tmp = alloc(p->nbytes)))
        rc = no_memory(err, errcap);
    if (rc == ZF_OK)
        rc = decode_shard(p, bytes ? bytes : in, len, tmp ? tmp : out, err, errcap);
    if (rc == ZF_OK && tmp)
        untranspose(p, tmp, out);
    free(bytes);
    free(tmp);
    return rc;
}

int zf_pipeline_decode(const zf_pipeline *p, const uint8_t *in, size_t n, void *out,
                       char *err, size_t errcap)
{
    if (p->inner)
        return decode_sharded(p, in, n, out, err, errcap);
    if (!p->transposed && !p->nfilters) { /* the common case: straight into out */
        uint8_t *none = NULL;
        size_t len = n;
        int rc = ZF_OK;
        if (p->ncodecs)
            rc = decode_bytes(p, in, n, (uint8_t *)out, &none, &len, err, errcap);
        else if (n == p->nbytes && n)
            memcpy(out, in, n);
        if (rc == ZF_OK && len != p->nbytes) {
            snprintf(err, errcap, "chunk decodes to %zu bytes, expected %zu", len, p->nbytes);
            rc = ZF_ECORRUPT;
        }
        if (rc == ZF_OK && !is_host_order(p->big_endian))
            zf_elem_swap(out, p->elems, p->esize);
        return rc;
    }
    return decode_array(p, in, n, out, err, errcap);
}

void zf_pipeline_set_fill(zf_pipeline *p, const void *fill)
{
    for (; p; p = p->inner)
        memcpy(p->fill, fill, p->esize);
}

/* inner chunks are read one by one only when nothing covers the whole
 * shard: no bytes->bytes codec over it, and no transpose before it (its
 * inner chunks are boxes of the transposed shard) */
int zf_pipeline_partial(const zf_pipeline *p)
{
    return p->inner && p->ncodecs == 0 && !p->transposed;
}

const zf_pipeline *zf_pipeline_inner(const zf_pipeline *p, const uint64_t **inner_shape)
{
    if (inner_shape)
        *inner_shape = p->inner_logical;
    return p->inner;
}

size_t zf_pipeline_index_bytes(const zf_pipeline *p, int *at_start)
{
    *at_start = p->index_at_start;
    return p->index_bytes;
}

int zf_pipeline_decode_index(const zf_pipeline *p, const uint8_t *in, size_t n, uint64_t *out,
                             char *err, size_t errcap)
{
    return zf_pipeline_decode(p->index, in, n, out, err, errcap);
}

uint64_t zf_pipeline_inner_count(const zf_pipeline *p)
{
    return p->inner_count;
}

void zf_pipeline_describe(const zf_pipeline *p, char *buf, size_t cap)
{
    size_t len;
    if (p->inner) {
        len = (size_t)snprintf(buf, cap, "%ssharding_indexed(index at %s; ",
                               p->transposed ? "transpose " : "", p->index_at_start ? "start" : "end");
        if (len < cap)
            zf_pipeline_describe(p->inner, buf + len, cap - len);
        len = strlen(buf);
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, ")");
        return;
    }
    len = (size_t)snprintf(buf, cap, "%s", p->transposed ? "transpose " : "");
    for (unsigned i = 0; i < p->nfilters && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s ", zf_filter_name(p->filters[i]));
    if (len < cap)
        len += (size_t)snprintf(buf + len, cap - len, "bytes(%s)", p->big_endian ? "big" : "little");
    for (unsigned i = 0; i < p->ncodecs && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, " %s", zf_codec_name(p->codecs[i]));
}
