/* meta.c - parse v3 zarr.json and v2 .zarray/.zattrs into a zf_meta. */
#include "zarr/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))

/* largest element count accepted: keeps every text offset inside off_t */
#define ZF_MAX_ELEMS (UINT64_C(1) << 56)

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
}

/* keep the attribute "coordinates" (xarray's non-dimension coordinates) if
 * it is a string; ZF_OK or ZF_ENOMEM */
static int keep_coordinates(const cJSON *attrs, zf_meta *m)
{
    const cJSON *c = cJSON_IsObject(attrs) ? cJSON_GetObjectItemCaseSensitive(attrs, "coordinates")
                                           : NULL;
    if (!cJSON_IsString(c))
        return ZF_OK;
    m->coordinates = strdup(c->valuestring);
    return m->coordinates ? ZF_OK : ZF_ENOMEM;
}

/* the raw text of the value at the key path keys (NULL-terminated) in the
 * JSON object text; NULL if a key is absent */
static const char *raw_at(const char *text, size_t n, const char *const *keys, size_t *len)
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
static int parse_dims(const cJSON *a, const char *raw, size_t rawlen, const char *what,
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

static int count_elems(zf_meta *m, char *err, size_t errcap)
{
    m->nelems = 1;
    for (unsigned i = 0; i < m->ndim; i++) {
        if (m->shape[i] && m->nelems > ZF_MAX_ELEMS / m->shape[i])
            return ERR(ZF_EUNSUPPORTED, "the array has more than 2^56 elements");
        m->nelems *= m->shape[i];
    }
    return ZF_OK;
}

/* the numpy.timedelta64 / numpy.datetime64 configuration (type is the data
 * type's name): exactly unit and scale_factor */
static int parse_td_config(const cJSON *config, const char *type, zf_meta *m, char *err,
                           size_t errcap)
{
    if (!cJSON_IsObject(config))
        return ERR(ZF_ECORRUPT, "%s needs a configuration", type);
    static const char *const keys[] = {"unit", "scale_factor", NULL};
    int rc = zf_json_only_keys(config, keys, type, err, errcap);
    if (rc)
        return rc;
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(config, "unit");
    const cJSON *scale = cJSON_GetObjectItemCaseSensitive(config, "scale_factor");
    if (!cJSON_IsString(unit))
        return ERR(ZF_ECORRUPT, "%s: \"unit\" is not a string", type);
    if (zf_unit_parse(unit->valuestring, &m->unit) != ZF_OK)
        return ERR(ZF_ECORRUPT, "%s: invalid unit \"%.20s\"", type, unit->valuestring);
    int64_t s;
    if (!zf_json_int(scale, 1, INT32_MAX, &s))
        return ERR(ZF_ECORRUPT, "%s: scale_factor must be an integer in [1, 2147483647]", type);
    m->scale = (uint32_t)s;
    if (m->scale == 1)
        snprintf(m->dtype_text, sizeof m->dtype_text, "%s[%s]", type, zf_unit_name(m->unit));
    else
        snprintf(m->dtype_text, sizeof m->dtype_text, "%s[%u%s]", type, m->scale,
                 zf_unit_name(m->unit));
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
static int parse_fill_of(const char *text, size_t n, const cJSON *fill, int allow_null, zf_meta *m,
                         char *err, size_t errcap)
{
    if (m->cf.how == ZF_CF_NATIVE)
        return parse_fill(text, n, fill, allow_null, m, err, errcap);
    m->fill = ZF_NAT;
    return zf_cf_parse_fill(&m->cf, m->zarr_format, fill, text, n, m->fill_text,
                            sizeof m->fill_text, err, errcap);
}

/* CF hook (cf.h): the mask and packing attributes of a CF duration or time array;
 * attrs (an object or NULL) and its text raw[0..rn) */
static int cf_finish(const cJSON *attrs, const char *raw, size_t rn, zf_meta *m, char *err,
                     size_t errcap)
{
    if (m->cf.how == ZF_CF_NATIVE)
        return ZF_OK;
    int rc = zf_cf_parse(&m->cf, m->zarr_format, attrs, raw, rn, err, errcap);
    if (m->cf.how == ZF_CF_SINCE)
        m->values = ZF_VALUES_DATETIME;
    m->unit = m->cf.unit;
    m->scale = 1;
    return rc;
}

static int parse_dim_names(const cJSON *names, const char *what, zf_meta *m, char *err,
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

static int parse_key_encoding(const cJSON *enc, zf_meta *m, char *err, size_t errcap)
{
    const char *name;
    const cJSON *config;
    int rc = zf_json_entry(enc, &name, &config, err, errcap);
    if (rc)
        return rc;
    if (strcmp(name, "default") && strcmp(name, "v2"))
        return ERR(ZF_EUNSUPPORTED, "unsupported chunk_key_encoding \"%s\"", name);
    m->key_v2 = !strcmp(name, "v2");
    m->separator = m->key_v2 ? '.' : '/';
    static const char *const keys[] = {"separator", NULL};
    if ((rc = zf_json_only_keys(config, keys, name, err, errcap)))
        return rc;
    const cJSON *sep = config ? cJSON_GetObjectItemCaseSensitive(config, "separator") : NULL;
    if (sep) {
        if (!cJSON_IsString(sep) || (strcmp(sep->valuestring, "/") && strcmp(sep->valuestring, ".")))
            return ERR(ZF_ECORRUPT, "chunk_key_encoding separator must be \"/\" or \".\"");
        m->separator = sep->valuestring[0];
    }
    return ZF_OK;
}

static int parse_chunk_grid(const char *text, size_t n, const cJSON *grid, zf_meta *m, char *err,
                            size_t errcap)
{
    const char *name;
    const cJSON *config;
    int rc = zf_json_entry(grid, &name, &config, err, errcap);
    if (rc)
        return rc;
    if (strcmp(name, "regular"))
        return ERR(ZF_EUNSUPPORTED, "unsupported chunk_grid \"%s\"", name);
    static const char *const keys[] = {"chunk_shape", NULL};
    if ((rc = zf_json_only_keys(config, keys, "regular chunk grid", err, errcap)))
        return rc;
    const cJSON *cs = config ? cJSON_GetObjectItemCaseSensitive(config, "chunk_shape") : NULL;
    static const char *const at[] = {"chunk_grid", "configuration", "chunk_shape", NULL};
    size_t len = 0;
    const char *raw = raw_at(text, n, at, &len);
    return parse_dims(cs, raw, len, "chunk_shape", 1, &m->ndim, m->chunks, err, errcap);
}

/* unknown top-level keys are allowed only as {"must_understand": false, ...} */
static int check_v3_keys(const cJSON *root, const char *const *known, char *err, size_t errcap)
{
    for (const cJSON *k = root->child; k; k = k->next) {
        const char *const *a = known;
        while (*a && strcmp(*a, k->string))
            a++;
        if (*a)
            continue;
        const cJSON *mu = cJSON_IsObject(k) ? cJSON_GetObjectItemCaseSensitive(k, "must_understand") : NULL;
        if (!cJSON_IsFalse(mu))
            return ERR(ZF_EUNSUPPORTED, "unknown metadata field \"%s\" must be understood", k->string);
    }
    return ZF_OK;
}

/* the keys, shape, chunk grid, chunk keys, dimension names and storage
 * transformers of a v3 array's metadata into m (every v3 array's) */
static int parse_v3_grid(const char *text, size_t n, const cJSON *root, zf_meta *m, char *err,
                         size_t errcap)
{
    static const char *const known[] = {"zarr_format", "node_type", "shape", "data_type",
        "chunk_grid", "chunk_key_encoding", "fill_value", "codecs", "attributes",
        "dimension_names", "storage_transformers", NULL};
    static const char *const shape_at[] = {"shape", NULL};
    size_t slen = 0;
    const char *shape = raw_at(text, n, shape_at, &slen);
    int rc;
    m->ndim = (unsigned)-1;
    if ((rc = check_v3_keys(root, known, err, errcap)) ||
        (rc = parse_dims(cJSON_GetObjectItemCaseSensitive(root, "shape"), shape, slen, "shape", 0,
                         &m->ndim, m->shape, err, errcap)) ||
        (rc = count_elems(m, err, errcap)) ||
        (rc = parse_chunk_grid(text, n, cJSON_GetObjectItemCaseSensitive(root, "chunk_grid"), m,
                               err, errcap)) ||
        (rc = parse_key_encoding(cJSON_GetObjectItemCaseSensitive(root, "chunk_key_encoding"), m,
                                 err, errcap)) ||
        (rc = parse_dim_names(cJSON_GetObjectItemCaseSensitive(root, "dimension_names"),
                              "dimension_names", m, err, errcap)))
        return rc;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "storage_transformers");
    if (st && !(cJSON_IsArray(st) && cJSON_GetArraySize(st) == 0))
        return ERR(ZF_EUNSUPPORTED, "storage transformers are not supported");
    return ZF_OK;
}

static int parse_v3_array(const char *text, size_t n, const cJSON *root, zf_meta *m, char *err,
                          size_t errcap)
{
    int rc;
    if ((rc = parse_v3_grid(text, n, root, m, err, errcap)) ||
        (rc = parse_fill_of(text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), 0, m, err,
                            errcap)))
        return rc;
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attributes");
    if (attrs && !cJSON_IsObject(attrs))
        return ERR(ZF_ECORRUPT, "\"attributes\" is not an object");
    const char *raw = NULL;
    size_t rn = 0;
    if (attrs)
        zf_json_raw_member(text, n, "attributes", &raw, &rn);
    if ((rc = cf_finish(attrs, raw, rn, m, err, errcap)) || (rc = keep_coordinates(attrs, m)))
        return rc;
    return zf_pipeline_from_v3(cJSON_GetObjectItemCaseSensitive(root, "codecs"), m->ndim, m->chunks,
                               m->elem, &m->pipeline, err, errcap);
}

/* is the v3 data_type numpy.timedelta64 or numpy.datetime64?  (1 yes, 2 a
 * type CF durations and time stamps are stored as, 0 another type, <0 error) */
static int v3_is_timedelta(const cJSON *dt, zf_meta *m, char *err, size_t errcap)
{
    const char *name;
    const cJSON *config;
    if (!dt)
        return ERR(ZF_ECORRUPT, "no \"data_type\"");
    int rc = zf_json_entry(dt, &name, &config, err, errcap);
    if (rc)
        return rc;
    if (strcmp(name, "numpy.timedelta64") && strcmp(name, "numpy.datetime64")) {
        if (zf_cf_v3_elem(name, &m->elem) != ZF_OK)
            return 0;
        m->cf.elem = m->elem;
        snprintf(m->dtype_text, sizeof m->dtype_text, "%s", name);
        return 2;
    }
    m->values = strcmp(name, "numpy.datetime64") ? ZF_VALUES_DURATION : ZF_VALUES_DATETIME;
    rc = parse_td_config(config, name, m, err, errcap);
    return rc ? rc : 1;
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
    uint64_t elems = 1;
    for (unsigned d = 0; d < m->ndim; d++) {
        if (m->read_chunks[d] > ZF_MAX_CHUNK_ELEMS / elems)
            return ERR(ZF_EUNSUPPORTED, "chunks larger than 2^28 values are not supported");
        elems *= m->read_chunks[d];
    }
    return ZF_OK;
}

int zf_meta_parse_v3(const char *text, size_t n, zf_node_kind *kind, zf_meta *out, char *err,
                     size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->elem = ZF_ELEM_INT64;
    cJSON *root = cJSON_ParseWithLength(text, n);
    if (!root)
        return ERR(ZF_ECORRUPT, "invalid JSON");
    int rc = ZF_OK;
    int64_t fmt;
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "node_type");
    if (!cJSON_IsObject(root) || !zf_json_int(cJSON_GetObjectItemCaseSensitive(root, "zarr_format"), 3, 3, &fmt))
        rc = ERR(ZF_ECORRUPT, "\"zarr_format\" is not 3");
    else if (!cJSON_IsString(nt) || (strcmp(nt->valuestring, "group") && strcmp(nt->valuestring, "array")))
        rc = ERR(ZF_ECORRUPT, "\"node_type\" is neither \"group\" nor \"array\"");
    else if (!strcmp(nt->valuestring, "group")) {
        static const char *const known[] = {"zarr_format", "node_type", "attributes",
                                            "consolidated_metadata", NULL};
        *kind = ZF_KIND_GROUP;
        rc = check_v3_keys(root, known, err, errcap);
    } else {
        int td = v3_is_timedelta(cJSON_GetObjectItemCaseSensitive(root, "data_type"), out, err, errcap);
        const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attributes");
        if (td == 2) /* CF durations if the attributes say so */
            td = zf_cf_units(&out->cf, cJSON_IsObject(attrs) ? attrs : NULL, err, errcap);
        *kind = td == 1 ? ZF_KIND_TIMEDELTA : ZF_KIND_OTHER_ARRAY;
        out->zarr_format = 3;
        rc = td < 0 ? td : td == 1 ? parse_v3_array(text, n, root, out, err, errcap) : ZF_OK;
    }
    cJSON_Delete(root);
    if (rc)
        zf_meta_clear(out);
    else if (*kind == ZF_KIND_TIMEDELTA && (rc = set_read_chunks(out, err, errcap)))
        zf_meta_clear(out);
    return rc;
}

/* v2 dtype "<m8", ">m8[10us]", "<M8[ns]": 1 timedelta or datetime, 0
 * other, <0 error */
static int v2_dtype(const cJSON *dt, zf_meta *m, int *big, char *err, size_t errcap)
{
    if (!cJSON_IsString(dt))
        return 0; /* structured dtypes are lists */
    const char *s = dt->valuestring;
    if (strlen(s) < 3 || (strncmp(s + 1, "m8", 2) && strncmp(s + 1, "M8", 2)))
        return 0;
    m->values = s[1] == 'M' ? ZF_VALUES_DATETIME : ZF_VALUES_DURATION;
    if (s[0] != '<' && s[0] != '>')
        return ERR(ZF_ECORRUPT, "dtype \"%s\" has no byte order", s);
    *big = s[0] == '>';
    snprintf(m->dtype_text, sizeof m->dtype_text, "%s", s);
    m->scale = 1;
    m->unit = ZF_UNIT_GENERIC;
    if (s[3] == '\0')
        return 1;
    size_t len = strlen(s);
    if (s[3] != '[' || s[len - 1] != ']' || len > 40)
        return ERR(ZF_ECORRUPT, "invalid dtype \"%s\"", s);
    const char *p = s + 4;
    uint64_t scale = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 11; p++, digits++)
        scale = scale * 10 + (uint64_t)(*p - '0');
    char unit[16];
    size_t ulen = (size_t)(s + len - 1 - p);
    if (ulen == 0 || ulen >= sizeof unit)
        return ERR(ZF_ECORRUPT, "invalid dtype \"%s\"", s);
    memcpy(unit, p, ulen);
    unit[ulen] = '\0';
    if (zf_unit_parse(unit, &m->unit) != ZF_OK || m->unit == ZF_UNIT_GENERIC)
        return ERR(ZF_ECORRUPT, "dtype \"%s\": unknown unit", s);
    if (digits && (scale < 1 || scale > INT32_MAX))
        return ERR(ZF_ECORRUPT, "dtype \"%s\": scale out of range", s);
    m->scale = digits ? (uint32_t)scale : 1;
    return 1;
}

/* CF hook (cf.h): an integer or float v2 array whose .zattrs say durations:
 * 1 yes (elem, byte order and cf.how set), 0 no, <0 damaged attributes */
static int v2_cf_dtype(const cJSON *dt, const char *zattrs, size_t n, zf_meta *m, int *big,
                       char *err, size_t errcap)
{
    if (!cJSON_IsString(dt) || !zattrs || !zf_cf_v2_elem(dt->valuestring, &m->elem, big))
        return 0;
    m->cf.elem = m->elem;
    snprintf(m->dtype_text, sizeof m->dtype_text, "%s", dt->valuestring);
    cJSON *attrs = cJSON_ParseWithLength(zattrs, n);
    int rc = cJSON_IsObject(attrs) ? zf_cf_units(&m->cf, attrs, err, errcap) : 0;
    cJSON_Delete(attrs);
    return rc;
}

/* CF hook: the mask and packing attributes in .zattrs (after the fill value) */
static int v2_cf_finish(const char *zattrs, size_t n, zf_meta *m, char *err, size_t errcap)
{
    if (m->cf.how == ZF_CF_NATIVE)
        return ZF_OK;
    cJSON *attrs = cJSON_ParseWithLength(zattrs, n);
    int rc = cf_finish(attrs, zattrs, n, m, err, errcap);
    cJSON_Delete(attrs);
    return rc;
}

static int parse_v2_dim_names(const char *attrs, size_t n, zf_meta *m, char *err, size_t errcap)
{
    if (!attrs)
        return ZF_OK;
    cJSON *root = cJSON_ParseWithLength(attrs, n);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ERR(ZF_ECORRUPT, ".zattrs is not a JSON object");
    }
    int rc = parse_dim_names(cJSON_GetObjectItemCaseSensitive(root, "_ARRAY_DIMENSIONS"),
                             "_ARRAY_DIMENSIONS", m, err, errcap);
    if (rc == ZF_OK)
        rc = keep_coordinates(root, m);
    cJSON_Delete(root);
    return rc;
}

static int parse_v2_array(const char *text, size_t n, const cJSON *root, int big, zf_meta *m,
                          char *err, size_t errcap)
{
    m->ndim = (unsigned)-1;
    int rc;
    static const char *const shape_at[] = {"shape", NULL}, *const chunks_at[] = {"chunks", NULL};
    size_t slen = 0, clen = 0;
    const char *shape = raw_at(text, n, shape_at, &slen), *chunks = raw_at(text, n, chunks_at, &clen);
    if ((rc = parse_dims(cJSON_GetObjectItemCaseSensitive(root, "shape"), shape, slen, "shape", 0,
                         &m->ndim, m->shape, err, errcap)) ||
        (rc = count_elems(m, err, errcap)) ||
        (rc = parse_dims(cJSON_GetObjectItemCaseSensitive(root, "chunks"), chunks, clen, "chunks",
                         1, &m->ndim, m->chunks, err, errcap)) ||
        (rc = parse_fill_of(text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), 1, m, err,
                            errcap)))
        return rc;
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(root, "order");
    if (!cJSON_IsString(order) || (strcmp(order->valuestring, "C") && strcmp(order->valuestring, "F")))
        return ERR(ZF_ECORRUPT, "\"order\" must be \"C\" or \"F\"");
    const cJSON *sep = cJSON_GetObjectItemCaseSensitive(root, "dimension_separator");
    m->key_v2 = 1;
    m->separator = '.';
    if (sep && !cJSON_IsNull(sep)) {
        if (!cJSON_IsString(sep) || (strcmp(sep->valuestring, "/") && strcmp(sep->valuestring, ".")))
            return ERR(ZF_ECORRUPT, "\"dimension_separator\" must be \"/\" or \".\"");
        m->separator = sep->valuestring[0];
    }
    const cJSON *comp = cJSON_GetObjectItemCaseSensitive(root, "compressor");
    if (!comp)
        return ERR(ZF_ECORRUPT, "no \"compressor\"");
    return zf_pipeline_from_v2(comp, cJSON_GetObjectItemCaseSensitive(root, "filters"), big,
                               order->valuestring[0], m->ndim, m->chunks, m->elem, &m->pipeline,
                               err, errcap);
}

int zf_meta_parse_v2(const char *zarray, size_t n, const char *zattrs, size_t attrs_n,
                     zf_node_kind *kind, zf_meta *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->elem = ZF_ELEM_INT64;
    out->zarr_format = 2;
    *kind = ZF_KIND_OTHER_ARRAY;
    cJSON *root = cJSON_ParseWithLength(zarray, n);
    if (!root)
        return ERR(ZF_ECORRUPT, "invalid JSON");
    int rc = ZF_OK, big = 0;
    int64_t fmt;
    if (!cJSON_IsObject(root) || !zf_json_int(cJSON_GetObjectItemCaseSensitive(root, "zarr_format"), 2, 2, &fmt))
        rc = ERR(ZF_ECORRUPT, "\"zarr_format\" is not 2");
    else {
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "dtype");
        int td = v2_dtype(dt, out, &big, err, errcap);
        if (td == 0)
            td = v2_cf_dtype(dt, zattrs, attrs_n, out, &big, err, errcap);
        if (td == 1) {
            *kind = ZF_KIND_TIMEDELTA;
            rc = parse_v2_array(zarray, n, root, big, out, err, errcap);
            if (rc == ZF_OK)
                rc = parse_v2_dim_names(zattrs, attrs_n, out, err, errcap);
            if (rc == ZF_OK)
                rc = v2_cf_finish(zattrs, attrs_n, out, err, errcap);
        } else {
            rc = td;
        }
    }
    cJSON_Delete(root);
    if (rc)
        zf_meta_clear(out);
    else if (*kind == ZF_KIND_TIMEDELTA && (rc = set_read_chunks(out, err, errcap)))
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
}

/* a fixed string length in bytes: 1 .. 2^20, a multiple of unit */
static int item_length(int64_t v, unsigned unit, zf_plain_meta *p, char *err, size_t errcap)
{
    if (v < 1 || v > (1 << 20) || v % unit)
        return ERR(ZF_EUNSUPPORTED, "fixed-length strings of %lld bytes are not supported",
                   (long long)v);
    p->item_bytes = (uint32_t)v;
    return ZF_OK;
}

/* the v3 data_type of a plain array: type and element */
static int plain_v3_type(const cJSON *dt, zf_plain_meta *p, char *err, size_t errcap)
{
    const char *name;
    const cJSON *config;
    int rc = dt ? zf_json_entry(dt, &name, &config, err, errcap) : ERR(ZF_ECORRUPT, "no \"data_type\"");
    if (rc)
        return rc;
    p->m.elem = (zf_elem){ZF_ELEM_UINT, 1};
    snprintf(p->m.dtype_text, sizeof p->m.dtype_text, "%s", name);
    if (zf_cf_v3_elem(name, &p->m.elem) == ZF_OK)
        p->type = ZF_PLAIN_NUMBER;
    else if (!strcmp(name, "bool"))
        p->type = ZF_PLAIN_BOOL;
    else if (!strcmp(name, "string"))
        p->type = ZF_PLAIN_VLEN_UTF8;
    else if (!strcmp(name, "fixed_length_utf32") || !strcmp(name, "null_terminated_bytes")) {
        p->type = name[0] == 'f' ? ZF_PLAIN_UTF32 : ZF_PLAIN_BYTES;
        const cJSON *lb = config ? cJSON_GetObjectItemCaseSensitive(config, "length_bytes") : NULL;
        static const char *const keys[] = {"length_bytes", NULL};
        int64_t v;
        if ((rc = zf_json_only_keys(config, keys, name, err, errcap)))
            return rc;
        if (!zf_json_int(lb, 0, INT64_MAX, &v))
            return ERR(ZF_ECORRUPT, "%s: \"length_bytes\" is not an integer", name);
        return item_length(v, p->type == ZF_PLAIN_UTF32 ? 4 : 1, p, err, errcap);
    } else
        return ERR(ZF_EUNSUPPORTED, "data type \"%.40s\" is not supported", name);
    return ZF_OK;
}

/* is the array a string type? */
static int plain_is_string(const zf_plain_meta *p)
{
    return p->type != ZF_PLAIN_NUMBER && p->type != ZF_PLAIN_BOOL;
}

/* attributes xarray decodes as times, or with coders not reproduced here */
static int plain_attrs_check(const zf_plain_meta *p, const cJSON *attrs, char *err, size_t errcap)
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
static int plain_fill(zf_plain_meta *p, const char *doc, size_t n, const cJSON *fill,
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
static int plain_add_codec(zf_plain_meta *p, zf_codec *c, char *err, size_t errcap)
{
    if (p->ncodecs == ZF_PLAIN_MAX_CODECS) {
        zf_codec_free(c);
        return ERR(ZF_EUNSUPPORTED, "more than %d codecs", ZF_PLAIN_MAX_CODECS);
    }
    p->codecs[p->ncodecs++] = c;
    return ZF_OK;
}

/* the array->bytes codec of a v3 string array: vlen-utf8, or bytes for fixed ones */
static int plain_v3_string_codec(zf_plain_meta *p, const cJSON *entry, char *err, size_t errcap)
{
    const char *name;
    const cJSON *config;
    int rc = zf_json_entry(entry, &name, &config, err, errcap);
    if (rc)
        return rc;
    static const char *const none[] = {NULL}, *const bytes_keys[] = {"endian", NULL};
    if (p->type == ZF_PLAIN_VLEN_UTF8 && !strcmp(name, "vlen-utf8"))
        return zf_json_only_keys(config, none, name, err, errcap);
    if (p->type == ZF_PLAIN_VLEN_UTF8 || strcmp(name, "bytes"))
        return ERR(ZF_EUNSUPPORTED, "codec \"%.40s\" on %s strings is not supported", name,
                   p->type == ZF_PLAIN_VLEN_UTF8 ? "variable-length" : "fixed-length");
    const cJSON *e = config ? cJSON_GetObjectItemCaseSensitive(config, "endian") : NULL;
    if (e && (!cJSON_IsString(e) || (strcmp(e->valuestring, "little") && strcmp(e->valuestring, "big"))))
        return ERR(ZF_ECORRUPT, "bytes: \"endian\" must be \"little\" or \"big\"");
    p->big_endian = e && !strcmp(e->valuestring, "big");
    return zf_json_only_keys(config, bytes_keys, name, err, errcap);
}

/* the v3 codecs of a string array: the array->bytes codec, then bytes->bytes ones */
static int plain_v3_string_codecs(zf_plain_meta *p, const cJSON *codecs, char *err, size_t errcap)
{
    if (!cJSON_IsArray(codecs) || !codecs->child)
        return ERR(ZF_ECORRUPT, "\"codecs\" must be a non-empty array");
    int rc = plain_v3_string_codec(p, codecs->child, err, errcap);
    for (const cJSON *e = codecs->child->next; e && rc == ZF_OK; e = e->next) {
        zf_codec *c = NULL;
        rc = zf_codec_from_v3(e, p->item_bytes ? p->item_bytes : 1, &c, err, errcap);
        if (rc == ZF_ENOTFOUND)
            return ERR(ZF_EUNSUPPORTED, "a codec after the first of a string array is not a "
                       "supported bytes->bytes codec");
        if (rc == ZF_OK)
            rc = plain_add_codec(p, c, err, errcap);
    }
    return rc;
}

/* the decoding of whole chunks: a pipeline for numbers and bools, a chunk
 * of at most 2^28 elements */
static int plain_finish(zf_plain_meta *p, char *err, size_t errcap)
{
    uint64_t elems = 1;
    for (unsigned d = 0; d < p->m.ndim; d++) {
        if (p->m.chunks[d] > ZF_MAX_CHUNK_ELEMS / elems)
            return ERR(ZF_EUNSUPPORTED, "chunks larger than 2^28 values are not supported");
        elems *= p->m.chunks[d];
    }
    memcpy(p->m.read_chunks, p->m.chunks, sizeof p->m.chunks);
    if (p->m.pipeline)
        zf_pipeline_set_fill(p->m.pipeline, p->m.cf.fill_raw);
    return ZF_OK;
}

/* the array part of a v3 plain array document */
static int plain_v3_array(const char *text, size_t n, const cJSON *root, zf_plain_meta *p,
                          char *err, size_t errcap)
{
    zf_meta *m = &p->m;
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attributes");
    const char *raw = NULL;
    size_t rn = 0;
    if (attrs)
        zf_json_raw_member(text, n, "attributes", &raw, &rn);
    int rc = plain_v3_type(cJSON_GetObjectItemCaseSensitive(root, "data_type"), p, err, errcap);
    if (rc == ZF_OK)
        rc = plain_attrs_check(p, attrs, err, errcap);
    if (rc)
        return rc;
    if ((rc = parse_v3_grid(text, n, root, m, err, errcap)) ||
        (rc = plain_fill(p, text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), attrs,
                         raw, rn, err, errcap)))
        return rc;
    const cJSON *codecs = cJSON_GetObjectItemCaseSensitive(root, "codecs");
    if (plain_is_string(p))
        return plain_v3_string_codecs(p, codecs, err, errcap);
    return zf_pipeline_from_v3(codecs, m->ndim, m->chunks, m->elem, &m->pipeline, err, errcap);
}

int zf_meta_parse_plain_v3(const char *text, size_t n, zf_plain_meta *out, char *err,
                           size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->m.zarr_format = 3;
    cJSON *root = cJSON_ParseWithLength(text, n);
    int64_t fmt;
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "node_type");
    int rc;
    if (!cJSON_IsObject(root) || !zf_json_int(cJSON_GetObjectItemCaseSensitive(root, "zarr_format"), 3, 3, &fmt))
        rc = ERR(ZF_ECORRUPT, "invalid JSON, or \"zarr_format\" is not 3");
    else if (!cJSON_IsString(nt) || strcmp(nt->valuestring, "array"))
        rc = ERR(ZF_ECORRUPT, "\"node_type\" is not \"array\"");
    else
        rc = plain_v3_array(text, n, root, out, err, errcap);
    cJSON_Delete(root);
    if (rc == ZF_OK)
        rc = plain_finish(out, err, errcap);
    if (rc)
        zf_plain_meta_clear(out);
    return rc;
}

/* the v2 dtype of a plain array: type, element and byte order */
static int plain_v2_type(const cJSON *dt, zf_plain_meta *p, int *big, char *err, size_t errcap)
{
    if (!cJSON_IsString(dt))
        return ERR(ZF_EUNSUPPORTED, "structured data types are not supported");
    const char *s = dt->valuestring;
    p->m.elem = (zf_elem){ZF_ELEM_UINT, 1};
    snprintf(p->m.dtype_text, sizeof p->m.dtype_text, "%s", s);
    if (zf_cf_v2_elem(s, &p->m.elem, big)) {
        p->type = ZF_PLAIN_NUMBER;
        return ZF_OK;
    }
    if (!strcmp(s, "|b1") || !strcmp(s, "|O")) {
        p->type = s[1] == 'b' ? ZF_PLAIN_BOOL : ZF_PLAIN_VLEN_UTF8;
        return ZF_OK;
    }
    char *end;
    if (strchr("<>|", s[0]) && s[0] && (s[1] == 'U' || s[1] == 'S') && s[2] >= '1' && s[2] <= '9') {
        long long len = strtoll(s + 2, &end, 10);
        if (*end == '\0' && (s[1] == 'S' || s[0] != '|')) {
            p->type = s[1] == 'U' ? ZF_PLAIN_UTF32 : ZF_PLAIN_BYTES;
            p->big_endian = s[0] == '>';
            return item_length(len > (1 << 20) ? -1 : len * (s[1] == 'U' ? 4 : 1),
                               s[1] == 'U' ? 4 : 1, p, err, errcap);
        }
    }
    return ERR(ZF_EUNSUPPORTED, "dtype \"%.40s\" is not supported", s);
}

/* the v2 filters and compressor of a string array: vlen-utf8 first for "|O",
 * then bytes->bytes codecs (decoded in reverse order) */
static int plain_v2_string_codecs(zf_plain_meta *p, const cJSON *filters, const cJSON *comp,
                                  char *err, size_t errcap)
{
    const cJSON *f = cJSON_IsArray(filters) ? filters->child : NULL;
    const cJSON *id = cJSON_IsObject(f) ? cJSON_GetObjectItemCaseSensitive(f, "id") : NULL;
    int vlen = cJSON_IsString(id) && !strcmp(id->valuestring, "vlen-utf8");
    if (vlen != (p->type == ZF_PLAIN_VLEN_UTF8))
        return ERR(ZF_EUNSUPPORTED, p->type == ZF_PLAIN_VLEN_UTF8
                   ? "object arrays are supported only with the vlen-utf8 filter first"
                   : "the vlen-utf8 filter on a fixed-length type");
    if (filters && !cJSON_IsNull(filters) && !cJSON_IsArray(filters))
        return ERR(ZF_ECORRUPT, "\"filters\" is neither null nor a list");
    int rc = ZF_OK;
    for (f = vlen ? f->next : f; f && rc == ZF_OK; f = f->next) {
        zf_codec *c = NULL;
        if ((rc = zf_codec_from_v2(f, &c, err, errcap)) == ZF_ENOTFOUND)
            return ERR(ZF_EUNSUPPORTED, "a filter of a string array is not a supported bytes codec");
        if (rc == ZF_OK)
            rc = plain_add_codec(p, c, err, errcap);
    }
    if (rc || cJSON_IsNull(comp))
        return rc;
    zf_codec *c = NULL;
    if ((rc = zf_codec_from_v2(comp, &c, err, errcap)) == ZF_ENOTFOUND)
        return ERR(ZF_EUNSUPPORTED, "unsupported compressor");
    return rc ? rc : plain_add_codec(p, c, err, errcap);
}

/* the array part of a v2 plain array (.zarray root; .zattrs attrs, raw) */
static int plain_v2_array(const char *text, size_t n, const cJSON *root, const cJSON *attrs,
                          const char *raw, size_t rn, zf_plain_meta *p, char *err, size_t errcap)
{
    zf_meta *m = &p->m;
    int big = 0;
    int rc = plain_v2_type(cJSON_GetObjectItemCaseSensitive(root, "dtype"), p, &big, err, errcap);
    if (rc == ZF_OK)
        rc = plain_attrs_check(p, attrs, err, errcap);
    if (rc)
        return rc;
    static const char *const shape_at[] = {"shape", NULL}, *const chunks_at[] = {"chunks", NULL};
    size_t slen = 0, clen = 0;
    const char *shape = raw_at(text, n, shape_at, &slen), *chunks = raw_at(text, n, chunks_at, &clen);
    m->ndim = (unsigned)-1;
    if ((rc = parse_dims(cJSON_GetObjectItemCaseSensitive(root, "shape"), shape, slen, "shape", 0,
                         &m->ndim, m->shape, err, errcap)) ||
        (rc = count_elems(m, err, errcap)) ||
        (rc = parse_dims(cJSON_GetObjectItemCaseSensitive(root, "chunks"), chunks, clen, "chunks",
                         1, &m->ndim, m->chunks, err, errcap)) ||
        (rc = parse_dim_names(attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "_ARRAY_DIMENSIONS") : NULL,
                              "_ARRAY_DIMENSIONS", m, err, errcap)) ||
        (rc = plain_fill(p, text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), attrs,
                         raw, rn, err, errcap)))
        return rc;
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(root, "order");
    const cJSON *sep = cJSON_GetObjectItemCaseSensitive(root, "dimension_separator");
    const cJSON *comp = cJSON_GetObjectItemCaseSensitive(root, "compressor");
    const cJSON *filters = cJSON_GetObjectItemCaseSensitive(root, "filters");
    if (!cJSON_IsString(order) || (strcmp(order->valuestring, "C") && strcmp(order->valuestring, "F")))
        return ERR(ZF_ECORRUPT, "\"order\" must be \"C\" or \"F\"");
    m->key_v2 = 1;
    m->separator = '.';
    if (sep && !cJSON_IsNull(sep)) {
        if (!cJSON_IsString(sep) || (strcmp(sep->valuestring, "/") && strcmp(sep->valuestring, ".")))
            return ERR(ZF_ECORRUPT, "\"dimension_separator\" must be \"/\" or \".\"");
        m->separator = sep->valuestring[0];
    }
    if (!comp)
        return ERR(ZF_ECORRUPT, "no \"compressor\"");
    if (!plain_is_string(p))
        return zf_pipeline_from_v2(comp, filters, big, order->valuestring[0], m->ndim, m->chunks,
                                   m->elem, &m->pipeline, err, errcap);
    if (order->valuestring[0] == 'F' && m->ndim > 1)
        return ERR(ZF_EUNSUPPORTED, "string arrays in order \"F\" are not supported");
    return plain_v2_string_codecs(p, filters, comp, err, errcap);
}

int zf_meta_parse_plain_v2(const char *zarray, size_t n, const char *zattrs, size_t attrs_n,
                           zf_plain_meta *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->m.zarr_format = 2;
    cJSON *root = cJSON_ParseWithLength(zarray, n);
    cJSON *attrs = zattrs ? cJSON_ParseWithLength(zattrs, attrs_n) : NULL;
    int64_t fmt;
    int rc;
    if (!cJSON_IsObject(root) || !zf_json_int(cJSON_GetObjectItemCaseSensitive(root, "zarr_format"), 2, 2, &fmt))
        rc = ERR(ZF_ECORRUPT, "invalid JSON, or \"zarr_format\" is not 2");
    else if (zattrs && !cJSON_IsObject(attrs))
        rc = ERR(ZF_ECORRUPT, ".zattrs is not a JSON object");
    else
        rc = plain_v2_array(zarray, n, root, attrs, zattrs, attrs_n, out, err, errcap);
    cJSON_Delete(root);
    cJSON_Delete(attrs);
    if (rc == ZF_OK)
        rc = plain_finish(out, err, errcap);
    if (rc)
        zf_plain_meta_clear(out);
    return rc;
}
