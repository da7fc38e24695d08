/* text.h - the text of an array's elements: what the view asks of a formatter.
 *
 * A formatter turns stored elements (int64, with ZF_NAT for NaT: durations or
 * time stamps) into text lines.  The view (layout, reading, .info) knows only
 * this interface; each element type's formatter (duration.h, datetime.h)
 * embeds a zf_text as its first member and fills in the table, and
 * zf_text_init sets up the one an array's values need.  A formatter is
 * immutable once set up and may be shared by any number of threads; its
 * functions write into caller buffers and never allocate. */
#ifndef ZF_TEXT_H
#define ZF_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "text/calendar.h"
#include "text/units.h"

/* How values are written (each element type gives each format its meaning). */
typedef enum zf_format {
    ZF_FORMAT_PANDAS,  /* as pandas prints the value */
    ZF_FORMAT_ISO,     /* ISO 8601 */
    ZF_FORMAT_NUMPY,   /* as numpy prints the value */
    ZF_FORMAT_SECONDS, /* exact decimal seconds */
    ZF_FORMAT_RAW      /* the stored integer */
} zf_format;

/* Longest text of one non-NaT value in any format, in bytes. */
#define ZF_VALUE_MAX 160
/* Longest NaT text a formatter accepts, in bytes. */
#define ZF_NAT_MAX 255

/* Parse a format name ("pandas", "iso", "numpy", "seconds", "raw"); 0 or ZF_EINVAL. */
int zf_format_parse(const char *s, zf_format *out);

/* The name of a format ("pandas" ...). */
const char *zf_format_name(zf_format f);

/* What a run of lines took. */
typedef struct zf_lines {
    size_t count; /* values written, the first count of v */
    size_t bytes; /* bytes of their lines */
    size_t last;  /* where the last of them starts (0 if none) */
} zf_lines;

typedef struct zf_text zf_text;

/* The functions a formatter provides (t is the formatter's embedded zf_text). */
typedef struct zf_text_ops {
    /* text of v into out (capacity >= ZF_VALUE_MAX and >= nat_len), no newline; its length */
    size_t (*value)(const zf_text *t, int64_t v, char *out);
    /* length of value()'s text for v, without formatting */
    size_t (*len)(const zf_text *t, int64_t v);
    /* sum of len() over the n values at v */
    uint64_t (*len_sum)(const zf_text *t, const int64_t *v, size_t n);
    /* the first values of v (at most n) as lines (text and '\n') into out
     * (capacity cap) while one more line surely fits; bytes after them up to
     * cap may be overwritten */
    zf_lines (*lines)(const zf_text *t, const int64_t *v, size_t n, char *out, size_t cap);
} zf_text_ops;

/* The part of every formatter the view reads directly. */
struct zf_text {
    const zf_text_ops *ops;
    zf_format format;
    uint8_t nat_len;
    char nat[ZF_NAT_MAX + 1]; /* the text of NaT, verbatim */
};

/* Text of v into out; see zf_text_ops.value. */
static inline size_t zf_text_value(const zf_text *t, int64_t v, char *out)
{
    return t->ops->value(t, v, out);
}

/* Length of v's text; see zf_text_ops.len. */
static inline size_t zf_text_len(const zf_text *t, int64_t v)
{
    return t->ops->len(t, v);
}

/* Text length of a run of values; see zf_text_ops.len_sum. */
static inline uint64_t zf_text_len_sum(const zf_text *t, const int64_t *v, size_t n)
{
    return t->ops->len_sum(t, v, n);
}

/* Lines of a run of values; see zf_text_ops.lines. */
static inline zf_lines zf_text_lines(const zf_text *t, const int64_t *v, size_t n, char *out,
                                     size_t cap)
{
    return t->ops->lines(t, v, n, out, cap);
}

/* What an array's int64 elements mean. */
typedef enum zf_values {
    ZF_VALUES_DURATION = 0, /* timedelta64: durations (duration.h) */
    ZF_VALUES_DATETIME,     /* datetime64: instants since the Unix epoch (datetime.h) */
    ZF_VALUES_CFTIME        /* cftime objects: microseconds after a reference date of a
                               CF calendar (cftime.h) */
} zf_values;

/* Room for any formatter (each begins with its zf_text; text.c checks they fit). */
typedef union zf_text_room {
    zf_text text;
    struct {
        zf_text text;
        uint64_t more[6];
    } room;
} zf_text_room;

/* Set up in r the formatter of values of kind `values` with the given unit
 * and scale (1..2^31-1; ZF_VALUES_CFTIME: the calendar and reference date
 * cal instead, NULL otherwise), writing NaT as nat (at most ZF_NAT_MAX
 * bytes, verbatim); &r->text is then the formatter.  Returns 0 or ZF_EINVAL. */
int zf_text_init(zf_text_room *r, zf_values values, zf_format format, zf_unit unit,
                 uint32_t scale, const zf_calref *cal, const char *nat);

/* Set up the part every formatter shares: its table, format and NaT text
 * (nat verbatim, at most ZF_NAT_MAX bytes).  0, or ZF_EINVAL. */
int zf_text_setup(zf_text *t, const zf_text_ops *ops, zf_format format, const char *nat);

/* The text interface's len_sum and lines for formatters that have only
 * value and len: each value's len, each value's text on a line. */
uint64_t zf_text_len_each(const zf_text *t, const int64_t *v, size_t n);
zf_lines zf_text_lines_each(const zf_text *t, const int64_t *v, size_t n, char *out, size_t cap);

#endif
