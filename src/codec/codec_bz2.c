/* codec_bz2.c - bzip2 streams (one or more concatenated), via libbz2's
 * streaming decoder so that sizes above 4 GiB, trailing garbage and output
 * overflow are all detected. */
#include <bzlib.h>
#include <limits.h>
#include <string.h>

#include "codec_impl.h"
#include "base/err.h"

typedef struct job {
    const uint8_t *in;
    size_t n;
    uint8_t *out;
    size_t cap;
    size_t member; /* byte offset of the stream being decoded */
    char *err;
    size_t errcap;
} job;

static unsigned clamp_uint(size_t n)
{
    return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

static size_t in_left(const job *j, const bz_stream *s)
{
    return j->n - (size_t)((const uint8_t *)s->next_in - j->in);
}

static size_t out_left(const job *j, const bz_stream *s)
{
    return j->cap - (size_t)((uint8_t *)s->next_out - j->out);
}

static int fail(const job *j, const char *what)
{
    if (j->member == 0)
        return zf_codec_errf(j->err, j->errcap, ZF_ECORRUPT, "bz2: %s", what);
    return zf_codec_errf(j->err, j->errcap, ZF_ECORRUPT, "bz2: stream at byte %zu: %s",
                         j->member, what);
}

static int too_big(const job *j)
{
    return zf_codec_errf(j->err, j->errcap, ZF_ECORRUPT, "bz2: output exceeds %zu bytes",
                         j->cap);
}

static int lib_error(const job *j, int r)
{
    switch (r) {
    case BZ_MEM_ERROR:
        return zf_codec_errf(j->err, j->errcap, ZF_ENOMEM, "bz2: out of memory");
    case BZ_DATA_ERROR_MAGIC: return fail(j, "bad magic (not bzip2 data)");
    case BZ_DATA_ERROR: return fail(j, "corrupt data (bad block or CRC mismatch)");
    default: return fail(j, "decoder error");
    }
}

/* No progress: out of room, out of input, or both. */
static int stalled(const job *j, bz_stream *s)
{
    if (out_left(j, s) > 0)
        return fail(j, "truncated input");
    if (in_left(j, s) > 0)
        return too_big(j);
    char probe; /* all input consumed and output full: is there more? */
    char *keep = s->next_out;
    s->next_out = &probe;
    s->avail_out = 1;
    int r = BZ2_bzDecompress(s);
    int more = s->avail_out == 0;
    s->next_out = keep;
    if (more)
        return too_big(j);
    return r == BZ_OK || r == BZ_STREAM_END ? fail(j, "truncated input") : lib_error(j, r);
}

/* Ends the finished stream and starts the next one at next_in. */
static int next_stream(job *j, bz_stream *s)
{
    j->member = (size_t)((const uint8_t *)s->next_in - j->in);
    BZ2_bzDecompressEnd(s);
    int r = BZ2_bzDecompressInit(s, 0, 0);
    return r == BZ_OK ? ZF_OK : lib_error(j, r);
}

static int run(job *j, bz_stream *s)
{
    for (;;) {
        s->avail_in = clamp_uint(in_left(j, s));
        s->avail_out = clamp_uint(out_left(j, s));
        const char *in0 = s->next_in, *out0 = s->next_out;
        int r = BZ2_bzDecompress(s);
        if (r == BZ_STREAM_END) {
            if (in_left(j, s) == 0)
                return ZF_OK;
            int rc = next_stream(j, s);
            if (rc)
                return rc;
            continue;
        }
        if (r != BZ_OK)
            return lib_error(j, r);
        if (s->next_in == in0 && s->next_out == out0)
            return stalled(j, s);
    }
}

/* Decode one or more concatenated bzip2 streams. */
int zf_dec_bz2(ZF_DEC_ARGS)
{
    if (n == 0)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "bz2: empty input");
    uint8_t none;
    job j = {in, n, out ? out : &none, cap, 0, err, errcap};
    bz_stream s;
    memset(&s, 0, sizeof s);
    if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
        return zf_codec_errf(err, errcap, ZF_ENOMEM, "bz2: cannot allocate a decoder");
    s.next_in = (char *)(uintptr_t)in;
    s.next_out = (char *)j.out;
    int rc = run(&j, &s);
    *outn = rc == ZF_OK ? (size_t)((uint8_t *)s.next_out - j.out) : 0;
    BZ2_bzDecompressEnd(&s);
    return rc;
}
