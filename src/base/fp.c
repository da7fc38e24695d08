/* fp.c - a 128-bit fingerprint (MurmurHash3 x64-128's block mixing over a
 * running state; not cryptographic: a cache key).  Sixteen bytes a step:
 * label tables of 10^7 fields are hashed at memory speed. */
#include "base/fp.h"

#include <string.h>

#define C1 0x87c37b91114253d5ull
#define C2 0x4cf5ad432745937full

static inline uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

static inline uint64_t fmix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ k >> 33;
}

/* mix one 16-byte block (k1, k2) into the state */
static inline void mix_block(uint64_t *h1, uint64_t *h2, uint64_t k1, uint64_t k2)
{
    *h1 ^= rotl(k1 * C1, 31) * C2;
    *h1 = (rotl(*h1, 27) + *h2) * 5 + 0x52dce729;
    *h2 ^= rotl(k2 * C2, 33) * C1;
    *h2 = (rotl(*h2, 31) + *h1) * 5 + 0x38495ab5;
}

void zf_fp_init(zf_fp *fp)
{
    fp->a = 0xcbf29ce484222325ull;
    fp->b = 0x84222325cbf29ce4ull;
}

void zf_fp_add(zf_fp *fp, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h1 = fp->a, h2 = fp->b, k[2];
    size_t i = 0;
    for (; n - i >= 16; i += 16) {
        memcpy(k, p + i, 16);
        mix_block(&h1, &h2, k[0], k[1]);
    }
    unsigned char tail[16] = {0};
    if (i < n) /* (never p + 0 of a NULL p: an empty field may have none) */
        memcpy(tail, p + i, n - i);
    memcpy(k, tail, 16);
    /* the length closes the field, so ("ab","c") != ("a","bc") */
    mix_block(&h1, &h2, k[0] ^ (uint64_t)n, k[1] ^ fmix((uint64_t)(n - i) + 1));
    fp->a = h1 ^ fmix(h2);
    fp->b = h2 ^ fmix(h1);
}
