/* cf_time.c - CF time units "UNIT since DATE" as xarray and pandas read them.
 *
 * xarray/coding/times.py: _unpack_netcdf_time_units (re.match
 * "(.+) since (.+)", both parts stripped, _ensure_padded_year),
 * _netcdf_to_numpy_timeunit (lowercase, an "s" appended if missing), then
 * pandas.Timestamp(DATE) made UTC and naive, at ns (time_unit "ns"; a DATE
 * outside the ns range needs cftime).  DATE forms read here: YYYY-M-D, then
 * optionally "T" or spaces and H[:M[:S[.fraction]]], then optionally spaces
 * and Z, UTC, GMT or an offset +HH, +HHMM, +HH:MM (what pandas accepts of
 * these; other forms pandas reads through dateutil are not supported). */
#include "zarr/cf.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "text/datetime.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))
#define NS_PER_S 1000000000LL

/* the numpy unit of a CF time unit word (lowercased, "s" appended if missing) */
static int time_unit(const char *s, size_t n, zf_unit *out)
{
    static const struct {
        const char *name;
        zf_unit unit;
    } names[] = {{"days", ZF_UNIT_D},           {"hours", ZF_UNIT_h},
                 {"minutes", ZF_UNIT_m},        {"seconds", ZF_UNIT_s},
                 {"milliseconds", ZF_UNIT_ms},  {"microseconds", ZF_UNIT_us},
                 {"nanoseconds", ZF_UNIT_ns}};
    char w[16];
    if (n == 0 || n + 2 > sizeof w)
        return 0;
    for (size_t i = 0; i < n; i++)
        w[i] = (char)tolower((unsigned char)s[i]);
    w[n] = '\0';
    if (w[n - 1] != 's')
        memcpy(w + n, "s", 2);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(w, names[i].name)) {
            *out = names[i].unit;
            return 1;
        }
    return 0;
}

/* a number of 1..max digits at *p; returns the digits read (0: none) */
static int digits(const char **p, const char *end, int max, long *out)
{
    int k = 0;
    long v = 0;
    for (; *p < end && k < max && isdigit((unsigned char)**p); (*p)++, k++)
        v = v * 10 + (**p - '0');
    *out = v;
    return k;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* the UTC offset at p..end in seconds (a time zone designator); 0 if not one */
static int zone(const char *p, const char *end, long *off)
{
    size_t n = (size_t)(end - p);
    *off = 0;
    if ((n == 1 && (*p == 'Z' || *p == 'z')) || (n == 3 && (!memcmp(p, "UTC", 3) ||
                                                            !memcmp(p, "GMT", 3))))
        return 1;
    if (n < 3 || (*p != '+' && *p != '-'))
        return 0;
    long sign = *p++ == '-' ? -1 : 1, h, m = 0;
    if (digits(&p, end, 2, &h) != 2)
        return 0;
    if (p < end && *p == ':')
        p++;
    if (p < end && digits(&p, end, 2, &m) != 2)
        return 0;
    if (p != end || h > 23 || m > 59)
        return 0;
    *off = sign * (h * 3600 + m * 60);
    return 1;
}

static int leap(long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* the time of day "H[:M[:S[.f]]]" at *p: seconds and ns; 0 if malformed */
static int time_of_day(const char **p, const char *end, long *sod, long *ns)
{
    long h, m = 0, s = 0, f = 0;
    int fd = 0;
    if (!digits(p, end, 2, &h))
        return 0;
    if (*p < end && **p == ':' && (++*p, !digits(p, end, 2, &m)))
        return 0;
    if (*p < end && **p == ':' && (++*p, !digits(p, end, 2, &s)))
        return 0;
    if (*p < end && **p == '.') {
        for (++*p; *p < end && isdigit((unsigned char)**p); ++*p)
            if (fd < 9) /* pandas keeps nanoseconds, the rest is cut */
                f = f * 10 + (**p - '0'), fd++;
        for (; fd < 9; fd++)
            f *= 10;
    }
    if (h > 23 || m > 59 || s > 59)
        return 0;
    *sod = h * 3600 + m * 60 + s;
    *ns = f;
    return 1;
}

/* DATE (stripped, [s, end)) as ns since the epoch, UTC; 0 if not understood */
static int ref_date(const char *s, const char *end, zf_i128 *ns)
{
    const char *p = s;
    long y, mo, d, sod = 0, f = 0, off = 0;
    static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (digits(&p, end, 4, &y) != 4 || p == end || *p++ != '-' || !digits(&p, end, 2, &mo) ||
        p == end || *p++ != '-' || !digits(&p, end, 2, &d))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > (long)mdays[mo - 1] + (mo == 2 && leap(y)))
        return 0;
    const char *q = p;
    while (q < end && is_space(*q))
        q++;
    if (p < end && *p == 'T') {
        p++;
        if (!time_of_day(&p, end, &sod, &f))
            return 0;
    } else if (q > p && q < end && isdigit((unsigned char)*q)) {
        p = q;
        if (!time_of_day(&p, end, &sod, &f))
            return 0;
    }
    while (p < end && is_space(*p))
        p++;
    if (p < end && !zone(p, end, &off))
        return 0;
    *ns = (zf_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + sod - off) * NS_PER_S + f;
    return 1;
}

/* Parse CF time units "UNIT since DATE" into the count's unit and DATE in ns. */
int zf_cf_time_units(const char *units, zf_unit *unit, int64_t *epoch_ns, char *err,
                     size_t errcap)
{
    const char *sep = NULL, *end = units + strlen(units);
    for (const char *p = units + (units < end); p < end && (p = strstr(p, " since ")); p++)
        if (p + 7 < end)
            sep = p; /* the greedy (.+): the last " since " with text after it */
    if (!sep || strchr(units, '\n'))
        return ERR(ZF_ECORRUPT, "invalid time units \"%.60s\"", units);
    const char *u = units, *ue = sep, *ds = sep + 7, *de = end;
    while (u < ue && is_space(*u))
        u++;
    while (ue > u && is_space(ue[-1]))
        ue--;
    while (ds < de && is_space(*ds))
        ds++;
    while (de > ds && is_space(de[-1]))
        de--;
    if (!time_unit(u, (size_t)(ue - u), unit))
        return ERR(ZF_EUNSUPPORTED, "time units \"%.60s\": xarray decodes only days, hours, "
                   "minutes, seconds, milliseconds, microseconds and nanoseconds", units);
    zf_i128 ns;
    if (!ref_date(ds, de, &ns))
        return ERR(ZF_EUNSUPPORTED, "time units \"%.60s\": reference date not understood "
                   "(YYYY-MM-DD[ hh[:mm[:ss[.f]]]][ zone] with a four-digit year)", units);
    if (ns <= INT64_MIN || ns > INT64_MAX)
        return ERR(ZF_EUNSUPPORTED, "time units \"%.60s\": reference date outside "
                   "1677-09-21..2262-04-11 (xarray needs cftime for it)", units);
    *epoch_ns = (int64_t)ns;
    return ZF_OK;
}
