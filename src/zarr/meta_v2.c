/* meta_v2.c - parse a v2 .zarray (with its .zattrs): a time-type array into
 * a zf_meta (native "<m8" / "<M8" or CF-encoded), or a plain array (numbers,
 * bools, strings) into a zf_plain_meta. */
#include "zarr/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "meta_impl.h"

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
    cJSON *attrs = zf_json_parse(zattrs, n);
    int rc = cJSON_IsObject(attrs) ? zf_cf_units(&m->cf, attrs, err, errcap) : 0;
    cJSON_Delete(attrs);
    return rc;
}

/* CF hook: the mask and packing attributes in .zattrs (after the fill value) */
static int v2_cf_finish(const char *zattrs, size_t n, zf_meta *m, char *err, size_t errcap)
{
    if (m->cf.how == ZF_CF_NATIVE)
        return ZF_OK;
    cJSON *attrs = zf_json_parse(zattrs, n);
    int rc = zf_meta_cf_finish(attrs, zattrs, n, m, err, errcap);
    cJSON_Delete(attrs);
    return rc;
}

static int parse_v2_dim_names(const char *attrs, size_t n, zf_meta *m, char *err, size_t errcap)
{
    if (!attrs)
        return ZF_OK;
    cJSON *root = zf_json_parse(attrs, n);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ERR(ZF_ECORRUPT, ".zattrs is not a JSON object");
    }
    int rc = zf_meta_parse_dim_names(cJSON_GetObjectItemCaseSensitive(root, "_ARRAY_DIMENSIONS"),
                                     "_ARRAY_DIMENSIONS", m, err, errcap);
    if (rc == ZF_OK)
        rc = zf_meta_keep_coordinates(root, m);
    if (rc == ZF_OK)
        rc = zf_meta_keep_attributes(root, m);
    cJSON_Delete(root);
    return rc;
}

/* what xarray reads of an array of another type: its dimensions (.zattrs
 * _ARRAY_DIMENSIONS) and coordinates attribute; ZF_OK or ZF_ENOMEM */
static int v2_other_names(const cJSON *root, const char *zattrs, size_t n, zf_meta *m)
{
    cJSON *attrs = zattrs ? zf_json_parse(zattrs, n) : NULL;
    int rc = zf_meta_names_of(cJSON_GetObjectItemCaseSensitive(root, "shape"),
                              cJSON_GetObjectItemCaseSensitive(attrs, "_ARRAY_DIMENSIONS"), attrs, m);
    cJSON_Delete(attrs);
    return rc;
}

int zf_meta_parse_v2_group(const char *zattrs, size_t n, zf_meta *out)
{
    memset(out, 0, sizeof *out);
    out->zarr_format = 2;
    cJSON *attrs = zattrs ? zf_json_parse(zattrs, n) : NULL;
    int rc = zf_meta_names_of(NULL, NULL, attrs, out);
    cJSON_Delete(attrs);
    return rc;
}

/* the shape, element count and chunk shape of a .zarray (root; text[0..n)) */
static int v2_grid(const char *text, size_t n, const cJSON *root, zf_meta *m, char *err,
                   size_t errcap)
{
    static const char *const shape_at[] = {"shape", NULL}, *const chunks_at[] = {"chunks", NULL};
    size_t slen = 0, clen = 0;
    const char *shape = zf_meta_raw_at(text, n, shape_at, &slen);
    const char *chunks = zf_meta_raw_at(text, n, chunks_at, &clen);
    int rc;
    m->ndim = (unsigned)-1;
    if ((rc = zf_meta_parse_dims(cJSON_GetObjectItemCaseSensitive(root, "shape"), shape, slen,
                                 "shape", 0, &m->ndim, m->shape, err, errcap)) ||
        (rc = zf_meta_count_elems(m, err, errcap)))
        return rc;
    return zf_meta_parse_dims(cJSON_GetObjectItemCaseSensitive(root, "chunks"), chunks, clen,
                              "chunks", 1, &m->ndim, m->chunks, err, errcap);
}

/* the memory order of a .zarray (*order: 'C' or 'F'), its chunk keys, and
 * that it names a compressor */
static int v2_layout(const cJSON *root, zf_meta *m, char *order, char *err, size_t errcap)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "order");
    if (!cJSON_IsString(o) || (strcmp(o->valuestring, "C") && strcmp(o->valuestring, "F")))
        return ERR(ZF_ECORRUPT, "\"order\" must be \"C\" or \"F\"");
    *order = o->valuestring[0];
    const cJSON *sep = cJSON_GetObjectItemCaseSensitive(root, "dimension_separator");
    m->key_v2 = 1;
    m->separator = '.';
    if (sep && !cJSON_IsNull(sep)) {
        if (!cJSON_IsString(sep) || (strcmp(sep->valuestring, "/") && strcmp(sep->valuestring, ".")))
            return ERR(ZF_ECORRUPT, "\"dimension_separator\" must be \"/\" or \".\"");
        m->separator = sep->valuestring[0];
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "compressor"))
        return ERR(ZF_ECORRUPT, "no \"compressor\"");
    return ZF_OK;
}

static int parse_v2_array(const char *text, size_t n, const cJSON *root, int big, zf_meta *m,
                          char *err, size_t errcap)
{
    char order;
    int rc;
    if ((rc = v2_grid(text, n, root, m, err, errcap)) ||
        (rc = zf_meta_parse_fill_of(text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"),
                                    1, m, err, errcap)) ||
        (rc = v2_layout(root, m, &order, err, errcap)))
        return rc;
    return zf_pipeline_from_v2(cJSON_GetObjectItemCaseSensitive(root, "compressor"),
                               cJSON_GetObjectItemCaseSensitive(root, "filters"), big, order,
                               m->ndim, m->chunks, m->elem, &m->pipeline, err, errcap);
}

int zf_meta_parse_v2(const char *zarray, size_t n, const char *zattrs, size_t attrs_n,
                     zf_node_kind *kind, zf_meta *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->elem = ZF_ELEM_INT64;
    out->zarr_format = 2;
    *kind = ZF_KIND_OTHER_ARRAY;
    cJSON *root = zf_json_parse(zarray, n);
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
            rc = td ? td : v2_other_names(root, zattrs, attrs_n, out);
        }
    }
    cJSON_Delete(root);
    return zf_meta_end(out, *kind, rc, err, errcap);
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
        if (p->m.elem.kind == ZF_ELEM_FLOAT && p->m.elem.size == 2)
            return ERR(ZF_EUNSUPPORTED, "float16 coordinates are not supported");
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
            return zf_plain_item_length(len > (1 << 20) ? -1 : len * (s[1] == 'U' ? 4 : 1),
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
            rc = zf_plain_add_codec(p, c, err, errcap);
    }
    if (rc || cJSON_IsNull(comp))
        return rc;
    zf_codec *c = NULL;
    if ((rc = zf_codec_from_v2(comp, &c, err, errcap)) == ZF_ENOTFOUND)
        return ERR(ZF_EUNSUPPORTED, "unsupported compressor");
    return rc ? rc : zf_plain_add_codec(p, c, err, errcap);
}

/* the array part of a v2 plain array (.zarray root; .zattrs attrs, raw) */
static int plain_v2_array(const char *text, size_t n, const cJSON *root, const cJSON *attrs,
                          const char *raw, size_t rn, zf_plain_meta *p, char *err, size_t errcap)
{
    zf_meta *m = &p->m;
    int big = 0;
    char order;
    int rc = plain_v2_type(cJSON_GetObjectItemCaseSensitive(root, "dtype"), p, &big, err, errcap);
    if (rc == ZF_OK)
        rc = zf_plain_attrs_check(p, attrs, err, errcap);
    if (rc || (rc = v2_grid(text, n, root, m, err, errcap)) ||
        (rc = zf_meta_parse_dim_names(attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "_ARRAY_DIMENSIONS")
                                            : NULL, "_ARRAY_DIMENSIONS", m, err, errcap)) ||
        (rc = zf_plain_fill(p, text, n, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), attrs,
                            raw, rn, err, errcap)) ||
        (rc = v2_layout(root, m, &order, err, errcap)))
        return rc;
    const cJSON *comp = cJSON_GetObjectItemCaseSensitive(root, "compressor");
    const cJSON *filters = cJSON_GetObjectItemCaseSensitive(root, "filters");
    if (!zf_plain_is_string(p))
        return zf_pipeline_from_v2(comp, filters, big, order, m->ndim, m->chunks, m->elem,
                                   &m->pipeline, err, errcap);
    if (order == 'F' && m->ndim > 1)
        return ERR(ZF_EUNSUPPORTED, "string arrays in order \"F\" are not supported");
    return plain_v2_string_codecs(p, filters, comp, err, errcap);
}

int zf_meta_parse_plain_v2(const char *zarray, size_t n, const char *zattrs, size_t attrs_n,
                           zf_plain_meta *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->m.zarr_format = 2;
    cJSON *root = zf_json_parse(zarray, n);
    cJSON *attrs = zattrs ? zf_json_parse(zattrs, attrs_n) : NULL;
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
    return zf_plain_end(out, rc, err, errcap);
}
