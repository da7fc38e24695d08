/* duration.h - the text of timedelta64 values (units: units.h).
 *
 * A value is a stored int64 v of a numpy.timedelta64 data type with a unit and
 * a scale factor (1..2^31-1); the duration it denotes is v * scale * unit,
 * computed exactly (no 64-bit overflow).  v == INT64_MIN is NaT.
 *
 * A zf_fmt is immutable after zf_fmt_init() and may be shared by any number of
 * threads.  Formatting writes into a caller buffer and never allocates. */
#ifndef ZF_DURATION_H
#define ZF_DURATION_H

#include <stddef.h>
#include <stdint.h>

#include "text/text.h"
#include "text/units.h"

/* The duration formatter: the text interface (text.h) for timedelta64. */
typedef struct zf_fmt {
    zf_text text; /* first: &f->text is what the view holds */
    zf_unit unit;
    uint32_t scale;
} zf_fmt;

/* Set up a formatter; nat is the text for NaT (NUL-terminated, at most
 * ZF_NAT_MAX bytes, used verbatim).  Returns 0 or ZF_EINVAL. */
int zf_fmt_init(zf_fmt *f, zf_format format, zf_unit unit, uint32_t scale, const char *nat);

/* Write the text of v into out (capacity at least ZF_VALUE_MAX and at least
 * f->text.nat_len); no NUL, no newline.  Returns the number of bytes written. */
size_t zf_fmt_value(const zf_fmt *f, int64_t v, char *out);

/* Length of the text zf_fmt_value would write for v (cheaper than formatting). */
size_t zf_fmt_len(const zf_fmt *f, int64_t v);

/* Sum of zf_fmt_len over the n values at v (a run measured at once). */
uint64_t zf_fmt_len_sum(const zf_fmt *f, const int64_t *v, size_t n);

/* Write the first values of v (at most n) as lines, text and '\n' each, into
 * out (capacity cap), as long as one more line surely fits: the bytes after
 * the lines written may be overwritten (scratch) up to cap. */
zf_lines zf_fmt_lines(const zf_fmt *f, const int64_t *v, size_t n, char *out, size_t cap);

#endif
