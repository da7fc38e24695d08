/* units.c - the timedelta64 units: identifiers, numpy words, sizes. */
#include "text/units.h"

#include <string.h>

#include "base/err.h"

const zf_unit_info zf_units[ZF_UNIT_GENERIC + 1] = {
    [ZF_UNIT_Y] = {"Y", " years", 6, 0, 31556952},
    [ZF_UNIT_M] = {"M", " months", 7, 0, 2629746},
    [ZF_UNIT_W] = {"W", " weeks", 6, 0, 604800},
    [ZF_UNIT_D] = {"D", " days", 5, 0, 86400},
    [ZF_UNIT_h] = {"h", " hours", 6, 0, 3600},
    [ZF_UNIT_m] = {"m", " minutes", 8, 0, 60},
    [ZF_UNIT_s] = {"s", " seconds", 8, 0, 1},
    [ZF_UNIT_ms] = {"ms", " milliseconds", 13, 3, 0},
    [ZF_UNIT_us] = {"us", " microseconds", 13, 6, 0},
    [ZF_UNIT_ns] = {"ns", " nanoseconds", 12, 9, 0},
    [ZF_UNIT_ps] = {"ps", " picoseconds", 12, 12, 0},
    [ZF_UNIT_fs] = {"fs", " femtoseconds", 13, 15, 0},
    [ZF_UNIT_as] = {"as", " attoseconds", 12, 18, 0},
    [ZF_UNIT_GENERIC] = {"generic", " generic time units", 19, 0, 0},
};
#define NUNITS (sizeof zf_units / sizeof zf_units[0])

/* Parse a unit identifier ("Y".."as", "us" or "μs", "generic"); 0 or ZF_EINVAL. */
int zf_unit_parse(const char *s, zf_unit *out)
{
    if (!s || !out)
        return ZF_EINVAL;
    if (strcmp(s, "\xce\xbcs") == 0) { /* U+03BC GREEK SMALL LETTER MU, as numpy */
        *out = ZF_UNIT_us;
        return 0;
    }
    for (size_t i = 0; i < NUNITS; i++)
        if (strcmp(s, zf_units[i].name) == 0) {
            *out = (zf_unit)i;
            return 0;
        }
    return ZF_EINVAL;
}

/* Canonical identifier of a unit ("us" for microseconds, "generic"). */
const char *zf_unit_name(zf_unit u)
{
    return (unsigned)u < NUNITS ? zf_units[u].name : "?";
}

