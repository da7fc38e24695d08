/* coordtext_num.c - the CSV text of numbers as pandas writes xarray's
 * decoded values: floats as Python / numpy print them, integers, xarray's
 * mask (an empty field) and packing (coordtext.h). */
#include "label/coordtext.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/digits.h"
#include "coordtext_impl.h"

/* ---- floats as Python / numpy print them ------------------------------- */

/* does the decimal text s read back as x (in float32 when single)? */
static int reads_back(const char *s, double x, int single)
{
    return single ? strtof(s, NULL) == (float)x : strtod(s, NULL) == x;
}

/* the digits of m x 10^e without trailing zeros into dig; the decimal
 * exponent of the first digit into *exp10 */
static void set_digits(uint64_t m, int e, char *dig, int *exp10)
{
    int len = snprintf(dig, 24, "%" PRIu64, m);
    *exp10 = e + len - 1;
    while (len > 1 && dig[len - 1] == '0')
        dig[--len] = '\0';
}

/* m x 10^e reads back as x?  (then its digits are set) */
static int try_candidate(uint64_t m, int e, double x, int single, char *dig, int *exp10)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%" PRIu64 "e%d", m, e);
    if (m == 0 || !reads_back(buf, x, single))
        return 0;
    set_digits(m, e, dig, exp10);
    return 1;
}

/* the shortest digits that read back as x (finite, > 0).  Any decimal of at
 * most DBL_DIG (FLT_DIG) digits survives decimal -> binary -> decimal at that
 * precision, so when the shortest is that short, rounding x to DBL_DIG digits
 * gives it with trailing zeros (not so for subnormals: they start at one
 * digit).  Beyond, per precision: the correctly rounded
 * decimal, or a neighbour of it (the rounding interval of a power of two is
 * narrower below than above). */
static void shortest_digits(double x, int single, char *dig, int *exp10)
{
    char buf[48];
    int normal = x >= (single ? FLT_MIN : DBL_MIN); /* subnormals hold fewer digits */
    for (int prec = !normal ? 1 : single ? FLT_DIG : DBL_DIG; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        uint64_t m = (uint64_t)(buf[0] - '0');
        const char *p = buf + 1;
        for (p += *p == '.'; *p >= '0' && *p <= '9'; p++)
            m = m * 10 + (uint64_t)(*p - '0');
        int e = atoi(p + 1) - (prec - 1);
        if (try_candidate(m, e, x, single, dig, exp10) ||
            try_candidate(m - 1, e, x, single, dig, exp10) ||
            try_candidate(m + 1, e, x, single, dig, exp10))
            return;
    }
    set_digits(0, 0, dig, exp10); /* not reached: 17 digits always read back */
}

/* the layout of the digits dig x 10^exp10 shared by Python's repr and
 * numpy's str: scientific (sci: d.ddde+XX) or positional (ddd.ddd, at
 * least one digit after the point) */
static void float_layout(zf_sbuf *out, int neg, const char *dig, int exp10, int sci)
{
    int nd = (int)strlen(dig);
    if (neg)
        zf_sbuf_add(out, "-", 1);
    if (sci) {
        zf_sbuf_add(out, dig, 1);
        if (nd > 1) {
            zf_sbuf_add(out, ".", 1);
            zf_sbuf_add(out, dig + 1, (size_t)nd - 1);
        }
        zf_sbuf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        zf_sbuf_add(out, "0.", 2);
        for (int i = -1; i > exp10; i--)
            zf_sbuf_add(out, "0", 1);
        zf_sbuf_add(out, dig, (size_t)nd);
    } else {
        int whole = exp10 + 1;
        zf_sbuf_add(out, dig, (size_t)(nd < whole ? nd : whole));
        for (int i = nd; i < whole; i++)
            zf_sbuf_add(out, "0", 1);
        zf_sbuf_add(out, ".", 1);
        if (nd > whole)
            zf_sbuf_add(out, dig + whole, (size_t)(nd - whole));
        else
            zf_sbuf_add(out, "0", 1);
    }
}

static void float_text(zf_sbuf *out, double x, int single)
{
    if (isnan(x)) {
        zf_sbuf_add(out, "nan", 3);
        return;
    }
    if (isinf(x)) {
        zf_sbuf_printf(out, "%sinf", x < 0 ? "-" : "");
        return;
    }
    char dig[24];
    int exp10 = 0;
    if (x == 0)
        set_digits(0, 0, dig, &exp10);
    else
        shortest_digits(fabs(x), single, dig, &exp10);
    /* positional: Python's repr for -4 <= exp10 < 16; numpy's str(float32)
     * for 1e-4 <= |x| < 1e6 (compared exactly) */
    int sci = single ? x != 0 && (fabs(x) < 1e-4 || fabs(x) >= 1e6) : exp10 < -4 || exp10 >= 16;
    float_layout(out, signbit(x) != 0, dig, exp10, sci);
}

void zf_coordtext_f64(zf_sbuf *out, double x)
{
    float_text(out, x, 0);
}

void zf_coordtext_f32(zf_sbuf *out, float x)
{
    float_text(out, x, 1);
}

/* an integer element's exact value: *neg and magnitude */
static uint64_t elem_integer(zf_elem el, const uint8_t *e, int *neg)
{
    int64_t i = 0;
    uint64_t u = 0;
    switch (el.size) {
    case 1: { int8_t a; uint8_t b; memcpy(&a, e, 1); memcpy(&b, e, 1); i = a; u = b; break; }
    case 2: { int16_t a; uint16_t b; memcpy(&a, e, 2); memcpy(&b, e, 2); i = a; u = b; break; }
    case 4: { int32_t a; uint32_t b; memcpy(&a, e, 4); memcpy(&b, e, 4); i = a; u = b; break; }
    default: memcpy(&i, e, 8); memcpy(&u, e, 8); break;
    }
    *neg = el.kind == ZF_ELEM_INT && i < 0;
    if (el.kind != ZF_ELEM_INT)
        return u;
    return *neg ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
}

/* an element of a number array at e (machine order) as a double */
static double elem_double(zf_elem el, const uint8_t *e)
{
    if (el.kind == ZF_ELEM_FLOAT) {
        if (el.size == 4) {
            float f;
            memcpy(&f, e, 4);
            return f;
        }
        double d;
        memcpy(&d, e, 8);
        return d;
    }
    int neg;
    uint64_t mag = elem_integer(el, e, &neg);
    return neg ? -(double)mag : (double)mag; /* rounds as numpy's astype(float64) */
}

/* does xarray's mask (CFMaskCoder) hide the element? */
static int masked(const zf_cf *cf, zf_elem el, const uint8_t *e)
{
    if (cf->mask_int) {
        int neg;
        uint64_t mag = elem_integer(el, e, &neg);
        if (!neg && mag > INT64_MAX)
            return 0; /* no int64 mask value equals it */
        int64_t v = neg ? -(int64_t)(mag - 1) - 1 : (int64_t)mag;
        for (unsigned i = 0; i < cf->nmask_i; i++)
            if (cf->mask_i[i] == v)
                return 1;
        return 0;
    }
    double d = elem_double(el, e);
    for (unsigned i = 0; i < cf->nmask_f; i++)
        if (cf->mask_f[i] == d)
            return 1;
    return 0;
}

/* one number as xarray decodes it and pandas writes it */
void zf_coordtext_number(zf_sbuf *out, const zf_cf *cf, zf_elem el, const uint8_t *e)
{
    int has_mask = cf->nmask_i + cf->nmask_f > 0;
    if (has_mask && masked(cf, el, e))
        return; /* NaN: an empty field */
    if (cf->pack == ZF_CF_PACK_F64) {
        double y = elem_double(el, e);
        if (cf->has_scale)
            y *= cf->scale;
        if (cf->has_offset)
            y += cf->offset;
        if (!isnan(y))
            zf_coordtext_f64(out, y);
    } else if (el.kind == ZF_ELEM_FLOAT || has_mask) {
        double d = elem_double(el, e);
        if (isnan(d))
            return;
        if (el.kind == ZF_ELEM_FLOAT && el.size == 4)
            zf_coordtext_f32(out, (float)d);
        else
            zf_coordtext_f64(out, d);
    } else {
        int neg;
        uint64_t mag = elem_integer(el, e, &neg);
        char t[24] = "-"; /* (no printf: a coordinate may have millions of labels) */
        zf_sbuf_add(out, t, (neg ? 1 : 0) + zf_u64_text(mag, t + (neg ? 1 : 0)));
    }
}

