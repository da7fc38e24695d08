/* units.h - the units of numpy.timedelta64 (and datetime64) data types.
 *
 * A stored int64 v of a data type with unit u and scale factor S denotes
 * v * S units; v == ZF_NAT (INT64_MIN) is NaT. */
#ifndef ZF_UNITS_H
#define ZF_UNITS_H

#include <stdint.h>

#define ZF_NAT INT64_MIN

typedef enum zf_unit {
    ZF_UNIT_Y, ZF_UNIT_M, ZF_UNIT_W, ZF_UNIT_D, ZF_UNIT_h, ZF_UNIT_m, ZF_UNIT_s,
    ZF_UNIT_ms, ZF_UNIT_us, ZF_UNIT_ns, ZF_UNIT_ps, ZF_UNIT_fs, ZF_UNIT_as,
    ZF_UNIT_GENERIC
} zf_unit;

typedef struct zf_unit_info {
    const char *name; /* identifier as in metadata */
    const char *word; /* numpy word, with its leading space */
    uint8_t word_len;
    uint8_t exp;   /* sub-second unit: 10^exp per second, else 0 */
    uint32_t secs; /* other units: seconds per unit (Y and M as numpy) */
} zf_unit_info;

/* Facts of each unit, indexed by zf_unit. */
extern const zf_unit_info zf_units[ZF_UNIT_GENERIC + 1];

/* Parse a unit identifier ("Y".."as", "us" or "μs", "generic"); 0 or ZF_EINVAL. */
int zf_unit_parse(const char *s, zf_unit *out);

/* Canonical identifier of a unit ("us" for microseconds, "generic"). */
const char *zf_unit_name(zf_unit u);

#endif
