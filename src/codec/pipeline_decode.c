/* pipeline_decode.c - decode one chunk through its pipeline (pipeline.c):
 * the bytes->bytes codecs backwards, the stored elements in the machine's
 * byte order, the numcodecs filters, the transpose, and sharding_indexed
 * shards (each inner chunk through the inner pipeline, the index through
 * its own).  Every decoded size is checked against the metadata. */
#include "codec/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"
#include "base/err.h"
#include "pipeline_impl.h"

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

/* most bytes the first `upto` bytes->bytes codecs (in encode order) can make of
 * what the array->bytes stage holds */
static size_t encoded_cap(const zf_pipeline *p, unsigned upto)
{
    size_t n = bytes_cap(p);
    for (unsigned i = 0; i < upto; i++)
        n = zf_codec_max_encoded(p->codecs[i], n);
    return n;
}

size_t zf_pipeline_max_encoded(const zf_pipeline *p)
{
    return encoded_cap(p, p->ncodecs);
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
        size_t cap = encoded_cap(p, i); /* what codecs 0 .. i-1 made */
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
 * the axes the sharding codec sees); its index is checked first
 * (zf_pipeline_decode_index), so no stored byte is decoded twice */
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
        rc = zf_pipeline_decode_index(p, ib, n, idx, err, errcap);
    for (uint64_t k = 0; rc == ZF_OK && k < p->inner_count; k++) {
        uint64_t off = idx[2 * k], len = idx[2 * k + 1];
        if (zf_deadline_spent()) { /* the request was abandoned (base/deadline.h): not damage */
            snprintf(err, errcap, "the request's time budget was spent, or it was cancelled");
            rc = ZF_EIO;
        } else if (off == UINT64_MAX && len == UINT64_MAX) {
            for (uint64_t i = 0; i < p->inner->elems; i++)
                memcpy(tmp + i * p->esize, p->fill, p->esize);
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
