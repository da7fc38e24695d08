/* duration_simd.c - pandas text of runs of values, eight at a time, with
 * AVX-512 (F, DQ, BW, VBMI2), chosen at run time (duration.c dispatches).
 *
 * A group of eight values is done here when each is NaT (and the NaT text
 * is ASCII and fits a line of 32 bytes) or lies within 99999 days either side
 * of zero; any other group is left to the scalar formatter.  The value in
 * nanoseconds fits int64; floor days come from a double-precision estimate
 * and one exact int64 correction each way, and the remainder (below 2^47)
 * splits exactly in double precision into seconds and nanoseconds.  Each
 * value becomes a 32-byte template
 *
 *     "-DDDDD days +hh:mm:ss.fffffffff\n"
 *
 * in which the bytes a value does without (no sign, fewer day digits, a
 * shorter or no fraction) carry the top bit; VPCOMPRESSB packs the other
 * bytes of two templates per register and each packed pair is stored whole,
 * the next one overwriting its tail; the keep-masks come from the top bits
 * (VPMOVB2M), not through memory. */
#include "duration_impl.h"

#if ZF_HAVE_AVX512_PD
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512dq,avx512bw,avx512vbmi2,popcnt")))
#define TEMPLATE 32u             /* bytes of one template */
#define GROUP_ROOM (8u * TEMPLATE + 64u) /* output room a group may touch */
#define DAY_NS 86400000000000ll
#define MAX_DAYS 100000 /* days from -99999 to 99999 (floor): at most five digits */

/* The top bit marks a byte to drop; per template word, the bytes dropped
 * when a value is not negative ('-', '+'), has fewer than five day digits, no
 * fraction, whole microseconds. */
#define DROP 0x80ull
#define DROP_MINUS DROP                 /* '-', in word 0 */
#define DROP_DIGIT(i) (DROP << (8 * (i))) /* day digit i (1..4 of 5), in word 0 */
#define DROP_PLUS (DROP << 32)          /* '+', in word 1 */
#define DROP_WHOLE2 0x8080800000000000ull /* ".f", in word 2 */
#define DROP_WHOLE3 0x80808080ull         /* the next four digits, in word 3 */
#define DROP_US3 (0x808080ull << 32)      /* the last three digits */
/* "-     d", "ays +", ".", '\n' as little-endian words (digits and time added) */
#define Q0_TEXT ((uint64_t)'-' | (uint64_t)' ' << 48 | (uint64_t)'d' << 56)
#define Q1_TEXT                                                                              \
    ((uint64_t)'a' | (uint64_t)'y' << 8 | (uint64_t)'s' << 16 | (uint64_t)' ' << 24 |        \
     (uint64_t)'+' << 32)
#define Q2_TEXT ((uint64_t)'.' << 40)
#define Q3_TEXT ((uint64_t)'\n' << 56)

typedef struct simd_ctx {
    __m512i to_ns;     /* nanoseconds per unit */
    __m512i lo, hi;    /* values in [lo, hi) are in range */
    int nat_ok;        /* NaT text + '\n' fits a template */
    __m512i nat_q[4];  /* the NaT line, as the four words of a template */
} simd_ctx;

/* Set up for f: pandas, scale 1, unit s..ns. */
TARGET static void ctx_init(simd_ctx *c, const zf_fmt *f)
{
    static const uint32_t per_s[] = {[ZF_UNIT_s] = 1u, [ZF_UNIT_ms] = 1000u,
                                     [ZF_UNIT_us] = 1000000u, [ZF_UNIT_ns] = 1000000000u};
    int64_t day = (int64_t)per_s[f->unit] * ZF_S_PER_DAY;
    uint8_t nat[TEMPLATE] = {0};
    c->to_ns = _mm512_set1_epi64(1000000000 / per_s[f->unit]);
    c->lo = _mm512_set1_epi64(-(MAX_DAYS - 1) * day);
    c->hi = _mm512_set1_epi64(MAX_DAYS * day);
    /* NaT lanes need a line within a template and ASCII text (top bit clear) */
    c->nat_ok = f->text.nat_len + 1u <= TEMPLATE;
    for (size_t i = 0; i < f->text.nat_len; i++)
        c->nat_ok &= (unsigned char)f->text.nat[i] < DROP;
    memset(nat, (int)DROP, sizeof nat);
    if (c->nat_ok) {
        memcpy(nat, f->text.nat, f->text.nat_len);
        nat[f->text.nat_len] = '\n';
    }
    for (int i = 0; i < 4; i++) {
        uint64_t w;
        memcpy(&w, nat + 8 * i, 8);
        c->nat_q[i] = _mm512_set1_epi64((long long)w);
    }
}

/* Eight digits of each x < 10^8 as a word in memory order (zf_digits8, per lane). */
TARGET static inline __m512i digits8(__m512i x)
{
    const __m512i k4 = _mm512_set1_epi64(10000);
    __m512i hi = _mm512_srli_epi64(_mm512_mul_epu32(x, _mm512_set1_epi64(109951163)), 40);
    __m512i lo = _mm512_sub_epi64(x, _mm512_mul_epu32(hi, k4));
    __m512i merged = _mm512_or_si512(hi, _mm512_slli_epi64(lo, 32));
    __m512i top = _mm512_and_si512(
        _mm512_srli_epi64(_mm512_mullo_epi64(merged, _mm512_set1_epi64(10486)), 20),
        _mm512_set1_epi64(0x0000007F0000007Fll));
    __m512i bot = _mm512_sub_epi64(merged, _mm512_mullo_epi64(top, _mm512_set1_epi64(100)));
    __m512i hundreds = _mm512_add_epi64(_mm512_slli_epi64(bot, 16), top);
    __m512i tens = _mm512_and_si512(
        _mm512_srli_epi64(_mm512_mullo_epi64(hundreds, _mm512_set1_epi64(103)), 10),
        _mm512_set1_epi64(0x000F000F000F000Fll));
    __m512i ones = _mm512_sub_epi64(hundreds, _mm512_mullo_epi64(tens, _mm512_set1_epi64(10)));
    tens = _mm512_add_epi64(tens, _mm512_slli_epi64(ones, 8));
    return _mm512_add_epi64(tens, _mm512_set1_epi64(0x3030303030303030ll));
}

/* floor(x / d) and x - d * floor(x / d) for integers x (|x| < 2^53), d > 0. */
TARGET static inline __m512d floor_div(__m512d x, double d, __m512d *rem)
{
    const __m512d vd = _mm512_set1_pd(d);
    __m512d q = _mm512_roundscale_pd(_mm512_mul_pd(x, _mm512_set1_pd(1.0 / d)),
                                     _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fnmadd_pd(q, vd, x); /* exact: q * d and r are integers < 2^53 */
    __mmask8 low = _mm512_cmp_pd_mask(r, _mm512_setzero_pd(), _CMP_LT_OQ);
    __mmask8 high = _mm512_cmp_pd_mask(r, vd, _CMP_GE_OQ);
    q = _mm512_mask_sub_pd(q, low, q, _mm512_set1_pd(1.0));
    r = _mm512_mask_add_pd(r, low, r, vd);
    q = _mm512_mask_add_pd(q, high, q, _mm512_set1_pd(1.0));
    r = _mm512_mask_sub_pd(r, high, r, vd);
    *rem = r;
    return q;
}

/* The four words of each lane's template. */
typedef struct group {
    __m512i q[4];
} group;

/* Floor days of eight in-range values (nanoseconds, int64) and the
 * non-negative remainder below a day, exactly. */
TARGET static inline __m512i split_days(__m512i ns, __m512i *rem)
{
    const __m512i day = _mm512_set1_epi64(DAY_NS);
    __m512d est = _mm512_mul_pd(_mm512_cvtepi64_pd(ns), _mm512_set1_pd(1.0 / (double)DAY_NS));
    __m512i q = _mm512_cvttpd_epi64(
        _mm512_roundscale_pd(est, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    __m512i r = _mm512_sub_epi64(ns, _mm512_mullo_epi64(q, day)); /* off by a day at most */
    __mmask8 low = _mm512_cmplt_epi64_mask(r, _mm512_setzero_si512());
    __mmask8 high = _mm512_cmpge_epi64_mask(r, day);
    q = _mm512_mask_sub_epi64(q, low, q, _mm512_set1_epi64(1));
    r = _mm512_mask_add_epi64(r, low, r, day);
    q = _mm512_mask_add_epi64(q, high, q, _mm512_set1_epi64(1));
    *rem = _mm512_mask_sub_epi64(r, high, r, day);
    return q;
}

/* What the text of eight in-range values is made of. */
typedef struct fields {
    __m512i days;           /* the digits of |days| (eight, leading zeros) */
    __m512i hms;            /* "hh:mm:ss" */
    __m512i a, w;           /* the first nanosecond digit, the other eight as text */
    __mmask8 neg;           /* negative */
    __mmask8 d10, d100, d1000, d10000; /* |days| reaches 10, 100, ... */
    __mmask8 any, sub_us;   /* a fraction; one finer than microseconds */
} fields;

/* The fields of eight in-range values (NaT lanes give garbage). */
TARGET static void split_group(const simd_ctx *c, __m512i v, fields *f)
{
    __m512i rem;
    __m512d rns;
    __m512i d = split_days(_mm512_mullo_epi64(v, c->to_ns), &rem);
    __m512i sod = _mm512_cvttpd_epi64(floor_div(_mm512_cvtepi64_pd(rem), 1e9, &rns));
    __m512i ns = _mm512_cvttpd_epi64(rns);
    f->neg = _mm512_cmplt_epi64_mask(d, _mm512_setzero_si512());
    d = _mm512_abs_epi64(d);
    f->d10 = _mm512_cmpge_epi64_mask(d, _mm512_set1_epi64(10));
    f->d100 = _mm512_cmpge_epi64_mask(d, _mm512_set1_epi64(100));
    if (f->d100) {
        f->d1000 = _mm512_cmpge_epi64_mask(d, _mm512_set1_epi64(1000));
        f->d10000 = _mm512_cmpge_epi64_mask(d, _mm512_set1_epi64(10000));
        f->days = digits8(d);
    } else { /* under 100 days, the usual case: two digits, the word's last two bytes */
        __m512i d1 = _mm512_srli_epi64(_mm512_mul_epu32(d, _mm512_set1_epi64(205)), 11);
        __m512i d0 = _mm512_sub_epi64(d, _mm512_mul_epu32(d1, _mm512_set1_epi64(10)));
        f->d1000 = f->d10000 = 0;
        f->days = _mm512_add_epi64(_mm512_set1_epi64(0x3030303030303030ll),
                                   _mm512_or_si512(_mm512_slli_epi64(d1, 48), _mm512_slli_epi64(d0, 56)));
    }

    __m512i h = _mm512_srli_epi64(_mm512_mul_epu32(sod, _mm512_set1_epi64(1193047)), 32);
    __m512i r = _mm512_sub_epi64(sod, _mm512_mul_epu32(h, _mm512_set1_epi64(3600)));
    __m512i m = _mm512_srli_epi64(_mm512_mul_epu32(r, _mm512_set1_epi64(71582789)), 32);
    __m512i s = _mm512_sub_epi64(r, _mm512_mul_epu32(m, _mm512_set1_epi64(60)));
    __m512i hms = _mm512_add_epi64(_mm512_mul_epu32(h, _mm512_set1_epi64(1000000)),
                                   _mm512_add_epi64(_mm512_mul_epu32(m, _mm512_set1_epi64(1000)), s));
    /* "hh0mm0ss" -> "hh:mm:ss" */
    f->hms = _mm512_add_epi64(digits8(hms), _mm512_set1_epi64(10ll << 16 | 10ll << 40));

    f->a = _mm512_srli_epi64(_mm512_mul_epu32(ns, _mm512_set1_epi64(1441151881)), 57);
    f->w = digits8(_mm512_sub_epi64(ns, _mm512_mul_epu32(f->a, _mm512_set1_epi64(100000000))));
    f->any = _mm512_test_epi64_mask(ns, ns);
    f->sub_us = _mm512_cmpneq_epi64_mask(_mm512_srli_epi64(f->w, 40), _mm512_set1_epi64(0x303030));
}

/* x | bits in the lanes of k. */
TARGET static inline __m512i or_if(__m512i x, __mmask8 k, uint64_t bits)
{
    return _mm512_mask_or_epi64(x, k, x, _mm512_set1_epi64((long long)bits));
}

/* Templates of eight in-range values (NaT lanes are blended in later). */
TARGET static void make_group(const simd_ctx *c, __m512i v, group *g)
{
    fields f;
    split_group(c, v, &f);
    /* "-DDDDD d", "ays +hh:", "mm:ss.ff", "fffffff\n" */
    __m512i q0 = _mm512_or_si512(_mm512_set1_epi64((long long)Q0_TEXT),
                                 _mm512_slli_epi64(_mm512_srli_epi64(f.days, 24), 8));
    __m512i q1 = _mm512_or_si512(_mm512_set1_epi64((long long)Q1_TEXT),
                                 _mm512_slli_epi64(f.hms, 40));
    __m512i q2 = _mm512_or_si512(
        _mm512_or_si512(_mm512_srli_epi64(f.hms, 24), _mm512_set1_epi64((long long)Q2_TEXT)),
        _mm512_or_si512(_mm512_slli_epi64(_mm512_add_epi64(f.a, _mm512_set1_epi64('0')), 48),
                        _mm512_slli_epi64(f.w, 56)));
    __m512i q3 = _mm512_or_si512(_mm512_srli_epi64(f.w, 8), _mm512_set1_epi64((long long)Q3_TEXT));
    __mmask8 pos = (__mmask8)~f.neg, whole = (__mmask8)~f.any;
    q0 = or_if(q0, pos, DROP_MINUS);
    q0 = or_if(q0, (__mmask8)~f.d10000, DROP_DIGIT(1));
    q0 = or_if(q0, (__mmask8)~f.d1000, DROP_DIGIT(2));
    q0 = or_if(q0, (__mmask8)~f.d100, DROP_DIGIT(3));
    g->q[0] = or_if(q0, (__mmask8)~f.d10, DROP_DIGIT(4));
    g->q[1] = or_if(q1, pos, DROP_PLUS);
    g->q[2] = or_if(q2, whole, DROP_WHOLE2);
    q3 = or_if(q3, whole, DROP_WHOLE3);
    g->q[3] = or_if(q3, (__mmask8)~f.sub_us, DROP_US3);
}

/* Lanes done here: in range, or NaT when nat_fits; *nat gets the NaT lanes. */
TARGET static inline __mmask8 lanes_ok(const simd_ctx *c, __m512i v, int nat_fits, __mmask8 *nat)
{
    __mmask8 in = _mm512_cmpge_epi64_mask(v, c->lo) & _mm512_cmplt_epi64_mask(v, c->hi);
    *nat = _mm512_cmpeq_epi64_mask(v, _mm512_set1_epi64(ZF_NAT));
    return in | (nat_fits ? *nat : 0);
}

/* The NaT line in the lanes of nat. */
TARGET static inline void blend_nat(const simd_ctx *c, __mmask8 nat, group *g)
{
    for (int i = 0; i < 4; i++)
        g->q[i] = _mm512_mask_blend_epi64(nat, g->q[i], c->nat_q[i]);
}

/* Pack the eight lines of g at out (which has GROUP_ROOM bytes); returns
 * their length and sets *last to where the eighth starts. */
TARGET static inline size_t put_group(const group *g, char *out, size_t *last)
{
    /* 128-bit lane k of a: the first half of template 2k; b: of 2k + 1;
     * c and d: the second halves */
    __m512i a = _mm512_unpacklo_epi64(g->q[0], g->q[1]);
    __m512i b = _mm512_unpackhi_epi64(g->q[0], g->q[1]);
    __m512i c = _mm512_unpacklo_epi64(g->q[2], g->q[3]);
    __m512i d = _mm512_unpackhi_epi64(g->q[2], g->q[3]);
    const __m512i lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    __m512i ac01 = _mm512_permutex2var_epi64(a, lo, c), ac23 = _mm512_permutex2var_epi64(a, hi, c);
    __m512i bd01 = _mm512_permutex2var_epi64(b, lo, d), bd23 = _mm512_permutex2var_epi64(b, hi, d);
    __m512i pair[4] = { /* templates 2j and 2j + 1 */
        _mm512_shuffle_i64x2(ac01, bd01, 0x44), _mm512_shuffle_i64x2(ac01, bd01, 0xEE),
        _mm512_shuffle_i64x2(ac23, bd23, 0x44), _mm512_shuffle_i64x2(ac23, bd23, 0xEE)};
    char *p = out;
    uint64_t k = 0;
    for (int j = 0; j < 4; j++) {
        p += __builtin_popcountll(k);
        __mmask64 keep = ~_mm512_movepi8_mask(pair[j]);
        _mm512_storeu_si512(p, _mm512_maskz_compress_epi8(keep, pair[j]));
        k = _cvtmask64_u64(keep);
    }
    /* the last pair's second template is the group's last line */
    *last = (size_t)(p - out) + (size_t)__builtin_popcountll(k & 0xFFFFFFFFu);
    return (size_t)(p - out) + (size_t)__builtin_popcountll(k);
}

/* zf_fmt_lines for pandas, scale 1, unit s..ns: whole groups of eight,
 * until a group falls outside what this file does or out runs short. */
TARGET zf_lines zf_pd_lines_avx512(const zf_fmt *f, const int64_t *v, size_t n, char *out,
                                   size_t cap)
{
    zf_lines r = {0, 0, 0};
    simd_ctx c;
    ctx_init(&c, f);
    while (n - r.count >= 8 && cap - r.bytes >= GROUP_ROOM) {
        __m512i x = _mm512_loadu_si512(v + r.count);
        __mmask8 nat;
        if (lanes_ok(&c, x, c.nat_ok, &nat) != 0xFF)
            break;
        group g;
        make_group(&c, x, &g);
        if (nat)
            blend_nat(&c, nat, &g);
        size_t last, bytes = put_group(&g, out + r.bytes, &last);
        r.last = r.bytes + last;
        r.bytes += bytes;
        r.count += 8;
    }
    return r;
}

/* Text lengths (no newline) of eight in-range values. */
TARGET static inline __m512i group_len(const simd_ctx *c, __m512i v)
{
    __m512i rem;
    __m512d rns, r3;
    __m512i d = split_days(_mm512_mullo_epi64(v, c->to_ns), &rem);
    floor_div(_mm512_cvtepi64_pd(rem), 1e9, &rns);
    floor_div(rns, 1e3, &r3);
    __m512d zero = _mm512_setzero_pd();
    __mmask8 neg = _mm512_cmplt_epi64_mask(d, _mm512_setzero_si512());
    d = _mm512_abs_epi64(d);
    __m512i len = _mm512_set1_epi64(15);
    len = _mm512_mask_add_epi64(len, neg, len, _mm512_set1_epi64(2));
    for (long long p = 10; p <= 10000; p *= 10) /* more day digits */
        len = _mm512_mask_add_epi64(len, _mm512_cmpge_epi64_mask(d, _mm512_set1_epi64(p)), len,
                                    _mm512_set1_epi64(1));
    len = _mm512_mask_add_epi64(len, _mm512_cmp_pd_mask(rns, zero, _CMP_NEQ_OQ), len,
                                _mm512_set1_epi64(7));
    return _mm512_mask_add_epi64(len, _mm512_cmp_pd_mask(r3, zero, _CMP_NEQ_OQ), len,
                                 _mm512_set1_epi64(3));
}

/* zf_fmt_len_sum for pandas, scale 1, unit s..ns over the longest prefix of
 * whole groups of eight done here; *done gets its length. */
TARGET uint64_t zf_pd_len_sum_avx512(const zf_fmt *f, const int64_t *v, size_t n, size_t *done)
{
    simd_ctx c;
    ctx_init(&c, f);
    __m512i sum = _mm512_setzero_si512(), nat_len = _mm512_set1_epi64(f->text.nat_len);
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        __m512i x = _mm512_loadu_si512(v + i);
        __mmask8 nat;
        if (lanes_ok(&c, x, 1, &nat) != 0xFF)
            break;
        sum = _mm512_add_epi64(sum, _mm512_mask_blend_epi64(nat, group_len(&c, x), nat_len));
    }
    *done = i;
    return (uint64_t)_mm512_reduce_add_epi64(sum);
}

/* Whether this CPU (and its OS) runs the code above. */
int zf_avx512_pd_supported(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi2") &&
           __builtin_cpu_supports("popcnt");
}
#endif
