/* test_datetime.c - time-stamp text: golden files, the calendar, NaT, bounds,
 * runs through the text interface, and CF time units.
 *
 *   test_datetime                  all checks; golden files from golden/ (cwd tests/)
 *   test_datetime FORMAT FILE      check one golden file in FORMAT
 *
 * A golden line is "UNIT SCALE VALUE<TAB>EXPECTED" (gen_datetime.py: numpy and
 * pandas where they hold the value, an independent exact reference beyond). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "text/datetime.h"
#include "zarr/cf.h"

#define CHECK_PRINT_MAX 50
#include "check.h"

#define BUFCAP 512
#define FILL 0x5a

/* Format v with f into buf (pre-filled); check length, bound and overrun. */
static size_t fmt_checked(const zf_dtfmt *f, int64_t v, char *buf, const char *where)
{
    memset(buf, FILL, BUFCAP);
    size_t n = zf_dtfmt_value(f, v, buf);
    size_t len = zf_dtfmt_len(f, v);
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
    char *tab = strchr(line, '\t'), *sp = strchr(line, ' '), *end;
    if (!tab || !sp || sp > tab)
        return -1;
    *tab = '\0';
    *sp = '\0';
    *expected = tab + 1;
    (*expected)[strcspn(*expected, "\r\n")] = '\0';
    if (zf_unit_parse(line, u) != 0)
        return -1;
    unsigned long long s = strtoull(sp + 1, &end, 10);
    if (*end != ' ' || s < 1 || s > INT32_MAX)
        return -1;
    *scale = (uint32_t)s;
    *v = strtoll(end + 1, &end, 10);
    return *end == '\0' ? 0 : -1;
}

/* Check every line of one golden file; -1 if unreadable. */
static long run_file(zf_format format, const char *path)
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
        zf_dtfmt f;
        lines++;
        snprintf(where, sizeof where, "%s:%ld", path, lines);
        if (parse_line(line, &u, &scale, &v, &expected) != 0) {
            CHECK(0, "%s: malformed line", where);
            continue;
        }
        CHECK(zf_dtfmt_init(&f, format, u, scale, "NaT") == 0, "%s: init", where);
        size_t n = fmt_checked(&f, v, buf, where);
        buf[n] = '\0';
        CHECK(strcmp(buf, expected) == 0, "%s: %s %u %lld: got \"%s\", want \"%s\"", where,
              zf_unit_name(u), scale, (long long)v, buf, expected);
    }
    fclose(fp);
    return lines;
}

static uint64_t g_rng = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* days <-> dates round-trip and step by one day, over years far beyond int64
 * seconds; leap rules at the centuries. */
static void test_calendar(void)
{
    static const struct { long y; unsigned m, d; long days; } known[] = {
        {1970, 1, 1, 0}, {1969, 12, 31, -1}, {2000, 2, 29, 11016}, {2000, 3, 1, 11017},
        {1900, 3, 1, -25508}, {0, 1, 1, -719528}, {-1, 12, 31, -719529}, {1, 1, 1, -719162},
        {2262, 4, 11, 106751}, {1677, 9, 21, -106752}, {10000, 1, 1, 2932897}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        zf_i128 y;
        unsigned m, d;
        CHECK(zf_days_from_civil(known[i].y, known[i].m, known[i].d) == known[i].days,
              "days of %ld-%u-%u", known[i].y, known[i].m, known[i].d);
        zf_civil_from_days(known[i].days, &y, &m, &d);
        CHECK(y == known[i].y && m == known[i].m && d == known[i].d, "date of %ld",
              known[i].days);
    }
    for (int i = 0; i < 200000; i++) {
        int shift = (int)(rng() % 100);
        zf_i128 days = (zf_i128)(int64_t)rng() >> (shift < 64 ? shift % 64 : 0);
        if (i % 3 == 0)
            days *= (zf_i128)1 << 40; /* up to 2^103 days */
        zf_i128 y, y2;
        unsigned m, d, m2, d2;
        zf_civil_from_days(days, &y, &m, &d);
        CHECK(m >= 1 && m <= 12 && d >= 1 && d <= 31, "range at %d", i);
        CHECK(zf_days_from_civil(y, m, d) == days, "round trip at %d", i);
        zf_civil_from_days(days + 1, &y2, &m2, &d2);
        int next = (y2 == y && m2 == m && d2 == d + 1) ||
                   (d2 == 1 && ((y2 == y && m2 == m + 1) || (y2 == y + 1 && m == 12 && m2 == 1)));
        CHECK(next, "day after %d", i);
    }
}

static void test_init_and_nat(void)
{
    zf_dtfmt f;
    char longnat[ZF_NAT_MAX + 2], buf[BUFCAP];
    memset(longnat, 'x', sizeof longnat);
    longnat[ZF_NAT_MAX + 1] = '\0';
    CHECK(zf_dtfmt_init(&f, ZF_FORMAT_PANDAS, ZF_UNIT_ns, 0, "NaT") == ZF_EINVAL, "scale 0");
    CHECK(zf_dtfmt_init(&f, (zf_format)5, ZF_UNIT_ns, 1, "NaT") == ZF_EINVAL, "format 5");
    CHECK(zf_dtfmt_init(&f, ZF_FORMAT_RAW, (zf_unit)14, 1, "NaT") == ZF_EINVAL, "unit 14");
    CHECK(zf_dtfmt_init(&f, ZF_FORMAT_RAW, ZF_UNIT_s, 1, NULL) == ZF_EINVAL, "NULL nat");
    CHECK(zf_dtfmt_init(&f, ZF_FORMAT_RAW, ZF_UNIT_s, 1, longnat) == ZF_EINVAL, "nat 256");
    longnat[ZF_NAT_MAX] = '\0';
    const char *nats[] = {"", "nan", "\xce\xbc NaT", longnat};
    for (size_t i = 0; i < sizeof nats / sizeof nats[0]; i++)
        for (int fm = 0; fm < 5; fm++)
            for (int u = 0; u < 14; u++) {
                CHECK(zf_dtfmt_init(&f, (zf_format)fm, (zf_unit)u, 7, nats[i]) == 0, "init");
                size_t n = fmt_checked(&f, ZF_NAT, buf, "nat");
                CHECK(n == strlen(nats[i]) && memcmp(buf, nats[i], n) == 0, "nat %zu", i);
            }
    /* through text.h: a time-stamp formatter, and a duration one for the other kind */
    zf_text_room r;
    CHECK(zf_text_init(&r, ZF_VALUES_DATETIME, ZF_FORMAT_ISO, ZF_UNIT_h, 1, NULL, "NaT") == 0, "room");
    size_t n = zf_text_value(&r.text, 30, buf);
    CHECK(n == 19 && !memcmp(buf, "1970-01-02T06:00:00", 19), "text.h datetime");
    CHECK(zf_text_init(&r, ZF_VALUES_DURATION, ZF_FORMAT_ISO, ZF_UNIT_h, 1, NULL, "NaT") == 0, "room");
    n = zf_text_value(&r.text, 30, buf);
    CHECK(n == 6 && !memcmp(buf, "P1DT6H", 6), "text.h duration");
}

/* extremes of every unit, format and scale stay within ZF_VALUE_MAX; the run
 * functions agree with the per-value ones, on values anywhere and on runs
 * of close values (many of a day, then the next: the memo of the date) */
static void test_bounds_and_runs(void)
{
    static const uint32_t scales[] = {1, 7, 86400, 2147483647};
    static const int64_t ext[] = {INT64_MIN + 1, INT64_MAX, -1, 1, 0};
    enum { N = 200, CAP = N * (ZF_VALUE_MAX + 2) };
    static int64_t vals[N];
    static char want[CAP], got[CAP + 64];
    char buf[BUFCAP];
    size_t longest = 0;
    zf_dtfmt f;
    for (int fm = 0; fm < 5; fm++)
        for (int u = 0; u < 14; u++) {
            for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
                zf_dtfmt_init(&f, (zf_format)fm, (zf_unit)u, scales[s], "NaT");
                for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
                    size_t n = fmt_checked(&f, ext[i], buf, "bounds");
                    longest = n > longest ? n : longest;
                }
                size_t wn = 0;
                uint64_t sum = 0;
                int64_t near = (int64_t)rng() >> (rng() % 64);
                for (int i = 0; i < N; i++) { /* the second half: runs of one day and the next */
                    vals[i] = i % 13 == 0 ? ZF_NAT
                              : i < N / 2 ? (int64_t)rng() >> (rng() % 64)
                                          : (near += (int64_t)(rng() % 4000)) / (i % 7 ? 1 : 2);
                    sum += zf_dtfmt_len(&f, vals[i]);
                    wn += zf_dtfmt_value(&f, vals[i], want + wn);
                    want[wn++] = '\n';
                }
                CHECK(zf_text_len_sum(&f.text, vals, N) == sum, "len_sum %d %d", fm, u);
                memset(got, FILL, sizeof got);
                zf_lines r = zf_text_lines(&f.text, vals, N, got, CAP);
                CHECK(r.count == N && r.bytes == wn && !memcmp(got, want, wn), "lines %d %d",
                      fm, u);
                r = zf_text_lines(&f.text, vals, N, got, 1000);
                CHECK(r.count < N && r.bytes <= 1000 && !memcmp(got, want, r.bytes) &&
                          1000 - r.bytes < ZF_VALUE_MAX + 1, "short lines %d %d", fm, u);
            }
        }
    printf("longest text: %zu bytes (ZF_VALUE_MAX %d)\n", longest, ZF_VALUE_MAX);
}

/* CF time units as xarray and pandas read them (checked against pandas by
 * tests/oracle/test_datetime.py; these pin the parser's edges) */
static void test_time_units(void)
{
    static const struct { const char *units; zf_unit unit; int64_t ns; } good[] = {
        {"days since 1970-01-01", ZF_UNIT_D, 0},
        {"hours since 2000-01-01 00:00:00", ZF_UNIT_h, 946684800000000000},
        {"Seconds since 2000-01-01T06:00:00Z", ZF_UNIT_s, 946706400000000000},
        {"minute since 2000-01-01 06:00:00.5", ZF_UNIT_m, 946706400500000000},
        {"nanoseconds since 2000-01-01T06:00:00+01:00", ZF_UNIT_ns, 946702800000000000},
        {"microseconds since 2000-01-01 06:00:00 -0130", ZF_UNIT_us, 946711800000000000},
        {" days   since  2000-1-1  ", ZF_UNIT_D, 946684800000000000},
        {"days since 2000-01-01 6", ZF_UNIT_D, 946706400000000000},
        {"days since 2000-01-01 06:00:00.1234567891", ZF_UNIT_D, 946706400123456789},
        {"days since 2000-01-01 00:00:00 UTC", ZF_UNIT_D, 946684800000000000},
        {"milliseconds since 1677-09-21 00:12:43.145224193", ZF_UNIT_ms, INT64_MIN + 1},
        {"days since 2262-04-11 23:47:16.854775807", ZF_UNIT_D, INT64_MAX}};
    static const char *const bad[] = {
        "days since", "since 1970-01-01", "days since 70-01-01", "fortnights since 2000-01-01",
        "days since 2000-02-30", "days since 2000-01-01 24:00", "days since 1677-09-21",
        "days since 2262-04-12", "days since 2000-01-01 00:00:00+25:00", "days since 20000101",
        "days since 2000-01-01 junk", "d since 2000-01-01", "ns since 2000-01-01", "days since 0001-01-01", "",
        "days since forecast since 1970-01-01" /* the last " since " splits, as the regex */};
    char err[200];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        zf_unit u;
        int64_t ns = 0;
        int rc = zf_cf_time_units(good[i].units, &u, &ns, err, sizeof err);
        CHECK(rc == 0 && u == good[i].unit && ns == good[i].ns, "\"%s\": rc %d unit %d ns %lld (%s)",
              good[i].units, rc, (int)u, (long long)ns, rc ? err : "");
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        zf_unit u;
        int64_t ns;
        CHECK(zf_cf_time_units(bad[i], &u, &ns, err, sizeof err) < 0, "\"%s\" accepted", bad[i]);
    }
}

int main(int argc, char **argv)
{
    static const char *const formats[] = {"pandas", "iso", "numpy", "seconds", "raw"};
    if (argc == 3) {
        zf_format fm;
        if (zf_format_parse(argv[1], &fm) != 0)
            return 2;
        run_file(fm, argv[2]);
        return check_summary("test_datetime");
    }
    for (int i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "golden/datetime_%s.txt", formats[i]);
        long n = run_file((zf_format)i, path);
        printf("%s: %ld golden lines\n", path, n);
    }
    test_calendar();
    test_init_and_nat();
    test_bounds_and_runs();
    test_time_units();
    return check_summary("test_datetime");
}
