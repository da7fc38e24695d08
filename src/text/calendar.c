/* calendar.c - day numbers of the six CF calendars (calendar.h): the
 * Julian and Gregorian ones as eras of 4 and 400 years counted from March
 * (Howard Hinnant's algorithms; the Gregorian one is datetime.c's), the
 * idealised ones by plain division. */
#include "text/calendar.h"

#include <ctype.h>
#include <string.h>

#include "text/datetime.h"

#define DAYS_GREGORIAN_START INT64_C(-141427) /* 1582-10-15, days since 1970-01-01 */
#define JULIAN_SHIFT INT64_C(-719470) /* day number of Julian 0000-03-01 */

static const uint16_t cum_days[2][13] = {
    {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365},
    {0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366}};

static const struct {
    const char *name;
    zf_calendar cal;
} names[] = {{"proleptic_gregorian", ZF_CAL_PROLEPTIC}, {"standard", ZF_CAL_STANDARD},
             {"gregorian", ZF_CAL_STANDARD},            {"julian", ZF_CAL_JULIAN},
             {"noleap", ZF_CAL_NOLEAP},                 {"365_day", ZF_CAL_NOLEAP},
             {"all_leap", ZF_CAL_ALL_LEAP},             {"366_day", ZF_CAL_ALL_LEAP},
             {"360_day", ZF_CAL_360_DAY}};

int zf_calendar_parse(const char *name, zf_calendar *out)
{
    char low[24];
    size_t n = strlen(name);
    if (n >= sizeof low)
        return -1;
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(low, names[i].name)) {
            *out = names[i].cal;
            return 0;
        }
    return -1;
}

const char *zf_calendar_name(zf_calendar c)
{
    static const char *const canon[] = {"proleptic_gregorian", "standard", "julian",
                                        "noleap", "all_leap", "360_day"};
    return (unsigned)c <= ZF_CAL_360_DAY ? canon[c] : "?";
}

/* floor(a / b) for b > 0, and the remainder in [0, b) */
static inline int64_t fdiv(int64_t a, int64_t b, int64_t *rem)
{
    int64_t q = a / b, r = a - q * b;
    if (r < 0) {
        q--;
        r += b;
    }
    *rem = r;
    return q;
}

static int has_year_zero(zf_calendar c)
{
    return c != ZF_CAL_STANDARD && c != ZF_CAL_JULIAN;
}

/* the astronomical year (0 is 1 BC) of a written year y */
static int64_t astro(zf_calendar c, int64_t y)
{
    return !has_year_zero(c) && y < 0 ? y + 1 : y;
}

/* is the astronomical year a a leap year of a Julian (1) or Gregorian (0) calendar? */
static int leap(int julian, int64_t a)
{
    int64_t r4, r100, r400;
    fdiv(a, 4, &r4);
    fdiv(a, 100, &r100);
    fdiv(a, 400, &r400);
    return r4 == 0 && (julian || r100 != 0 || r400 == 0);
}

/* the part of the standard calendar a date (astronomical year) falls in: 1 Julian */
static int standard_is_julian(int64_t a, unsigned m, unsigned d)
{
    return a < 1582 || (a == 1582 && (m < 10 || (m == 10 && d < 15)));
}

int zf_calendar_valid(zf_calendar c, int64_t y, unsigned m, unsigned d)
{
    if (m < 1 || m > 12 || d < 1 || (!has_year_zero(c) && y == 0))
        return 0;
    int64_t a = astro(c, y);
    unsigned len;
    switch (c) {
    case ZF_CAL_360_DAY: len = 30; break;
    case ZF_CAL_NOLEAP: len = cum_days[0][m] - cum_days[0][m - 1]; break;
    case ZF_CAL_ALL_LEAP: len = cum_days[1][m] - cum_days[1][m - 1]; break;
    case ZF_CAL_JULIAN: len = cum_days[leap(1, a)][m] - cum_days[leap(1, a)][m - 1]; break;
    case ZF_CAL_STANDARD:
        if (a == 1582 && m == 10 && d > 4 && d < 15)
            return 0; /* the ten days the reform left out */
        len = cum_days[leap(a < 1582, a)][m] - cum_days[leap(a < 1582, a)][m - 1];
        break;
    default: len = cum_days[leap(0, a)][m] - cum_days[leap(0, a)][m - 1]; break;
    }
    return d <= len;
}

/* the day of the year (0-based) of month m, day d, counted from March 1 */
static int64_t march_doy(unsigned m, unsigned d)
{
    return (153 * (int64_t)(m > 2 ? m - 3 : m + 9) + 2) / 5 + (int64_t)d - 1;
}

static int64_t julian_days(int64_t a, unsigned m, unsigned d)
{
    int64_t yoe, era = fdiv(a - (m <= 2), 4, &yoe);
    return era * 1461 + yoe * 365 + march_doy(m, d) + JULIAN_SHIFT;
}

static void julian_date(int64_t days, int64_t *a, unsigned *m, unsigned *d)
{
    int64_t doe, era = fdiv(days - JULIAN_SHIFT, 1461, &doe);
    int64_t yoe = (doe - doe / 1460) / 365, doy = doe - 365 * yoe, mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *a = era * 4 + yoe + (*m <= 2);
}

/* days of the idealised calendars' years, and the table of their months */
static int64_t ideal_days(zf_calendar c, int64_t a, unsigned m, unsigned d)
{
    if (c == ZF_CAL_360_DAY)
        return a * 360 + (int64_t)(m - 1) * 30 + d - 1;
    int all = c == ZF_CAL_ALL_LEAP;
    return a * (365 + all) + cum_days[all][m - 1] + d - 1;
}

static void ideal_date(zf_calendar c, int64_t days, int64_t *a, unsigned *m, unsigned *d)
{
    int64_t doy;
    if (c == ZF_CAL_360_DAY) {
        *a = fdiv(days, 360, &doy);
        *m = (unsigned)(doy / 30) + 1;
        *d = (unsigned)(doy % 30) + 1;
        return;
    }
    int all = c == ZF_CAL_ALL_LEAP;
    *a = fdiv(days, 365 + all, &doy);
    unsigned k = (unsigned)(doy / 32); /* the month is k + 1 or k + 2 */
    if (doy >= cum_days[all][k + 1])
        k++;
    *m = k + 1;
    *d = (unsigned)(doy - cum_days[all][k]) + 1;
}

int64_t zf_calendar_days(zf_calendar c, int64_t y, unsigned m, unsigned d)
{
    int64_t a = astro(c, y);
    switch (c) {
    case ZF_CAL_JULIAN: return julian_days(a, m, d);
    case ZF_CAL_STANDARD:
        if (standard_is_julian(a, m, d))
            return julian_days(a, m, d);
        return (int64_t)zf_days_from_civil(a, m, d);
    case ZF_CAL_PROLEPTIC: return (int64_t)zf_days_from_civil(a, m, d);
    default: return ideal_days(c, a, m, d);
    }
}

void zf_calendar_date(zf_calendar c, int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t a;
    if (c == ZF_CAL_JULIAN || (c == ZF_CAL_STANDARD && days < DAYS_GREGORIAN_START)) {
        julian_date(days, &a, m, d);
    } else if (c == ZF_CAL_STANDARD || c == ZF_CAL_PROLEPTIC) {
        zf_i128 ya;
        zf_civil_from_days(days, &ya, m, d);
        a = (int64_t)ya;
    } else {
        ideal_date(c, days, &a, m, d);
    }
    *y = !has_year_zero(c) && a <= 0 ? a - 1 : a;
}
