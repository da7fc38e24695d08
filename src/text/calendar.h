/* calendar.h - the CF calendars as cftime counts their days.
 *
 * Six calendars (CF conventions 1.9, as cftime 1.6 implements them):
 *   proleptic_gregorian  Gregorian rules for every year; year 0 exists;
 *   standard (gregorian) Julian before 1582-10-15, Gregorian from it
 *                        (1582-10-04 is followed by 1582-10-15); no year 0:
 *                        year -1 precedes year 1, and is a leap year;
 *   julian               every fourth year a leap year; no year 0;
 *   noleap (365_day), all_leap (366_day): every year 365 / 366 days;
 *   360_day              twelve months of 30 days (2015-02-30 is a date).
 * Years are as cftime writes them (no year 0 where the calendar has none).
 * Day numbers count consecutive days: a date plus n days is the date of its
 * day number plus n, as cftime adds a timedelta (add_timedelta).  For
 * proleptic_gregorian, and standard from 1582-10-15, the day number is the
 * count of days since 1970-01-01 (numpy's, pandas').  Exact integer
 * arithmetic for years within +-10^12; pure functions. */
#ifndef ZF_CALENDAR_H
#define ZF_CALENDAR_H

#include <stdint.h>

typedef enum zf_calendar {
    ZF_CAL_PROLEPTIC, /* proleptic_gregorian */
    ZF_CAL_STANDARD,  /* standard, gregorian */
    ZF_CAL_JULIAN,
    ZF_CAL_NOLEAP,    /* noleap, 365_day */
    ZF_CAL_ALL_LEAP,  /* all_leap, 366_day */
    ZF_CAL_360_DAY
} zf_calendar;

/* Microseconds in a day. */
#define ZF_US_PER_DAY INT64_C(86400000000)

/* A reference date: its calendar, day number and microseconds into the day. */
typedef struct zf_calref {
    zf_calendar cal;
    int64_t day;
    int64_t us; /* 0 .. ZF_US_PER_DAY - 1 */
} zf_calref;

/* The calendar of a CF calendar attribute value (any case: "noleap",
 * "365_day", "gregorian", ...); 0, or -1 for a name cftime does not know. */
int zf_calendar_parse(const char *name, zf_calendar *out);

/* The calendar's name as cftime calls it ("standard", "noleap", ...). */
const char *zf_calendar_name(zf_calendar c);

/* Is y-m-d a date of calendar c (y as written)?  1 or 0. */
int zf_calendar_valid(zf_calendar c, int64_t y, unsigned m, unsigned d);

/* The day number of the valid date y-m-d of calendar c. */
int64_t zf_calendar_days(zf_calendar c, int64_t y, unsigned m, unsigned d);

/* The date of day number `days` in calendar c. */
void zf_calendar_date(zf_calendar c, int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* The instant t microseconds after ref: its day number and microseconds of
 * that day (exact for any int64 t). */
static inline void zf_calref_add(const zf_calref *ref, int64_t t, int64_t *day, int64_t *us)
{
    int64_t q = t / ZF_US_PER_DAY, r = t - q * ZF_US_PER_DAY;
    if (r < 0) {
        q--;
        r += ZF_US_PER_DAY;
    }
    r += ref->us;
    if (r >= ZF_US_PER_DAY) {
        q++;
        r -= ZF_US_PER_DAY;
    }
    *day = ref->day + q;
    *us = r;
}

#endif
