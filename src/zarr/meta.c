/* meta.c - what parsing v3 and v2 metadata share (meta_v3.c, meta_v2.c):
 * shapes and chunk shapes, fill values, dimension names, the CF hooks, the
 * end of every parse, and the chunk keys of an array. */
#include "zarr/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "meta_impl.h"

/* largest element count accepted: keeps every text offset inside off_t */
#define ZF_MAX_ELEMS (UINT64_C(1) << 56)

/* do chunks of this shape hold at most ZF_MAX_CHUNK_ELEMS values (the unit
 * decoded at once)? */
static int chunk_fits(unsigned ndim, const uint64_t *chunks, char *err, size_t errcap)
{
    uint64_t elems = 1;
    for (unsigned d = 0; d < ndim; d++) {
        if (chunks[d] > ZF_MAX_CHUNK_ELEMS / elems)
            return ERR(ZF_EUNSUPPORTED, "chunks larger than 2^28 values are not supported");
        elems *= chunks[d];
    }
    return ZF_OK;
}

void zf_meta_clear(zf_meta *m)
{
    for (unsigned i = 0; i < ZF_MAX_DIMS; i++) {
        free(m->dim_names[i]);
        m->dim_names[i] = NULL;
    }
    zf_pipeline_free(m->pipeline);
    m->pipeline = NULL;
    free(m->coordinates);
    m->coordinates = NULL;
    free(m->attributes);
    m->attributes = NULL;
}

/* keep the attribute "coordinates" (xarray's non-dimension coordinates) if
 * it is a string; ZF_OK or ZF_ENOMEM */
int zf_meta_keep_coordinates(const cJSON *attrs, zf_meta *m)
{
    const cJSON *c = cJSON_IsObject(attrs) ? cJSON_GetObjectItemCaseSensitive(attrs, "coordinates")
                                           : NULL;
    if (!cJSON_IsString(c))
        return ZF_OK;
    m->coordinates = strdup(c->valuestring);
    return m->coordinates ? ZF_OK : ZF_ENOMEM;
}

int zf_meta_names_of(const cJSON *shape, const cJSON *names, const cJSON *attrs, zf_meta *m)
{
    char err[8];
    int n = cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : -1;
    m->ndim = n >= 0 && n <= ZF_MAX_DIMS ? (unsigned)n : (unsigned)-1;
    int rc = m->ndim == (unsigned)-1 ? ZF_OK : zf_meta_parse_dim_names(names, "", m, err, sizeof err);
    for (unsigned d = 0; rc && d < ZF_MAX_DIMS; d++) { /* invalid names: none */
        free(m->dim_names[d]);
        m->dim_names[d] = NULL;
    }
    return rc == ZF_ENOMEM ? rc : zf_meta_keep_coordinates(attrs, m);
}

/* the raw text of the value at the key path keys (NULL-terminated) in the
 * JSON object text; NULL if a key is absent */
const char *zf_meta_raw_at(const char *text, size_t n, const char *const *keys, size_t *len)
{
    const char *span = text;
    size_t slen = n;
    for (; *keys; keys++)
        if (zf_json_raw_member(span, slen, *keys, &span, &slen) != ZF_OK)
            return NULL;
    *len = slen;
    return span;
}

/* a JSON array of ndim integers in [min_value, 2^56] (min_value: 0 for
 * shapes, 1 for chunks); raw (may be NULL) is its text, read exactly (a
 * double holds integers only up to 2^53) */
int zf_meta_parse_dims(const cJSON *a, const char *raw, size_t rawlen, const char *what,
                       int64_t min_value, unsigned *ndim, uint64_t *out, char *err, size_t errcap)
{
    if (!cJSON_IsArray(a))
        return ERR(ZF_ECORRUPT, "\"%s\" is not an array", what);
    int n = cJSON_GetArraySize(a);
    if (n > ZF_MAX_DIMS)
        return ERR(ZF_EUNSUPPORTED, "\"%s\" has %d dimensions (at most %d)", what, n, ZF_MAX_DIMS);
    if (*ndim != (unsigned)-1 && (unsigned)n != *ndim)
        return ERR(ZF_ECORRUPT, "\"%s\" has %d dimensions, the shape has %u", what, n, *ndim);
    int64_t exact[ZF_MAX_DIMS];
    unsigned nexact = 0;
    int have = raw && zf_json_raw_int_array(raw, rawlen, exact, ZF_MAX_DIMS, &nexact) == ZF_OK &&
               nexact == (unsigned)n;
    unsigned i = 0;
    for (const cJSON *d = a->child; d; d = d->next, i++) {
        int64_t v = have ? exact[i] : 0;
        int ok = have ? cJSON_IsNumber(d) && v >= min_value && v <= (int64_t)ZF_MAX_ELEMS
                      : zf_json_int(d, min_value, (int64_t)ZF_MAX_ELEMS, &v);
        if (!ok)
            return ERR(ZF_ECORRUPT, "\"%s\"[%u] is not an integer in [%lld, 2^56]", what, i,
                       (long long)min_value);
        out[i] = (uint64_t)v;
    }
    *ndim = (unsigned)n;
    return ZF_OK;
}

int zf_meta_count_elems(zf_meta *m, char *err, size_t errcap)
{
    m->nelems = 1;
    for (unsigned i = 0; i < m->ndim; i++) {
        if (m->shape[i] && m->nelems > ZF_MAX_ELEMS / m->shape[i])
            return ERR(ZF_EUNSUPPORTED, "the array has more than 2^56 elements");
        m->nelems *= m->shape[i];
    }
    return ZF_OK;
}

/* fill value: an exact integer literal, or "NaT" (null too, when allow_null) */
static int parse_fill(const char *text, size_t n, const cJSON *fill, int allow_null, zf_meta *m,
                      char *err, size_t errcap)
{
    if (cJSON_IsString(fill) && !strcmp(fill->valuestring, "NaT")) {
        m->fill = ZF_NAT;
        snprintf(m->fill_text, sizeof m->fill_text, "\"NaT\"");
        return ZF_OK;
    }
    if (allow_null && cJSON_IsNull(fill)) {
        m->fill = ZF_NAT;
        snprintf(m->fill_text, sizeof m->fill_text, "null");
        return ZF_OK;
    }
    if (!cJSON_IsNumber(fill) || zf_json_raw_int64(text, n, "fill_value", &m->fill) != ZF_OK)
        return ERR(ZF_ECORRUPT, "fill_value must be an int64 integer or \"NaT\"");
    snprintf(m->fill_text, sizeof m->fill_text, "%lld", (long long)m->fill);
    return ZF_OK;
}

/* the fill value: ticks of a native array, a stored element of a CF one */
int zf_meta_parse_fill_of(const char *text, size_t n, const cJSON *fill, int allow_null,
                          zf_meta *m, char *err, size_t errcap)
{
    if (m->cf.how == ZF_CF_NATIVE)
        return parse_fill(text, n, fill, allow_null, m, err, errcap);
    m->fill = ZF_NAT;
    return zf_cf_parse_fill(&m->cf, m->zarr_format, fill, text, n, m->fill_text,
                            sizeof m->fill_text, err, errcap);
}

/* CF hook (cf.h): the mask and packing attributes of a CF duration or time array;
 * attrs (an object or NULL) and its text raw[0..rn) */
int zf_meta_cf_finish(const cJSON *attrs, const char *raw, size_t rn, zf_meta *m, char *err,
                      size_t errcap)
{
    if (m->cf.how == ZF_CF_NATIVE)
        return ZF_OK;
    int rc = zf_cf_parse(&m->cf, m->zarr_format, attrs, raw, rn, err, errcap);
    if (m->cf.how == ZF_CF_SINCE)
        m->values = m->cf.decoding == ZF_CF_DEC_CFTIME ? ZF_VALUES_CFTIME : ZF_VALUES_DATETIME;
    m->unit = m->cf.unit;
    m->scale = 1;
    return rc;
}

int zf_meta_parse_dim_names(const cJSON *names, const char *what, zf_meta *m, char *err,
                            size_t errcap)
{
    if (!names || cJSON_IsNull(names))
        return ZF_OK;
    if (!cJSON_IsArray(names) || (unsigned)cJSON_GetArraySize(names) != m->ndim)
        return ERR(ZF_ECORRUPT, "\"%s\" must list %u names", what, m->ndim);
    unsigned i = 0;
    for (const cJSON *d = names->child; d; d = d->next, i++) {
        if (cJSON_IsNull(d))
            continue;
        if (!cJSON_IsString(d))
            return ERR(ZF_ECORRUPT, "\"%s\"[%u] is not a string", what, i);
        if (!(m->dim_names[i] = strdup(d->valuestring)))
            return ERR(ZF_ENOMEM, "out of memory");
    }
    return ZF_OK;
}

/* the innermost chunk shape of a (possibly nested) sharded pipeline; the unit
 * decoded at once must stay within ZF_MAX_CHUNK_ELEMS */
static int set_read_chunks(zf_meta *m, char *err, size_t errcap)
{
    memcpy(m->read_chunks, m->chunks, sizeof m->chunks);
    zf_pipeline_set_fill(m->pipeline, m->cf.how == ZF_CF_NATIVE ? (const void *)&m->fill
                                                                : m->cf.fill_raw); /* the stored form */
    const uint64_t *inner;
    for (const zf_pipeline *p = m->pipeline; zf_pipeline_partial(p); p = zf_pipeline_inner(p, NULL)) {
        zf_pipeline_inner(p, &inner);
        memcpy(m->read_chunks, inner, m->ndim * sizeof *inner);
    }
    return chunk_fits(m->ndim, m->read_chunks, err, errcap);
}

int zf_meta_end(zf_meta *out, zf_node_kind kind, int rc, char *err, size_t errcap)
{
    if (rc == ZF_OK && kind == ZF_KIND_TIMEDELTA)
        rc = set_read_chunks(out, err, errcap);
    if (rc)
        zf_meta_clear(out);
    return rc;
}

int zf_meta_chunk_key(const zf_meta *m, const uint64_t *coords, char *buf, size_t cap)
{
    size_t len = 0;
    int w;
    if (!m->key_v2) {
        w = snprintf(buf, cap, "c");
        len = (size_t)w;
    }
    for (unsigned i = 0; i < m->ndim; i++) {
        int first = m->key_v2 && i == 0;
        w = snprintf(buf + len, len < cap ? cap - len : 0, "%s%llu", first ? "" : (m->separator == '/' ? "/" : "."),
                     (unsigned long long)coords[i]);
        len += (size_t)w;
        if (len >= cap)
            return ZF_EINVAL;
    }
    if (m->key_v2 && m->ndim == 0)
        len = (size_t)snprintf(buf, cap, "0");
    return len < cap ? ZF_OK : ZF_EINVAL;
}

/* parse one canonical decimal number at *p (no sign, no leading zeros) */
static int key_number(const char **p, uint64_t *out)
{
    const char *q = *p;
    uint64_t v = 0;
    if (*q < '0' || *q > '9' || (q[0] == '0' && q[1] >= '0' && q[1] <= '9'))
        return ZF_ENOTFOUND;
    for (; *q >= '0' && *q <= '9'; q++) {
        unsigned d = (unsigned)(*q - '0');
        if (v > (UINT64_MAX - d) / 10)
            return ZF_ENOTFOUND;
        v = v * 10 + d;
    }
    *p = q;
    *out = v;
    return ZF_OK;
}

int zf_meta_chunk_coords(const zf_meta *m, const char *key, uint64_t *coords)
{
    if (m->key_v2 && m->ndim == 0)
        return strcmp(key, "0") ? ZF_ENOTFOUND : ZF_OK;
    const char *p = key;
    if (!m->key_v2 && *p++ != 'c')
        return ZF_ENOTFOUND;
    for (unsigned i = 0; i < m->ndim; i++) {
        if (!(m->key_v2 && i == 0) && *p++ != (m->separator == '/' ? '/' : '.'))
            return ZF_ENOTFOUND;
        if (key_number(&p, &coords[i]))
            return ZF_ENOTFOUND;
    }
    return *p ? ZF_ENOTFOUND : ZF_OK;
}

/* ---- plain arrays: numbers, bools and strings -------------------------- */

void zf_plain_meta_clear(zf_plain_meta *p)
{
    zf_meta_clear(&p->m);
    for (unsigned i = 0; i < p->ncodecs; i++)
        zf_codec_free(p->codecs[i]);
    p->ncodecs = 0;
    zf_pipeline_free(p->shard);
    p->shard = NULL;
}

/* a fixed string length in bytes: 1 .. 2^20, a multiple of unit */
int zf_plain_item_length(int64_t v, unsigned unit, zf_plain_meta *p, char *err, size_t errcap)
{
    if (v < 1 || v > (1 << 20) || v % unit)
        return ERR(ZF_EUNSUPPORTED, "fixed-length strings of %lld bytes are not supported",
                   (long long)v);
    p->item_bytes = (uint32_t)v;
    return ZF_OK;
}

/* is the array a string type? */
int zf_plain_is_string(const zf_plain_meta *p)
{
    return p->type != ZF_PLAIN_NUMBER && p->type != ZF_PLAIN_BOOL;
}

/* attributes xarray decodes as times, or with coders not reproduced here */
int zf_plain_attrs_check(const zf_plain_meta *p, const cJSON *attrs, char *err, size_t errcap)
{
    if (!attrs)
        return ZF_OK;
    if (!cJSON_IsObject(attrs))
        return ERR(ZF_ECORRUPT, "the attributes are not an object");
    zf_cf cf;
    memset(&cf, 0, sizeof cf);
    cf.elem = p->m.elem;
    int rc = p->type == ZF_PLAIN_NUMBER ? zf_cf_units(&cf, attrs, err, errcap) : 0;
    if (rc < 0)
        return rc;
    if (rc > 0)
        return ERR(ZF_EUNSUPPORTED, "a time type (CF units attribute)");
    static const char *const coders[] = {"_Unsigned", "_FillValue", "missing_value",
                                         "scale_factor", "add_offset", NULL};
    /* numbers: only _Unsigned is not reproduced; bools and strings: none */
    for (const char *const *k = coders; *k && (k == coders || p->type != ZF_PLAIN_NUMBER); k++)
        if (cJSON_GetObjectItemCaseSensitive(attrs, *k))
            return ERR(ZF_EUNSUPPORTED, "the %s attribute on %s values is not supported", *k,
                       p->type == ZF_PLAIN_NUMBER ? "numeric" : p->type == ZF_PLAIN_BOOL ? "bool" : "string");
    return ZF_OK;
}

/* the fill value of a bool or string array (a number's goes through cf.h) */
static int plain_fill_other(const zf_plain_meta *p, const cJSON *fill, zf_meta *m, char *err,
                            size_t errcap)
{
    if (p->type == ZF_PLAIN_BOOL) {
        if (m->zarr_format == 2 && cJSON_IsNull(fill))
            return ZF_OK;
        if (!cJSON_IsBool(fill))
            return ERR(ZF_ECORRUPT, "bool fill_value must be true or false");
        m->cf.fill_raw[0] = cJSON_IsTrue(fill);
        if (m->zarr_format == 2) { /* xarray's _FillValue: that value is masked */
            m->cf.mask_int = 1;
            m->cf.nmask_i = 1;
            m->cf.mask_i[0] = m->cf.fill_raw[0];
        }
        return ZF_OK;
    }
    if ((m->zarr_format == 2 && cJSON_IsNull(fill)) || (cJSON_IsString(fill) && !fill->valuestring[0]) ||
        (m->zarr_format == 2 && cJSON_IsNumber(fill) && fill->valuedouble == 0))
        return ZF_OK;
    return ERR(ZF_EUNSUPPORTED, "strings with a fill value other than \"\" are not supported");
}

/* fill value, and for numbers xarray's mask and packing (cf.h) */
int zf_plain_fill(zf_plain_meta *p, const char *doc, size_t n, const cJSON *fill,
                  const cJSON *attrs, const char *raw, size_t rn, char *err, size_t errcap)
{
    zf_meta *m = &p->m;
    if (p->type != ZF_PLAIN_NUMBER)
        return plain_fill_other(p, fill, m, err, errcap);
    m->cf.elem = m->elem;
    int rc = zf_cf_parse_fill(&m->cf, m->zarr_format, fill, doc, n, m->fill_text,
                              sizeof m->fill_text, err, errcap);
    if (rc == ZF_OK)
        rc = zf_cf_parse(&m->cf, m->zarr_format, attrs, raw, rn, err, errcap);
    if (rc == ZF_OK && m->cf.pack == ZF_CF_PACK_I64)
        return ERR(ZF_EUNSUPPORTED, "an integer scale_factor without add_offset is not supported");
    return rc;
}

/* add a bytes->bytes codec of a string array */
int zf_plain_add_codec(zf_plain_meta *p, zf_codec *c, char *err, size_t errcap)
{
    if (p->ncodecs == ZF_PLAIN_MAX_CODECS) {
        zf_codec_free(c);
        return ERR(ZF_EUNSUPPORTED, "more than %d codecs", ZF_PLAIN_MAX_CODECS);
    }
    p->codecs[p->ncodecs++] = c;
    return ZF_OK;
}

/* the decoding of whole chunks: a pipeline for numbers and bools, a chunk
 * of at most 2^28 elements */
static int plain_finish(zf_plain_meta *p, char *err, size_t errcap)
{
    if (!p->shard)
        memcpy(p->m.read_chunks, p->m.chunks, sizeof p->m.chunks);
    int rc = chunk_fits(p->m.ndim, p->m.read_chunks, err, errcap);
    if (rc)
        return rc;
    if (p->m.pipeline)
        zf_pipeline_set_fill(p->m.pipeline, p->m.cf.fill_raw);
    return ZF_OK;
}

int zf_plain_end(zf_plain_meta *out, int rc, char *err, size_t errcap)
{
    if (rc == ZF_OK)
        rc = plain_finish(out, err, errcap);
    if (rc)
        zf_plain_meta_clear(out);
    return rc;
}

