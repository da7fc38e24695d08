/* duration.c - timedelta64 units, formats, and the pandas / numpy / raw text
 * of one value (iso and seconds are in duration_iso.c).
 *
 * The hot path is pandas text of s..ns values whose product v * S fits in 64
 * bits: unsigned division by constants per unit, branch-free sign handling,
 * digits eight at a time in a register.  Everything else takes an exact
 * 128-bit path (128-bit division only when the magnitude needs it).  No
 * snprintf, no allocation. */
#include "text/duration.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "duration_impl.h"
#include "base/err.h"


/* ---- parsing and set-up ------------------------------------------------ */

/* Parse a format name ("pandas", "iso", "numpy", "seconds", "raw"); 0 or ZF_EINVAL. */
/* Digit tables of the pandas fast path, built once by zf_fmt_init: "mm:ss"
 * for each second of an hour, "ddd" for 0..999 (little-endian words). */
static uint64_t mmss_text[3600];
static uint32_t dig3_text[1000];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static int simd_on; /* the pandas runs use duration_simd.c */

static void build_tables(void)
{
    const char *no = getenv("ZARRFS_NO_SIMD");
    simd_on = !(no && *no) && zf_avx512_pd_supported();
    for (uint32_t i = 0; i < 3600; i++) {
        uint32_t m = i / 60, s = i % 60;
        mmss_text[i] = (uint64_t)('0' + m / 10) | (uint64_t)('0' + m % 10) << 8 |
                       (uint64_t)':' << 16 | (uint64_t)('0' + s / 10) << 24 |
                       (uint64_t)('0' + s % 10) << 32;
    }
    for (uint32_t i = 0; i < 1000; i++)
        dig3_text[i] = ('0' + i / 100) | ('0' + i / 10 % 10) << 8 | ('0' + i % 10) << 16;
}

static const zf_text_ops duration_ops;

/* Set up a formatter for one data type; nat is the verbatim NaT text. */
int zf_fmt_init(zf_fmt *f, zf_format format, zf_unit unit, uint32_t scale, const char *nat)
{
    size_t n = 0;
    if (!f || !nat || (unsigned)format > ZF_FORMAT_RAW || (unsigned)unit > ZF_UNIT_GENERIC ||
        scale < 1 || scale > INT32_MAX)
        return ZF_EINVAL;
    while (n <= ZF_NAT_MAX && nat[n])
        n++;
    if (n > ZF_NAT_MAX)
        return ZF_EINVAL;
    pthread_once(&tables_once, build_tables);
    memset(f, 0, sizeof *f);
    f->text.ops = &duration_ops;
    f->text.format = format;
    f->unit = unit;
    f->scale = scale;
    f->text.nat_len = (uint8_t)n;
    memcpy(f->text.nat, nat, n);
    return 0;
}

/* Use vector runs when possible (on = 1) or never (on = 0); returns whether they are used. */
int zf_fmt_simd(int on)
{
    pthread_once(&tables_once, build_tables);
    simd_on = on && zf_avx512_pd_supported();
    return simd_on;
}

/* ---- integers: raw, generic, numpy, Y and M in pandas ------------------ */

/* "[-]|n|" followed by word (may be NULL); n = v * scale. */
static size_t int_text(int64_t v, uint32_t scale, const zf_unit_info *word, char *out)
{
    int neg;
    zf_u128 m = zf_magnitude(v, scale, &neg);
    out[0] = '-';
    char *p = zf_put_u128(out + neg, m);
    if (word) {
        memcpy(p, word->word, word->word_len);
        p += word->word_len;
    }
    return (size_t)(p - out);
}

static size_t int_len(int64_t v, uint32_t scale, const zf_unit_info *word)
{
    int neg;
    zf_u128 m = zf_magnitude(v, scale, &neg);
    return (size_t)neg + zf_ndig128(m) + (word ? word->word_len : 0u);
}

/* ---- pandas ------------------------------------------------------------ */

/* Write "hh:mm:ss" for a second of the day; returns the end. */
ZF_INLINE char *put_hms(char *p, uint32_t sod)
{
    uint32_t h = sod / 3600u, r = sod - h * 3600u;
#if ZF_LITTLE_ENDIAN
    uint16_t hh; /* "hh", ':', then "mm:ss" from the table */
    memcpy(&hh, zf_dig2 + 2 * h, 2);
    uint64_t w = hh | (uint64_t)':' << 16 | mmss_text[r] << 24;
    memcpy(p, &w, 8);
#else
    uint32_t mi = r / 60u, s = r - mi * 60u;
    zf_put2(p, h);
    p[2] = ':';
    zf_put2(p + 3, mi);
    p[5] = ':';
    zf_put2(p + 6, s);
#endif
    return p + 8;
}

/* Days without leading zeros at p; returns the end.  Below 10^8 this is
 * branch-free but for the size class: two or eight digits shifted past their
 * leading zeros, stored as one word (bytes beyond the end are overwritten by
 * the caller's " days"). */
ZF_INLINE char *put_days(char *p, uint64_t days)
{
#if ZF_LITTLE_ENDIAN
    if (days < 100u) { /* the common case: two digits, the first dropped below 10 */
        uint16_t w;
        unsigned lz = days < 10u;
        memcpy(&w, zf_dig2 + 2 * days, 2);
        w = (uint16_t)(w >> (8 * lz));
        memcpy(p, &w, 2);
        return p + 2 - lz;
    }
    if (days < 100000000u) {
        uint64_t w = zf_digits8((uint32_t)days);
        /* leading zero digits: zero bytes of w - '0'..., at most 7 */
        unsigned lz = (unsigned)__builtin_ctzll((w ^ 0x3030303030303030ull) | 1ull << 56) >> 3;
        w >>= 8 * lz;
        memcpy(p, &w, 8);
        return p + 8 - lz;
    }
#endif
    return zf_put_u64(p, days);
}

/* Write " days " or " days +" and the time of day; returns the end. */
ZF_INLINE char *put_day_tail(char *p, int neg, uint32_t sod)
{
    memcpy(p, " days + ", 8); /* the time overwrites what is not needed */
    return put_hms(p + 6 + neg, sod);
}

/* The fast case: a unit from s to ns and v * S within int64 (and at least
 * ZF_FAST_ROOM, more than a day in ns, below INT64_MAX). */
#define ZF_FAST_ROOM 1000000000000000000ll
typedef struct pd64 {
    uint64_t days; /* |floor(value / 1 day)| */
    uint32_t sod;  /* seconds of the day of the non-negative remainder */
    uint32_t ns;   /* nanoseconds of the remainder */
    int neg;       /* the value is negative */
} pd64;

/* Floor split of n units of 1/p s; p and to_ns = 10^9 / p are constants.
 * n is shifted by a whole number of days, bias >= 2^63, so that one unsigned
 * division gives floor days and a non-negative remainder without branches;
 * the caller keeps n below 2^64 - bias. */
ZF_INLINE pd64 pd_split64(int64_t n, uint64_t p, uint32_t to_ns)
{
    pd64 q;
    const uint64_t per_day = p * ZF_S_PER_DAY;
    const uint64_t k = ((uint64_t)1 << 63) / per_day + 1; /* days in the bias */
    uint64_t u = (uint64_t)n + k * per_day, d = u / per_day, rem = u - d * per_day;
    int64_t days = (int64_t)d - (int64_t)k; /* both below 2^63 */
    uint64_t sign = (uint64_t)-(int64_t)(days < 0);
    q.days = ((uint64_t)days ^ sign) - sign; /* |days| */
    q.neg = (int)(sign & 1u);
    q.sod = (uint32_t)(rem / p);
    q.ns = (uint32_t)(rem - q.sod * p) * to_ns;
    return q;
}

/* The pandas fraction of ns nanoseconds: none, ".uuuuuu" when it is whole
 * microseconds, else ".nnnnnnnnn".  Kept branch-free (the bench data mixes
 * whole and fractional values at random): (x + 2^32 - 1) >> 32 is x != 0 for
 * x < 2^32 in a form compilers do not turn back into a branch. */
typedef struct frac_class {
    uint64_t any, sub_us; /* 0 or 1: ns != 0, ns % 1000 != 0 */
} frac_class;

ZF_INLINE frac_class pd_frac_class(uint32_t ns)
{
    frac_class c = {((uint64_t)ns + UINT32_MAX) >> 32,
                    ((uint64_t)(ns % 1000u) + UINT32_MAX) >> 32};
    return c;
}

/* Bytes of the pandas fraction: 0, 7 or 10. */
ZF_INLINE unsigned pd_frac_len(uint32_t ns)
{
    frac_class c = pd_frac_class(ns);
    return (unsigned)(c.any * 7u + c.sub_us * 3u);
}

#if ZF_LITTLE_ENDIAN
/* The fraction after the time "hh:mm:ss" that ends at p, without a branch:
 * one 8-byte store ending at p + flen and one 2-byte store, each rewriting
 * bytes of the time when the fraction is shorter; returns the end. */
ZF_INLINE char *put_ns_frac(char *p, uint32_t ns)
{
    frac_class c = pd_frac_class(ns);
    uint64_t m0 = c.any - 1, m7 = 0 - (c.any - c.sub_us), m10 = 0 - c.sub_us; /* masks */
    unsigned flen = (unsigned)(c.any * 7u + c.sub_us * 3u);
    uint64_t hms, a = ns / 100000000u;
    uint64_t w = zf_digits8(ns - (uint32_t)a * 100000000u);
    uint64_t dot_a = '.' | ('0' + a) << 8;
    memcpy(&hms, p - 8, 8);
    /* flen 0: the time again; 7: "s.uuuuu" (the last digit of the time first) */
    uint64_t x = (hms & m0) | ((hms >> 56 | dot_a << 8 | w << 24) & m7) | (w & m10);
    memcpy(p + flen - 8, &x, 8);
    uint16_t y = (uint16_t)((dot_a & ~m0) | (hms >> 48 & m0));
    memcpy(p - 2 * (1 - c.any), &y, 2);
    return p + flen;
}
#else
/* The fraction after the time that ends at p; returns the end. */
ZF_INLINE char *put_ns_frac(char *p, uint32_t ns)
{
    unsigned flen = pd_frac_len(ns);
    if (!flen)
        return p;
    *p = '.';
    if (flen == 7)
        zf_put_fixed(p + 1, ns / 1000u, 6);
    else
        zf_put9(p + 1, ns);
    return p + flen;
}
#endif

/* Text of a fast-case value for zf_fmt_lines: the fraction always as nine
 * digits, cut by the returned length (the bytes past it are scratch). */
ZF_INLINE size_t pd64_text_scratch(pd64 q, char *out)
{
    out[0] = '-';
    char *p = put_day_tail(put_days(out + q.neg, q.days), q.neg, q.sod);
    *p = '.';
#if ZF_LITTLE_ENDIAN
    uint32_t a = q.ns / 1000000u, b = q.ns - a * 1000000u, c = b / 1000u, d = b - c * 1000u;
    uint64_t w = dig3_text[a] | (uint64_t)dig3_text[c] << 24 | (uint64_t)dig3_text[d] << 48;
    memcpy(p + 1, &w, 8);
    p[9] = (char)(dig3_text[d] >> 16);
#else
    zf_put9(p + 1, q.ns);
#endif
    return (size_t)(p - out) + pd_frac_len(q.ns);
}

/* Text of a fast-case value. */
ZF_INLINE size_t pd64_text(pd64 q, char *out)
{
    out[0] = '-';
    char *p = put_day_tail(put_days(out + q.neg, q.days), q.neg, q.sod);
    return (size_t)(put_ns_frac(p, q.ns) - out);
}

ZF_INLINE size_t pd64_len(pd64 q)
{
    return (size_t)(2 * q.neg) + zf_ndig64(q.days) + 14u + pd_frac_len(q.ns);
}

/* The fast case for v in pandas format, or 0 if v is not one. */
ZF_INLINE int pd_fast(const zf_fmt *f, int64_t v, pd64 *q)
{
    int64_t n;
    if (f->text.format != ZF_FORMAT_PANDAS || v == ZF_NAT ||
        __builtin_mul_overflow(v, (int64_t)f->scale, &n) || n > INT64_MAX - ZF_FAST_ROOM)
        return 0;
    switch (f->unit) {
    case ZF_UNIT_ns: *q = pd_split64(n, 1000000000u, 1u); return 1;
    case ZF_UNIT_us: *q = pd_split64(n, 1000000u, 1000u); return 1;
    case ZF_UNIT_ms: *q = pd_split64(n, 1000u, 1000000u); return 1;
    case ZF_UNIT_s: *q = pd_split64(n, 1u, 0u); return 1;
    default: return 0;
    }
}

/* The general case: any unit from W to as, any magnitude. */
typedef struct pd_parts {
    int neg;       /* the value is negative */
    zf_u128 days;  /* |floor(value / 1 day)| */
    uint32_t sod;  /* seconds of the day of the non-negative remainder */
    uint64_t frac; /* attoseconds of the remainder */
    unsigned fd;   /* fraction digits: 0, 6, 9, 12, 15 or 18 */
} pd_parts;

/* Pandas fraction digits for an attosecond fraction. */
static inline unsigned pandas_fd(uint64_t frac)
{
    if (!frac)
        return 0;
    if (frac % 1000000000000ull == 0)
        return 6;
    if (frac % 1000000000ull == 0)
        return 9;
    if (frac % 1000000ull == 0)
        return 12;
    return frac % 1000ull == 0 ? 15 : 18;
}

/* General pandas parts of v: exact 128-bit magnitude, floor days. */
static void pd_general(const zf_fmt *f, int64_t v, pd_parts *q)
{
    zf_secs s;
    zf_u128 m = zf_magnitude(v, f->scale, &q->neg);
    zf_split_secs(f->unit, m, &s);
    if (q->neg && s.frac) { /* borrow a second */
        s.frac = ZF_AS_PER_S - s.frac;
        s.sec++;
    }
    zf_split_day(s.sec, &q->days, &q->sod);
    if (q->neg && q->sod) { /* borrow a day */
        q->days++;
        q->sod = ZF_S_PER_DAY - q->sod;
    }
    q->frac = s.frac;
    q->fd = pandas_fd(s.frac);
}

/* The pandas fraction: the first fd (6..18) of 18 attosecond digits. */
static void put_pd_frac(char *p, uint64_t frac, unsigned fd)
{
    uint64_t x = frac / zf_p10[18 - fd];
    if (fd <= 9) {
        zf_put_fixed(p, x, fd);
        return;
    }
    uint64_t hi = x / 1000000000u;
    zf_put_fixed(p, hi, fd - 9);
    zf_put9(p + fd - 9, (uint32_t)(x - hi * 1000000000u));
}

/* "[-]D days[ +]hh:mm:ss[.f]" of v in a unit from W to as. */
static size_t pandas_text(const zf_fmt *f, int64_t v, char *out)
{
    pd_parts q;
    pd_general(f, v, &q);
    out[0] = '-';
    char *p = put_day_tail(zf_put_u128(out + q.neg, q.days), q.neg, q.sod);
    if (!q.fd)
        return (size_t)(p - out);
    *p = '.';
    put_pd_frac(p + 1, q.frac, q.fd);
    return (size_t)(p - out) + q.fd + 1;
}

static size_t pandas_len(const zf_fmt *f, int64_t v)
{
    pd_parts q;
    pd_general(f, v, &q);
    return (size_t)(2 * q.neg) + zf_ndig128(q.days) + 14u + (q.fd ? q.fd + 1 : 0u);
}

/* ---- dispatch ---------------------------------------------------------- */

/* Everything but the pandas fast case. */
static __attribute__((noinline)) size_t fmt_value(const zf_fmt *f, int64_t v, char *out)
{
    zf_unit u = f->unit;
    if (v == ZF_NAT) {
        memcpy(out, f->text.nat, f->text.nat_len);
        return f->text.nat_len;
    }
    if (f->text.format == ZF_FORMAT_RAW)
        return int_text(v, 1, NULL, out);
    if (f->text.format == ZF_FORMAT_NUMPY)
        return int_text(v, f->scale, &zf_units[u], out);
    if (u == ZF_UNIT_GENERIC)
        return int_text(v, f->scale, NULL, out);
    switch (f->text.format) {
    case ZF_FORMAT_PANDAS:
        if (u == ZF_UNIT_Y || u == ZF_UNIT_M)
            return int_text(v, f->scale, &zf_units[u], out);
        return pandas_text(f, v, out);
    case ZF_FORMAT_ISO: return zf_iso_text(f->unit, f->scale, v, out);
    default: return zf_seconds_text(f->unit, f->scale, v, out);
    }
}

static __attribute__((noinline)) size_t fmt_len(const zf_fmt *f, int64_t v)
{
    zf_unit u = f->unit;
    if (v == ZF_NAT)
        return f->text.nat_len;
    if (f->text.format == ZF_FORMAT_RAW)
        return int_len(v, 1, NULL);
    if (f->text.format == ZF_FORMAT_NUMPY)
        return int_len(v, f->scale, &zf_units[u]);
    if (u == ZF_UNIT_GENERIC)
        return int_len(v, f->scale, NULL);
    switch (f->text.format) {
    case ZF_FORMAT_PANDAS:
        if (u == ZF_UNIT_Y || u == ZF_UNIT_M)
            return int_len(v, f->scale, &zf_units[u]);
        return pandas_len(f, v);
    case ZF_FORMAT_ISO: return zf_iso_len(f->unit, f->scale, v);
    default: return zf_seconds_len(f->unit, f->scale, v);
    }
}

/* Write the text of v into out; returns the number of bytes written. */
size_t zf_fmt_value(const zf_fmt *f, int64_t v, char *out)
{
    pd64 q;
    return pd_fast(f, v, &q) ? pd64_text(q, out) : fmt_value(f, v, out);
}

/* Length of the text zf_fmt_value would write for v. */
size_t zf_fmt_len(const zf_fmt *f, int64_t v)
{
    pd64 q;
    return pd_fast(f, v, &q) ? pd64_len(q) : fmt_len(f, v);
}

/* ---- runs of values ---------------------------------------------------- */

/* How many values the scalar code takes after a vector call that did
 * `done`: the group it stopped at, or, while the calls do nothing (values
 * beyond their range), twice as many as last time, up to 256, so that such
 * data does not pay for a vector attempt every eight values. */
static inline size_t scalar_span(size_t span, size_t done)
{
    return done || span < 8 ? 8 : span < 256 ? 2 * span : 256;
}

/* values the run formatters leave to the general formatter: NaT and those
 * too close to INT64_MAX for the biased split */
ZF_INLINE int pd_slow(int64_t x)
{
    return __builtin_expect(x == ZF_NAT || x > INT64_MAX - ZF_FAST_ROOM, 0);
}

/* zf_fmt_len_sum for pandas, scale 1, a unit of 1/p s (always inlined, as
 * pd_lines below, so that p is a constant) */
ZF_INLINE uint64_t pd_len_sum(const zf_fmt *f, const int64_t *v, size_t n, uint64_t p,
                              uint32_t to_ns)
{
    uint64_t sum = 0;
    size_t i = 0, span = 0;
    for (;;) {
        size_t stop = n;
        if (simd_on) { /* vector groups, then a span here */
            size_t done;
            sum += zf_pd_len_sum_avx512(f, v + i, n - i, &done);
            i += done;
            span = scalar_span(span, done);
            stop = n - i > span ? i + span : n;
        }
        for (; i < stop; i++) {
            int64_t x = v[i];
            if (pd_slow(x))
                sum += fmt_len(f, x);
            else
                sum += pd64_len(pd_split64(x, p, to_ns));
        }
        if (i == n)
            return sum;
    }
}

/* Sum of zf_fmt_len over n values. */
uint64_t zf_fmt_len_sum(const zf_fmt *f, const int64_t *v, size_t n)
{
    if (f->text.format == ZF_FORMAT_PANDAS && f->scale == 1) {
        switch (f->unit) {
        case ZF_UNIT_ns: return pd_len_sum(f, v, n, 1000000000u, 1u);
        case ZF_UNIT_us: return pd_len_sum(f, v, n, 1000000u, 1000u);
        case ZF_UNIT_ms: return pd_len_sum(f, v, n, 1000u, 1000000u);
        case ZF_UNIT_s: return pd_len_sum(f, v, n, 1u, 0u);
        default: break;
        }
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += zf_fmt_len(f, v[i]);
    return sum;
}

/* Room a line may need in zf_fmt_lines (text, scratch, newline). */
static size_t line_room(const zf_fmt *f)
{
    return (f->text.nat_len > ZF_VALUE_MAX ? f->text.nat_len : ZF_VALUE_MAX) + 1u;
}

/* zf_fmt_lines for pandas, scale 1, a unit of 1/p s.  Always inlined: each
 * caller's constant p turns the divisions into multiplications (a run-time
 * 64-bit division per value would cost more than the rest of the line). */
ZF_INLINE zf_lines
pd_lines(const zf_fmt *f, const int64_t *v, size_t n, char *out, size_t cap, uint64_t p,
         uint32_t to_ns)
{
    zf_lines r = {0, 0, 0};
    size_t room = line_room(f), span = 0;
    for (;;) {
        size_t stop = n, before;
        if (simd_on) { /* vector groups, then a span here */
            zf_lines s = zf_pd_lines_avx512(f, v + r.count, n - r.count, out + r.bytes,
                                            cap - r.bytes);
            if (s.count) {
                r.last = r.bytes + s.last;
                r.bytes += s.bytes;
                r.count += s.count;
            }
            span = scalar_span(span, s.count);
            stop = n - r.count > span ? r.count + span : n;
        }
        for (before = r.count; r.count < stop && cap - r.bytes >= room; r.count++) {
            int64_t x = v[r.count];
            char *q = out + r.bytes;
            size_t len;
            if (pd_slow(x))
                len = fmt_value(f, x, q);
            else
                len = pd64_text_scratch(pd_split64(x, p, to_ns), q);
            q[len] = '\n';
            r.last = r.bytes;
            r.bytes += len + 1;
        }
        if (r.count == n || r.count == before)
            return r;
    }
}

/* Write values as lines (text and a newline) while one more surely fits. */
zf_lines zf_fmt_lines(const zf_fmt *f, const int64_t *v, size_t n, char *out, size_t cap)
{
    if (f->text.format == ZF_FORMAT_PANDAS && f->scale == 1) {
        switch (f->unit) {
        case ZF_UNIT_ns: return pd_lines(f, v, n, out, cap, 1000000000u, 1u);
        case ZF_UNIT_us: return pd_lines(f, v, n, out, cap, 1000000u, 1000u);
        case ZF_UNIT_ms: return pd_lines(f, v, n, out, cap, 1000u, 1000000u);
        case ZF_UNIT_s: return pd_lines(f, v, n, out, cap, 1u, 0u);
        default: break;
        }
    }
    zf_lines r = {0, 0, 0};
    for (size_t room = line_room(f); r.count < n && cap - r.bytes >= room; r.count++) {
        size_t len = zf_fmt_value(f, v[r.count], out + r.bytes);
        out[r.bytes + len] = '\n';
        r.last = r.bytes;
        r.bytes += len + 1;
    }
    return r;
}

/* ---- the text interface (text.h) -------------------------------------- */

/* the formatter whose first member is t */
static inline const zf_fmt *fmt_of(const zf_text *t)
{
    return (const zf_fmt *)t;
}

static size_t text_value(const zf_text *t, int64_t v, char *out)
{
    return zf_fmt_value(fmt_of(t), v, out);
}

static size_t text_len(const zf_text *t, int64_t v)
{
    return zf_fmt_len(fmt_of(t), v);
}

static uint64_t text_len_sum(const zf_text *t, const int64_t *v, size_t n)
{
    return zf_fmt_len_sum(fmt_of(t), v, n);
}

static zf_lines text_lines(const zf_text *t, const int64_t *v, size_t n, char *out, size_t cap)
{
    return zf_fmt_lines(fmt_of(t), v, n, out, cap);
}

static const zf_text_ops duration_ops = {
    .value = text_value, .len = text_len, .len_sum = text_len_sum, .lines = text_lines,
};
