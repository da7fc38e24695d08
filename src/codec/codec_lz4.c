/* codec_lz4.c - LZ4 in numcodecs framing: a 4-byte little-endian decoded
 * size, then one raw LZ4 block.  The size is checked against the capacity
 * before anything is decoded, and the block must decode to exactly it. */
#include <limits.h>
#include <lz4.h>

#include "codec_impl.h"
#include "base/err.h"

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Decode a numcodecs LZ4 buffer. */
int zf_dec_lz4(ZF_DEC_ARGS)
{
    if (n < 4)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "lz4: input of %zu bytes is shorter than the 4-byte header", n);
    uint32_t size = load_le32(in);
    if (size > cap)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "lz4: header size %lu exceeds capacity %zu", (unsigned long)size, cap);
    if (size > LZ4_MAX_INPUT_SIZE || n - 4 > (size_t)INT_MAX)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "lz4: block too large");
    int r = LZ4_decompress_safe((const char *)in + 4, (char *)out, (int)(n - 4), (int)size);
    if (r < 0)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "lz4: corrupt or truncated block");
    if ((uint32_t)r != size)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "lz4: block decodes to %d bytes, header says %lu", r,
                             (unsigned long)size);
    *outn = size;
    return ZF_OK;
}
