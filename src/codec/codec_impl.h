/* codec_impl.h - private interface between codec.c and the codec_*.c decoders.
 *
 * Every decoder has the signature of zf_codec_decode with the codec's parsed
 * parameters in place of the codec: it writes at most cap bytes at out, sets
 * *outn, and returns ZF_OK, ZF_ECORRUPT or ZF_ENOMEM with a reason in err.
 * Not for use outside src/codec/ (the codec unit test also calls
 * zf_crc32c_sw and the reference checksums). */
#ifndef ZF_CODEC_IMPL_H
#define ZF_CODEC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Most filters in a raw lzma chain (LZMA_FILTERS_MAX). */
#define ZF_LZMA_FILTERS 4

/* One filter of a raw lzma chain, as numcodecs' "filters" list gives it. */
typedef struct zf_lzma_filter {
    uint64_t id;           /* LZMA_FILTER_* */
    uint32_t dict_size;    /* LZMA1 / LZMA2 */
    uint32_t lc, lp, pb;   /* LZMA1 / LZMA2 */
    uint32_t dist;         /* delta */
    uint32_t start_offset; /* BCJ filters */
} zf_lzma_filter;

/* What decoding needs from a codec's configuration. */
typedef struct zf_codec_params {
    unsigned elementsize; /* shuffle: bytes per element (<= 1: no shuffle) */
    int at_end;           /* checksums: the 4 checksum bytes trail the data */
    int lzma_format;      /* lzma: 0 auto, 1 xz, 2 lzma-alone, 3 raw */
    unsigned lzma_nfilters;
    zf_lzma_filter lzma_filters[ZF_LZMA_FILTERS]; /* raw only */
} zf_codec_params;

#define ZF_DEC_ARGS const zf_codec_params *par, const uint8_t *in, size_t n, uint8_t *out, \
                    size_t cap, size_t *outn, char *err, size_t errcap

typedef int (*zf_decode_fn)(ZF_DEC_ARGS);

int zf_dec_zstd(ZF_DEC_ARGS);
int zf_dec_gzip(ZF_DEC_ARGS);
int zf_dec_zlib(ZF_DEC_ARGS);
int zf_dec_bz2(ZF_DEC_ARGS);
int zf_dec_lz4(ZF_DEC_ARGS);
int zf_dec_blosc(ZF_DEC_ARGS);
int zf_dec_lzma(ZF_DEC_ARGS);
int zf_dec_shuffle(ZF_DEC_ARGS);
/* 4-byte little-endian checksums, leading or trailing per par->at_end */
int zf_dec_crc32c(ZF_DEC_ARGS);
int zf_dec_crc32(ZF_DEC_ARGS);
int zf_dec_adler32(ZF_DEC_ARGS);
/* numcodecs Fletcher32: always trailing */
int zf_dec_fletcher32(ZF_DEC_ARGS);

/* Parse a numcodecs LZMA configuration into par (codec_lzma.c). */
int zf_lzma_parse(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                  size_t errcap);

/* Portable (table-driven) CRC32C, same contract as zf_crc32c. */
uint32_t zf_crc32c_sw(uint32_t crc, const void *buf, size_t n);

/* The HDF5 / numcodecs Fletcher-32 of n bytes (16-bit big-endian words, an
 * odd last byte as the high byte of a word). */
uint32_t zf_fletcher32(const uint8_t *p, size_t n);

/* Format a reason into err (if err and errcap are non-zero); returns code
 * (base/err.h's zf_errf, so that the decoders need nothing of codec.c). */
#define zf_codec_errf zf_errf

#endif
