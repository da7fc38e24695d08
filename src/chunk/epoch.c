/* epoch.c - float counts to ns, and the reference date added; cftime's
 * microseconds (epoch.h). */
#include "chunk/epoch.h"

#include <math.h>
#include <stdio.h>

#include "base/digits.h"
#include "base/err.h"

/* ns per unit of the counts (D..ns) */
static int64_t ns_per(zf_unit u)
{
    return u == ZF_UNIT_ms ? 1000000 : u == ZF_UNIT_us ? 1000 : u == ZF_UNIT_ns ? 1
           : (int64_t)zf_units[u].secs * 1000000000;
}

int zf_epoch_count(const zf_cf *cf, double x, int64_t *t)
{
    if (isnan(x)) {
        *t = ZF_NAT;
        return 0;
    }
    double y = trunc(x * (double)ns_per(cf->src)); /* flat_num * np.int64(factor); astype(int64) */
    if (!(y >= -0x1p63 && y < 0x1p63))
        return -1;
    *t = (int64_t)y; /* -2^63 is numpy's NaT */
    return 0;
}

int zf_epoch_add(const zf_cf *cf, int64_t *v, uint64_t n, int many, char *err, size_t errcap)
{
    for (uint64_t k = 0; k < n; k++) {
        int64_t t;
        if (v[k] == ZF_NAT)
            continue;
        if (__builtin_add_overflow(v[k], cf->epoch_ns, &t) || t == ZF_NAT) {
            char at[40] = "";
            if (many)
                snprintf(at, sizeof at, "element %llu: ", (unsigned long long)k);
            snprintf(err, errcap, "%stime stamp %lld ns after the reference date is outside "
                     "1677-09-21..2262-04-11 (int64 ns; xarray needs cftime for it)", at,
                     (long long)v[k]);
            return ZF_ECORRUPT;
        }
        v[k] = t;
    }
    return ZF_OK;
}

int zf_epoch_cftime_us(int64_t us_per, int fix_us, double x, int64_t *us)
{
    if (isnan(x) || isinf(x)) {
        *us = ZF_NAT;
        return 0;
    }
    long double y = (long double)x * (long double)us_per;
    if (!(y >= -0x1p63L && y <= 0x1p63L - 1)) /* cftime's int64 range check */
        return -1;
    int64_t n = (int64_t)rintl(y);
    if (fix_us) { /* issue 187: ...000001 floored, ...999999 ceiled */
        int64_t m = n % 1000000;
        m += m < 0 ? 1000000 : 0;
        n = m == 1 ? (int64_t)floorl(y) : m == 999999 ? (int64_t)ceill(y) : n;
    }
    if (n == INT64_MIN) /* numpy's NaT: no date */
        return -1;
    *us = n;
    return 0;
}

/* 1677-09-21T00:12:43.145225 and 2262-04-11T23:47:16.854775 in us since
 * 1970: the microseconds datetime64[ns] holds (xarray's bounds; the lower
 * one itself, 0.192 us before the first ns, fails its conversion) */
#define NS_FIRST_US INT64_C(-9223372036854775)
#define NS_LAST_US INT64_C(9223372036854775)

int zf_epoch_cftime(const zf_cf *cf, int is_int, int64_t n, double x, int64_t *t)
{
    int64_t us;
    if (is_int && n >= -(INT64_C(1) << 53) && n <= INT64_C(1) << 53) { /* exact in float64 */
        if (__builtin_mul_overflow(n, cf->us_per, &us) || us == INT64_MIN)
            return -1;
    } else if (zf_epoch_cftime_us(cf->us_per, cf->fix_us, is_int ? (double)n : x, &us)) {
        return -1;
    }
    if (cf->decoding == ZF_CF_DEC_CFTIME || us == ZF_NAT) {
        *t = us;
        return 0;
    }
    int64_t day, tod; /* CFTIME_NS: standard or proleptic: days since 1970 from 1582-10-15 */
    zf_calref_add(&cf->ref, us, &day, &tod);
    zf_i128 abs = (zf_i128)day * ZF_US_PER_DAY + tod;
    if (abs < NS_FIRST_US || abs > NS_LAST_US)
        return 1;
    *t = (int64_t)abs * 1000;
    return 0;
}
