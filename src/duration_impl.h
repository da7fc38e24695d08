/* duration_impl.h - internals shared by duration.c and duration_iso.c.
 *
 * Exact arithmetic: a value v with scale S is n = v * S units, |n| < 2^94,
 * held in 128 bits; a magnitude is split into whole seconds (128-bit, even
 * weeks or years fit) and attoseconds (< 10^18).  When the magnitude fits in
 * 64 bits every division is by a constant on 64-bit integers.  Digits are
 * made eight at a time in a register (SWAR) on little-endian machines, else
 * with a two-digit table; no snprintf. */
#ifndef ZF_DURATION_IMPL_H
#define ZF_DURATION_IMPL_H

#include <stdint.h>
#include <string.h>

#include "duration.h"

__extension__ typedef unsigned __int128 zf_u128;
__extension__ typedef __int128 zf_i128;

#define ZF_AS_PER_S 1000000000000000000ull /* attoseconds per second */
#define ZF_S_PER_DAY 86400u
#define ZF_P19 10000000000000000000ull

typedef struct zf_unit_info {
    const char *name; /* identifier as in metadata */
    const char *word; /* numpy word, with its leading space */
    uint8_t word_len;
    uint8_t exp;   /* sub-second unit: 10^exp per second, else 0 */
    uint32_t secs; /* other units: seconds per unit (Y and M as numpy) */
} zf_unit_info;

extern const zf_unit_info zf_units[ZF_UNIT_GENERIC + 1];
/* For the per-value helpers of the formatters: inlined whatever the
 * compiler's heuristics say, so that constant units fold into them. */
#define ZF_INLINE static inline __attribute__((always_inline))

extern const char zf_dig2[201];    /* "00".."99" */
extern const uint64_t zf_p10[20];  /* 10^0..10^19 */

/* ---- digits ------------------------------------------------------------ */

/* Number of decimal digits of x (1 for 0): a log2 estimate and one comparison. */
static inline unsigned zf_ndig64(uint64_t x)
{
    x |= 1u; /* same digit count, and 1 for 0 */
    unsigned t = ((64u - (unsigned)__builtin_clzll(x)) * 1233u) >> 12; /* <= 19 */
    return t + 1u - (x < zf_p10[t]);
}

/* Number of decimal digits of a 128-bit x. */
static inline unsigned zf_ndig128(zf_u128 x)
{
    if (!(x >> 64))
        return zf_ndig64((uint64_t)x);
    unsigned n = 20; /* x >= 2^64 > 10^19 */
    zf_u128 p = (zf_u128)ZF_P19 * 10u;
    while (n < 39 && x >= p) {
        p *= 10u;
        n++;
    }
    return n;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ZF_LITTLE_ENDIAN 1
/* Eight digits of x < 10^8 as a word in memory order (SWAR, no table). */
static inline uint64_t zf_digits8(uint32_t x)
{
    uint64_t hi = x / 10000u, lo = x - hi * 10000u;
    uint64_t merged = hi | lo << 32;
    uint64_t top = ((merged * 10486u) >> 20) & (0x7Full << 32 | 0x7Full); /* /100 */
    uint64_t bot = merged - 100u * top;
    uint64_t hundreds = (bot << 16) + top;
    uint64_t tens = ((hundreds * 103u) >> 10) & 0x000F000F000F000Full; /* /10 */
    tens += (hundreds - 10u * tens) << 8;
    return tens + 0x3030303030303030ull;
}
#else
#define ZF_LITTLE_ENDIAN 0
#endif

/* Exactly 2, 4, 8 or 9 digits of x at p (x below the power). */
static inline void zf_put2(char *p, uint32_t x) { memcpy(p, zf_dig2 + 2 * x, 2); }

static inline void zf_put4(char *p, uint32_t x)
{
    uint32_t a = x / 100u;
    zf_put2(p, a);
    zf_put2(p + 2, x - a * 100u);
}

static inline void zf_put8(char *p, uint32_t x)
{
#if ZF_LITTLE_ENDIAN
    uint64_t w = zf_digits8(x);
    memcpy(p, &w, 8);
#else
    uint32_t a = x / 10000u;
    zf_put4(p, a);
    zf_put4(p + 4, x - a * 10000u);
#endif
}

static inline void zf_put9(char *p, uint32_t x)
{
    uint32_t a = x / 100000000u;
    *p = (char)('0' + a);
    zf_put8(p + 1, x - a * 100000000u);
}

/* Exactly w digits of x (x < 10^w, w <= 19) at p. */
static inline void zf_put_fixed(char *p, uint64_t x, unsigned w)
{
    char *end = p + w;
    for (; w >= 8; w -= 8, end -= 8) {
        uint64_t q = x / 100000000u;
        zf_put8(end - 8, (uint32_t)(x - q * 100000000u));
        x = q;
    }
    uint32_t y = (uint32_t)x;
    for (; w >= 2; w -= 2, end -= 2) {
        uint32_t q = y / 100u;
        zf_put2(end - 2, y - q * 100u);
        y = q;
    }
    if (w)
        end[-1] = (char)('0' + y);
}

/* 1 to 4 digits of x < 10^4, no leading zeros; returns the end. */
static inline char *zf_put_upto4(char *p, uint32_t x)
{
    if (x < 100u) {
        if (x < 10u) {
            *p = (char)('0' + x);
            return p + 1;
        }
        zf_put2(p, x);
        return p + 2;
    }
    if (x < 1000u) {
        uint32_t a = x / 100u;
        *p = (char)('0' + a);
        zf_put2(p + 1, x - a * 100u);
        return p + 3;
    }
    zf_put4(p, x);
    return p + 4;
}

/* 1 to 8 digits of x < 10^8, no leading zeros; returns the end. */
static inline char *zf_put_upto8(char *p, uint32_t x)
{
    if (x < 10000u)
        return zf_put_upto4(p, x);
    uint32_t a = x / 10000u;
    p = zf_put_upto4(p, a);
    zf_put4(p, x - a * 10000u);
    return p + 4;
}

/* The digits of x at p; returns the end. */
static inline char *zf_put_u64(char *p, uint64_t x)
{
    if (x < 100000000u)
        return zf_put_upto8(p, (uint32_t)x);
    if (x < 10000000000000000ull) {
        uint64_t a = x / 100000000u;
        p = zf_put_upto8(p, (uint32_t)a);
        zf_put8(p, (uint32_t)(x - a * 100000000u));
        return p + 8;
    }
    uint64_t a = x / 10000000000000000ull, r = x - a * 10000000000000000ull;
    uint64_t b = r / 100000000u;
    p = zf_put_upto4(p, (uint32_t)a); /* a <= 1844 */
    zf_put8(p, (uint32_t)b);
    zf_put8(p + 8, (uint32_t)(r - b * 100000000u));
    return p + 16;
}

/* The digits of x >= 2^64 at p; returns the end. */
char *zf_put_u128_big(char *p, zf_u128 x);

/* The digits of a 128-bit x at p; returns the end. */
static inline char *zf_put_u128(char *p, zf_u128 x)
{
    return x >> 64 ? zf_put_u128_big(p, x) : zf_put_u64(p, (uint64_t)x);
}

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

/* ---- iso and seconds (duration_iso.c); unit not generic, v not NaT ------ */

/* ISO 8601 text of v; returns its length. */
size_t zf_iso_text(const zf_fmt *f, int64_t v, char *out);
/* Length of the ISO 8601 text of v. */
size_t zf_iso_len(const zf_fmt *f, int64_t v);
/* Exact decimal seconds of v; returns its length. */
size_t zf_seconds_text(const zf_fmt *f, int64_t v, char *out);
/* Length of the exact decimal seconds of v. */
size_t zf_seconds_len(const zf_fmt *f, int64_t v);

/* ---- AVX-512 runs (duration_simd.c), used when the CPU has them ------- */

#if defined(__x86_64__) && defined(__GNUC__)
#define ZF_HAVE_AVX512_PD 1
/* Whether this CPU (and its OS) runs the AVX-512 pandas runs. */
int zf_avx512_pd_supported(void);
/* zf_fmt_lines for pandas, scale 1, unit s..ns: whole groups of eight values
 * until a group it does not do (a value beyond 99999 days either way, a NaT
 * text that is long or not ASCII) or until out has less than 320 bytes left. */
zf_lines zf_pd_lines_avx512(const zf_fmt *f, const int64_t *v, size_t n, char *out,
                            size_t cap);
/* zf_fmt_len_sum for the same, over the longest prefix of whole groups it
 * does; *done gets the prefix's length. */
uint64_t zf_pd_len_sum_avx512(const zf_fmt *f, const int64_t *v, size_t n, size_t *done);
#else /* no vector runs: simd_on stays 0 and these are never called */
#define ZF_HAVE_AVX512_PD 0
static inline int zf_avx512_pd_supported(void) { return 0; }
static inline zf_lines zf_pd_lines_avx512(const zf_fmt *f, const int64_t *v, size_t n,
                                          char *out, size_t cap)
{
    zf_lines r = {0, 0, 0};
    (void)f, (void)v, (void)n, (void)out, (void)cap;
    return r;
}
static inline uint64_t zf_pd_len_sum_avx512(const zf_fmt *f, const int64_t *v, size_t n,
                                            size_t *done)
{
    (void)f, (void)v, (void)n;
    *done = 0;
    return 0;
}
#endif

/* Use vector runs when the CPU has them (on = 1, the default unless the
 * environment sets ZARRFS_NO_SIMD) or never (on = 0); returns whether they
 * are used now.  For tests and benchmarks: not while formatting. */
int zf_fmt_simd(int on);

#endif
