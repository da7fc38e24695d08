/* text.c - format names, shared by every element type's formatter. */
#include "text/text.h"

#include <string.h>

#include "base/err.h"

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
