/* fp.c - a 128-bit FNV-style fingerprint (not cryptographic: a cache key). */
#include "base/fp.h"

void zf_fp_init(zf_fp *fp)
{
    fp->a = 0xcbf29ce484222325ull;
    fp->b = 0x84222325cbf29ce4ull;
}

void zf_fp_add(zf_fp *fp, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        fp->a = (fp->a ^ p[i]) * 0x100000001b3ull;
        fp->b = (fp->b ^ p[i]) * 0x9E3779B97F4A7C15ull;
        fp->b ^= fp->b >> 29;
    }
    /* separate fields so ("ab","c") != ("a","bc") */
    fp->a = (fp->a ^ n) * 0x100000001b3ull;
    fp->b = (fp->b ^ n) * 0x9E3779B97F4A7C15ull;
}
