/* vlen.c - reading vlen-utf8 chunks: a count, then length-prefixed items. */
#include "codec/vlen.h"

#include <stdio.h>

#include "base/err.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* is s[0..n) UTF-8 as Python's strict decoder reads it (no overlong forms,
 * surrogates, or code points beyond U+10FFFF)? */
static int utf8_valid(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (len == 0 || len > n - i)
            return 0;
        uint8_t lo = 0x80, hi = 0xBF; /* the second byte's range */
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
        else if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
        for (size_t k = 1; k < len; k++)
            if (s[i + k] < (k == 1 ? lo : 0x80) || s[i + k] > (k == 1 ? hi : 0xBF))
                return 0;
        i += len;
    }
    return 1;
}

int zf_vlen_begin(zf_vlen_reader *r, const uint8_t *buf, size_t n, uint64_t count, char *err,
                  size_t errcap)
{
    if (n < 4)
        return ERR(ZF_ECORRUPT, "vlen-utf8: %zu bytes, too short for the item count", n);
    uint32_t have = le32(buf);
    if (have != count)
        return ERR(ZF_ECORRUPT, "vlen-utf8: %u items, the chunk holds %llu", have,
                   (unsigned long long)count);
    *r = (zf_vlen_reader){buf, n, 4, count};
    if (count == 0 && n != 4)
        return ERR(ZF_ECORRUPT, "vlen-utf8: %zu bytes after the last item", n - 4);
    return ZF_OK;
}

int zf_vlen_next(zf_vlen_reader *r, const uint8_t **item, size_t *len, char *err, size_t errcap)
{
    if (r->left == 0)
        return ERR(ZF_ECORRUPT, "vlen-utf8: no more items");
    if (r->n - r->pos < 4)
        return ERR(ZF_ECORRUPT, "vlen-utf8: the length of an item runs past the end (at byte %zu)",
                   r->pos);
    uint32_t l = le32(r->buf + r->pos);
    r->pos += 4;
    if (l > r->n - r->pos)
        return ERR(ZF_ECORRUPT, "vlen-utf8: an item of %u bytes at byte %zu runs past the end (%zu)",
                   l, r->pos, r->n);
    if (!utf8_valid(r->buf + r->pos, l))
        return ERR(ZF_ECORRUPT, "vlen-utf8: the item at byte %zu is not UTF-8", r->pos);
    *item = r->buf + r->pos;
    *len = l;
    r->pos += l;
    if (--r->left == 0 && r->pos != r->n)
        return ERR(ZF_ECORRUPT, "vlen-utf8: %zu bytes after the last item", r->n - r->pos);
    return ZF_OK;
}
