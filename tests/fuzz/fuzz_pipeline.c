/* fuzz_pipeline.c - libFuzzer target: chunk decoding through fixed pipelines.
 *
 * A fixed set of small pipelines (v3 bytes+zstd, bytes+gzip, bytes+blosc,
 * bytes+crc32c, transpose+bytes(big), bytes alone, bytes(big)+zstd+crc32c;
 * v2 lz4, bz2, zlib, gzip, blosc, and order "F" without a compressor) is built
 * once; every input is decoded by each of them.  Every decode must either
 * succeed or return an error with a reason; the output buffer is an exact-size
 * heap allocation, so any write past it is caught by ASan.  Where the result
 * can be worked out independently it is checked:
 *   - uncompressed pipelines: success iff the size is right; values equal the
 *     input bytes read in the declared byte order and memory order / transpose;
 *   - crc32c: success iff the trailing 4 bytes are the CRC32C (computed here
 *     bit by bit) of the rest and the rest has the right size;
 *   - zstd: success iff libzstd's one-shot ZSTD_decompress yields exactly the
 *     chunk size, with the same bytes (except frames declaring a window over
 *     2^31, which streaming decoders refuse);
 *   - every pipeline: decoding twice gives the same values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zstd.h>

#include "base/err.h"
#include "codec/pipeline.h"

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz_pipeline: check failed at %s:%d: %s (pipeline %s)\n",    \
                    __FILE__, __LINE__, #cond, cur_name);                                  \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

static const char *cur_name = "";

enum check_kind { CK_NONE, CK_RAW, CK_CRC, CK_ZSTD };

typedef struct spec {
    const char *name;
    int v2;
    const char *json;    /* v3: codecs array; v2: compressor (or "null") */
    char order;          /* v2 only */
    int big;             /* v2 only */
    unsigned ndim;
    uint64_t shape[4];
    enum check_kind check;
    int big_raw;         /* CK_RAW: byte order of the encoded values */
    unsigned perm[4];    /* CK_RAW: encoded axis k is logical axis perm[k] */
} spec;

static const spec specs[] = {
    {"v3 bytes+zstd", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"zstd\",\"configuration\":{\"level\":0,\"checksum\":false}}]",
     0, 0, 2, {4, 3}, CK_ZSTD, 0, {0}},
    {"v3 bytes+gzip", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"gzip\",\"configuration\":{\"level\":5}}]", 0, 0, 2, {4, 3}, CK_NONE, 0, {0}},
    {"v3 bytes+blosc", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,"
     "\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":0}}]", 0, 0, 2, {4, 3}, CK_NONE, 0, {0}},
    {"v3 bytes+crc32c", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"crc32c\"}]", 0, 0, 2, {4, 3}, CK_CRC, 0, {0}},
    {"v3 transpose+bytes(big)", 0, "[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
     "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]", 0, 0, 3, {2, 3, 4}, CK_RAW, 1,
     {2, 0, 1}},
    {"v3 bytes", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", 0, 0, 1,
     {13}, CK_RAW, 0, {0}},
    {"v3 bytes(big)+zstd+crc32c", 0,
     "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
     "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}},{\"name\":\"crc32c\"}]",
     0, 0, 1, {6}, CK_NONE, 0, {0}},
    {"v2 lz4", 1, "{\"id\":\"lz4\",\"acceleration\":1}", 'C', 0, 2, {5, 2}, CK_NONE, 0, {0}},
    {"v2 bz2", 1, "{\"id\":\"bz2\",\"level\":9}", 'F', 0, 2, {3, 3}, CK_NONE, 0, {0}},
    {"v2 zlib", 1, "{\"id\":\"zlib\",\"level\":1}", 'C', 1, 1, {7}, CK_NONE, 0, {0}},
    {"v2 gzip", 1, "{\"id\":\"gzip\",\"level\":1}", 'C', 0, 1, {7}, CK_NONE, 0, {0}},
    {"v2 blosc", 1, "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":2,"
     "\"blocksize\":0}", 'C', 0, 2, {4, 3}, CK_NONE, 0, {0}},
    {"v2 F order, no compressor", 1, "null", 'F', 0, 3, {3, 4, 2}, CK_RAW, 0, {2, 1, 0}},
};
#define NSPECS (sizeof specs / sizeof specs[0])

static zf_pipeline *pipes[NSPECS];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    for (size_t i = 0; i < NSPECS; i++) {
        const spec *s = &specs[i];
        cur_name = s->name;
        char err[256] = "";
        cJSON *j = cJSON_Parse(s->json);
        CHECK(j);
        int rc;
        if (s->v2) {
            cJSON *filters = cJSON_CreateNull();
            rc = zf_pipeline_from_v2(j, filters, s->big, s->order, s->ndim, s->shape, ZF_ELEM_INT64, &pipes[i],
                                     err, sizeof err);
            cJSON_Delete(filters);
        } else {
            rc = zf_pipeline_from_v3(j, s->ndim, s->shape, ZF_ELEM_INT64, &pipes[i], err, sizeof err);
        }
        if (rc) {
            fprintf(stderr, "fuzz_pipeline: cannot build \"%s\": %s\n", s->name, err);
            abort();
        }
        cJSON_Delete(j);
    }
    return 0;
}

/* bitwise CRC32C, independent of src/codec_crc32c.c */
static uint32_t crc32c_ref(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static int64_t load64(const uint8_t *p, int big)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[big ? 7 - i : i] << (8 * i);
    return (int64_t)v;
}

/* expected values of an uncompressed chunk (encoded axis k = logical axis perm[k]) */
static void raw_expected(const spec *s, const uint8_t *in, int64_t *exp)
{
    uint64_t eshape[4], estride[4], lstride[4], idx[4] = {0}, total = 1;
    unsigned n = s->ndim;
    for (unsigned k = 0; k < n; k++)
        eshape[k] = s->shape[s->perm[k]];
    uint64_t st = 1;
    for (unsigned k = n; k-- > 0;) {
        estride[k] = st;
        st *= eshape[k];
    }
    st = 1;
    for (unsigned d = n; d-- > 0;) {
        lstride[d] = st;
        st *= s->shape[d];
        total *= s->shape[d];
    }
    for (uint64_t e = 0; e < total; e++) {
        /* idx: encoded coordinates of encoded element e */
        uint64_t rem = e, lin = 0;
        for (unsigned k = 0; k < n; k++) {
            idx[k] = rem / estride[k];
            rem %= estride[k];
            lin += idx[k] * lstride[s->perm[k]];
        }
        exp[lin] = load64(in + 8 * e, s->big_raw);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the input as its own heap block, so reads past it are caught */
    uint8_t *in = malloc(size ? size : 1);
    if (!in)
        return 0;
    if (size)
        memcpy(in, data, size);
    for (size_t i = 0; i < NSPECS; i++) {
        const spec *s = &specs[i];
        cur_name = s->name;
        const zf_pipeline *p = pipes[i];
        uint64_t elems = zf_pipeline_chunk_elems(p);
        size_t nbytes = (size_t)elems * 8;
        int64_t *out = malloc(nbytes);
        int64_t *again = malloc(nbytes);
        CHECK(out && again);
        char err[200];
        err[0] = '\0';
        int rc = zf_pipeline_decode(p, in, size, out, err, sizeof err);
        CHECK(memchr(err, '\0', sizeof err) != NULL);
        CHECK(rc == ZF_OK || rc == ZF_ECORRUPT || rc == ZF_ENOMEM);
        if (rc != ZF_OK)
            CHECK(err[0] != '\0');
        if (rc == ZF_OK)
            CHECK(size <= zf_pipeline_max_encoded(p));

        /* deterministic */
        char err2[200];
        int rc2 = zf_pipeline_decode(p, in, size, again, err2, sizeof err2);
        CHECK(rc2 == rc);
        if (rc == ZF_OK)
            CHECK(memcmp(out, again, nbytes) == 0);

        switch (s->check) {
        case CK_RAW:
            CHECK((rc == ZF_OK) == (size == nbytes));
            if (rc == ZF_OK) {
                int64_t *exp = malloc(nbytes);
                CHECK(exp);
                raw_expected(s, in, exp);
                CHECK(memcmp(exp, out, nbytes) == 0);
                free(exp);
            }
            break;
        case CK_CRC: {
            int good = 0;
            if (size == nbytes + 4) {
                uint32_t stored = (uint32_t)in[nbytes] | (uint32_t)in[nbytes + 1] << 8 |
                                  (uint32_t)in[nbytes + 2] << 16 | (uint32_t)in[nbytes + 3] << 24;
                good = crc32c_ref(in, nbytes) == stored;
            }
            CHECK((rc == ZF_OK) == good);
            if (rc == ZF_OK)
                for (uint64_t e = 0; e < elems; e++)
                    CHECK(out[e] == load64(in + 8 * e, 0));
            break;
        }
        case CK_ZSTD: {
            uint8_t *ref = malloc(nbytes + 1);
            CHECK(ref);
            size_t r = size ? ZSTD_decompress(ref, nbytes + 1, in, size) : 0;
            int ok = size && !ZSTD_isError(r) && r == nbytes;
            /* The one-shot decoder ignores the window size a frame declares; the
             * streaming decoder (zarrfs, and numcodecs for zarr-python) refuses
             * windows over 2^31 (ZSTD_WINDOWLOG_MAX): that refusal is fine. */
            if (ok && rc != ZF_OK && strstr(err, "requires too much memory"))
                ok = 0;
            if (ok != (rc == ZF_OK))
                fprintf(stderr, "zstd reference: %s (%zu bytes); zarrfs: %s\n",
                        ZSTD_isError(r) ? ZSTD_getErrorName(r) : "ok", ZSTD_isError(r) ? 0 : r,
                        rc ? err : "ok");
            CHECK(ok == (rc == ZF_OK));
            if (ok)
                CHECK(memcmp(ref, out, nbytes) == 0);
            free(ref);
            break;
        }
        case CK_NONE:
            break;
        }
        free(out);
        free(again);
    }
    free(in);
    return 0;
}
