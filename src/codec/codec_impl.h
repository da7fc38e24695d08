/* codec_impl.h - private interface between codec.c and the codec_*.c decoders.
 *
 * Every decoder has the signature of zf_codec_decode minus the codec: it
 * writes at most cap bytes at out, sets *outn, and returns ZF_OK, ZF_ECORRUPT
 * or ZF_ENOMEM with a reason in err.  Not for use outside src/codec*.c (the
 * codec unit test also calls zf_crc32c_sw). */
#ifndef ZF_CODEC_IMPL_H
#define ZF_CODEC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#define ZF_DEC_ARGS const uint8_t *in, size_t n, uint8_t *out, size_t cap, \
                    size_t *outn, char *err, size_t errcap

typedef int (*zf_decode_fn)(ZF_DEC_ARGS);

int zf_dec_zstd(ZF_DEC_ARGS);
int zf_dec_gzip(ZF_DEC_ARGS);
int zf_dec_zlib(ZF_DEC_ARGS);
int zf_dec_bz2(ZF_DEC_ARGS);
int zf_dec_lz4(ZF_DEC_ARGS);
int zf_dec_blosc(ZF_DEC_ARGS);
int zf_dec_crc32c(ZF_DEC_ARGS);

/* Portable (table-driven) CRC32C, same contract as zf_crc32c. */
uint32_t zf_crc32c_sw(uint32_t crc, const void *buf, size_t n);

/* Format a reason into err (if err and errcap are non-zero); returns code. */
int zf_codec_errf(char *err, size_t errcap, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
