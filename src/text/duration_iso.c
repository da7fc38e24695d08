/* duration_iso.c - ISO 8601 and exact decimal-seconds text of one value.
 *
 * Both work on the magnitude of the exact duration with a leading "-" for
 * negative values; fractions are printed without trailing zeros.  Callers
 * (duration.c) handle NaT and the generic unit.  Built on the exact
 * arithmetic of exact_impl.h alone. */
#include "exact_impl.h"

typedef struct mag_parts {
    int neg;      /* the value is negative */
    zf_u128 m;    /* |v * scale| in the unit */
    zf_u128 sec;  /* whole seconds of the magnitude */
    uint64_t fx;  /* the fraction without trailing zeros */
    unsigned fd;  /* its number of digits (0: no fraction) */
} mag_parts;

/* Drop the trailing zero digits of x (x > 0, at most `most` of them). */
static inline unsigned trim_zeros(uint64_t *x, unsigned most)
{
    uint64_t y = *x;
    unsigned tz = 0; /* the steps 16, 8, 4, 2, 1 reach every count up to 31 */
    if (most >= 16 && y % 10000000000000000ull == 0) {
        y /= 10000000000000000ull;
        tz += 16;
    }
    if (most >= 8 && y % 100000000u == 0) {
        y /= 100000000u;
        tz += 8;
    }
    if (y % 10000u == 0) {
        y /= 10000u;
        tz += 4;
    }
    if (y % 100u == 0) {
        y /= 100u;
        tz += 2;
    }
    if (y % 10u == 0) {
        y /= 10u;
        tz += 1;
    }
    *x = y;
    return tz;
}

/* Magnitude, whole seconds and trimmed fraction of v (unit not generic). */
static inline void mag_split(zf_unit unit, uint32_t scale, int64_t v, mag_parts *q)
{
    zf_secs s;
    q->m = zf_magnitude(v, scale, &q->neg);
    zf_split_secs(unit, q->m, &s);
    q->sec = s.sec;
    q->fx = s.sub;
    q->fd = s.sub ? s.exp - trim_zeros(&q->fx, s.exp - 1) : 0;
}

/* Exact decimal seconds of v: "[-]sec[.frac]"; returns its length. */
size_t zf_seconds_text(zf_unit unit, uint32_t scale, int64_t v, char *out)
{
    mag_parts q;
    mag_split(unit, scale, v, &q);
    out[0] = '-';
    char *p = zf_put_u128(out + q.neg, q.sec);
    if (!q.fd)
        return (size_t)(p - out);
    *p = '.';
    zf_put_fixed(p + 1, q.fx, q.fd);
    return (size_t)(p - out) + 1 + q.fd;
}

/* Length of the exact decimal seconds of v. */
size_t zf_seconds_len(zf_unit unit, uint32_t scale, int64_t v)
{
    mag_parts q;
    mag_split(unit, scale, v, &q);
    return (size_t)q.neg + zf_ndig128(q.sec) + (q.fd ? q.fd + 1 : 0u);
}

/* The time of day of an ISO duration. */
typedef struct hms {
    uint32_t h, m, s;
} hms;

static inline hms split_hms(uint32_t sod)
{
    hms t;
    t.h = sod / 3600u;
    sod -= t.h * 3600u;
    t.m = sod / 60u;
    t.s = sod - t.m * 60u;
    return t;
}

/* "<n><c>" if n is not zero; returns the end. */
static inline char *put_comp(char *p, zf_u128 n, char c)
{
    if (!n)
        return p;
    p = zf_put_u128(p, n);
    *p = c;
    return p + 1;
}

/* "<n><c>" for 0 < n < 100 (hours, minutes); nothing if n is zero. */
static inline char *put_comp2(char *p, uint32_t n, char c)
{
    if (!n)
        return p;
    if (n >= 10u) {
        zf_put2(p, n);
        p += 2;
    } else {
        *p++ = (char)('0' + n);
    }
    *p = c;
    return p + 1;
}

/* Length of "<n><c>", 0 if n is zero. */
static inline size_t comp_len(zf_u128 n)
{
    return n ? zf_ndig128(n) + 1u : 0u;
}

/* "PnYnM" of a Y or M magnitude m > 0 (months are folded into years). */
static char *put_ym(char *p, zf_unit u, zf_u128 m)
{
    if (u == ZF_UNIT_Y)
        return put_comp(p, m, 'Y');
    p = put_comp(p, m / 12u, 'Y');
    return put_comp(p, m % 12u, 'M');
}

/* ISO 8601 text of v: "[-]P[nD][T[nH][nM][n[.f]S]]", "PT0S" for zero. */
size_t zf_iso_text(zf_unit unit, uint32_t scale, int64_t v, char *out)
{
    mag_parts q;
    zf_u128 days;
    uint32_t sod;
    mag_split(unit, scale, v, &q);
    if (!q.m) {
        memcpy(out, "PT0S", 4);
        return 4;
    }
    out[0] = '-';
    char *p = out + q.neg;
    *p++ = 'P';
    if (unit == ZF_UNIT_Y || unit == ZF_UNIT_M)
        return (size_t)(put_ym(p, unit, q.m) - out);
    zf_split_day(q.sec, &days, &sod);
    p = put_comp(p, days, 'D');
    if (!sod && !q.fd)
        return (size_t)(p - out);
    hms t = split_hms(sod);
    *p++ = 'T';
    p = put_comp2(p, t.h, 'H');
    p = put_comp2(p, t.m, 'M');
    if (!t.s && !q.fd)
        return (size_t)(p - out);
    if (t.s >= 10u) {
        zf_put2(p, t.s);
        p += 2;
    } else {
        *p++ = (char)('0' + t.s);
    }
    if (q.fd) {
        *p = '.';
        zf_put_fixed(p + 1, q.fx, q.fd);
        p += 1 + q.fd;
    }
    *p = 'S';
    return (size_t)(p + 1 - out);
}

/* Length of the ISO 8601 text of v. */
size_t zf_iso_len(zf_unit unit, uint32_t scale, int64_t v)
{
    mag_parts q;
    zf_u128 days;
    uint32_t sod;
    mag_split(unit, scale, v, &q);
    if (!q.m)
        return 4;
    size_t n = (size_t)q.neg + 1;
    if (unit == ZF_UNIT_Y)
        return n + comp_len(q.m);
    if (unit == ZF_UNIT_M)
        return n + comp_len(q.m / 12u) + comp_len(q.m % 12u);
    zf_split_day(q.sec, &days, &sod);
    n += comp_len(days);
    if (!sod && !q.fd)
        return n;
    hms t = split_hms(sod);
    n += 1u + (t.h ? 2u + (t.h >= 10u) : 0u) + (t.m ? 2u + (t.m >= 10u) : 0u);
    if (t.s || q.fd)
        n += 2u + (t.s >= 10u) + (q.fd ? q.fd + 1 : 0u);
    return n;
}
