/* codec_shuffle.c - numcodecs Shuffle: byte k of every element stored
 * together (all first bytes, then all second bytes, ...).  Decoding puts the
 * bytes back; an element size of 0 or 1 is a plain copy, and a buffer that is
 * not a whole number of elements is refused, as numcodecs refuses it. */
#include <string.h>

#include "codec_impl.h"
#include "base/err.h"

/* Undo the byte shuffle of count elements of es bytes (es >= 2). */
static void unshuffle(const uint8_t *in, uint8_t *out, size_t count, size_t es)
{
    for (size_t b = 0; b < es; b++) {
        const uint8_t *src = in + b * count;
        for (size_t i = 0; i < count; i++)
            out[i * es + b] = src[i];
    }
}

/* Decode a numcodecs shuffle buffer (the output has the input's size). */
int zf_dec_shuffle(ZF_DEC_ARGS)
{
    size_t es = par->elementsize;
    if (n > cap)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "shuffle: output exceeds %zu bytes", cap);
    if (es <= 1) {
        if (n)
            memmove(out, in, n);
        *outn = n;
        return ZF_OK;
    }
    if (n % es)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "shuffle: %zu bytes are not a whole number of %zu-byte elements", n,
                             es);
    if (in == out)
        return zf_codec_errf(err, errcap, ZF_EINVAL, "shuffle: cannot decode in place");
    unshuffle(in, out, n / es, es);
    *outn = n;
    return ZF_OK;
}
