/* flexbuf.h - reading FlexBuffers (schema-less FlatBuffers) in place, as far
 * as maps of strings need: the root, map members by key or by position,
 * strings, null.  Every offset, width and size is checked against the
 * buffer; anything else is ZF_ECORRUPT for that access.  Nothing is copied;
 * values point into the caller's buffer.  Thread-safe. */
#ifndef ZF_FLEXBUF_H
#define ZF_FLEXBUF_H

#include <stddef.h>
#include <stdint.h>

/* Value types (the FlexBuffers internals document's numbering). */
enum { ZF_FLEX_NULL = 0, ZF_FLEX_KEY = 4, ZF_FLEX_STRING = 5, ZF_FLEX_MAP = 9,
       ZF_FLEX_VECTOR = 10 };

/* A value: where it is stored, in a slot of parent_width bytes, with its type
 * and the width of what it points to. */
typedef struct zf_flex {
    const uint8_t *buf;
    size_t len;
    size_t pos;             /* its slot */
    unsigned parent_width;  /* bytes of the slot: 1, 2, 4 or 8 */
    unsigned type;          /* ZF_FLEX_* (or another of the format's types) */
    unsigned width;         /* bytes of each element of what it points to */
} zf_flex;

/* The root value of buf (len bytes). */
int zf_flex_root(const uint8_t *buf, size_t len, zf_flex *out);

/* Members of a map: how many, and the i-th key (n bytes, not
 * NUL-terminated for the caller's purposes) and value. */
int zf_flex_map_size(const zf_flex *map, size_t *count);
int zf_flex_map_at(const zf_flex *map, size_t i, const char **key, size_t *n, zf_flex *val);

/* The value of map's member key; ZF_ENOTFOUND if it has none. */
int zf_flex_map_get(const zf_flex *map, const char *key, zf_flex *val);

/* A string value's bytes. */
int zf_flex_string(const zf_flex *v, const char **s, size_t *n);

#endif
