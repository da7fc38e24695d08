/* epoch.c - float counts to ns, and the reference date added (epoch.h). */
#include "chunk/epoch.h"

#include <math.h>
#include <stdio.h>

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
