/* pdcsv.h - time values as pandas' DataFrame.to_csv writes a column of them.
 *
 * pandas formats a column of durations or time stamps with one format for
 * the whole column (or for each slice of rows it writes at once): the
 * format follows the finest part any non-NaT value of the column has.
 *
 *   durations   "N days" when every value is whole days; else
 *               "N days HH:MM:SS", with ".ffffff" when a value has a
 *               fraction of a second, ".fffffffff" when one has a fraction
 *               of a microsecond.  Negative: "-1 days +23:59:59.5".
 *   time stamps "YYYY-MM-DD" when every value is midnight; else
 *               "YYYY-MM-DD HH:MM:SS", with 3, 6 or 9 fraction digits for
 *               the finest of milliseconds, microseconds and nanoseconds.
 *               Years as numpy writes them ("0998", "-001", "13962").
 *
 * A value is int64 ticks of unit W..ns (time stamps: Y..ns) times a scale (as text/units.h);
 * zf_pdcsv_supported tells whether a unit can be written.  Pure functions:
 * any thread, caller buffers, no allocation. */
#ifndef ZF_PDCSV_H
#define ZF_PDCSV_H

#include <stddef.h>
#include <stdint.h>

#include "text/text.h"
#include "text/units.h"

/* the parts a value has below a day, a second, a millisecond, a microsecond */
enum {
    ZF_PD_SUBDAY = 1u,
    ZF_PD_SUBSEC = 2u,
    ZF_PD_SUBMS = 4u,
    ZF_PD_SUBUS = 8u
};

/* the format of a column: days only, to the second, or 3, 6 or 9 fraction digits */
typedef enum zf_pdmode { ZF_PD_DAYS, ZF_PD_SECS, ZF_PD_MS, ZF_PD_US, ZF_PD_NS } zf_pdmode;

/* How one column's values are written: kind, unit and scale of the ticks. */
typedef struct zf_pdcsv {
    zf_values values;   /* durations or time stamps */
    int64_t ns_per_tick;/* unit * scale in nanoseconds (>= 1), 0 for months */
    int64_t months;     /* time stamps of unit Y or M: months per tick, else 0 */
} zf_pdcsv;

/* Set up for values of the given kind, unit and scale; ZF_EUNSUPPORTED for
 * units pandas cannot hold (durations of Y or M, generic, below ns), ticks
 * over 2^62 ns, and cftime objects (pandas writes each one's str()).  Time
 * stamps of unit Y or M are dates (the first of their month), as pandas
 * writes them once xarray made them datetime64[s]. */
int zf_pdcsv_init(zf_pdcsv *c, zf_values values, zf_unit unit, uint32_t scale);

/* The ZF_PD_* parts of any of the n values at v (OR of zf_pdcsv_parts). */
unsigned zf_pdcsv_parts_of(const zf_pdcsv *c, const int64_t *v, size_t n);

/* The format pandas chooses for a column whose values have the parts `parts`. */
zf_pdmode zf_pdcsv_mode(const zf_pdcsv *c, unsigned parts);

/* Text of non-NaT v in mode into out (capacity >= ZF_VALUE_MAX); its length. */
size_t zf_pdcsv_text(const zf_pdcsv *c, zf_pdmode mode, int64_t v, char *out);

/* Length of the days part (durations: "N days"; time stamps: the date) of
 * non-NaT v: zf_pdcsv_text's length is this plus zf_pdcsv_extra(mode), plus
 * 1 for a negative duration outside ZF_PD_DAYS (its "+": "-1 days +23:00:00"). */
size_t zf_pdcsv_base_len(const zf_pdcsv *c, int64_t v);

/* What a run of values adds up to, for any format chosen later. */
typedef struct zf_pdsum {
    uint64_t base;  /* zf_pdcsv_base_len of the non-NaT values */
    uint64_t nn;    /* non-NaT values */
    uint64_t neg;   /* negative durations */
    unsigned parts; /* ZF_PD_* parts of any of them */
} zf_pdsum;

/* Add the n values at v to *s (one pass: each value split once). */
void zf_pdcsv_measure(const zf_pdcsv *c, const int64_t *v, size_t n, zf_pdsum *s);

/* What mode adds to every non-NaT value's base length. */
size_t zf_pdcsv_extra(zf_pdmode mode);

#endif
