/* digits.h - decimal digits of integers: counting and writing them.
 *
 * One module for every integer's text in zarrfs (durations, CSV indices,
 * .info).  Digits are made eight at a time in a register (SWAR) on
 * little-endian machines, else with a two-digit table; no snprintf.  Writers
 * put digits at a caller pointer (capacity is the caller's: at most 20 bytes
 * for 64 bits, 39 for 128) and return the end. */
#ifndef ZF_DIGITS_H
#define ZF_DIGITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

__extension__ typedef unsigned __int128 zf_u128;
__extension__ typedef __int128 zf_i128;

#define ZF_P19 10000000000000000000ull

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

/* Sum of the decimal digit counts of every integer in [a, b). */
static inline uint64_t zf_digit_sum(uint64_t a, uint64_t b)
{
    uint64_t sum = b > a ? b - a : 0, p = 10;
    for (int k = 1; k < 20 && p < b; k++, p *= 10) /* each x >= 10^k has a digit more */
        sum += b - (a > p ? a : p);
    return sum;
}

/* Write v in decimal at out (no NUL); returns the number of bytes written. */
size_t zf_u64_text(uint64_t v, char *out);

#endif
