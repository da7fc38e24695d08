/* exact_impl.h - private to text/: the exact arithmetic every duration text
 * is built from (duration.c, duration_iso.c, duration_simd.c), and the ISO
 * 8601 and decimal-seconds texts built on it alone (duration_iso.c; which
 * therefore needs nothing of the formatter in duration.c).
 *
 * Exact arithmetic: a value v with scale S is n = v * S units, |n| < 2^94,
 * held in 128 bits; a magnitude is split into whole seconds (128-bit, even
 * weeks or years fit) and attoseconds (< 10^18).  When the magnitude fits in
 * 64 bits every division is by a constant on 64-bit integers.  Digits are
 * made eight at a time in a register (SWAR) on little-endian machines, else
 * with a two-digit table; no snprintf. */
#ifndef ZF_EXACT_IMPL_H
#define ZF_EXACT_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/digits.h"
#include "text/units.h"

#define ZF_AS_PER_S 1000000000000000000ull /* attoseconds per second */
#define ZF_S_PER_DAY 86400u

/* For the per-value helpers of the formatters: inlined whatever the
 * compiler's heuristics say, so that constant units fold into them. */
#define ZF_INLINE static inline __attribute__((always_inline))

/* ---- splitting a magnitude --------------------------------------------- */

typedef struct zf_secs {
    zf_u128 sec;   /* whole seconds */
    uint64_t frac; /* attoseconds, < 10^18 */
    uint64_t sub;  /* the same fraction in units of 10^-exp s */
    unsigned exp;  /* 0 (no fraction) or 3..18 */
} zf_secs;

/* x units of 10^-e s, with p = 10^e and mul = 10^(18-e) constants. */
static inline void zf_sub64(uint64_t x, uint64_t p, uint64_t mul, unsigned e, zf_secs *o)
{
    uint64_t q = x / p;
    o->sec = q;
    o->sub = x - q * p;
    o->frac = o->sub * mul;
    o->exp = e;
}

/* Split a magnitude m in unit u (not generic) into seconds and a fraction. */
static inline void zf_split_secs(zf_unit u, zf_u128 m, zf_secs *o)
{
    if (!(m >> 64)) {
        uint64_t x = (uint64_t)m;
        switch (u) {
        case ZF_UNIT_ms: zf_sub64(x, 1000ull, 1000000000000000ull, 3, o); return;
        case ZF_UNIT_us: zf_sub64(x, 1000000ull, 1000000000000ull, 6, o); return;
        case ZF_UNIT_ns: zf_sub64(x, 1000000000ull, 1000000000ull, 9, o); return;
        case ZF_UNIT_ps: zf_sub64(x, 1000000000000ull, 1000000ull, 12, o); return;
        case ZF_UNIT_fs: zf_sub64(x, 1000000000000000ull, 1000ull, 15, o); return;
        case ZF_UNIT_as: zf_sub64(x, ZF_AS_PER_S, 1ull, 18, o); return;
        default: break;
        }
    }
    unsigned e = zf_units[u].exp;
    o->exp = e;
    if (e) {
        zf_u128 q = m / zf_p10[e];
        o->sec = q;
        o->sub = (uint64_t)(m - q * zf_p10[e]);
        o->frac = o->sub * zf_p10[18 - e];
    } else {
        o->sec = m * zf_units[u].secs;
        o->sub = o->frac = 0;
    }
}

/* Split whole seconds into days and seconds of the day. */
static inline void zf_split_day(zf_u128 sec, zf_u128 *days, uint32_t *sod)
{
    if (!(sec >> 64)) {
        uint64_t s = (uint64_t)sec, d = s / ZF_S_PER_DAY;
        *days = d;
        *sod = (uint32_t)(s - d * ZF_S_PER_DAY);
    } else {
        zf_u128 d = sec / ZF_S_PER_DAY;
        *days = d;
        *sod = (uint32_t)(sec - d * ZF_S_PER_DAY);
    }
}

/* |v * scale| and its sign. */
static inline zf_u128 zf_magnitude(int64_t v, uint32_t scale, int *neg)
{
    zf_i128 n = (zf_i128)v * scale;
    *neg = n < 0;
    return *neg ? -(zf_u128)n : (zf_u128)n;
}

/* ---- iso and seconds (duration_iso.c): v in unit (not generic) times
 * scale, not NaT ---- */

/* ISO 8601 text of v; returns its length. */
size_t zf_iso_text(zf_unit unit, uint32_t scale, int64_t v, char *out);
/* Length of the ISO 8601 text of v. */
size_t zf_iso_len(zf_unit unit, uint32_t scale, int64_t v);
/* Exact decimal seconds of v; returns its length. */
size_t zf_seconds_text(zf_unit unit, uint32_t scale, int64_t v, char *out);
/* Length of the exact decimal seconds of v. */
size_t zf_seconds_len(zf_unit unit, uint32_t scale, int64_t v);

#endif
