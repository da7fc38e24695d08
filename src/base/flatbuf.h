/* flatbuf.h - reading FlatBuffers in place, every access bounds-checked.
 *
 * A reader of the FlatBuffers binary format (flatbuffers.dev, "FlatBuffers
 * internals") for buffers nobody vouches for: nothing is copied and nothing
 * is verified up front (a 100 MB buffer costs nothing to open); instead every
 * table, vtable, field, vector, vector element and string is checked against
 * the buffer when it is reached, and a reference that leaves the buffer is
 * ZF_ECORRUPT for that access only.  There is no limit on sizes, depth or
 * counts beyond the buffer itself (FlatBuffers offsets are 32-bit: at most
 * 4 GiB).  Fields are addressed by their id (declaration order in the
 * schema, unions taking two ids: type, then value).
 *
 * Results: ZF_OK; ZF_ENOTFOUND for a field that is absent (scalars then give
 * their default); ZF_ECORRUPT for anything out of bounds or malformed.
 * Handles are plain values pointing into the caller's buffer, which must
 * outlive them.  Thread-safe (nothing is written). */
#ifndef ZF_FLATBUF_H
#define ZF_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

/* A table: its position and its vtable's. */
typedef struct zf_fb_table {
    const uint8_t *buf;
    size_t len;        /* of the whole buffer */
    uint32_t pos;      /* the table's start (where its vtable offset is) */
    uint32_t vt;       /* its vtable's start */
    uint16_t vtsize;   /* bytes of the vtable */
    uint16_t objsize;  /* bytes of the table's inline part */
} zf_fb_table;

/* A vector: count elements of elem bytes from pos (for vectors of tables
 * and strings, elem is 4: each element is an offset). */
typedef struct zf_fb_vec {
    const uint8_t *buf;
    size_t len;
    uint32_t pos;      /* the first element */
    uint32_t count;
    uint32_t elem;
} zf_fb_vec;

/* The root table of buf (len bytes): the offset at its start. */
int zf_fb_root(const uint8_t *buf, size_t len, zf_fb_table *out);

/* Scalars of field id, or def when absent. */
int zf_fb_u8(const zf_fb_table *t, unsigned id, uint8_t def, uint8_t *out);
int zf_fb_u16(const zf_fb_table *t, unsigned id, uint16_t def, uint16_t *out);
int zf_fb_u32(const zf_fb_table *t, unsigned id, uint32_t def, uint32_t *out);
int zf_fb_i32(const zf_fb_table *t, unsigned id, int32_t def, int32_t *out);
int zf_fb_u64(const zf_fb_table *t, unsigned id, uint64_t def, uint64_t *out);

/* A struct field of size bytes, stored inline in the table: *out points at it. */
int zf_fb_struct(const zf_fb_table *t, unsigned id, size_t size, const uint8_t **out);

/* A table field (also a union's value). */
int zf_fb_table_field(const zf_fb_table *t, unsigned id, zf_fb_table *out);

/* A vector field whose elements are elem bytes each (scalars, structs; 4 for
 * tables and strings). */
int zf_fb_vector(const zf_fb_table *t, unsigned id, uint32_t elem, zf_fb_vec *out);

/* A string field: *s points at its len bytes (not necessarily NUL-terminated
 * for the caller's purposes: use len). */
int zf_fb_string(const zf_fb_table *t, unsigned id, const char **s, size_t *len);

/* Element i (< v->count) of a vector: its bytes, a table, a string. */
const uint8_t *zf_fb_vec_at(const zf_fb_vec *v, uint32_t i);
int zf_fb_vec_table(const zf_fb_vec *v, uint32_t i, zf_fb_table *out);
int zf_fb_vec_string(const zf_fb_vec *v, uint32_t i, const char **s, size_t *len);

/* Little-endian integers at p (any alignment). */
uint16_t zf_fb_le16(const uint8_t *p);
uint32_t zf_fb_le32(const uint8_t *p);
uint64_t zf_fb_le64(const uint8_t *p);

#endif
