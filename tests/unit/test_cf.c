/* test_cf.c - CF duration descriptors (zarr/cf.h) and conversion (chunk/convert.h).
 *
 * Each case is one v3 array's metadata and a few stored elements; the
 * expected ticks are what xarray 2026.9 shows for them (worked out with
 * xarray.open_zarr(..., decode_timedelta=True) when the case was written;
 * the oracle suite, tests/oracle/test_cf.py, checks whole stores against
 * xarray itself).  Also: what parses as damaged, and the out-of-range
 * errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/half.h"
#include "base/json.h"
#include "chunk/convert.h"
#include "zarr/meta.h"

#include "check.h"

#define NAT INT64_MIN

/* a v3 zarr.json of shape [n] with data type dt, fill and attributes */
static int parse(const char *dt, const char *fill, const char *attrs, unsigned n, zf_meta *m,
                 char *err, size_t cap)
{
    char doc[2048];
    snprintf(doc, sizeof doc,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%u],\"data_type\":\"%s\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%u]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":%s,"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
             "\"attributes\":%s}", n, dt, n, fill, attrs);
    zf_node_kind kind;
    err[0] = '\0';
    int rc = zf_meta_parse_v3(doc, strlen(doc), &kind, m, err, cap);
    if (rc == ZF_OK && kind != ZF_KIND_TIMEDELTA) {
        zf_meta_clear(m);
        return 1; /* not durations */
    }
    return rc;
}

/* convert n elements given as doubles (stored as dt) and compare with want */
static void expect(const char *what, const char *dt, const char *attrs, const double *in,
                   const int64_t *want, unsigned n, zf_unit unit)
{
    zf_meta m;
    char err[256];
    int rc = parse(dt, "0", attrs, n, &m, err, sizeof err);
    CHECK(rc == ZF_OK, "%s: parse: %d %s", what, rc, err);
    if (rc)
        return;
    CHECK(m.unit == unit, "%s: unit %s, want %s", what, zf_unit_name(m.unit), zf_unit_name(unit));
    int64_t *buf = calloc(n, 8);
    for (unsigned i = 0; i < n; i++) {
        zf_elem e = m.elem;
        uint8_t *p = (uint8_t *)buf + i * e.size;
        if (e.kind == ZF_ELEM_FLOAT && e.size == 2) { uint16_t h = zf_float_to_half((float)in[i]); memcpy(p, &h, 2); }
        else if (e.kind == ZF_ELEM_FLOAT && e.size == 4) { float f = (float)in[i]; memcpy(p, &f, 4); }
        else if (e.kind == ZF_ELEM_FLOAT) memcpy(p, &in[i], 8);
        else if (e.kind == ZF_ELEM_UINT) { uint64_t u = (uint64_t)in[i]; memcpy(p, &u, e.size); }
        else { int64_t v = (int64_t)in[i]; memcpy(p, &v, e.size); } /* little-endian */
    }
    uint64_t shape[1] = {n};
    rc = zf_convert_chunk(&m.cf, buf, 1, shape, NULL, NULL, err, sizeof err);
    CHECK(rc == ZF_OK, "%s: convert: %s", what, err);
    for (unsigned i = 0; rc == ZF_OK && i < n; i++)
        CHECK(buf[i] == want[i], "%s[%u]: %lld, want %lld", what, i, (long long)buf[i],
              (long long)want[i]);
    free(buf);
    zf_meta_clear(&m);
}

static void values(void)
{
    /* time stamps (units "UNIT since DATE"): ns since 1970, the reference added */
    expect("since int32 h", "int32", "{\"units\":\"hours since 2000-01-01T06:00:00Z\"}",
           (double[]){1, -1}, (int64_t[]){946710000000000000, 946702800000000000}, 2, ZF_UNIT_ns);
    /* floats: one float64 multiplication by ns per unit, truncated (no x1000 steps) */
    expect("since float64 D", "float64", "{\"units\":\"days since 1970-01-01\"}",
           (double[]){0.1, 1e-10, -0.5, 1.3, NAN},
           (int64_t[]){8640000000000, 8640, -43200000000000, 112320000000000, NAT}, 5, ZF_UNIT_ns);
    /* float32 widened to float64 first */
    expect("since float32 h", "float32", "{\"units\":\"hours since 1970-01-01\"}",
           (double[]){1.3}, (int64_t[]){4679999828338}, 1, ZF_UNIT_ns);
    /* int64 minutes, no dtype: ns; NaT stays NaT */
    expect("int64 minutes", "int64", "{\"units\":\"minutes\"}", (double[]){2, -1, -9223372036854775808.0},
           (int64_t[]){120000000000, -60000000000, NAT}, 3, ZF_UNIT_ns);
    /* dtype [s]: integers keep seconds (beyond int64 ns is fine) */
    expect("int64 s dtype s", "int64", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[s]\"}",
           (double[]){1e11, 5}, (int64_t[]){100000000000, 5}, 2, ZF_UNIT_s);
    /* milliseconds with dtype [s]: ms (xarray keeps the finer) */
    expect("int ms dtype s", "int32", "{\"units\":\"milliseconds\",\"dtype\":\"timedelta64[s]\"}",
           (double[]){1500, 5}, (int64_t[]){1500, 5}, 2, ZF_UNIT_ms);
    /* packed int16: 0.1 h steps, _FillValue -1; 32767*0.1+1 h truncates at ns */
    expect("int16 packed", "int16",
           "{\"units\":\"hours\",\"dtype\":\"timedelta64[s]\",\"scale_factor\":0.1,\"add_offset\":1.0,\"_FillValue\":-1}",
           (double[]){0, 1, -1, 3, 32767},
           (int64_t[]){3600000000000, 3960000000000, NAT, 4680000000000, 11799720000000002}, 5, ZF_UNIT_ns);
    /* float32 seconds: the chunk needs ns (3e-7), so every value is scaled in float32 */
    expect("float32 s", "float32", "{\"units\":\"seconds\"}",
           (double[]){0.1, 1.5, -2.25, 3e-7, 1e6, NAN},
           (int64_t[]){100000000, 1500000000, -2249999872, 300, 999999986991104, NAT}, 6, ZF_UNIT_ns);
    /* the same without the finest value: ms suffice, values stay exact */
    expect("float32 s coarse", "float32", "{\"units\":\"seconds\"}", (double[]){0.1, 1.5, -2.25},
           (int64_t[]){100000000, 1500000000, -2250000000}, 3, ZF_UNIT_ns);
    /* float32 hours: float64 after * 3600 */
    expect("float32 h", "float32", "{\"units\":\"hours\"}", (double[]){0.1, 1.5},
           (int64_t[]){360000005364, 5400000000000}, 2, ZF_UNIT_ns);
    /* float64 finer than the dtype attribute's resolution: kept, truncated at ns */
    expect("float64 frac", "float64", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[s]\"}",
           (double[]){1.5, 1e-10, 2.0}, (int64_t[]){1500000000, 0, 2000000000}, 3, ZF_UNIT_ns);
    /* an integer scale_factor without add_offset: int64 (floats truncated first) */
    expect("int scale", "int16", "{\"units\":\"minutes\",\"scale_factor\":3}", (double[]){2, -3},
           (int64_t[]){360000000000, -540000000000}, 2, ZF_UNIT_ns);
    expect("float int scale", "float64", "{\"units\":\"seconds\",\"scale_factor\":2}",
           (double[]){1.5, -2.7}, (int64_t[]){2000000000, -4000000000}, 2, ZF_UNIT_ns);
    /* v3 _FillValue 3.7 on an int array: int(3.7) = 3 */
    expect("fill trunc", "int64", "{\"units\":\"minutes\",\"_FillValue\":3.7}", (double[]){3, 4},
           (int64_t[]){NAT, 240000000000}, 2, ZF_UNIT_ns);
    /* missing_value list; a float in it makes every value a float */
    expect("missing list", "int64", "{\"units\":\"seconds\",\"missing_value\":[2, 5.0]}",
           (double[]){2, 5, 6}, (int64_t[]){NAT, NAT, 6000000000}, 3, ZF_UNIT_ns);
    /* ... so the literal 2^53 + 1 equals 2^53 (as doubles) */
    expect("missing mixed big", "int64", "{\"units\":\"ns\",\"missing_value\":[9007199254740993, 0.5]}",
           (double[]){9007199254740992.0}, (int64_t[]){NAT}, 1, ZF_UNIT_ns);
    /* a string mask value matches nothing */
    expect("missing str", "int64", "{\"units\":\"seconds\",\"missing_value\":\"2\"}",
           (double[]){2}, (int64_t[]){2000000000}, 1, ZF_UNIT_ns);
    /* uint64 minutes: through float64 */
    expect("uint64 min", "uint64", "{\"units\":\"minutes\",\"dtype\":\"timedelta64[s]\"}",
           (double[]){5, 144115188075855872.0}, (int64_t[]){300, 8646911284551352320}, 2, ZF_UNIT_s);
    /* UDUNITS spellings decode as xarray's plurals */
    expect("udunits hr", "int8", "{\"units\":\"hr\"}", (double[]){-2}, (int64_t[]){-7200000000000}, 1,
           ZF_UNIT_ns);
    /* dtype [h] -> s, [ps] -> ns */
    expect("dtype h", "int64", "{\"units\":\"hours\",\"dtype\":\"timedelta64[h]\"}", (double[]){2},
           (int64_t[]){7200}, 1, ZF_UNIT_s);
    expect("dtype ps", "int64", "{\"units\":\"microseconds\",\"dtype\":\"timedelta64[ps]\"}",
           (double[]){2}, (int64_t[]){2000}, 1, ZF_UNIT_ns);
}

/* time stamps beyond int64 ns fail their chunk with ZF_ERANGE (the array
 * becomes cftime objects); as cftime objects, their microseconds after the
 * reference date (want; 1 where cftime raises too: beyond int64 us) */
static void since_overflow(void)
{
    static const struct { const char *dt, *attrs; double v; int64_t want; } cases[] = {
        {"int64", "{\"units\":\"days since 2000-01-01\"}", 200000, INT64_C(17280000000000000)},
        {"int64", "{\"units\":\"days since 2000-01-01\"}", -200000, -INT64_C(17280000000000000)},
        {"int64", "{\"units\":\"days since 2000-01-01\"}", 1e15, 1}, /* beyond int64 us */
        {"float64", "{\"units\":\"seconds since 2262-04-11\"}", 86400.5, INT64_C(86400500000)},
        {"float64", "{\"units\":\"seconds since 1970-01-01\"}", INFINITY, ZF_NAT}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zf_meta m;
        char err[256];
        int rc = parse(cases[i].dt, "0", cases[i].attrs, 1, &m, err, sizeof err);
        CHECK(rc == ZF_OK, "since overflow %zu: parse %d", i, rc);
        if (rc)
            continue;
        uint8_t buf[8];
        int64_t iv = (int64_t)cases[i].v;
        if (m.elem.kind == ZF_ELEM_FLOAT)
            memcpy(buf, &cases[i].v, 8);
        else
            memcpy(buf, &iv, 8);
        uint64_t shape[1] = {1};
        err[0] = '\0';
        uint8_t stored[8];
        memcpy(stored, buf, 8);
        rc = zf_convert_chunk(&m.cf, buf, 1, shape, NULL, NULL, err, sizeof err);
        CHECK(rc == ZF_ERANGE && err[0] && m.cf.may_cftime, "since overflow %zu: rc %d", i, rc);
        zf_cf c;
        zf_cf_cftime(&m.cf, &c);
        int64_t t;
        rc = zf_convert_chunk(&c, stored, 1, shape, NULL, NULL, err, sizeof err);
        memcpy(&t, stored, 8);
        CHECK(cases[i].want == 1 ? rc == ZF_ECORRUPT : rc == ZF_OK && t == cases[i].want,
              "since overflow %zu as cftime: rc %d, %lld", i, rc, (long long)t);
        zf_meta_clear(&m);
    }
}

/* metadata that is not durations, or damaged */
static void recognition(void)
{
    static const struct {
        const char *dt, *fill, *attrs;
        int rc;
    } cases[] = {
        {"int64", "0", "{}", 1},
        {"int64", "0", "{\"units\":\"hours since 2000-01-01\"}", ZF_OK}, /* time stamps */
        {"int64", "0", "{\"units\":\"hours since 2000-01-01\",\"calendar\":\"noleap\"}", ZF_OK},
        {"int64", "0", "{\"units\":\"hours since 2000-01-01\",\"calendar\":\"tai\"}",
         ZF_EUNSUPPORTED},
        {"int64", "0", "{\"units\":\"nanoseconds since 2000-01-01\",\"calendar\":\"julian\"}",
         ZF_EUNSUPPORTED}, /* cftime has no nanoseconds */
        {"int64", "0", "{\"units\":\"days since 2001-02-29\",\"calendar\":\"julian\"}",
         ZF_EUNSUPPORTED},
        {"int64", "0", "{\"units\":\"hours since 2000-01-01\",\"calendar\":7}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"hours since 1000-01-01\"}", ZF_OK}, /* cftime */
        {"int64", "0", "{\"units\":\"hours since 1582-10-10\"}", ZF_EUNSUPPORTED}, /* the gap */
        {"int64", "0", "{\"units\":\"weeks since 2000-01-01\"}", ZF_EUNSUPPORTED},
        {"int64", "0", "{\"units\":\"m\"}", 1},
        {"int64", "0", "{\"units\":\"Days\"}", 1},
        {"bool", "false", "{\"units\":\"seconds\"}", 1},
        {"int64", "0", "{\"units\":5}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"dtype\":\"timedelta64\"}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[Y]\"}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[as]\"}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[2147483648s]\"}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"dtype\":\"int64\"}", ZF_OK},
        {"int64", "0", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[01s]\"}", ZF_OK},
        {"int16", "0", "{\"units\":\"seconds\",\"scale_factor\":\"x\"}", ZF_ECORRUPT},
        {"int16", "0", "{\"units\":\"seconds\",\"scale_factor\":null}", ZF_ECORRUPT},
        {"int16", "0", "{\"units\":\"seconds\",\"add_offset\":[1]}", ZF_ECORRUPT},
        {"int16", "0", "{\"units\":\"seconds\",\"scale_factor\":2,\"_FillValue\":1}", ZF_EUNSUPPORTED},
        {"float64", "0", "{\"units\":\"seconds\",\"_FillValue\":\"AAAA\"}", ZF_ECORRUPT},
        {"float64", "0", "{\"units\":\"seconds\",\"_FillValue\":1.0}", ZF_ECORRUPT},
        {"float64", "0", "{\"units\":\"seconds\",\"_FillValue\":\"AAAAAAAA+H8=\"}", ZF_OK},
        {"int64", "0", "{\"units\":\"seconds\",\"_FillValue\":\"1\"}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"_FillValue\":null}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"missing_value\":true}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"missing_value\":[[1]]}", ZF_ECORRUPT},
        {"int64", "0", "{\"units\":\"seconds\",\"missing_value\":[1e400]}", ZF_OK},
        {"int64", "0", "{\"units\":\"seconds\",\"missing_value\":[18446744073709551616]}", ZF_EUNSUPPORTED},
        {"int64", "0", "{\"units\":\"seconds\",\"_Unsigned\":\"true\"}", ZF_EUNSUPPORTED},
        {"int8", "128", "{\"units\":\"seconds\"}", ZF_ECORRUPT},
        {"uint8", "-1", "{\"units\":\"seconds\"}", ZF_ECORRUPT},
        {"int64", "1.5", "{\"units\":\"seconds\"}", ZF_ECORRUPT},
        {"uint64", "18446744073709551615", "{\"units\":\"seconds\"}", ZF_OK},
        {"float32", "\"0x7fc00000\"", "{\"units\":\"seconds\"}", ZF_OK},
        {"float32", "\"0x7fc0000\"", "{\"units\":\"seconds\"}", ZF_ECORRUPT},
        {"float64", "\"-Infinity\"", "{\"units\":\"seconds\"}", ZF_OK},
        {"float64", "\"nan\"", "{\"units\":\"seconds\"}", ZF_ECORRUPT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zf_meta m;
        char err[256];
        int rc = parse(cases[i].dt, cases[i].fill, cases[i].attrs, 4, &m, err, sizeof err);
        CHECK(rc == cases[i].rc, "%s %s %s: rc %d (%s), want %d", cases[i].dt, cases[i].fill,
              cases[i].attrs, rc, err, cases[i].rc);
        CHECK(rc <= 0 || !err[0] || rc == 1, "reason without error");
        CHECK(rc >= 0 || err[0], "%s: error without a reason", cases[i].attrs);
        if (rc == ZF_OK)
            zf_meta_clear(&m);
    }
}

/* a stored value, or a fill value, beyond int64 ticks is an error; padding never counts */
static void out_of_range(void)
{
    zf_meta m;
    char err[256];
    int rc = parse("int64", "4611686018427387904", "{\"units\":\"days\"}", 2, &m, err, sizeof err);
    CHECK(rc == ZF_OK, "parse: %s", err);
    int64_t t, buf[2] = {1, INT64_MAX};
    CHECK(zf_convert_one(&m.cf, m.cf.fill_raw, &t, err, sizeof err) == ZF_ECORRUPT, "fill 2^62 days");
    CHECK(strstr(err, "beyond int64 ns ticks"), "reason: %s", err);
    uint64_t shape[1] = {2}, valid[1] = {1};
    CHECK(zf_convert_chunk(&m.cf, buf, 1, shape, NULL, NULL, err, sizeof err) == ZF_ECORRUPT, "2^63-1 days");
    CHECK(strstr(err, "element 1"), "reason names the element: %s", err);
    buf[0] = 1, buf[1] = INT64_MAX;
    CHECK(zf_convert_chunk(&m.cf, buf, 1, shape, valid, NULL, err, sizeof err) == ZF_OK, "padding: %s", err);
    CHECK(buf[0] == 86400000000000, "1 day: %lld", (long long)buf[0]);
    zf_meta_clear(&m);
    rc = parse("float64", "0", "{\"units\":\"seconds\"}", 2, &m, err, sizeof err);
    double d[2] = {1.0, INFINITY};
    CHECK(rc == ZF_OK && zf_convert_chunk(&m.cf, d, 1, shape, NULL, NULL, err, sizeof err) == ZF_ECORRUPT,
          "infinity");
    if (rc == ZF_OK)
        zf_meta_clear(&m);
    rc = parse("uint64", "0", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[s]\"}", 2, &m, err, sizeof err);
    uint64_t u[2] = {1, UINT64_C(9223372036854775813)};
    CHECK(rc == ZF_OK && zf_convert_chunk(&m.cf, u, 1, shape, NULL, NULL, err, sizeof err) == ZF_ECORRUPT,
          "uint64 beyond int64");
    if (rc == ZF_OK)
        zf_meta_clear(&m);
}

/* the v2 fill value is the mask; a null one is not */
static void v2_mask(void)
{
    const char *zarray = "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[3],\"dtype\":\">i2\","
                         "\"compressor\":null,\"fill_value\":-1,\"order\":\"C\",\"filters\":null}";
    const char *zattrs = "{\"units\":\"seconds\",\"_FillValue\":2,\"scale_factor\":0.5}";
    zf_meta m;
    zf_node_kind kind;
    char err[256] = "";
    int rc = zf_meta_parse_v2(zarray, strlen(zarray), zattrs, strlen(zattrs), &kind, &m, err, sizeof err);
    CHECK(rc == ZF_OK && kind == ZF_KIND_TIMEDELTA, "v2 parse: %s", err);
    if (rc)
        return;
    CHECK(m.cf.how == ZF_CF_UNITS && m.cf.nmask_f == 1 && m.cf.mask_f[0] == -1.0, "mask is fill_value");
    int16_t v[4] = {-1, 2, 3, 0};
    int64_t out[3];
    memcpy(out, v, 6);
    uint64_t shape[1] = {3};
    CHECK(zf_convert_chunk(&m.cf, out, 1, shape, NULL, NULL, err, sizeof err) == ZF_OK, "%s", err);
    CHECK(out[0] == NAT && out[1] == 1000000000 && out[2] == 1500000000, "v2 mask: %lld %lld %lld",
          (long long)out[0], (long long)out[1], (long long)out[2]);
    zf_meta_clear(&m);
}

/* NaN, Infinity and -Infinity as Python's json reads them: numbers in their
 * places, words inside strings left alone */
static void nonfinite_json(void)
{
    static const char doc[] = "{\"a\": [1, NaN, \"NaN\", Infinity, {\"b\": -Infinity}], \"c\": NaN, "
                              "\"d\": \"x Infinity\", \"e\": 2.5}";
    cJSON *j = zf_json_parse(doc, sizeof doc - 1);
    CHECK(j, "parsed");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "a");
    CHECK(cJSON_GetArraySize(a) == 5, "a has 5 items");
    CHECK(cJSON_GetArrayItem(a, 0)->valuedouble == 1.0, "a[0] 1");
    CHECK(isnan(cJSON_GetArrayItem(a, 1)->valuedouble), "a[1] NaN");
    CHECK(cJSON_IsString(cJSON_GetArrayItem(a, 2)), "a[2] the string \"NaN\"");
    CHECK(isinf(cJSON_GetArrayItem(a, 3)->valuedouble) && cJSON_GetArrayItem(a, 3)->valuedouble > 0,
          "a[3] Infinity");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 4), "b");
    CHECK(b && isinf(b->valuedouble) && b->valuedouble < 0, "b -Infinity");
    CHECK(isnan(cJSON_GetObjectItemCaseSensitive(j, "c")->valuedouble), "c NaN");
    CHECK(!strcmp(cJSON_GetObjectItemCaseSensitive(j, "d")->valuestring, "x Infinity"), "d kept");
    CHECK(cJSON_GetObjectItemCaseSensitive(j, "e")->valuedouble == 2.5, "e 2.5");
    cJSON_Delete(j);
    static const char *const bad[] = {"{\"a\": NaNa}", "{\"a\": -NaN}", "{\"a\": +Infinity}",
                                      "{\"a\": nan}", "[Infinity"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *x = zf_json_parse(bad[i], strlen(bad[i]));
        CHECK(!x, "%s is not JSON", bad[i]);
        cJSON_Delete(x);
    }
    /* a mask value -Infinity masks; NaN masks nothing; valid_max NaN is harmless */
    static const double in[] = {1.0, -INFINITY, NAN, 2.0};
    static const int64_t want[] = {1000000000, NAT, NAT, 2000000000};
    expect("missing_value [NaN, -Infinity]", "float64",
           "{\"units\":\"seconds\",\"missing_value\":[NaN,-Infinity],\"valid_max\":NaN}", in,
           want, 4, ZF_UNIT_ns);
}

/* float16: every half widens and narrows back to itself; narrowing rounds
 * to nearest, ties to even, beyond 65504 + half a step to infinity */
static void float16(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = zf_half_to_float((uint16_t)h);
        if (!isnan(f) && zf_float_to_half(f) != h)
            bad++;
        if ((h & 0x7c00) == 0x7c00 || (h & 0x7fff) == 0x7bff)
            continue; /* infinities, NaN, the largest */
        float next = zf_half_to_float((uint16_t)(h + 1)), mid = (f + next) / 2;
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h; /* the even mantissa */
        if (zf_float_to_half(mid) != even || zf_float_to_half(nextafterf(mid, f)) != h ||
            zf_float_to_half(nextafterf(mid, next)) != (uint16_t)(h + 1))
            bad++;
    }
    CHECK(bad == 0, "%d halves round wrongly", bad);
    CHECK(zf_float_to_half(65519.99f) == 0x7bff && zf_float_to_half(65520.0f) == 0x7c00 &&
          zf_float_to_half(-65520.0f) == 0xfc00, "overflow to infinity");
    /* numpy: float16 0.333 s is 333 ms (one x1000 in float16); 1.5 h 5400 s */
    static const double s_in[] = {0.333, 7, NAN};
    static const int64_t s_want[] = {333000000, 7000000000, NAT};
    expect("float16 seconds", "float16", "{\"units\":\"seconds\"}", s_in, s_want, 3, ZF_UNIT_ns);
    static const double h_in[] = {0.1, 1.5};
    static const int64_t h_want[] = {359912109375, 5400000000000};
    expect("float16 hours", "float16", "{\"units\":\"hours\"}", h_in, h_want, 2, ZF_UNIT_ns);
}

/* floats with a dtype attribute coarser than ns: a chunk beyond int64 ns is
 * decoded at xarray's unit for it, when the caller takes coarser chunks */
static void coarser_chunks(void)
{
    zf_meta m;
    char err[256];
    int rc = parse("float64", "0", "{\"units\":\"seconds\",\"dtype\":\"timedelta64[s]\"}", 2, &m,
                   err, sizeof err);
    CHECK(rc == ZF_OK && zf_convert_may_coarsen(&m.cf), "float seconds, dtype [s]: %s", err);
    if (rc)
        return;
    uint64_t shape[1] = {2};
    double whole[2] = {1e10, 3}, frac[2] = {1e10, 0.5}, ns[2] = {1e10, 1e-9};
    int64_t *t = (int64_t *)whole;
    unsigned k = 9;
    CHECK(zf_convert_chunk(&m.cf, whole, 1, shape, NULL, NULL, err, sizeof err) == ZF_ECORRUPT,
          "beyond ns without coarser chunks");
    whole[0] = 1e10, whole[1] = 3;
    CHECK(zf_convert_chunk(&m.cf, whole, 1, shape, NULL, &k, err, sizeof err) == ZF_OK && k == 3 &&
          t[0] == 10000000000 && t[1] == 3, "seconds: k %u, %s", k, err);
    t = (int64_t *)frac;
    CHECK(zf_convert_chunk(&m.cf, frac, 1, shape, NULL, &k, err, sizeof err) == ZF_OK && k == 2 &&
          t[0] == 10000000000000 && t[1] == 500, "milliseconds: k %u, %s", k, err);
    CHECK(zf_convert_chunk(&m.cf, ns, 1, shape, NULL, &k, err, sizeof err) == ZF_ECORRUPT &&
          strstr(err, "xarray's cast to int64 overflows there and gives NaT"), "ns: %s", err);
    double small[2] = {1.5, 2};
    t = (int64_t *)small;
    CHECK(zf_convert_chunk(&m.cf, small, 1, shape, NULL, &k, err, sizeof err) == ZF_OK && k == 0 &&
          t[0] == 1500000000, "within ns: ns ticks, k %u", k);
    zf_meta_clear(&m);
}

int main(void)
{
    nonfinite_json();
    float16();
    coarser_chunks();
    values();
    recognition();
    since_overflow();
    out_of_range();
    v2_mask();
    return check_summary("test_cf");
}
