/* cftime.c - cftime objects' text (cftime.h): the reference date plus the
 * microseconds, as a date of its calendar (calendar.h), in exact integers.
 * Lengths of dates in four-digit years come without formatting. */
#include "text/cftime.h"

#include <string.h>

#include "base/digits.h"
#include "base/err.h"

#define US_PER_S 1000000

static const zf_text_ops cftime_ops;

int zf_cftfmt_init(zf_cftfmt *f, zf_format format, const zf_calref *ref, const char *nat)
{
    if (!f || !ref || (unsigned)ref->cal > ZF_CAL_360_DAY || ref->us < 0 ||
        ref->us >= ZF_US_PER_DAY)
        return ZF_EINVAL;
    memset(f, 0, sizeof *f);
    if (zf_text_setup(&f->text, &cftime_ops, format, nat))
        return ZF_EINVAL;
    f->ref = *ref;
    int no_zero = ref->cal == ZF_CAL_STANDARD || ref->cal == ZF_CAL_JULIAN;
    f->four_lo = zf_calendar_days(ref->cal, no_zero, 1, 1);
    f->four_hi = zf_calendar_days(ref->cal, 10000, 1, 1);
    return 0;
}

/* "[-]n" of an int64 */
static size_t int_text(int64_t v, char *out)
{
    int neg = v < 0;
    out[0] = '-';
    return (size_t)(zf_put_u64(out + neg, neg ? -(uint64_t)v : (uint64_t)v) - out);
}

/* exact decimal seconds of v microseconds, without trailing zeros */
static size_t seconds_text(int64_t v, char *out)
{
    int neg = v < 0;
    uint64_t mag = neg ? -(uint64_t)v : (uint64_t)v, s = mag / US_PER_S;
    uint32_t frac = (uint32_t)(mag - s * US_PER_S);
    unsigned w = 6;
    out[0] = '-';
    char *p = zf_put_u64(out + neg, s);
    if (frac) {
        while (frac % 10 == 0) {
            frac /= 10;
            w--;
        }
        *p++ = '.';
        zf_put_fixed(p, frac, w);
        p += w;
    }
    return (size_t)(p - out);
}

/* the year as cftime writes it: "{:04d}", or "{:05d}" when negative */
static char *put_year(char *p, int64_t y)
{
    uint64_t mag = y < 0 ? -(uint64_t)y : (uint64_t)y;
    unsigned nd = zf_ndig64(mag);
    if (y < 0)
        *p++ = '-';
    for (; nd < 4; nd++)
        *p++ = '0';
    return zf_put_u64(p, mag);
}

/* str() (sep ' ') or isoformat() (sep 'T') of the instant v */
static size_t stamp_text(const zf_cftfmt *f, int64_t v, char sep, char *out)
{
    int64_t day, us, y;
    unsigned m, d;
    zf_calref_add(&f->ref, v, &day, &us);
    zf_calendar_date(f->ref.cal, day, &y, &m, &d);
    uint32_t sod = (uint32_t)(us / US_PER_S), frac = (uint32_t)(us % US_PER_S);
    char *p = put_year(out, y);
    p[0] = '-';
    zf_put2(p + 1, m);
    p[3] = '-';
    zf_put2(p + 4, d);
    p[6] = sep;
    zf_put2(p + 7, sod / 3600);
    p[9] = ':';
    zf_put2(p + 10, sod / 60 % 60);
    p[12] = ':';
    zf_put2(p + 13, sod % 60);
    p += 15;
    if (frac) {
        *p = '.';
        zf_put_fixed(p + 1, frac, 6);
        p += 7;
    }
    return (size_t)(p - out);
}

/* the text of v (text.h: zf_text_ops.value) */
static size_t cft_value(const zf_text *t, int64_t v, char *out)
{
    const zf_cftfmt *f = (const zf_cftfmt *)t;
    if (v == ZF_NAT) {
        memcpy(out, f->text.nat, f->text.nat_len);
        return f->text.nat_len;
    }
    switch (f->text.format) {
    case ZF_FORMAT_RAW: return int_text(v, out);
    case ZF_FORMAT_SECONDS: return seconds_text(v, out);
    case ZF_FORMAT_ISO: return stamp_text(f, v, 'T', out);
    default: return stamp_text(f, v, ' ', out);
    }
}

/* its length, without formatting for years of four digits (zf_text_ops.len) */
static size_t cft_len(const zf_text *t, int64_t v)
{
    const zf_cftfmt *f = (const zf_cftfmt *)t;
    char buf[ZF_VALUE_MAX];
    if (v == ZF_NAT)
        return f->text.nat_len;
    if (f->text.format <= ZF_FORMAT_NUMPY) {
        int64_t day, us;
        zf_calref_add(&f->ref, v, &day, &us);
        if (day >= f->four_lo && day < f->four_hi)
            return 19u + (us % US_PER_S ? 7u : 0u);
    }
    return cft_value(t, v, buf);
}

static const zf_text_ops cftime_ops = {
    .value = cft_value, .len = cft_len, .len_sum = zf_text_len_each, .lines = zf_text_lines_each,
};
