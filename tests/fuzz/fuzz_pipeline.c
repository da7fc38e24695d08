/* fuzz_pipeline.c - libFuzzer target: chunk decoding through fixed pipelines.
 *
 * A fixed set of small pipelines (v3 bytes+zstd, bytes+gzip, bytes+blosc,
 * bytes+crc32c, transpose+bytes(big), bytes alone, bytes(big)+zstd+crc32c,
 * numcodecs fixedscaleoffset+bytes+shuffle+lzma+crc32, astype+bytes+
 * fletcher32, transpose+sharding_indexed, transpose+sharding with zstd
 * inner chunks, transpose+nested sharding with zstd inner chunks; v2 lz4,
 * bz2, zlib, gzip, blosc,
 * order "F" without a compressor, crc32, adler32 (trailing), fletcher32,
 * delta, shuffle, delta+astype+lzma (order F)) is built once; every input is
 * decoded by each of them.  Every decode must either
 * succeed or return an error with a reason; the output buffer is an exact-size
 * heap allocation, so any write past it is caught by ASan.  Where the result
 * can be worked out independently it is checked:
 *   - uncompressed pipelines: success iff the size is right; values equal the
 *     input bytes read in the declared byte order and memory order / transpose;
 *   - crc32c: success iff the trailing 4 bytes are the CRC32C (computed here
 *     bit by bit) of the rest and the rest has the right size;
 *   - numcodecs crc32 (leading), adler32 (trailing), fletcher32 (trailing):
 *     the same, with references written here (bitwise CRC-32, Adler-32 mod
 *     65521, Fletcher-32 folded once at the end);
 *   - v2 delta (int64): success iff the size is right; values are the running
 *     sums (mod 2^64) of the input; v2 shuffle (8): the input's bytes put
 *     back, byte k of element i from k * count + i;
 *   - zstd: success iff libzstd's one-shot ZSTD_decompress yields exactly the
 *     chunk size, with the same bytes (except frames declaring a window over
 *     2^31, which streaming decoders refuse);
 *   - shards whose codecs are all inside them: the decoders are given at
 *     most the input's bytes in all (zf_codec_work), success or not: a
 *     checked index lets no stored byte be decoded twice;
 *   - every pipeline: decoding twice gives the same values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zstd.h>

#include "base/err.h"
#include "codec/codec.h"
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

enum check_kind { CK_NONE, CK_RAW, CK_CRC, CK_ZSTD, CK_CRC32, CK_ADLER32, CK_FLETCHER32, CK_DELTA,
                  CK_SHUFFLE };

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
    const char *filters; /* v2 only: the filters list (NULL: null) */
    zf_elem elem;        /* the array's type ({0, 0}: int64) */
    int once;            /* shards with codecs only inside: decoders get each input byte once */
} spec;

static const spec specs[] = {
    {"v3 bytes+zstd", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"zstd\",\"configuration\":{\"level\":0,\"checksum\":false}}]",
     0, 0, 2, {4, 3}, CK_ZSTD, 0, {0}, NULL, {0, 0}, 0},
    {"v3 bytes+gzip", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"gzip\",\"configuration\":{\"level\":5}}]", 0, 0, 2, {4, 3}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v3 bytes+blosc", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,"
     "\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":0}}]", 0, 0, 2, {4, 3}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v3 bytes+crc32c", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"crc32c\"}]", 0, 0, 2, {4, 3}, CK_CRC, 0, {0}, NULL, {0, 0}, 0},
    {"v3 transpose+bytes(big)", 0, "[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
     "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]", 0, 0, 3, {2, 3, 4}, CK_RAW, 1,
     {2, 0, 1}, NULL, {0, 0}, 0},
    {"v3 bytes", 0, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", 0, 0, 1,
     {13}, CK_RAW, 0, {0}, NULL, {0, 0}, 0},
    {"v3 bytes(big)+zstd+crc32c", 0,
     "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
     "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}},{\"name\":\"crc32c\"}]",
     0, 0, 1, {6}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v2 lz4", 1, "{\"id\":\"lz4\",\"acceleration\":1}", 'C', 0, 2, {5, 2}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v2 bz2", 1, "{\"id\":\"bz2\",\"level\":9}", 'F', 0, 2, {3, 3}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v2 zlib", 1, "{\"id\":\"zlib\",\"level\":1}", 'C', 1, 1, {7}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v2 gzip", 1, "{\"id\":\"gzip\",\"level\":1}", 'C', 0, 1, {7}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v2 blosc", 1, "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":2,"
     "\"blocksize\":0}", 'C', 0, 2, {4, 3}, CK_NONE, 0, {0}, NULL, {0, 0}, 0},
    {"v2 F order, no compressor", 1, "null", 'F', 0, 3, {3, 4, 2}, CK_RAW, 0, {2, 1, 0}, NULL, {0, 0}, 0},
    {"v3 fixedscaleoffset+bytes+shuffle+lzma+crc32", 0,
     "[{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":1000,\"scale\":10,"
     "\"dtype\":\"<f8\",\"astype\":\"<i2\"}},{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":2}},"
     "{\"name\":\"numcodecs.lzma\",\"configuration\":{}},{\"name\":\"numcodecs.crc32\",\"configuration\":{}}]",
     0, 0, 1, {12}, CK_NONE, 0, {0}, NULL, {ZF_ELEM_FLOAT, 8}, 0},
    {"v3 astype+bytes+fletcher32", 0,
     "[{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"<f4\",\"decode_dtype\":\"<i4\"}},"
     "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"numcodecs.fletcher32\",\"configuration\":{}}]",
     0, 0, 1, {9}, CK_NONE, 0, {0}, NULL, {ZF_ELEM_INT, 4}, 0},
    {"v3 transpose+sharding_indexed", 0,
     "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},{\"name\":\"sharding_indexed\","
     "\"configuration\":{\"chunk_shape\":[2,3],\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
     "{\"endian\":\"little\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
     "\"little\"}},{\"name\":\"crc32c\"}]}}]", 0, 0, 2, {3, 4}, CK_NONE, 0, {0}, NULL, {0, 0}, 1},
    {"v2 crc32", 1, "{\"id\":\"crc32\"}", 'C', 0, 1, {5}, CK_CRC32, 0, {0}, NULL, {0, 0}, 0},
    {"v2 adler32 (end)", 1, "{\"id\":\"adler32\",\"location\":\"end\"}", 'C', 0, 1, {5}, CK_ADLER32, 0,
     {0}, NULL, {0, 0}, 0},
    {"v2 fletcher32", 1, "{\"id\":\"fletcher32\"}", 'C', 0, 1, {5}, CK_FLETCHER32, 0, {0}, NULL,
     {0, 0}, 0},
    {"v2 delta", 1, "null", 'C', 0, 1, {11}, CK_DELTA, 0, {0}, "[{\"id\":\"delta\",\"dtype\":\"<i8\"}]",
     {0, 0}, 0},
    {"v2 shuffle", 1, "null", 'C', 0, 1, {7}, CK_SHUFFLE, 0, {0},
     "[{\"id\":\"shuffle\",\"elementsize\":8}]", {0, 0}, 0},
    {"v3 transpose+sharding(zstd inside)", 0,
     "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},{\"name\":\"sharding_indexed\","
     "\"configuration\":{\"chunk_shape\":[2,2],\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
     "{\"endian\":\"little\"}},{\"name\":\"zstd\",\"configuration\":{\"level\":1}}],"
     "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "{\"name\":\"crc32c\"}]}}]", 0, 0, 2, {4, 6}, CK_NONE, 0, {0}, NULL, {0, 0}, 1},
    {"v3 transpose+nested sharding(zstd inside)", 0,
     "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},{\"name\":\"sharding_indexed\","
     "\"configuration\":{\"chunk_shape\":[2,4],\"codecs\":[{\"name\":\"sharding_indexed\","
     "\"configuration\":{\"chunk_shape\":[1,2],\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
     "{\"endian\":\"little\"}},{\"name\":\"zstd\",\"configuration\":{\"level\":1}}],"
     "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}}],"
     "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}}]",
     0, 0, 2, {4, 4}, CK_NONE, 0, {0}, NULL, {0, 0}, 1},
    {"v2 delta+astype+lzma, order F", 1, "{\"id\":\"lzma\",\"format\":1}", 'F', 1, 2, {3, 4}, CK_NONE, 0,
     {0}, "[{\"id\":\"delta\",\"dtype\":\">i8\",\"astype\":\"<i2\"},"
     "{\"id\":\"astype\",\"encode_dtype\":\"|u1\",\"decode_dtype\":\"<i2\"}]", {0, 0}, 0},
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
        zf_elem elem = s->elem.size ? s->elem : ZF_ELEM_INT64;
        if (s->v2) {
            cJSON *filters = s->filters ? cJSON_Parse(s->filters) : cJSON_CreateNull();
            CHECK(filters);
            rc = zf_pipeline_from_v2(j, filters, s->big, s->order, s->ndim, s->shape, elem, &pipes[i],
                                     err, sizeof err);
            cJSON_Delete(filters);
        } else {
            rc = zf_pipeline_from_v3(j, s->ndim, s->shape, elem, &pipes[i], err, sizeof err);
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

/* bitwise CRC-32 (zlib's), independent of zlib */
static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static uint32_t adler32_ref(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        b = (b + a) % 65521;
    }
    return b << 16 | a;
}

/* end-around folding to 16 bits: a nonzero sum stays nonzero (0xffff, not 0) */
static uint32_t fold16(uint64_t x)
{
    while (x > 0xffff)
        x = (x & 0xffff) + (x >> 16);
    return (uint32_t)x;
}

/* Fletcher-32 over big-endian 16-bit words (an odd last byte is the high
 * byte of a word), sums kept wide and folded once at the end */
static uint32_t fletcher32_ref(const uint8_t *p, size_t n)
{
    uint64_t s1 = 0, s2 = 0;
    for (size_t i = 0; i < n; i += 2) {
        s1 += (uint64_t)p[i] << 8 | (i + 1 < n ? p[i + 1] : 0);
        s2 += s1;
    }
    return fold16(s2) << 16 | fold16(s1);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* a numcodecs checksum codec: success iff one chunk plus a matching checksum */
static int sum32_good(enum check_kind k, const uint8_t *in, size_t size, size_t nbytes)
{
    if (size != nbytes + 4)
        return 0;
    if (k == CK_CRC32)
        return crc32_ref(in + 4, nbytes) == le32(in);
    if (k == CK_ADLER32)
        return adler32_ref(in, nbytes) == le32(in + nbytes);
    return fletcher32_ref(in, nbytes) == le32(in + nbytes);
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
        size_t nbytes = (size_t)elems * zf_pipeline_elem(p).size;
        int64_t *out = malloc(nbytes);
        int64_t *again = malloc(nbytes);
        CHECK(out && again);
        char err[200];
        err[0] = '\0';
        uint64_t work = zf_codec_work();
        int rc = zf_pipeline_decode(p, in, size, out, err, sizeof err);
        work = zf_codec_work() - work;
        if (s->once) /* checked index: no stored byte decoded twice, success or not */
            CHECK(work <= size);
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
        case CK_CRC32:
        case CK_ADLER32:
        case CK_FLETCHER32: {
            CHECK((rc == ZF_OK) == sum32_good(s->check, in, size, nbytes));
            const uint8_t *payload = in + (s->check == CK_CRC32 ? 4 : 0);
            if (rc == ZF_OK)
                for (uint64_t e = 0; e < elems; e++)
                    CHECK(out[e] == load64(payload + 8 * e, 0));
            break;
        }
        case CK_DELTA: {
            CHECK((rc == ZF_OK) == (size == nbytes));
            uint64_t acc = 0;
            for (uint64_t e = 0; rc == ZF_OK && e < elems; e++) {
                acc += (uint64_t)load64(in + 8 * e, 0);
                CHECK((uint64_t)out[e] == acc);
            }
            break;
        }
        case CK_SHUFFLE: {
            CHECK((rc == ZF_OK) == (size == nbytes));
            const uint8_t *o = (const uint8_t *)out;
            for (uint64_t e = 0; rc == ZF_OK && e < elems; e++)
                for (unsigned b = 0; b < 8; b++)
                    CHECK(o[8 * e + b] == in[b * elems + e]);
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
