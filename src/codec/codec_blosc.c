/* codec_blosc.c - Blosc 1 frames via c-blosc's context API
 * (blosc_decompress_ctx with one internal thread: thread-safe, no global
 * state, no blosc_init needed).  The header is validated and the decoded size
 * checked against the capacity before decoding. */
#include <blosc.h>

#include "codec_impl.h"
#include "base/err.h"

static int bad(char *err, size_t errcap, const char *what)
{
    return zf_codec_errf(err, errcap, ZF_ECORRUPT, "blosc: invalid header (%s)", what);
}

/* Checks the 16-byte header against the input; sets *nbytes. */
static int check_header(const uint8_t *in, size_t n, size_t cap, size_t *nbytes,
                        char *err, size_t errcap)
{
    if (n == 0)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "blosc: empty input");
    if (n < BLOSC_MIN_HEADER_LENGTH)
        return bad(err, errcap, "input shorter than 16 bytes");
    if (in[0] == 0 || in[0] > BLOSC_VERSION_FORMAT)
        return bad(err, errcap, "unknown format version");
    size_t cbytes, blocksize;
    blosc_cbuffer_sizes(in, nbytes, &cbytes, &blocksize);
    if (cbytes != n)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "blosc: invalid header (%zu compressed bytes, input has %zu)",
                             cbytes, n);
    if (blosc_cbuffer_validate(in, n, nbytes) != 0)
        return bad(err, errcap, "rejected by blosc_cbuffer_validate");
    if (*nbytes > cap)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "blosc: decoded size %zu exceeds capacity %zu", *nbytes, cap);
    return ZF_OK;
}

/* Decode one blosc frame. */
int zf_dec_blosc(ZF_DEC_ARGS)
{
    size_t nbytes = 0;
    int rc = check_header(in, n, cap, &nbytes, err, errcap);
    if (rc)
        return rc;
    if (nbytes == 0) { /* blosc_decompress_ctx would return 0, like an error */
        *outn = 0;
        return ZF_OK;
    }
    int r = blosc_decompress_ctx(in, out, nbytes, 1);
    if (r <= 0 || (size_t)r != nbytes) {
        const char *lib = blosc_cbuffer_complib(in);
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "blosc: corrupt data (decoder returned %d; compressor %s)", r,
                             lib ? lib : "unknown");
    }
    *outn = nbytes;
    return ZF_OK;
}
