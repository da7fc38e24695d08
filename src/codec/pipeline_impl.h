/* pipeline_impl.h - private to codec/: a pipeline's stages, shared by its
 * parsing (pipeline.c) and its decoding (pipeline_decode.c). */
#ifndef ZF_PIPELINE_IMPL_H
#define ZF_PIPELINE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "codec/pipeline.h"
#include "filter_impl.h"

#define ZF_MAX_CODECS 16

struct zf_pipeline {
    unsigned ndim;
    int v3;
    uint64_t shape[ZF_MAX_DIMS];  /* logical chunk shape */
    uint64_t sshape[ZF_MAX_DIMS]; /* the shape the array->bytes codec sees */
    unsigned perm[ZF_MAX_DIMS];   /* decoded axis i is logical axis perm[i] */
    int transposed;               /* perm is not the identity */
    zf_elem elem;                 /* the decoded element type (the array's) */
    unsigned esize;               /* bytes per element: 1, 2, 4 or 8 */
    int array_big;                /* byte order the last filter's output is viewed in */
    unsigned nfilters;            /* numcodecs array->array filters, in encode order */
    zf_filter *filters[ZF_MAX_CODECS];
    zf_elem selem;                /* the element type of the bytes stage */
    int big_endian;               /* byte order of the stored elements */
    uint64_t elems;
    size_t nbytes;                /* elems * esize */
    size_t sbytes;                /* elems * selem.size: what the bytes stage holds */
    unsigned ncodecs;             /* bytes->bytes, in encode order */
    zf_codec *codecs[ZF_MAX_CODECS];
    zf_pipeline *inner;           /* sharding: pipeline of one inner chunk */
    zf_pipeline *index;           /* sharding: pipeline of the shard index */
    uint64_t inner_shape[ZF_MAX_DIMS];   /* inner chunk, in the sharded (stored) axes */
    uint64_t inner_logical[ZF_MAX_DIMS]; /* the same box in the logical axes */
    uint64_t inner_count;         /* inner chunks per shard */
    int index_at_start;
    size_t index_bytes;           /* encoded size of the shard index */
    uint8_t fill[8];              /* element of empty inner chunks (esize bytes) */
};

#endif
