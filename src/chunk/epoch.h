/* epoch.h - the last step of CF time stamps: counts since DATE -> ns since 1970.
 *
 * For arrays with units "UNIT since DATE" (zarr/cf.h, ZF_CF_SINCE),
 * convert.c masks and unpacks each element as for durations and makes
 * integer counts ns exactly; these two steps finish what xarray's
 * decode_cf_datetime (time_unit "ns") does: a float count becomes ns in one
 * float64 multiplication, truncated, and DATE is added.  A result outside
 * int64 ns (1677-09-21..2262-04-11: where xarray needs cftime, or wraps
 * silently) is an error.  Pure functions; thread-safe. */
#ifndef ZF_EPOCH_H
#define ZF_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "zarr/cf.h"

/* The ns count (since DATE) of x units cf->src: trunc(x * ns per unit) in
 * float64 (NaN and -2^63: ZF_NAT).  0, or -1 if beyond int64 ns. */
int zf_epoch_count(const zf_cf *cf, double x, int64_t *t);

/* Add DATE to the n ns counts at v (ZF_NAT stays NaT).  ZF_ECORRUPT (reason
 * in err, naming the element when many) if a result leaves int64 ns; v is
 * then partly converted. */
int zf_epoch_add(const zf_cf *cf, int64_t *v, uint64_t n, int many, char *err, size_t errcap);

#endif
