/* meta.h - Zarr node metadata (v3 zarr.json, v2 .zarray/.zattrs/.zgroup).
 *
 * Parsing turns metadata text into a zf_meta describing one timedelta64 or
 * datetime64 array (native, or CF-encoded: cf.h), or reports that the node is a group or an array of another data type
 * (which zarrfs does not show).  Invalid or unsupported metadata is an error
 * with a one-line reason. */
#ifndef ZF_META_H
#define ZF_META_H

#include <stddef.h>
#include <stdint.h>

#include "text/duration.h"
#include "codec/codec.h"
#include "codec/pipeline.h"
#include "zarr/cf.h"

typedef enum zf_node_kind {
    ZF_KIND_GROUP,       /* a group */
    ZF_KIND_TIMEDELTA,   /* durations or time stamps (out->values says which):
                            numpy.timedelta64 / numpy.datetime64, or CF-encoded
                            numbers (cf.h; out->cf.how says which): *out is filled */
    ZF_KIND_OTHER_ARRAY  /* an array of another data type */
} zf_node_kind;

typedef struct zf_meta {
    int zarr_format;                /* 2 or 3 */
    unsigned ndim;
    uint64_t shape[ZF_MAX_DIMS];
    uint64_t chunks[ZF_MAX_DIMS];   /* chunk (shard) shape (every entry >= 1) */
    uint64_t read_chunks[ZF_MAX_DIMS]; /* smallest decodable unit: the innermost
                                          chunk shape when sharded, else chunks */
    uint64_t nelems;                /* product of shape */
    zf_elem elem;                   /* the stored element type (int64 ticks if native) */
    zf_values values;               /* durations or time stamps (text.h) */
    zf_unit unit;                   /* unit and scale of the ticks (CF: the decoded unit, 1) */
    uint32_t scale;
    int64_t fill;                   /* ticks, ZF_NAT for NaT (CF: ZF_NAT until
                                       zf_array_new converts cf.fill_raw) */
    char *dim_names[ZF_MAX_DIMS];   /* owned; NULL where absent */
    int key_v2;                     /* chunk keys without the "c" prefix */
    char separator;                 /* '/' or '.' */
    zf_pipeline *pipeline;          /* owned */
    char dtype_text[48];            /* data type as written ("<m8[10us]", "numpy.datetime64[10us]") */
    char fill_text[32];             /* fill value as written */
    zf_cf cf;                       /* how the stored elements become ticks (cf.h) */
    char *coordinates;              /* the "coordinates" attribute (xarray's non-dimension
                                       coordinates, space-separated); owned; NULL if none */
    char *attributes;               /* the other attributes, as NAME.info's "attribute
                                       NAME: VALUE" lines; owned; NULL if none */
} zf_meta;

/* Parse v3 zarr.json text.  For ZF_KIND_TIMEDELTA, *out is filled; for a
 * group or an array of another type, what xarray reads of it for labels
 * (its coordinates attribute; an array's ndim, (unsigned)-1 if its shape is
 * no list, and valid dimension names).  *out owns memory (zf_meta_clear).
 * Errors: ZF_ECORRUPT / ZF_EUNSUPPORTED, reason in err. */
int zf_meta_parse_v3(const char *text, size_t n, zf_node_kind *kind, zf_meta *out, char *err,
                     size_t errcap);

/* Parse v2 .zarray text (and .zattrs text, or NULL) into *out, as above;
 * *kind is ZF_KIND_TIMEDELTA or ZF_KIND_OTHER_ARRAY. */
int zf_meta_parse_v2(const char *zarray, size_t n, const char *zattrs, size_t attrs_n,
                     zf_node_kind *kind, zf_meta *out, char *err, size_t errcap);

/* What xarray reads of a v2 group's .zattrs text (NULL if absent) for
 * labels: its coordinates attribute, into *out (zf_meta_clear).  ZF_OK or
 * ZF_ENOMEM; attributes that are no JSON object say nothing. */
int zf_meta_parse_v2_group(const char *zattrs, size_t n, zf_meta *out);

/* Release what a zf_meta owns; the struct may be reused. */
void zf_meta_clear(zf_meta *m);

/* Write the store key of the chunk with grid coordinates coords into buf
 * (capacity cap), relative to the array's own directory. */
int zf_meta_chunk_key(const zf_meta *m, const uint64_t *coords, char *buf, size_t cap);

/* The inverse: the grid coordinates of key (relative to the array's own
 * directory) into coords; ZF_ENOTFOUND unless key is exactly the key
 * zf_meta_chunk_key writes for them (no leading zeros, no other text).
 * Coordinates are not checked against the grid. */
int zf_meta_chunk_coords(const zf_meta *m, const char *key, uint64_t *coords);

/* ---- plain arrays: numbers, bools and strings (coordinate labels) ---- */

/* What the elements of a plain array are. */
typedef enum zf_plain_type {
    ZF_PLAIN_NUMBER,    /* integers and floats (m.elem), decoded by m.pipeline */
    ZF_PLAIN_BOOL,      /* one byte each, decoded by m.pipeline as uint8 */
    ZF_PLAIN_VLEN_UTF8, /* v3 "string" (codec vlen-utf8), v2 "|O" (filter vlen-utf8) */
    ZF_PLAIN_UTF32,     /* v3 fixed_length_utf32, v2 "<Un" / ">Un": item_bytes each */
    ZF_PLAIN_BYTES      /* v3 null_terminated_bytes, v2 "|Sn": item_bytes each */
} zf_plain_type;

#define ZF_PLAIN_MAX_CODECS 16

typedef struct zf_plain_meta {
    zf_meta m;            /* shape, chunks, chunk keys, dimension names; numbers and
                             bools: m.elem and m.pipeline (owned), m.cf the fill value
                             (fill_raw) and xarray's mask (numbers: and packing; v2
                             bools: a non-null fill value is masked, in mask_i[0]) */
    zf_plain_type type;
    uint32_t item_bytes;  /* UTF32 and BYTES: bytes per element */
    int big_endian;       /* UTF32: byte order of the code units */
    unsigned ncodecs;     /* strings: bytes->bytes codecs, in encode order (of each
                             inner chunk when sharded) */
    zf_codec *codecs[ZF_PLAIN_MAX_CODECS]; /* owned */
    zf_pipeline *shard;   /* strings in shards (v3 sharding_indexed): its frame (the
                             index; m.read_chunks the inner chunk shape), owned; else NULL */
} zf_plain_meta;

/* Parse v3 zarr.json text of a plain array (not a time type) into *out,
 * which then owns memory (zf_plain_meta_clear).  Strings must have an empty
 * fill value.  Errors: ZF_ECORRUPT, ZF_EUNSUPPORTED (time types, other data
 * types, CF time units, sharded or transposed strings), reason in err. */
int zf_meta_parse_plain_v3(const char *text, size_t n, zf_plain_meta *out, char *err,
                           size_t errcap);

/* The same for v2 .zarray text and .zattrs text (NULL if absent). */
int zf_meta_parse_plain_v2(const char *zarray, size_t n, const char *zattrs, size_t attrs_n,
                           zf_plain_meta *out, char *err, size_t errcap);

/* Release what a zf_plain_meta owns; the struct may be reused. */
void zf_plain_meta_clear(zf_plain_meta *p);

#endif
