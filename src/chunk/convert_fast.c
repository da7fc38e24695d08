/* convert_fast.c - int64 and float64 CF counts to ticks, many at a time.
 *
 * Arithmetic as convert.c's rules (see there): the float64 steps are the
 * same roundings in the same order (built with -ffp-contract=off); the only
 * changes are of form, e.g. int64 products checked against bounds instead of
 * with __builtin_mul_overflow, and the truncation of a float64 by the
 * conversion itself.  The chunk is read and written with memcpy or unaligned
 * vector loads (no aliasing assumptions about the decode buffer).
 *
 *   int64 counts, and the float64 steps scan: branch-free block loops the
 *     compiler vectorises, a block checked and converted into a small array,
 *     then copied over its stored elements (an error leaves it untouched);
 *   float64 counts: AVX-512 intrinsics, eight at a time, each group checked
 *     before it is stored; elsewhere one at a time, the rare cases (NaT,
 *     beyond) behind predictable branches.
 *
 * The block loops are built twice, for any x86-64 and for AVX-512 (F, DQ,
 * VL: 64-bit compares, products and float conversions in vectors); the
 * AVX-512 code is chosen at run time as the formatter chooses its vector runs
 * (ZARRFS_NO_SIMD turns it off). */
#include "chunk/convert_impl.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(ZF_NO_SIMD)
#define HAVE_AVX512 1
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f,avx512dq,avx512vl")))
#else
#define HAVE_AVX512 0
#endif

#define INLINE static inline __attribute__((always_inline))

/* the counts c for which c * m fits in int64 (m >= 1): lo <= c <= hi */
typedef struct bounds {
    int64_t lo, hi;
} bounds;

INLINE bounds bounds_of(int64_t m)
{
    return (bounds){INT64_MIN / m, INT64_MAX / m}; /* C division rounds toward zero: exact bounds */
}

/* c * m in two's complement (only kept where it fits, else replaced by NaT) */
INLINE int64_t times(int64_t c, int64_t m)
{
    return (int64_t)((uint64_t)c * (uint64_t)m); /* GCC and Clang define the narrowing: wraps */
}

/* int64 counts: see zf_fast_i64 */
INLINE uint64_t i64_blocks(void *v, uint64_t n, const zf_fast *f)
{
    const int64_t m0 = f->mask_i[0], m1 = f->mask_i[1], mult = f->mult;
    const bounds b = bounds_of(mult);
    uint8_t *p = v;
    for (uint64_t at = 0; at < n; at += ZF_FAST_BLOCK) {
        uint64_t len = n - at < ZF_FAST_BLOCK ? n - at : ZF_FAST_BLOCK;
        int64_t in[ZF_FAST_BLOCK], out[ZF_FAST_BLOCK];
        int64_t ok = 1;
        memcpy(in, p + at * 8, (size_t)len * 8);
        for (uint64_t i = 0; i < len; i++) {
            int64_t c = in[i];
            int64_t nat = (c == INT64_MIN) | (c == m0) | (c == m1);
            ok &= nat | ((c >= b.lo) & (c <= b.hi));
            out[i] = nat ? INT64_MIN : times(c, mult);
        }
        if (!ok)
            return at;
        memcpy(p + at * 8, out, (size_t)len * 8);
    }
    return n;
}

/* is a (>= 0, or NaN) not a whole number?  Below 2^52, adding and taking
 * away 2^52 rounds it to a whole number (exactly: the sum has a unit in its
 * last place of 1), which equals a only if a was whole; from 2^52 up every
 * double is whole; NaN and infinity compare false (xarray: NaN % 1 > 0 is
 * False) */
INLINE int64_t fractional(double a)
{
    return (a < 0x1p52) & ((a + 0x1p52) - 0x1p52 != a);
}

/* float64 counts: see zf_fast_f64_steps */
INLINE int f64_steps_blocks(const void *v, uint64_t n, const zf_fast *f, int max)
{
    const double m0 = f->mask_f[0], m1 = f->mask_f[1], factor = f->factor;
    const uint8_t *p = v;
    int most = 0;
    for (uint64_t at = 0; at < n && most < max; at += ZF_FAST_BLOCK) {
        uint64_t len = n - at < ZF_FAST_BLOCK ? n - at : ZF_FAST_BLOCK;
        int64_t any0 = 0, any1 = 0, any2 = 0; /* a count not whole after 0, 1, 2 steps */
        double in[ZF_FAST_BLOCK];
        memcpy(in, p + at * 8, (size_t)len * 8);
        for (uint64_t i = 0; i < len; i++) {
            double x = in[i];
            int64_t keep = !((x == m0) | (x == m1));
            double y = x * factor;
            any0 |= keep & fractional(fabs(y));
            y *= 1000.0;
            any1 |= keep & fractional(fabs(y));
            y *= 1000.0;
            any2 |= keep & fractional(fabs(y));
        }
        /* a whole count stays whole when multiplied by 1000, so any2 <= any1 <= any0 */
        int s = (int)(any0 + any1 + any2);
        s = s < max ? s : max;
        most = s > most ? s : most;
    }
    return most;
}

/* the loops for one target: NAME_i64, NAME_steps */
#define INSTANCES(NAME, ATTR)                                                            \
    ATTR static uint64_t NAME##_i64(void *v, uint64_t n, const zf_fast *f)               \
    {                                                                                    \
        return i64_blocks(v, n, f);                                                      \
    }                                                                                    \
    ATTR static int NAME##_steps(const void *v, uint64_t n, const zf_fast *f, int max)   \
    {                                                                                    \
        return f64_steps_blocks(v, n, f, max);                                           \
    }

/* float64 counts (see zf_fast_f64) one at a time, for CPUs without the
 * AVX-512 loop: the rare cases (NaT, beyond) behind predictable branches;
 * stops at the first value beyond int64 ticks, everything before it done */
static uint64_t any_f64(void *v, uint64_t n, const zf_fast *f)
{
    const double m0 = f->mask_f[0], m1 = f->mask_f[1], factor = f->factor;
    const int64_t mult = f->mult;
    const int steps = f->steps;
    const bounds b = bounds_of(mult);
    uint8_t *p = v;
    for (uint64_t i = 0; i < n; i++) {
        double x;
        int64_t t = INT64_MIN;
        memcpy(&x, p + i * 8, 8);
        double y = x * factor;
        for (int k = 0; k < steps; k++)
            y *= 1000.0;
        if (!(x != x || x == m0 || x == m1)) {
            if (!(y >= -0x1p63 && y < 0x1p63))
                return i;
            int64_t c = (int64_t)y; /* truncates, as astype(int64) */
            if (c != INT64_MIN) {
                if (c < b.lo || c > b.hi)
                    return i;
                t = c * mult;
            }
        }
        memcpy(p + i * 8, &t, 8);
    }
    return n;
}

INSTANCES(any, )

#if HAVE_AVX512
INSTANCES(avx512, AVX512)

/* float64 counts (see zf_fast_f64) in AVX-512 intrinsics, eight at a time:
 * a group of eight is checked before it is stored, so everything before the
 * first group holding a value beyond int64 ticks is converted and nothing
 * from it on (VCVTTPD2QQ gives 2^63 for NaN and out-of-range values: defined,
 * and never kept) */
AVX512 static uint64_t avx512_f64_groups(void *v, uint64_t n, const zf_fast *f)
{
    const __m512d m0 = _mm512_set1_pd(f->mask_f[0]), m1 = _mm512_set1_pd(f->mask_f[1]);
    const __m512d factor = _mm512_set1_pd(f->factor), k1000 = _mm512_set1_pd(1000.0);
    const __m512d lo_d = _mm512_set1_pd(-0x1p63), hi_d = _mm512_set1_pd(0x1p63);
    const bounds b = bounds_of(f->mult);
    const __m512i nat = _mm512_set1_epi64(INT64_MIN), mult = _mm512_set1_epi64(f->mult);
    const __m512i lo = _mm512_set1_epi64(b.lo), hi = _mm512_set1_epi64(b.hi);
    const int steps = f->steps;
    uint8_t *p = v;
    for (uint64_t i = 0; i < n; i += 8) {
        __mmask8 lanes = n - i >= 8 ? 0xFF : (__mmask8)((1u << (n - i)) - 1);
        __m512d x = _mm512_maskz_loadu_pd(lanes, p + i * 8);
        __m512d y = _mm512_mul_pd(x, factor);
        for (int k = 0; k < steps; k++)
            y = _mm512_mul_pd(y, k1000);
        __mmask8 inside = _mm512_cmp_pd_mask(y, lo_d, _CMP_GE_OQ) &
                          _mm512_cmp_pd_mask(y, hi_d, _CMP_LT_OQ);
        __m512i c = _mm512_cvttpd_epi64(y);
        __mmask8 isnat = _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q) |
                         _mm512_cmp_pd_mask(x, m0, _CMP_EQ_OQ) |
                         _mm512_cmp_pd_mask(x, m1, _CMP_EQ_OQ) |
                         (inside & _mm512_cmpeq_epi64_mask(c, nat));
        __mmask8 fits = inside & _mm512_cmpge_epi64_mask(c, lo) & _mm512_cmple_epi64_mask(c, hi);
        if ((__mmask8)(lanes & ~(isnat | fits)))
            return i;
        __m512i t = _mm512_mask_mullo_epi64(nat, (__mmask8)~isnat, c, mult);
        _mm512_mask_storeu_epi64(p + i * 8, lanes, t);
    }
    return n;
}

/* does this CPU (and its OS) run the AVX-512 instances? */
static int avx512_supported(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
}
#else
static int avx512_supported(void)
{
    return 0;
}
#endif

static int simd_on; /* the AVX-512 instances are used */
static pthread_once_t simd_once = PTHREAD_ONCE_INIT;

static void simd_init(void)
{
    const char *no = getenv("ZARRFS_NO_SIMD");
    simd_on = !(no && *no) && avx512_supported();
}

static int use_simd(void)
{
    pthread_once(&simd_once, simd_init);
    return __atomic_load_n(&simd_on, __ATOMIC_RELAXED);
}

int zf_fast_simd(int on)
{
    pthread_once(&simd_once, simd_init);
    __atomic_store_n(&simd_on, on && avx512_supported(), __ATOMIC_RELAXED);
    return use_simd();
}

uint64_t zf_fast_i64(void *v, uint64_t n, const zf_fast *f)
{
    if (f->mult == 1 && f->mask_i[0] == INT64_MIN && f->mask_i[1] == INT64_MIN)
        return n; /* the counts are the ticks (INT64_MIN is NaT in both) */
#if HAVE_AVX512
    if (use_simd())
        return avx512_i64(v, n, f);
#endif
    return any_i64(v, n, f);
}

int zf_fast_f64_steps(const void *v, uint64_t n, const zf_fast *f, int max)
{
#if HAVE_AVX512
    if (use_simd())
        return avx512_steps(v, n, f, max);
#endif
    return any_steps(v, n, f, max);
}

uint64_t zf_fast_f64(void *v, uint64_t n, const zf_fast *f)
{
#if HAVE_AVX512
    if (use_simd())
        return avx512_f64_groups(v, n, f);
#endif
    return any_f64(v, n, f);
}
