/* pipeline.c - chunk codec chain: bytes->bytes codecs, bytes, transpose. */
#include "codec/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "base/err.h"
#include "base/json.h"

#define ZF_MAX_CODECS 16

struct zf_pipeline {
    unsigned ndim;
    uint64_t shape[ZF_MAX_DIMS]; /* logical chunk shape */
    unsigned perm[ZF_MAX_DIMS];  /* decoded axis i is logical axis perm[i] */
    int transposed;              /* perm is not the identity */
    int big_endian;
    zf_elem elem;                /* the decoded element type */
    unsigned esize;              /* bytes per element: 1, 2, 4 or 8 */
    uint64_t elems;
    size_t nbytes;               /* elems * esize */
    unsigned ncodecs;            /* bytes->bytes, in encode order */
    zf_codec *codecs[ZF_MAX_CODECS];
    zf_pipeline *inner;          /* sharding: pipeline of one inner chunk */
    zf_pipeline *index;          /* sharding: pipeline of the shard index */
    uint64_t inner_shape[ZF_MAX_DIMS];
    uint64_t inner_count;        /* inner chunks per shard */
    int index_at_start;
    size_t index_bytes;          /* encoded size of the shard index */
    uint8_t fill[8];             /* element of empty inner chunks (esize bytes) */
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
    p->elem = elem;
    p->esize = esize;
    p->elems = 1;
    for (unsigned i = 0; i < ndim; i++) {
        p->shape[i] = shape[i];
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
    p->nbytes = (size_t)p->elems * esize; /* <= 2^59 */
    return p;
}

void zf_pipeline_free(zf_pipeline *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->ncodecs; i++)
        zf_codec_free(p->codecs[i]);
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
        return p->nbytes;
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
    for (unsigned i = 0; i < p->ndim; i++)
        p->transposed |= p->perm[i] != i;
    return ZF_OK;
}

/* the "bytes" array->bytes codec: only its endianness matters */
static int set_bytes(zf_pipeline *p, const cJSON *config, char *err, size_t errcap)
{
    const cJSON *e = config ? cJSON_GetObjectItemCaseSensitive(config, "endian") : NULL;
    static const char *const keys[] = {"endian", NULL};
    if (!e && p->esize == 1) /* one-byte values have no byte order */
        return zf_json_only_keys(config, keys, "bytes", err, errcap);
    if (!cJSON_IsString(e) || (strcmp(e->valuestring, "little") && strcmp(e->valuestring, "big"))) {
        snprintf(err, errcap, "bytes: \"endian\" must be \"little\" or \"big\" for %u-byte values",
                 p->esize);
        return ZF_ECORRUPT;
    }
    p->big_endian = p->esize > 1 && !strcmp(e->valuestring, "big");
    return zf_json_only_keys(config, keys, "bytes", err, errcap);
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
    if (p->transposed) {
        snprintf(err, errcap, "sharding_indexed after transpose is not supported");
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
        if (!zf_json_int(c, 1, INT64_MAX, &v) || p->shape[d] % (uint64_t)v) {
            snprintf(err, errcap, "sharding_indexed: inner chunk shape must divide the shard shape");
            return ZF_ECORRUPT;
        }
        p->inner_shape[d] = (uint64_t)v;
        grid[d] = p->shape[d] / (uint64_t)v;
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
    zf_codec *c = NULL;
    rc = zf_codec_from_v3(entry, &c, err, errcap);
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

int zf_pipeline_from_v2(const cJSON *compressor, const cJSON *filters, int big_endian,
                        char order, unsigned ndim, const uint64_t *chunk_shape,
                        zf_elem elem, zf_pipeline **out, char *err, size_t errcap)
{
    if (filters && !cJSON_IsNull(filters) &&
        !(cJSON_IsArray(filters) && cJSON_GetArraySize(filters) == 0)) {
        const cJSON *f0 = cJSON_IsArray(filters) ? filters->child : NULL;
        const cJSON *id = f0 ? cJSON_GetObjectItemCaseSensitive(f0, "id") : NULL;
        snprintf(err, errcap, "unsupported filter \"%s\"", cJSON_IsString(id) ? id->valuestring : "?");
        return ZF_EUNSUPPORTED;
    }
    zf_pipeline *p = pipeline_new(ndim, chunk_shape, elem, err, errcap);
    if (!p)
        return ZF_EUNSUPPORTED;
    p->big_endian = big_endian && elem.size > 1;
    if (order == 'F') {
        for (unsigned i = 0; i < ndim; i++)
            p->perm[i] = ndim - 1 - i;
        p->transposed = ndim > 1;
    }
    int rc = ZF_OK;
    if (compressor && !cJSON_IsNull(compressor)) {
        zf_codec *c = NULL;
        rc = zf_codec_from_v2(compressor, &c, err, errcap);
        if (rc == ZF_OK)
            rc = add_codec(p, c, err, errcap);
    }
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

/* reverse the byte order of each of the n elements at v */
static void swap_all(const zf_pipeline *p, void *v, uint64_t n)
{
    if (p->esize == 8) {
        uint64_t *w = v;
        for (uint64_t i = 0; i < n; i++)
            w[i] = __builtin_bswap64(w[i]);
    } else if (p->esize == 4) {
        uint32_t *w = v;
        for (uint64_t i = 0; i < n; i++)
            w[i] = __builtin_bswap32(w[i]);
    } else if (p->esize == 2) {
        uint16_t *w = v;
        for (uint64_t i = 0; i < n; i++)
            w[i] = __builtin_bswap16(w[i]);
    }
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

static int decode_plain(const zf_pipeline *p, const uint8_t *in, size_t n, void *out,
                        char *err, size_t errcap)
{
    if (n != p->nbytes) {
        snprintf(err, errcap, "chunk decodes to %zu bytes, expected %zu", n, p->nbytes);
        return ZF_ECORRUPT;
    }
    void *tmp = out;
    if (p->transposed && !(tmp = malloc(p->nbytes ? p->nbytes : 1))) {
        snprintf(err, errcap, "out of memory");
        return ZF_ENOMEM;
    }
    memcpy(tmp, in, n);
    if (p->big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
        swap_all(p, tmp, p->elems);
    if (p->transposed) {
        untranspose(p, tmp, out);
        free(tmp);
    }
    return ZF_OK;
}

/* copy inner chunk k (C order of its own shape) into its place in the shard */
static void scatter_inner(const zf_pipeline *p, uint64_t k, const uint8_t *src, uint8_t *dst)
{
    size_t es = p->esize;
    unsigned n = p->ndim;
    uint64_t origin[ZF_MAX_DIMS], idx[ZF_MAX_DIMS] = {0}, stride[ZF_MAX_DIMS], s = 1;
    for (unsigned d = n; d-- > 0;) {
        uint64_t g = p->shape[d] / p->inner_shape[d];
        origin[d] = k % g * p->inner_shape[d];
        k /= g;
        stride[d] = s;
        s *= p->shape[d];
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

/* decode a whole shard held in memory into out (C order of the shard) */
static int decode_shard(const zf_pipeline *p, const uint8_t *in, size_t n, uint8_t *out,
                        char *err, size_t errcap)
{
    if (n < p->index_bytes) {
        snprintf(err, errcap, "shard of %zu bytes is smaller than its index", n);
        return ZF_ECORRUPT;
    }
    const uint8_t *ib = p->index_at_start ? in : in + n - p->index_bytes;
    uint64_t *idx = malloc(2 * p->inner_count * sizeof *idx);
    uint8_t *tmp = malloc(p->inner->nbytes ? p->inner->nbytes : 1);
    int rc = idx && tmp ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK)
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

int zf_pipeline_decode(const zf_pipeline *p, const uint8_t *in, size_t n, void *out,
                       char *err, size_t errcap)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    int rc;
    if (p->ncodecs == 0) /* no copy needed */
        return p->inner ? decode_shard(p, in, n, out, err, errcap)
                        : decode_plain(p, in, n, out, err, errcap);
    if (!p->inner && !p->transposed) { /* the common case: decompress in place */
        rc = decode_bytes(p, in, n, (uint8_t *)out, &bytes, &len, err, errcap);
        if (rc == ZF_OK && len != p->nbytes) {
            snprintf(err, errcap, "chunk decodes to %zu bytes, expected %zu", len, p->nbytes);
            rc = ZF_ECORRUPT;
        }
        if (rc == ZF_OK && p->big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
            swap_all(p, out, p->elems);
        return rc;
    }
    rc = decode_bytes(p, in, n, NULL, &bytes, &len, err, errcap);
    if (rc == ZF_OK)
        rc = p->inner ? decode_shard(p, bytes, len, out, err, errcap)
                      : decode_plain(p, bytes, len, out, err, errcap);
    free(bytes);
    return rc;
}

void zf_pipeline_set_fill(zf_pipeline *p, const void *fill)
{
    for (; p; p = p->inner)
        memcpy(p->fill, fill, p->esize);
}

int zf_pipeline_partial(const zf_pipeline *p)
{
    return p->inner && p->ncodecs == 0;
}

const zf_pipeline *zf_pipeline_inner(const zf_pipeline *p, const uint64_t **inner_shape)
{
    if (inner_shape)
        *inner_shape = p->inner_shape;
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
        len = (size_t)snprintf(buf, cap, "sharding_indexed(index at %s; ", p->index_at_start ? "start" : "end");
        if (len < cap)
            zf_pipeline_describe(p->inner, buf + len, cap - len);
        len = strlen(buf);
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, ")");
        return;
    }
    len = (size_t)snprintf(buf, cap, "%sbytes(%s)", p->transposed ? "transpose " : "",
                           p->big_endian ? "big" : "little");
    for (unsigned i = 0; i < p->ncodecs && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, " %s", zf_codec_name(p->codecs[i]));
}
