/* filter_impl.h - private to src/codec/: the numcodecs array->array filters
 * (delta, fixedscaleoffset, astype) and the element conversions they share
 * (convert.c), for pipeline.c.
 *
 * A filter reads elements of one type (its encoded type) and yields elements
 * of another (its decoded type), one for one, in the machine's byte order;
 * the pipeline swaps bytes between stages as the types' byte orders say.
 * Conversions are numpy's (astype, casting "unsafe"), including the results
 * x86-64 numpy gives for NaN and out-of-range floats cast to integers. */
#ifndef ZF_FILTER_IMPL_H
#define ZF_FILTER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "codec/pipeline.h"

/* A numpy data type as a filter names it: the element and its byte order. */
typedef struct zf_dtype {
    zf_elem elem;
    int big; /* stored big-endian ("<": 0, ">": 1, none / "=" / "|": the machine's) */
} zf_dtype;

/* 1 if this machine is big-endian. */
#define ZF_HOST_BIG (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/* Parse a numpy dtype string: "<i8", ">f4", "|u1", "i2", "int64", "float32"...
 * (integers of 1, 2, 4, 8 bytes and floats of 4, 8).  ZF_EUNSUPPORTED for
 * any other string, ZF_ECORRUPT if v is not a string; a reason in err
 * prefixed by what. */
int zf_dtype_parse(const cJSON *v, const char *what, zf_dtype *out, char *err, size_t errcap);

/* Short name of an element type: "int64", "uint8", "float32". */
const char *zf_elem_name(zf_elem e);

/* Do a and b have the same bits (same size; same kind, or both integers)? */
int zf_elem_same_bits(zf_elem a, zf_elem b);

/* numpy.promote_types(a, b) (float64 when no integer holds both). */
zf_elem zf_elem_promote(zf_elem a, zf_elem b);

/* dst[i] = src[i] converted from `from` to `to` (numpy astype), n elements
 * in the machine's byte order; src and dst do not overlap. */
void zf_elem_convert(const void *src, zf_elem from, void *dst, zf_elem to, uint64_t n);

/* Reverse the byte order of n elements of size bytes at v. */
void zf_elem_swap(void *v, uint64_t n, unsigned size);

typedef struct zf_filter zf_filter;

/* Parse the numcodecs filter with id "delta", "fixedscaleoffset" or "astype"
 * (v2: cfg is the filter object, with its "id"; v3: cfg is the
 * configuration of "numcodecs.ID", may be NULL, and a missing decoded dtype
 * is the array's, as zarr-python fills it in).  ZF_ENOTFOUND if id is none of
 * these; ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason otherwise. */
int zf_filter_parse(const char *id, const cJSON *cfg, int v3, zf_elem array, zf_filter **out,
                    char *err, size_t errcap);

void zf_filter_free(zf_filter *f);

/* Name as written in the metadata ("delta", "numcodecs.delta"). */
const char *zf_filter_name(const zf_filter *f);

/* The type the filter reads (its encoded side) and the type it yields. */
zf_dtype zf_filter_encoded(const zf_filter *f);
zf_dtype zf_filter_decoded(const zf_filter *f);

/* Decode n elements: in holds n encoded elements (machine order; it may be
 * overwritten), out gets n decoded ones.  0, or ZF_ENOMEM. */
int zf_filter_decode(const zf_filter *f, void *in, void *out, uint64_t n, char *err,
                     size_t errcap);

#endif
