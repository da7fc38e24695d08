/* cf_calendar.c - time stamps' calendar and how xarray decodes them: with
 * pandas (datetime64[ns]) or with cftime, and cftime's reading of
 * "UNIT since DATE".
 *
 * xarray (coding/times.py, decode_cf_datetime with use_cftime=None) tries
 * pandas first, for the standard calendars only; it raises for a DATE or a
 * UNIT it cannot read, a DATE outside the ns range or (standard, gregorian)
 * before 1582-10-15, or a value outside the ns range, and xarray then calls
 * cftime.num2date on the counts made float64: the result stays cftime
 * objects for the other calendars, and for the standard ones when a date
 * lies outside 1677-09-21..2262-04-11; else it becomes datetime64[ns].
 *
 * cftime (_cftime.pyx, 1.6): _datesplit (the first word is the unit,
 * lowercased, the second "since"), _parse_date (ISO8601_REGEX, matched at
 * the start: year [+-]?digits, -M, -D, then optionally any one character,
 * H:M[:S[.fraction]], then optionally one character and Z or +-HH[[:]MM];
 * what follows is ignored), the date checked in its calendar, the zone's
 * offset subtracted. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "text/calendar.h"
#include "cf_impl.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))
#define US_PER_S INT64_C(1000000)
#define YEAR_MAX 2147000000 /* cftime holds years in a C int; the values add at most 292,278 */

/* cftime's UNIT_CONVERSION_FACTORS: microseconds per unit */
static const struct {
    const char *name;
    int64_t us;
} cft_units[] = {
    {"microseconds", 1}, {"microsecond", 1}, {"microsec", 1}, {"microsecs", 1},
    {"milliseconds", 1000}, {"millisecond", 1000}, {"millisec", 1000}, {"millisecs", 1000},
    {"msec", 1000}, {"msecs", 1000}, {"ms", 1000},
    {"seconds", US_PER_S}, {"second", US_PER_S}, {"sec", US_PER_S}, {"secs", US_PER_S},
    {"s", US_PER_S},
    {"minutes", 60 * US_PER_S}, {"minute", 60 * US_PER_S}, {"min", 60 * US_PER_S},
    {"mins", 60 * US_PER_S},
    {"hours", 3600 * US_PER_S}, {"hour", 3600 * US_PER_S}, {"hr", 3600 * US_PER_S},
    {"hrs", 3600 * US_PER_S}, {"h", 3600 * US_PER_S},
    {"day", 86400 * US_PER_S}, {"days", 86400 * US_PER_S}, {"d", 86400 * US_PER_S},
    {"month", 30 * 86400 * US_PER_S}, {"months", 30 * 86400 * US_PER_S},
    {"common_year", 365 * 86400 * US_PER_S}, {"common_years", 365 * 86400 * US_PER_S},
};

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* the microseconds per unit of cftime's unit word w (lowercased) in calendar
 * c; 0 if cftime refuses it.  *fix: ...000001 / ...999999 us are floored /
 * ceiled (cast_to_int, cftime issue 187: every unit but ms and us) */
static int64_t unit_us(const char *w, zf_calendar c, int *fix)
{
    for (size_t i = 0; i < sizeof cft_units / sizeof cft_units[0]; i++)
        if (!strcmp(w, cft_units[i].name)) {
            if ((strstr(w, "month") && c != ZF_CAL_360_DAY) ||
                (strstr(w, "common") && c != ZF_CAL_NOLEAP))
                return 0;
            *fix = cft_units[i].us >= US_PER_S;
            return cft_units[i].us;
        }
    return 0;
}

/* ---- _parse_date: ISO8601_REGEX as Python's re matches it ------------- */

typedef struct isodate {
    long long year;
    int month, day, hour, minute, second; /* -1: absent */
    int64_t us;
    int zone_min; /* the zone's offset in minutes */
} isodate;

/* 1..max digits at s[*i] (greedy); their value, or -1 if none */
static long long digits(const char *s, size_t *i, int max)
{
    long long v = 0;
    int k = 0;
    for (; k < max && isdigit((unsigned char)s[*i]); k++, (*i)++)
        v = v * 10 + (s[*i] - '0');
    return k ? v : -1;
}

/* "hh:mm" (each 1-2 digits, the hour backing off to one digit when two are
 * not followed by ':'), then optionally ":ss[.fraction]", at s[*i] */
static int time_part(const char *s, size_t *i, isodate *t)
{
    size_t j = *i;
    int hl = isdigit((unsigned char)s[j]) && isdigit((unsigned char)s[j + 1]) && s[j + 2] == ':'
                 ? 2 : isdigit((unsigned char)s[j]) && s[j + 1] == ':' ? 1 : 0;
    if (!hl || !isdigit((unsigned char)s[j + hl + 1]))
        return 0;
    t->hour = (int)digits(s, &j, hl);
    j++;
    t->minute = (int)digits(s, &j, 2);
    if (s[j] == ':' && isdigit((unsigned char)s[j + 1])) {
        j++;
        t->second = (int)digits(s, &j, 2);
        if (s[j] == '.' && isdigit((unsigned char)s[j + 1])) {
            char frac[40] = "0.";
            size_t k = 2;
            for (j++; isdigit((unsigned char)s[j]); j++)
                if (k + 1 < sizeof frac) /* more digits cannot change float("0.%s") */
                    frac[k++] = s[j];
            frac[k] = '\0';
            t->us = (int64_t)(strtod(frac, NULL) * 1e6); /* int(float("0.%s") * 1e6) */
        }
    }
    *i = j;
    return 1;
}

/* Z or [-+]HH[:MM|MM] at s[*i]: its offset in minutes; 0 if not a zone */
static int zone_part(const char *s, size_t i, int *min)
{
    if (s[i] == 'Z') {
        *min = 0;
        return 1;
    }
    if ((s[i] != '+' && s[i] != '-') || !isdigit((unsigned char)s[i + 1]) ||
        !isdigit((unsigned char)s[i + 2]))
        return 0;
    int h = (s[i + 1] - '0') * 10 + (s[i + 2] - '0'), m = 0;
    size_t j = i + 3;
    if (s[j] == ':' && isdigit((unsigned char)s[j + 1]) && isdigit((unsigned char)s[j + 2]))
        m = (s[j + 1] - '0') * 10 + (s[j + 2] - '0');
    else if (isdigit((unsigned char)s[j]) && isdigit((unsigned char)s[j + 1]))
        m = (s[j] - '0') * 10 + (s[j + 1] - '0');
    *min = s[i] == '-' ? -(h * 60 + m) : h * 60 + m;
    return 1;
}

/* match ISO8601_REGEX at the start of s (NUL-terminated, stripped): 0 if
 * the year or month or day is missing (cftime then fails) */
static int parse_date(const char *s, isodate *t)
{
    size_t i = 0;
    *t = (isodate){0, -1, -1, 0, 0, 0, 0, 0};
    int neg = s[0] == '-';
    i += s[0] == '+' || s[0] == '-';
    size_t y0 = i;
    while (isdigit((unsigned char)s[i]) && i - y0 < 12)
        t->year = t->year * 10 + (s[i++] - '0');
    if (i == y0 || isdigit((unsigned char)s[i]))
        return 0;
    t->year = neg ? -t->year : t->year;
    if (s[i] != '-' || (i++, t->month = (int)digits(s, &i, 2)) < 0)
        return 0;
    if (s[i] != '-' || (i++, t->day = (int)digits(s, &i, 2)) < 0)
        return 0;
    if (s[i] && s[i] != '\n') { /* "(?P<separator1>.)": any character but a newline */
        size_t j = i + 1;
        if (time_part(s, &j, t))
            i = j;
    }
    /* "(?P<separator2>.?)" tries one character first, then none */
    if (!(s[i] && s[i] != '\n' && zone_part(s, i + 1, &t->zone_min)))
        zone_part(s, i, &t->zone_min);
    return 1;
}

/* The reference date of "UNIT since DATE" as cftime reads it in calendar c:
 * ref, microseconds per unit, and whether issue 187's fix applies.  0, or
 * ZF_EUNSUPPORTED with a reason (cftime raises). */
int zf_cf_cftime_units(const char *units, zf_calendar c, zf_calref *ref, int64_t *us_per,
                       int *fix, char *err, size_t errcap)
{
    char word[16], since[8], rest[128];
    const char *p = units;
    size_t k = 0;
    while (is_space(*p))
        p++;
    for (; *p && !is_space(*p); p++)
        if (k + 1 < sizeof word)
            word[k++] = (char)tolower((unsigned char)*p);
    word[k] = '\0';
    for (k = 0; is_space(*p); p++)
        ;
    for (; *p && !is_space(*p) && k + 1 < sizeof since; p++)
        since[k++] = (char)tolower((unsigned char)*p);
    since[k] = '\0';
    while (is_space(*p))
        p++;
    size_t n = strlen(p);
    while (n && is_space(p[n - 1]))
        n--;
    if (strcmp(since, "since") || !n || n >= sizeof rest)
        return ERR(ZF_EUNSUPPORTED, "time units \"%.60s\": not \"UNIT since DATE\" as cftime "
                   "reads it", units);
    if (!(*us_per = unit_us(word, c, fix)))
        return ERR(ZF_EUNSUPPORTED, "time units \"%.60s\": cftime does not decode \"%s\" in the "
                   "%s calendar", units, word, zf_calendar_name(c));
    memcpy(rest, p, n);
    rest[n] = '\0';
    isodate t;
    if (!parse_date(rest, &t))
        return ERR(ZF_EUNSUPPORTED, "time units \"%.60s\": cftime cannot read the reference "
                   "date", units);
    if (t.year < -YEAR_MAX || t.year > YEAR_MAX || !zf_calendar_valid(c, t.year, (unsigned)t.month,
                                                                       (unsigned)t.day) ||
        t.hour > 23 || t.minute > 59 || t.second > 59)
        return ERR(ZF_EUNSUPPORTED, "time units \"%.60s\": the reference date is not a date of "
                   "the %s calendar (cftime raises)", units, zf_calendar_name(c));
    ref->cal = c;
    ref->day = zf_calendar_days(c, t.year, (unsigned)t.month, (unsigned)t.day);
    ref->us = 0;
    int64_t at = ((int64_t)t.hour * 3600 + t.minute * 60 + t.second) * US_PER_S + t.us -
                 (int64_t)t.zone_min * 60 * US_PER_S; /* basedate -= the zone's offset */
    zf_calref_add(ref, at, &ref->day, &ref->us);
    return ZF_OK;
}

/* ---- which decoding xarray uses ----------------------------------------- */

/* the calendar attribute (absent: standard) into cf->cal and cf->calendar;
 * ZF_EUNSUPPORTED for one neither pandas nor cftime decodes */
static int parse_calendar(zf_cf *cf, const cJSON *attrs, char *err, size_t errcap)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(attrs, "calendar");
    cf->calendar[0] = '\0';
    cf->cal = ZF_CAL_STANDARD;
    if (!c)
        return ZF_OK;
    if (!cJSON_IsString(c))
        return ERR(ZF_ECORRUPT, "the calendar attribute is not a string");
    if (zf_calendar_parse(c->valuestring, &cf->cal))
        return ERR(ZF_EUNSUPPORTED, "calendar \"%.30s\" (neither pandas nor cftime decodes it)",
                   c->valuestring);
    snprintf(cf->calendar, sizeof cf->calendar, "%s", c->valuestring);
    return ZF_OK;
}

int zf_cf_since(zf_cf *cf, const cJSON *attrs, const char *units, char *err, size_t errcap)
{
    int rc = parse_calendar(cf, attrs, err, errcap);
    if (rc)
        return rc;
    char perr[160];
    int standard = cf->cal == ZF_CAL_STANDARD || cf->cal == ZF_CAL_PROLEPTIC;
    /* pandas: a DATE within int64 ns, so after 1582-10-15 too */
    int pandas = standard && zf_cf_time_units(units, &cf->src, &cf->epoch_ns, perr, sizeof perr) == 0;
    int cft = zf_cf_cftime_units(units, cf->cal, &cf->ref, &cf->us_per, &cf->fix_us, err, errcap) == 0;
    if (!pandas && !cft)
        return ZF_EUNSUPPORTED; /* cftime's reason in err: xarray raises too */
    cf->decoding = pandas ? ZF_CF_DEC_PANDAS : standard ? ZF_CF_DEC_CFTIME_NS : ZF_CF_DEC_CFTIME;
    cf->may_cftime = standard && cft; /* a value outside the ns range: cftime objects */
    if (!pandas)
        cf->src = ZF_UNIT_us; /* cftime's counts: cf->us_per microseconds each */
    return ZF_OK;
}

void zf_cf_cftime(const zf_cf *d, zf_cf *out)
{
    *out = *d;
    out->decoding = ZF_CF_DEC_CFTIME;
    out->may_cftime = 0;
    out->unit = ZF_UNIT_us;
    out->src = ZF_UNIT_us;
}
