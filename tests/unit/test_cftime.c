/* test_cftime.c - CF calendars as cftime decodes them: the golden file
 * (cftime's own reading of "UNIT since DATE", its microseconds of a count,
 * str() and isoformat() of the result: gen_cftime.py), the calendars' day
 * arithmetic against a day-by-day walk, lengths, NaT, the ns-range bounds.
 *
 *   test_cftime              all checks; golden/cftime.txt (cwd tests/)
 *   test_cftime FILE         check one golden file */
#define CHECK_PRINT_MAX 40
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "chunk/epoch.h"
#include "text/cftime.h"
#include "zarr/cf.h"

/* split line at tabs into n fields (the last keeps no newline); 0 or -1 */
static int fields(char *line, char **f, int n)
{
    line[strcspn(line, "\n")] = '\0';
    for (int i = 0; i < n; i++) {
        f[i] = line;
        char *tab = strchr(line, '\t');
        if (!tab)
            return i == n - 1 ? 0 : -1;
        *tab = '\0';
        line = tab + 1;
    }
    return -1;
}

/* the text of v in format under ref, checked against zf_cftfmt_len */
static const char *text_of(const zf_calref *ref, zf_format format, int64_t v, char *buf,
                           const char *where)
{
    zf_cftfmt f;
    CHECK(zf_cftfmt_init(&f, format, ref, "NaT") == 0, "%s: init", where);
    size_t n = zf_text_value(&f.text, v, buf);
    CHECK(n < ZF_VALUE_MAX && n == zf_text_len(&f.text, v), "%s: len %zu vs %zu", where, n,
          zf_text_len(&f.text, v));
    buf[n] = '\0';
    return buf;
}

/* one golden case: CALENDAR UNITS COUNT US STR ISO SECONDS */
static void check_case(char **f, const char *where)
{
    zf_calendar cal;
    zf_cf cf;
    char err[256], buf[ZF_VALUE_MAX + 1];
    memset(&cf, 0, sizeof cf);
    CHECK(zf_calendar_parse(f[0], &cal) == 0, "%s: calendar %s", where, f[0]);
    int rc = zf_cf_cftime_units(f[1], cal, &cf.ref, &cf.us_per, &cf.fix_us, err, sizeof err);
    int is_int = f[2][0] == 'i';
    int64_t n = is_int ? strtoll(f[2] + 2, NULL, 10) : 0, t = 0;
    double x = is_int ? 0.0 : strtod(f[2] + 2, NULL);
    cf.how = ZF_CF_SINCE;
    cf.decoding = ZF_CF_DEC_CFTIME;
    if (rc == 0)
        rc = zf_epoch_cftime(&cf, is_int, n, x, &t);
    if (!strcmp(f[3], "!")) {
        CHECK(rc != 0, "%s: %s %s %s: accepted (%lld us), cftime raises", where, f[0], f[1],
              f[2], (long long)t);
        return;
    }
    CHECK(rc == 0, "%s: %s %s %s: refused: %s", where, f[0], f[1], f[2], err);
    if (rc)
        return;
    CHECK(t == strtoll(f[3], NULL, 10), "%s: %s %s %s: %lld us, cftime %s", where, f[0], f[1],
          f[2], (long long)t, f[3]);
    t = strtoll(f[3], NULL, 10); /* the text of cftime's microseconds */
    CHECK(!strcmp(text_of(&cf.ref, ZF_FORMAT_PANDAS, t, buf, where), f[4]),
          "%s: %s %s %lld: str \"%s\", cftime \"%s\"", where, f[0], f[1], (long long)t, buf, f[4]);
    CHECK(!strcmp(text_of(&cf.ref, ZF_FORMAT_NUMPY, t, buf, where), f[4]), "%s: numpy", where);
    CHECK(!strcmp(text_of(&cf.ref, ZF_FORMAT_ISO, t, buf, where), f[5]),
          "%s: iso \"%s\", cftime \"%s\"", where, buf, f[5]);
    CHECK(!strcmp(text_of(&cf.ref, ZF_FORMAT_SECONDS, t, buf, where), f[6]),
          "%s: seconds \"%s\", want \"%s\"", where, buf, f[6]);
    CHECK(!strcmp(text_of(&cf.ref, ZF_FORMAT_RAW, t, buf, where), f[3]),
          "%s: raw \"%s\", want \"%s\"", where, buf, f[3]);
}

static long run_file(const char *path)
{
    FILE *fp = fopen(path, "r");
    CHECK(fp, "cannot open %s", path);
    if (!fp)
        return -1;
    char line[1024], where[1100];
    long lines = 0;
    while (fgets(line, sizeof line, fp)) {
        char *f[7];
        lines++;
        snprintf(where, sizeof where, "%s:%ld", path, lines);
        if (fields(line, f, 7)) {
            CHECK(0, "%s: malformed line", where);
            continue;
        }
        check_case(f, where);
    }
    fclose(fp);
    return lines;
}

/* month lengths of year y (as written) in calendar c, by validity */
static unsigned year_days(zf_calendar c, int64_t y)
{
    unsigned n = 0;
    for (unsigned m = 1; m <= 12; m++)
        for (unsigned d = 1; d <= 31; d++)
            n += (unsigned)zf_calendar_valid(c, y, m, d);
    return n;
}

/* every calendar: the day numbers of consecutive valid dates are consecutive
 * (a walk over years -3..2 and 1580..1584, and far years), and date() is
 * days()'s inverse */
static void test_walk(void)
{
    static const int64_t starts[] = {-3, 1580, 9998, -1000000, 1000000000};
    for (zf_calendar c = ZF_CAL_PROLEPTIC; c <= ZF_CAL_360_DAY; c++)
        for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
            int64_t prev = 0;
            int first = 1;
            for (int64_t y = starts[s]; y < starts[s] + 6; y++)
                for (unsigned m = 1; m <= 12; m++)
                    for (unsigned d = 1; d <= 31; d++) {
                        if (!zf_calendar_valid(c, y, m, d))
                            continue;
                        int64_t k = zf_calendar_days(c, y, m, d), yy;
                        unsigned mm, dd;
                        CHECK(first || k == prev + 1, "%s %lld-%u-%u: day %lld after %lld",
                              zf_calendar_name(c), (long long)y, m, d, (long long)k,
                              (long long)prev);
                        zf_calendar_date(c, k, &yy, &mm, &dd);
                        CHECK(yy == y && mm == m && dd == d, "%s day %lld: %lld-%u-%u, want "
                              "%lld-%u-%u", zf_calendar_name(c), (long long)k, (long long)yy, mm,
                              dd, (long long)y, m, d);
                        prev = k;
                        first = 0;
                    }
        }
}

/* the rules: leap years, year zero, the 1582 reform, day numbers of known dates */
static void test_rules(void)
{
    CHECK(year_days(ZF_CAL_NOLEAP, 2000) == 365 && year_days(ZF_CAL_ALL_LEAP, 2001) == 366 &&
          year_days(ZF_CAL_360_DAY, 2000) == 360, "idealised years");
    CHECK(year_days(ZF_CAL_JULIAN, 1900) == 366 && year_days(ZF_CAL_PROLEPTIC, 1900) == 365 &&
          year_days(ZF_CAL_STANDARD, 1500) == 366 && year_days(ZF_CAL_STANDARD, 1700) == 365,
          "leap centuries");
    CHECK(year_days(ZF_CAL_STANDARD, 1582) == 355, "1582 lost ten days");
    CHECK(year_days(ZF_CAL_STANDARD, 0) == 0 && year_days(ZF_CAL_JULIAN, 0) == 0 &&
          year_days(ZF_CAL_PROLEPTIC, 0) == 366 && year_days(ZF_CAL_NOLEAP, 0) == 365,
          "year zero");
    CHECK(year_days(ZF_CAL_JULIAN, -1) == 366 && year_days(ZF_CAL_STANDARD, -5) == 366,
          "1 BC and 5 BC are Julian leap years");
    CHECK(zf_calendar_days(ZF_CAL_STANDARD, 1582, 10, 15) ==
              zf_calendar_days(ZF_CAL_STANDARD, 1582, 10, 4) + 1, "the reform");
    CHECK(zf_calendar_days(ZF_CAL_STANDARD, 1970, 1, 1) == 0 &&
          zf_calendar_days(ZF_CAL_PROLEPTIC, 1582, 10, 15) == -141427 &&
          zf_calendar_days(ZF_CAL_JULIAN, 1582, 10, 5) == -141427, "days since 1970");
    CHECK(zf_calendar_days(ZF_CAL_STANDARD, 1, 1, 1) == zf_calendar_days(ZF_CAL_STANDARD, -1, 12, 31) + 1,
          "year -1 precedes year 1");
    zf_calendar c;
    CHECK(zf_calendar_parse("Gregorian", &c) == 0 && c == ZF_CAL_STANDARD, "gregorian");
    CHECK(zf_calendar_parse("365_DAY", &c) == 0 && c == ZF_CAL_NOLEAP, "365_day");
    CHECK(zf_calendar_parse("none", &c) < 0 && zf_calendar_parse("tai", &c) < 0 &&
          zf_calendar_parse("", &c) < 0, "unknown calendars");
}

/* the text beyond the golden cases: NaT, far years, the largest values */
static void test_text(void)
{
    zf_calref ref = {ZF_CAL_NOLEAP, 0, 0}; /* 0000-01-01 */
    char buf[ZF_VALUE_MAX + 1];
    zf_cftfmt f;
    CHECK(zf_cftfmt_init(&f, ZF_FORMAT_PANDAS, &ref, "missing") == 0, "init");
    CHECK(zf_text_value(&f.text, ZF_NAT, buf) == 7 && !memcmp(buf, "missing", 7) &&
          zf_text_len(&f.text, ZF_NAT) == 7, "NaT");
    CHECK(!strcmp(text_of(&ref, ZF_FORMAT_PANDAS, INT64_MAX, buf, "max"),
                  "292471-03-18 04:00:54.775807"), "max: %s", buf);
    CHECK(!strcmp(text_of(&ref, ZF_FORMAT_PANDAS, INT64_MIN + 1, buf, "min"),
                  "-292472-10-16 19:59:05.224193"), "min: %s", buf);
    CHECK(!strcmp(text_of(&ref, ZF_FORMAT_SECONDS, INT64_MIN + 1, buf, "min s"),
                  "-9223372036854.775807"), "min seconds: %s", buf);
    CHECK(!strcmp(text_of(&ref, ZF_FORMAT_RAW, -5, buf, "raw"), "-5"), "raw: %s", buf);
    zf_calref far = {ZF_CAL_360_DAY, zf_calendar_days(ZF_CAL_360_DAY, -5, 2, 30), 1};
    CHECK(!strcmp(text_of(&far, ZF_FORMAT_ISO, 0, buf, "far"), "-0005-02-30T00:00:00.000001"),
          "negative year: %s", buf);
    CHECK(zf_cftfmt_init(&f, ZF_FORMAT_PANDAS, &(zf_calref){ZF_CAL_NOLEAP, 0, ZF_US_PER_DAY},
                         "NaT") == ZF_EINVAL, "us of day out of range");
}

/* the datetime64[ns] decoding through cftime: inside 1677-09-21T00:12:43.145225
 * ..2262-04-11T23:47:16.854775 ns since 1970, outside 1 (cftime objects) */
static void test_ns_range(void)
{
    zf_cf cf;
    char err[160];
    memset(&cf, 0, sizeof cf);
    cf.how = ZF_CF_SINCE;
    cf.decoding = ZF_CF_DEC_CFTIME_NS;
    CHECK(zf_cf_cftime_units("microseconds since 2262-04-11 23:47:16", ZF_CAL_STANDARD, &cf.ref,
                             &cf.us_per, &cf.fix_us, err, sizeof err) == 0, "units: %s", err);
    int64_t t;
    CHECK(zf_epoch_cftime(&cf, 1, 854775, 0.0, &t) == 0 && t == INT64_C(9223372036854775000),
          "last");
    CHECK(zf_epoch_cftime(&cf, 1, 854776, 0.0, &t) == 1, "after the last");
    CHECK(zf_cf_cftime_units("microseconds since 1677-09-21 00:12:43", ZF_CAL_PROLEPTIC, &cf.ref,
                             &cf.us_per, &cf.fix_us, err, sizeof err) == 0, "units: %s", err);
    CHECK(zf_epoch_cftime(&cf, 1, 145225, 0.0, &t) == 0 && t == INT64_C(-9223372036854775000),
          "first");
    CHECK(zf_epoch_cftime(&cf, 1, 145224, 0.0, &t) == 1, "xarray's lower bound");
    CHECK(zf_epoch_cftime(&cf, 0, 0, 0.0 / 0.0, &t) == 0 && t == ZF_NAT, "NaN");
    CHECK(zf_cf_cftime_units("days since 1582-10-10", ZF_CAL_STANDARD, &cf.ref, &cf.us_per,
                             &cf.fix_us, err, sizeof err) == ZF_EUNSUPPORTED, "in the gap");
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        run_file(argv[1]);
        return check_summary("test_cftime");
    }
    long n = run_file("golden/cftime.txt");
    printf("golden/cftime.txt: %ld golden lines\n", n);
    test_walk();
    test_rules();
    test_text();
    test_ns_range();
    return check_summary("test_cftime");
}
