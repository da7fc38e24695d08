/* half.h - IEEE 754 binary16 (numpy's float16) to and from float, exactly
 * as numpy converts them: widening is exact, narrowing rounds to the
 * nearest (ties to even), beyond the largest half (65504) to infinity. */
#ifndef ZF_HALF_H
#define ZF_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The float holding the half with bits h (exact). */
static inline float zf_half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (uint32_t)(h >> 10) & 0x1f, m = h & 0x3ffu, x;
    if (e == 0) { /* zero or subnormal: m * 2^-24 */
        float f = (float)m * 0x1p-24f;
        return s ? -f : f;
    }
    x = e == 0x1f ? s | 0x7f800000u | m << 13 : s | (e + 112) << 23 | m << 13;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* The bits of the half nearest to f. */
static inline uint16_t zf_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t s = (uint16_t)(x >> 16 & 0x8000u);
    x &= 0x7fffffffu;
    if (x > 0x7f800000u)
        return s | 0x7e00u; /* NaN */
    if (x >= 0x477ff000u) /* 65520 and up (65504 + half a step) */
        return s | 0x7c00u;
    if (x < 0x38800000u) { /* below 2^-14: a subnormal (or the smallest normal) */
        float a;
        memcpy(&a, &x, 4);
        return (uint16_t)(s | (uint16_t)lrintf(a * 0x1p24f));
    }
    uint32_t h = (x >> 23) - 112, m = x & 0x7fffffu, rem = m & 0x1fffu;
    h = h << 10 | m >> 13;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++; /* a carry into the exponent is right */
    return (uint16_t)(s | h);
}

/* f rounded to the nearest half (numpy's float16 arithmetic: a product of
 * halves computed in float is exact, then rounded once). */
static inline float zf_half_round(float f)
{
    return zf_half_to_float(zf_float_to_half(f));
}

#endif
