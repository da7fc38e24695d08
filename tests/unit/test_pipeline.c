/* test_pipeline.c - unit tests for the chunk pipeline's element widths
 * (src/codec/pipeline.c).
 *
 * For elements of 1, 2, 4 and 8 bytes: the bytes codec in both byte orders,
 * transpose and v2 order "F" of a 3-d chunk, a sharded chunk with an empty
 * inner chunk (filled with the fill element), and exact size checks (a chunk
 * one element short or long is refused).  Transpose before sharding_indexed:
 * a shard built here by hand in the transposed axes (inner chunks of a shape
 * that divides the transposed shard only, which zarr-python cannot write).  Expected values are built here
 * independently, element by element, from the logical C-order value
 * f(i, j, k).  Buffers are exact-size heap allocations, so ASan and valgrind
 * see any overrun. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/deadline.h"
#include "base/err.h"
#include "codec/pipeline.h"

#include "check.h"

#define D0 3
#define D1 4
#define D2 5
#define N (D0 * D1 * D2)

/* the logical value at (i, j, k), truncated to the element width */
static uint64_t value_at(unsigned i, unsigned j, unsigned k)
{
    return 0x0102030405060708ull * (1 + i) + 0x1111u * j + 7u * k + 0x8000000000000000ull * (k & 1);
}

/* store x at p as an esize-byte element in the given byte order */
static void put_elem(uint8_t *p, uint64_t x, unsigned esize, int big)
{
    for (unsigned b = 0; b < esize; b++)
        p[big ? esize - 1 - b : b] = (uint8_t)(x >> (8 * b));
}

/* the element at p in the machine's order, widened */
static uint64_t get_elem(const uint8_t *p, unsigned esize)
{
    uint8_t b1;
    uint16_t b2;
    uint32_t b4;
    uint64_t b8;
    switch (esize) {
    case 1: memcpy(&b1, p, 1); return b1;
    case 2: memcpy(&b2, p, 2); return b2;
    case 4: memcpy(&b4, p, 4); return b4;
    default: memcpy(&b8, p, 8); return b8;
    }
}

static uint64_t mask(unsigned esize)
{
    return esize == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * esize)) - 1;
}

/* encode the chunk with its axes stored in order perm (perm[0] slowest) */
static uint8_t *encode(const unsigned *perm, unsigned esize, int big)
{
    const unsigned shape[3] = {D0, D1, D2};
    uint8_t *out = malloc((size_t)N * esize);
    unsigned idx[3], pos = 0;
    for (idx[perm[0]] = 0; idx[perm[0]] < shape[perm[0]]; idx[perm[0]]++)
        for (idx[perm[1]] = 0; idx[perm[1]] < shape[perm[1]]; idx[perm[1]]++)
            for (idx[perm[2]] = 0; idx[perm[2]] < shape[perm[2]]; idx[perm[2]]++)
                put_elem(out + (size_t)pos++ * esize, value_at(idx[0], idx[1], idx[2]), esize, big);
    return out;
}

/* every decoded element equals the logical value */
static int matches(const uint8_t *got, unsigned esize)
{
    unsigned n = 0;
    for (unsigned i = 0; i < D0; i++)
        for (unsigned j = 0; j < D1; j++)
            for (unsigned k = 0; k < D2; k++, n++)
                if (get_elem(got + (size_t)n * esize, esize) != (value_at(i, j, k) & mask(esize)))
                    return 0;
    return 1;
}

/* build a v3 pipeline from JSON text for the 3-d chunk */
static zf_pipeline *v3(const char *json, unsigned esize, char *err, size_t errcap)
{
    static const uint64_t shape[3] = {D0, D1, D2};
    cJSON *j = cJSON_Parse(json);
    zf_pipeline *p = NULL;
    int rc = zf_pipeline_from_v3(j, 3, shape, (zf_elem){ZF_ELEM_UINT, esize}, &p, err, errcap);
    cJSON_Delete(j);
    return rc ? NULL : p;
}

/* decode n bytes (an exact-size copy) into an exact-size output; 0 or zf_err */
static int decode(const zf_pipeline *p, const uint8_t *in, size_t n, uint8_t **out, char *err)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, in, n);
    *out = malloc((size_t)N * zf_pipeline_elem(p).size);
    int rc = zf_pipeline_decode(p, copy, n, *out, err, 256);
    free(copy);
    return rc;
}

static void test_bytes(unsigned esize, int big)
{
    char json[256], err[256] = "";
    snprintf(json, sizeof json, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"%s\"}}]",
             big ? "big" : "little");
    zf_pipeline *p = v3(json, esize, err, sizeof err);
    CHECK(p, "esize %u: %s", esize, err);
    if (!p)
        return;
    CHECK(zf_pipeline_elem(p).size == esize, "elem size %u", zf_pipeline_elem(p).size);
    static const unsigned c_order[3] = {0, 1, 2};
    uint8_t *in = encode(c_order, esize, big), *out = NULL;
    int rc = decode(p, in, (size_t)N * esize, &out, err);
    CHECK(rc == ZF_OK && matches(out, esize), "esize %u big %d: rc %d %s", esize, big, rc, err);
    free(out);
    rc = decode(p, in, (size_t)N * esize - esize, &out, err);
    CHECK(rc == ZF_ECORRUPT, "esize %u: one element short accepted (rc %d)", esize, rc);
    free(out);
    free(in);
    zf_pipeline_free(p);
}

static void test_transpose(unsigned esize, int big)
{
    char json[256], err[256] = "";
    /* stored axis order (2, 0, 1): the last logical axis is slowest */
    snprintf(json, sizeof json,
             "[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
             "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"%s\"}}]",
             big ? "big" : "little");
    zf_pipeline *p = v3(json, esize, err, sizeof err);
    CHECK(p, "esize %u: %s", esize, err);
    if (!p)
        return;
    static const unsigned perm[3] = {2, 0, 1};
    uint8_t *in = encode(perm, esize, big), *out = NULL;
    int rc = decode(p, in, (size_t)N * esize, &out, err);
    CHECK(rc == ZF_OK && matches(out, esize), "transpose esize %u big %d: rc %d %s", esize, big, rc,
          err);
    free(out);
    free(in);
    zf_pipeline_free(p);
}

static void test_v2_order_f(unsigned esize)
{
    static const uint64_t shape[3] = {D0, D1, D2};
    char err[256] = "";
    zf_pipeline *p = NULL;
    int rc = zf_pipeline_from_v2(NULL, NULL, 1, 'F', 3, shape, (zf_elem){ZF_ELEM_UINT, esize}, &p, err,
                                 sizeof err);
    CHECK(rc == ZF_OK, "v2 F esize %u: %s", esize, err);
    if (rc)
        return;
    static const unsigned f_order[3] = {2, 1, 0};
    uint8_t *in = encode(f_order, esize, 1), *out = NULL;
    rc = decode(p, in, (size_t)N * esize, &out, err);
    CHECK(rc == ZF_OK && matches(out, esize), "v2 F esize %u: rc %d %s", esize, rc, err);
    free(out);
    free(in);
    zf_pipeline_free(p);
}

/* a shard of inner chunks [3, 2, 5]: inner chunk 0 stored, inner chunk 1
 * empty (index entry all ones) and read as the fill element */
static void test_shard_fill(unsigned esize)
{
    char err[256] = "";
    zf_pipeline *p = v3("[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[3,2,5],"
                        "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
                        "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
                        "\"index_location\":\"end\"}}]",
                        esize, err, sizeof err);
    CHECK(p, "shard esize %u: %s", esize, err);
    if (!p)
        return;
    const uint64_t fill = 0xA5A5A5A5A5A5A5A5ull & mask(esize);
    uint8_t fill_elem[8];
    memcpy(fill_elem, &fill, sizeof fill_elem); /* little-endian host: the low bytes */
    zf_pipeline_set_fill(p, fill_elem);
    size_t inner = (size_t)3 * 2 * 5 * esize, n = inner + 2 * 2 * 8;
    uint8_t *in = calloc(1, n), *out = NULL;
    for (unsigned i = 0, e = 0; i < 3; i++)
        for (unsigned j = 0; j < 2; j++)
            for (unsigned k = 0; k < 5; k++)
                put_elem(in + (size_t)e++ * esize, value_at(i, j, k), esize, 0);
    put_elem(in + inner, 0, 8, 0);
    put_elem(in + inner + 8, inner, 8, 0);
    put_elem(in + inner + 16, UINT64_MAX, 8, 0);
    put_elem(in + inner + 24, UINT64_MAX, 8, 0);
    int rc = decode(p, in, n, &out, err);
    int ok = rc == ZF_OK;
    for (unsigned i = 0, e = 0; ok && i < D0; i++)
        for (unsigned j = 0; j < D1; j++)
            for (unsigned k = 0; k < D2; k++, e++) {
                uint64_t want = j < 2 ? value_at(i, j, k) & mask(esize) : fill;
                ok &= get_elem(out + (size_t)e * esize, esize) == want;
            }
    CHECK(ok, "shard esize %u: rc %d %s", esize, rc, err);
    free(out);
    out = NULL;
    /* the request was cancelled (or its budget spent): the shard's inner
     * chunks are not decoded, and that is no damage (ZF_EIO, not ZF_ECORRUPT) */
    uint64_t ticket = zf_deadline_begin(ZF_DEADLINE_NONE);
    zf_deadline_cancel(ticket);
    rc = decode(p, in, n, &out, err);
    zf_deadline_end();
    CHECK(rc == ZF_EIO && strstr(err, "cancelled"), "shard esize %u, cancelled: rc %d %s", esize,
          rc, err);
    free(out);
    free(in);
    zf_pipeline_free(p);
}

/* transpose [2,0,1] of the 3x4x5 chunk, then sharding: the sharding codec
 * sees a 5x3x4 shard; inner chunks [5,1,2] (5 does not divide 3 or 4: only
 * the transposed shard has them) form a 1x3x2 grid, index at the start,
 * inner chunk 4 empty */
static void test_transposed_shard(unsigned esize)
{
    char err[256] = "";
    zf_pipeline *p = v3("[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
                        "{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[5,1,2],"
                        "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}],"
                        "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
                        "\"index_location\":\"start\"}}]",
                        esize, err, sizeof err);
    CHECK(p, "transposed shard esize %u: %s", esize, err);
    if (!p)
        return;
    const uint64_t fill = 0x5A5A5A5A5A5A5A5Aull & mask(esize);
    uint8_t fill_elem[8];
    memcpy(fill_elem, &fill, sizeof fill_elem);
    zf_pipeline_set_fill(p, fill_elem);
    const uint64_t *inner = NULL;
    CHECK(zf_pipeline_inner(p, &inner) && inner[0] == 1 && inner[1] == 2 && inner[2] == 5,
          "inner chunk in logical axes");
    CHECK(!zf_pipeline_partial(p), "a transposed shard is read whole");
    enum { K = 6, IN = 5 * 1 * 2 };
    size_t index = (size_t)K * 16, n = index + (size_t)(K - 1) * IN * esize;
    uint8_t *in = calloc(1, n), *out = NULL;
    size_t at = index;
    for (unsigned k = 0; k < K; k++) { /* stored in reverse order of k */
        unsigned kk = K - 1 - k;
        if (kk == 4) {
            put_elem(in + 16 * kk, UINT64_MAX, 8, 0);
            put_elem(in + 16 * kk + 8, UINT64_MAX, 8, 0);
            continue;
        }
        put_elem(in + 16 * kk, at, 8, 0);
        put_elem(in + 16 * kk + 8, (uint64_t)IN * esize, 8, 0);
        /* inner chunk kk = (0, g1, g2) of the 1x3x2 grid; its element (a, b, c)
         * is the transposed element (a, g1 + b, 2 g2 + c) = logical (g1 + b, 2 g2 + c, a) */
        unsigned g1 = kk / 2, g2 = kk % 2;
        for (unsigned a = 0; a < 5; a++)
            for (unsigned c = 0; c < 2; c++, at += esize)
                put_elem(in + at, value_at(g1, 2 * g2 + c, a), esize, 1);
    }
    int rc = decode(p, in, n, &out, err);
    int ok = rc == ZF_OK;
    for (unsigned i = 0, e = 0; ok && i < D0; i++)
        for (unsigned j = 0; j < D1; j++)
            for (unsigned k = 0; k < D2; k++, e++) {
                int empty = i == 2 && j / 2 == 0; /* inner chunk 4: g1 = 2, g2 = 0 */
                uint64_t want = empty ? fill : value_at(i, j, k) & mask(esize);
                ok &= get_elem(out + (size_t)e * esize, esize) == want;
            }
    CHECK(ok, "transposed shard esize %u: rc %d %s", esize, rc, err);
    free(out);
    free(in);
    zf_pipeline_free(p);
    /* inner chunks must divide the shard as the sharding codec sees it */
    CHECK(!v3("[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
              "{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[3,4,5],"
              "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}],"
              "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}}]",
              esize, err, sizeof err) &&
              strstr(err, "must divide the shard shape (as transposed)"),
          "untransposed inner shape accepted: %s", err);
}

static void test_bad_sizes(void)
{
    char err[256] = "";
    CHECK(!v3("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", 3, err, sizeof err),
          "3-byte elements accepted");
    CHECK(strstr(err, "3 bytes"), "reason: %s", err);
    CHECK(!v3("[{\"name\":\"bytes\",\"configuration\":{}}]", 2, err, sizeof err),
          "2-byte elements without endian accepted");
    zf_pipeline *p = v3("[{\"name\":\"bytes\",\"configuration\":{}}]", 1, err, sizeof err);
    CHECK(p, "1-byte elements need no endian: %s", err);
    zf_pipeline_free(p);
}

int main(void)
{
    static const unsigned sizes[] = {1, 2, 4, 8};
    for (unsigned s = 0; s < 4; s++) {
        for (int big = 0; big < 2; big++) {
            test_bytes(sizes[s], big);
            test_transpose(sizes[s], big);
        }
        test_v2_order_f(sizes[s]);
        test_shard_fill(sizes[s]);
        test_transposed_shard(sizes[s]);
    }
    test_bad_sizes();
    return check_summary("test_pipeline");
}
