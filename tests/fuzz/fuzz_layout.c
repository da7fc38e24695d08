/* fuzz_layout.c - libFuzzer target: a whole store read through the text layout.
 *
 * LLVMFuzzerInitialize makes a small store in a temp dir (in $ZF_FUZZ_TMP or
 * the working directory; removed at exit when libFuzzer runs atexit handlers):
 * a v3 root group holding five timedelta arrays
 *   raw     v3 [7,5] chunks [3,2], bytes(little), dimension names, the data
 *           type (numpy.timedelta64 or numpy.datetime64), unit, scale and
 *           fill value taken from the input (zarr.json rewritten for every
 *           input)
 *   big     v3 [11] chunks [4], bytes(big), "v2" chunk keys ("0", "1"...)
 *   zs      v3 [6,4] chunks [4,4], bytes + zstd: chunk c/0/0 is the input's
 *           bytes compressed here, c/1/0 is raw input bytes (mostly damaged)
 *   v2      v2 [5,5] chunks [2,3], ">m8[10us]", order F, no compressor,
 *           "/" dimension separator, .zattrs dimension names
 *   scalar  v3 0-d array, unit D
 * For each input the chunk files are rewritten from the input bytes (some
 * chunks left missing or truncated, per two bit masks in the input), the
 * store is opened with zf_store_open_local and zf_tree_build, and both views of
 * every array are sized and read:
 *   - the expected text of every view is worked out here independently of
 *     layout.c (chunk geometry, byte order, memory order, fill values, CSV
 *     framing and quoting; value text from the formatter text.h sets up);
 *   - zf_layout_size must equal it (a damaged chunk measured as NaT lines, as
 *     layout.h specifies); a full read must return it, or fail with
 *     ZF_ECORRUPT exactly when a chunk is damaged;
 *   - reads at offsets and lengths derived from the input (exact-size heap
 *     buffers) must return the same bytes when they touch no damaged line;
 *   - sequential reads in pieces must add up to the size.
 * Then the duration and time-stamp formatters are fuzzed on the input's
 * 8-byte groups: the length each says equals the length it writes, which is
 * at most ZF_VALUE_MAX (the NaT text for NaT), for every format, unit and a
 * few scales.
 *
 * layout.h promises that bytes not touching a damaged chunk stay readable:
 * a read must fail exactly when its bytes touch a damaged chunk's lines.
 * Building with -DZF_FUZZ_STRICT_DAMAGE=0 relaxes that to "fails only if a
 * damaged line lies anywhere before the end of the read" (the behaviour
 * before commit e965e0b, where reads failed when their 4096-element offset
 * block began before a damaged chunk). */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "chunk/cache.h"
#include "text/datetime.h"
#include "text/duration.h"
#include "base/err.h"
#include "view/layout.h"
#include "store/store.h"
#include "tree/tree.h"

#define FUZZ_NAME "fuzz_layout"
#include "fuzz_util.h"

#ifndef ZF_FUZZ_FMT_GROUPS
#define ZF_FUZZ_FMT_GROUPS 16 /* 8-byte groups of the input given to the formatter */
#endif
#ifndef ZF_FUZZ_STRICT_DAMAGE
#define ZF_FUZZ_STRICT_DAMAGE 1
#endif

/* ------------------------------------------------------------------ store */

typedef struct arr {
    const char *name;
    unsigned ndim;
    uint64_t shape[2], chunks[2];
    int big;        /* big-endian values */
    int forder;     /* v2 order F inside a chunk */
    int zstd;       /* bytes + zstd */
    const char *dims[2];
    /* set per input */
    int64_t fill;
    zf_unit unit;
    uint32_t scale;
    int datetime;   /* numpy.datetime64 (raw only) */
} arr;

static arr arrs[] = {
    {"raw", 2, {7, 5}, {3, 2}, 0, 0, 0, {"x", "y,\"z\""}, 42, ZF_UNIT_ns, 1, 0},
    {"big", 1, {11}, {4}, 1, 0, 0, {NULL}, ZF_NAT, ZF_UNIT_ns, 1, 0},
    {"zs", 2, {6, 4}, {4, 4}, 0, 0, 1, {NULL, NULL}, 0, ZF_UNIT_ms, 1, 0},
    {"v2", 2, {5, 5}, {2, 3}, 1, 1, 0, {"a", "b"}, ZF_NAT, ZF_UNIT_us, 10, 0},
    {"scalar", 0, {0}, {0}, 0, 0, 0, {NULL}, -1, ZF_UNIT_D, 1, 0},
};
#define NARRS (sizeof arrs / sizeof arrs[0])
#define MAXCHUNKS 16

static char root[4096]; /* absolute */

static uint64_t grid(const arr *a, unsigned d)
{
    return (a->shape[d] + a->chunks[d] - 1) / a->chunks[d];
}

static uint64_t nchunks(const arr *a)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < a->ndim; d++)
        n *= grid(a, d);
    return n;
}

static uint64_t nelems(const arr *a)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < a->ndim; d++)
        n *= a->shape[d];
    return n;
}

static uint64_t chunk_elems(const arr *a)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < a->ndim; d++)
        n *= a->chunks[d];
    return n;
}

/* path of chunk ci of array a (own key encoding per array, written by hand) */
static void chunk_path(const arr *a, uint64_t ci, char *buf, size_t cap)
{
    uint64_t c[2] = {0, 0};
    for (unsigned d = a->ndim; d-- > 0;) {
        c[d] = ci % grid(a, d);
        ci /= grid(a, d);
    }
    if (!strcmp(a->name, "raw") || !strcmp(a->name, "zs"))
        snprintf(buf, cap, "%s/%s/c/%llu/%llu", root, a->name, (unsigned long long)c[0],
                 (unsigned long long)c[1]);
    else if (!strcmp(a->name, "big"))
        snprintf(buf, cap, "%s/big/%llu", root, (unsigned long long)c[0]);
    else if (!strcmp(a->name, "v2"))
        snprintf(buf, cap, "%s/v2/%llu/%llu", root, (unsigned long long)c[0],
                 (unsigned long long)c[1]);
    else
        snprintf(buf, cap, "%s/scalar/c", root);
}

static void write_text(const char *rel, const char *text)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    write_file(path, text, strlen(text));
}

static void make_dir(const char *rel)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        die("cannot mkdir %s: %s", path, strerror(errno));
}

static void cleanup(void)
{
    rm_tree(root);
}

static const char *unit_ids[] = {"Y", "M", "W", "D", "h", "m", "s", "ms",
                                 "us", "ns", "ps", "fs", "as", "generic"};

static void write_raw_meta(const arr *a)
{
    char fill[32], text[1024];
    if (a->fill == ZF_NAT)
        snprintf(fill, sizeof fill, "\"NaT\"");
    else
        snprintf(fill, sizeof fill, "%lld", (long long)a->fill);
    snprintf(text, sizeof text,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[7,5],"
             "\"data_type\":{\"name\":\"numpy.%s\",\"configuration\":"
             "{\"unit\":\"%s\",\"scale_factor\":%u}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[3,2]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":%s,\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
             "{\"endian\":\"little\"}}],\"attributes\":{},"
             "\"dimension_names\":[\"x\",\"y,\\\"z\\\"\"]}",
             a->datetime ? "datetime64" : "timedelta64", unit_ids[a->unit], a->scale, fill);
    write_text("raw/zarr.json", text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    err_fd = dup(2);
    if (err_fd < 0)
        err_fd = 2;
    /* in $ZF_FUZZ_TMP, else the working directory (scripts/fuzz runs each
     * target in a scratch dir it wipes: libFuzzer does not always run atexit) */
    const char *tmp = getenv("ZF_FUZZ_TMP");
    char dir[sizeof root];
    snprintf(dir, sizeof dir, "%s/zf-fuzz-layout.XXXXXX", tmp && *tmp ? tmp : ".");
    if (!mkdtemp(dir) || !realpath(dir, root))
        die("cannot make a temp dir in %s: %s", tmp && *tmp ? tmp : ".", strerror(errno));
    if (!getenv("ZF_FUZZ_KEEP")) atexit(cleanup);
    else fprintf(stderr, "store: %s\n", root);
    write_text("zarr.json", "{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{}}");
    make_dir("raw");
    make_dir("raw/c");
    for (int i = 0; i < 3; i++) {
        char d[32];
        snprintf(d, sizeof d, "raw/c/%d", i);
        make_dir(d);
    }
    write_raw_meta(&arrs[0]);
    make_dir("big");
    write_text("big/zarr.json",
               "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[11],"
               "\"data_type\":{\"name\":\"numpy.timedelta64\",\"configuration\":"
               "{\"unit\":\"ns\",\"scale_factor\":1}},"
               "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
               "\"chunk_key_encoding\":{\"name\":\"v2\",\"configuration\":{\"separator\":\".\"}},"
               "\"fill_value\":\"NaT\",\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
               "{\"endian\":\"big\"}}],\"attributes\":{}}");
    make_dir("zs");
    make_dir("zs/c");
    make_dir("zs/c/0");
    make_dir("zs/c/1");
    write_text("zs/zarr.json",
               "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[6,4],"
               "\"data_type\":{\"name\":\"numpy.timedelta64\",\"configuration\":"
               "{\"unit\":\"ms\",\"scale_factor\":1}},"
               "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4,4]}},"
               "\"chunk_key_encoding\":{\"name\":\"default\"},"
               "\"fill_value\":0,\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
               "{\"endian\":\"little\"}},{\"name\":\"zstd\",\"configuration\":"
               "{\"level\":1,\"checksum\":false}}],\"attributes\":{},"
               "\"dimension_names\":[null,null]}");
    make_dir("v2");
    for (int i = 0; i < 3; i++) {
        char d[32];
        snprintf(d, sizeof d, "v2/%d", i);
        make_dir(d);
    }
    write_text("v2/.zarray",
               "{\"zarr_format\":2,\"shape\":[5,5],\"chunks\":[2,3],\"dtype\":\">m8[10us]\","
               "\"order\":\"F\",\"compressor\":null,\"filters\":null,\"fill_value\":null,"
               "\"dimension_separator\":\"/\"}");
    write_text("v2/.zattrs", "{\"_ARRAY_DIMENSIONS\":[\"a\",\"b\"]}");
    make_dir("scalar");
    write_text("scalar/zarr.json",
               "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[],"
               "\"data_type\":{\"name\":\"numpy.timedelta64\",\"configuration\":"
               "{\"unit\":\"D\",\"scale_factor\":1}},"
               "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[]}},"
               "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
               "\"fill_value\":-1,\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
               "{\"endian\":\"little\"}}]}");
    return 0;
}

/* ------------------------------------------------------------- the input */

/* the value stream: the bytes after the header, cyclically (zeros if none) */
typedef struct stream {
    const uint8_t *p;
    size_t n, pos;
} stream;

static void stream_take(stream *s, uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        out[i] = s->n ? s->p[s->pos % s->n] : 0;
        s->pos++;
    }
}

/* xorshift for read offsets, seeded from the input */
static uint64_t rng_state;
static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* ----------------------------------------------------------- the model */

typedef struct chunkstate {
    int present, bad;
    uint8_t *bytes; /* decoded chunk bytes (stored byte order), present && !bad */
} chunkstate;

typedef struct text {
    char *data;
    size_t len, cap;
    uint8_t *bad; /* per byte: part of a damaged chunk's line */
} text;

static void text_add(text *t, const char *s, size_t n, int bad)
{
    if (n == 0)
        return;
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n)
            cap *= 2;
        t->data = realloc(t->data, cap);
        t->bad = realloc(t->bad, cap);
        CHECK(t->data && t->bad);
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    memset(t->bad + t->len, bad, n);
    t->len += n;
}

static void text_free(text *t)
{
    free(t->data);
    free(t->bad);
}

/* RFC 4180 quoting, written here (not textutil's) */
static void csv_field(text *t, const char *s, int bad)
{
    if (!strpbrk(s, ",\"\r\n")) {
        text_add(t, s, strlen(s), bad);
        return;
    }
    text_add(t, "\"", 1, bad);
    for (; *s; s++) {
        if (*s == '"')
            text_add(t, "\"", 1, bad);
        text_add(t, s, 1, bad);
    }
    text_add(t, "\"", 1, bad);
}

static int64_t load64(const uint8_t *p, int big)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[big ? 7 - i : i] << (8 * i);
    return (int64_t)v;
}

/* expected text of both views of array a */
static void model(const arr *a, const chunkstate *cs, const char *nat, const zf_text *fmt,
                  text *txt, text *csv)
{
    /* header */
    for (unsigned d = 0; d < a->ndim; d++) {
        char dn[16];
        const char *name = a->dims[d];
        if (!name) {
            snprintf(dn, sizeof dn, "dim_%u", d);
            name = dn;
        }
        csv_field(csv, name, 0);
        text_add(csv, ",", 1, 0);
    }
    csv_field(csv, a->name, 0);
    text_add(csv, "\n", 1, 0);
    uint64_t n = nelems(a);
    for (uint64_t e = 0; e < n; e++) {
        uint64_t idx[2] = {0, 0}, rem = e;
        for (unsigned d = a->ndim; d-- > 0;) {
            idx[d] = rem % a->shape[d];
            rem /= a->shape[d];
        }
        uint64_t ci = 0, off = 0;
        for (unsigned d = 0; d < a->ndim; d++)
            ci = ci * grid(a, d) + idx[d] / a->chunks[d];
        if (a->forder) {
            uint64_t st = 1;
            for (unsigned d = 0; d < a->ndim; d++) {
                off += (idx[d] % a->chunks[d]) * st;
                st *= a->chunks[d];
            }
        } else {
            uint64_t st = 1;
            for (unsigned d = a->ndim; d-- > 0;) {
                off += (idx[d] % a->chunks[d]) * st;
                st *= a->chunks[d];
            }
        }
        const chunkstate *c = &cs[ci];
        int bad = c->present && c->bad;
        int64_t v = !c->present ? a->fill : bad ? ZF_NAT : load64(c->bytes + 8 * off, a->big);
        char val[ZF_VALUE_MAX + 2 * ZF_NAT_MAX + 8];
        size_t vl = zf_text_value(fmt, v, val);
        text_add(txt, val, vl, bad);
        text_add(txt, "\n", 1, bad);
        char num[24];
        for (unsigned d = 0; d < a->ndim; d++) {
            int k = snprintf(num, sizeof num, "%llu,", (unsigned long long)idx[d]);
            text_add(csv, num, (size_t)k, bad);
        }
        if (v == ZF_NAT)
            csv_field(csv, nat, bad);
        else
            text_add(csv, val, vl, bad);
        text_add(csv, "\n", 1, bad);
    }
}

/* ------------------------------------------------------------ the checks */

static int any_bad(const text *t, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to && i < t->len; i++)
        if (t->bad[i])
            return 1;
    return 0;
}

/* may a read of [off, off+len) fail?  (see the header comment) */
static int may_fail(const text *t, uint64_t off, uint64_t len)
{
    return ZF_FUZZ_STRICT_DAMAGE ? any_bad(t, off, off + len) : any_bad(t, 0, off + len);
}

static void check_read(zf_layout *l, zf_view v, const text *t, uint64_t off, size_t len,
                       const char *what)
{
    char *buf = malloc(len ? len : 1);
    CHECK(buf);
    size_t got = 12345;
    int rc = zf_layout_read(l, v, off, buf, len, &got);
    uint64_t avail = off < t->len ? t->len - off : 0;
    size_t want = len < avail ? len : (size_t)avail;
    if (rc == ZF_OK) {
        if (got != want)
            die("%s: read(%llu, %zu) got %zu bytes, expected %zu", what,
                (unsigned long long)off, len, got, want);
        if (want && memcmp(buf, t->data + off, want) != 0)
            die("%s: read(%llu, %zu) returned other bytes than expected", what,
                (unsigned long long)off, len);
        if (want && any_bad(t, off, off + want))
            die("%s: read(%llu, %zu) succeeded over a damaged chunk", what,
                (unsigned long long)off, len);
    } else {
        if (rc != ZF_ECORRUPT)
            die("%s: read(%llu, %zu) failed with %d", what, (unsigned long long)off, len, rc);
        if (!may_fail(t, off, want))
            die("%s: read(%llu, %zu) failed (%d) but touches no damaged chunk", what,
                (unsigned long long)off, len, rc);
    }
    free(buf);
}

static void check_view(zf_layout *l, zf_view v, const text *t, const char *what)
{
    uint64_t size = 0;
    int rc = zf_layout_size(l, v, &size);
    if (rc)
        die("%s: zf_layout_size failed: %d", what, rc);
    CHECK(zf_layout_sized(l));
    if (size != t->len)
        die("%s: size %llu, expected %zu", what, (unsigned long long)size, t->len);
    int damaged = any_bad(t, 0, t->len);
    check_read(l, v, t, 0, (size_t)size, what);
    /* reads at input-derived offsets */
    for (int i = 0; i < 12; i++) {
        uint64_t off = rng() % (size + 8);
        size_t len = (size_t)(rng() % (i < 8 ? 64 : 2048));
        check_read(l, v, t, off, len, what);
    }
    check_read(l, v, t, size, 10, what);
    check_read(l, v, t, UINT64_MAX - 4, 10, what);
    /* sequential pieces */
    size_t piece = 7 + (size_t)(rng() % 300);
    uint64_t sum = 0;
    char *buf = malloc(piece);
    CHECK(buf);
    for (;;) {
        size_t got = 0;
        rc = zf_layout_read(l, v, sum, buf, piece, &got);
        if (rc) {
            CHECK(rc == ZF_ECORRUPT && damaged);
            break;
        }
        if (got == 0)
            break;
        CHECK(got <= piece);
        sum += got;
        CHECK(sum <= size);
    }
    if (rc == ZF_OK && sum != size)
        die("%s: pieces of %zu add up to %llu, size %llu", what, piece,
            (unsigned long long)sum, (unsigned long long)size);
    free(buf);
}

/* a view without a model (.info): size, full read and pieces agree */
static void check_free_view(zf_layout *l, zf_view v, const char *what)
{
    uint64_t size = 0;
    int rc = zf_layout_size(l, v, &size);
    if (rc)
        die("%s: zf_layout_size failed: %d", what, rc);
    CHECK(size < (1u << 20));
    char *full = malloc(size ? size : 1);
    CHECK(full);
    size_t got = 0;
    rc = zf_layout_read(l, v, 0, full, (size_t)size, &got);
    if (rc || got != size)
        die("%s: full read: rc %d, %zu of %llu bytes", what, rc, got, (unsigned long long)size);
    size_t piece = 1 + (size_t)(rng() % 61);
    char *buf = malloc(piece);
    CHECK(buf);
    uint64_t pos = 0;
    for (;;) {
        rc = zf_layout_read(l, v, pos, buf, piece, &got);
        if (rc)
            die("%s: read(%llu, %zu) failed: %d", what, (unsigned long long)pos, piece, rc);
        if (!got)
            break;
        CHECK(got <= piece && pos + got <= size);
        if (memcmp(buf, full + pos, got))
            die("%s: read(%llu, %zu) differs from the full read", what, (unsigned long long)pos,
                piece);
        pos += got;
    }
    CHECK(pos == size);
    free(buf);
    free(full);
}

/* ------------------------------------------------------- the formatter */

static void fuzz_formatter(const uint8_t *data, size_t size)
{
    static const uint32_t scales[] = {1, 7, 1000, 86400, INT32_MAX};
    char *out = malloc(ZF_VALUE_MAX);
    CHECK(out);
    size_t groups = size / 8 > ZF_FUZZ_FMT_GROUPS ? ZF_FUZZ_FMT_GROUPS : size / 8;
    for (size_t g = 0; g < groups; g++) {
        int64_t v = load64(data + 8 * g, 0);
        uint32_t own = (uint32_t)((uint64_t)v % INT32_MAX) + 1;
        for (int f = ZF_FORMAT_PANDAS; f <= ZF_FORMAT_RAW; f++) {
            for (int u = ZF_UNIT_Y; u <= ZF_UNIT_GENERIC; u++) {
                for (size_t s = 0; s <= sizeof scales / sizeof scales[0]; s++) {
                    uint32_t scale = s < sizeof scales / sizeof scales[0] ? scales[s] : own;
                    zf_fmt fmt;
                    zf_dtfmt dfmt;
                    CHECK(zf_fmt_init(&fmt, (zf_format)f, (zf_unit)u, scale, "NaT") == 0);
                    CHECK(zf_dtfmt_init(&dfmt, (zf_format)f, (zf_unit)u, scale, "NaT") == 0);
                    size_t dlen = zf_dtfmt_len(&dfmt, v), dwrote = zf_dtfmt_value(&dfmt, v, out);
                    if (dlen != dwrote || dwrote > ZF_VALUE_MAX || dwrote == 0 ||
                        memchr(out, '\n', dwrote) || memchr(out, ',', dwrote))
                        die("datetime format %d unit %s scale %u value %lld: len %zu, wrote %zu",
                            f, unit_ids[u], scale, (long long)v, dlen, dwrote);
                    size_t len = zf_fmt_len(&fmt, v);
                    size_t wrote = zf_fmt_value(&fmt, v, out);
                    if (len != wrote || wrote > ZF_VALUE_MAX || wrote == 0)
                        die("format %d unit %s scale %u value %lld: len %zu, wrote %zu", f,
                            unit_ids[u], scale, (long long)v, len, wrote);
                    if (v == ZF_NAT)
                        CHECK(wrote == 3 && !memcmp(out, "NaT", 3));
                    if (memchr(out, '\n', wrote) || memchr(out, ',', wrote))
                        die("format %d unit %s scale %u value %lld: newline or comma in text",
                            f, unit_ids[u], scale, (long long)v);
                    if (f == ZF_FORMAT_RAW && v != ZF_NAT) {
                        char ref[24];
                        int k = snprintf(ref, sizeof ref, "%lld", (long long)v);
                        CHECK((size_t)k == wrote && !memcmp(ref, out, wrote));
                    }
                }
            }
        }
    }
    free(out);
}

/* ----------------------------------------------------------- the driver */

static const char *nats[] = {"NaT", "", "a,b", "\"q\"", "x\ny", "nan", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size, 0};
    uint8_t b0 = in_byte(&in), b1 = in_byte(&in), b2 = in_byte(&in);
    uint32_t scale_raw = (uint32_t)in_uint(&in, 8);
    int64_t fill = (int64_t)in_uint(&in, 8);
    uint64_t masks = in_uint(&in, 8);
    uint32_t bad_mask = (uint32_t)masks, missing_mask = (uint32_t)(masks >> 32);
    zf_format format = (zf_format)(b0 % 5);
    char longnat[ZF_NAT_MAX + 1];
    memset(longnat, 'N', ZF_NAT_MAX);
    longnat[ZF_NAT_MAX] = '\0';
    nats[6] = longnat;
    const char *nat = nats[(b1 & 15) % 7];
    /* a cache too small for any chunk (every read reloads) now and then */
    size_t cache_cap = (b1 >> 4) == 1 ? 1 : (b1 >> 4) == 2 ? 200 : (size_t)1 << 20;

    arr *raw = &arrs[0];
    raw->unit = (zf_unit)(b2 % 14);
    raw->datetime = b2 >> 7;
    raw->scale = b0 & 0x80 ? scale_raw % INT32_MAX + 1 : 1 + scale_raw % 10;
    raw->fill = fill;
    write_raw_meta(raw);

    stream st = {data + in.pos, size - in.pos, 0};
    rng_state = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < size; i++)
        rng_state = (rng_state ^ data[i]) * 0x100000001B3ull;
    rng_state |= 1;

    /* write the chunks */
    chunkstate cs[NARRS][MAXCHUNKS];
    memset(cs, 0, sizeof cs);
    unsigned gbit = 0;
    for (size_t ai = 0; ai < NARRS; ai++) {
        arr *a = &arrs[ai];
        size_t cbytes = (size_t)chunk_elems(a) * 8;
        for (uint64_t ci = 0; ci < nchunks(a); ci++, gbit++) {
            chunkstate *c = &cs[ai][ci];
            char path[8192];
            chunk_path(a, ci, path, sizeof path);
            unlink(path);
            if (missing_mask >> (gbit % 32) & 1)
                continue;
            c->present = 1;
            c->bytes = malloc(cbytes);
            CHECK(c->bytes);
            stream_take(&st, c->bytes, cbytes);
            if (a->zstd && ci == 1) {
                /* raw input bytes as the compressed chunk */
                size_t n = st.n < 300 ? st.n : 300;
                write_file(path, st.p, n);
                size_t r = n ? ZSTD_decompress(c->bytes, cbytes, st.p, n) : 0;
                c->bad = !n || ZSTD_isError(r) || r != cbytes;
                if (!c->bad) {
                    /* zstd must also fit in a buffer of exactly the chunk size */
                    uint8_t *probe = malloc(cbytes + 1);
                    CHECK(probe);
                    size_t r2 = ZSTD_decompress(probe, cbytes + 1, st.p, n);
                    c->bad = ZSTD_isError(r2) || r2 != cbytes;
                    free(probe);
                }
            } else if (a->zstd) {
                size_t bound = ZSTD_compressBound(cbytes);
                uint8_t *z = malloc(bound);
                CHECK(z);
                size_t zn = ZSTD_compress(z, bound, c->bytes, cbytes, 1);
                CHECK(!ZSTD_isError(zn));
                c->bad = bad_mask >> (gbit % 32) & 1;
                write_file(path, z, c->bad ? zn / 2 : zn);
                free(z);
            } else {
                c->bad = bad_mask >> (gbit % 32) & 1;
                write_file(path, c->bytes, c->bad ? cbytes - 1 - (gbit % 7) : cbytes);
            }
        }
    }

    zf_store *store = NULL;
    CHECK(zf_store_open_local(root, 0, &store) == ZF_OK);
    zf_cache *cache = zf_cache_new(cache_cap);
    CHECK(cache);
    zf_layout_opts opts = {.format = format, .nat = nat, .threads = 1};
    zf_tree *tree = NULL;
    int rc = zf_tree_build(store, cache, &opts, &tree);
    if (rc)
        die("zf_tree_build failed: %d", rc);
    CHECK(zf_tree_count(tree) >= 1 + 2 * NARRS);

    for (size_t ai = 0; ai < NARRS; ai++) {
        const arr *a = &arrs[ai];
        char fname[64];
        snprintf(fname, sizeof fname, "%s.txt", a->name);
        const zf_node *nt = zf_tree_lookup(tree, ZF_ROOT_INO, fname);
        snprintf(fname, sizeof fname, "%s.csv", a->name);
        const zf_node *nc = zf_tree_lookup(tree, ZF_ROOT_INO, fname);
        if (!nt || !nc)
            die("array %s is not listed", a->name);
        CHECK(nt->layout == nc->layout && nt->view == ZF_VIEW_TXT && nc->view == ZF_VIEW_CSV);
        zf_text_room fmt;
        CHECK(zf_text_init(&fmt, a->datetime ? ZF_VALUES_DATETIME : ZF_VALUES_DURATION, format,
                           a->unit, a->scale, NULL, nat) == 0);
        text txt = {0}, csv = {0};
        model(a, cs[ai], nat, &fmt.text, &txt, &csv);
        char what[64];
        snprintf(what, sizeof what, "%s.txt", a->name);
        check_view(nt->layout, ZF_VIEW_TXT, &txt, what);
        snprintf(what, sizeof what, "%s.csv", a->name);
        check_view(nc->layout, ZF_VIEW_CSV, &csv, what);
        snprintf(fname, sizeof fname, "%s.info", a->name);
        const zf_node *ni = zf_tree_lookup(tree, ZF_ROOT_INO, fname);
        if (ni)
            check_free_view(ni->layout, ni->view, fname);
        text_free(&txt);
        text_free(&csv);
    }

    zf_tree_free(tree);
    zf_cache_free(cache);
    zf_store_close(store);
    for (size_t ai = 0; ai < NARRS; ai++)
        for (size_t ci = 0; ci < MAXCHUNKS; ci++)
            free(cs[ai][ci].bytes);

    fuzz_formatter(data, size);
    return 0;
}
