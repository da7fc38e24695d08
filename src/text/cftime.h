/* cftime.h - the text of time stamps that xarray decodes to cftime objects.
 *
 * A value is int64 microseconds after a reference date of a CF calendar
 * (calendar.h): what cftime.num2date computes for a count (its integer
 * microseconds, added to the reference date).  v == ZF_NAT is NaT.
 *
 * Formats (text.h):
 *   pandas, numpy  str() of the cftime object, as pandas and numpy print an
 *                  object column: "2015-02-30 00:00:00", ".ffffff" only when
 *                  the microseconds are not zero; years zero-padded to four
 *                  digits ("0005", "10000"), negative ones to five with the
 *                  sign ("-0005"), as cftime writes them;
 *   iso            the object's isoformat(): the same with "T";
 *   seconds        exact decimal seconds since the reference date ("-0.5");
 *   raw            the microseconds since the reference date.
 *
 * Immutable after zf_cftfmt_init; any thread; caller buffers, no allocation. */
#ifndef ZF_CFTIME_H
#define ZF_CFTIME_H

#include <stddef.h>
#include <stdint.h>

#include "text/calendar.h"
#include "text/text.h"

/* The cftime formatter: the text interface (text.h) for cftime values. */
typedef struct zf_cftfmt {
    zf_text text; /* first: &f->text is what the view holds */
    zf_calref ref;
    int64_t four_lo, four_hi; /* day numbers of the years written with four digits */
} zf_cftfmt;

/* Set up a formatter for values after ref; nat is the verbatim text of NaT
 * (at most ZF_NAT_MAX bytes).  Returns 0 or ZF_EINVAL.  Its text and
 * lengths: zf_text_value(&f->text, ...) and the rest of text.h. */
int zf_cftfmt_init(zf_cftfmt *f, zf_format format, const zf_calref *ref, const char *nat);

#endif
