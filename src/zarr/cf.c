/* cf.c - the CF decoding descriptor (zf_cf) of a duration or time array:
 * units and dtype attributes, packing, the mask values placed, the
 * computation path and decoded unit, and its description (the attribute
 * values it is made of: cf_attr.c; "UNIT since DATE": cf_time.c).
 *
 * The rules follow xarray (2025.04+): xarray/coding/times.py (TIME_UNITS,
 * CFTimedeltaCoder.decode, resolve_time_unit_from_attrs_dtype) and
 * xarray/coding/variables.py (_choose_float_dtype, CFScaleOffsetCoder.decode). */
#include "zarr/cf.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "text/cftime.h"
#include "text/datetime.h"
#include "cf_impl.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))

/* ---- units and dtype --------------------------------------------------- */

/* xarray's seven (TIME_UNITS) and the UDUNITS spellings of the same units */
static const struct {
    const char *name;
    zf_unit unit;
} unit_names[] = {
    {"days", ZF_UNIT_D}, {"day", ZF_UNIT_D}, {"d", ZF_UNIT_D},
    {"hours", ZF_UNIT_h}, {"hour", ZF_UNIT_h}, {"hr", ZF_UNIT_h}, {"h", ZF_UNIT_h},
    {"minutes", ZF_UNIT_m}, {"minute", ZF_UNIT_m}, {"min", ZF_UNIT_m},
    {"seconds", ZF_UNIT_s}, {"second", ZF_UNIT_s}, {"sec", ZF_UNIT_s}, {"s", ZF_UNIT_s},
    {"milliseconds", ZF_UNIT_ms}, {"millisecond", ZF_UNIT_ms}, {"ms", ZF_UNIT_ms},
    {"microseconds", ZF_UNIT_us}, {"microsecond", ZF_UNIT_us}, {"us", ZF_UNIT_us},
    {"nanoseconds", ZF_UNIT_ns}, {"nanosecond", ZF_UNIT_ns}, {"ns", ZF_UNIT_ns},
};

/* the duration unit a units string names; 0 if it names none */
static int units_unit(const char *s, zf_unit *out)
{
    for (size_t i = 0; i < sizeof unit_names / sizeof unit_names[0]; i++)
        if (!strcmp(s, unit_names[i].name)) {
            *out = unit_names[i].unit;
            return 1;
        }
    return 0;
}

/* xarray's time_unit for a dtype attribute "timedelta64[<digits><unit>]"
 * (resolve_time_unit_from_attrs_dtype): coarser than s -> s, finer than ns -> ns;
 * anything numpy or xarray rejects is damaged */
static int dtype_unit(const char *s, zf_unit *out, char *err, size_t errcap)
{
    const char *p = s + strlen("timedelta64");
    if (*p++ != '[')
        return ERR(ZF_ECORRUPT, "dtype attribute \"%.40s\" names no unit", s);
    uint64_t mult = 0;
    while (*p >= '0' && *p <= '9' && mult <= INT32_MAX)
        mult = mult * 10 + (uint64_t)(*p++ - '0');
    char unit[16];
    const char *close = strchr(p, ']');
    size_t len = close ? (size_t)(close - p) : 0;
    zf_unit u;
    if (mult > INT32_MAX || !close || close[1] || len == 0 || len >= sizeof unit)
        return ERR(ZF_ECORRUPT, "invalid dtype attribute \"%.40s\"", s);
    memcpy(unit, p, len);
    unit[len] = '\0';
    if (zf_unit_parse(unit, &u) != ZF_OK || u == ZF_UNIT_Y || u == ZF_UNIT_M ||
        u == ZF_UNIT_as || u == ZF_UNIT_GENERIC)
        return ERR(ZF_ECORRUPT, "dtype attribute \"%.40s\": xarray cannot decode to that unit", s);
    *out = u <= ZF_UNIT_s ? ZF_UNIT_s : u >= ZF_UNIT_ns ? ZF_UNIT_ns : u;
    return ZF_OK;
}

/* ---- packing ----------------------------------------------------------- */

/* scale_factor / add_offset: absent (0), a number (1), or damaged */
static int pack_attr(const char *raw, size_t n, const char *key, zf_cf_num *out, char *err,
                     size_t errcap)
{
    const char *val;
    size_t vlen;
    if (!zf_cf_raw_attr(raw, n, key, &val, &vlen))
        return 0;
    if (!zf_cf_scan_number(val, vlen, out) || (!out->is_int && !isfinite(out->d)))
        return ERR(ZF_ECORRUPT, "%s is not a number", key);
    return 1;
}

/* choose the packing as CFScaleOffsetCoder and _choose_float_dtype do with
 * Python-typed attributes: float64, except an integer scale_factor without
 * add_offset (numpy keeps int64) */
static int parse_pack(zf_cf *cf, const char *raw, size_t n, int masked, char *err, size_t errcap)
{
    zf_cf_num sf, ao;
    int hs = pack_attr(raw, n, "scale_factor", &sf, err, errcap);
    int ho = hs < 0 ? 0 : pack_attr(raw, n, "add_offset", &ao, err, errcap);
    if (hs < 0 || ho < 0)
        return hs < 0 ? hs : ho;
    cf->has_scale = hs;
    cf->has_offset = ho;
    if (!hs && !ho) {
        cf->pack = ZF_CF_PACK_NONE;
        return ZF_OK;
    }
    if (hs && !ho && sf.is_int) {
        if (masked) /* xarray fails too: it cannot put NaN into int64 */
            return ERR(ZF_EUNSUPPORTED, "an integer scale_factor with a mask (xarray cannot decode it)");
        if (!zf_cf_num_i64(&sf, &cf->iscale))
            return ERR(ZF_EUNSUPPORTED, "scale_factor is an integer beyond int64");
        cf->pack = ZF_CF_PACK_I64;
        return ZF_OK;
    }
    cf->pack = ZF_CF_PACK_F64;
    cf->scale = hs ? sf.d : 1.0;
    cf->offset = ho ? ao.d : 0.0;
    return ZF_OK;
}

/* ---- the descriptor ---------------------------------------------------- */

/* sort the mask values into the exact-integer and double lists */
static void place_mask(zf_cf *cf, const zf_cf_mask *m)
{
    cf->nmask_i = cf->nmask_f = 0;
    for (unsigned i = 0; i < m->count; i++) {
        const zf_cf_mval *v = &m->v[i];
        int64_t x;
        if (cf->mask_int && v->is_int) {
            if (zf_cf_num_i64(&v->n, &x)) /* a uint64 >= 2^63 equals no int64 */
                cf->mask_i[cf->nmask_i++] = x;
        } else {
            cf->mask_f[cf->nmask_f++] = v->n.d;
        }
    }
}

/* the computation path and the decoded unit */
static void choose_path(zf_cf *cf, int masked)
{
    int integer = cf->elem.kind != ZF_ELEM_FLOAT;
    cf->mask_int = integer && cf->pack == ZF_CF_PACK_NONE;
    if (cf->pack == ZF_CF_PACK_F64)
        cf->path = ZF_CF_PATH_F64;
    else if (cf->pack == ZF_CF_PACK_I64 || (integer && (masked || cf->elem.size < 8 ||
                                                         cf->elem.kind == ZF_ELEM_INT)))
        cf->path = ZF_CF_PATH_INT;
    else if (integer)
        cf->path = ZF_CF_PATH_U64;
    else
        cf->path = cf->elem.size == 2 ? ZF_CF_PATH_F16
                 : cf->elem.size == 4 ? ZF_CF_PATH_F32 : ZF_CF_PATH_F64;
    /* integers come out at the units' resolution (s for D, h, m); floats at
     * whatever the values need, up to ns: ns holds them all */
    zf_unit level = cf->src <= ZF_UNIT_s ? ZF_UNIT_s : cf->src;
    if (cf->how == ZF_CF_SINCE) /* pandas: ns; cftime: us after the reference date */
        cf->unit = cf->decoding == ZF_CF_DEC_CFTIME ? ZF_UNIT_us : ZF_UNIT_ns;
    else if (cf->path == ZF_CF_PATH_F16 || cf->path == ZF_CF_PATH_F32 || cf->path == ZF_CF_PATH_F64)
        cf->unit = ZF_UNIT_ns;
    else
        cf->unit = cf->target > level ? cf->target : level;
}

/* append "key=value" (the raw text) to the attribute summary */
static void note_attr(zf_cf *cf, const char *raw, size_t n, const char *key)
{
    const char *val;
    size_t vlen, used = strlen(cf->attrs_text);
    if (!zf_cf_raw_attr(raw, n, key, &val, &vlen) || used + 2 >= sizeof cf->attrs_text)
        return;
    char text[128];
    zf_cf_clean_copy(text, sizeof text, val, vlen);
    snprintf(cf->attrs_text + used, sizeof cf->attrs_text - used, "%s%s=%s", used ? " " : "",
             key, text);
}

/* the units attribute: 1 a duration unit (in *unit), 0 not one, <0 damaged */
static int parse_units(const cJSON *attrs, zf_unit *unit, char *err, size_t errcap)
{
    const cJSON *u = attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "units") : NULL;
    if (!u)
        return 0;
    if (!cJSON_IsString(u))
        return ERR(ZF_ECORRUPT, "the units attribute is not a string");
    return units_unit(u->valuestring, unit);
}

/* time stamps: units "UNIT since DATE" (1), or damaged / unsupported (<0) */
static int since_units(zf_cf *cf, const cJSON *attrs, const char *units, char *err,
                       size_t errcap)
{
    int rc = zf_cf_since(cf, attrs, units, err, errcap);
    if (rc)
        return rc;
    if (cJSON_GetObjectItemCaseSensitive(attrs, "_Unsigned"))
        return ERR(ZF_EUNSUPPORTED, "the _Unsigned attribute is not supported");
    cf->how = ZF_CF_SINCE;
    cf->target = ZF_UNIT_ns; /* CFDatetimeCoder's default time_unit */
    return 1;
}

int zf_cf_units(zf_cf *cf, const cJSON *attrs, char *err, size_t errcap)
{
    const cJSON *u = attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "units") : NULL;
    if (cJSON_IsString(u) && strstr(u->valuestring, "since")) /* as CFDatetimeCoder.decode */
        return since_units(cf, attrs, u->valuestring, err, errcap);
    int rc = parse_units(attrs, &cf->src, err, errcap);
    if (rc <= 0)
        return rc;
    if (cJSON_GetObjectItemCaseSensitive(attrs, "_Unsigned"))
        return ERR(ZF_EUNSUPPORTED, "the _Unsigned attribute is not supported");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(attrs, "dtype");
    cf->how = ZF_CF_UNITS;
    cf->target = ZF_UNIT_ns; /* CFTimedeltaCoder without a dtype attribute */
    if (cJSON_IsString(dt) && !strncmp(dt->valuestring, "timedelta64", 11)) {
        if ((rc = dtype_unit(dt->valuestring, &cf->target, err, errcap)))
            return rc;
        cf->how = ZF_CF_UNITS_DTYPE;
    }
    return 1;
}

int zf_cf_parse(zf_cf *cf, int zarr_format, const cJSON *attrs, const char *raw, size_t n,
                char *err, size_t errcap)
{
    zf_cf_mask m;
    m.count = 0;
    int rc;
    if ((rc = zf_cf_collect_mask(cf, zarr_format, attrs, raw, n, cf->fill_null, &m, err, errcap)) ||
        (rc = parse_pack(cf, raw, n, m.count > 0, err, errcap)))
        return rc;
    choose_path(cf, m.count > 0);
    place_mask(cf, &m);
    cf->attrs_text[0] = '\0';
    static const char *const keys[] = {"units", "calendar", "dtype", "scale_factor",
                                       "add_offset", "_FillValue", "missing_value"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        note_attr(cf, raw, n, keys[i]);
    return ZF_OK;
}

int zf_cf_shown(const zf_cf *cf, zf_cf_mode mode)
{
    return cf->how == ZF_CF_NATIVE ||
           ((cf->how == ZF_CF_UNITS_DTYPE || cf->how == ZF_CF_SINCE) && mode != ZF_CF_OFF) ||
           (cf->how == ZF_CF_UNITS && mode == ZF_CF_ALL);
}

int zf_cf_mode_parse(const char *s, zf_cf_mode *mode)
{
    static const char *const names[] = {"all", "dtype", "off"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *mode = (zf_cf_mode)i;
            return ZF_OK;
        }
    return ZF_EINVAL;
}

/* the cftime class of a calendar's objects */
static const char *cftime_class(zf_calendar c)
{
    static const char *const names[] = {"DatetimeProlepticGregorian", "DatetimeGregorian",
                                        "DatetimeJulian", "DatetimeNoLeap", "DatetimeAllLeap",
                                        "Datetime360Day"};
    return names[c];
}

/* the epoch and calendar lines of time stamps */
static void describe_epoch(const zf_cf *cf, zf_sbuf *out)
{
    char text[ZF_VALUE_MAX];
    size_t n;
    const char *cal = cf->calendar[0] ? cf->calendar : "none";
    if (cf->how == ZF_CF_SINCE && cf->decoding != ZF_CF_DEC_PANDAS) {
        zf_cftfmt f;
        zf_cftfmt_init(&f, ZF_FORMAT_ISO, &cf->ref, "NaT");
        n = zf_text_value(&f.text, 0, text);
        zf_sbuf_printf(out, "epoch: %.*s (the reference date as cftime reads it, %s calendar)\n",
                       (int)n, text, zf_calendar_name(cf->cal));
    } else {
        zf_dtfmt f;
        int64_t e = cf->how == ZF_CF_SINCE ? cf->epoch_ns : 0;
        zf_dtfmt_init(&f, ZF_FORMAT_ISO, ZF_UNIT_ns, 1, "NaT");
        n = zf_dtfmt_value(&f, e, text);
        zf_sbuf_printf(out, "epoch: %.*s (%lld ns since 1970-01-01T00:00:00)\n", (int)n, text,
                       (long long)e);
    }
    if (cf->how != ZF_CF_SINCE)
        zf_sbuf_printf(out, "calendar: proleptic_gregorian (numpy)\n");
    else if (cf->decoding == ZF_CF_DEC_CFTIME)
        zf_sbuf_printf(out, "calendar: %s (cftime.%s objects: raw and seconds count from the "
                       "epoch)\n", cal, cftime_class(cf->cal));
    else if (cf->may_cftime)
        zf_sbuf_printf(out, "calendar: %s (numpy.datetime64[ns] while every value lies in "
                       "1677-09-21..2262-04-11, else cftime.%s objects for every value, raw and "
                       "seconds counting from the reference date)\n", cal, cftime_class(cf->cal));
    else
        zf_sbuf_printf(out, "calendar: %s (numpy.datetime64[ns]; values outside "
                       "1677-09-21..2262-04-11 are errors)\n", cal);
}

void zf_cf_describe(const zf_cf *cf, int datetime, zf_sbuf *out)
{
    static const char *const how[] = {"native numpy.timedelta64", "CF units attribute",
                                      "CF units and dtype attributes",
                                      "CF time units attribute (UNIT since DATE)"};
    if (cf->how == ZF_CF_NATIVE && datetime)
        zf_sbuf_printf(out, "encoding: native numpy.datetime64\n");
    else
        zf_sbuf_printf(out, "encoding: %s\n", how[cf->how]);
    if (cf->how != ZF_CF_NATIVE) {
        zf_sbuf_printf(out, "stored_type: %s\n", zf_cf_elem_name(cf->elem));
        zf_sbuf_printf(out, "cf_attributes: %s\n", cf->attrs_text);
    }
    if (datetime)
        describe_epoch(cf, out);
}

void zf_cf_fingerprint(const zf_cf *cf, zf_fp *fp)
{
    int32_t f[12] = {cf->how, cf->elem.kind, (int32_t)cf->elem.size, cf->src, cf->target, cf->unit,
                     cf->path, cf->pack, cf->has_scale, cf->has_offset, cf->mask_int,
                     (int32_t)(cf->nmask_i << 8 | cf->nmask_f)};
    zf_fp_add(fp, f, sizeof f);
    if (cf->how == ZF_CF_NATIVE)
        return;
    zf_fp_add(fp, &cf->scale, sizeof cf->scale);
    zf_fp_add(fp, &cf->offset, sizeof cf->offset);
    zf_fp_add(fp, &cf->iscale, sizeof cf->iscale);
    zf_fp_add(fp, cf->mask_i, cf->nmask_i * sizeof *cf->mask_i);
    zf_fp_add(fp, cf->mask_f, cf->nmask_f * sizeof *cf->mask_f);
    zf_fp_add(fp, cf->fill_raw, sizeof cf->fill_raw);
    zf_fp_add(fp, &cf->epoch_ns, sizeof cf->epoch_ns);
    int64_t t[7] = {cf->cal, cf->decoding, cf->may_cftime, cf->ref.day, cf->ref.us, cf->us_per,
                    cf->fix_us};
    zf_fp_add(fp, t, sizeof t);
}
