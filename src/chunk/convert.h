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
 * native array (cf->how ZF_CF_NATIVE) is left as it is.  ZF_ECORRUPT (reason
 * in err) if a value is beyond int64 ticks of cf->unit, where xarray raises
 * OutOfBoundsTimedelta; buf is then partly converted. */
int zf_convert_chunk(const zf_cf *cf, void *buf, unsigned ndim, const uint64_t *shape,
                     const uint64_t *valid, char *err, size_t errcap);

/* The ticks of one stored element (elem: cf->elem.size bytes, machine order)
 * into *out; errors as zf_convert_chunk. */
int zf_convert_one(const zf_cf *cf, const void *elem, int64_t *out, char *err, size_t errcap);

#endif
