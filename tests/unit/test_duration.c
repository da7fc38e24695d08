/* test_duration.c - duration text: golden files, parsing, NaT, bounds, bench.
 *
 *   test_duration                  all checks; golden files from golden/ (cwd tests/)
 *   test_duration FORMAT FILE      check one golden file in FORMAT
 *   test_duration --dump FORMAT FILE   print the text of each line's value
 *   test_duration --bench [N]      format N (10^7) random values, print Mvalues/s
 *
 * A golden line is "UNIT SCALE VALUE<TAB>EXPECTED"; NaT prints "NaT". */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/duration.h"
#include "text/duration_impl.h" /* zf_fmt_simd */
#include "base/err.h"

/* a broken formatter fails thousands of golden lines: print the first 50 */
#define CHECK_PRINT_MAX 50
#include "check.h"

#define BUFCAP 512
#define FILL 0x5a

/* Format v with f into buf (pre-filled); check length, bound and overrun. */
static size_t fmt_checked(const zf_fmt *f, int64_t v, char *buf, const char *where)
{
    memset(buf, FILL, BUFCAP);
    size_t n = zf_fmt_value(f, v, buf);
    size_t len = zf_fmt_len(f, v);
    CHECK(n == len, "%s: v=%lld len %zu != written %zu", where, (long long)v, len, n);
    CHECK(v == ZF_NAT || n <= ZF_VALUE_MAX, "%s: v=%lld %zu > ZF_VALUE_MAX", where,
          (long long)v, n);
    int clean = n < BUFCAP;
    for (size_t i = n; clean && i < BUFCAP; i++)
        clean = (unsigned char)buf[i] == FILL;
    CHECK(clean, "%s: v=%lld writes past its length %zu", where, (long long)v, n);
    return n < BUFCAP ? n : BUFCAP - 1;
}

/* Parse "UNIT SCALE VALUE\tEXPECTED" in place; 0 on success. */
static int parse_line(char *line, zf_unit *u, uint32_t *scale, int64_t *v, char **expected)
{
    char *tab = strchr(line, '\t'), *end;
    if (!tab)
        return -1;
    *tab = '\0';
    *expected = tab + 1;
    (*expected)[strcspn(*expected, "\r\n")] = '\0';
    char *sp = strchr(line, ' ');
    if (!sp)
        return -1;
    *sp = '\0';
    if (zf_unit_parse(line, u) != 0)
        return -1;
    unsigned long long s = strtoull(sp + 1, &end, 10);
    if (*end != ' ' || s < 1 || s > INT32_MAX)
        return -1;
    *scale = (uint32_t)s;
    *v = strtoll(end + 1, &end, 10);
    return *end == '\0' ? 0 : -1;
}

/* Check (or with dump, print) every line of one golden file; -1 if unreadable. */
static long run_file(zf_format format, const char *path, int dump)
{
    FILE *fp = fopen(path, "r");
    CHECK(fp, "cannot open %s", path);
    if (!fp)
        return -1;
    char line[1024], buf[BUFCAP], where[1100];
    long lines = 0;
    while (fgets(line, sizeof line, fp)) {
        zf_unit u;
        uint32_t scale;
        int64_t v;
        char *expected;
        zf_fmt f;
        lines++;
        snprintf(where, sizeof where, "%s:%ld", path, lines);
        if (parse_line(line, &u, &scale, &v, &expected) != 0) {
            CHECK(0, "%s: malformed line", where);
            continue;
        }
        CHECK(zf_fmt_init(&f, format, u, scale, "NaT") == 0, "%s: init", where);
        size_t n = fmt_checked(&f, v, buf, where);
        buf[n] = '\0';
        if (dump)
            printf("%s\n", buf);
        else
            CHECK(strcmp(buf, expected) == 0, "%s: %s %u %lld: got \"%s\", want \"%s\"", where,
                  zf_unit_name(u), scale, (long long)v, buf, expected);
    }
    fclose(fp);
    return lines;
}

static void test_parse(void)
{
    static const char *const names[] = {"Y",  "M",  "W",  "D",  "h",  "m",  "s",
                                        "ms", "us", "ns", "ps", "fs", "as", "generic"};
    static const char *const bad[] = {"",  "S",   "Us",    "\xc2\xb5s", "sec", "years",
                                      "d", "msx", "Generic", "H",       "mus", "ns "};
    zf_unit u;
    zf_format fm;
    for (int i = 0; i < 14; i++) {
        CHECK(zf_unit_parse(names[i], &u) == 0 && u == (zf_unit)i, "unit %s", names[i]);
        CHECK(strcmp(zf_unit_name((zf_unit)i), names[i]) == 0, "unit name %d", i);
    }
    CHECK(zf_unit_parse("\xce\xbcs", &u) == 0 && u == ZF_UNIT_us, "unit mu-s");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(zf_unit_parse(bad[i], &u) == ZF_EINVAL, "bad unit \"%s\" accepted", bad[i]);
    CHECK(zf_unit_parse(NULL, &u) == ZF_EINVAL, "NULL unit");
    static const char *const fmts[] = {"pandas", "iso", "numpy", "seconds", "raw"};
    for (int i = 0; i < 5; i++)
        CHECK(zf_format_parse(fmts[i], &fm) == 0 && fm == (zf_format)i, "format %s", fmts[i]);
    static const char *const badf[] = {"", "Pandas", "ISO", "second", "raw ", "json"};
    for (size_t i = 0; i < sizeof badf / sizeof badf[0]; i++)
        CHECK(zf_format_parse(badf[i], &fm) == ZF_EINVAL, "bad format \"%s\"", badf[i]);
    CHECK(zf_format_parse(NULL, &fm) == ZF_EINVAL, "NULL format");
}

static void test_init_and_nat(void)
{
    zf_fmt f;
    char longnat[ZF_NAT_MAX + 2], buf[BUFCAP];
    memset(longnat, 'x', sizeof longnat);
    longnat[ZF_NAT_MAX + 1] = '\0';
    CHECK(zf_fmt_init(&f, ZF_FORMAT_PANDAS, ZF_UNIT_ns, 0, "NaT") == ZF_EINVAL, "scale 0");
    CHECK(zf_fmt_init(&f, ZF_FORMAT_PANDAS, ZF_UNIT_ns, 1u << 31, "NaT") == ZF_EINVAL,
          "scale 2^31");
    CHECK(zf_fmt_init(&f, (zf_format)5, ZF_UNIT_ns, 1, "NaT") == ZF_EINVAL, "format 5");
    CHECK(zf_fmt_init(&f, ZF_FORMAT_RAW, (zf_unit)14, 1, "NaT") == ZF_EINVAL, "unit 14");
    CHECK(zf_fmt_init(&f, ZF_FORMAT_RAW, ZF_UNIT_s, 1, NULL) == ZF_EINVAL, "NULL nat");
    CHECK(zf_fmt_init(&f, ZF_FORMAT_RAW, ZF_UNIT_s, 1, longnat) == ZF_EINVAL, "nat 256");
    longnat[ZF_NAT_MAX] = '\0';
    const char *nats[] = {"", "nan", "-", "\xce\xbc NaT \xce\xbc", longnat};
    for (size_t i = 0; i < sizeof nats / sizeof nats[0]; i++)
        for (int fm = 0; fm < 5; fm++)
            for (int u = 0; u < 14; u++) {
                int rc = zf_fmt_init(&f, (zf_format)fm, (zf_unit)u, 7, nats[i]);
                CHECK(rc == 0, "init nat %zu", i);
                if (rc)
                    continue;
                size_t n = fmt_checked(&f, ZF_NAT, buf, "nat");
                CHECK(n == strlen(nats[i]) && memcmp(buf, nats[i], n) == 0,
                      "nat %zu format %d unit %d", i, fm, u);
            }
    CHECK(zf_fmt_init(&f, ZF_FORMAT_ISO, ZF_UNIT_ns, INT32_MAX, "NaT") == 0, "max scale");
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* A random int64 biased towards small magnitudes and the extremes. */
static int64_t rand_value(void)
{
    uint64_t r = rng();
    switch (r & 7) {
    case 0: return INT64_MAX - (int64_t)(rng() % 4);
    case 1: return INT64_MIN + 1 + (int64_t)(rng() % 4);
    case 2: return (int64_t)(rng() % 200000) - 100000;
    case 3: return (int64_t)(rng() >> (rng() % 64)) * ((r >> 8) & 1 ? -1 : 1);
    default: return (int64_t)rng();
    }
}

/* Worst cases stay within ZF_VALUE_MAX; length matches text on random input. */
static void test_bounds(void)
{
    static const uint32_t scales[] = {1, 2, 7, 1000, 86400, 2147483646, 2147483647};
    static const int64_t ext[] = {INT64_MIN + 1, INT64_MAX, -1, 1, 0};
    char buf[BUFCAP];
    size_t longest = 0;
    zf_fmt f;
    for (int fm = 0; fm < 5; fm++)
        for (int u = 0; u < 14; u++) {
            for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++)
                for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
                    zf_fmt_init(&f, (zf_format)fm, (zf_unit)u, scales[s], "NaT");
                    size_t n = fmt_checked(&f, ext[i], buf, "bounds");
                    longest = n > longest ? n : longest;
                }
            for (int i = 0; i < 3000; i++) {
                zf_fmt_init(&f, (zf_format)fm, (zf_unit)u,
                            (rng() & 1) ? 1 + (uint32_t)(rng() % INT32_MAX) : 1, "NaT");
                fmt_checked(&f, rand_value(), buf, "random");
            }
        }
    printf("longest text: %zu bytes (ZF_VALUE_MAX %d)\n", longest, ZF_VALUE_MAX);
}

/* The run APIs agree with the per-value ones they stand for: zf_fmt_len_sum
 * is the sum of zf_fmt_len, zf_fmt_lines writes exactly the zf_fmt_value
 * texts with newlines, stops only when one more line might not fit, and never
 * writes past its capacity.  Every format and unit, scales 1 and 7, runs
 * mixing NaT, extremes and random values (the fast paths and the rest). */
static void test_runs(void)
{
    enum { N = 300, CAP = N * (ZF_VALUE_MAX + 2), GUARD = 64 };
    static int64_t vals[N];
    static char want[CAP], got[CAP + GUARD];
    static const size_t caps[] = {0, 1, ZF_VALUE_MAX + 1, 1000, 4096, CAP};
    zf_fmt f;
    for (int fm = 0; fm < 5; fm++)
        for (int u = 0; u < 14; u++)
            for (uint32_t scale = 1; scale <= 7; scale += 6) {
                zf_fmt_init(&f, (zf_format)fm, (zf_unit)u, scale, "NaT");
                uint64_t sum = 0;
                size_t wn = 0, ends[N];
                for (int i = 0; i < N; i++) {
                    vals[i] = i % 17 == 0 ? ZF_NAT : i % 2 ? (int64_t)(rng() % 4000000000000000ull)
                                                           : rand_value();
                    sum += zf_fmt_len(&f, vals[i]);
                    wn += zf_fmt_value(&f, vals[i], want + wn);
                    want[wn++] = '\n';
                    ends[i] = wn;
                }
                CHECK(zf_fmt_len_sum(&f, vals, N) == sum, "len_sum format %d unit %d scale %u",
                      fm, u, scale);
                for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
                    memset(got, FILL, sizeof got);
                    zf_lines r = zf_fmt_lines(&f, vals, N, got, caps[c]);
                    size_t start = r.count ? (r.count > 1 ? ends[r.count - 2] : 0) : 0;
                    CHECK(r.count <= N && r.bytes == (r.count ? ends[r.count - 1] : 0) &&
                              r.last == start && memcmp(got, want, r.bytes) == 0,
                          "lines format %d unit %d scale %u cap %zu", fm, u, scale, caps[c]);
                    CHECK(r.count == N || caps[c] - r.bytes < ZF_VALUE_MAX + 1,
                          "lines stopped early: format %d unit %d cap %zu", fm, u, caps[c]);
                    int clean = 1;
                    for (size_t i = caps[c]; i < sizeof got; i++)
                        clean &= (unsigned char)got[i] == FILL;
                    CHECK(clean, "lines wrote past cap %zu: format %d unit %d", caps[c], fm, u);
                }
            }
}

/* A value for the vector runs in a unit of 1/per_s s: mostly within 99999
 * days either side of zero (their range), of every digit count, sometimes
 * beyond it, NaT, or at the edges of the range and of the digit counts;
 * whole seconds, milliseconds or microseconds as often as not. */
static int64_t vector_value(int64_t per_s)
{
    const int64_t day = per_s * 86400, r = (int64_t)(rng() % 64);
    const int64_t edges[] = {-99999 * day, -99999 * day - 1, -99999 * day + 1, 100000 * day - 1,
                             100000 * day, 10 * day - 1, 10 * day, -10 * day, -10 * day - 1,
                             100 * day - 1, 1000 * day, -1000 * day - 1, 10000 * day - 1,
                             -10000 * day, 0, -1, 1, INT64_MAX, INT64_MIN + 1};
    if (r == 0)
        return ZF_NAT;
    if (r == 1)
        return edges[rng() % (sizeof edges / sizeof edges[0])];
    if (r == 2)
        return (int64_t)rng(); /* anywhere: mostly beyond the range */
    int64_t span = day;        /* up to 10^k days, k in 0..5 */
    for (uint64_t k = rng() % 6; k > 0; k--)
        span *= 10;
    int64_t v = (int64_t)(rng() % (uint64_t)span);
    v = (rng() & 1) ? -v : v;
    int64_t whole[] = {per_s, per_s / 1000 ? per_s / 1000 : 1, per_s / 1000000 ? per_s / 1000000 : 1};
    return (r & 1) ? v : v - v % whole[r % 3];
}

/* Runs in pandas format, scale 1, units s..ns, whatever path formats them
 * (the AVX-512 groups where the CPU has them, with them turned off, and
 * the scalar code between groups): the zf_fmt_value texts with newlines,
 * lengths that sum up, capacity kept; NaT texts up to a 32-byte line and
 * beyond (which the vector groups leave to the scalar code). */
static void test_vector_runs(void)
{
    enum { N = 20000, CAP = N * 40, GUARD = 64 };
    static int64_t vals[N];
    static char want[CAP], got[CAP + GUARD];
    static const char *const nats[] = {"NaT", "", "0123456789012345678901234567890",
                                       "01234567890123456789012345678901"};
    static const zf_unit units[] = {ZF_UNIT_s, ZF_UNIT_ms, ZF_UNIT_us, ZF_UNIT_ns};
    static const int64_t per_s[] = {1, 1000, 1000000, 1000000000};
    static const size_t caps[] = {CAP, 319, 320, 321, 500, 4096 + 7};
    int has = zf_fmt_simd(1);
    printf("vector runs: %s\n", has ? "AVX-512" : "not on this CPU (scalar only)");
    for (int on = has; on >= 0; on--) {
        zf_fmt_simd(on);
        for (size_t u = 0; u < 4; u++)
            for (size_t k = 0; k < sizeof nats / sizeof nats[0]; k++) {
                zf_fmt f;
                zf_fmt_init(&f, ZF_FORMAT_PANDAS, units[u], 1, nats[k]);
                uint64_t sum = 0;
                size_t wn = 0;
                for (int i = 0; i < N; i++) {
                    vals[i] = vector_value(per_s[u]);
                    sum += zf_fmt_len(&f, vals[i]);
                    wn += zf_fmt_value(&f, vals[i], want + wn);
                    want[wn++] = '\n';
                }
                CHECK(wn <= CAP, "vector runs: test buffer too small");
                CHECK(zf_fmt_len_sum(&f, vals, N) == sum, "vector len_sum simd %d unit %zu nat %zu",
                      on, u, k);
                for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
                    memset(got, FILL, sizeof got);
                    zf_lines r = zf_fmt_lines(&f, vals, N, got, caps[c]);
                    size_t last = r.bytes ? r.bytes - 1 : 0;
                    while (last > 0 && got[last - 1] != '\n')
                        last--;
                    int clean = 1;
                    for (size_t i = caps[c]; i < sizeof got; i++)
                        clean &= (unsigned char)got[i] == FILL;
                    CHECK(r.bytes <= caps[c] && memcmp(got, want, r.bytes) == 0 &&
                              (r.count == N || caps[c] - r.bytes < ZF_VALUE_MAX + 1) &&
                              r.last == last && clean,
                          "vector lines simd %d unit %zu nat %zu cap %zu: count %zu bytes %zu",
                          on, u, k, caps[c], r.count, r.bytes);
                    if (r.count) {
                        size_t lines = 0;
                        for (size_t i = 0; i < r.bytes; i++)
                            lines += got[i] == '\n';
                        CHECK(lines == r.count, "vector lines count simd %d unit %zu", on, u);
                    }
                }
            }
    }
    zf_fmt_simd(1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Format n random values in one format and unit into a cycling buffer. */
static double bench_one(zf_format fm, zf_unit u, const int64_t *vals, long n, int len_only)
{
    static char out[1 << 16];
    zf_fmt f;
    size_t pos = 0, total = 0;
    zf_fmt_init(&f, fm, u, 1, "NaT");
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (len_only) {
            total += zf_fmt_len(&f, vals[i]);
            continue;
        }
        if (pos > sizeof out - ZF_VALUE_MAX - 1)
            pos = 0;
        pos += zf_fmt_value(&f, vals[i], out + pos);
        out[pos++] = '\n';
        total += pos;
    }
    double dt = now() - t0;
    if (total == 42) /* keep the work observable */
        puts("");
    return n / dt / 1e6;
}

/* The snprintf way to str(pandas.Timedelta(v, "ns")): the reference speed. */
static int snprintf_pandas_ns(int64_t v, char *out, size_t cap)
{
    const int64_t day = 86400000000000LL;
    int64_t d = v / day, r = v % day;
    if (r < 0) {
        d--;
        r += day;
    }
    int64_t s = r / 1000000000, ns = r % 1000000000;
    int n = snprintf(out, cap, "%lld days %s%02d:%02d:%02d", (long long)d, d < 0 ? "+" : "",
                     (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60));
    if (ns && ns % 1000 == 0)
        n += snprintf(out + n, cap - (size_t)n, ".%06d", (int)(ns / 1000));
    else if (ns)
        n += snprintf(out + n, cap - (size_t)n, ".%09d", (int)ns);
    return n;
}

/* Mvalues/s of the snprintf reference; also checks it agrees with zf_fmt_value. */
static double bench_snprintf(const int64_t *vals, long n)
{
    static char out[1 << 16];
    char mine[BUFCAP];
    size_t pos = 0;
    zf_fmt f;
    zf_fmt_init(&f, ZF_FORMAT_PANDAS, ZF_UNIT_ns, 1, "NaT");
    for (long i = 0; i < n && i < 100000; i++) {
        int k = snprintf_pandas_ns(vals[i], out, sizeof out);
        size_t m = zf_fmt_value(&f, vals[i], mine);
        CHECK((size_t)k == m && memcmp(out, mine, m) == 0, "bench: snprintf disagrees at %lld",
              (long long)vals[i]);
    }
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (pos > sizeof out - ZF_VALUE_MAX - 1)
            pos = 0;
        pos += (size_t)snprintf_pandas_ns(vals[i], out + pos, ZF_VALUE_MAX);
        out[pos++] = '\n';
    }
    return n / (now() - t0) / 1e6;
}

static int bench(long n)
{
    int64_t *vals = n > 0 ? calloc((size_t)n, sizeof *vals) : NULL;
    if (!vals)
        return 1;
    for (long i = 0; i < n; i++) /* any int64: days up to 106752, 9 fraction digits */
        vals[i] = (int64_t)rng();
    static const char *const fnames[] = {"pandas", "iso", "numpy", "seconds", "raw"};
    printf("%ld random int64 values, Mvalues/s (one thread):\n", n);
    printf("  pandas/ns: %.1f\n", bench_one(ZF_FORMAT_PANDAS, ZF_UNIT_ns, vals, n, 0));
    printf("  pandas/ns zf_fmt_len: %.1f\n", bench_one(ZF_FORMAT_PANDAS, ZF_UNIT_ns, vals, n, 1));
    printf("  pandas/ns snprintf reference: %.1f\n", bench_snprintf(vals, n / 10));
    for (int fm = 1; fm < 5; fm++)
        printf("  %s/ns: %.1f\n", fnames[fm], bench_one((zf_format)fm, ZF_UNIT_ns, vals, n, 0));
    printf("  pandas/ps: %.1f\n", bench_one(ZF_FORMAT_PANDAS, ZF_UNIT_ps, vals, n, 0));
    for (long i = 0; i < n; i++) /* durations below a day, whole microseconds */
        vals[i] = (int64_t)(rng() % 86400000000ull) * 1000;
    printf("  pandas/ns, < 1 day, whole us: %.1f\n",
           bench_one(ZF_FORMAT_PANDAS, ZF_UNIT_ns, vals, n, 0));
    free(vals);
    return check_summary("test_duration");
}

int main(int argc, char **argv)
{
    zf_format fm;
    if (argc >= 2 && strcmp(argv[1], "--bench") == 0)
        return bench(argc >= 3 ? atol(argv[2]) : 10000000L);
    if (argc == 4 && strcmp(argv[1], "--dump") == 0) {
        if (zf_format_parse(argv[2], &fm) != 0)
            return 2;
        run_file(fm, argv[3], 1);
        return failures ? 1 : 0;
    }
    if (argc == 3) {
        if (zf_format_parse(argv[1], &fm) != 0) {
            fprintf(stderr, "unknown format %s\n", argv[1]);
            return 2;
        }
        long n = run_file(fm, argv[2], 0);
        printf("%s: %ld lines\n", argv[2], n);
        return check_summary("test_duration");
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s [FORMAT FILE | --dump FORMAT FILE | --bench [N]]\n", argv[0]);
        return 2;
    }
    static const char *const fnames[] = {"pandas", "iso", "numpy", "seconds", "raw"};
    for (int i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "golden/duration_%s.txt", fnames[i]);
        long n = run_file((zf_format)i, path, 0);
        printf("%s: %ld lines\n", path, n);
        CHECK(n >= 100, "%s: too few golden lines", path);
    }
    test_parse();
    test_init_and_nat();
    test_bounds();
    test_runs();
    test_vector_runs();
    return check_summary("test_duration");
}
