/* test_shards.c - sharded arrays read through a counting store: every shard
 * index is read (and checked) once per version of its shard, on a local
 * store and on a remote one, nested shards' indexes too; a damaged index is
 * read and refused once, not once per inner chunk; decoding reads each
 * stored byte once (the codecs' work meter against the stored bytes).
 *
 * The counting store wraps the local directory, or the fake remote store
 * over it (fake_remote.h: ETag-style stamps, remote set), and counts whole
 * reads, ranged reads (those of an index's size apart) and stamps. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#define CHECK_PRINT_MAX 20

#include "base/err.h"
#include "check.h"
#include "fake_remote.h"
#include "chunk/array.h"
#include "codec/codec.h"
#include "zarr/meta.h"

/* ------------------------------------------------------ the counting store */

/* a store passing every call to another (the local directory, or the fake
 * remote store over it: fake_remote.h), counting what chunks cost */
typedef struct counter {
    zf_store *inner;
    uint64_t index_len;        /* a ranged read of this many bytes is an index */
    atomic_long reads, ranges, index_reads, stamps;
} counter;

static counter *C(const zf_store *s)
{
    return s->impl;
}

static void c_close(zf_store *s)
{
    (void)s;
}

static int c_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                  zf_stamp *st, char *err, size_t errcap)
{
    counter *c = C(s);
    if (!strstr(key, "zarr.json"))
        atomic_fetch_add(&c->reads, 1);
    return zf_store_read(c->inner, key, max, b, n, st, err, errcap);
}

static int c_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    counter *c = C(s);
    for (size_t i = 0; i < n; i++) {
        atomic_fetch_add(&c->ranges, 1);
        if (reqs[i].len == c->index_len)
            atomic_fetch_add(&c->index_reads, 1);
    }
    return zf_store_read_many(c->inner, reqs, n);
}

static int c_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    atomic_fetch_add(&C(s)->stamps, 1);
    return zf_store_stamp_why(C(s)->inner, key, st, err, errcap);
}

static int c_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                  void *ctx, char *err, size_t errcap)
{
    return zf_store_list(C(s)->inner, prefix, flags, fn, ctx, err, errcap);
}

static const zf_store_ops counter_ops = {.close = c_close, .read = c_read, .read_many = c_read_many,
                                         .stamp = c_stamp, .list = c_list};

/* a counter over inner, local or remote as inner is */
static zf_store *counter_open(counter *c, zf_store *inner, uint64_t index_len)
{
    memset(c, 0, sizeof *c);
    c->inner = inner;
    c->index_len = index_len;
    zf_store *s = calloc(1, sizeof *s);
    *s = (zf_store){.ops = &counter_ops, .impl = c, .name = strdup(zf_store_path(inner)),
                    .parallel = inner->parallel, .remote = inner->remote,
                    .budget_ms = inner->budget_ms};
    return s;
}

static void zero(counter *c)
{
    c->reads = c->ranges = c->index_reads = c->stamps = 0;
}

/* ------------------------------------------------------ stores on disk */

static char tmp[256];

/* value i of a store (salt: another version) */
static int64_t value(uint64_t i, unsigned salt)
{
    return (int64_t)((i * 2654435761u + salt * 40503u) % 100000007u) - 5000;
}

/* an encoded chunk of n values from value first on (zstd or raw) into buf;
 * its size */
static size_t encode(uint64_t first, unsigned n, unsigned salt, int zstd, uint8_t *buf,
                     size_t cap)
{
    int64_t v[64];
    for (unsigned i = 0; i < n; i++)
        v[i] = value(first + i, salt);
    if (!zstd) {
        memcpy(buf, v, n * sizeof *v);
        return n * sizeof *v;
    }
    return ZSTD_compress(buf, cap, v, n * sizeof *v, 1);
}

/* What a test array looks like: `len` values (1-D) in shards of `shard`,
 * inner chunks of `inner`, and, nested, shards of `nested` within each
 * shard holding the inner chunks (0: not nested). */
typedef struct geom {
    unsigned len, shard, nested, inner;
    int zstd;
} geom;

static const char *codecs_json(const geom *g, char *buf, size_t cap)
{
    const char *leaf = g->zstd ? "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                                 "{\"name\":\"zstd\",\"configuration\":{\"level\":1}}]"
                               : "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]";
    const char *idx = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]";
    if (g->nested)
        snprintf(buf, cap,
                 "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[%u],"
                 "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":"
                 "[%u],\"codecs\":%s,\"index_codecs\":%s}}],\"index_codecs\":%s}}]",
                 g->nested, g->inner, leaf, idx, idx);
    else
        snprintf(buf, cap,
                 "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[%u],"
                 "\"codecs\":%s,\"index_codecs\":%s}}]", g->inner, leaf, idx);
    return buf;
}

static void write_meta(const char *dir, const geom *g)
{
    char meta[2048], codecs[1024];
    snprintf(meta, sizeof meta,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%u],\"data_type\":{\"name\":"
             "\"numpy.timedelta64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":1}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%u]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":%s,\"attributes\":{}}",
             g->len, g->shard, codecs_json(g, codecs, sizeof codecs));
    put(dir, "zarr.json", meta, strlen(meta));
}

/* a shard of `count` parts of `each` values from value first on, each part
 * either an inner chunk or (nested) a shard of inner chunks, appended at
 * out + *n, its index after it; overlap: every entry points at the first */
static void shard_bytes(const geom *g, uint64_t first, unsigned count, unsigned each, int level,
                        unsigned salt, int overlap, uint8_t *out, size_t *n)
{
    size_t start = *n;
    uint64_t *idx = malloc(2 * count * sizeof *idx);
    for (unsigned i = 0; i < count; i++) {
        size_t at = *n;
        if (level == 0 && g->nested)
            shard_bytes(g, first + (uint64_t)i * each, each / g->inner, g->inner, 1, salt, 0, out, n);
        else
            *n += encode(first + (uint64_t)i * each, each, salt, g->zstd, out + *n, 256);
        idx[2 * i] = (overlap ? start : at) - start;
        idx[2 * i + 1] = *n - at;
        if (overlap && i)
            *n = at; /* only the first part is stored */
    }
    memcpy(out + *n, idx, 2 * count * sizeof *idx);
    *n += 2 * count * sizeof *idx;
    free(idx);
}

/* write shard k (salt: its version's values; overlap: a damaged index) */
static void write_shard(const char *dir, const geom *g, unsigned k, unsigned salt, int overlap)
{
    uint8_t *buf = malloc((size_t)g->shard * 64 + 65536 * 16);
    size_t n = 0;
    unsigned each = g->nested ? g->nested : g->inner;
    shard_bytes(g, (uint64_t)k * g->shard, g->shard / each, each, 0, salt, overlap, buf, &n);
    char name[64];
    snprintf(name, sizeof name, "c/%u", k);
    put(dir, name, buf, n);
    free(buf);
}

static void make_store(const char *dir, const geom *g)
{
    mkdir(dir, 0755);
    write_meta(dir, g);
    for (unsigned k = 0; k < g->len / g->shard; k++)
        write_shard(dir, g, k, 0, 0);
}

/* ------------------------------------------------------------ helpers */

/* the stores a test array reads through: its local directory, the fake
 * remote store over it (remote tests), and the counter over either */
typedef struct stores {
    zf_store *local, *remote, *counted;
    fake f;
} stores;

/* a new array of the store at dir through counter c over the local
 * directory or (remote) the fake remote store over it; NULL on failure */
static zf_array *open_array(const char *dir, counter *c, int remote, const geom *g,
                            zf_cache *cache, stores *ss)
{
    char err[256] = "";
    zf_store_buf b = {NULL, 0};
    size_t n = 0;
    zf_node_kind kind;
    zf_meta m;
    memset(&m, 0, sizeof m);
    memset(ss, 0, sizeof *ss);
    int ok = zf_store_open_local(dir, 0, &ss->local) == ZF_OK &&
             zf_store_read(ss->local, "zarr.json", 1 << 20, &b, &n, NULL, err, sizeof err) == ZF_OK &&
             zf_meta_parse_v3((const char *)b.p, n, &kind, &m, err, sizeof err) == ZF_OK;
    free(b.p);
    CHECK(ok, "%s: metadata: %s", dir, err);
    if (!ok)
        return NULL;
    if (remote)
        ss->remote = fake_open(&ss->f, ss->local, 1, 8, 0);
    unsigned count = g->shard / (g->nested ? g->nested : g->inner);
    ss->counted = counter_open(c, remote ? ss->remote : ss->local, (uint64_t)count * 16);
    return zf_array_new(ss->counted, "", &m, cache);
}

static void close_array(zf_array *a, stores *ss)
{
    zf_array_free(a);
    zf_store_close(ss->counted);
    zf_store_close(ss->remote);
    zf_store_close(ss->local);
}

/* read every read chunk of a (bypassing the cache) and compare it with the
 * values of version salt; returns how many failed, and *bad those that
 * failed with ZF_ECORRUPT */
static unsigned read_all(zf_array *a, const geom *g, unsigned salt, unsigned *bad)
{
    int64_t *buf = malloc(g->inner * sizeof *buf);
    zf_store_buf raw = {NULL, 0};
    unsigned failed = 0, wrong = 0;
    *bad = 0;
    for (uint64_t i = 0; i < zf_array_nchunks(a); i++) {
        zf_chunk out;
        int rc = zf_array_decode(a, i, buf, &raw, &out);
        failed += rc != ZF_OK;
        *bad += rc == ZF_ECORRUPT;
        for (unsigned j = 0; rc == ZF_OK && j < g->inner; j++)
            wrong += !out.values || out.values[j] != value(i * g->inner + j, salt);
    }
    CHECK(wrong == 0, "%u values read wrong", wrong);
    free(raw.p);
    free(buf);
    return failed;
}

/* --------------------------------------------------------------- tests */

/* one index read per shard, local and remote, each shard read whole (a
 * large cache) or by ranges (a small one); a version change reads the
 * changed shard's index once more (local: a kept index without the shard's
 * bytes is used only once a stat finds the shard unchanged) */
static void test_once_per_version(int remote, int small)
{
    geom g = {8 * 4096 * 3, 4096 * 3, 0, 3, 0}; /* 8 shards of 4096 inner chunks */
    char dir[512], what[64];
    snprintf(dir, sizeof dir, "%s/plain-%d-%d.zarr", tmp, remote, small);
    snprintf(what, sizeof what, "%s, %s", remote ? "remote" : "local",
             small ? "by ranges" : "read whole");
    make_store(dir, &g);
    /* shards of 160 KiB: a quarter of 1 MiB has no room for one */
    zf_cache *cache = zf_cache_new(small ? (1 << 20) : (64 << 20));
    counter c;
    stores ss;
    zf_array *a = open_array(dir, &c, remote, &g, cache, &ss);
    unsigned bad;
    CHECK(a && read_all(a, &g, 0, &bad) == 0, "%s: every inner chunk reads", what);
    printf("%s: %ld whole reads, %ld index reads, %ld ranges, %ld stamps for 8 x 4096 inner "
           "chunks\n", what, (long)c.reads, (long)c.index_reads, (long)c.ranges, (long)c.stamps);
    CHECK(c.reads + c.index_reads == 8, "%s: %ld whole reads and %ld index reads for 8 shards",
          what, (long)c.reads, (long)c.index_reads);
    /* read whole: nothing else; by ranges: the inner chunks in a few spans
     * of neighbours (none read twice) */
    CHECK(small ? c.ranges <= 8 + 8 * 4 : c.ranges == 0, "%s: %ld ranged reads", what,
          (long)c.ranges);
    CHECK(!remote || c.stamps == (small ? 8 : 0), "%s: %ld HEADs", what, (long)c.stamps);
    if (!remote && a) { /* a new version of shard 3: its index once more */
        sleep(1); /* (a new mtime, whatever the file system's time stamps) */
        write_shard(dir, &g, 3, 1, 0);
        zero(&c);
        unsigned failed = 0;
        int64_t v[3];
        zf_store_buf raw = {NULL, 0};
        for (uint64_t i = 3 * 4096; i < 4 * 4096; i++) {
            zf_chunk ch;
            failed += zf_array_decode(a, i, v, &raw, &ch) != ZF_OK ||
                      ch.values[0] != value(i * 3, 1);
        }
        free(raw.p);
        CHECK(failed == 0, "%s: the new version reads: %u failed", what, failed);
        CHECK(c.reads + c.index_reads == 1, "%s: a new version: %ld whole reads, %ld index "
              "reads, want one of them", what, (long)c.reads, (long)c.index_reads);
    }
    close_array(a, &ss);
    zf_cache_free(cache);
}

/* rows of a 2-D array cross several shards: each index is still read once */
static void test_rows_across_shards(void)
{
    char dir[512], meta[1024];
    snprintf(dir, sizeof dir, "%s/rows.zarr", tmp);
    mkdir(dir, 0755);
    /* 16 x 2048 values, shards of 8 x 256 (2 x 8 of them), inner chunks 1 x 8 */
    snprintf(meta, sizeof meta,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[16,2048],\"data_type\":{\"name\":"
             "\"numpy.timedelta64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":1}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,256]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
             "\"chunk_shape\":[1,8],\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}]}}],\"attributes\":{}}");
    put(dir, "zarr.json", meta, strlen(meta));
    enum { N = 8 * 32 };
    for (unsigned r = 0; r < 2; r++)
        for (unsigned s = 0; s < 8; s++) {
            uint8_t buf[N * 64 + N * 16];
            uint64_t idx[2 * N];
            for (unsigned i = 0; i < N; i++) {
                int64_t v[8] = {0};
                memcpy(buf + i * 64, v, 64);
                idx[2 * i] = i * 64;
                idx[2 * i + 1] = 64;
            }
            memcpy(buf + N * 64, idx, sizeof idx);
            char name[64];
            snprintf(name, sizeof name, "c/%u/%u", r, s);
            put(dir, name, buf, sizeof buf);
        }
    geom g = {0, 256 * 8, 0, 8, 0}; /* (index_len: 256 entries) */
    counter c;
    stores ss;
    zf_cache *cache = zf_cache_new(64 << 20);
    zf_array *a = open_array(dir, &c, 0, &g, cache, &ss);
    int64_t v[8];
    zf_store_buf raw = {NULL, 0};
    unsigned failed = 0;
    for (uint64_t i = 0; a && i < zf_array_nchunks(a); i++) { /* C order: row by row */
        zf_chunk ch;
        failed += zf_array_decode(a, i, v, &raw, &ch) != ZF_OK;
    }
    free(raw.p);
    CHECK(a && failed == 0, "%u inner chunks failed", failed);
    CHECK(c.reads + c.index_reads == 16, "rows across 8 shards: %ld whole reads and %ld index "
          "reads for 16 shards", (long)c.reads, (long)c.index_reads);
    close_array(a, &ss);
    zf_cache_free(cache);
}

/* nested shards: the outer index once per shard, each nested index once */
static void test_nested(int remote)
{
    geom g = {4 * 4096, 4096, 256, 4, 1}; /* 4 shards of 16 nested shards of 64 inner chunks */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/nested-%d.zarr", tmp, remote);
    make_store(dir, &g);
    counter c;
    stores ss;
    zf_cache *cache = zf_cache_new(1 << 20);
    zf_array *a = open_array(dir, &c, remote, &g, cache, &ss);
    unsigned bad;
    CHECK(a && read_all(a, &g, 0, &bad) == 0, "nested: every inner chunk reads");
    long ranges = (long)c.ranges;
    printf("nested, %s: %ld index reads, %ld ranges for 4 shards of 16 x 64 inner chunks\n",
           remote ? "remote" : "local", (long)c.index_reads, ranges);
    /* the outer indexes (16 entries) once each, the nested shards (their
     * indexes and inner chunks) in a few spans */
    CHECK(c.index_reads == 4, "nested, %s: %ld outer index reads for 4 shards",
          remote ? "remote" : "local", (long)c.index_reads);
    CHECK(ranges <= 4 + 4 * 4, "nested, %s: %ld ranged reads", remote ? "remote" : "local",
          ranges);
    close_array(a, &ss);
    zf_cache_free(cache);
}

/* a shard whose entries overlap: every inner chunk fails, its index is read
 * (and refused) once, and that was the only read of it */
static void test_damaged_once(int remote)
{
    geom g = {2 * 4096 * 3, 4096 * 3, 0, 3, 0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/damaged-%d.zarr", tmp, remote);
    make_store(dir, &g);
    write_shard(dir, &g, 1, 0, 1);
    counter c;
    stores ss;
    zf_cache *cache = zf_cache_new(1 << 20);
    zf_array *a = open_array(dir, &c, remote, &g, cache, &ss);
    unsigned bad = 0, failed = a ? read_all(a, &g, 0, &bad) : 0;
    CHECK(failed == 4096 && bad == 4096, "%s: %u inner chunks failed (%u damaged), want shard 1's "
          "4096", remote ? "remote" : "local", failed, bad);
    CHECK(c.index_reads == 2 && c.ranges <= 2 + 4, "%s: %ld index reads, %ld ranges: the "
          "damaged index is read once, none of its chunks", remote ? "remote" : "local",
          (long)c.index_reads, (long)c.ranges);
    close_array(a, &ss);
    zf_cache_free(cache);
}

/* an index larger than the kept indexes may take (a quarter of cache_size,
 * at least 4 MiB) is never read: the inner chunks of its shard fail at once */
static void test_index_too_large(void)
{
    geom g = {1 << 19, 1 << 19, 0, 1, 0}; /* one shard of 2^19 values: an index of 8 MiB */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/toolarge.zarr", tmp);
    make_store(dir, &g);
    counter c;
    stores ss;
    zf_cache *cache = zf_cache_new(64 << 10); /* room for 16 KiB, so 4 MiB of indexes */
    zf_array *a = open_array(dir, &c, 0, &g, cache, &ss);
    int64_t v[1];
    zf_store_buf raw = {NULL, 0};
    unsigned bad = 0;
    for (uint64_t i = 0; a && i < 64; i++) {
        zf_chunk ch;
        bad += zf_array_decode(a, i * 8191, v, &raw, &ch) == ZF_ECORRUPT;
    }
    free(raw.p);
    CHECK(bad == 64, "%u of 64 inner chunks refused", bad);
    CHECK(c.reads == 0 && c.ranges == 0, "%ld whole and %ld ranged reads: the index is not read",
          (long)c.reads, (long)c.ranges);
    close_array(a, &ss);
    zf_cache_free(cache);
}

/* a cache too small for any index (1 KiB) keeps indexes all the same, within
 * 4 MiB: each read once; the inner chunks are read by themselves (but for
 * runs of neighbours within 256 bytes: a quarter of the cache) */
static void test_tiny_cache(void)
{
    geom g = {4 * 4096 * 3, 4096 * 3, 0, 3, 0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tiny.zarr", tmp);
    make_store(dir, &g);
    counter c;
    stores ss;
    zf_cache *cache = zf_cache_new(1 << 10);
    zf_array *a = open_array(dir, &c, 1, &g, cache, &ss);
    unsigned bad;
    CHECK(a && read_all(a, &g, 0, &bad) == 0, "tiny cache: every inner chunk reads");
    CHECK(c.index_reads == 4 && c.reads == 0 && c.ranges <= 4 + 4 * 4096,
          "tiny cache: %ld index reads, %ld whole reads, %ld ranges for 4 shards of 4096",
          (long)c.index_reads, (long)c.reads, (long)c.ranges);
    close_array(a, &ss);
    zf_cache_free(cache);
}

/* decoding work follows the stored bytes: reading every inner chunk of a
 * zstd shard gives the decoder each stored byte once */
static void test_work_bound(void)
{
    geom g = {2 * 4096 * 3, 4096 * 3, 0, 3, 1};
    char dir[512], name[600];
    snprintf(dir, sizeof dir, "%s/zstd.zarr", tmp);
    make_store(dir, &g);
    uint64_t stored = 0;
    for (unsigned k = 0; k < 2; k++) {
        struct stat sb;
        snprintf(name, sizeof name, "%s/c/%u", dir, k);
        stored += stat(name, &sb) == 0 ? (uint64_t)sb.st_size - 4096 * 16 : 0;
    }
    counter c;
    stores ss;
    zf_cache *cache = zf_cache_new(64 << 20);
    zf_array *a = open_array(dir, &c, 0, &g, cache, &ss);
    uint64_t before = zf_codec_work();
    unsigned bad;
    CHECK(a && read_all(a, &g, 0, &bad) == 0, "zstd shards read");
    uint64_t work = zf_codec_work() - before;
    CHECK(work == stored, "decoders were given %llu bytes for %llu stored",
          (unsigned long long)work, (unsigned long long)stored);
    close_array(a, &ss);
    zf_cache_free(cache);
}

int main(void)
{
    if (test_dir_make(tmp, sizeof tmp, "zf-shards"))
        return 1;
    for (int small = 0; small < 2; small++) {
        test_once_per_version(0, small);
        test_once_per_version(1, small);
    }
    test_rows_across_shards();
    test_nested(0);
    test_nested(1);
    test_damaged_once(0);
    test_damaged_once(1);
    test_index_too_large();
    test_tiny_cache();
    test_work_bound();
    test_dir_remove(tmp);
    return check_summary("test_shards");
}
