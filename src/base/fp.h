/* fp.h - fingerprints: what a cached result depends on, hashed to 128 bits. */
#ifndef ZF_FP_H
#define ZF_FP_H

#include <stddef.h>
#include <stdint.h>

/* A 128-bit fingerprint being accumulated. */
typedef struct zf_fp {
    uint64_t a, b;
} zf_fp;

/* Start a fingerprint. */
void zf_fp_init(zf_fp *fp);

/* Mix n bytes into the fingerprint. */
void zf_fp_add(zf_fp *fp, const void *data, size_t n);

#endif
