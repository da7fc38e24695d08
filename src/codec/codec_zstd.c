/* codec_zstd.c - Zstandard decoding into a bounded buffer.
 *
 * Frames are decoded one by one with the streaming decoder, so frames with
 * and without a content size in the header (TensorStore omits it), skippable
 * frames and several concatenated frames all work.  The output buffer is
 * declared stable (ZSTD_d_stableOutBuffer), so zstd decodes straight into it
 * and allocates no window buffer whatever window size a frame claims.  The
 * decoder context is cached per thread and freed by a pthread key destructor
 * when the thread exits. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_stableOutBuffer, ZSTD_WINDOWLOG_MAX */
#include <zstd.h>
#include <zstd_errors.h>

#include <pthread.h>
#include <stdbool.h>

#include "codec_impl.h"
#include "base/err.h"

static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;
static bool dctx_key_ok;

static void dctx_destroy(void *p)
{
    ZSTD_freeDCtx(p);
}

static void dctx_key_init(void)
{
    dctx_key_ok = pthread_key_create(&dctx_key, dctx_destroy) == 0;
}

/* A new context writing straight into the caller's buffer. */
static ZSTD_DCtx *dctx_new(void)
{
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!d)
        return NULL;
    size_t r = ZSTD_DCtx_setParameter(d, ZSTD_d_stableOutBuffer, 1);
    /* With a stable output buffer a large window costs no memory, so accept
     * any window the format allows (e.g. data written with --long=31). */
    if (!ZSTD_isError(r))
        ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, ZSTD_WINDOWLOG_MAX);
    return d;
}

/* This thread's cached context; *owned is set if the caller must free it. */
static ZSTD_DCtx *dctx_get(bool *owned)
{
    *owned = false;
    pthread_once(&dctx_once, dctx_key_init);
    ZSTD_DCtx *d = dctx_key_ok ? pthread_getspecific(dctx_key) : NULL;
    if (d)
        return d;
    d = dctx_new();
    if (d && !(dctx_key_ok && pthread_setspecific(dctx_key, d) == 0))
        *owned = true;
    return d;
}

/* Error for a frame starting at byte `at` of the input. */
static int frame_err(size_t at, const char *what, char *err, size_t errcap)
{
    if (at == 0)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "zstd: %s", what);
    return zf_codec_errf(err, errcap, ZF_ECORRUPT, "zstd: frame at byte %zu: %s", at, what);
}

static int too_big(size_t cap, char *err, size_t errcap)
{
    return zf_codec_errf(err, errcap, ZF_ECORRUPT, "zstd: output exceeds %zu bytes", cap);
}

/* Streams one complete frame of fsz bytes into out[0, room). */
static int frame_stream(ZSTD_DCtx *d, const uint8_t *in, size_t fsz, uint8_t *out,
                        size_t room, size_t *made)
{
    ZSTD_inBuffer ib = {in, fsz, 0};
    ZSTD_outBuffer ob = {out, room, 0};
    ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
    for (;;) {
        size_t ipos = ib.pos, opos = ob.pos;
        size_t r = ZSTD_decompressStream(d, &ob, &ib);
        *made = ob.pos;
        if (ZSTD_isError(r))
            return -(int)ZSTD_getErrorCode(r);
        if (r == 0)
            return 0;
        if (ib.pos == ipos && ob.pos == opos) /* stuck: out of input or room */
            return ob.pos == ob.size ? -(int)ZSTD_error_dstSize_tooSmall
                                     : -(int)ZSTD_error_srcSize_wrong;
    }
}

/* Decodes the frame at in[at..n) into out[done..cap); advances both. */
static int frame_decode(ZSTD_DCtx *d, const uint8_t *in, size_t n, size_t *at,
                        uint8_t *out, size_t cap, size_t *done, char *err, size_t errcap)
{
    size_t fsz = ZSTD_findFrameCompressedSize(in + *at, n - *at);
    if (ZSTD_isError(fsz))
        return frame_err(*at, ZSTD_getErrorCode(fsz) == ZSTD_error_srcSize_wrong
                                  ? "truncated frame" : ZSTD_getErrorName(fsz),
                         err, errcap);
    unsigned long long csz = ZSTD_getFrameContentSize(in + *at, fsz);
    if (csz == ZSTD_CONTENTSIZE_ERROR)
        return frame_err(*at, "invalid frame header", err, errcap);
    if (csz != ZSTD_CONTENTSIZE_UNKNOWN && csz > cap - *done)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "zstd: frame content size %llu exceeds capacity %zu", csz, cap);
    size_t made = 0;
    int code = frame_stream(d, in + *at, fsz, out + *done, cap - *done, &made);
    if (code == -(int)ZSTD_error_dstSize_tooSmall)
        return too_big(cap, err, errcap);
    if (code == -(int)ZSTD_error_memory_allocation)
        return zf_codec_errf(err, errcap, ZF_ENOMEM, "zstd: out of memory");
    if (code)
        return frame_err(*at, ZSTD_getErrorString((ZSTD_ErrorCode)-code), err, errcap);
    *at += fsz;
    *done += made;
    return ZF_OK;
}

/* Decode one or more zstd frames. */
int zf_dec_zstd(ZF_DEC_ARGS)
{
    if (n == 0)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "zstd: empty input");
    bool owned;
    ZSTD_DCtx *d = dctx_get(&owned);
    if (!d)
        return zf_codec_errf(err, errcap, ZF_ENOMEM, "zstd: cannot allocate a decoder");
    size_t at = 0, done = 0;
    int rc = ZF_OK;
    while (rc == ZF_OK && at < n)
        rc = frame_decode(d, in, n, &at, out, cap, &done, err, errcap);
    if (owned)
        ZSTD_freeDCtx(d);
    *outn = rc == ZF_OK ? done : 0;
    return rc;
}
