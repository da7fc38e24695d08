/* duration_impl.h - internals shared by duration.c and duration_simd.c: the
 * exact arithmetic (exact_impl.h), the AVX-512 runs and their switch. */
#ifndef ZF_DURATION_IMPL_H
#define ZF_DURATION_IMPL_H

#include <stdint.h>

#include "exact_impl.h"
#include "text/duration.h"

/* ---- AVX-512 runs (duration_simd.c), used when the CPU has them ------- */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(ZF_NO_SIMD)
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
