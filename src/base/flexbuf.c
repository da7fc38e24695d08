/* flexbuf.c - reading FlexBuffers in place, every access checked (flexbuf.h).
 *
 * Layout (FlexBuffers internals): the last byte is the root's width, the
 * one before it the root's packed type (type << 2 | log2 of the width of
 * what it points to); offsets are unsigned and point backwards from where
 * they are stored.  A string's length precedes its bytes (which end in a
 * NUL); a map's values are preceded by the offset to its keys vector, that
 * vector's width and the count, and followed by one packed type byte per
 * value. */
#include "base/flexbuf.h"

#include <string.h>

#include "base/err.h"

/* the unsigned integer of width w at pos, if it lies inside the buffer */
static int read_uint(const uint8_t *buf, size_t len, size_t pos, unsigned w, uint64_t *out)
{
    if (pos > len || w > len - pos)
        return ZF_ECORRUPT;
    uint64_t v = 0;
    for (unsigned i = w; i-- > 0;)
        v = v << 8 | buf[pos + i];
    *out = v;
    return ZF_OK;
}

/* where the value v, stored by offset, points */
static int indirect(const zf_flex *v, size_t *target)
{
    uint64_t off;
    int rc = read_uint(v->buf, v->len, v->pos, v->parent_width, &off);
    if (rc != ZF_OK || off > v->pos)
        return ZF_ECORRUPT;
    *target = v->pos - (size_t)off;
    return ZF_OK;
}

/* a value stored in slot pos of width w, with the packed type byte packed */
static zf_flex value_at(const zf_flex *parent, size_t pos, unsigned w, uint8_t packed)
{
    return (zf_flex){parent->buf, parent->len, pos, w, packed >> 2, 1u << (packed & 3)};
}

int zf_flex_root(const uint8_t *buf, size_t len, zf_flex *out)
{
    if (len < 3)
        return ZF_ECORRUPT;
    unsigned w = buf[len - 1];
    if ((w != 1 && w != 2 && w != 4 && w != 8) || len < 2 + (size_t)w)
        return ZF_ECORRUPT;
    zf_flex whole = {buf, len, 0, w, 0, 1};
    *out = value_at(&whole, len - 2 - w, w, buf[len - 2]);
    return ZF_OK;
}

/* a map's values (*vals), count and the width of its slots */
static int map_parts(const zf_flex *map, size_t *vals, size_t *count)
{
    uint64_t n;
    size_t w = map->width;
    if (map->type != ZF_FLEX_MAP || indirect(map, vals) != ZF_OK || *vals < 3 * w ||
        read_uint(map->buf, map->len, *vals - w, (unsigned)w, &n) != ZF_OK)
        return ZF_ECORRUPT;
    /* the values and their type bytes must lie inside the buffer */
    if (n > (map->len - *vals) / (w + 1))
        return ZF_ECORRUPT;
    *count = (size_t)n;
    return ZF_OK;
}

int zf_flex_map_size(const zf_flex *map, size_t *count)
{
    size_t vals;
    return map_parts(map, &vals, count);
}

/* the NUL-terminated key stored at pos */
static int key_at(const uint8_t *buf, size_t len, size_t pos, const char **key, size_t *n)
{
    if (pos >= len)
        return ZF_ECORRUPT;
    const uint8_t *end = memchr(buf + pos, 0, len - pos);
    if (!end)
        return ZF_ECORRUPT;
    *key = (const char *)buf + pos;
    *n = (size_t)(end - (buf + pos));
    return ZF_OK;
}

int zf_flex_map_at(const zf_flex *map, size_t i, const char **key, size_t *n, zf_flex *val)
{
    size_t vals, count, w = map->width;
    uint64_t kw, koff, kcount, off;
    int rc = map_parts(map, &vals, &count);
    if (rc != ZF_OK || i >= count)
        return ZF_ECORRUPT;
    /* the keys: a vector of offsets, its offset and width before the count */
    size_t at = vals - 3 * w;
    if (read_uint(map->buf, map->len, at, (unsigned)w, &koff) != ZF_OK || koff > at ||
        read_uint(map->buf, map->len, vals - 2 * w, (unsigned)w, &kw) != ZF_OK ||
        (kw != 1 && kw != 2 && kw != 4 && kw != 8))
        return ZF_ECORRUPT;
    size_t keys = at - (size_t)koff;
    if (keys < kw || read_uint(map->buf, map->len, keys - kw, (unsigned)kw, &kcount) != ZF_OK ||
        kcount != count)
        return ZF_ECORRUPT;
    size_t slot = keys + i * kw;
    if (read_uint(map->buf, map->len, slot, (unsigned)kw, &off) != ZF_OK || off > slot ||
        key_at(map->buf, map->len, slot - (size_t)off, key, n) != ZF_OK)
        return ZF_ECORRUPT;
    *val = value_at(map, vals + i * w, (unsigned)w, map->buf[vals + count * w + i]);
    return ZF_OK;
}

int zf_flex_map_get(const zf_flex *map, const char *key, zf_flex *val)
{
    size_t count, want = strlen(key);
    int rc = zf_flex_map_size(map, &count);
    for (size_t i = 0; rc == ZF_OK && i < count; i++) {
        const char *k;
        size_t n;
        if ((rc = zf_flex_map_at(map, i, &k, &n, val)) == ZF_OK && n == want && !memcmp(k, key, n))
            return ZF_OK;
    }
    return rc == ZF_OK ? ZF_ENOTFOUND : rc;
}

int zf_flex_string(const zf_flex *v, const char **s, size_t *n)
{
    size_t target;
    uint64_t count;
    if (v->type == ZF_FLEX_KEY)
        return indirect(v, &target) == ZF_OK ? key_at(v->buf, v->len, target, s, n) : ZF_ECORRUPT;
    if (v->type != ZF_FLEX_STRING || indirect(v, &target) != ZF_OK || target < v->width ||
        read_uint(v->buf, v->len, target - v->width, v->width, &count) != ZF_OK ||
        count >= v->len - target) /* the bytes and their NUL */
        return ZF_ECORRUPT;
    *s = (const char *)v->buf + target;
    *n = (size_t)count;
    return ZF_OK;
}
