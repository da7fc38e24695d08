/* cf.h - durations and time stamps stored as CF-encoded numbers (as xarray
 * writes them).
 *
 * Besides native numpy.timedelta64 arrays, xarray stores durations as integer
 * or float arrays with a `units` attribute ("hours", ...), often a `dtype`
 * attribute ("timedelta64[ns]"), and optionally a mask (_FillValue,
 * missing_value; in v2 the array's fill_value) and packing (scale_factor,
 * add_offset).  zf_cf_parse turns those attributes into a zf_cf descriptor:
 * the exact rule (chunk/convert.h applies it) that turns one stored element
 * into int64 ticks of cf->unit, or NaT, as xarray.open_zarr(...,
 * decode_timedelta=True) decodes it:
 *
 *   1. mask   (CFMaskCoder): an element equal to a mask value is NaT;
 *   2. pack   (CFScaleOffsetCoder): x * scale_factor + add_offset, in float64
 *             (in int64 when scale_factor is an integer and there is no
 *             add_offset, as numpy promotes it);
 *   3. decode (CFTimedeltaCoder, decode_cf_timedelta): integers exactly;
 *             floats scaled by 1000 (in their own precision) until whole or at
 *             nanoseconds, then truncated.  Time stamps (units "UNIT since
 *             DATE", CFDatetimeCoder, decode_cf_datetime with time_unit ns):
 *             counts made ns (integers exactly, floats in one float64
 *             multiplication, truncated), plus DATE (chunk/epoch.h).
 *
 * A value beyond int64 ticks (where xarray raises OutOfBoundsTimedelta) is
 * an error for its chunk.  Everything here is plain data: a zf_cf is
 * immutable after parsing and may be shared by any number of threads. */
#ifndef ZF_CF_H
#define ZF_CF_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/fp.h"
#include "base/sbuf.h"
#include "codec/pipeline.h"
#include "text/calendar.h"
#include "text/units.h"

/* -o cf=: which arrays are shown as durations */
typedef enum zf_cf_mode {
    ZF_CF_ALL = 0, /* native, and CF with a duration `units` attribute (default) */
    ZF_CF_DTYPE,   /* native, and CF with units and xarray's dtype attribute */
    ZF_CF_OFF      /* native numpy.timedelta64 only */
} zf_cf_mode;

/* how an array was recognised as durations */
typedef enum zf_cf_how {
    ZF_CF_NATIVE = 0,  /* numpy.timedelta64 / datetime64 (v3), m8 / M8 (v2): no conversion */
    ZF_CF_UNITS,       /* an integer or float array with a duration units attribute */
    ZF_CF_UNITS_DTYPE, /* ... and a dtype attribute "timedelta64[...]" */
    ZF_CF_SINCE        /* time stamps: units "UNIT since DATE" (epoch.h decodes them) */
} zf_cf_how;

/* how a stored element becomes the number decoded as a duration */
typedef enum zf_cf_path {
    ZF_CF_PATH_INT, /* an int64 (INT64_MIN is NaT): integers, masked integers, int64 packing */
    ZF_CF_PATH_U64, /* a uint64, neither masked nor packed */
    ZF_CF_PATH_F16, /* a float16, not packed (scaled in float16) */
    ZF_CF_PATH_F32, /* a float32, not packed (scaled in float32) */
    ZF_CF_PATH_F64  /* a float64: float64 data or float64 packing */
} zf_cf_path;

typedef enum zf_cf_pack {
    ZF_CF_PACK_NONE,
    ZF_CF_PACK_F64, /* y = (double)x * scale + offset (each if present) */
    ZF_CF_PACK_I64  /* y = (int64)x * iscale (an integer scale_factor, no add_offset) */
} zf_cf_pack;

/* how time stamps' counts become ticks (ZF_CF_SINCE), as xarray decodes them */
typedef enum zf_cf_decoding {
    ZF_CF_DEC_PANDAS = 0, /* pandas: exact ns since 1970 (datetime64[ns]) */
    ZF_CF_DEC_CFTIME_NS,  /* cftime's microseconds made datetime64[ns] (ns since 1970) */
    ZF_CF_DEC_CFTIME      /* cftime objects: microseconds after the reference date */
} zf_cf_decoding;

/* most mask values (_FillValue, fill_value and missing_value together) */
#define ZF_CF_MAX_MASK 16

typedef struct zf_cf {
    zf_cf_how how;
    zf_elem elem;           /* the stored element type */
    zf_unit src;            /* the units attribute: D, h, m, s, ms, us or ns */
    zf_unit target;         /* xarray's time_unit: the dtype attribute's (s..ns), else ns */
    zf_unit unit;           /* unit of the decoded ticks (zf_meta.unit) */
    zf_cf_path path;
    zf_cf_pack pack;
    int has_scale, has_offset;
    double scale, offset;   /* ZF_CF_PACK_F64 */
    int64_t iscale;         /* ZF_CF_PACK_I64 */
    int mask_int;           /* mask compared with the element as int64 (else as double) */
    unsigned nmask_i, nmask_f;
    int64_t mask_i[ZF_CF_MAX_MASK]; /* equal to the element's int64: NaT */
    double mask_f[ZF_CF_MAX_MASK];  /* equal to the element (as double): NaT */
    uint8_t fill_raw[8];    /* the array's fill value as a stored element (machine order) */
    int fill_null;          /* v2 fill_value null (missing chunks read as zeros) */
    int64_t epoch_ns;       /* ZF_CF_SINCE: DATE as ns since 1970-01-01 (UTC), as pandas reads it */
    char calendar[24];      /* ZF_CF_SINCE: the calendar attribute, "" if none */
    zf_calendar cal;        /* ZF_CF_SINCE: the calendar (standard if none) */
    zf_cf_decoding decoding;/* ZF_CF_SINCE: pandas or cftime */
    int may_cftime;         /* a standard calendar that cftime reads: cftime objects once a
                               value lies outside the ns range (zf_cf_cftime) */
    zf_calref ref;          /* cftime's reference date (DATE as cftime reads it) */
    int64_t us_per;         /* cftime: microseconds per count */
    int fix_us;             /* cftime: ...000001 / ...999999 us floored / ceiled (issue 187) */
    char attrs_text[256];   /* the CF attributes used, for NAME.info */
} zf_cf;

/* The stored element type of a v3 data_type name ("int16", "float64"); 0,
 * or ZF_ENOTFOUND if durations are never stored as it. */
int zf_cf_v3_elem(const char *name, zf_elem *elem);

/* The same for a v2 dtype string ("<i8", ">f4", "|u1"), with its byte order
 * in *big: 1, or 0 if durations are never stored as it. */
int zf_cf_v2_elem(const char *dtype, zf_elem *elem, int *big);

/* Step 1: does an integer or float array (cf->elem set) hold durations or
 * time stamps?  attrs is its attributes object (NULL if none).  1 yes (a
 * duration units attribute, or "UNIT since DATE": how, src and target are
 * set, and for time stamps the calendar, the decoding and the reference
 * date), 0 no, or ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason (a units
 * attribute that is not a string, a dtype attribute xarray cannot decode,
 * _Unsigned, time units neither pandas nor cftime decode: an unknown
 * calendar, a date they do not read). */
int zf_cf_units(zf_cf *cf, const cJSON *attrs, char *err, size_t errcap);

/* CF time units "UNIT since DATE" as xarray reads them (cf_time.c): the
 * count's unit (D, h, m, s, ms, us or ns) and DATE as ns since 1970-01-01
 * UTC.  0, or ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason. */
int zf_cf_time_units(const char *units, zf_unit *unit, int64_t *epoch_ns, char *err,
                     size_t errcap);

/* The reference date of "UNIT since DATE" as cftime reads it in calendar c
 * (cf_calendar.c): ref, microseconds per count (*us_per), and whether
 * cftime's issue-187 rounding applies (*fix).  0, or ZF_EUNSUPPORTED with a
 * reason (cftime raises). */
int zf_cf_cftime_units(const char *units, zf_calendar c, zf_calref *ref, int64_t *us_per,
                       int *fix, char *err, size_t errcap);

/* The descriptor *out of a time-stamp array d (d->may_cftime) decoded to
 * cftime objects: what xarray decodes when a value lies outside the ns range. */
void zf_cf_cftime(const zf_cf *d, zf_cf *out);

/* Step 2: the array's fill value (the JSON item fill; doc[0..n) is the
 * metadata document holding it as "fill_value") as a stored element into
 * cf->fill_raw: an integer literal within the type, or for floats a number,
 * "NaN", "Infinity", "-Infinity" or (v3) a hex "0x..." bit pattern; null (v2
 * only) sets cf->fill_null.  Its text goes to fill_text (capacity cap).
 * 0 or ZF_ECORRUPT with a reason. */
int zf_cf_parse_fill(zf_cf *cf, int zarr_format, const cJSON *fill, const char *doc, size_t n,
                     char *fill_text, size_t cap, char *err, size_t errcap);

/* Step 3: mask and packing (in v2 a non-null fill value is the _FillValue).
 * raw[0..n) is the text of attrs (exact literals are read from it).  0 (*cf
 * is complete), or ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason. */
int zf_cf_parse(zf_cf *cf, int zarr_format, const cJSON *attrs, const char *raw, size_t n,
                char *err, size_t errcap);

/* Is an array recognised as cf->how shown under mode? */
int zf_cf_shown(const zf_cf *cf, zf_cf_mode mode);

/* Parse an -o cf= value ("all", "dtype", "off"); 0 or ZF_EINVAL. */
int zf_cf_mode_parse(const char *s, zf_cf_mode *mode);

/* The .info lines of the encoding (how recognised, stored type, CF
 * attributes; for time stamps, datetime != 0, the epoch and calendar). */
void zf_cf_describe(const zf_cf *cf, int datetime, zf_sbuf *out);

/* Mix everything the decoded values depend on into fp. */
void zf_cf_fingerprint(const zf_cf *cf, zf_fp *fp);

#endif
