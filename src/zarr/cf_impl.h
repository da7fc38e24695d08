/* cf_impl.h - private to zarr/: the attribute values (cf_attr.c) the CF
 * decoding descriptor is made of (cf.c). */
#ifndef ZF_CF_IMPL_H
#define ZF_CF_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "zarr/cf.h"

/* A JSON number literal: what Python's json module makes of it. */
typedef struct zf_cf_num {
    int is_int;    /* an integer literal (a Python int), else a float */
    int fits;      /* is_int: within [-2^63, 2^64) */
    int neg;       /* is_int: negative */
    uint64_t mag;  /* is_int && fits: magnitude */
    double d;      /* float(literal) */
} zf_cf_num;

/* one value compared with elements: an exact integer or a double */
typedef struct zf_cf_mval {
    int is_int;
    zf_cf_num n;
} zf_cf_mval;

typedef struct zf_cf_mask {
    zf_cf_mval v[ZF_CF_MAX_MASK];
    unsigned count;
} zf_cf_mask;

/* Is [p, p+n) exactly one JSON number literal?  Fills *out. */
int zf_cf_scan_number(const char *p, size_t n, zf_cf_num *out);

/* The integer v as an int64, if it is one (1), else 0. */
int zf_cf_num_i64(const zf_cf_num *v, int64_t *out);

/* The raw span of key in the JSON object raw[0..n) (raw may be NULL): 1
 * found, 0 absent. */
int zf_cf_raw_attr(const char *raw, size_t n, const char *key, const char **val, size_t *vlen);

/* The name of a stored element type ("int16"; "?" if none). */
const char *zf_cf_elem_name(zf_elem e);

/* Copy text[0..n) into buf (capacity cap) with control characters as
 * spaces, cut with "..." if it does not fit. */
void zf_cf_clean_copy(char *buf, size_t cap, const char *text, size_t n);

/* The mask values into *m (count set to 0 by the caller): in v2 the fill
 * value unless it is null (fill_is_null; else a _FillValue attribute), in
 * v3 the _FillValue attribute (FillValueCoder), and missing_value; attrs
 * (may be NULL) and its text raw[0..n). */
int zf_cf_collect_mask(const zf_cf *cf, int zarr_format, const cJSON *attrs, const char *raw,
                       size_t n, int fill_is_null, zf_cf_mask *m, char *err, size_t errcap);

/* Time stamps: the calendar attribute and "UNIT since DATE" (units) into
 * cf (cf_calendar.c): which decoding xarray uses, and its parameters.  0,
 * or ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason. */
int zf_cf_since(zf_cf *cf, const cJSON *attrs, const char *units, char *err, size_t errcap);

#endif
