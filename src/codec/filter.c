/* filter.c - the numcodecs array->array filters, decoded as numcodecs does:
 *   delta:            dec = np.cumsum(enc, out=dec): the running sum is kept
 *                     in numpy.promote_types(astype, dtype), each sum then
 *                     cast to dtype;
 *   fixedscaleoffset: dec = (enc / scale + offset).astype(dtype), computed
 *                     in float32 when astype is float32 and in float64
 *                     otherwise (numpy 2's rules for a Python scalar);
 *   astype:           dec = enc.astype(decode_dtype).
 * Types are numpy dtype strings (convert.c); a filter works on elements in
 * the machine's byte order, the pipeline does the byte swaps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_impl.h"
#include "base/err.h"

typedef enum filter_kind { F_DELTA, F_FIXEDSCALEOFFSET, F_ASTYPE } filter_kind;

struct zf_filter {
    filter_kind kind;
    char name[32];    /* as in the metadata */
    zf_dtype dec;     /* what decoding yields (dtype / decode_dtype) */
    zf_dtype enc;     /* what decoding reads (astype / encode_dtype) */
    zf_elem work;     /* the type the arithmetic is done in */
    double scale, offset;
};

/* ---- parsing ------------------------------------------------------------- */

static const cJSON *member(const cJSON *obj, const char *key)
{
    return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* A dtype member; absent (or null where allowed) leaves *out as it is. */
static int dtype_member(const zf_filter *f, const cJSON *cfg, const char *key, int required,
                        zf_dtype *out, char *err, size_t errcap)
{
    const cJSON *v = member(cfg, key);
    char what[64];
    snprintf(what, sizeof what, "%s: \"%s\"", f->name, key);
    if (!v || (cJSON_IsNull(v) && !required)) {
        if (!required)
            return ZF_OK;
        snprintf(err, errcap, "%s: no \"%s\"", f->name, key);
        return ZF_ECORRUPT;
    }
    return zf_dtype_parse(v, what, out, err, errcap);
}

/* A number member (scale, offset). */
static int number_member(const zf_filter *f, const cJSON *cfg, const char *key, double *out,
                         char *err, size_t errcap)
{
    const cJSON *v = member(cfg, key);
    if (!cJSON_IsNumber(v)) {
        snprintf(err, errcap, "%s: \"%s\" must be a number", f->name, key);
        return ZF_ECORRUPT;
    }
    *out = v->valuedouble;
    return ZF_OK;
}

/* No keys but the NULL-terminated allowed ones ("id" is allowed, and must
 * name the filter, since v2 objects carry it). */
static int check_keys(const zf_filter *f, const cJSON *cfg, const char *id,
                      const char *const *allowed, char *err, size_t errcap)
{
    for (const cJSON *k = cfg ? cfg->child : NULL; k; k = k->next) {
        if (!strcmp(k->string, "id")) {
            if (!cJSON_IsString(k) || strcmp(k->valuestring, id)) {
                snprintf(err, errcap, "%s: \"id\" must be \"%s\"", f->name, id);
                return ZF_ECORRUPT;
            }
            continue;
        }
        const char *const *a = allowed;
        while (*a && strcmp(*a, k->string))
            a++;
        if (!*a) {
            snprintf(err, errcap, "%s: unknown configuration field \"%.64s\"", f->name, k->string);
            return ZF_ECORRUPT;
        }
    }
    return ZF_OK;
}

/* The members of each filter; dec defaults to the array's type in v3. */
static int parse_members(zf_filter *f, const char *id, const cJSON *cfg, int v3, char *err,
                         size_t errcap)
{
    static const char *const delta_keys[] = {"dtype", "astype", NULL};
    static const char *const fso_keys[] = {"offset", "scale", "dtype", "astype", NULL};
    static const char *const astype_keys[] = {"encode_dtype", "decode_dtype", NULL};
    int rc;
    switch (f->kind) {
    case F_DELTA:
        if ((rc = check_keys(f, cfg, id, delta_keys, err, errcap)) ||
            (rc = dtype_member(f, cfg, "dtype", 1, &f->dec, err, errcap)))
            return rc;
        f->enc = f->dec;
        return dtype_member(f, cfg, "astype", 0, &f->enc, err, errcap);
    case F_FIXEDSCALEOFFSET:
        if ((rc = check_keys(f, cfg, id, fso_keys, err, errcap)) ||
            (rc = number_member(f, cfg, "offset", &f->offset, err, errcap)) ||
            (rc = number_member(f, cfg, "scale", &f->scale, err, errcap)) ||
            (rc = dtype_member(f, cfg, "dtype", !v3, &f->dec, err, errcap)))
            return rc;
        f->enc = f->dec;
        return dtype_member(f, cfg, "astype", 0, &f->enc, err, errcap);
    default:
        if ((rc = check_keys(f, cfg, id, astype_keys, err, errcap)) ||
            (rc = dtype_member(f, cfg, "encode_dtype", 1, &f->enc, err, errcap)))
            return rc;
        return dtype_member(f, cfg, "decode_dtype", !v3, &f->dec, err, errcap);
    }
}

/* Parse a numcodecs array->array filter (see filter_impl.h). */
int zf_filter_parse(const char *id, const cJSON *cfg, int v3, zf_elem array, zf_filter **out,
                    char *err, size_t errcap)
{
    static const char *const ids[] = {"delta", "fixedscaleoffset", "astype"};
    unsigned k = 0;
    while (k < 3 && strcmp(id, ids[k]))
        k++;
    if (k == 3)
        return ZF_ENOTFOUND;
    zf_filter *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errcap, "out of memory");
        return ZF_ENOMEM;
    }
    f->kind = (filter_kind)k;
    snprintf(f->name, sizeof f->name, "%s%s", v3 ? "numcodecs." : "", id);
    f->dec = (zf_dtype){array, ZF_HOST_BIG};
    int rc = parse_members(f, id, cfg, v3, err, errcap);
    if (rc) {
        free(f);
        return rc;
    }
    if (f->kind == F_DELTA)
        f->work = zf_elem_promote(f->enc.elem, f->dec.elem);
    else if (f->kind == F_FIXEDSCALEOFFSET)
        f->work = (zf_elem){ZF_ELEM_FLOAT,
                            f->enc.elem.kind == ZF_ELEM_FLOAT && f->enc.elem.size == 4 ? 4 : 8};
    else
        f->work = f->dec.elem;
    *out = f;
    return ZF_OK;
}

void zf_filter_free(zf_filter *f)
{
    free(f);
}

const char *zf_filter_name(const zf_filter *f)
{
    return f->name;
}

zf_dtype zf_filter_encoded(const zf_filter *f)
{
    return f->enc;
}

zf_dtype zf_filter_decoded(const zf_filter *f)
{
    return f->dec;
}

/* ---- decoding ------------------------------------------------------------------- */

/* Running sum in place over n elements of type t (integers wrap; the first
 * element is kept as it is, as numpy's accumulate keeps it). */
static void running_sum(void *v, zf_elem t, uint64_t n)
{
#define RUN(T)                                          \
    do {                                                \
        T *w = v;                                       \
        for (uint64_t i = 1; i < n; i++)                \
            w[i] = (T)(w[i - 1] + w[i]);                \
    } while (0)
    if (t.kind == ZF_ELEM_FLOAT && t.size == 4)
        RUN(float);
    else if (t.kind == ZF_ELEM_FLOAT)
        RUN(double);
    else if (t.size == 1)
        RUN(uint8_t);
    else if (t.size == 2)
        RUN(uint16_t);
    else if (t.size == 4)
        RUN(uint32_t);
    else
        RUN(uint64_t);
#undef RUN
}

/* v = v / scale + offset in place, in float32 or float64 as t says. */
static void scale_offset(void *v, zf_elem t, uint64_t n, double scale, double offset)
{
    if (t.size == 4) {
        float *w = v, s = (float)scale, o = (float)offset;
        for (uint64_t i = 0; i < n; i++) {
            float q = w[i] / s;
            w[i] = q + o;
        }
    } else {
        double *w = v;
        for (uint64_t i = 0; i < n; i++) {
            double q = w[i] / scale;
            w[i] = q + offset;
        }
    }
}

/* The arithmetic of f in place on n elements of its work type. */
static void work(const zf_filter *f, void *v, uint64_t n)
{
    if (f->kind == F_DELTA)
        running_sum(v, f->work, n);
    else if (f->kind == F_FIXEDSCALEOFFSET)
        scale_offset(v, f->work, n, f->scale, f->offset);
}

static int same_type(zf_elem a, zf_elem b)
{
    return a.kind == b.kind && a.size == b.size;
}

/* Decode n elements of f from in (clobbered) into out. */
int zf_filter_decode(const zf_filter *f, void *in, void *out, uint64_t n, char *err,
                     size_t errcap)
{
    zf_elem e = f->enc.elem, d = f->dec.elem, w = f->work;
    if (same_type(w, e)) { /* work where the input is */
        work(f, in, n);
        zf_elem_convert(in, w, out, d, n);
    } else if (same_type(w, d)) { /* or where the output goes */
        zf_elem_convert(in, e, out, w, n);
        work(f, out, n);
    } else {
        void *tmp = malloc(n ? (size_t)n * w.size : 1);
        if (!tmp) {
            snprintf(err, errcap, "%s: out of memory", f->name);
            return ZF_ENOMEM;
        }
        zf_elem_convert(in, e, tmp, w, n);
        work(f, tmp, n);
        zf_elem_convert(tmp, w, out, d, n);
        free(tmp);
    }
    return ZF_OK;
}
