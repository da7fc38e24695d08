/* test_convert.c - the fast loops of chunk/convert_fast.c against the
 * element-by-element rules of chunk/convert.c.
 *
 * Every case converts the same chunk twice with zf_convert_chunk: once as
 * the array's metadata describes it (int64 or float64 counts take the block
 * loops) and once with one more mask value that no element equals (which
 * leaves the fast loops out: the reference, checked against xarray by
 * test_cf.c and the oracle suite).  The two must agree on every tick, on
 * success or failure and on the error text (which names the element).  The
 * chunks mix random values with the edges of each rule: int64 bounds of the
 * multiplier, +-2^63 after the float steps, -0.0, subnormals, NaN payloads,
 * infinities, mask values, counts that are not exact in the chosen power of
 * 1000; both with the AVX-512 loops (where the CPU has them) and without.
 * A few absolute values and the loops' own return values are checked too. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "chunk/convert.h"
#include "chunk/convert_impl.h"
#include "zarr/meta.h"

#define CHECK_PRINT_MAX 30
#include "check.h"

#define NAT INT64_MIN
#define BLK ZF_FAST_BLOCK

static uint64_t seed = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

/* a v3 zarr.json of shape [n] with data type dt and attributes: its descriptor */
static int parse(const char *dt, const char *attrs, unsigned n, zf_meta *m)
{
    char doc[2048], err[256] = "";
    snprintf(doc, sizeof doc,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%u],\"data_type\":\"%s\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%u]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
             "\"attributes\":%s}", n, dt, n, attrs);
    zf_node_kind kind;
    int rc = zf_meta_parse_v3(doc, strlen(doc), &kind, m, err, sizeof err);
    CHECK(rc == ZF_OK && kind == ZF_KIND_TIMEDELTA, "%s %s: %d %s", dt, attrs, rc, err);
    return rc == ZF_OK && kind == ZF_KIND_TIMEDELTA ? 0 : -1;
}

/* the same rule with one more mask value that matches no element: not a
 * block-loop case (an int64 never equals 0.5; a float64 chunk gets three
 * mask values besides NaN, and never holds `never`) */
static zf_cf reference_of(const zf_cf *cf, double never)
{
    zf_cf r = *cf;
    if (cf->elem.kind == ZF_ELEM_INT) {
        r.mask_f[r.nmask_f++] = 0.5;
    } else {
        unsigned matching = 0;
        for (unsigned k = 0; k < r.nmask_f; k++)
            matching += !isnan(r.mask_f[k]);
        for (; matching < 3; matching++)
            r.mask_f[r.nmask_f++] = never;
    }
    return r;
}

static long cases_ok, cases_err; /* how the compared chunks ended */

/* the block loops on their own with constants f (the float steps found
 * here) over a chunk that holds nothing beyond int64 ticks: they must do all
 * of it (no block left to the element rules) and give the ticks want */
static void direct(const char *what, zf_fast f, int is_float, int finest, const void *chunk,
                   uint64_t n, const int64_t *want)
{
    static const int64_t pw[4] = {1, 1000, 1000000, 1000000000};
    int64_t *a = malloc(n * 8);
    memcpy(a, chunk, n * 8);
    uint64_t done;
    if (is_float) {
        f.steps = zf_fast_f64_steps(a, n, &f, finest);
        f.mult = pw[finest - f.steps];
        done = zf_fast_f64(a, n, &f);
    } else {
        done = zf_fast_i64(a, n, &f);
    }
    CHECK(done == n, "%s: the block loops stopped at %llu of %llu", what, (unsigned long long)done,
          (unsigned long long)n);
    CHECK(done != n || memcmp(a, want, n * 8) == 0, "%s: the block loops differ", what);
    free(a);
}

/* convert chunk (n elements of 8 bytes) both ways and compare; with f, the
 * chunk holds nothing beyond int64 ticks and the loops are run alone too */
static void compare(const char *what, const zf_cf *cf, const void *chunk, uint64_t n, double never,
                    const zf_fast *f, int finest)
{
    zf_cf ref = reference_of(cf, never);
    int64_t *a = malloc(n * 8), *b = malloc(n * 8);
    char ea[256] = "", eb[256] = "";
    uint64_t shape[1] = {n};
    memcpy(a, chunk, n * 8);
    memcpy(b, chunk, n * 8);
    int ra = zf_convert_chunk(cf, a, 1, shape, NULL, NULL, ea, sizeof ea);
    int rb = zf_convert_chunk(&ref, b, 1, shape, NULL, NULL, eb, sizeof eb);
    CHECK(ra == rb, "%s: rc %d (%s), reference %d (%s)", what, ra, ea, rb, eb);
    if (ra == rb && ra != ZF_OK)
        CHECK(strcmp(ea, eb) == 0, "%s: error \"%s\", reference \"%s\"", what, ea, eb);
    uint64_t diff = 0, first = 0;
    for (uint64_t i = 0; ra == ZF_OK && rb == ZF_OK && i < n; i++)
        if (a[i] != b[i] && !diff++)
            first = i;
    CHECK(diff == 0, "%s: %llu ticks differ, first [%llu] %lld, reference %lld", what,
          (unsigned long long)diff, (unsigned long long)first, (long long)a[first],
          (long long)b[first]);
    if (ra == rb)
        ra == ZF_OK ? cases_ok++ : cases_err++;
    if (f) {
        CHECK(rb == ZF_OK, "%s: meant to fit: %s", what, eb);
        if (rb == ZF_OK)
            direct(what, *f, cf->elem.kind == ZF_ELEM_FLOAT, finest, chunk, n, b);
    }
    free(a);
    free(b);
}

/* ---- int64 ------------------------------------------------------------- */

/* n int64 counts of one of several kinds, around the bounds of mult */
static void int_chunk(int64_t *v, uint64_t n, int kind, int64_t mult, const int64_t *masks)
{
    int64_t lo = INT64_MIN / mult, hi = INT64_MAX / mult;
    const int64_t edges[] = {lo, hi, lo + 1, hi - 1, NAT, 0, -1, 1, masks[0], masks[1],
                             INT64_MIN + 1, INT64_MAX};
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        if (kind == 0) /* any bits */
            v[i] = (int64_t)r;
        else if (kind == 1) /* small, NaT and masks now and then */
            v[i] = r % 16 == 0 ? edges[4 + r / 16 % 6] : (int64_t)(r >> 20) - (INT64_C(1) << 43);
        else /* the edges that fit (all with mult 1) */
            v[i] = r % 4 ? edges[r / 4 % 12] : (int64_t)(r % 2001) - 1000;
        if (kind == 2 && mult > 1 && (v[i] == INT64_MIN + 1 || v[i] == INT64_MAX))
            v[i] = hi;
    }
}

static void int64_cases(int simd)
{
    static const struct {
        const char *attrs;
        int64_t mult;      /* ticks per count */
        int64_t masks[2];
    } cfg[] = {
        {"{\"units\":\"nanoseconds\",\"dtype\":\"timedelta64[ns]\"}", 1, {NAT, NAT}},
        {"{\"units\":\"nanoseconds\",\"_FillValue\":-1}", 1, {-1, NAT}},
        {"{\"units\":\"seconds\"}", 1000000000, {NAT, NAT}},
        {"{\"units\":\"seconds\",\"missing_value\":[0, -1]}", 1000000000, {0, -1}},
        {"{\"units\":\"milliseconds\",\"dtype\":\"timedelta64[us]\",\"_FillValue\":7}", 1000, {7, NAT}},
        {"{\"units\":\"days\"}", INT64_C(86400000000000), {NAT, NAT}},
        {"{\"units\":\"hours\",\"dtype\":\"timedelta64[s]\"}", 3600, {NAT, NAT}},
        {"{\"units\":\"minutes\",\"dtype\":\"timedelta64[s]\",\"_FillValue\":-9223372036854775807}",
         60, {INT64_MIN + 1, NAT}},
    };
    static const uint64_t sizes[] = {1, 7, BLK - 1, BLK, BLK + 1, 3 * BLK + 5};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        zf_meta m;
        if (parse("int64", cfg[c].attrs, 4, &m))
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int kind = 0; kind < 3; kind++)
                for (int rep = 0; rep < 4; rep++) {
                    uint64_t n = sizes[s];
                    int64_t *v = malloc(n * 8);
                    int_chunk(v, n, kind, cfg[c].mult, cfg[c].masks);
                    if (kind == 2 && cfg[c].mult > 1 && rep >= 2) /* one count just beyond */
                        v[rnd() % n] = rep == 2 ? INT64_MAX / cfg[c].mult + 1
                                                : INT64_MIN / cfg[c].mult - 1;
                    char what[300];
                    snprintf(what, sizeof what, "simd %d int64 %s n %llu kind %d rep %d", simd,
                             cfg[c].attrs, (unsigned long long)n, kind, rep);
                    zf_fast f = {cfg[c].mult, {cfg[c].masks[0], cfg[c].masks[1]}, {NAN, NAN}, 1.0, 0};
                    int fits = kind == 2 && (cfg[c].mult == 1 || rep < 2);
                    compare(what, &m.cf, v, n, 0, fits ? &f : NULL, 0);
                    free(v);
                }
        zf_meta_clear(&m);
    }
}

/* ---- float64 ----------------------------------------------------------- */

static double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* the edges of the float rules, for a chunk scaled by `scale` (factor x
 * 1000^steps) in all: around +-2^63 ticks, and the special doubles */
static double float_edge(unsigned k, double scale)
{
    double top = 0x1p63 / scale;
    switch (k % 24) {
    case 0: return top;
    case 1: return nextafter(top, 0);
    case 2: return nextafter(top, INFINITY);
    case 3: return -top;
    case 4: return nextafter(-top, 0);
    case 5: return nextafter(-top, -INFINITY);
    case 6: return -0.0;
    case 7: return DBL_TRUE_MIN;
    case 8: return -DBL_MIN / 3;
    case 9: return from_bits(0x7FF0000000000001u); /* a signalling NaN */
    case 10: return from_bits(0xFFF8000000000000u); /* -NaN */
    case 11: return from_bits(0x7FFFFFFFFFFFFFFFu);
    case 12: return 0.1;                          /* not exact in any power of 1000 */
    case 13: return 1e-9;
    case 14: return -2.5;
    case 15: return 1.0 / 3.0;
    case 16: return 1234.000001;
    case 17: return 0x1p51 + 0.5;                 /* fractions only just below 2^52 */
    case 18: return -0x1p52 + 0.5;
    case 19: return -0.5;
    case 20: return -5e-7;
    case 21: return -5e-4;
    case 22: return nextafter(0x1p52, 0);
    default: return 0x1p52 + 2;                   /* whole, with no bits below 1 */
    }
}

/* n float64 counts: kind 0 any bits; 1 xarray-written k / 1000^s (s up to
 * fine) with NaN, masks and -0.0; 2 edges among those; 3 whole numbers (and
 * NaN) with the whole edges; 4 like 2 with a subnormal (every step: of
 * `finest`, the most there are) and nothing beyond int64 ticks after them;
 * 5 whole numbers but for one value of the last block */
static void float_chunk(double *v, uint64_t n, int kind, int fine, int rep, double scale,
                        double factor, int finest, const double *masks)
{
    static const double pw[4] = {1, 1e3, 1e6, 1e9};
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        int64_t k = (int64_t)(r >> 24) - (INT64_C(1) << 39);
        double x = (double)k / pw[r % (unsigned)(fine + 1)];
        if (kind == 0)
            x = from_bits(r);
        else if (r % 16 == 0)
            x = r / 16 % 4 == 0 ? NAN : r / 16 % 4 == 3 ? -0.0 : masks[r / 16 % 4 - 1];
        else if (kind == 3)
            x = r % 8 == 0 ? nearbyint(float_edge((unsigned)(r >> 8) % 6, scale)) : (double)k;
        else if ((kind == 2 || kind == 4) && r % 4 == 0)
            x = float_edge((unsigned)(r >> 8), scale);
        if (kind == 4 && !isnan(x)) { /* within int64 ticks after every step */
            double y = x * factor;
            for (int k2 = 0; k2 < finest; k2++)
                y *= 1000.0;
            if (!(y >= -0x1p63 && y < 0x1p63))
                x = 1.5;
        }
        if (kind == 5) /* whole numbers and one finer value in the last block */
            x = r % 16 == 0 ? NAN : (double)(k >> 20);
        v[i] = x;
    }
    if (kind == 4) /* the finest steps, for every chunk */
        v[rnd() % n] = DBL_TRUE_MIN;
    if (kind == 5) /* 2^51 + 0.5: whole after one step, fits in us (not in s) */
        v[n - 1 - rnd() % (n < BLK ? n : BLK)] = fine == 1 && rep ? 0x1p51 + 0.5
                                                 : fine ? 1.0 / pw[fine] * 3 : 0.25;
}

static void float64_cases(int simd)
{
    static const struct {
        const char *attrs;
        double factor;   /* seconds per count (coarse units), else 1 */
        int finest;      /* steps to ns from the units */
        double masks[2];
    } cfg[] = {
        {"{\"units\":\"seconds\"}", 1, 3, {NAN, NAN}},
        {"{\"units\":\"seconds\",\"_FillValue\":\"AAAAAAAA+H8=\"}", 1, 3, {NAN, NAN}},
        {"{\"units\":\"seconds\",\"dtype\":\"timedelta64[ns]\",\"_FillValue\":\"AAAAAAAA8L8=\"}", 1, 3,
         {-1.0, NAN}},
        {"{\"units\":\"milliseconds\",\"missing_value\":[0.5, -2.5]}", 1, 2, {0.5, -2.5}},
        {"{\"units\":\"microseconds\"}", 1, 1, {NAN, NAN}},
        {"{\"units\":\"nanoseconds\"}", 1, 0, {NAN, NAN}},
        {"{\"units\":\"hours\"}", 3600, 3, {NAN, NAN}},
        {"{\"units\":\"days\",\"missing_value\":-1}", 86400, 3, {-1.0, NAN}},
        {"{\"units\":\"seconds\",\"_FillValue\":\"AAAAAAAA8H8=\"}", 1, 3, {INFINITY, NAN}},
    };
    static const uint64_t sizes[] = {1, 5, BLK - 1, BLK + 1, 4 * BLK + 3};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        zf_meta m;
        if (parse("float64", cfg[c].attrs, 4, &m))
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int kind = 0; kind < 6; kind++)
                for (int fine = 0; fine <= cfg[c].finest; fine++)
                    for (int rep = 0; rep < 2; rep++) {
                        uint64_t n = sizes[s];
                        double *v = malloc(n * 8);
                        /* the edges of the finest chunks (most need every step) */
                        double scale = cfg[c].factor * pow(1000.0, cfg[c].finest);
                        float_chunk(v, n, kind, fine, rep, kind == 3 ? cfg[c].factor * 1e9 : scale,
                                    cfg[c].factor, cfg[c].finest, cfg[c].masks);
                        char what[300];
                        snprintf(what, sizeof what, "simd %d float64 %s n %llu kind %d fine %d",
                                 simd, cfg[c].attrs, (unsigned long long)n, kind, fine);
                        zf_fast f = {1, {NAT, NAT}, {cfg[c].masks[0], cfg[c].masks[1]},
                                     cfg[c].factor, 0};
                        compare(what, &m.cf, v, n, 7.25e300, kind == 4 ? &f : NULL,
                                cfg[c].finest);
                        free(v);
                    }
        zf_meta_clear(&m);
    }
}

/* ---- absolute values and the loops themselves ---------------------------- */

static void absolute(void)
{
    zf_meta m;
    char err[256];
    uint64_t shape[1];
    /* float64 seconds: the chunk needs ns (1e-9); 0.1 is truncated after three x1000 */
    if (parse("float64", "{\"units\":\"seconds\",\"_FillValue\":\"AAAAAAAA+H8=\"}", 4, &m) == 0) {
        double d[8] = {1e-9, 0.1, -0.0, NAN, from_bits(0x7FF0000000000001u), 9223372036.8547,
                       -9223372036.8547, DBL_TRUE_MIN};
        int64_t want[8] = {1, 100000000, 0, NAT, NAT, 9223372036854700032, -9223372036854700032, 0};
        shape[0] = 8;
        CHECK(zf_convert_chunk(&m.cf, d, 1, shape, NULL, NULL, err, sizeof err) == ZF_OK, "%s", err);
        int64_t t[8];
        memcpy(t, d, sizeof t);
        for (int i = 0; i < 8; i++)
            CHECK(t[i] == want[i], "float64 s [%d]: %lld, want %lld", i, (long long)t[i],
                  (long long)want[i]);
        /* whole seconds: no step, ticks are counts x 10^9; one beyond fails */
        double w[3] = {9223372036.0, -9223372036.0, 2.0};
        shape[0] = 3;
        CHECK(zf_convert_chunk(&m.cf, w, 1, shape, NULL, NULL, err, sizeof err) == ZF_OK, "%s", err);
        memcpy(t, w, 3 * 8);
        CHECK(t[0] == 9223372036000000000 && t[1] == -9223372036000000000 && t[2] == 2000000000,
              "whole seconds: %lld %lld %lld", (long long)t[0], (long long)t[1], (long long)t[2]);
        /* padding (beyond valid[]) counts for neither the steps nor the range */
        double pad[4] = {1.0, 2.0, 1e-9, INFINITY};
        uint64_t pshape[1] = {4}, valid[1] = {2};
        CHECK(zf_convert_chunk(&m.cf, pad, 1, pshape, valid, NULL, err, sizeof err) == ZF_OK, "%s", err);
        memcpy(t, pad, 2 * 8);
        CHECK(t[0] == 1000000000 && t[1] == 2000000000, "padded: %lld %lld", (long long)t[0],
              (long long)t[1]);
        double b[2] = {9223372037.0, 1.0};
        shape[0] = 2;
        CHECK(zf_convert_chunk(&m.cf, b, 1, shape, NULL, NULL, err, sizeof err) == ZF_ECORRUPT &&
                  strstr(err, "element 0"), "9223372037 s: %s", err);
        zf_meta_clear(&m);
    }
    /* float64 ns: no step; -2^63 itself is NaT, 2^63 is beyond */
    if (parse("float64", "{\"units\":\"nanoseconds\"}", 4, &m) == 0) {
        double d[3] = {-0x1p63, 0x1p62, -1.75};
        shape[0] = 3;
        CHECK(zf_convert_chunk(&m.cf, d, 1, shape, NULL, NULL, err, sizeof err) == ZF_OK, "%s", err);
        int64_t t[3];
        memcpy(t, d, sizeof t);
        CHECK(t[0] == NAT && t[1] == INT64_C(4611686018427387904) && t[2] == -1, "float64 ns");
        double b[2] = {1.0, 0x1p63};
        shape[0] = 2;
        CHECK(zf_convert_chunk(&m.cf, b, 1, shape, NULL, NULL, err, sizeof err) == ZF_ECORRUPT &&
                  strstr(err, "element 1"), "2^63 ns: %s", err);
        zf_meta_clear(&m);
    }
    /* int64 ns with dtype ns: the counts are the ticks, untouched */
    if (parse("int64", "{\"units\":\"nanoseconds\",\"dtype\":\"timedelta64[ns]\"}", 4, &m) == 0) {
        int64_t v[3] = {INT64_MAX, NAT, -5};
        shape[0] = 3;
        CHECK(zf_convert_chunk(&m.cf, v, 1, shape, NULL, NULL, err, sizeof err) == ZF_OK &&
                  v[0] == INT64_MAX && v[1] == NAT && v[2] == -5, "int64 ns identity");
        zf_meta_clear(&m);
    }
}

/* the loops' return value: the start of the first block with a bad value,
 * everything before it converted, it and everything after it as it was */
static void loop_returns(void)
{
    enum { N = 3 * BLK + 10 };
    int64_t v[N], keep[N];
    zf_fast f = {1000, {NAT, NAT}, {NAN, NAN}, 1.0, 0};
    for (int i = 0; i < N; i++)
        v[i] = i;
    v[BLK + 3] = INT64_MAX / 1000 + 1;
    memcpy(keep, v, sizeof v);
    CHECK(zf_fast_i64(v, N, &f) == BLK, "int64 stops at block 1");
    CHECK(v[BLK - 1] == (BLK - 1) * 1000 && memcmp(v + BLK, keep + BLK, (N - BLK) * 8) == 0,
          "int64: block 0 converted, the rest untouched");
    double d[N], dkeep[N];
    for (int i = 0; i < N; i++)
        d[i] = i * 0.5;
    d[2 * BLK] = INFINITY;
    memcpy(dkeep, d, sizeof d);
    f.mult = 1000000;
    f.steps = zf_fast_f64_steps(d, N, &f, 3);
    CHECK(f.steps == 1, "0.5 s needs one step: %d", f.steps);
    CHECK(zf_fast_f64(d, N, &f) == 2 * BLK, "float64 stops at the infinity (a block start)");
    int64_t t;
    memcpy(&t, &d[3], 8);
    CHECK(t == 1500000000 && memcmp(d + 2 * BLK, dkeep + 2 * BLK, (N - 2 * BLK) * 8) == 0,
          "float64: blocks 0-1 converted (%lld), the rest untouched", (long long)t);
    /* whole seconds: -2^63 (an int64 -2^63 is NaT) is NaT, not beyond; the
     * int64 bounds of 10^9 ticks per count are within */
    double w[4] = {-0x1p63, 2.0, 9223372036.0, -9223372036.0};
    zf_fast h = {1000000000, {NAT, NAT}, {NAN, NAN}, 1.0, 0};
    CHECK(zf_fast_f64_steps(w, 4, &h, 3) == 0 && zf_fast_f64(w, 4, &h) == 4, "whole s");
    memcpy(v, w, sizeof w);
    CHECK(v[0] == NAT && v[1] == 2000000000 && v[2] == INT64_C(9223372036000000000) &&
              v[3] == -INT64_C(9223372036000000000),
          "whole s: %lld %lld %lld %lld", (long long)v[0], (long long)v[1], (long long)v[2],
          (long long)v[3]);
    /* a masked value needs no step, whatever it is */
    double one[2] = {0.001, 2.0};
    zf_fast g = {1, {NAT, NAT}, {0.001, NAN}, 1.0, 0};
    CHECK(zf_fast_f64_steps(one, 2, &g, 3) == 0, "masked 0.001 needs no step");
}

int main(void)
{
    absolute();
    loop_returns();
    int simd = zf_fast_simd(1);
    printf("test_convert: AVX-512 loops %s\n", simd ? "available" : "not available on this CPU");
    for (int pass = 0; pass < 1 + simd; pass++) {
        zf_fast_simd(pass == 0 ? simd : 0);
        int64_cases(pass == 0 && simd);
        float64_cases(pass == 0 && simd);
        absolute();
        loop_returns();
    }
    printf("test_convert: %ld chunks converted alike, %ld failed alike\n", cases_ok, cases_err);
    CHECK(cases_ok > 500 && cases_err > 200, "both outcomes covered: %ld ok, %ld failed", cases_ok,
          cases_err);
    return check_summary("test_convert");
}
