/* codec.h - bytes-to-bytes codecs: compressors, checksums and byte shuffle.
 *
 * A zf_codec is parsed once from array metadata, is immutable afterwards and
 * may be used by many threads at once (per-thread decoder state is kept
 * internally in thread-local storage).  Decoding writes into a caller-owned
 * buffer of explicit capacity and never trusts a size read from the input:
 * output that would exceed the capacity is an error (ZF_ECORRUPT). */
#ifndef ZF_CODEC_H
#define ZF_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct zf_codec zf_codec;

/* Parse a v3 codec entry (object {"name","configuration"} or bare string) that
 * names a bytes-to-bytes codec: zstd, gzip, blosc, crc32c, or a numcodecs one
 * as zarr-python writes it ("numcodecs.zstd", .blosc, .zlib, .gzip, .bz2,
 * .lz4, .lzma, .shuffle, .crc32, .adler32, .crc32c, .fletcher32).  elem_size
 * is the array data type's size (numcodecs.shuffle's default element size).
 * On success *out owns a new codec (free with zf_codec_free).  ZF_ENOTFOUND if
 * the name is not a bytes-to-bytes codec known here (the caller may know it
 * as another kind), ZF_ECORRUPT / ZF_EUNSUPPORTED with a reason in err
 * otherwise. */
int zf_codec_from_v3(const cJSON *entry, unsigned elem_size, zf_codec **out, char *err,
                     size_t errcap);

/* Parse a v2 numcodecs object (a "compressor", or an entry of "filters") by
 * its "id": zstd, blosc, zlib, gzip, bz2, lz4, lzma, shuffle, crc32,
 * adler32, crc32c, fletcher32.  ZF_ENOTFOUND if the id is not one of them.
 * A JSON null is not a codec: the caller handles it. */
int zf_codec_from_v2(const cJSON *compressor, zf_codec **out, char *err, size_t errcap);

/* Free a codec; NULL is allowed. */
void zf_codec_free(zf_codec *c);

/* Name of the codec as written in metadata ("zstd", "blosc", ...). */
const char *zf_codec_name(const zf_codec *c);

/* Decode n bytes at in into out (capacity cap); *outn gets the decoded size.
 * Returns 0, or ZF_ECORRUPT with a reason in err (also when the output would
 * not fit in cap), or ZF_ENOMEM. */
int zf_codec_decode(const zf_codec *c, const uint8_t *in, size_t n, uint8_t *out,
                    size_t cap, size_t *outn, char *err, size_t errcap);

/* The largest encoding of `decoded` bytes that c's writers can produce
 * (saturating at SIZE_MAX): each library's own worst case, with room for
 * other writers' headers, blocks and frames (the table in codec.c).  An
 * encoded value larger than this is damaged; it is also the capacity of a
 * pipeline's intermediate stages. */
size_t zf_codec_max_encoded(const zf_codec *c, size_t decoded);

/* Bytes of input given to decoders (zf_codec_decode) by the calling thread
 * so far: a meter of decoding work, which tests hold against the stored
 * bytes. */
uint64_t zf_codec_work(void);

/* CRC32C (Castagnoli) of n bytes, continuing from crc (start with 0);
 * crc32c("123456789") == 0xE3069283.  Uses SSE4.2 when the CPU has it. */
uint32_t zf_crc32c(uint32_t crc, const void *buf, size_t n);

#endif
