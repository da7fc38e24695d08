/* test_filter.c - unit tests for the numcodecs filters and the element type
 * chain of the pipeline (src/codec/filter.c, convert.c, pipeline.c).
 *
 *   - whole chunks written by zarr-python 3.1 / numcodecs (data/codec/
 *     arrays.json, see gen.py there): delta, fixedscaleoffset and astype over
 *     int8..uint64 / float32 / float64, chains of them with bytes filters and
 *     compressors, v2 (also order "F" and big-endian) and v3, crafted chunks
 *     with NaN, infinities and out-of-range values; each decoded through
 *     zf_pipeline_from_v2 / _v3 from its own metadata must equal what
 *     zarr-python reads back, byte for byte;
 *   - zf_elem_promote against numpy.promote_types (the same file);
 *   - metadata refused with a reason: unsupported dtypes, a filter whose
 *     decoded type is not what the next stage reads, filters with transpose or
 *     before sharding (v3), an array filter after a bytes filter (v2), bad or
 *     unknown configuration;
 *   - damaged chunks (one element short or long, a bad checksum, a shuffle of
 *     a wrong size) fail with ZF_ECORRUPT and a reason.
 * Buffers are exact-size heap allocations (ASan sees any overrun).  Run from
 * tests/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "codec/filter_impl.h"
#include "codec/pipeline.h"

#include "check.h"

#define DIR "data/codec/"

typedef struct buf {
    uint8_t *p;
    size_t n;
} buf;

static buf read_file(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", DIR, name);
    buf b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return b;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    b.p = malloc(len > 0 ? (size_t)len + 1 : 1);
    b.n = b.p ? fread(b.p, 1, len > 0 ? (size_t)len : 0, f) : 0;
    if (b.p)
        b.p[b.n] = 0;
    fclose(f);
    return b;
}

/* "int16" -> its element type; 0 if unknown */
static int elem_by_name(const char *name, zf_elem *e)
{
    static const char *const names[] = {"int8", "int16", "int32", "int64", "uint8",
                                        "uint16", "uint32", "uint64", "float32", "float64"};
    for (unsigned k = 0; k < 10; k++)
        if (name && !strcmp(name, names[k])) {
            *e = (zf_elem){k < 4 ? ZF_ELEM_INT : k < 8 ? ZF_ELEM_UINT : ZF_ELEM_FLOAT,
                           k < 8 ? 1u << (k % 4) : k == 8 ? 4 : 8};
            return 1;
        }
    return 0;
}

/* the pipeline of one arrays.json entry; NULL with a reason in err */
static zf_pipeline *sample_pipeline(const cJSON *s, zf_elem e, unsigned ndim,
                                    const uint64_t *shape, char *err, size_t errcap)
{
    zf_pipeline *p = NULL;
    const cJSON *v2 = cJSON_GetObjectItem(s, "v2"), *v3 = cJSON_GetObjectItem(s, "v3");
    int rc;
    if (v2) {
        const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(v2, "dtype"));
        const char *order = cJSON_GetStringValue(cJSON_GetObjectItem(v2, "order"));
        rc = zf_pipeline_from_v2(cJSON_GetObjectItem(v2, "compressor"),
                                 cJSON_GetObjectItem(v2, "filters"), dt && dt[0] == '>',
                                 order ? order[0] : 'C', ndim, shape, e, &p, err, errcap);
    } else {
        rc = zf_pipeline_from_v3(v3, ndim, shape, e, &p, err, errcap);
    }
    return rc ? NULL : p;
}

/* the expected file (little-endian elements) in the machine's byte order */
static void to_host(buf *b, unsigned size)
{
    if (ZF_HOST_BIG)
        zf_elem_swap(b->p, b->n / size, size);
}

/* decode one arrays.json entry and compare with zarr-python's elements */
static void check_sample(const cJSON *s)
{
    const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(s, "file"));
    const char *want_file = cJSON_GetStringValue(cJSON_GetObjectItem(s, "expect"));
    zf_elem e;
    uint64_t shape[8];
    unsigned ndim = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(s, "shape")) shape[ndim++ % 8] = (uint64_t)d->valuedouble;
    if (!elem_by_name(cJSON_GetStringValue(cJSON_GetObjectItem(s, "elem")), &e) || ndim > 8) {
        CHECK(0, "%s: bad manifest entry", file ? file : "?");
        return;
    }
    char err[256] = "";
    zf_pipeline *p = sample_pipeline(s, e, ndim, shape, err, sizeof err);
    CHECK(p, "%s: pipeline: %s", file, err);
    buf chunk = read_file(file), want = read_file(want_file);
    CHECK(chunk.p && want.p, "%s: cannot read the sample", file);
    if (p && chunk.p && want.p) {
        size_t n = (size_t)zf_pipeline_chunk_elems(p) * e.size;
        uint8_t *out = malloc(n ? n : 1);
        int rc = zf_pipeline_decode(p, chunk.p, chunk.n, out, err, sizeof err);
        to_host(&want, e.size);
        CHECK(rc == ZF_OK, "%s: rc %d: %s", file, rc, err);
        size_t first = 0;
        while (rc == ZF_OK && first < n && first < want.n && out[first] == want.p[first])
            first++;
        CHECK(rc || (n == want.n && first == n), "%s: %zu bytes, want %zu; first difference at "
              "element %zu", file, n, want.n, first / e.size);
        /* one byte short, one byte more: refused */
        if (chunk.n > 1) {
            CHECK(zf_pipeline_decode(p, chunk.p, chunk.n - 1, out, err, sizeof err) == ZF_ECORRUPT,
                  "%s: one byte short accepted", file);
        }
        free(out);
    }
    free(chunk.p), free(want.p);
    zf_pipeline_free(p);
}

static cJSON *manifest(void)
{
    buf m = read_file("arrays.json");
    cJSON *j = m.p ? cJSON_Parse((char *)m.p) : NULL;
    free(m.p);
    CHECK(j, "cannot read %sarrays.json (run from tests/)", DIR);
    return j;
}

static void test_samples(const cJSON *j)
{
    int n = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "arrays")) {
        check_sample(s);
        n++;
    }
    CHECK(n >= 35, "only %d array samples", n);
    printf("array samples: %d decoded\n", n);
}

static void test_promote(const cJSON *j)
{
    int n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(j, "promote")) {
        zf_elem a, b, want;
        if (!elem_by_name(cJSON_GetStringValue(cJSON_GetArrayItem(t, 0)), &a) ||
            !elem_by_name(cJSON_GetStringValue(cJSON_GetArrayItem(t, 1)), &b) ||
            !elem_by_name(cJSON_GetStringValue(cJSON_GetArrayItem(t, 2)), &want)) {
            CHECK(0, "bad promote entry");
            continue;
        }
        zf_elem got = zf_elem_promote(a, b);
        CHECK(got.kind == want.kind && got.size == want.size, "promote(%s, %s) = %s, numpy says %s",
              zf_elem_name(a), zf_elem_name(b), zf_elem_name(got), zf_elem_name(want));
        n++;
    }
    CHECK(n == 100, "%d promote entries", n);
}

/* ---- metadata refused ---------------------------------------------------------- */

/* v2 metadata (filters and compressor JSON) for a 1-d chunk of 10 */
static int v2_rc(const char *filters, const char *compressor, zf_elem e, char *err)
{
    static const uint64_t shape[1] = {10};
    cJSON *f = cJSON_Parse(filters), *c = cJSON_Parse(compressor);
    zf_pipeline *p = NULL;
    int rc = zf_pipeline_from_v2(c, f, 0, 'C', 1, shape, e, &p, err, 256);
    zf_pipeline_free(p);
    cJSON_Delete(f), cJSON_Delete(c);
    return rc;
}

static int v3_rc(const char *codecs, unsigned ndim, zf_elem e, char *err)
{
    static const uint64_t shape[3] = {4, 6, 2};
    cJSON *j = cJSON_Parse(codecs);
    zf_pipeline *p = NULL;
    int rc = zf_pipeline_from_v3(j, ndim, shape, e, &p, err, 256);
    zf_pipeline_free(p);
    cJSON_Delete(j);
    return rc;
}

#define I8 ((zf_elem){ZF_ELEM_INT, 8})
#define F8 ((zf_elem){ZF_ELEM_FLOAT, 8})
#define BYTES "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}"

static void expect_v2(const char *filters, const char *comp, zf_elem e, int want, const char *why)
{
    char err[256] = "";
    int rc = v2_rc(filters, comp, e, err);
    CHECK(rc == want && (want == ZF_OK || strstr(err, why)), "v2 %s: rc %d (%s), want %d \"%s\"",
          filters, rc, err, want, why);
}

static void expect_v3(const char *codecs, unsigned ndim, zf_elem e, int want, const char *why)
{
    char err[256] = "";
    int rc = v3_rc(codecs, ndim, e, err);
    CHECK(rc == want && (want == ZF_OK || strstr(err, why)), "v3 %s: rc %d (%s), want %d \"%s\"",
          codecs, rc, err, want, why);
}

static void test_refused(void)
{
    expect_v2("[{\"id\":\"delta\",\"dtype\":\"<i8\"}]", "null", I8, ZF_OK, "");
    expect_v2("[{\"id\":\"delta\",\"dtype\":\"<u8\",\"astype\":\"|i1\"}]", "null", I8, ZF_OK, "");
    expect_v2("[{\"id\":\"delta\",\"dtype\":\"<m8[ns]\"}]", "null", I8, ZF_EUNSUPPORTED,
              "delta: \"dtype\" \"<m8[ns]\" is not supported");
    expect_v2("[{\"id\":\"delta\",\"dtype\":\"<f2\"}]", "null", F8, ZF_EUNSUPPORTED, "not supported");
    expect_v2("[{\"id\":\"astype\",\"encode_dtype\":\"<c16\",\"decode_dtype\":\"<f8\"}]", "null", F8,
              ZF_EUNSUPPORTED, "\"encode_dtype\" \"<c16\"");
    expect_v2("[{\"id\":\"delta\",\"dtype\":\"<i4\"}]", "null", I8, ZF_EUNSUPPORTED,
              "delta: decodes to int32, but the array has int64 elements");
    expect_v2("[{\"id\":\"delta\",\"dtype\":\"<f8\"}]", "null", I8, ZF_EUNSUPPORTED,
              "decodes to float64, but the array has int64");
    expect_v2("[{\"id\":\"fixedscaleoffset\",\"offset\":0,\"scale\":2,\"dtype\":\"<f8\",\"astype\":\"<i2\"},"
              "{\"id\":\"delta\",\"dtype\":\"<i4\"}]", "null", F8, ZF_EUNSUPPORTED,
              "delta: decodes to int32, but fixedscaleoffset reads int16 elements");
    expect_v2("[{\"id\":\"shuffle\",\"elementsize\":8},{\"id\":\"delta\",\"dtype\":\"<i8\"}]", "null", I8,
              ZF_EUNSUPPORTED, "filter \"delta\" after the bytes filter \"shuffle\" is not supported");
    expect_v2("[{\"id\":\"quantize\",\"digits\":3,\"dtype\":\"<f8\"}]", "null", F8, ZF_EUNSUPPORTED,
              "unsupported filter \"quantize\"");
    expect_v2("null", "{\"id\":\"delta\",\"dtype\":\"<i8\"}", I8, ZF_EUNSUPPORTED,
              "unsupported compressor \"delta\"");
    expect_v2("[{\"id\":\"delta\"}]", "null", I8, ZF_ECORRUPT, "delta: no \"dtype\"");
    expect_v2("[{\"id\":\"delta\",\"dtype\":8}]", "null", I8, ZF_ECORRUPT, "must be a dtype string");
    expect_v2("[{\"id\":\"delta\",\"dtype\":\"<i8\",\"order\":1}]", "null", I8, ZF_ECORRUPT,
              "unknown configuration field \"order\"");
    expect_v2("[{\"id\":\"fixedscaleoffset\",\"scale\":2,\"dtype\":\"<f8\"}]", "null", F8, ZF_ECORRUPT,
              "\"offset\" must be a number");
    expect_v2("[{\"id\":\"fixedscaleoffset\",\"offset\":1,\"scale\":\"2\",\"dtype\":\"<f8\"}]", "null", F8,
              ZF_ECORRUPT, "\"scale\" must be a number");
    expect_v2("[{\"id\":\"fixedscaleoffset\",\"offset\":1,\"scale\":2}]", "null", F8, ZF_ECORRUPT,
              "no \"dtype\"");
    expect_v2("[{\"id\":\"astype\",\"encode_dtype\":\"<f4\"}]", "null", F8, ZF_ECORRUPT,
              "no \"decode_dtype\"");
    expect_v2("[{\"dtype\":\"<i8\"}]", "null", I8, ZF_ECORRUPT, "no string \"id\"");
    expect_v2("{\"id\":\"delta\"}", "null", I8, ZF_ECORRUPT, "\"filters\" must be null or a list");
    /* v3: defaults from the array, and what zarr-python cannot read back */
    expect_v3("[{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":1,\"scale\":2,"
              "\"astype\":\"u2\"}}," BYTES "]", 1, F8, ZF_OK, "");
    expect_v3("[{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"float32\"}}," BYTES "]",
              1, F8, ZF_OK, "");
    expect_v3("[{\"name\":\"numcodecs.delta\",\"configuration\":{}}," BYTES "]", 1, I8, ZF_ECORRUPT,
              "numcodecs.delta: no \"dtype\"");
    expect_v3("[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,1,0]}},"
              "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i8\"}}," BYTES "]", 3, I8,
              ZF_EUNSUPPORTED, "numcodecs.delta after transpose is not supported");
    expect_v3("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i8\"}},"
              "{\"name\":\"transpose\",\"configuration\":{\"order\":[2,1,0]}}," BYTES "]", 3, I8,
              ZF_EUNSUPPORTED, "transpose with numcodecs filters is not supported");
    expect_v3("[{\"name\":\"transpose\",\"configuration\":{\"order\":\"C\"}},"
              "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i8\"}}," BYTES "]", 3, I8,
              ZF_OK, "");
    expect_v3("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i8\"}},"
              "{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[2,2,2],\"codecs\":[" BYTES
              "],\"index_codecs\":[" BYTES "]}}]", 3, I8, ZF_EUNSUPPORTED,
              "sharding_indexed after numcodecs.delta is not supported");
    expect_v3("[" BYTES ",{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i8\"}}]", 1, I8,
              ZF_ECORRUPT, "array->array codec \"numcodecs.delta\" after the array->bytes codec");
    expect_v3("[{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"<i2\"}},"
              "{\"name\":\"bytes\",\"configuration\":{}}]", 1, I8, ZF_ECORRUPT,
              "\"endian\" must be \"little\" or \"big\" for 2-byte values");
    expect_v3("[{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"|u1\"}},"
              "{\"name\":\"bytes\",\"configuration\":{}}]", 1, I8, ZF_OK, "");
    expect_v3("[{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":2}}," BYTES "]", 1, F8,
              ZF_EUNSUPPORTED, "unsupported codec \"numcodecs.quantize\"");
}

/* ---- damaged chunks --------------------------------------------------------------- */

static int decode_rc(const zf_pipeline *p, const uint8_t *in, size_t n, char *err)
{
    uint8_t *copy = malloc(n ? n : 1), *out = malloc((size_t)zf_pipeline_chunk_elems(p) *
                                                      zf_pipeline_elem(p).size);
    if (n)
        memcpy(copy, in, n);
    int rc = zf_pipeline_decode(p, copy, n, out, err, 256);
    free(copy), free(out);
    return rc;
}

static void test_damaged(void)
{
    static const uint64_t shape[1] = {10};
    char err[256] = "";
    zf_pipeline *p = NULL;
    /* fixedscaleoffset f8 <- i2, then crc32 (leading): 20 + 4 bytes */
    cJSON *f = cJSON_Parse("[{\"id\":\"fixedscaleoffset\",\"offset\":0,\"scale\":4,\"dtype\":\"<f8\","
                           "\"astype\":\"<i2\"},{\"id\":\"crc32\"}]");
    int rc = zf_pipeline_from_v2(NULL, f, 0, 'C', 1, shape, F8, &p, err, sizeof err);
    cJSON_Delete(f);
    CHECK(rc == ZF_OK, "damaged: pipeline: %s", err);
    if (rc)
        return;
    CHECK(zf_pipeline_max_encoded(p) >= 24, "max_encoded %zu", zf_pipeline_max_encoded(p));
    uint8_t in[26] = {0};
    for (int i = 0; i < 10; i++)
        in[4 + 2 * i] = (uint8_t)(4 * i); /* values i */
    /* zlib crc32 of the 20 payload bytes, computed by hand below (bitwise) */
    uint32_t c = 0xFFFFFFFFu;
    for (int i = 4; i < 24; i++) {
        c ^= in[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    c ^= 0xFFFFFFFFu;
    for (int k = 0; k < 4; k++)
        in[k] = (uint8_t)(c >> (8 * k));
    double out[10];
    rc = zf_pipeline_decode(p, in, 24, out, err, sizeof err);
    int ok = rc == ZF_OK;
    for (int i = 0; ok && i < 10; i++)
        ok = out[i] == (double)i;
    CHECK(ok, "damaged: the good chunk: rc %d %s", rc, err);
    rc = decode_rc(p, in, 23, err);
    CHECK(rc == ZF_ECORRUPT && strstr(err, "crc32 mismatch"), "truncated: rc %d %s", rc, err);
    in[24] = 0; /* one byte more: more than the chunk's 20 stored bytes */
    rc = decode_rc(p, in, 25, err);
    CHECK(rc == ZF_ECORRUPT && strstr(err, "crc32: output exceeds 20 bytes"), "one byte more: rc %d %s",
          rc, err);
    in[10] ^= 1;
    rc = decode_rc(p, in, 24, err);
    CHECK(rc == ZF_ECORRUPT && strstr(err, "crc32 mismatch"), "flipped bit: rc %d %s", rc, err);
    zf_pipeline_free(p);
    /* no checksum: the size itself is checked, in stored (int16) elements */
    f = cJSON_Parse("[{\"id\":\"astype\",\"encode_dtype\":\"<i2\",\"decode_dtype\":\"<i8\"}]");
    rc = zf_pipeline_from_v2(NULL, f, 0, 'C', 1, shape, I8, &p, err, sizeof err);
    cJSON_Delete(f);
    if (rc == ZF_OK) {
        rc = decode_rc(p, in, 18, err);
        CHECK(rc == ZF_ECORRUPT && strstr(err, "chunk decodes to 18 bytes, expected 20"), "short: %s", err);
        rc = decode_rc(p, in, 22, err);
        CHECK(rc == ZF_ECORRUPT && strstr(err, "expected 20"), "long: %s", err);
        CHECK(decode_rc(p, in, 20, err) == ZF_OK, "exact: %s", err);
        zf_pipeline_free(p);
    }
    /* a shuffle whose input is not whole elements */
    f = cJSON_Parse("[{\"id\":\"shuffle\",\"elementsize\":3}]");
    rc = zf_pipeline_from_v2(NULL, f, 0, 'C', 1, shape, I8, &p, err, sizeof err);
    cJSON_Delete(f);
    if (rc == ZF_OK) {
        uint8_t z[80] = {0};
        rc = decode_rc(p, z, 80, err);
        CHECK(rc == ZF_ECORRUPT && strstr(err, "shuffle: 80 bytes are not a whole number"), "shuffle: %s",
              err);
        zf_pipeline_free(p);
    }
}

/* ---- conversions at the edges ------------------------------------------------------- */

static void test_convert(void)
{
    /* the bits of an integer survive any same-size integer conversion */
    int16_t s[3] = {-1, 32767, -32768};
    uint16_t u[3];
    zf_elem_convert(s, (zf_elem){ZF_ELEM_INT, 2}, u, (zf_elem){ZF_ELEM_UINT, 2}, 3);
    CHECK(u[0] == 65535 && u[1] == 32767 && u[2] == 32768, "int16 -> uint16");
    /* int64 -> float32 is one rounding (not through float64) */
    int64_t big[1] = {(INT64_C(1) << 60) + (INT64_C(1) << 36) + 1};
    float fl[1];
    zf_elem_convert(big, I8, fl, (zf_elem){ZF_ELEM_FLOAT, 4}, 1);
    CHECK(fl[0] == 0x1.000002p60f, "int64 -> float32: %a", (double)fl[0]);
    /* NaN -> int64 is INT64_MIN (NaT), as x86-64 numpy gives */
    double nan[2] = {__builtin_nan(""), -1e300};
    int64_t i8[2];
    zf_elem_convert(nan, F8, i8, I8, 2);
    CHECK(i8[0] == INT64_MIN && i8[1] == INT64_MIN, "NaN, -1e300 -> int64");
    CHECK(zf_elem_same_bits((zf_elem){ZF_ELEM_INT, 4}, (zf_elem){ZF_ELEM_UINT, 4}) &&
              !zf_elem_same_bits((zf_elem){ZF_ELEM_INT, 4}, (zf_elem){ZF_ELEM_FLOAT, 4}) &&
              !zf_elem_same_bits((zf_elem){ZF_ELEM_INT, 4}, (zf_elem){ZF_ELEM_INT, 8}),
          "same bits");
}

int main(void)
{
    cJSON *j = manifest();
    if (j) {
        test_samples(j);
        test_promote(j);
    }
    cJSON_Delete(j);
    test_refused();
    test_damaged();
    test_convert();
    return check_summary("test_filter");
}
