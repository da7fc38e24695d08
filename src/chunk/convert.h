/* convert.h - stored CF elements to int64 ticks, in place, per chunk.
 *
 * Applies the rule of a zf_cf descriptor (zarr/cf.h: mask, packing, decoding
 * as xarray does it) to every element of a decoded chunk, in one pass, before
 * the chunk enters the cache: everything after it (layout, formatter, size
 * pass) sees int64 ticks of cf->unit with ZF_NAT for NaT, as for native
 * arrays.  Pure functions of their arguments; thread-safe. */
#ifndef ZF_CONVERT_H
#define ZF_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "zarr/cf.h"

/* buf holds the stored elements of a chunk of the given shape (ndim
 * dimensions, C order) of cf->elem (machine byte order, as the pipeline
 * decodes them) at its start and has room for as many int64 values: replace
 * them by their ticks.  valid[d] (NULL: all of it) is how much of the chunk
 * lies inside the array along d; the rest is padding, shown nowhere, read
 * as zero.  Float counts are scaled by the same power of 1000 across the
 * chunk (the finest its values need, as xarray decodes one block).  A
 * native array (cf->how ZF_CF_NATIVE) is left as it is.
 *
 * Float durations whose ns ticks would overflow int64 while xarray's unit
 * for the chunk is coarser (a dtype attribute "timedelta64[s]", [ms] or
 * [us], and no finer value in the chunk) are decoded at that unit when
 * coarser is not NULL: *coarser (0 otherwise) says the ticks are units of
 * 1000^*coarser ns.  ZF_ECORRUPT (reason in err) if a value is beyond int64
 * ticks even so (xarray raises OutOfBoundsTimedelta, or its cast to int64
 * overflows to NaT); buf is then partly converted.  ZF_ENOMEM. */
int zf_convert_chunk(const zf_cf *cf, void *buf, unsigned ndim, const uint64_t *shape,
                     const uint64_t *valid, unsigned *coarser, char *err, size_t errcap);

/* Can zf_convert_chunk decode some chunks of cf at a coarser unit? */
int zf_convert_may_coarsen(const zf_cf *cf);

/* The ticks of one stored element (elem: cf->elem.size bytes, machine order)
 * into *out; errors as zf_convert_chunk. */
int zf_convert_one(const zf_cf *cf, const void *elem, int64_t *out, char *err, size_t errcap);

#endif
