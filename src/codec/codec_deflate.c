/* codec_deflate.c - gzip and zlib streams, decoded with zlib's inflate.
 *
 * Both codecs accept either header (windowBits 15+32 auto-detects), and
 * several concatenated streams (multi-member gzip, as Python's gzip reads).
 * A z_stream is set up per call: for 1 MiB chunks that measured no slower
 * than resetting a cached one (inflate's state is ~7 KiB plus a 32 KiB
 * window). */
#include <limits.h>
#include <string.h>
#include <zlib.h>

#include "codec_impl.h"
#include "base/err.h"

typedef struct job {
    const char *name;
    const uint8_t *in;
    size_t n;
    uint8_t *out;
    size_t cap;
    size_t member; /* byte offset of the stream being decoded */
    char *err;
    size_t errcap;
} job;

static uInt clamp_uint(size_t n)
{
    return n > UINT_MAX ? UINT_MAX : (uInt)n;
}

static size_t in_left(const job *j, const z_stream *s)
{
    return j->n - (size_t)(s->next_in - j->in);
}

static size_t out_left(const job *j, const z_stream *s)
{
    return j->cap - (size_t)(s->next_out - j->out);
}

static int fail(const job *j, const char *what)
{
    if (j->member == 0)
        return zf_codec_errf(j->err, j->errcap, ZF_ECORRUPT, "%s: %s", j->name, what);
    return zf_codec_errf(j->err, j->errcap, ZF_ECORRUPT, "%s: stream at byte %zu: %s",
                         j->name, j->member, what);
}

static int too_big(const job *j)
{
    return zf_codec_errf(j->err, j->errcap, ZF_ECORRUPT, "%s: output exceeds %zu bytes",
                         j->name, j->cap);
}

/* inflate can make no progress: out of room, out of input, or both. */
static int stalled(const job *j, z_stream *s)
{
    if (out_left(j, s) > 0)
        return fail(j, "truncated input");
    if (in_left(j, s) > 0)
        return too_big(j);
    uint8_t probe; /* all input consumed and output full: is there more? */
    Bytef *keep = s->next_out;
    s->next_out = &probe;
    s->avail_out = 1;
    inflate(s, Z_NO_FLUSH);
    int more = s->avail_out == 0;
    s->next_out = keep;
    return more ? too_big(j) : fail(j, "truncated input");
}

/* Inflates every stream in the input; next_out tracks the output. */
static int run(job *j, z_stream *s)
{
    for (;;) {
        s->avail_in = clamp_uint(in_left(j, s));
        s->avail_out = clamp_uint(out_left(j, s));
        int zr = inflate(s, Z_NO_FLUSH);
        if (zr == Z_OK)
            continue;
        if (zr == Z_STREAM_END) {
            if (in_left(j, s) == 0)
                return ZF_OK;
            j->member = (size_t)(s->next_in - j->in);
            inflateReset(s);
            continue;
        }
        if (zr == Z_BUF_ERROR)
            return stalled(j, s);
        if (zr == Z_MEM_ERROR)
            return zf_codec_errf(j->err, j->errcap, ZF_ENOMEM, "%s: out of memory", j->name);
        if (zr == Z_NEED_DICT)
            return fail(j, "stream needs a preset dictionary");
        return fail(j, s->msg ? s->msg : "invalid data");
    }
}

static int inflate_all(const char *name, ZF_DEC_ARGS)
{
    if (n == 0)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "%s: empty input", name);
    uint8_t none;
    job j = {name, in, n, out ? out : &none, cap, 0, err, errcap};
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, 15 + 32) != Z_OK)
        return zf_codec_errf(err, errcap, ZF_ENOMEM, "%s: cannot allocate a decoder", name);
    s.next_in = (Bytef *)(uintptr_t)in;
    s.next_out = j.out; /* never NULL: inflate rejects that */
    int rc = run(&j, &s);
    *outn = rc == ZF_OK ? (size_t)(s.next_out - j.out) : 0;
    inflateEnd(&s);
    return rc;
}

/* Decode a gzip (or zlib) stream. */
int zf_dec_gzip(ZF_DEC_ARGS)
{
    return inflate_all("gzip", par, in, n, out, cap, outn, err, errcap);
}

/* Decode a zlib (or gzip) stream. */
int zf_dec_zlib(ZF_DEC_ARGS)
{
    return inflate_all("zlib", par, in, n, out, cap, outn, err, errcap);
}
