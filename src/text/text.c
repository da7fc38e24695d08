/* text.c - format names, and setting up the formatter an array's values need. */
#include "text/text.h"

#include <string.h>

#include "base/err.h"
#include "text/cftime.h"
#include "text/datetime.h"
#include "text/duration.h"

_Static_assert(sizeof(zf_fmt) <= sizeof(zf_text_room) && sizeof(zf_dtfmt) <= sizeof(zf_text_room) &&
                   sizeof(zf_cftfmt) <= sizeof(zf_text_room),
               "zf_text_room holds every formatter");

static const char *const FORMATS[] = {
    [ZF_FORMAT_PANDAS] = "pandas", [ZF_FORMAT_ISO] = "iso", [ZF_FORMAT_NUMPY] = "numpy",
    [ZF_FORMAT_SECONDS] = "seconds", [ZF_FORMAT_RAW] = "raw",
};
#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0])

int zf_format_parse(const char *s, zf_format *out)
{
    if (!s || !out)
        return ZF_EINVAL;
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(s, FORMATS[i]) == 0) {
            *out = (zf_format)i;
            return 0;
        }
    return ZF_EINVAL;
}

const char *zf_format_name(zf_format f)
{
    return (unsigned)f < NFORMATS ? FORMATS[f] : "?";
}

/* Set up the formatter of `values` in r. */
int zf_text_init(zf_text_room *r, zf_values values, zf_format format, zf_unit unit,
                 uint32_t scale, const zf_calref *cal, const char *nat)
{
    if (!r)
        return ZF_EINVAL;
    if (values == ZF_VALUES_CFTIME)
        return zf_cftfmt_init((zf_cftfmt *)(void *)r, format, cal, nat);
    if (values == ZF_VALUES_DATETIME)
        return zf_dtfmt_init((zf_dtfmt *)(void *)r, format, unit, scale, nat);
    return zf_fmt_init((zf_fmt *)(void *)r, format, unit, scale, nat);
}

int zf_text_setup(zf_text *t, const zf_text_ops *ops, zf_format format, const char *nat)
{
    size_t n = 0;
    if (!nat || (unsigned)format > ZF_FORMAT_RAW)
        return ZF_EINVAL;
    while (n <= ZF_NAT_MAX && nat[n])
        n++;
    if (n > ZF_NAT_MAX)
        return ZF_EINVAL;
    t->ops = ops;
    t->format = format;
    t->nat_len = (uint8_t)n;
    memcpy(t->nat, nat, n);
    return 0;
}

uint64_t zf_text_len_each(const zf_text *t, const int64_t *v, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += t->ops->len(t, v[i]);
    return sum;
}

zf_lines zf_text_lines_each(const zf_text *t, const int64_t *v, size_t n, char *out, size_t cap)
{
    zf_lines r = {0, 0, 0};
    size_t room = (t->nat_len > ZF_VALUE_MAX ? t->nat_len : ZF_VALUE_MAX) + 1u;
    for (; r.count < n && cap - r.bytes >= room; r.count++) {
        size_t len = t->ops->value(t, v[r.count], out + r.bytes);
        out[r.bytes + len] = '\n';
        r.last = r.bytes;
        r.bytes += len + 1;
    }
    return r;
}
