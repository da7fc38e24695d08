/* flatbuf.c - reading FlatBuffers in place, every access bounds-checked (flatbuf.h). */
#include "base/flatbuf.h"

#include "base/err.h"

uint16_t zf_fb_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t zf_fb_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t zf_fb_le64(const uint8_t *p)
{
    return (uint64_t)zf_fb_le32(p) | (uint64_t)zf_fb_le32(p + 4) << 32;
}

/* do n bytes at pos lie inside a buffer of len bytes? (64-bit: no overflow) */
static int inside(size_t len, uint64_t pos, uint64_t n)
{
    return pos <= len && n <= len - pos;
}

/* the table at pos, its vtable checked */
static int table_at(const uint8_t *buf, size_t len, uint64_t pos, zf_fb_table *out)
{
    if (!inside(len, pos, 4))
        return ZF_ECORRUPT;
    int64_t vt = (int64_t)pos - (int32_t)zf_fb_le32(buf + pos);
    if (vt < 0 || !inside(len, (uint64_t)vt, 4))
        return ZF_ECORRUPT;
    uint16_t vtsize = zf_fb_le16(buf + vt), objsize = zf_fb_le16(buf + vt + 2);
    if (vtsize < 4 || (vtsize & 1) || !inside(len, (uint64_t)vt, vtsize) || objsize < 4 ||
        !inside(len, pos, objsize))
        return ZF_ECORRUPT;
    *out = (zf_fb_table){buf, len, (uint32_t)pos, (uint32_t)vt, vtsize, objsize};
    return ZF_OK;
}

int zf_fb_root(const uint8_t *buf, size_t len, zf_fb_table *out)
{
    if (len < 4 || len > UINT32_MAX)
        return ZF_ECORRUPT;
    return table_at(buf, len, zf_fb_le32(buf), out);
}

/* where field id of t starts, size bytes of it inside the table: ZF_OK with
 * *pos, ZF_ENOTFOUND (absent), ZF_ECORRUPT */
static int field(const zf_fb_table *t, unsigned id, uint32_t size, uint64_t *pos)
{
    uint64_t slot = 4 + 2 * (uint64_t)id;
    if (slot + 2 > t->vtsize)
        return ZF_ENOTFOUND; /* a field newer than the writer's schema */
    uint16_t off = zf_fb_le16(t->buf + t->vt + slot);
    if (off == 0)
        return ZF_ENOTFOUND;
    if ((uint64_t)off + size > t->objsize)
        return ZF_ECORRUPT;
    *pos = (uint64_t)t->pos + off;
    return ZF_OK;
}

/* a scalar of n bytes: its little-endian value in *v, or ZF_ENOTFOUND */
static int scalar(const zf_fb_table *t, unsigned id, uint32_t n, uint64_t *v)
{
    uint64_t pos;
    int rc = field(t, id, n, &pos);
    if (rc != ZF_OK)
        return rc;
    const uint8_t *p = t->buf + pos;
    *v = n == 1 ? p[0] : n == 2 ? zf_fb_le16(p) : n == 4 ? zf_fb_le32(p) : zf_fb_le64(p);
    return ZF_OK;
}

#define SCALAR_GETTER(name, type, n)                                           \
    int name(const zf_fb_table *t, unsigned id, type def, type *out)           \
    {                                                                          \
        uint64_t v;                                                            \
        int rc = scalar(t, id, n, &v);                                         \
        *out = rc == ZF_OK ? (type)v : def;                                    \
        return rc;                                                             \
    }
SCALAR_GETTER(zf_fb_u8, uint8_t, 1)
SCALAR_GETTER(zf_fb_u16, uint16_t, 2)
SCALAR_GETTER(zf_fb_u32, uint32_t, 4)
SCALAR_GETTER(zf_fb_i32, int32_t, 4)
SCALAR_GETTER(zf_fb_u64, uint64_t, 8)

int zf_fb_struct(const zf_fb_table *t, unsigned id, size_t size, const uint8_t **out)
{
    uint64_t pos;
    int rc = size > UINT16_MAX ? ZF_ECORRUPT : field(t, id, (uint32_t)size, &pos);
    if (rc == ZF_OK)
        *out = t->buf + pos;
    return rc;
}

/* follow the offset stored at pos (forward, unsigned) to *target */
static int follow(const uint8_t *buf, size_t len, uint64_t pos, uint64_t *target)
{
    if (!inside(len, pos, 4))
        return ZF_ECORRUPT;
    *target = pos + zf_fb_le32(buf + pos);
    return *target < len ? ZF_OK : ZF_ECORRUPT;
}

/* the target of the offset field id */
static int offset_field(const zf_fb_table *t, unsigned id, uint64_t *target)
{
    uint64_t pos;
    int rc = field(t, id, 4, &pos);
    return rc == ZF_OK ? follow(t->buf, t->len, pos, target) : rc;
}

int zf_fb_table_field(const zf_fb_table *t, unsigned id, zf_fb_table *out)
{
    uint64_t target;
    int rc = offset_field(t, id, &target);
    return rc == ZF_OK ? table_at(t->buf, t->len, target, out) : rc;
}

/* the vector at pos: its count, its elements inside the buffer */
static int vector_at(const uint8_t *buf, size_t len, uint64_t pos, uint32_t elem, zf_fb_vec *out)
{
    if (!inside(len, pos, 4))
        return ZF_ECORRUPT;
    uint32_t count = zf_fb_le32(buf + pos);
    if (!inside(len, pos + 4, (uint64_t)count * elem))
        return ZF_ECORRUPT;
    *out = (zf_fb_vec){buf, len, (uint32_t)(pos + 4), count, elem};
    return ZF_OK;
}

int zf_fb_vector(const zf_fb_table *t, unsigned id, uint32_t elem, zf_fb_vec *out)
{
    uint64_t target;
    int rc = offset_field(t, id, &target);
    return rc == ZF_OK ? vector_at(t->buf, t->len, target, elem, out) : rc;
}

/* the string at pos: its length, its bytes and terminating NUL inside the buffer */
static int string_at(const uint8_t *buf, size_t len, uint64_t pos, const char **s, size_t *n)
{
    if (!inside(len, pos, 4))
        return ZF_ECORRUPT;
    uint32_t count = zf_fb_le32(buf + pos);
    if (!inside(len, pos + 4, (uint64_t)count + 1))
        return ZF_ECORRUPT;
    *s = (const char *)buf + pos + 4;
    *n = count;
    return ZF_OK;
}

int zf_fb_string(const zf_fb_table *t, unsigned id, const char **s, size_t *len)
{
    uint64_t target;
    int rc = offset_field(t, id, &target);
    return rc == ZF_OK ? string_at(t->buf, t->len, target, s, len) : rc;
}

const uint8_t *zf_fb_vec_at(const zf_fb_vec *v, uint32_t i)
{
    return v->buf + v->pos + (uint64_t)i * v->elem;
}

int zf_fb_vec_table(const zf_fb_vec *v, uint32_t i, zf_fb_table *out)
{
    uint64_t target;
    if (i >= v->count || v->elem != 4)
        return ZF_ECORRUPT;
    int rc = follow(v->buf, v->len, v->pos + (uint64_t)i * 4, &target);
    return rc == ZF_OK ? table_at(v->buf, v->len, target, out) : rc;
}

int zf_fb_vec_string(const zf_fb_vec *v, uint32_t i, const char **s, size_t *len)
{
    uint64_t target;
    if (i >= v->count || v->elem != 4)
        return ZF_ECORRUPT;
    int rc = follow(v->buf, v->len, v->pos + (uint64_t)i * 4, &target);
    return rc == ZF_OK ? string_at(v->buf, v->len, target, s, len) : rc;
}
