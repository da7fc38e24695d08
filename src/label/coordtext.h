/* coordtext.h - the CSV text of every element of a coordinate array that is
 * not a time type, as pandas' DataFrame.to_csv writes xarray's decoded values
 * (xarray.open_zarr(STORE, decode_timedelta=True)).
 *
 * Integers print in decimal; bools as True / False; floats as numpy prints
 * them (the shortest text that reads back, Python repr style: 0.1, 1e-05,
 * 2.0, inf; float32 to float32 precision, positional only from 1e-4 to
 * 1e6); NaN and values xarray masks (_FillValue, missing_value; in v2 the
 * fill value) as an empty field; an integer array with a mask as floats
 * (5 -> 5.0); packed values (scale_factor, add_offset) as float64.  Strings (vlen-utf8, fixed UTF-32)
 * print as they are, bytes (|S, null_terminated_bytes) as Python's repr
 * (b'ab'), fixed-length ones without trailing NULs; every field is quoted as
 * pandas' to_csv does (when it holds , " or LF; " doubled). */
#ifndef ZF_COORDTEXT_H
#define ZF_COORDTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "base/sbuf.h"
#include "codec/pipeline.h"
#include "store/store.h"

typedef struct zf_coordtext {
    unsigned ndim;
    uint64_t shape[ZF_MAX_DIMS];   /* the coordinate's own shape */
    char *dim_names[ZF_MAX_DIMS];  /* owned; NULL where absent (v3 dimension_names, v2 _ARRAY_DIMENSIONS) */
    uint64_t n;                    /* elements (product of shape) */
    char *text;                    /* the fields' texts back to back, CSV-quoted where needed (owned) */
    uint64_t *start;               /* n + 1 offsets: element i is text[start[i] .. start[i+1]) (owned) */
    int floats;                    /* the values are floats as xarray decodes them */
} zf_coordtext;

/* Load the text of every element (C order) of the array at key prefix `path`
 * ("a/b"; "" the root) of store st.  The array's metadata documents are read
 * from the store (v3 zarr.json; else v2 .zarray and .zattrs).  At most
 * max_bytes of text+offsets are held, else ZF_ENOMEM (err.h's "a size bound
 * was exceeded").  Errors: ZF_ENOTFOUND (no array there), ZF_EIO (the store
 * failed), ZF_EINVAL (path too long for a key), ZF_EUNSUPPORTED (a data type
 * this loader does not handle, e.g. a time type, reason in err), ZF_ECORRUPT
 * (damaged metadata or chunk: reason in err, naming the chunk key),
 * ZF_ENOMEM.  On error *out is left empty.  Thread-safe (no shared state). */
int zf_coordtext_load(const zf_store *st, const char *path, size_t max_bytes, zf_coordtext *out,
                      char *err, size_t errcap);

/* Write the values as a level of pandas' MultiIndex does (the coordinate
 * of one dimension of an N-D array): equal values as the first of them, so
 * floats -0.0 and 0.0 both as whichever comes first.  ZF_OK or ZF_ENOMEM
 * (*c unchanged). */
int zf_coordtext_level(zf_coordtext *c);

/* Free what *c owns; the struct may be reused. */
void zf_coordtext_clear(zf_coordtext *c);

/* Append the shortest text that reads back as x, as Python's repr(float)
 * and numpy's str(float64) write it ("0.1", "1e-05", "2.0", "inf", "nan"). */
void zf_coordtext_f64(zf_sbuf *out, double x);

/* The same for a float32, as numpy's str(float32) writes it: positional
 * only for 1e-4 <= |x| < 1e6 ("0.1", "123456.0", "1.234567e+06"). */
void zf_coordtext_f32(zf_sbuf *out, float x);

/* Append bytes s[0..n) as Python's repr(bytes) writes them (b'a\x00', b"'"). */
void zf_coordtext_bytes_repr(zf_sbuf *out, const uint8_t *s, size_t n);

/* Append s[0..n) as one CSV field as pandas' to_csv writes it (Python's csv
 * module, QUOTE_MINIMAL, lineterminator "\n"): quoted if it holds , " or LF,
 * with " doubled.  A CR alone is not quoted (unlike zf_sbuf_csv_field). */
void zf_coordtext_csv_field(zf_sbuf *out, const char *s, size_t n);

#endif
