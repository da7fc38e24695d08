/* pipeline.h - a chunk's codec chain: encoded bytes -> elements in C order.
 *
 * The chain is array->array codecs (transpose; v2 order "F"; the numcodecs
 * filters delta, fixedscaleoffset and astype: v2 "filters", v3
 * "numcodecs.*"), one array->bytes codec (bytes, with its endianness, or
 * sharding_indexed) and bytes->bytes codecs (compressors, checksums, shuffle,
 * see codec.h; in v2 also the bytes filters of "filters").  Elements are 1,
 * 2, 4 or 8 bytes wide (the array's data type, given when the pipeline is
 * built); a filter may store another type (astype), and the pipeline tracks
 * the type through the chain: every filter must yield the bits of the type
 * the stage after it reads, and the bytes stage must hold exactly the chunk's
 * elements of the last filter's type.  Decoding always yields the array's
 * type, in the machine's byte order and C order; what the elements mean
 * (int64 ticks, other integers, floats) is the caller's business.  A
 * pipeline is immutable after it is built and may decode on many threads at
 * once.  Every intermediate and final size is checked against what the chunk
 * shape implies. */
#ifndef ZF_PIPELINE_H
#define ZF_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define ZF_MAX_DIMS 32
/* Largest unit decoded at once (a chunk, or a shard stored compressed as a
 * whole): 2^28 values (2 GiB); arrays with larger ones are unsupported. */
#define ZF_MAX_CHUNK_ELEMS (UINT64_C(1) << 28)
/* Most inner chunks per shard (its index is 16 bytes per inner chunk). */
#define ZF_MAX_SHARD_CHUNKS (UINT64_C(1) << 24)
/* Most levels of sharding_indexed nested in one another (each level
 * decodes its bytes once more). */
#define ZF_MAX_SHARD_LEVELS 4

/* What one stored element is: a signed or unsigned integer of 1, 2, 4 or 8
 * bytes, or an IEEE float of 4 or 8. */
typedef enum zf_elem_kind { ZF_ELEM_INT, ZF_ELEM_UINT, ZF_ELEM_FLOAT } zf_elem_kind;
typedef struct zf_elem {
    zf_elem_kind kind;
    unsigned size;
} zf_elem;

/* The elements of timedelta64 (and datetime64) data types: int64 ticks. */
#define ZF_ELEM_INT64 ((zf_elem){ZF_ELEM_INT, 8})

typedef struct zf_pipeline zf_pipeline;

/* Build from a v3 "codecs" array for chunks of the given shape.  *out owns a
 * new pipeline.  ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason in err. */
int zf_pipeline_from_v3(const cJSON *codecs, unsigned ndim, const uint64_t *chunk_shape,
                        zf_elem elem, zf_pipeline **out, char *err, size_t errcap);

/* Build from v2 metadata: compressor (object or null), filters (null or a
 * list: numcodecs array filters first, then bytes filters), the array dtype's
 * byte order, memory order ('C' or 'F') and element type, as above. */
int zf_pipeline_from_v2(const cJSON *compressor, const cJSON *filters, int big_endian,
                        char order, unsigned ndim, const uint64_t *chunk_shape,
                        zf_elem elem, zf_pipeline **out, char *err, size_t errcap);

/* The frame of a v3 sharding_indexed codec (its configuration config) for
 * shards of the given shape whose inner chunks the caller decodes (strings):
 * zf_pipeline_inner gives no pipeline but the inner chunk shape, and the
 * index functions below work (zf_pipeline_decode_index checks a frame's
 * entries against the shard, not against an inner chunk's largest
 * encoding: the caller does).  ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason. */
int zf_pipeline_shard_frame(const cJSON *config, unsigned ndim, const uint64_t *shard_shape,
                            zf_pipeline **out, char *err, size_t errcap);

/* Free a pipeline; NULL is allowed. */
void zf_pipeline_free(zf_pipeline *p);

/* Number of elements in one decoded chunk. */
uint64_t zf_pipeline_chunk_elems(const zf_pipeline *p);

/* The decoded element type (the array's data type). */
zf_elem zf_pipeline_elem(const zf_pipeline *p);

/* Largest encoded chunk this pipeline can legitimately receive, in bytes
 * (what its codecs can make of the decoded chunk: zf_codec_max_encoded; a
 * shard: its index and the largest encoding of every inner chunk). */
size_t zf_pipeline_max_encoded(const zf_pipeline *p);

/* Decode n encoded bytes into out (caller-owned, zf_pipeline_chunk_elems x
 * zf_pipeline_elem(p).size bytes, suitably aligned for the element width).
 * ZF_ECORRUPT with a reason in err on damaged input. */
int zf_pipeline_decode(const zf_pipeline *p, const uint8_t *in, size_t n, void *out,
                       char *err, size_t errcap);

/* Set the element of empty inner chunks (the array's fill value, elem.size
 * bytes in the machine's byte order, copied). */
void zf_pipeline_set_fill(zf_pipeline *p, const void *fill);

/* Can inner chunks be read one by one (sharded, nothing over the whole shard:
 * no bytes->bytes codec, no transpose before the sharding codec)? */
int zf_pipeline_partial(const zf_pipeline *p);

/* Sharding: the pipeline of one inner chunk (NULL if this pipeline does not
 * shard), and the inner chunk shape in *inner_shape (may be NULL), in the
 * array's axes (after a transpose, the inner pipeline's own shape is in the
 * transposed axes). */
const zf_pipeline *zf_pipeline_inner(const zf_pipeline *p, const uint64_t **inner_shape);

/* Sharding: inner chunks per shard (C order over the inner chunk grid). */
uint64_t zf_pipeline_inner_count(const zf_pipeline *p);

/* Sharding: encoded size of the shard index; *at_start is 1 if it leads the shard. */
size_t zf_pipeline_index_bytes(const zf_pipeline *p, int *at_start);

/* Sharding: decode the encoded index at in (zf_pipeline_index_bytes of
 * them) of a shard of shard_bytes bytes into 2 * inner_count (offset,
 * nbytes) pairs, and check them against the shard: each entry empty (both
 * 2^64-1) or inside the shard's chunk bytes (not its index), no larger than
 * zf_pipeline_max_encoded of the inner pipeline, and no two sharing a byte
 * (pipeline_index.c).  ZF_ECORRUPT with the reason in err. */
int zf_pipeline_decode_index(const zf_pipeline *p, const uint8_t *in, uint64_t shard_bytes,
                             uint64_t *out, char *err, size_t errcap);

/* Append a one-line description of the codec chain ("bytes(little) zstd") to
 * buf (capacity cap, NUL-terminated). */
void zf_pipeline_describe(const zf_pipeline *p, char *buf, size_t cap);

#endif
