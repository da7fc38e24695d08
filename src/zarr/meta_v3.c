/* meta_v3.c - parse a v3 zarr.json: a group, a time-type array into a
 * zf_meta (native numpy.timedelta64 / datetime64 or CF-encoded), or a plain
 * array (numbers, bools, strings) into a zf_plain_meta. */
#include "zarr/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "meta_impl.h"

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
    const char *raw = zf_meta_raw_at(text, n, at, &len);
    return zf_meta_parse_dims(cs, raw, len, "chunk_shape", 1, &m->ndim, m->chunks, err, errcap);
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
    const char *shape = zf_meta_raw_at(text, n, shape_at, &slen);
    int rc;
    m->ndim = (unsigned)-1;
    if ((rc = check_v3_keys(root, known, err, errcap)) ||
        (rc = zf_meta_parse_dims(cJSON_GetObjectItemCaseSensitive(root, "shape"), shape, slen,
                                 "shape", 0, &m->ndim, m->shape, err, errcap)) ||
        (rc = zf_meta_count_elems(m, err, errcap)) ||
        (rc = parse_chunk_grid(text, n, cJSON_GetObjectItemCaseSensitive(root, "chunk_grid"), m,
                               err, errcap)) ||
        (rc = parse_key_encoding(cJSON_GetObjectItemCaseSensitive(root, "chunk_key_encoding"), m,
                                 err, errcap)) ||
        (rc = zf_meta_parse_dim_names(cJSON_GetObjectItemCaseSensitive(root, "dimension_names"),
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
        (rc = zf_meta_parse_fill_of(text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"),
                                    0, m, err, errcap)))
        return rc;
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attributes");
    if (attrs && !cJSON_IsObject(attrs))
        return ERR(ZF_ECORRUPT, "\"attributes\" is not an object");
    const char *raw = NULL;
    size_t rn = 0;
    if (attrs)
        zf_json_raw_member(text, n, "attributes", &raw, &rn);
    if ((rc = zf_meta_cf_finish(attrs, raw, rn, m, err, errcap)) ||
        (rc = zf_meta_keep_coordinates(attrs, m)) || (rc = zf_meta_keep_attributes(attrs, m)))
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

int zf_meta_parse_v3(const char *text, size_t n, zf_node_kind *kind, zf_meta *out, char *err,
                     size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->elem = ZF_ELEM_INT64;
    cJSON *root = zf_json_parse(text, n);
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
        out->zarr_format = 3;
        rc = check_v3_keys(root, known, err, errcap);
        if (rc == ZF_OK)
            rc = zf_meta_names_of(NULL, NULL, cJSON_GetObjectItemCaseSensitive(root, "attributes"), out);
    } else {
        int td = v3_is_timedelta(cJSON_GetObjectItemCaseSensitive(root, "data_type"), out, err, errcap);
        const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attributes");
        if (td == 2) /* CF durations if the attributes say so */
            td = zf_cf_units(&out->cf, cJSON_IsObject(attrs) ? attrs : NULL, err, errcap);
        *kind = td == 1 ? ZF_KIND_TIMEDELTA : ZF_KIND_OTHER_ARRAY;
        out->zarr_format = 3;
        rc = td < 0   ? td
           : td == 1 ? parse_v3_array(text, n, root, out, err, errcap)
                     : zf_meta_names_of(cJSON_GetObjectItemCaseSensitive(root, "shape"),
                                        cJSON_GetObjectItemCaseSensitive(root, "dimension_names"),
                                        attrs, out);
    }
    cJSON_Delete(root);
    return zf_meta_end(out, *kind, rc, err, errcap);
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
    if (zf_cf_v3_elem(name, &p->m.elem) == ZF_OK && p->m.elem.size == 2 &&
        p->m.elem.kind == ZF_ELEM_FLOAT)
        return ERR(ZF_EUNSUPPORTED, "float16 coordinates are not supported");
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
        return zf_plain_item_length(v, p->type == ZF_PLAIN_UTF32 ? 4 : 1, p, err, errcap);
    } else
        return ERR(ZF_EUNSUPPORTED, "data type \"%.40s\" is not supported", name);
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

static int plain_v3_string_codecs(zf_plain_meta *p, const cJSON *codecs, char *err, size_t errcap);

/* a string array in shards: the sharding_indexed codec (its configuration
 * config) alone, its inner chunks' codecs those of a string chunk */
static int plain_v3_string_shard(zf_plain_meta *p, const cJSON *config, const cJSON *after,
                                 char *err, size_t errcap)
{
    if (p->shard)
        return ERR(ZF_EUNSUPPORTED, "nested sharding of strings is not supported");
    if (after)
        return ERR(ZF_EUNSUPPORTED, "a codec over whole shards of strings is not supported");
    int rc = zf_pipeline_shard_frame(config, p->m.ndim, p->m.chunks, &p->shard, err, errcap);
    if (rc)
        return rc;
    const uint64_t *inner;
    zf_pipeline_inner(p->shard, &inner);
    memcpy(p->m.read_chunks, inner, p->m.ndim * sizeof *inner);
    return plain_v3_string_codecs(p, cJSON_GetObjectItemCaseSensitive(config, "codecs"), err,
                                  errcap);
}

/* the v3 codecs of a string array: the array->bytes codec, then bytes->bytes ones */
static int plain_v3_string_codecs(zf_plain_meta *p, const cJSON *codecs, char *err, size_t errcap)
{
    if (!cJSON_IsArray(codecs) || !codecs->child)
        return ERR(ZF_ECORRUPT, "\"codecs\" must be a non-empty array");
    const char *name;
    const cJSON *config;
    if (zf_json_entry(codecs->child, &name, &config, err, errcap) == ZF_OK &&
        !strcmp(name, "sharding_indexed"))
        return plain_v3_string_shard(p, config, codecs->child->next, err, errcap);
    int rc = plain_v3_string_codec(p, codecs->child, err, errcap);
    for (const cJSON *e = codecs->child->next; e && rc == ZF_OK; e = e->next) {
        zf_codec *c = NULL;
        rc = zf_codec_from_v3(e, p->item_bytes ? p->item_bytes : 1, &c, err, errcap);
        if (rc == ZF_ENOTFOUND)
            return ERR(ZF_EUNSUPPORTED, "a codec after the first of a string array is not a "
                       "supported bytes->bytes codec");
        if (rc == ZF_OK)
            rc = zf_plain_add_codec(p, c, err, errcap);
    }
    return rc;
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
        rc = zf_plain_attrs_check(p, attrs, err, errcap);
    if (rc)
        return rc;
    if ((rc = parse_v3_grid(text, n, root, m, err, errcap)) ||
        (rc = zf_plain_fill(p, text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), attrs,
                            raw, rn, err, errcap)))
        return rc;
    const cJSON *codecs = cJSON_GetObjectItemCaseSensitive(root, "codecs");
    if (zf_plain_is_string(p))
        return plain_v3_string_codecs(p, codecs, err, errcap);
    return zf_pipeline_from_v3(codecs, m->ndim, m->chunks, m->elem, &m->pipeline, err, errcap);
}

int zf_meta_parse_plain_v3(const char *text, size_t n, zf_plain_meta *out, char *err,
                           size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->m.zarr_format = 3;
    cJSON *root = zf_json_parse(text, n);
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
    return zf_plain_end(out, rc, err, errcap);
}

