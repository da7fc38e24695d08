/* convert_impl.h - the fast loops of the common CF encodings (private to
 * src/chunk and the white-box unit tests).
 *
 * convert.c decides whether a chunk takes these loops and with what
 * constants; they compute exactly what its element-by-element rules compute,
 * many elements at a time, in place.  Where an element is beyond int64 ticks
 * they stop: every element before the index they return is converted, none
 * from it on, and the failing element is at or after it (it starts the
 * block of ZF_FAST_BLOCK, the group of eight, or is the element itself);
 * convert.c's own loops convert the rest and name the element. */
#ifndef ZF_CONVERT_IMPL_H
#define ZF_CONVERT_IMPL_H

#include <stdint.h>

/* elements per block of the portable loops */
#define ZF_FAST_BLOCK 512

/* the constants of one chunk's conversion */
typedef struct zf_fast {
    int64_t mult;      /* ticks per count after scaling (>= 1) */
    int64_t mask_i[2]; /* int64: values shown as NaT besides INT64_MIN (unused: INT64_MIN) */
    double mask_f[2];  /* float64: values shown as NaT besides NaN (unused: NaN) */
    double factor;     /* float64: seconds per stored unit for D, h, m (else 1.0) */
    int steps;         /* float64: times every count is multiplied by 1000 (0..3) */
} zf_fast;

/* int64 counts (INT64_MIN and mask_i are NaT) times f->mult, in place over
 * the n elements at v (8 bytes each, machine order).  Returns n, or where it
 * stopped (above) at a count whose ticks overflow int64. */
uint64_t zf_fast_i64(void *v, uint64_t n, const zf_fast *f);

/* The most x1000 steps (at most max) the float64 counts at v, each times
 * f->factor, need to be whole (xarray's _check_higher_resolution over one
 * block; NaN, infinities and masked values need none). */
int zf_fast_f64_steps(const void *v, uint64_t n, const zf_fast *f, int max);

/* float64 counts (NaN and mask_f are NaT) times f->factor, times 1000
 * f->steps times, truncated to int64, times f->mult, in place over the n
 * elements at v.  Returns n, or where it stopped (above) at a value beyond
 * int64 ticks (an infinity included). */
uint64_t zf_fast_f64(void *v, uint64_t n, const zf_fast *f);

/* Use the AVX-512 loops when the CPU has them (on = 1, the default unless
 * the environment sets ZARRFS_NO_SIMD) or never (on = 0); returns whether
 * they are used now.  For tests and benchmarks: not while converting. */
int zf_fast_simd(int on);

#endif
