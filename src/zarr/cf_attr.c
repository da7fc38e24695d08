/* cf_attr.c - the values of CF attributes as xarray reads them: JSON number
 * literals as Python's json module does, the stored element types, the fill
 * value as a stored element, and the mask values (_FillValue,
 * missing_value; the v2 fill value); the descriptor they go into: cf.c.
 *
 * The rules follow xarray (2025.04+): xarray/coding/variables.py
 * (_check_fill_values, CFMaskCoder.decode) and xarray/backends/zarr.py
 * (FillValueCoder.decode; v2 fill_value as _FillValue). */
#include "zarr/cf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/half.h"
#include "base/json.h"
#include "base/utf8.h"
#include "cf_impl.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))

/* ---- numbers as JSON literals say them --------------------------------- */

/* is [p, p+n) exactly one JSON number literal, or one of Python's NaN,
 * Infinity and -Infinity?  Fills *out. */
int zf_cf_scan_number(const char *p, size_t n, zf_cf_num *out)
{
    char buf[512];
    static const struct { const char *word; double v; } words[] = {
        {"NaN", NAN}, {"Infinity", INFINITY}, {"-Infinity", -INFINITY}};
    for (size_t i = 0; i < 3; i++)
        if (n == strlen(words[i].word) && !memcmp(p, words[i].word, n)) {
            *out = (zf_cf_num){.d = words[i].v, .neg = *p == '-'};
            return 1;
        }
    if (n == 0 || n >= sizeof buf || !(*p == '-' || (*p >= '0' && *p <= '9')))
        return 0;
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *end;
    out->d = strtod(buf, &end); /* correctly rounded, as float() */
    if (*end)
        return 0;
    out->is_int = !strpbrk(buf, ".eE");
    out->neg = buf[0] == '-';
    out->fits = out->is_int;
    out->mag = 0;
    for (const char *q = buf + out->neg; out->is_int && *q; q++) {
        unsigned dgt = (unsigned)(*q - '0');
        if (out->mag > (UINT64_MAX - dgt) / 10) {
            out->fits = 0;
            break;
        }
        out->mag = out->mag * 10 + dgt;
    }
    if (out->fits && out->neg && out->mag > (UINT64_C(1) << 63))
        out->fits = 0;
    return 1;
}

/* the integer n as an int64 if it is one */
int zf_cf_num_i64(const zf_cf_num *v, int64_t *out)
{
    if (!v->is_int || !v->fits)
        return 0;
    if (v->neg) {
        *out = v->mag == (UINT64_C(1) << 63) ? INT64_MIN : -(int64_t)v->mag;
        return 1;
    }
    if (v->mag > INT64_MAX)
        return 0;
    *out = (int64_t)v->mag;
    return 1;
}

/* the raw span of key in the JSON object raw[0..n): 1 found, 0 absent */
int zf_cf_raw_attr(const char *raw, size_t n, const char *key, const char **val, size_t *vlen)
{
    return raw && zf_json_raw_member(raw, n, key, val, vlen) == ZF_OK;
}

/* ---- data types -------------------------------------------------------- */

static const struct {
    const char *v3;
    char v2; /* 'i', 'u' or 'f' */
    zf_elem elem;
} elem_types[] = {
    {"int8", 'i', {ZF_ELEM_INT, 1}},    {"int16", 'i', {ZF_ELEM_INT, 2}},
    {"int32", 'i', {ZF_ELEM_INT, 4}},   {"int64", 'i', {ZF_ELEM_INT, 8}},
    {"uint8", 'u', {ZF_ELEM_UINT, 1}},  {"uint16", 'u', {ZF_ELEM_UINT, 2}},
    {"uint32", 'u', {ZF_ELEM_UINT, 4}}, {"uint64", 'u', {ZF_ELEM_UINT, 8}},
    {"float16", 'f', {ZF_ELEM_FLOAT, 2}}, {"float32", 'f', {ZF_ELEM_FLOAT, 4}},
    {"float64", 'f', {ZF_ELEM_FLOAT, 8}},
};
#define N_ELEM_TYPES (sizeof elem_types / sizeof elem_types[0])

int zf_cf_v3_elem(const char *name, zf_elem *elem)
{
    for (size_t i = 0; i < N_ELEM_TYPES; i++)
        if (!strcmp(name, elem_types[i].v3)) {
            *elem = elem_types[i].elem;
            return ZF_OK;
        }
    return ZF_ENOTFOUND;
}

int zf_cf_v2_elem(const char *s, zf_elem *elem, int *big)
{
    if (strlen(s) != 3 || !strchr("<>|", s[0]))
        return 0;
    for (size_t i = 0; i < N_ELEM_TYPES; i++) {
        const zf_elem e = elem_types[i].elem;
        if (s[1] == elem_types[i].v2 && (unsigned)(s[2] - '0') == e.size) {
            if (s[0] == '|' && e.size != 1) /* no byte order only for single bytes */
                return 0;
            *elem = e;
            *big = s[0] == '>';
            return 1;
        }
    }
    return 0;
}

/* the name of a stored element type ("int16") */
const char *zf_cf_elem_name(zf_elem e)
{
    for (size_t i = 0; i < N_ELEM_TYPES; i++)
        if (elem_types[i].elem.kind == e.kind && elem_types[i].elem.size == e.size)
            return elem_types[i].v3;
    return "?";
}

/* ---- the fill value ---------------------------------------------------- */

/* store the integer v (magnitude mag, sign neg) as an element of type e */
static int put_int(zf_elem e, int neg, uint64_t mag, uint8_t *out)
{
    unsigned bits = 8 * e.size;
    uint64_t bits_v;
    if (e.kind == ZF_ELEM_UINT) {
        if (neg && mag)
            return 0;
        if (bits < 64 && mag >> bits)
            return 0;
        bits_v = mag;
    } else {
        uint64_t lim = UINT64_C(1) << (bits - 1); /* |min| */
        if (neg ? mag > lim : mag >= lim)
            return 0;
        bits_v = neg ? (uint64_t)0 - mag : mag;
    }
    switch (e.size) { /* the low bytes, in machine order */
    case 1: { uint8_t v = (uint8_t)bits_v; memcpy(out, &v, 1); break; }
    case 2: { uint16_t v = (uint16_t)bits_v; memcpy(out, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits_v; memcpy(out, &v, 4); break; }
    default: memcpy(out, &bits_v, 8); break;
    }
    return 1;
}

/* store the double d as a float element of size 2, 4 or 8 */
static void put_float(unsigned size, double d, uint8_t *out)
{
    if (size == 2) {
        uint16_t h = zf_float_to_half((float)d);
        memcpy(out, &h, 2);
    } else if (size == 4) {
        float f = (float)d;
        memcpy(out, &f, 4);
    } else {
        memcpy(out, &d, 8);
    }
}

/* a v3 "0x..." fill: the element's bits as 2 * size hex digits */
static int put_hex(unsigned size, const char *s, uint8_t *out)
{
    if (strncmp(s, "0x", 2) || strlen(s) != 2 + 2 * size)
        return 0;
    uint64_t v = 0;
    for (const char *p = s + 2; *p; p++) {
        int h = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
        if (h < 0)
            return 0;
        v = v << 4 | (unsigned)h;
    }
    if (size == 2) {
        uint16_t b = (uint16_t)v;
        memcpy(out, &b, 2);
    } else if (size == 4) {
        uint32_t b = (uint32_t)v;
        memcpy(out, &b, 4);
    } else {
        memcpy(out, &v, 8);
    }
    return 1;
}

/* a float fill given as a string: "NaN", "Infinity", "-Infinity", (v3) hex */
static int put_float_word(unsigned size, int zarr_format, const char *s, uint8_t *out)
{
    if (!strcmp(s, "NaN"))
        put_float(size, NAN, out);
    else if (!strcmp(s, "Infinity"))
        put_float(size, INFINITY, out);
    else if (!strcmp(s, "-Infinity"))
        put_float(size, -INFINITY, out);
    else
        return zarr_format == 3 && put_hex(size, s, out);
    return 1;
}

/* copy text into buf (capacity cap) with control characters (base/utf8.h) as spaces */
void zf_cf_clean_copy(char *buf, size_t cap, const char *text, size_t n)
{
    if (zf_utf8_clean_copy(buf, cap, text, n, ' ') < n && cap > 4) { /* cut short */
        size_t len = strlen(buf);
        memcpy(buf + (len < cap - 4 ? len : cap - 4), "...", 4);
    }
}

int zf_cf_parse_fill(zf_cf *cf, int zarr_format, const cJSON *fill, const char *raw, size_t n,
                     char *fill_text, size_t cap, char *err, size_t errcap)
{
    const char *val = NULL;
    size_t vlen = 0;
    zf_cf_num v;
    cf->fill_null = 0;
    memset(cf->fill_raw, 0, sizeof cf->fill_raw);
    if (zf_cf_raw_attr(raw, n, "fill_value", &val, &vlen))
        zf_cf_clean_copy(fill_text, cap, val, vlen);
    if (zarr_format == 2 && cJSON_IsNull(fill)) {
        cf->fill_null = 1; /* zarr-python reads missing chunks as zeros */
        return ZF_OK;
    }
    int floating = cf->elem.kind == ZF_ELEM_FLOAT;
    if (floating && cJSON_IsString(fill) &&
        put_float_word(cf->elem.size, zarr_format, fill->valuestring, cf->fill_raw))
        return ZF_OK;
    if (cJSON_IsNumber(fill) && val && zf_cf_scan_number(val, vlen, &v)) {
        if (floating) {
            put_float(cf->elem.size, v.d, cf->fill_raw);
            return ZF_OK;
        }
        if (v.is_int && v.fits && put_int(cf->elem, v.neg, v.mag, cf->fill_raw))
            return ZF_OK;
    }
    return ERR(ZF_ECORRUPT, "fill_value must be %s", floating
               ? "a number, \"NaN\", \"Infinity\" or \"-Infinity\"" : "an integer within the data type");
}

/* ---- mask values ------------------------------------------------------- */


static int mask_add(zf_cf_mask *m, const zf_cf_num *n, int as_double, char *err, size_t errcap)
{
    if (m->count == ZF_CF_MAX_MASK)
        return ERR(ZF_EUNSUPPORTED, "more than %d mask values", ZF_CF_MAX_MASK);
    if (n->is_int && !n->fits)
        return ERR(ZF_EUNSUPPORTED, "a mask value beyond 64-bit integers");
    if (!n->is_int && isnan(n->d))
        return ZF_OK; /* pd.isnull: never a mask value */
    m->v[m->count].n = *n;
    m->v[m->count++].is_int = n->is_int && !as_double;
    return ZF_OK;
}

/* the length of the JSON string literal at p (quotes included), 0 if cut short */
static size_t string_len(const char *p, const char *end)
{
    for (const char *q = p + 1; q < end; q++) {
        if (*q == '\\')
            q++;
        else if (*q == '"')
            return (size_t)(q - p) + 1;
    }
    return 0;
}

/* one element of a mask attribute: a number, null, a string, or other */
typedef enum el_kind { EL_NUM, EL_NULL, EL_STR, EL_OTHER } el_kind;

/* classify the token at p (length *len found here) */
static el_kind token(const char *p, const char *end, size_t *len, zf_cf_num *n)
{
    if (*p == '"') {
        *len = string_len(p, end);
        return *len ? EL_STR : EL_OTHER;
    }
    const char *q = p;
    while (q < end && !strchr(",]} \t\r\n", *q))
        q++;
    *len = (size_t)(q - p);
    if (*len == 4 && !memcmp(p, "null", 4))
        return EL_NULL;
    return zf_cf_scan_number(p, *len, n) ? EL_NUM : EL_OTHER;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && strchr(" \t\r\n", *p))
        p++;
    return p;
}

/* add the values of a missing_value / _FillValue attribute (a scalar or a flat
 * list of numbers and nulls), as np.ravel types them: a list with a float and
 * no null becomes float64 throughout; a string anywhere matches nothing */
static int mask_attr(zf_cf_mask *m, const char *name, const char *val, size_t vlen, char *err,
                     size_t errcap)
{
    const char *end = val + vlen, *p = skip_ws(val, end);
    int list = p < end && *p == '[';
    zf_cf_num nums[ZF_CF_MAX_MASK];
    unsigned k = 0, any_float = 0, any_null = 0, any_str = 0;
    size_t len;
    p = list ? skip_ws(p + 1, end) : p;
    while (p < end && !(list && *p == ']')) {
        zf_cf_num n;
        el_kind kind = token(p, end, &len, &n);
        if (kind == EL_OTHER)
            return ERR(ZF_ECORRUPT, "%s must be a number or a list of numbers", name);
        if (kind == EL_NUM && k == ZF_CF_MAX_MASK)
            return ERR(ZF_EUNSUPPORTED, "more than %d mask values", ZF_CF_MAX_MASK);
        if (kind == EL_NUM) {
            any_float |= !n.is_int;
            nums[k++] = n;
        }
        any_null |= kind == EL_NULL;
        any_str |= kind == EL_STR;
        p = skip_ws(p + len, end);
        if (!list)
            break;
        if (p < end && *p == ',')
            p = skip_ws(p + 1, end);
    }
    if (any_str) /* np.ravel makes every value a string: equal to no number */
        return ZF_OK;
    for (unsigned i = 0; i < k; i++) {
        int rc = mask_add(m, &nums[i], list && any_float && !any_null, err, errcap);
        if (rc)
            return rc;
    }
    return ZF_OK;
}

/* standard base64 of exactly 8 bytes ("AAAAAAAA+H8="): 11 digits and "=" */
static int base64_8(const char *s, uint8_t out[8])
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (strlen(s) != 12 || s[11] != '=')
        return 0;
    uint64_t acc = 0;
    for (int i = 0; i < 11; i++) {
        const char *d = s[i] ? strchr(digits, s[i]) : NULL;
        if (!d)
            return 0;
        acc = acc << 6 | (uint64_t)(d - digits);
        if (i == 9) { /* 60 bits: the first 7 bytes and a half */
            for (int b = 0; b < 7; b++)
                out[b] = (uint8_t)(acc >> (52 - 8 * b));
            acc &= 0xF;
        }
    }
    out[7] = (uint8_t)(acc >> 2); /* 4 + 6 bits; the last 2 are padding */
    return 1;
}

/* a v3 _FillValue attribute as xarray's FillValueCoder.decode reads it */
static int v3_fill_attr(const zf_cf *cf, zf_cf_mask *m, const cJSON *fv, const char *val,
                        size_t vlen, char *err, size_t errcap)
{
    zf_cf_num n;
    memset(&n, 0, sizeof n);
    if (cf->elem.kind == ZF_ELEM_FLOAT) { /* base64 of the little-endian float64 */
        uint8_t b[8];
        if (!cJSON_IsString(fv) || !base64_8(fv->valuestring, b))
            return ERR(ZF_ECORRUPT, "_FillValue must be base64 of a float64 (as \"AAAAAAAA+H8=\")");
        uint64_t bits = 0;
        for (int i = 7; i >= 0; i--)
            bits = bits << 8 | b[i];
        memcpy(&n.d, &bits, 8);
        return mask_add(m, &n, 1, err, errcap);
    }
    if (!cJSON_IsNumber(fv) || !zf_cf_scan_number(val, vlen, &n) || (!n.is_int && !isfinite(n.d)))
        return ERR(ZF_ECORRUPT, "_FillValue must be a number");
    if (!n.is_int) { /* int(value): towards zero */
        double t = trunc(n.d);
        n.is_int = 1;
        n.neg = t < 0;
        n.fits = fabs(t) <= 18446744073709549568.0 && (!n.neg || -t <= 9223372036854775808.0);
        n.mag = n.fits ? (uint64_t)fabs(t) : 0;
        n.d = t;
    }
    return mask_add(m, &n, 0, err, errcap);
}

/* the v2 fill value (not null) as xarray's _FillValue: the stored element */
static int v2_fill_mask(const zf_cf *cf, zf_cf_mask *m, char *err, size_t errcap)
{
    zf_cf_num n;
    memset(&n, 0, sizeof n);
    const uint8_t *b = cf->fill_raw;
    if (cf->elem.kind == ZF_ELEM_FLOAT) {
        float f;
        uint16_t h;
        if (cf->elem.size == 2)
            memcpy(&h, b, 2), n.d = zf_half_to_float(h);
        else if (cf->elem.size == 4)
            memcpy(&f, b, 4), n.d = f;
        else
            memcpy(&n.d, b, 8);
        return mask_add(m, &n, 1, err, errcap);
    }
    int64_t i = 0;
    uint64_t u = 0;
    int s = cf->elem.kind == ZF_ELEM_INT;
    switch (cf->elem.size) {
    case 1: { int8_t a; uint8_t c; memcpy(&a, b, 1); memcpy(&c, b, 1); i = a; u = c; break; }
    case 2: { int16_t a; uint16_t c; memcpy(&a, b, 2); memcpy(&c, b, 2); i = a; u = c; break; }
    case 4: { int32_t a; uint32_t c; memcpy(&a, b, 4); memcpy(&c, b, 4); i = a; u = c; break; }
    default: memcpy(&i, b, 8); memcpy(&u, b, 8); break;
    }
    n.is_int = n.fits = 1;
    n.neg = s && i < 0;
    n.mag = !s ? u : i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    n.d = s ? (double)i : (double)u;
    return mask_add(m, &n, 0, err, errcap);
}

/* the mask values: in v2 the fill value (else a _FillValue attribute, raw),
 * in v3 the _FillValue attribute (FillValueCoder), and missing_value */
int zf_cf_collect_mask(const zf_cf *cf, int zarr_format, const cJSON *attrs, const char *raw,
                       size_t n, int fill_is_null, zf_cf_mask *m, char *err, size_t errcap)
{
    const char *val;
    size_t vlen;
    int rc = ZF_OK;
    const cJSON *fv = attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "_FillValue") : NULL;
    if (zarr_format == 2 && !fill_is_null)
        rc = v2_fill_mask(cf, m, err, errcap);
    else if (fv && zf_cf_raw_attr(raw, n, "_FillValue", &val, &vlen))
        rc = zarr_format == 3 ? v3_fill_attr(cf, m, fv, val, vlen, err, errcap)
                              : mask_attr(m, "_FillValue", val, vlen, err, errcap);
    if (rc == ZF_OK && zf_cf_raw_attr(raw, n, "missing_value", &val, &vlen))
        rc = mask_attr(m, "missing_value", val, vlen, err, errcap);
    return rc;
}

