/* datetime.c - datetime64 text: the proleptic Gregorian calendar in exact
 * integers (Howard Hinnant's days-from-civil algorithms, 64-bit when the
 * values allow, else 128-bit) and the five formats of datetime.h.  The
 * common case (units W..ns, v * scale within int64, years 0..9999) takes
 * 64-bit arithmetic with constant divisors and lengths without formatting. */
#include "text/datetime.h"

#include <string.h>

#include "base/err.h"

#define S_PER_DAY 86400
#define DAYS_0000_TO_1970 719468 /* 0000-03-01 .. 1970-01-01, the algorithm's shift */
#define DAYS_PER_ERA 146097      /* 400 Gregorian years */

/* floor(a / b) and a - b * floor(a / b) in [0, b), for b > 0 */
static inline zf_i128 fdiv(zf_i128 a, int64_t b, int64_t *rem)
{
    if (a >= INT64_MIN && a <= INT64_MAX) {
        int64_t x = (int64_t)a, q = x / b, r = x - q * b;
        if (r < 0) {
            q--;
            r += b;
        }
        *rem = r;
        return q;
    }
    zf_i128 q = a / b, r = a - q * b;
    if (r < 0) {
        q--;
        r += b;
    }
    *rem = (int64_t)r;
    return q;
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian. */
zf_i128 zf_days_from_civil(zf_i128 y, unsigned m, unsigned d)
{
    int64_t yoe;
    y -= m <= 2;
    zf_i128 era = fdiv(y, 400, &yoe);
    int64_t doy = (153 * (int64_t)(m > 2 ? m - 3 : m + 9) + 2) / 5 + (int64_t)d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * DAYS_PER_ERA + doe - DAYS_0000_TO_1970;
}

/* The date `days` after 1970-01-01, proleptic Gregorian. */
void zf_civil_from_days(zf_i128 days, zf_i128 *y, unsigned *m, unsigned *d)
{
    int64_t doe;
    zf_i128 era = fdiv(days + DAYS_0000_TO_1970, DAYS_PER_ERA, &doe);
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = era * 400 + yoe + (*m <= 2);
}

static const zf_text_ops datetime_ops;

/* Set up a formatter for one data type; nat is the verbatim NaT text. */
int zf_dtfmt_init(zf_dtfmt *f, zf_format format, zf_unit unit, uint32_t scale, const char *nat)
{
    if (!f || (unsigned)unit > ZF_UNIT_GENERIC || scale < 1 || scale > INT32_MAX)
        return ZF_EINVAL;
    memset(f, 0, sizeof *f);
    f->unit = unit;
    f->scale = scale;
    return zf_text_setup(&f->text, &datetime_ops, format, nat);
}

/* ---- the instant of a value -------------------------------------------- */

typedef struct instant {
    zf_i128 days;  /* floor days since 1970-01-01 */
    uint32_t sod;  /* seconds of that day */
    uint64_t sub;  /* the fraction of the second in units of 10^-exp s */
    unsigned exp;  /* 0, or the sub-second unit's 3..18 */
    zf_i128 year;  /* the date of `days` */
    unsigned mon, day;
} instant;

/* The instant v * scale units after the epoch (unit not generic). */
static void decompose(const zf_dtfmt *f, int64_t v, instant *t)
{
    zf_i128 n = (zf_i128)v * f->scale;
    int64_t r;
    t->sod = 0;
    t->sub = 0;
    t->exp = zf_units[f->unit].exp;
    if (f->unit == ZF_UNIT_Y || f->unit == ZF_UNIT_M) {
        zf_i128 q = n;
        t->mon = 1;
        if (f->unit == ZF_UNIT_M) {
            q = fdiv(n, 12, &r);
            t->mon = (unsigned)r + 1;
        }
        t->year = 1970 + q;
        t->day = 1;
        t->days = zf_days_from_civil(t->year, t->mon, 1);
        return;
    }
    zf_i128 sec = n * zf_units[f->unit].secs;
    if (t->exp) {
        sec = fdiv(n, (int64_t)zf_p10[t->exp], &r);
        t->sub = (uint64_t)r;
    }
    t->days = fdiv(sec, S_PER_DAY, &r);
    t->sod = (uint32_t)r;
    zf_civil_from_days(t->days, &t->year, &t->mon, &t->day);
}

/* ---- pieces of text ----------------------------------------------------- */

char *zf_put_year(char *p, zf_i128 y)
{
    zf_u128 m = y < 0 ? -(zf_u128)y : (zf_u128)y;
    unsigned width = y < 0 ? 3 : 4, nd = zf_ndig128(m);
    if (y < 0)
        *p++ = '-';
    for (; nd < width; nd++)
        *p++ = '0';
    return zf_put_u128(p, m);
}

/* "YYYY", "YYYY-MM" or "YYYY-MM-DD" (parts 1..3) */
static char *put_date(char *p, const instant *t, int parts)
{
    p = zf_put_year(p, t->year);
    if (parts >= 2) {
        *p = '-';
        zf_put2(p + 1, t->mon);
        p += 3;
    }
    if (parts >= 3) {
        *p = '-';
        zf_put2(p + 1, t->day);
        p += 3;
    }
    return p;
}

/* "hh", "hh:mm" or "hh:mm:ss" (parts 1..3) of a second of the day */
static char *put_time(char *p, uint32_t sod, int parts)
{
    zf_put2(p, sod / 3600);
    p += 2;
    if (parts >= 2) {
        *p = ':';
        zf_put2(p + 1, sod / 60 % 60);
        p += 3;
    }
    if (parts >= 3) {
        *p = ':';
        zf_put2(p + 1, sod % 60);
        p += 3;
    }
    return p;
}

/* exactly w (<= 18) digits of x */
static char *put_digits(char *p, uint64_t x, unsigned w)
{
    if (w > 9) {
        uint64_t hi = x / 1000000000u;
        zf_put_fixed(p, hi, w - 9);
        zf_put9(p + w - 9, (uint32_t)(x - hi * 1000000000u));
    } else {
        zf_put_fixed(p, x, w);
    }
    return p + w;
}

/* pandas' fraction digits for a fraction of `sub` units of 10^-exp s:
 * none, 6 when whole microseconds, 9 when whole ns, else 12/15/18 */
static unsigned pandas_digits(uint64_t sub, unsigned exp, uint64_t *as)
{
    *as = sub * zf_p10[18 - exp]; /* attoseconds */
    if (!*as)
        return 0;
    static const unsigned fd[] = {6, 9, 12, 15};
    for (unsigned i = 0; i < 4; i++)
        if (*as % zf_p10[18 - fd[i]] == 0)
            return fd[i];
    return 18;
}

/* "[-]n": v * scale, the generic unit's text */
static size_t int_text(int64_t v, uint32_t scale, char *out)
{
    zf_i128 n = (zf_i128)v * scale;
    int neg = n < 0;
    out[0] = '-';
    return (size_t)(zf_put_u128(out + neg, neg ? -(zf_u128)n : (zf_u128)n) - out);
}

/* ---- the formats -------------------------------------------------------- */

/* pandas ("YYYY-MM-DD hh:mm:ss[.f]") with sep ' ', iso with 'T' */
static size_t pandas_text(const instant *t, char sep, char *out)
{
    char *p = put_date(out, t, 3);
    *p++ = sep;
    p = put_time(p, t->sod, 3);
    uint64_t as;
    unsigned fd = pandas_digits(t->sub, t->exp, &as);
    if (fd) {
        *p++ = '.';
        p = put_digits(p, as / zf_p10[18 - fd], fd);
    }
    return (size_t)(p - out);
}

/* str(numpy.datetime64(v, unit)): date and time down to the unit */
static size_t numpy_text(const instant *t, zf_unit u, char *out)
{
    static const int date_parts[] = {[ZF_UNIT_Y] = 1, [ZF_UNIT_M] = 2};
    char *p = put_date(out, t, u <= ZF_UNIT_M ? date_parts[u] : 3);
    if (u >= ZF_UNIT_h) {
        *p++ = 'T';
        p = put_time(p, t->sod, u == ZF_UNIT_h ? 1 : u == ZF_UNIT_m ? 2 : 3);
    }
    if (t->exp) {
        *p++ = '.';
        p = put_digits(p, t->sub, t->exp);
    }
    return (size_t)(p - out);
}

/* exact seconds since the epoch, "[-]s[.f]" without trailing zeros */
static size_t seconds_text(const instant *t, char *out)
{
    zf_i128 s = t->days * S_PER_DAY + t->sod; /* floor(seconds); the fraction adds */
    uint64_t frac = t->sub, one = zf_p10[t->exp];
    int neg = s < 0;
    zf_u128 mag = neg ? -(zf_u128)s : (zf_u128)s;
    if (neg && frac) { /* -(|s| - 1 + (1 - f)) */
        mag--;
        frac = one - frac;
    }
    out[0] = '-';
    char *p = zf_put_u128(out + neg, mag);
    if (frac) {
        unsigned w = t->exp;
        while (frac % 10 == 0) {
            frac /= 10;
            w--;
        }
        *p++ = '.';
        p = put_digits(p, frac, w);
    }
    return (size_t)(p - out);
}

/* ---- the fast case: 64-bit instants of units W..ns in years 0..9999 ---- */

#define DAYS_Y0 (-719528)   /* 0000-01-01 */
#define DAYS_Y10000 2932897 /* 10000-01-01 */

typedef struct fast {
    int64_t days; /* floor days since 1970-01-01, in years 0..9999 */
    uint32_t sod; /* seconds of that day */
    uint32_t ns;  /* nanoseconds of that second */
} fast;

/* floor split of n units of 1/p s (p and to_ns = 10^9 / p constants) */
static inline __attribute__((always_inline)) void split_p(int64_t n, int64_t p, uint32_t to_ns,
                                                          fast *q)
{
    int64_t s = n / p, r = n - s * p;
    if (r < 0) {
        s--;
        r += p;
    }
    int64_t d = s / S_PER_DAY, sr = s - d * S_PER_DAY;
    if (sr < 0) {
        d--;
        sr += S_PER_DAY;
    }
    q->days = d;
    q->sod = (uint32_t)sr;
    q->ns = (uint32_t)r * to_ns;
}

/* Split v, of f's scale and unit u (f->unit: a constant where the caller
 * has one), when it is a fast case (1), else 0. */
static inline __attribute__((always_inline)) int fast_split(const zf_dtfmt *f, zf_unit u,
                                                            int64_t v, fast *q)
{
    int64_t n;
    if (v == ZF_NAT || __builtin_mul_overflow(v, (int64_t)f->scale, &n))
        return 0;
    switch (u) {
    case ZF_UNIT_ns: split_p(n, 1000000000, 1, q); break;
    case ZF_UNIT_us: split_p(n, 1000000, 1000, q); break;
    case ZF_UNIT_ms: split_p(n, 1000, 1000000, q); break;
    case ZF_UNIT_s: split_p(n, 1, 0, q); break;
    case ZF_UNIT_W: case ZF_UNIT_D: case ZF_UNIT_h: case ZF_UNIT_m:
        if (__builtin_mul_overflow(n, (int64_t)zf_units[u].secs, &n))
            return 0;
        split_p(n, 1, 0, q);
        break;
    default: return 0;
    }
    return q->days >= DAYS_Y0 && q->days < DAYS_Y10000;
}

/* the date of the day last written: a run of values of one day makes it once */
typedef struct day_memo {
    int64_t days; /* INT64_MIN: none yet */
    char date[10];
} day_memo;

/* "YYYY-MM-DD" of a fast day (the algorithm of zf_civil_from_days, shifted
 * one era so that every quotient is of non-negative numbers) */
static inline char *put_date64(char *p, int64_t days)
{
    uint64_t z = (uint64_t)(days + DAYS_0000_TO_1970 + DAYS_PER_ERA);
    uint64_t era = z / DAYS_PER_ERA, doe = z - era * DAYS_PER_ERA;
    uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    uint32_t d = (uint32_t)(doy - (153 * mp + 2) / 5 + 1), m = (uint32_t)(mp < 10 ? mp + 3 : mp - 9);
    uint32_t y = (uint32_t)((era - 1) * 400 + yoe + (m <= 2));
    zf_put4(p, y);
    p[4] = '-';
    zf_put2(p + 5, m);
    p[7] = '-';
    zf_put2(p + 8, d);
    return p + 10;
}

/* put_date64 through the memo m */
static inline char *put_date_memo(char *p, int64_t days, day_memo *m)
{
    if (days != m->days) {
        put_date64(m->date, days);
        m->days = days;
    }
    memcpy(p, m->date, 10);
    return p + 10;
}

/* pandas' fraction of ns nanoseconds: none, 6 or 9 digits (with the dot) */
static inline unsigned fast_frac_len(uint32_t ns)
{
    return ns == 0 ? 0u : ns % 1000 ? 10u : 7u;
}

/* pandas / iso text of a fast instant */
static inline size_t fast_pandas(const fast *q, char sep, char *out, day_memo *m)
{
    char *p = put_date_memo(out, q->days, m);
    *p++ = sep;
    p = put_time(p, q->sod, 3);
    unsigned fl = fast_frac_len(q->ns);
    if (fl) {
        *p = '.';
        if (fl == 7)
            zf_put_fixed(p + 1, q->ns / 1000, 6);
        else
            zf_put9(p + 1, q->ns);
    }
    return (size_t)(p - out) + fl;
}

/* numpy text of a fast instant: down to the unit (W..ns) */
static inline size_t fast_numpy(const fast *q, zf_unit u, char *out, day_memo *m)
{
    char *p = put_date_memo(out, q->days, m);
    if (u >= ZF_UNIT_h) {
        *p++ = 'T';
        p = put_time(p, q->sod, u == ZF_UNIT_h ? 1 : u == ZF_UNIT_m ? 2 : 3);
    }
    unsigned e = zf_units[u].exp;
    if (e) {
        *p = '.';
        zf_put_fixed(p + 1, q->ns / zf_p10[9 - e], e);
        p += 1 + e;
    }
    return (size_t)(p - out);
}

/* length of fast_numpy's text */
static inline size_t fast_numpy_len(zf_unit u)
{
    static const uint8_t len[] = {[ZF_UNIT_W] = 10, [ZF_UNIT_D] = 10, [ZF_UNIT_h] = 13,
                                  [ZF_UNIT_m] = 16, [ZF_UNIT_s] = 19, [ZF_UNIT_ms] = 23,
                                  [ZF_UNIT_us] = 26, [ZF_UNIT_ns] = 29};
    return len[u];
}

/* ---- dispatch ----------------------------------------------------------- */

/* Everything but the fast case. */
static size_t general_value(const zf_dtfmt *f, int64_t v, char *out)
{
    if (v == ZF_NAT) {
        memcpy(out, f->text.nat, f->text.nat_len);
        return f->text.nat_len;
    }
    if (f->text.format == ZF_FORMAT_RAW)
        return int_text(v, 1, out);
    if (f->unit == ZF_UNIT_GENERIC)
        return int_text(v, f->scale, out);
    instant t;
    decompose(f, v, &t);
    switch (f->text.format) {
    case ZF_FORMAT_PANDAS: return pandas_text(&t, ' ', out);
    case ZF_FORMAT_ISO: return pandas_text(&t, 'T', out);
    case ZF_FORMAT_NUMPY: return numpy_text(&t, f->unit, out);
    default: return seconds_text(&t, out);
    }
}

/* the text of v (of unit u: f->unit, a constant where inlined) into out,
 * its date through m; its length */
static inline __attribute__((always_inline)) size_t value_memo(const zf_dtfmt *f, zf_unit u,
                                                               int64_t v, char *out,
                                                               day_memo *m)
{
    fast q;
    if (f->text.format <= ZF_FORMAT_NUMPY && fast_split(f, u, v, &q))
        return f->text.format == ZF_FORMAT_NUMPY
                   ? fast_numpy(&q, u, out, m)
                   : fast_pandas(&q, f->text.format == ZF_FORMAT_PANDAS ? ' ' : 'T', out, m);
    return general_value(f, v, out);
}

/* Write the text of v into out; returns its length. */
size_t zf_dtfmt_value(const zf_dtfmt *f, int64_t v, char *out)
{
    day_memo m = {INT64_MIN, {0}};
    return value_memo(f, f->unit, v, out, &m);
}

/* the length of v's text (of unit u: f->unit, a constant where inlined):
 * arithmetic in the fast case, else the text made in a scratch buffer
 * (exact by construction) */
static inline __attribute__((always_inline)) size_t len_of(const zf_dtfmt *f, zf_unit u,
                                                           int64_t v)
{
    fast q;
    char buf[ZF_VALUE_MAX];
    if (v == ZF_NAT)
        return f->text.nat_len;
    if (f->scale == 1 && f->text.format <= ZF_FORMAT_NUMPY && u >= ZF_UNIT_s && u <= ZF_UNIT_ns) {
        /* ticks of a power of ten of a second, in years 0..9999: no split needed */
        int64_t per_s = (int64_t)zf_p10[zf_units[u].exp];
        zf_i128 lo = (zf_i128)DAYS_Y0 * S_PER_DAY * per_s;
        zf_i128 hi = (zf_i128)DAYS_Y10000 * S_PER_DAY * per_s;
        if (v >= lo && v < hi)
            return f->text.format == ZF_FORMAT_NUMPY      ? fast_numpy_len(u)
                   : v % per_s == 0                      ? 19u /* fast_frac_len's cases */
                   : u == ZF_UNIT_ns && v % 1000 != 0 ? 29u
                                                         : 26u;
    }
    if (f->text.format <= ZF_FORMAT_NUMPY && fast_split(f, u, v, &q))
        return f->text.format == ZF_FORMAT_NUMPY ? fast_numpy_len(u) : 19u + fast_frac_len(q.ns);
    return general_value(f, v, buf);
}

/* Length of v's text. */
size_t zf_dtfmt_len(const zf_dtfmt *f, int64_t v)
{
    return len_of(f, f->unit, v);
}

/* ---- the text interface (text.h) -------------------------------------- */

static inline const zf_dtfmt *dt_of(const zf_text *t)
{
    return (const zf_dtfmt *)t;
}

static size_t text_value(const zf_text *t, int64_t v, char *out)
{
    return zf_dtfmt_value(dt_of(t), v, out);
}

static size_t text_len(const zf_text *t, int64_t v)
{
    return zf_dtfmt_len(dt_of(t), v);
}

/* text_len_sum for values of unit u (a constant where inlined) */
static inline __attribute__((always_inline)) uint64_t len_sum_of(const zf_dtfmt *f, zf_unit u,
                                                                 const int64_t *v, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += len_of(f, u, v[i]);
    return sum;
}

/* one function per common unit of time stamps (its divisors constants),
 * else the unit read from f */
#define BY_UNIT(F, f, ...)                                                                   \
    switch ((f)->unit) {                                                                     \
    case ZF_UNIT_s: return F(f, ZF_UNIT_s, __VA_ARGS__);                                     \
    case ZF_UNIT_ms: return F(f, ZF_UNIT_ms, __VA_ARGS__);                                   \
    case ZF_UNIT_us: return F(f, ZF_UNIT_us, __VA_ARGS__);                                   \
    case ZF_UNIT_ns: return F(f, ZF_UNIT_ns, __VA_ARGS__);                                   \
    default: return F(f, (f)->unit, __VA_ARGS__);                                            \
    }

static uint64_t text_len_sum(const zf_text *t, const int64_t *v, size_t n)
{
    BY_UNIT(len_sum_of, dt_of(t), v, n)
}

/* text_lines for values of unit u (a constant where inlined) */
static inline __attribute__((always_inline)) zf_lines lines_of(const zf_dtfmt *f, zf_unit u,
                                                               const int64_t *v, size_t n,
                                                               char *out, size_t cap)
{
    zf_lines r = {0, 0, 0};
    day_memo m = {INT64_MIN, {0}};
    size_t room = (f->text.nat_len > ZF_VALUE_MAX ? f->text.nat_len : ZF_VALUE_MAX) + 1u;
    for (; r.count < n && cap - r.bytes >= room; r.count++) {
        size_t len = value_memo(f, u, v[r.count], out + r.bytes, &m);
        out[r.bytes + len] = '\n';
        r.last = r.bytes;
        r.bytes += len + 1;
    }
    return r;
}

static zf_lines text_lines(const zf_text *t, const int64_t *v, size_t n, char *out, size_t cap)
{
    BY_UNIT(lines_of, dt_of(t), v, n, out, cap)
}

static const zf_text_ops datetime_ops = {
    .value = text_value, .len = text_len, .len_sum = text_len_sum, .lines = text_lines,
};
