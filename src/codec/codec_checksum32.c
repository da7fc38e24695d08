/* codec_checksum32.c - the 32-bit checksum codecs: v3 "crc32c" and the
 * numcodecs checksums crc32, adler32, crc32c (Checksum32: 4 little-endian
 * bytes, leading by default for crc32 / adler32, trailing for crc32c, or as
 * "location" says) and fletcher32 (4 trailing little-endian bytes).  Decoding
 * verifies the checksum and copies the payload out. */
#include <inttypes.h>
#include <string.h>
#include <zlib.h>

#include "codec/codec.h"
#include "codec_impl.h"
#include "base/err.h"

typedef uint32_t (*sum_fn)(const uint8_t *p, size_t n);

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* zlib's crc32 over any length (crc32_z takes a z_size_t) */
static uint32_t sum_crc32(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32_z(0, p, n);
}

/* zlib's adler32, starting from 1 as zlib.adler32 does */
static uint32_t sum_adler32(const uint8_t *p, size_t n)
{
    return (uint32_t)adler32_z(1, p, n);
}

static uint32_t sum_crc32c(const uint8_t *p, size_t n)
{
    return zf_crc32c(0, p, n);
}

/* The HDF5 Fletcher-32 (H5checksum.c) as numcodecs computes it. */
uint32_t zf_fletcher32(const uint8_t *p, size_t n)
{
    uint32_t sum1 = 0, sum2 = 0;
    for (size_t words = n / 2; words;) {
        size_t t = words > 360 ? 360 : words; /* no uint32 overflow within 360 words */
        words -= t;
        for (; t; t--, p += 2) {
            sum1 += (uint32_t)p[0] << 8 | p[1];
            sum2 += sum1;
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if (n % 2) {
        sum1 += (uint32_t)p[0] << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    return sum2 << 16 | sum1;
}

/* Verify the 4-byte checksum (leading or trailing) and copy the payload out. */
static int checked(const char *name, sum_fn sum, int at_end, const uint8_t *in, size_t n,
                   uint8_t *out, size_t cap, size_t *outn, char *err, size_t errcap)
{
    if (n < 4)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%s: input of %zu bytes is shorter than the 4-byte checksum", name, n);
    size_t m = n - 4;
    const uint8_t *payload = at_end ? in : in + 4, *stored_at = at_end ? in + m : in;
    if (m > cap)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "%s: output exceeds %zu bytes", name, cap);
    uint32_t stored = load_le32(stored_at), computed = sum(payload, m);
    if (stored != computed)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%s mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                             name, stored, computed);
    if (m)
        memmove(out, payload, m);
    *outn = m;
    return ZF_OK;
}

/* CRC32C: trailing for v3 "crc32c" and by default for numcodecs crc32c. */
int zf_dec_crc32c(ZF_DEC_ARGS)
{
    return checked("crc32c", sum_crc32c, par->at_end, in, n, out, cap, outn, err, errcap);
}

/* numcodecs CRC32 (zlib.crc32). */
int zf_dec_crc32(ZF_DEC_ARGS)
{
    return checked("crc32", sum_crc32, par->at_end, in, n, out, cap, outn, err, errcap);
}

/* numcodecs Adler32 (zlib.adler32). */
int zf_dec_adler32(ZF_DEC_ARGS)
{
    return checked("adler32", sum_adler32, par->at_end, in, n, out, cap, outn, err, errcap);
}

/* numcodecs Fletcher32: always trailing. */
int zf_dec_fletcher32(ZF_DEC_ARGS)
{
    return checked("fletcher32", zf_fletcher32, 1, in, n, out, cap, outn, err, errcap);
}
