/* datetime.h - the text of datetime64 values (time stamps; units: units.h).
 *
 * A value is a stored int64 v of a numpy.datetime64 data type with a unit and
 * a scale factor (1..2^31-1): the instant v * scale units after the Unix
 * epoch (1970-01-01T00:00:00), in the proleptic Gregorian calendar (Y and M
 * count calendar years and months), computed exactly in 128-bit integers
 * (no 64-bit overflow, any year).  v == INT64_MIN is NaT.
 *
 * Formats (text.h):
 *   pandas   str(pandas.Timestamp(v)): "2024-01-01 06:00:00", a fraction of 6
 *            digits when it is whole microseconds, else 9 (ns), extended to
 *            12/15/18 for ps/fs/as (pandas would cut them to ns); years as
 *            numpy writes them (below), also where pandas cannot hold them;
 *   iso      the same with "T": pandas.Timestamp.isoformat();
 *   numpy    str(numpy.datetime64(v, unit)): at the unit ("2024-01-01T06",
 *            "2024-01", "1970-01-01T00:00:00.000"), the scale folded in;
 *   seconds  exact decimal seconds since the epoch ("-0.5"), no trailing zeros;
 *   raw      the stored integer.
 * Years are written as numpy does ("%04d": "0053", "-001", "12345").  The
 * generic unit has no instant: every format but raw writes v * scale.
 *
 * A zf_dtfmt is immutable after zf_dtfmt_init() and may be shared by any
 * number of threads; formatting writes into caller buffers, never allocates. */
#ifndef ZF_DATETIME_H
#define ZF_DATETIME_H

#include <stddef.h>
#include <stdint.h>

#include "base/digits.h"
#include "text/text.h"
#include "text/units.h"

/* The time-stamp formatter: the text interface (text.h) for datetime64. */
typedef struct zf_dtfmt {
    zf_text text; /* first: &f->text is what the view holds */
    zf_unit unit;
    uint32_t scale;
} zf_dtfmt;

/* Set up a formatter; nat is the verbatim text of NaT (NUL-terminated, at
 * most ZF_NAT_MAX bytes).  Returns 0 or ZF_EINVAL. */
int zf_dtfmt_init(zf_dtfmt *f, zf_format format, zf_unit unit, uint32_t scale, const char *nat);

/* Write the text of v into out (capacity at least ZF_VALUE_MAX and at least
 * f->text.nat_len); no NUL, no newline.  Returns its length. */
size_t zf_dtfmt_value(const zf_dtfmt *f, int64_t v, char *out);

/* Length of the text zf_dtfmt_value writes for v. */
size_t zf_dtfmt_len(const zf_dtfmt *f, int64_t v);

/* Write year y as numpy's "%04" PRId64 does (zero-padded to 4 characters,
 * sign included: "0998", "-001", "13962") at p; returns the end. */
char *zf_put_year(char *p, zf_i128 y);

/* Days from 1970-01-01 to year y, month m (1..12), day d (1..31) of the
 * proleptic Gregorian calendar (year 0 is 1 BC); any 128-bit year below 2^100. */
zf_i128 zf_days_from_civil(zf_i128 y, unsigned m, unsigned d);

/* The inverse: the date `days` after 1970-01-01 (|days| below 2^110). */
void zf_civil_from_days(zf_i128 days, zf_i128 *y, unsigned *m, unsigned *d);

#endif
