/* test_codec.c - unit tests for the bytes-to-bytes codecs (src/codec*.c).
 *
 * Round trips through the libraries' own encoders (and, for the numcodecs
 * checksums and shuffle, encoders written here), error cases (truncated,
 * garbage, empty, capacity off by one, decompression bombs, checksum
 * mismatches), metadata parsing, samples written by numcodecs / zarr-python
 * (data/codec/, see gen.py there), light mutation fuzzing, and concurrent
 * decoding.  Every decode reads from and writes to heap buffers of exactly
 * the stated size, so ASan / valgrind see any overrun.  Run from tests/.
 * ZF_CODEC_BENCH=1 also prints decode throughput for 1 MiB int64 chunks. */
#include <blosc.h>
#include <bzlib.h>
#include <lz4.h>
#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>

#include "codec/codec.h"
#include "codec/codec_impl.h"
#include "base/err.h"

#include "check.h"


#define MIB ((size_t)1 << 20)

/* ---- helpers ----------------------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t n;
} buf;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        perror("malloc");
        exit(2);
    }
    return p;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return rng_state = x;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* n bytes of int64 timedelta-like values (1 s steps, jitter, some NaT). */
static buf make_data(size_t n)
{
    buf b = {xmalloc(n), n};
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 8 == 0) {
            uint64_t k = i / 8;
            v = k % 101 == 7 ? (uint64_t)INT64_MIN : k * 1000000000u + rng() % 1000;
        }
        b.p[i] = (uint8_t)(v >> (8 * (i % 8)));
    }
    return b;
}

static buf concat(buf a, buf b)
{
    buf c = {xmalloc(a.n + b.n), a.n + b.n};
    memcpy(c.p, a.p, a.n);
    memcpy(c.p + a.n, b.p, b.n);
    return c;
}

static buf repeat(buf a, size_t times)
{
    buf c = {xmalloc(a.n * times), a.n * times};
    for (size_t i = 0; i < times; i++)
        memcpy(c.p + i * a.n, a.p, a.n);
    return c;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct result {
    int rc;
    size_t outn;
    uint8_t *out;
    char err[256];
} result;

/* Decode from an exact-size heap copy of in into an exact-size heap buffer. */
static result decode(const zf_codec *c, const uint8_t *in, size_t n, size_t cap)
{
    result r = {0};
    uint8_t *inb = n ? xmalloc(n) : NULL;
    if (n)
        memcpy(inb, in, n);
    r.out = cap ? xmalloc(cap) : NULL;
    r.rc = zf_codec_decode(c, inb, n, r.out, cap, &r.outn, r.err, sizeof r.err);
    free(inb);
    return r;
}

static void expect_ok(const zf_codec *c, const char *label, buf enc, buf raw, size_t cap)
{
    result r = decode(c, enc.p, enc.n, cap);
    CHECK(r.rc == ZF_OK, "%s: rc %d: %s", label, r.rc, r.err);
    CHECK(r.rc || (r.outn == raw.n && (raw.n == 0 || memcmp(r.out, raw.p, raw.n) == 0)),
          "%s: wrong output (%zu bytes, want %zu)", label, r.outn, raw.n);
    free(r.out);
}

static void expect_err(const zf_codec *c, const char *label, const uint8_t *in, size_t n,
                       size_t cap, const char *substr)
{
    result r = decode(c, in, n, cap);
    CHECK(r.rc == ZF_ECORRUPT, "%s: rc %d (%s)", label, r.rc, r.err);
    CHECK(r.outn == 0, "%s: outn %zu on error", label, r.outn);
    CHECK(r.rc == ZF_OK || r.err[0], "%s: no reason", label);
    CHECK(!substr || strstr(r.err, substr), "%s: reason \"%s\" lacks \"%s\"", label, r.err,
          substr);
    free(r.out);
}

/* Exact capacity, generous capacity, one byte short. */
static void roundtrip(const zf_codec *c, const char *label, buf enc, buf raw)
{
    expect_ok(c, label, enc, raw, raw.n);
    expect_ok(c, label, enc, raw, raw.n + 4096);
    if (raw.n)
        expect_err(c, label, enc.p, enc.n, raw.n - 1, NULL);
}

/* Empty input, truncations, random garbage. */
static void rejects(const zf_codec *c, const char *label, buf enc, size_t cap)
{
    char l[128];
    snprintf(l, sizeof l, "%s empty", label);
    expect_err(c, l, NULL, 0, cap, NULL);
    size_t cuts[] = {1, 2, 5, enc.n / 2, enc.n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        if (cuts[i] == 0 || cuts[i] >= enc.n)
            continue;
        snprintf(l, sizeof l, "%s truncated to %zu", label, enc.n - cuts[i]);
        expect_err(c, l, enc.p, enc.n - cuts[i], cap, NULL);
    }
    uint8_t garbage[1000];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (uint8_t)rng();
    snprintf(l, sizeof l, "%s garbage", label);
    expect_err(c, l, garbage, sizeof garbage, cap, NULL);
}

static zf_codec *parse(int v3, const char *json, int want_rc, const char *substr)
{
    cJSON *j = cJSON_Parse(json);
    zf_codec *c = NULL;
    char err[256] = "";
    if (!j) {
        CHECK(0, "bad test JSON %s", json);
        return NULL;
    }
    int rc = v3 ? zf_codec_from_v3(j, 8, &c, err, sizeof err) : zf_codec_from_v2(j, &c, err, sizeof err);
    cJSON_Delete(j);
    CHECK(rc == want_rc, "v%d %s: rc %d want %d (%s)", v3 ? 3 : 2, json, rc, want_rc, err);
    CHECK(rc != ZF_OK || c, "v%d %s: no codec", v3 ? 3 : 2, json);
    CHECK(rc == ZF_OK || (!c && err[0]), "v%d %s: codec or no reason on error", v3 ? 3 : 2,
          json);
    CHECK(!substr || strstr(err, substr), "v%d %s: reason \"%s\" lacks \"%s\"", v3 ? 3 : 2,
          json, err, substr);
    if (rc != ZF_OK) {
        zf_codec_free(c);
        return NULL;
    }
    return c;
}

static zf_codec *v3(const char *json)
{
    return parse(1, json, ZF_OK, NULL);
}

static zf_codec *v2(const char *json)
{
    return parse(0, json, ZF_OK, NULL);
}

/* ---- encoders (the libraries' own) ------------------------------------------ */

/* zstd frame; content_size = 0 writes a frame without it (like TensorStore). */
static buf zstd_enc(buf raw, int level, int checksum, int content_size)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, content_size);
    buf b = {xmalloc(ZSTD_compressBound(raw.n)), 0};
    ZSTD_outBuffer ob = {b.p, ZSTD_compressBound(raw.n), 0};
    ZSTD_inBuffer ib = {raw.p, raw.n, 0};
    size_t r;
    do
        r = ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_end);
    while (r && !ZSTD_isError(r));
    CHECK(!ZSTD_isError(r), "zstd encode: %s", ZSTD_getErrorName(r));
    ZSTD_freeCCtx(cc);
    b.n = ob.pos;
    return b;
}

static int zstd_has_size(buf enc)
{
    return ZSTD_getFrameContentSize(enc.p, enc.n) != ZSTD_CONTENTSIZE_UNKNOWN;
}

/* deflate with windowBits 15 (zlib) or 31 (gzip) from `times` copies of raw. */
static buf deflate_enc(buf raw, int level, int wbits, size_t times)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    deflateInit2(&s, level, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&s, raw.n) * times + 64;
    buf b = {xmalloc(cap), 0};
    s.next_out = b.p;
    s.avail_out = (uInt)cap;
    for (size_t i = 0; i < times; i++) {
        s.next_in = raw.p;
        s.avail_in = (uInt)raw.n;
        int r = deflate(&s, i + 1 == times ? Z_FINISH : Z_NO_FLUSH);
        CHECK(r == Z_OK || r == Z_STREAM_END, "deflate %d", r);
    }
    b.n = (size_t)s.total_out;
    deflateEnd(&s);
    return b;
}

static buf bz2_enc(buf raw, int level)
{
    unsigned cap = (unsigned)(raw.n + raw.n / 100 + 600);
    buf b = {xmalloc(cap), 0};
    int r = BZ2_bzBuffToBuffCompress((char *)b.p, &cap, (char *)raw.p, (unsigned)raw.n, level, 0, 0);
    CHECK(r == BZ_OK, "bz2 encode %d", r);
    b.n = cap;
    return b;
}

/* numcodecs LZ4 framing: 4-byte little-endian size, then one LZ4 block. */
static buf lz4_enc(buf raw)
{
    int bound = LZ4_compressBound((int)raw.n);
    buf b = {xmalloc((size_t)bound + 4), 0};
    put_le32(b.p, (uint32_t)raw.n);
    int r = LZ4_compress_default((const char *)raw.p, (char *)b.p + 4, (int)raw.n, bound);
    CHECK(r > 0 || raw.n == 0, "lz4 encode %d", r);
    b.n = (size_t)r + 4;
    return b;
}

static buf blosc_enc(buf raw, const char *cname, int shuffle, size_t typesize)
{
    buf b = {xmalloc(raw.n + BLOSC_MAX_OVERHEAD), 0};
    int r = blosc_compress_ctx(5, shuffle, typesize, raw.n, raw.p, b.p,
                               raw.n + BLOSC_MAX_OVERHEAD, cname, 0, 1);
    CHECK(r > 0, "blosc encode %s/%d: %d", cname, shuffle, r);
    b.n = r > 0 ? (size_t)r : 0;
    return b;
}

static buf crc32c_enc(buf raw)
{
    buf b = {xmalloc(raw.n + 4), raw.n + 4};
    if (raw.n)
        memcpy(b.p, raw.p, raw.n);
    put_le32(b.p + raw.n, zf_crc32c(0, raw.p, raw.n));
    return b;
}

/* xz (format 1), .lzma (format 2) or raw LZMA2 (format 3) via liblzma */
static buf lzma_enc(buf raw, int format, uint32_t preset)
{
    size_t cap = raw.n + raw.n / 2 + 1024, pos = 0;
    buf b = {xmalloc(cap), 0};
    lzma_ret r;
    if (format == 1) {
        r = lzma_easy_buffer_encode(preset, LZMA_CHECK_CRC64, NULL, raw.p, raw.n, b.p, &pos, cap);
    } else {
        lzma_options_lzma o;
        lzma_lzma_preset(&o, preset);
        lzma_filter f[2] = {{format == 2 ? LZMA_FILTER_LZMA1 : LZMA_FILTER_LZMA2, &o},
                            {LZMA_VLI_UNKNOWN, NULL}};
        if (format == 3) {
            r = lzma_raw_buffer_encode(f, NULL, raw.p, raw.n, b.p, &pos, cap);
        } else {
            lzma_stream st = LZMA_STREAM_INIT;
            r = lzma_alone_encoder(&st, &o);
            st.next_in = raw.p, st.avail_in = raw.n, st.next_out = b.p, st.avail_out = cap;
            while (r == LZMA_OK)
                r = lzma_code(&st, LZMA_FINISH);
            r = r == LZMA_STREAM_END ? LZMA_OK : r;
            pos = st.total_out;
            lzma_end(&st);
        }
    }
    CHECK(r == LZMA_OK, "lzma encode (format %d): %d", format, (int)r);
    b.n = pos;
    return b;
}

/* numcodecs Checksum32 framing: 4 little-endian bytes before or after */
static buf sum32_enc(buf raw, uint32_t sum, int at_end)
{
    buf b = {xmalloc(raw.n + 4), raw.n + 4};
    if (raw.n)
        memcpy(b.p + (at_end ? 0 : 4), raw.p, raw.n);
    put_le32(b.p + (at_end ? raw.n : 0), sum);
    return b;
}

/* Adler-32 the textbook way (mod 65521 after every byte), not zlib's */
static uint32_t adler32_ref(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        b = (b + a) % 65521;
    }
    return b << 16 | a;
}

/* numcodecs Shuffle encoding, written out byte by byte */
static buf shuffle_enc(buf raw, size_t es)
{
    buf b = {xmalloc(raw.n), raw.n};
    size_t count = raw.n / es;
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < es; k++)
            b.p[k * count + i] = raw.p[i * es + k];
    return b;
}

/* ---- CRC32C ------------------------------------------------------------------- */

static void test_crc32c_vectors(void)
{
    uint8_t zeros[32] = {0}, ones[32], inc[32];
    memset(ones, 0xff, sizeof ones);
    for (int i = 0; i < 32; i++)
        inc[i] = (uint8_t)i;
    CHECK(zf_crc32c(0, "123456789", 9) == 0xE3069283u, "check value");
    CHECK(zf_crc32c_sw(0, "123456789", 9) == 0xE3069283u, "sw check value");
    CHECK(zf_crc32c(0, NULL, 0) == 0, "empty");
    CHECK(zf_crc32c(0, zeros, 32) == 0x8A9136AAu, "RFC 3720 zeros");
    CHECK(zf_crc32c(0, ones, 32) == 0x62A8AB43u, "RFC 3720 ones");
    CHECK(zf_crc32c(0, inc, 32) == 0x46DD794Eu, "RFC 3720 incrementing");
    CHECK(zf_crc32c(zf_crc32c(0, "1234", 4), "56789", 5) == 0xE3069283u, "chaining");
}

/* The dispatched (SSE4.2 if present) and table versions agree everywhere. */
static void test_crc32c_sw_hw(void)
{
    uint8_t data[1100];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)rng();
    int bad = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len + off <= sizeof data; len += 1 + len / 7)
            bad += zf_crc32c(7, data + off, len) != zf_crc32c_sw(7, data + off, len);
    CHECK(bad == 0, "%d sw/hw disagreements", bad);
}

static void test_crc32c_codec(void)
{
    zf_codec *c = v3("{\"name\":\"crc32c\"}");
    if (!c)
        return;
    buf raw = make_data(10000), enc = crc32c_enc(raw), empty = {NULL, 0};
    buf enc0 = crc32c_enc(empty);
    roundtrip(c, "crc32c", enc, raw);
    roundtrip(c, "crc32c of nothing", enc0, empty);
    expect_err(c, "crc32c short", enc.p, 3, 100, "shorter than the 4-byte checksum");
    rejects(c, "crc32c", enc, raw.n);
    enc.p[1234] ^= 0x10;
    expect_err(c, "crc32c flipped bit", enc.p, enc.n, raw.n, "crc32c mismatch (stored 0x");
    enc.p[1234] ^= 0x10;
    enc.p[enc.n - 1] ^= 1;
    expect_err(c, "crc32c bad stored", enc.p, enc.n, raw.n, "computed 0x");
    free(raw.p), free(enc.p), free(enc0.p);
    zf_codec_free(c);
}

/* ---- zstd ----------------------------------------------------------------------- */

static void zstd_roundtrips(const zf_codec *c, buf raw)
{
    buf e1 = zstd_enc(raw, 1, 0, 1), e3 = zstd_enc(raw, 3, 0, 1);
    buf ens = zstd_enc(raw, 3, 0, 0), eck = zstd_enc(raw, 3, 1, 0);
    CHECK(zstd_has_size(e1) && !zstd_has_size(ens), "content size flag not honoured");
    roundtrip(c, "zstd level 1", e1, raw);
    roundtrip(c, "zstd level 3", e3, raw);
    roundtrip(c, "zstd no content size", ens, raw);
    roundtrip(c, "zstd checksum", eck, raw);
    rejects(c, "zstd", e3, raw.n);
    rejects(c, "zstd no content size", ens, raw.n);
    expect_err(c, "zstd cap-1 header", e3.p, e3.n, raw.n - 1, "frame content size");
    expect_err(c, "zstd truncated", e3.p, e3.n - 1, raw.n, "zstd: truncated frame");
    eck.p[eck.n - 2] ^= 1;
    expect_err(c, "zstd bad checksum", eck.p, eck.n, raw.n, "checksum");
    free(e1.p), free(e3.p), free(ens.p), free(eck.p);
}

/* Two frames (one with content size, one without) around a skippable frame. */
static void zstd_multiframe(const zf_codec *c, buf raw)
{
    buf half = {raw.p, raw.n / 2}, rest = {raw.p + raw.n / 2, raw.n - raw.n / 2};
    buf a = zstd_enc(half, 1, 1, 1), b = zstd_enc(rest, 5, 0, 0);
    uint8_t skip[11] = {0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'};
    buf s = {skip, sizeof skip};
    buf as = concat(a, s), two = concat(as, b);
    roundtrip(c, "zstd two frames + skippable", two, raw);
    expect_err(c, "zstd two frames cap short", two.p, two.n, raw.n / 2 + 10, "exceeds");
    uint8_t junk[3] = {1, 2, 3};
    buf tail = concat(two, (buf){junk, 3});
    expect_err(c, "zstd trailing garbage", tail.p, tail.n, raw.n + 100, "frame at byte");
    buf none = {NULL, 0}, z = zstd_enc(none, 3, 0, 1);
    roundtrip(c, "zstd empty frame", z, none);
    free(a.p), free(b.p), free(as.p), free(two.p), free(tail.p), free(z.p);
}

/* 100 MiB of zeros, cap 1 MiB: fails fast, with and without content size. */
static void zstd_bomb(const zf_codec *c)
{
    buf zeros = {calloc(1, MIB), MIB};
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    for (int content_size = 0; content_size <= 1; content_size++) {
        ZSTD_CCtx_reset(cc, ZSTD_reset_session_only);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, content_size);
        ZSTD_CCtx_setPledgedSrcSize(cc, content_size ? 100 * MIB : ZSTD_CONTENTSIZE_UNKNOWN);
        uint8_t out[65536];
        ZSTD_outBuffer ob = {out, sizeof out, 0};
        for (int i = 0; i < 100; i++) {
            ZSTD_inBuffer ib = {zeros.p, zeros.n, 0};
            ZSTD_compressStream2(cc, &ob, &ib, i == 99 ? ZSTD_e_end : ZSTD_e_continue);
        }
        CHECK(zstd_has_size((buf){out, ob.pos}) == content_size, "bomb header");
        double t = now();
        expect_err(c, "zstd bomb", out, ob.pos, MIB,
                   content_size ? "frame content size 104857600 exceeds capacity" : "exceeds");
        CHECK(now() - t < 5, "zstd bomb took %.2f s", now() - t);
    }
    ZSTD_freeCCtx(cc);
    free(zeros.p);
}

static void test_zstd(void)
{
    zf_codec *c3 = v3("{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}");
    zf_codec *c2 = v2("{\"id\":\"zstd\",\"level\":1}");
    if (!c3 || !c2)
        return;
    buf raw = make_data(256 * 1024);
    zstd_roundtrips(c3, raw);
    zstd_roundtrips(c2, raw);
    zstd_multiframe(c3, raw);
    zstd_bomb(c3);
    uint8_t bad[16] = {0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff};
    expect_err(c3, "zstd bad header", bad, sizeof bad, 100, "zstd: ");
    uint8_t magic[6] = {1, 2, 3, 4, 5, 6};
    expect_err(c3, "zstd bad magic", magic, 6, 100, "zstd: Unknown frame descriptor");
    free(raw.p);
    zf_codec_free(c3), zf_codec_free(c2);
}

/* ---- gzip / zlib ------------------------------------------------------------------ */

static void deflate_family(const zf_codec *c, const char *label, buf raw)
{
    char l[64];
    for (int wbits = 15; wbits <= 31; wbits += 16) {
        buf e = deflate_enc(raw, 6, wbits, 1);
        snprintf(l, sizeof l, "%s/%s", label, wbits == 31 ? "gzip" : "zlib");
        roundtrip(c, l, e, raw);
        rejects(c, l, e, raw.n);
        e.p[e.n - (wbits == 31 ? 6 : 2)] ^= 1; /* the trailing CRC32 / Adler-32 */
        expect_err(c, l, e.p, e.n, raw.n, "incorrect data check");
        free(e.p);
    }
    buf g = deflate_enc(raw, 1, 31, 1), two = concat(g, g), both = concat(raw, raw);
    snprintf(l, sizeof l, "%s two members", label);
    roundtrip(c, l, two, both);
    uint8_t junk[4] = {0, 0, 0, 0};
    buf tail = concat(g, (buf){junk, 4});
    snprintf(l, sizeof l, "%s trailing garbage", label);
    expect_err(c, l, tail.p, tail.n, raw.n + 100, "stream at byte");
    free(g.p), free(two.p), free(both.p), free(tail.p);
}

/* 100 MiB of zeros as 100 gzip members of 1 MiB, and one 16 MiB stream. */
static void deflate_bomb(const zf_codec *c)
{
    buf zeros = {calloc(1, MIB), MIB};
    buf member = deflate_enc(zeros, 9, 31, 1), bomb = repeat(member, 100);
    buf single = deflate_enc(zeros, 1, 31, 16);
    double t = now();
    expect_err(c, "gzip bomb (members)", bomb.p, bomb.n, MIB, "output exceeds 1048576 bytes");
    expect_err(c, "gzip bomb (single)", single.p, single.n, MIB, "output exceeds");
    CHECK(now() - t < 5, "gzip bombs took %.2f s", now() - t);
    free(zeros.p), free(member.p), free(bomb.p), free(single.p);
}

static void test_deflate(void)
{
    zf_codec *g3 = v3("{\"name\":\"gzip\",\"configuration\":{\"level\":5}}");
    zf_codec *g2 = v2("{\"id\":\"gzip\",\"level\":1}");
    zf_codec *z2 = v2("{\"id\":\"zlib\",\"level\":1}");
    if (!g3 || !g2 || !z2)
        return;
    buf raw = make_data(200 * 1000);
    deflate_family(g3, "gzip v3", raw);
    deflate_family(g2, "gzip v2", raw);
    deflate_family(z2, "zlib v2", raw);
    deflate_bomb(g3);
    uint8_t magic[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    expect_err(g3, "gzip header only", magic, sizeof magic, 100, "gzip: truncated input");
    free(raw.p);
    zf_codec_free(g3), zf_codec_free(g2), zf_codec_free(z2);
}

/* ---- bz2 ------------------------------------------------------------------------- */

static void test_bz2(void)
{
    zf_codec *c = v2("{\"id\":\"bz2\",\"level\":9}");
    if (!c)
        return;
    buf raw = make_data(100 * 1000), e = bz2_enc(raw, 9), two = concat(e, e);
    buf both = concat(raw, raw);
    roundtrip(c, "bz2", e, raw);
    roundtrip(c, "bz2 two streams", two, both);
    rejects(c, "bz2", e, raw.n);
    uint8_t junk[8] = {'B', 'Z', 'h', '9', 1, 2, 3, 4};
    buf tail = concat(e, (buf){junk, 8});
    expect_err(c, "bz2 trailing garbage", tail.p, tail.n, raw.n + 100, "stream at byte");
    e.p[e.n / 2] ^= 0x20;
    expect_err(c, "bz2 flipped bit", e.p, e.n, raw.n, "bz2: ");
    buf zeros = {calloc(1, MIB), MIB}, z = bz2_enc(zeros, 9), bomb = repeat(z, 100);
    double t = now();
    expect_err(c, "bz2 bomb", bomb.p, bomb.n, MIB, "output exceeds 1048576 bytes");
    CHECK(now() - t < 5, "bz2 bomb took %.2f s", now() - t);
    free(raw.p), free(e.p), free(two.p), free(both.p), free(tail.p);
    free(zeros.p), free(z.p), free(bomb.p);
    zf_codec_free(c);
}

/* ---- lz4 ---------------------------------------------------------------------------- */

static void test_lz4(void)
{
    zf_codec *c = v2("{\"id\":\"lz4\",\"acceleration\":1}");
    if (!c)
        return;
    buf raw = make_data(300 * 1000), e = lz4_enc(raw), none = {NULL, 0}, e0 = lz4_enc(none);
    roundtrip(c, "lz4", e, raw);
    roundtrip(c, "lz4 empty", e0, none);
    rejects(c, "lz4", e, raw.n);
    expect_err(c, "lz4 cap", e.p, e.n, raw.n - 1, "exceeds capacity");
    uint8_t hdr[8] = {0xff, 0xc9, 0x9a, 0x3b, 0, 0, 0, 0}; /* 999999999 */
    expect_err(c, "lz4 bomb", hdr, sizeof hdr, 8000,
               "lz4: header size 999999999 exceeds capacity 8000");
    put_le32(e.p, (uint32_t)raw.n + 1);
    expect_err(c, "lz4 size mismatch", e.p, e.n, raw.n + 10, "lz4: ");
    put_le32(e.p, (uint32_t)raw.n);
    e.p[e.n / 2] ^= 0xff;
    result r = decode(c, e.p, e.n, raw.n); /* no checksum: may "succeed" */
    CHECK(r.rc == ZF_OK || r.rc == ZF_ECORRUPT, "lz4 corrupt rc %d", r.rc);
    free(r.out), free(raw.p), free(e.p), free(e0.p);
    zf_codec_free(c);
}

/* ---- blosc ---------------------------------------------------------------------------- */

static void blosc_one(const zf_codec *c, buf raw, const char *cname, int shuffle)
{
    char l[64];
    snprintf(l, sizeof l, "blosc %s shuffle %d", cname, shuffle);
    buf e = blosc_enc(raw, cname, shuffle, 8);
    if (!e.n) {
        free(e.p);
        return;
    }
    roundtrip(c, l, e, raw);
    rejects(c, l, e, raw.n);
    expect_err(c, l, e.p, e.n, raw.n - 1, "decoded size");
    e.p[0] = 9; /* format version */
    expect_err(c, l, e.p, e.n, raw.n, "blosc: invalid header");
    free(e.p);
}

static void blosc_special(const zf_codec *c, buf raw)
{
    buf none = {NULL, 0};
    uint8_t hdr[16] = {2, 1, 0x13, 8};
    put_le32(hdr + 12, 16); /* nbytes 0, cbytes 16 */
    expect_ok(c, "blosc empty buffer", (buf){hdr, 16}, none, 0);
    buf e = blosc_enc(raw, "lz4", 1, 8);
    e.p[2] = (uint8_t)((e.p[2] & 0x1f) | (6 << 5)); /* no such compressor */
    expect_err(c, "blosc unknown compressor", e.p, e.n, raw.n, "blosc: ");
    buf zeros = {calloc(1, 100 * MIB), 100 * MIB}, bomb = blosc_enc(zeros, "lz4", 1, 8);
    double t = now();
    expect_err(c, "blosc bomb", bomb.p, bomb.n, MIB, "exceeds capacity 1048576");
    CHECK(now() - t < 1, "blosc bomb took %.2f s", now() - t);
    free(e.p), free(zeros.p), free(bomb.p);
}

static void test_blosc(void)
{
    zf_codec *c = v3("{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,"
                     "\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":0}}");
    if (!c)
        return;
    buf raw = make_data(256 * 1024);
    char list[256];
    snprintf(list, sizeof list, "%s", blosc_list_compressors());
    int n = 0;
    for (char *save, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save))
        for (int shuffle = 0; shuffle <= 2; shuffle++, n++)
            blosc_one(c, raw, name, shuffle);
    CHECK(n >= 15, "only %d blosc combinations (%s)", n, blosc_list_compressors());
    printf("blosc compressors: %s (%d combinations)\n", blosc_list_compressors(), n);
    blosc_special(c, raw);
    free(raw.p);
    zf_codec_free(c);
}

/* ---- numcodecs checksums ---------------------------------------------------------- */

/* One checksum codec: round trips, damage, and the other location refused. */
static void checksum_one(const char *json, const char *label, buf raw, uint32_t sum, int at_end)
{
    zf_codec *c = v2(json);
    if (!c)
        return;
    char l[96];
    buf enc = sum32_enc(raw, sum, at_end), other = sum32_enc(raw, sum, !at_end);
    roundtrip(c, label, enc, raw);
    rejects(c, label, enc, raw.n);
    snprintf(l, sizeof l, "%s short", label);
    expect_err(c, l, enc.p, 3, 100, "shorter than the 4-byte checksum");
    snprintf(l, sizeof l, "%s flipped bit", label);
    enc.p[enc.n / 2] ^= 0x08;
    char want[64];
    snprintf(want, sizeof want, "%s mismatch (stored 0x", label);
    expect_err(c, l, enc.p, enc.n, raw.n, want);
    enc.p[enc.n / 2] ^= 0x08;
    snprintf(l, sizeof l, "%s bad stored", label);
    enc.p[at_end ? enc.n - 1 : 0] ^= 1;
    expect_err(c, l, enc.p, enc.n, raw.n, "computed 0x");
    snprintf(l, sizeof l, "%s at the other end", label);
    expect_err(c, l, other.p, other.n, raw.n, "mismatch");
    free(enc.p), free(other.p);
    zf_codec_free(c);
}

static void test_checksum32(void)
{
    buf raw = make_data(10001); /* odd: fletcher32's last byte alone */
    checksum_one("{\"id\":\"crc32\"}", "crc32", raw, (uint32_t)crc32(0, raw.p, (uInt)raw.n), 0);
    checksum_one("{\"id\":\"crc32\",\"location\":\"end\"}", "crc32", raw,
                 (uint32_t)crc32(0, raw.p, (uInt)raw.n), 1);
    checksum_one("{\"id\":\"adler32\"}", "adler32", raw, adler32_ref(raw.p, raw.n), 0);
    checksum_one("{\"id\":\"adler32\",\"location\":\"end\"}", "adler32", raw,
                 adler32_ref(raw.p, raw.n), 1);
    checksum_one("{\"id\":\"crc32c\",\"location\":\"start\"}", "crc32c", raw,
                 zf_crc32c_sw(0, raw.p, raw.n), 0);
    checksum_one("{\"id\":\"fletcher32\"}", "fletcher32", raw, zf_fletcher32(raw.p, raw.n), 1);
    /* Fletcher-32 by hand: words 0x0102 0x0304, odd byte 0x05 -> 0x0500 */
    const uint8_t five[5] = {1, 2, 3, 4, 5};
    uint32_t s1 = 0x0102 + 0x0304 + 0x0500, s2 = 0x0102 + (0x0102 + 0x0304) + s1;
    CHECK(zf_fletcher32(five, 5) == (s2 << 16 | s1), "fletcher32 by hand: 0x%08x",
          (unsigned)zf_fletcher32(five, 5));
    CHECK(crc32(0, (const Bytef *)"123456789", 9) == 0xCBF43926u, "crc32 check value");
    free(raw.p);
}

/* ---- numcodecs shuffle ---------------------------------------------------------------- */

static void test_shuffle(void)
{
    buf raw = make_data(8 * 1000);
    size_t sizes[] = {2, 3, 8, 16};
    char json[64], l[64];
    for (size_t i = 0; i < 4; i++) {
        snprintf(json, sizeof json, "{\"id\":\"shuffle\",\"elementsize\":%zu}", sizes[i]);
        zf_codec *c = v2(json);
        buf cut = {raw.p, raw.n / sizes[i] * sizes[i]}, e = shuffle_enc(cut, sizes[i]);
        snprintf(l, sizeof l, "shuffle %zu", sizes[i]);
        roundtrip(c, l, e, cut);
        if (cut.n % 16 == 0) /* a byte short of whole elements */
            expect_err(c, l, e.p, e.n - 1, cut.n, "not a whole number of");
        free(e.p);
        zf_codec_free(c);
    }
    zf_codec *one = v2("{\"id\":\"shuffle\",\"elementsize\":1}");
    zf_codec *def = v2("{\"id\":\"shuffle\"}"); /* numcodecs' default: 4 */
    zf_codec *v3d = parse(1, "{\"name\":\"numcodecs.shuffle\",\"configuration\":{}}", ZF_OK, NULL);
    buf odd = {raw.p, 1001}, e4 = shuffle_enc(raw, 4), e8 = shuffle_enc(raw, 8);
    roundtrip(one, "shuffle 1 (a copy)", odd, odd);
    roundtrip(def, "shuffle default 4", e4, raw);
    roundtrip(v3d, "numcodecs.shuffle default: the data type's 8", e8, raw);
    free(e4.p), free(e8.p), free(raw.p);
    zf_codec_free(one), zf_codec_free(def), zf_codec_free(v3d);
}

/* ---- lzma ------------------------------------------------------------------------------ */

static void lzma_streams(const zf_codec *xz, const zf_codec *autod, buf raw)
{
    buf half = {raw.p, raw.n / 2}, rest = {raw.p + raw.n / 2, raw.n - raw.n / 2};
    buf a = lzma_enc(half, 1, 1), b = lzma_enc(rest, 1, 6), two = concat(a, b);
    roundtrip(xz, "lzma two streams", two, raw);
    /* after a complete stream, as lzma.decompress (checked with Python 3.11):
     * bytes the next decoder refuses are dropped, bytes it waits on for more
     * are a stream cut short; xz and auto wait on different bytes */
    uint8_t junk[16], zeros[12] = {0};
    for (int i = 0; i < 16; i++)
        junk[i] = (uint8_t)(i + 1);
    buf j7 = concat(a, (buf){junk, 7}), j16 = concat(a, (buf){junk, 16});
    buf tail = concat(a, (buf){zeros, sizeof zeros});
    expect_ok(xz, "xz: 16 bytes of junk after a stream", j16, half, raw.n);
    expect_ok(xz, "xz: 12 zeros after a stream", tail, half, raw.n);
    expect_err(xz, "xz: 7 bytes of junk after a stream", j7.p, j7.n, raw.n, "truncated input");
    expect_ok(autod, "auto: 7 bytes of junk after a stream", j7, half, raw.n);
    expect_ok(autod, "auto: 16 bytes of junk after a stream", j16, half, raw.n);
    expect_err(autod, "auto: 12 zeros after a stream", tail.p, tail.n, raw.n, "truncated input");
    free(j7.p), free(j16.p);
    buf cut = {two.p, two.n - 5};
    expect_err(xz, "lzma second stream cut short", cut.p, cut.n, raw.n,
               "lzma: stream at byte");
    expect_err(xz, "lzma two streams cap short", two.p, two.n, raw.n / 2 + 10, "exceeds");
    free(a.p), free(b.p), free(two.p), free(tail.p);
}

/* 100 MiB of zeros, cap 1 MiB: fails fast */
static void lzma_bomb(const zf_codec *xz)
{
    size_t big = 100 * MIB;
    buf zeros = {calloc(1, big), big}, e = lzma_enc(zeros, 1, 0);
    double t = now();
    expect_err(xz, "lzma bomb", e.p, e.n, MIB, "output exceeds 1048576 bytes");
    CHECK(now() - t < 2, "lzma bomb took %.2f s", now() - t);
    free(zeros.p), free(e.p);
}

static void test_lzma(void)
{
    zf_codec *xz = v2("{\"id\":\"lzma\",\"format\":1,\"check\":-1,\"preset\":null,\"filters\":null}");
    zf_codec *autod = v2("{\"id\":\"lzma\",\"format\":0}");
    zf_codec *alone = v2("{\"id\":\"lzma\",\"format\":2}");
    zf_codec *rawc = v2("{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":33,\"preset\":6}]}");
    zf_codec *v3c = v3("{\"name\":\"numcodecs.lzma\",\"configuration\":{}}");
    if (!xz || !autod || !alone || !rawc || !v3c)
        return;
    buf raw = make_data(200 * 1000);
    buf ex = lzma_enc(raw, 1, 6), ea = lzma_enc(raw, 2, 6), er = lzma_enc(raw, 3, 6);
    roundtrip(xz, "lzma xz", ex, raw);
    roundtrip(v3c, "numcodecs.lzma xz", ex, raw);
    roundtrip(autod, "lzma auto (xz)", ex, raw);
    roundtrip(autod, "lzma auto (alone)", ea, raw);
    roundtrip(alone, "lzma alone", ea, raw);
    roundtrip(rawc, "lzma raw", er, raw);
    rejects(xz, "lzma xz", ex, raw.n);
    rejects(alone, "lzma alone", ea, raw.n);
    rejects(rawc, "lzma raw", er, raw.n);
    expect_err(xz, "lzma xz given .lzma", ea.p, ea.n, raw.n, "not a stream of the configured format");
    expect_err(alone, "lzma alone given xz", ex.p, ex.n, raw.n, "lzma: ");
    ex.p[ex.n / 2] ^= 0x40;
    expect_err(xz, "lzma flipped bit", ex.p, ex.n, raw.n, "lzma: ");
    lzma_streams(xz, autod, raw);
    lzma_bomb(xz);
    /* a raw chain whose dictionary (1 GiB) exceeds what a small chunk allows */
    zf_codec *huge = v2("{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":33,\"dict_size\":1073741824}]}");
    result r = decode(huge, er.p, er.n, 1000);
    CHECK(r.rc == ZF_ECORRUPT && strstr(r.err, "more memory"), "lzma memory bound: rc %d (%s)", r.rc, r.err);
    free(r.out), free(raw.p), free(ex.p), free(ea.p), free(er.p);
    zf_codec_free(xz), zf_codec_free(autod), zf_codec_free(alone), zf_codec_free(rawc);
    zf_codec_free(v3c), zf_codec_free(huge);
}

/* ---- metadata parsing --------------------------------------------------------------- */

static void check_name(int v3form, const char *json, const char *name)
{
    zf_codec *c = parse(v3form, json, ZF_OK, NULL);
    CHECK(c && strcmp(zf_codec_name(c), name) == 0, "%s: name %s", json,
          c ? zf_codec_name(c) : "-");
    zf_codec_free(c);
}

static void test_parse_v3(void)
{
    check_name(1, "\"zstd\"", "zstd");
    check_name(1, "\"crc32c\"", "crc32c");
    check_name(1, "{\"name\":\"crc32c\",\"configuration\":{}}", "crc32c");
    check_name(1, "{\"name\":\"gzip\",\"configuration\":{\"level\":5},\"must_understand\":false}", "gzip");
    check_name(1, "{\"name\":\"zstd\",\"configuration\":{\"level\":0,\"checksum\":true,\"x\":1}}", "zstd");
    check_name(1, "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":9,"
                  "\"shuffle\":\"bitshuffle\",\"typesize\":8,\"blocksize\":0,\"extra\":[1]}}", "blosc");
    check_name(1, "{\"name\":\"numcodecs.lz4\",\"configuration\":{}}", "numcodecs.lz4");
    check_name(1, "{\"name\":\"numcodecs.blosc\",\"configuration\":{\"cname\":\"lz4\",\"shuffle\":-1}}", "numcodecs.blosc");
    check_name(1, "{\"name\":\"numcodecs.lzma\",\"configuration\":{}}", "numcodecs.lzma");
    check_name(1, "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":8}}", "numcodecs.shuffle");
    check_name(1, "{\"name\":\"numcodecs.crc32\",\"configuration\":{}}", "numcodecs.crc32");
    check_name(1, "{\"name\":\"numcodecs.adler32\",\"configuration\":{\"location\":\"end\"}}", "numcodecs.adler32");
    check_name(1, "{\"name\":\"numcodecs.fletcher32\",\"configuration\":{}}", "numcodecs.fletcher32");
    check_name(1, "{\"name\":\"numcodecs.crc32c\"}", "numcodecs.crc32c");
    const char *unknown[] = {"\"bytes\"", "\"transpose\"", "{\"name\":\"sharding_indexed\"}",
                             "\"vlen-utf8\"", "{\"name\":\"lzma\",\"configuration\":{}}",
                             "\"ZSTD\"", "\"numcodecs.delta\"", "\"numcodecs.fixedscaleoffset\"",
                             "\"numcodecs.astype\"", "\"crc32\""};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
        parse(1, unknown[i], ZF_ENOTFOUND, "unknown");
    const char *bad[] = {
        "42", "null", "[\"zstd\"]", "{\"configuration\":{}}", "{\"name\":3}",
        "{\"name\":\"zstd\",\"configuration\":[]}",
        "{\"name\":\"zstd\",\"configuration\":{\"level\":\"3\"}}",
        "{\"name\":\"zstd\",\"configuration\":{\"level\":1.5}}",
        "{\"name\":\"zstd\",\"configuration\":{\"level\":1e30}}",
        "{\"name\":\"zstd\",\"configuration\":{\"checksum\":1}}",
        "{\"name\":\"gzip\",\"configuration\":{\"level\":null}}",
        "{\"name\":\"blosc\",\"configuration\":{\"shuffle\":1}}",
        "{\"name\":\"blosc\",\"configuration\":{\"shuffle\":\"byteshuffle\"}}",
        "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lzma\"}}",
        "{\"name\":\"blosc\",\"configuration\":{\"cname\":5}}",
        "{\"name\":\"blosc\",\"configuration\":{\"clevel\":10}}",
        "{\"name\":\"blosc\",\"configuration\":{\"typesize\":0}}",
        "{\"name\":\"blosc\",\"configuration\":{\"blocksize\":-1}}",
        "{\"name\":\"numcodecs.blosc\",\"configuration\":{\"shuffle\":\"shuffle\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        parse(1, bad[i], ZF_ECORRUPT, NULL);
    parse(1, "{\"name\":\"zstd\",\"configuration\":{\"level\":\"3\"}}", ZF_ECORRUPT,
          "zstd: configuration \"level\" must be an integer");
    parse(1, "{\"name\":\"blosc\",\"configuration\":{\"shuffle\":\"x\"}}", ZF_ECORRUPT,
          "shuffle");
}

static void test_parse_v2(void)
{
    check_name(0, "{\"id\":\"zstd\",\"level\":3,\"checksum\":false}", "zstd");
    check_name(0, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}", "blosc");
    check_name(0, "{\"id\":\"blosc\",\"cname\":\"snappy\",\"clevel\":5,\"shuffle\":-1}", "blosc");
    check_name(0, "{\"id\":\"zlib\",\"level\":1}", "zlib");
    check_name(0, "{\"id\":\"gzip\",\"level\":1}", "gzip");
    check_name(0, "{\"id\":\"bz2\",\"level\":1}", "bz2");
    check_name(0, "{\"id\":\"lz4\",\"acceleration\":1}", "lz4");
    check_name(0, "{\"id\":\"lzma\"}", "lzma");
    check_name(0, "{\"id\":\"lzma\",\"format\":1,\"check\":-1,\"preset\":null,\"filters\":null}", "lzma");
    check_name(0, "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":3,\"dist\":4},{\"id\":33,\"preset\":1}]}", "lzma");
    check_name(0, "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":4611686018427387905,\"dict_size\":65536}]}", "lzma");
    check_name(0, "{\"id\":\"shuffle\",\"elementsize\":8}", "shuffle");
    check_name(0, "{\"id\":\"shuffle\"}", "shuffle");
    check_name(0, "{\"id\":\"crc32\"}", "crc32");
    check_name(0, "{\"id\":\"crc32\",\"location\":\"end\"}", "crc32");
    check_name(0, "{\"id\":\"adler32\",\"location\":\"start\"}", "adler32");
    check_name(0, "{\"id\":\"fletcher32\"}", "fletcher32");
    check_name(0, "{\"id\":\"crc32c\"}", "crc32c");
    /* array filters and unknown ids are not bytes codecs: the pipeline says why */
    const char *unknown[] = {"{\"id\":\"delta\"}", "{\"id\":\"fixedscaleoffset\"}",
                             "{\"id\":\"Zstd\"}", "{\"id\":\"zfpy\",\"mode\":4}",
                             "{\"id\":\"jenkins_lookup3\"}", "{\"id\":\"quantize\"}"};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
        parse(0, unknown[i], ZF_ENOTFOUND, "unknown bytes-to-bytes codec");
    const char *unsupported[] = {
        "{\"id\":\"lzma\",\"format\":1,\"filters\":[{\"id\":33}]}",
        "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":10}]}",
    };
    for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++)
        parse(0, unsupported[i], ZF_EUNSUPPORTED, "lzma: ");
    const char *bad[] = {
        "{}", "{\"id\":null}", "{\"id\":7}", "[1]", "\"zstd\"",
        "{\"id\":\"zstd\",\"level\":\"1\"}", "{\"id\":\"zstd\",\"checksum\":\"yes\"}",
        "{\"id\":\"blosc\",\"shuffle\":3}", "{\"id\":\"blosc\",\"shuffle\":-2}",
        "{\"id\":\"blosc\",\"shuffle\":\"shuffle\"}", "{\"id\":\"blosc\",\"cname\":\"lzma\"}",
        "{\"id\":\"blosc\",\"clevel\":true}", "{\"id\":\"blosc\",\"blocksize\":0.5}",
        "{\"id\":\"lz4\",\"acceleration\":\"fast\"}", "{\"id\":\"bz2\",\"level\":[9]}",
        "{\"id\":\"zlib\",\"level\":{}}",
        "{\"id\":\"lzma\",\"format\":4}", "{\"id\":\"lzma\",\"format\":\"xz\"}",
        "{\"id\":\"lzma\",\"check\":2}", "{\"id\":\"lzma\",\"preset\":10}",
        "{\"id\":\"lzma\",\"format\":3}", "{\"id\":\"lzma\",\"format\":3,\"filters\":[]}",
        "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":3}]}",
        "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":33,\"preset\":12}]}",
        "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":33,\"level\":1}]}",
        "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":3,\"dist\":0},{\"id\":33}]}",
        "{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":33},{\"id\":33},{\"id\":33},{\"id\":33},{\"id\":33}]}",
        "{\"id\":\"shuffle\",\"elementsize\":\"8\"}", "{\"id\":\"shuffle\",\"elementsize\":2.5}",
        "{\"id\":\"crc32\",\"location\":\"middle\"}", "{\"id\":\"adler32\",\"location\":1}",
        "{\"id\":\"fletcher32\",\"location\":\"end\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        parse(0, bad[i], ZF_ECORRUPT, NULL);
    parse(0, "null", ZF_EINVAL, NULL);
}

/* the largest encoding of n bytes under the v2 codec of id `json` */
static size_t max_enc(const char *json, size_t n)
{
    zf_codec *c = v2(json);
    size_t m = c ? zf_codec_max_encoded(c, n) : 0;
    zf_codec_free(c);
    return m;
}

static void test_api_misc(void)
{
    /* each codec's largest encoding covers its library's own worst case */
    size_t sizes[] = {0, 1, 100, 65536, MIB, 1000 * MIB, (size_t)2000 * MIB};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        CHECK(max_enc("{\"id\":\"zstd\"}", n) >= ZSTD_compressBound(n) + 256, "zstd %zu", n);
        CHECK(max_enc("{\"id\":\"gzip\"}", n) >= compressBound((uLong)n) + 18 + 256, "gzip %zu", n);
        CHECK(max_enc("{\"id\":\"zlib\"}", n) >= compressBound((uLong)n), "zlib %zu", n);
        CHECK(max_enc("{\"id\":\"bz2\"}", n) >= n + n / 100 + 600, "bz2 %zu", n);
        CHECK(n > LZ4_MAX_INPUT_SIZE ||
              max_enc("{\"id\":\"lz4\"}", n) >= (size_t)LZ4_compressBound((int)n) + 4, "lz4 %zu", n);
        CHECK(max_enc("{\"id\":\"blosc\"}", n) >= n + BLOSC_MAX_OVERHEAD, "blosc %zu", n);
        CHECK(max_enc("{\"id\":\"lzma\"}", n) >= lzma_stream_buffer_bound(n), "lzma %zu", n);
        CHECK(max_enc("{\"id\":\"shuffle\"}", n) == n, "shuffle %zu", n);
        CHECK(max_enc("{\"id\":\"crc32c\"}", n) == n + 4, "crc32c %zu", n);
        CHECK(max_enc("{\"id\":\"fletcher32\"}", n) == n + 4, "fletcher32 %zu", n);
    }
    /* and no more than a small multiple of it: an inner chunk of 8 bytes
     * cannot point at megabytes */
    CHECK(max_enc("{\"id\":\"zstd\"}", 8) <= 2048, "zstd of 8 bytes: %zu",
          max_enc("{\"id\":\"zstd\"}", 8));
    CHECK(max_enc("{\"id\":\"zstd\"}", SIZE_MAX - 10) == SIZE_MAX, "saturates");
    CHECK(max_enc("{\"id\":\"crc32c\"}", SIZE_MAX - 1) == SIZE_MAX, "saturates near max");
    /* the work meter counts what decoders are given */
    uint8_t frame[64];
    size_t fn = ZSTD_compress(frame, sizeof frame, "12345678", 8, 1);
    zf_codec *z = v3("\"zstd\"");
    uint8_t out[8];
    size_t got = 0;
    uint64_t before = zf_codec_work();
    CHECK(z && zf_codec_decode(z, frame, fn, out, sizeof out, &got, NULL, 0) == ZF_OK && got == 8,
          "zstd decodes");
    CHECK(zf_codec_work() - before == fn, "work meter: %llu bytes, gave %zu",
          (unsigned long long)(zf_codec_work() - before), fn);
    zf_codec_free(z);
    zf_codec *c = v3("\"zstd\"");
    size_t outn = 7;
    CHECK(zf_codec_decode(c, NULL, 5, NULL, 0, &outn, NULL, 0) == ZF_EINVAL, "NULL in");
    CHECK(outn == 0, "outn reset");
    zf_codec_free(c);
    zf_codec_free(NULL);
}

/* ---- samples from numcodecs / zarr-python ------------------------------------------------ */

static buf read_file(const char *path)
{
    buf b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return b;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    b.p = xmalloc(len > 0 ? (size_t)len + 1 : 1);
    b.n = fread(b.p, 1, len > 0 ? (size_t)len : 0, f);
    b.p[b.n] = 0;
    fclose(f);
    return b;
}

/* Decodes data through the v3 b2b codec list (in reverse) or the v2 compressor. */
static int decode_sample(const cJSON *s, buf data, buf raw, char *why, size_t whycap)
{
    const cJSON *list = cJSON_GetObjectItem(s, "v3"), *comp = cJSON_GetObjectItem(s, "v2");
    int count = list ? cJSON_GetArraySize(list) : 1;
    buf cur = {xmalloc(data.n), data.n};
    memcpy(cur.p, data.p, data.n);
    int rc = 0;
    for (int i = count - 1; i >= 0 && rc == 0; i--) {
        zf_codec *c = NULL;
        rc = list ? zf_codec_from_v3(cJSON_GetArrayItem(list, i), 8, &c, why, whycap)
                  : zf_codec_from_v2(comp, &c, why, whycap);
        if (rc)
            break;
        size_t cap = i == 0 ? raw.n : 2 * raw.n + 65536, outn; /* (any room will do) */
        buf next = {xmalloc(cap), 0};
        rc = zf_codec_decode(c, cur.p, cur.n, next.p, cap, &outn, why, whycap);
        next.n = outn;
        zf_codec_free(c);
        free(cur.p);
        cur = next;
    }
    if (rc == 0 && (cur.n != raw.n || memcmp(cur.p, raw.p, raw.n) != 0)) {
        snprintf(why, whycap, "decoded bytes differ");
        rc = -100;
    }
    free(cur.p);
    return rc;
}

static void test_python_samples(void)
{
    const char *dir = "data/codec/";
    char path[512];
    snprintf(path, sizeof path, "%smanifest.json", dir);
    buf man = read_file(path);
    cJSON *j = man.p ? cJSON_Parse((char *)man.p) : NULL;
    CHECK(j != NULL, "cannot read %s (run from tests/)", path);
    snprintf(path, sizeof path, "%sraw.bin", dir);
    buf raw = read_file(path);
    int n = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "samples")) {
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(s, "file"));
        snprintf(path, sizeof path, "%s%s", dir, file ? file : "?");
        buf data = read_file(path), own = {NULL, 0}, want = raw;
        const char *rawf = cJSON_GetStringValue(cJSON_GetObjectItem(s, "raw"));
        if (rawf) { /* decodes to another file than raw.bin */
            char rpath[512];
            snprintf(rpath, sizeof rpath, "%s%s", dir, rawf);
            want = own = read_file(rpath);
        }
        char why[256] = "";
        int rc = data.p && want.p ? decode_sample(s, data, want, why, sizeof why) : -1;
        CHECK(rc == 0, "sample %s: rc %d: %s", path, rc, why);
        free(data.p), free(own.p);
        n++;
    }
    CHECK(n >= 70, "only %d python samples", n);
    printf("python samples: %d decoded\n", n);
    cJSON_Delete(j);
    free(man.p), free(raw.p);
}

/* ---- fuzzing, threads, benchmark ------------------------------------------------------ */

typedef struct sample {
    const char *label;
    zf_codec *codec;
    buf enc, raw;
} sample;

enum { NSAMPLES = 12 };

static void make_samples(sample *s, buf raw)
{
    s[0] = (sample){"zstd", v3("\"zstd\""), zstd_enc(raw, 3, 1, 0), raw};
    s[1] = (sample){"gzip", v3("\"gzip\""), deflate_enc(raw, 6, 31, 1), raw};
    s[2] = (sample){"zlib", v2("{\"id\":\"zlib\"}"), deflate_enc(raw, 6, 15, 1), raw};
    s[3] = (sample){"bz2", v2("{\"id\":\"bz2\"}"), bz2_enc(raw, 9), raw};
    s[4] = (sample){"lz4", v2("{\"id\":\"lz4\"}"), lz4_enc(raw), raw};
    s[5] = (sample){"blosc-lz4", v3("\"blosc\""), blosc_enc(raw, "lz4", 1, 8), raw};
    s[6] = (sample){"blosc-zstd", v3("\"blosc\""), blosc_enc(raw, "zstd", 2, 8), raw};
    s[7] = (sample){"crc32c", v3("\"crc32c\""), crc32c_enc(raw), raw};
    s[8] = (sample){"lzma", v2("{\"id\":\"lzma\"}"), lzma_enc(raw, 1, 1), raw};
    s[9] = (sample){"crc32", v2("{\"id\":\"crc32\"}"),
                    sum32_enc(raw, (uint32_t)crc32(0, raw.p, (uInt)raw.n), 0), raw};
    s[10] = (sample){"fletcher32", v2("{\"id\":\"fletcher32\"}"),
                     sum32_enc(raw, zf_fletcher32(raw.p, raw.n), 1), raw};
    s[11] = (sample){"adler32", v2("{\"id\":\"adler32\",\"location\":\"end\"}"),
                     sum32_enc(raw, adler32_ref(raw.p, raw.n), 1), raw};
}

static void free_samples(sample *s)
{
    for (int i = 0; i < NSAMPLES; i++)
        zf_codec_free(s[i].codec), free(s[i].enc.p);
}

/* One random mutation of enc: flips, truncation, or a random 32-bit word. */
static buf mutate(buf enc)
{
    buf m = {xmalloc(enc.n), enc.n};
    memcpy(m.p, enc.p, enc.n);
    int kind = (int)(rng() % 4), flips = 1 + (int)(rng() % 4);
    if (kind == 0)
        m.n = (size_t)(rng() % enc.n);
    for (int i = 0; kind && i < flips; i++) {
        size_t at = kind == 1 ? (size_t)(rng() % (enc.n < 32 ? enc.n : 32)) : (size_t)(rng() % enc.n);
        if (kind == 3 && at + 4 <= m.n)
            put_le32(m.p + at, (uint32_t)rng());
        else
            m.p[at] ^= (uint8_t)(1u << (rng() % 8));
    }
    return m;
}

static void test_fuzz(const sample *s, int rounds)
{
    for (int i = 0; i < NSAMPLES; i++) {
        int ok = 0, bad = 0;
        for (int k = 0; k < rounds; k++) {
            buf m = mutate(s[i].enc);
            size_t cap = s[i].raw.n + (rng() % 2 ? 0 : 100);
            result r = decode(s[i].codec, m.p, m.n, cap);
            ok += r.rc == ZF_OK, bad += r.rc == ZF_ECORRUPT;
            CHECK(r.rc == ZF_OK || r.rc == ZF_ECORRUPT, "fuzz %s rc %d", s[i].label, r.rc);
            CHECK(r.outn <= cap, "fuzz %s outn %zu > cap", s[i].label, r.outn);
            free(r.out), free(m.p);
        }
        CHECK(bad > 0, "fuzz %s: no mutation rejected", s[i].label);
        printf("fuzz %-10s %4d mutations: %d accepted, %d rejected\n", s[i].label, rounds, ok, bad);
    }
}

static void *thread_main(void *arg)
{
    const sample *s = arg;
    intptr_t bad = 0;
    for (int k = 0; k < 20; k++)
        for (int i = 0; i < NSAMPLES; i++) {
            result r = decode(s[i].codec, s[i].enc.p, s[i].enc.n, s[i].raw.n);
            bad += r.rc != ZF_OK || r.outn != s[i].raw.n || memcmp(r.out, s[i].raw.p, r.outn);
            free(r.out);
        }
    return (void *)bad;
}

/* Concurrent decoding with shared codecs; thread exit frees per-thread state. */
static void test_threads(const sample *s)
{
    pthread_t t[4];
    int started[4];
    for (int i = 0; i < 4; i++) {
        started[i] = pthread_create(&t[i], NULL, thread_main, (void *)s) == 0;
        CHECK(started[i], "pthread_create");
    }
    for (int i = 0; i < 4; i++) {
        void *bad = NULL;
        if (started[i])
            pthread_join(t[i], &bad);
        CHECK(bad == NULL, "thread %d: %ld bad decodes", i, (long)(intptr_t)bad);
    }
}

static void bench_one(const char *label, const zf_codec *c, buf enc, buf raw)
{
    uint8_t *out = xmalloc(raw.n);
    size_t outn;
    int iters = 0;
    double t0 = now(), t = 0;
    while (t < 0.5) {
        int rc = zf_codec_decode(c, enc.p, enc.n, out, raw.n, &outn, NULL, 0);
        CHECK(rc == 0 && outn == raw.n, "bench %s", label);
        iters++;
        t = now() - t0;
    }
    printf("bench %-28s ratio %5.2f  %7.0f MB/s  (%.1f us/chunk)\n", label,
           (double)raw.n / (double)enc.n, (double)raw.n * iters / t / 1e6, t / iters * 1e6);
    free(out);
}

/* 1 MiB int64 chunks: realistic timedeltas, and an all-NaT (fill) chunk. */
static void bench(void)
{
    buf raw = make_data(MIB), nat = {xmalloc(MIB), MIB};
    for (size_t i = 0; i < MIB; i++)
        nat.p[i] = i % 8 == 7 ? 0x80 : 0;
    zf_codec *z = v3("\"zstd\""), *g = v3("\"gzip\""), *b = v3("\"blosc\""), *l = v2("{\"id\":\"lz4\"}");
    buf e[7] = {zstd_enc(raw, 1, 0, 1), zstd_enc(raw, 3, 0, 0), zstd_enc(nat, 3, 0, 1),
                deflate_enc(raw, 6, 31, 1), blosc_enc(raw, "lz4", 1, 8),
                blosc_enc(raw, "zstd", 2, 8), lz4_enc(raw)};
    bench_one("zstd-1 timedeltas", z, e[0], raw);
    bench_one("zstd-3 timedeltas (no size)", z, e[1], raw);
    bench_one("zstd-3 all NaT", z, e[2], nat);
    bench_one("gzip-6 timedeltas", g, e[3], raw);
    bench_one("blosc lz4 shuffle", b, e[4], raw);
    bench_one("blosc zstd bitshuffle", b, e[5], raw);
    bench_one("lz4 timedeltas", l, e[6], raw);
    for (int i = 0; i < 7; i++)
        free(e[i].p);
    zf_codec_free(z), zf_codec_free(g), zf_codec_free(b), zf_codec_free(l);
    free(raw.p), free(nat.p);
}

int main(void)
{
    test_crc32c_vectors();
    test_crc32c_sw_hw();
    test_crc32c_codec();
    test_zstd();
    test_deflate();
    test_bz2();
    test_lz4();
    test_blosc();
    test_checksum32();
    test_shuffle();
    test_lzma();
    test_parse_v3();
    test_parse_v2();
    test_api_misc();
    test_python_samples();
    buf raw = make_data(64 * 1024);
    sample s[NSAMPLES];
    make_samples(s, raw);
    const char *fr = getenv("ZF_CODEC_FUZZ_ROUNDS");
    test_fuzz(s, fr ? atoi(fr) : 300);
    test_threads(s);
    free_samples(s);
    free(raw.p);
    if (getenv("ZF_CODEC_BENCH"))
        bench();
    return check_summary("test_codec");
}
