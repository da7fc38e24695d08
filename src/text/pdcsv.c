/* pdcsv.c - time values as pandas' DataFrame.to_csv writes a column of them. */
#include "text/pdcsv.h"

#include <string.h>

#include "base/digits.h"
#include "base/err.h"
#include "text/datetime.h"

#define NS_PER_S INT64_C(1000000000)
#define NS_PER_DAY (INT64_C(86400) * NS_PER_S)

int zf_pdcsv_init(zf_pdcsv *c, zf_values values, zf_unit unit, uint32_t scale)
{
    c->months = 0;
    if (values == ZF_VALUES_CFTIME)
        return ZF_EUNSUPPORTED; /* cftime objects: each value's own str() */
    if (values == ZF_VALUES_DATETIME && (unit == ZF_UNIT_Y || unit == ZF_UNIT_M) && scale) {
        c->values = values; /* calendar months: pandas holds them as seconds */
        c->ns_per_tick = 0;
        c->months = (int64_t)scale * (unit == ZF_UNIT_Y ? 12 : 1);
        return ZF_OK;
    }
    if (unit < ZF_UNIT_W || unit > ZF_UNIT_ns || scale == 0)
        return ZF_EUNSUPPORTED;
    const zf_unit_info *u = &zf_units[unit];
    int64_t per = u->exp ? (int64_t)zf_p10[9 - u->exp] : (int64_t)u->secs * NS_PER_S;
    if (per > (INT64_C(1) << 62) / (int64_t)scale)
        return ZF_EUNSUPPORTED;
    c->values = values;
    c->ns_per_tick = per * (int64_t)scale;
    return ZF_OK;
}

/* the whole days of v (floor) and the nanoseconds into the last one, exactly:
 * in 64 bits when v in ns fits them (every value pandas can hold) */
static zf_i128 split_days(const zf_pdcsv *c, int64_t v, int64_t *rem)
{
    int64_t ns;
    if (c->months) { /* the first of a month: whole days */
        zf_i128 m = (zf_i128)v * c->months, y = m / 12, r = m % 12;
        if (r < 0) {
            y -= 1;
            r += 12;
        }
        *rem = 0;
        return zf_days_from_civil(1970 + y, (unsigned)r + 1, 1);
    }
    if (!__builtin_mul_overflow(v, c->ns_per_tick, &ns)) {
        int64_t q = ns / NS_PER_DAY, r = ns % NS_PER_DAY;
        if (r < 0) {
            q -= 1;
            r += NS_PER_DAY;
        }
        *rem = r;
        return q;
    }
    zf_i128 a = (zf_i128)v * c->ns_per_tick, q = a / NS_PER_DAY, r = a - q * NS_PER_DAY;
    if (r < 0) {
        q -= 1;
        r += NS_PER_DAY;
    }
    *rem = (int64_t)r;
    return q;
}

/* the ZF_PD_* parts of rem ns into a day (each part implies those above it:
 * most values are whole seconds, tested once) */
static unsigned rem_parts(int64_t r)
{
    if (r == 0)
        return 0;
    if (r % NS_PER_S == 0)
        return ZF_PD_SUBDAY;
    if (r % 1000000 == 0)
        return ZF_PD_SUBDAY | ZF_PD_SUBSEC;
    if (r % 1000 == 0)
        return ZF_PD_SUBDAY | ZF_PD_SUBSEC | ZF_PD_SUBMS;
    return ZF_PD_SUBDAY | ZF_PD_SUBSEC | ZF_PD_SUBMS | ZF_PD_SUBUS;
}

/* the ZF_PD_* parts of v (0 for NaT) */
static unsigned value_parts(const zf_pdcsv *c, int64_t v)
{
    if (v == ZF_NAT)
        return 0;
    int64_t r;
    split_days(c, v, &r);
    return rem_parts(r);
}

unsigned zf_pdcsv_parts_of(const zf_pdcsv *c, const int64_t *v, size_t n)
{
    unsigned p = 0;
    if (c->ns_per_tick % NS_PER_DAY == 0) /* whole days, whatever the values */
        return 0;
    for (size_t i = 0; i < n && p != 15u; i++)
        p |= value_parts(c, v[i]);
    return p;
}

zf_pdmode zf_pdcsv_mode(const zf_pdcsv *c, unsigned parts)
{
    if (!(parts & ZF_PD_SUBDAY))
        return ZF_PD_DAYS;
    if (c->values == ZF_VALUES_DURATION) /* pandas: "long", "us" or "all" */
        return !(parts & ZF_PD_SUBSEC) ? ZF_PD_SECS : parts & ZF_PD_SUBUS ? ZF_PD_NS : ZF_PD_US;
    return parts & ZF_PD_SUBUS  ? ZF_PD_NS
         : parts & ZF_PD_SUBMS  ? ZF_PD_US
         : parts & ZF_PD_SUBSEC ? ZF_PD_MS
                                : ZF_PD_SECS;
}

size_t zf_pdcsv_extra(zf_pdmode mode)
{
    static const size_t extra[] = {0, 9, 13, 16, 19}; /* " HH:MM:SS" and ".fff..." */
    return extra[mode];
}

/* the days part: "N days" or the date "YYYY-MM-DD" */
static char *put_days(const zf_pdcsv *c, zf_i128 days, char *p)
{
    if (c->values == ZF_VALUES_DURATION) {
        if (days < 0)
            *p++ = '-';
        p = zf_put_u128(p, days < 0 ? -(zf_u128)days : (zf_u128)days);
        memcpy(p, " days", 5);
        return p + 5;
    }
    zf_i128 y;
    unsigned m, d;
    zf_civil_from_days(days, &y, &m, &d);
    p = zf_put_year(p, y);
    p[0] = '-';
    zf_put2(p + 1, m);
    p[3] = '-';
    zf_put2(p + 4, d);
    return p + 6;
}

size_t zf_pdcsv_text(const zf_pdcsv *c, zf_pdmode mode, int64_t v, char *out)
{
    int64_t r;
    zf_i128 days = split_days(c, v, &r);
    char *p = put_days(c, days, out);
    if (mode == ZF_PD_DAYS)
        return (size_t)(p - out);
    *p++ = ' ';
    if (c->values == ZF_VALUES_DURATION && days < 0)
        *p++ = '+';
    uint32_t sod = (uint32_t)(r / NS_PER_S), frac = (uint32_t)(r % NS_PER_S);
    zf_put2(p, sod / 3600);
    p[2] = ':';
    zf_put2(p + 3, sod / 60 % 60);
    p[5] = ':';
    zf_put2(p + 6, sod % 60);
    p += 8;
    static const unsigned digits[] = {0, 0, 3, 6, 9};
    unsigned nd = digits[mode];
    if (nd) {
        *p++ = '.';
        zf_put_fixed(p, frac / zf_p10[9 - nd], nd);
        p += nd;
    }
    return (size_t)(p - out);
}

/* the base length of a value `days` whole days (and rem ns) from zero */
static size_t days_len(const zf_pdcsv *c, zf_i128 days)
{
    if (c->values == ZF_VALUES_DURATION) { /* "-N days" */
        zf_u128 mag = days < 0 ? -(zf_u128)days : (zf_u128)days;
        return (mag >> 63 ? zf_ndig128(mag) : zf_ndig64((uint64_t)mag)) + 5 + (days < 0);
    }
    if (days >= -719162 && days < 2932897) /* years 0001..9999: "YYYY-MM-DD" */
        return 10;
    char tmp[64];
    return (size_t)(put_days(c, days, tmp) - tmp);
}

/* zf_pdcsv_measure for any unit: each value split exactly (in 128 bits
 * when its nanoseconds overflow 64) */
static void measure_each(const zf_pdcsv *c, const int64_t *v, size_t n, zf_pdsum *s)
{
    uint64_t base = 0, nn = 0, neg = 0;
    unsigned parts = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == ZF_NAT)
            continue;
        int64_t r;
        zf_i128 days = split_days(c, v[i], &r);
        base += days_len(c, days);
        nn++;
        neg += v[i] < 0;
        parts |= rem_parts(r);
    }
    s->base += base;
    s->nn += nn;
    s->neg += c->values == ZF_VALUES_DURATION ? neg : 0;
    s->parts |= parts;
}

/* the ZF_PD_* parts a value of c's ticks can have at all */
static unsigned possible_parts(const zf_pdcsv *c)
{
    return rem_parts(c->ns_per_tick) | ZF_PD_SUBDAY;
}

/* ticks of a second, a millisecond and a microsecond of ticks of t ns (a
 * power of ten up to 1e9, or whole seconds; 0: no such part can happen):
 * then a value has a part below each exactly when it is not a multiple of
 * it.  0 if t is neither (the remainder is taken in ns) */
static int tick_divisors(int64_t t, int64_t d[3])
{
    static const int64_t unit_ns[3] = {NS_PER_S, 1000000, 1000};
    if (t % NS_PER_S != 0 && !(t <= NS_PER_S && zf_p10[zf_ndig64((uint64_t)t) - 1] == (uint64_t)t))
        return 0;
    for (unsigned k = 0; k < 3; k++)
        d[k] = t < unit_ns[k] ? unit_ns[k] / t : 0;
    return 1;
}

/* a value's parts below a day from its ticks alone (tick_divisors d) */
static inline unsigned tick_parts(int64_t x, int64_t per_day, const int64_t d[3])
{
    if (x % per_day == 0)
        return 0;
    unsigned p = ZF_PD_SUBDAY; /* each part implies those above it */
    if (d[0] > 1 && x % d[0]) {
        p |= ZF_PD_SUBSEC;
        if (d[1] > 1 && x % d[1]) {
            p |= ZF_PD_SUBMS;
            if (d[2] > 1 && x % d[2])
                p |= ZF_PD_SUBUS;
        }
    }
    return p;
}

/* where a duration's count of whole days gains a digit, in ticks (a day
 * per_day ticks): x >= up[k] (x >= 0) or x < down[k] (x < 0) for k + 2
 * digits or more; those beyond int64 are left out (no value reaches them) */
typedef struct digit_steps {
    int64_t up[19], down[19];
    unsigned nup, ndown;
} digit_steps;

static void digit_steps_of(int64_t per_day, digit_steps *st)
{
    st->nup = st->ndown = 0;
    for (unsigned k = 1; k < 19 && !__builtin_mul_overflow((int64_t)zf_p10[k], per_day,
                                                           &st->up[st->nup]); k++)
        st->nup++;
    for (unsigned k = 1; k < 19 && !__builtin_mul_overflow(1 - (int64_t)zf_p10[k], per_day,
                                                           &st->down[st->ndown]); k++)
        st->ndown++;
}

/* digits of the whole days of a duration of x ticks (as zf_ndig of |floor|) */
static inline unsigned day_digits(int64_t x, const digit_steps *st)
{
    unsigned dg = 1;
    if (x >= 0)
        while (dg <= st->nup && x >= st->up[dg - 1])
            dg++;
    else
        while (dg <= st->ndown && x < st->down[dg - 1])
            dg++;
    return dg;
}

/* floor(x / per_day) */
static inline int64_t floor_days(int64_t x, int64_t per_day)
{
    int64_t q = x / per_day;
    return q - (x % per_day < 0);
}

/* zf_pdcsv_measure where a day is per_day ticks (a constant where inlined):
 * no division but for parts (a multiple test, and only until the run has
 * every part its unit can give) and for the rare time stamp outside years
 * 1..9999; durations' day digits by comparisons */
static inline __attribute__((always_inline)) void measure_ticks(const zf_pdcsv *c,
                                                                const int64_t *v, size_t n,
                                                                int64_t per_day, int durations,
                                                                zf_pdsum *s)
{
    const unsigned all = possible_parts(c);
    int64_t d[3] = {0, 0, 0};
    int by_ticks = tick_divisors(c->ns_per_tick, d);
    digit_steps st;
    int64_t lo = INT64_MIN, hi = INT64_MAX; /* years 0001..9999: [lo, hi] */
    if (durations) {
        digit_steps_of(per_day, &st);
    } else {
        if (__builtin_mul_overflow(INT64_C(-719162), per_day, &lo))
            lo = INT64_MIN;
        if (__builtin_mul_overflow(INT64_C(2932897), per_day, &hi))
            hi = INT64_MAX;
        else
            hi--;
    }
    uint64_t base = 0, nn = 0, neg = 0;
    unsigned parts = s->parts & all;
    for (size_t i = 0; i < n; i++) {
        int64_t x = v[i];
        if (x == ZF_NAT)
            continue;
        nn++;
        if (durations) { /* "-N days" */
            base += day_digits(x, &st) + 5u + (x < 0);
            neg += x < 0;
        } else { /* "YYYY-MM-DD" */
            base += x >= lo && x <= hi ? 10u : days_len(c, floor_days(x, per_day));
        }
        if (parts == all)
            continue;
        if (by_ticks) {
            parts |= tick_parts(x, per_day, d);
        } else { /* (r < per_day: r ns < a day's, no overflow) */
            int64_t r = x - floor_days(x, per_day) * per_day;
            parts |= rem_parts(r * c->ns_per_tick);
        }
    }
    s->base += base;
    s->nn += nn;
    s->neg += neg;
    s->parts |= parts;
}

#define MEASURE_UNITS(DUR)                                                                  \
    switch (per_day) {                                                                      \
    case 86400: measure_ticks(c, v, n, 86400, DUR, s); break;                               \
    case INT64_C(86400000): measure_ticks(c, v, n, INT64_C(86400000), DUR, s); break;       \
    case INT64_C(86400000000): measure_ticks(c, v, n, INT64_C(86400000000), DUR, s); break; \
    case NS_PER_DAY: measure_ticks(c, v, n, NS_PER_DAY, DUR, s); break;                     \
    default: measure_ticks(c, v, n, per_day, DUR, s); break;                                \
    }

void zf_pdcsv_measure(const zf_pdcsv *c, const int64_t *v, size_t n, zf_pdsum *s)
{
    /* a whole number of ticks a day (units h..ns, scales dividing a day):
     * in ticks, the common units with constant divisors */
    if (c->months || c->ns_per_tick > NS_PER_DAY || NS_PER_DAY % c->ns_per_tick) {
        measure_each(c, v, n, s);
        return;
    }
    int64_t per_day = NS_PER_DAY / c->ns_per_tick;
    if (c->values == ZF_VALUES_DURATION)
        MEASURE_UNITS(1)
    else
        MEASURE_UNITS(0)
}

size_t zf_pdcsv_base_len(const zf_pdcsv *c, int64_t v)
{
    int64_t r;
    return days_len(c, split_days(c, v, &r));
}
