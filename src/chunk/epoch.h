/* epoch.h - the last step of CF time stamps: counts since DATE -> ticks.
 *
 * For arrays with units "UNIT since DATE" (zarr/cf.h, ZF_CF_SINCE),
 * convert.c masks and unpacks each element as for durations and makes
 * integer counts ns exactly; these two steps finish what xarray's
 * decode_cf_datetime (time_unit "ns") does: a float count becomes ns in one
 * float64 multiplication, truncated, and DATE is added.  A result outside
 * int64 ns (1677-09-21..2262-04-11: where xarray needs cftime, or wraps
 * silently) is an error.
 *
 * Where xarray decodes with cftime (zarr/cf.h: the other calendars, and a
 * standard one pandas cannot read or whose values leave the ns range), the
 * counts are made float64 (xarray's astype(float)) and cftime.num2date's
 * arithmetic gives the microseconds after DATE: x * microseconds per unit
 * in long double (numpy's longdouble: the x87 80-bit format on x86-64),
 * rounded half to even, then (units of seconds and coarser) a result ending
 * in ...000001 floored and one ending in ...999999 ceiled (cast_to_int,
 * cftime issue 187).  Pure functions; thread-safe. */
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

/* cftime's microseconds after DATE of a float64 count x (NaN and
 * infinities, which cftime masks: ZF_NAT).  0, or -1 beyond int64
 * microseconds (cftime raises OverflowError). */
int zf_epoch_cftime_us(int64_t us_per, int fix_us, double x, int64_t *us);

/* The ticks of a count under cf's cftime decoding: x (float64), or when
 * exact (is_int) the integer n, which cftime would see as (double)n.
 * ZF_CF_DEC_CFTIME: microseconds after DATE; ZF_CF_DEC_CFTIME_NS: ns since
 * 1970, and 1 (not 0) when the date lies outside 1677-09-21..2262-04-11,
 * where xarray keeps cftime objects.  -1 beyond int64 microseconds. */
int zf_epoch_cftime(const zf_cf *cf, int is_int, int64_t n, double x, int64_t *t);

#endif
