/* pipeline.c - the chunk codec chain read from metadata: bytes->bytes codecs,
 * bytes or sharding_indexed, numcodecs filters, transpose (decoding a chunk
 * through it: pipeline_decode.c).
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

#include "base/err.h"
#include "base/json.h"
#include "pipeline_impl.h"

static zf_pipeline *pipeline_new(unsigned ndim, const uint64_t *shape, zf_elem elem, char *err,
                                 size_t errcap)
{
    unsigned esize = elem.size;
    if ((esize != 1 && esize != 2 && esize != 4 && esize != 8) ||
        (elem.kind == ZF_ELEM_FLOAT && esize < 2)) {
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
    } else if (p->elem.kind == ZF_ELEM_FLOAT && p->elem.size == 2) {
        snprintf(err, errcap, "%s on float16 data is not supported", zf_filter_name(f));
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

/* the sharding_indexed array->bytes codec: inner chunks readable one by one
 * (decoded by the inner pipeline; frame: by the caller, no inner pipeline) */
static int set_sharding(zf_pipeline *p, const cJSON *config, int frame, char *err, size_t errcap)
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
    if ((!frame && (rc = zf_pipeline_from_v3(cJSON_GetObjectItemCaseSensitive(config, "codecs"),
                                             p->ndim, p->inner_shape, p->elem, &p->inner, err,
                                             errcap))) ||
        (rc = zf_pipeline_from_v3(cJSON_GetObjectItemCaseSensitive(config, "index_codecs"),
                                  p->ndim + 1, grid, (zf_elem){ZF_ELEM_UINT, 8}, &p->index, err,
                                  errcap)))
        return rc;
    unsigned levels = 1;
    for (const zf_pipeline *q = p->inner; q && q->inner; q = q->inner) /* (a frame: none) */
        levels++;
    if (levels > ZF_MAX_SHARD_LEVELS) {
        snprintf(err, errcap, "sharding_indexed nested more than %d levels deep",
                 ZF_MAX_SHARD_LEVELS);
        return ZF_EUNSUPPORTED;
    }
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
            return set_sharding(p, config, 0, err, errcap);
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

int zf_pipeline_shard_frame(const cJSON *config, unsigned ndim, const uint64_t *shard_shape,
                            zf_pipeline **out, char *err, size_t errcap)
{
    zf_pipeline *p = pipeline_new(ndim, shard_shape, (zf_elem){ZF_ELEM_UINT, 1}, err, errcap);
    if (!p)
        return ZF_EUNSUPPORTED;
    p->v3 = 1;
    int rc = set_sharding(p, config, 1, err, errcap);
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
