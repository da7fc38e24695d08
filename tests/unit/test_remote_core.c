/* test_remote_core.c - everything above the store layer on a remote store:
 * a fake remote store (a zf_store_ops table over a local directory) that can
 * refuse listing (plain HTTP) or list (S3), adds latency, counts requests by
 * kind and what is in flight, and gives ETag-style stamps (no dev/ino/ctime).
 * It drives the tree walk, the array snapshot, the size pass, .info and the
 * persisted index, and compares every size and byte with the local store. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "check.h"
#include "chunk/array.h"
#include "tree/tree.h"
#include "zarr/meta.h"

/* ------------------------------------------------------- the fake store */

typedef struct fake {
    zf_store *inner;              /* the local directory it serves */
    int can_list;                 /* 0: plain HTTP (list is ZF_EUNSUPPORTED) */
    unsigned latency_us;          /* added to every request */
    const char *deny;             /* a key answered with 403 (ZF_EIO), or NULL */
    atomic_long reads, chunk_reads, ranges, stamps, lists, refused;
    atomic_int inflight, max_inflight;
} fake;

/* a metadata document's key (the rest are chunks)? */
static int meta_key(const char *key)
{
    const char *b = strrchr(key, '/');
    b = b ? b + 1 : key;
    return !strcmp(b, "zarr.json") || !strcmp(b, ".zarray") || !strcmp(b, ".zattrs") ||
           !strcmp(b, ".zgroup") || !strcmp(b, ".zmetadata");
}

/* one request: counted in flight for its duration */
static void request_begin(fake *f)
{
    int now = atomic_fetch_add(&f->inflight, 1) + 1, max = atomic_load(&f->max_inflight);
    while (now > max && !atomic_compare_exchange_weak(&f->max_inflight, &max, now))
        ;
    if (f->latency_us)
        usleep(f->latency_us);
}

static void request_end(fake *f)
{
    atomic_fetch_sub(&f->inflight, 1);
}

/* a remote stamp: size, mtime, a tag from them (nginx's ETag); no identity */
static void remote_stamp(zf_stamp *st)
{
    if (st->kind == ZF_STORE_ABSENT)
        return;
    char etag[64];
    snprintf(etag, sizeof etag, "\"%llx-%llx\"", (unsigned long long)st->mtime,
             (unsigned long long)st->size);
    st->dev = st->ino = 0;
    st->ctime = 0;
    zf_fp_init(&st->tag);
    zf_fp_add(&st->tag, etag, strlen(etag));
}

static fake *F(const zf_store *s)
{
    return s->impl;
}

static void fake_close(zf_store *s)
{
    (void)s;
}

static int fake_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                     zf_stamp *st, char *err, size_t errcap)
{
    fake *f = F(s);
    atomic_fetch_add(&f->reads, 1);
    if (!meta_key(key))
        atomic_fetch_add(&f->chunk_reads, 1);
    request_begin(f);
    int rc = zf_store_read(f->inner, key, max, b, n, st, err, errcap);
    remote_stamp(st);
    request_end(f);
    if (f->deny && !strcmp(key, f->deny)) {
        memset(st, 0, sizeof *st);
        snprintf(err, errcap, "HTTP 403 (AccessDenied)");
        rc = ZF_EIO;
    }
    return rc;
}

static int fake_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    fake *f = F(s);
    atomic_fetch_add(&f->ranges, (long)n);
    request_begin(f);
    int rc = zf_store_read_many(f->inner, reqs, n);
    request_end(f);
    return rc;
}

static int fake_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    fake *f = F(s);
    atomic_fetch_add(&f->stamps, 1);
    request_begin(f);
    int rc = zf_store_stamp_why(f->inner, key, st, err, errcap);
    remote_stamp(st);
    request_end(f);
    return rc;
}

typedef struct list_ctx {
    zf_store_list_fn fn;
    void *ctx;
} list_ctx;

static int remote_entry(void *arg, const zf_store_entry *e)
{
    list_ctx *c = arg;
    zf_store_entry r = *e;
    remote_stamp(&r.stamp);
    r.alias = 0;
    return c->fn(c->ctx, &r);
}

static int fake_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                     void *ctx)
{
    fake *f = F(s);
    if (!f->can_list) {
        atomic_fetch_add(&f->refused, 1);
        return ZF_EUNSUPPORTED;
    }
    atomic_fetch_add(&f->lists, 1);
    request_begin(f);
    list_ctx c = {fn, ctx};
    int rc = zf_store_list(f->inner, prefix, flags & ~ZF_LIST_KINDS, remote_entry, &c);
    request_end(f);
    return rc;
}

static const zf_store_ops fake_ops = {.close = fake_close, .read = fake_read, .read_many = fake_read_many,
                                      .stamp = fake_stamp, .list = fake_list};

/* a remote store over inner, named by a URL ending as its directory does
 * (a root array's files are named after it); the caller frees both */
static zf_store *fake_open(fake *f, zf_store *inner, int can_list, unsigned parallel,
                           unsigned latency_us)
{
    const char *base = strrchr(zf_store_path(inner), '/');
    char url[512];
    snprintf(url, sizeof url, "https://example.test/data%s", base ? base : "/store.zarr");
    memset(f, 0, sizeof *f);
    f->inner = inner;
    f->can_list = can_list;
    f->latency_us = latency_us;
    zf_store *s = calloc(1, sizeof *s);
    s->ops = &fake_ops;
    s->impl = f;
    s->name = strdup(url);
    s->parallel = parallel;
    s->remote = 1;
    return s;
}

static long requests(fake *f)
{
    return f->reads + f->ranges + f->stamps + f->lists;
}

static void reset(fake *f)
{
    f->reads = f->chunk_reads = f->ranges = f->stamps = f->lists = f->refused = 0;
    f->max_inflight = 0;
}

/* ------------------------------------------------------ stores on disk */

static char tmp[256];

static void put(const char *dir, const char *rel, const void *data, size_t n)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (char *q = p + strlen(dir) + 1; *q; q++) /* parent directories */
        if (*q == '/') {
            *q = '\0';
            mkdir(p, 0755);
            *q = '/';
        }
    FILE *fp = fopen(p, "wb");
    if (!fp || fwrite(data, 1, n, fp) != n || fclose(fp) != 0) {
        perror(p);
        exit(1);
    }
}

static void put_text(const char *dir, const char *rel, const char *text)
{
    put(dir, rel, text, strlen(text));
}

/* values of chunk c of array i: varied text lengths, some NaT */
static void chunk_values(unsigned i, unsigned c, unsigned len, int64_t *v, unsigned salt)
{
    for (unsigned k = 0; k < len; k++) {
        uint64_t x = (uint64_t)(i * 7919u + c * 104729u + k * 31u + salt) * 0x9E3779B97F4A7C15ull;
        v[k] = k % 17 == 5 ? INT64_MIN : (int64_t)(x >> (40 - (k % 5) * 7)) - (int64_t)(x >> 50);
    }
}

enum { SMALL_LEN = 20, SMALL_CHUNK = 10 };

/* a v2 store of n arrays a000... (SMALL_LEN values, chunks of SMALL_CHUNK;
 * every third array's last chunk missing), consolidated or not */
static void make_v2(const char *dir, unsigned n, int consolidated)
{
    mkdir(dir, 0755);
    put_text(dir, ".zgroup", "{\"zarr_format\":2}");
    char zarray[256], name[64], *cons = malloc(512 * (size_t)n + 256);
    snprintf(zarray, sizeof zarray,
             "{\"zarr_format\":2,\"shape\":[%d],\"chunks\":[%d],\"dtype\":\"<m8[s]\","
             "\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}",
             SMALL_LEN, SMALL_CHUNK);
    size_t off = (size_t)sprintf(cons, "{\"zarr_consolidated_format\":1,\"metadata\":{"
                                       "\".zgroup\":{\"zarr_format\":2}");
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, "a%03u/.zarray", i);
        put_text(dir, name, zarray);
        snprintf(name, sizeof name, "a%03u/.zattrs", i);
        put_text(dir, name, "{}");
        off += (size_t)sprintf(cons + off, ",\"a%03u/.zarray\":%s,\"a%03u/.zattrs\":{}", i, zarray, i);
        for (unsigned c = 0; c < SMALL_LEN / SMALL_CHUNK; c++) {
            if (i % 3 == 0 && c + 1 == SMALL_LEN / SMALL_CHUNK)
                continue;
            int64_t v[SMALL_CHUNK];
            chunk_values(i, c, SMALL_CHUNK, v, 0);
            snprintf(name, sizeof name, "a%03u/%u", i, c);
            put(dir, name, v, sizeof v);
        }
    }
    sprintf(cons + off, "}}");
    if (consolidated)
        put_text(dir, ".zmetadata", cons);
    free(cons);
}

/* a v3 store of n arrays with inline consolidated metadata */
static void make_v3(const char *dir, unsigned n)
{
    mkdir(dir, 0755);
    char arr[1024], name[64], *root = malloc(1200 * (size_t)n + 256);
    snprintf(arr, sizeof arr,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%d],\"data_type\":{\"name\":"
             "\"numpy.timedelta64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":1}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"attributes\":{}}", SMALL_LEN, SMALL_CHUNK);
    size_t off = (size_t)sprintf(root, "{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{},"
                                       "\"consolidated_metadata\":{\"kind\":\"inline\",\"metadata\":{");
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, "g/a%03u/zarr.json", i);
        put_text(dir, name, arr);
        off += (size_t)sprintf(root + off, "%s\"g/a%03u\":%s", i ? "," : "", i, arr);
        for (unsigned c = 0; c < SMALL_LEN / SMALL_CHUNK; c++) {
            int64_t v[SMALL_CHUNK];
            chunk_values(i, c, SMALL_CHUNK, v, 1);
            snprintf(name, sizeof name, "g/a%03u/c/%u", i, c);
            put(dir, name, v, sizeof v);
        }
    }
    off += (size_t)sprintf(root + off, ",\"g\":{\"zarr_format\":3,\"node_type\":\"group\","
                                       "\"attributes\":{}}}}}");
    put_text(dir, "zarr.json", root);
    put_text(dir, "g/zarr.json", "{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{}}");
    free(root);
}

enum { BIG_LEN = 4096, BIG_CHUNK = 16 };

/* a root v2 array of BIG_LEN values in chunks of BIG_CHUNK (every fifth missing) */
static void make_big(const char *dir, unsigned salt, unsigned only_chunk)
{
    mkdir(dir, 0755);
    char zarray[256], name[64];
    snprintf(zarray, sizeof zarray,
             "{\"zarr_format\":2,\"shape\":[%d],\"chunks\":[%d],\"dtype\":\"<m8[ms]\","
             "\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}",
             BIG_LEN, BIG_CHUNK);
    if (only_chunk == UINT32_MAX) /* (a rewrite of one chunk leaves the metadata alone) */
        put_text(dir, ".zarray", zarray);
    for (unsigned c = 0; c < BIG_LEN / BIG_CHUNK; c++) {
        if (c % 5 == 3 || (only_chunk != UINT32_MAX && c != only_chunk))
            continue;
        int64_t v[BIG_CHUNK];
        chunk_values(1000, c, BIG_CHUNK, v, salt);
        snprintf(name, sizeof name, "%u", c);
        put(dir, name, v, sizeof v);
    }
}

enum { SH_LEN = 4096, SH_SHARD = 64, SH_INNER = 16 };

/* a root v3 array of SH_LEN values in shards of SH_SHARD, inner chunks of
 * SH_INNER (index at the end, no checksum); every seventh shard missing,
 * every third inner chunk empty */
static void make_sharded(const char *dir)
{
    mkdir(dir, 0755);
    char meta[1024], name[64];
    snprintf(meta, sizeof meta,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%d],\"data_type\":{\"name\":"
             "\"numpy.timedelta64\",\"configuration\":{\"unit\":\"us\",\"scale_factor\":1}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
             "\"chunk_shape\":[%d],\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"index_location\":\"end\"}}],\"attributes\":{}}",
             SH_LEN, SH_SHARD, SH_INNER);
    put_text(dir, "zarr.json", meta);
    enum { N = SH_SHARD / SH_INNER };
    for (unsigned sh = 0; sh < SH_LEN / SH_SHARD; sh++) {
        if (sh % 7 == 4)
            continue;
        uint8_t buf[SH_SHARD * 8 + N * 16];
        uint64_t idx[2 * N], off = 0;
        for (unsigned i = 0; i < N; i++) {
            if ((sh + i) % 3 == 1) {
                idx[2 * i] = idx[2 * i + 1] = UINT64_MAX;
                continue;
            }
            int64_t v[SH_INNER];
            chunk_values(2000 + sh, i, SH_INNER, v, 3);
            memcpy(buf + off, v, sizeof v);
            idx[2 * i] = off;
            idx[2 * i + 1] = sizeof v;
            off += sizeof v;
        }
        memcpy(buf + off, idx, sizeof idx);
        snprintf(name, sizeof name, "c/%u", sh);
        put(dir, name, buf, (size_t)off + sizeof idx);
    }
}

enum { BIGSH_LEN = 1100000, BIGSH_INNER = 110000 };

/* a root v3 array held by one shard of over 8 MiB (ZF_SHARD_WHOLE_MAX: too
 * large to be read whole) of ten inner chunks */
static void make_big_shard(const char *dir)
{
    mkdir(dir, 0755);
    char meta[1024];
    snprintf(meta, sizeof meta,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%d],\"data_type\":{\"name\":"
             "\"numpy.timedelta64\",\"configuration\":{\"unit\":\"ns\",\"scale_factor\":1}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
             "\"chunk_shape\":[%d],\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"index_location\":\"start\"}}],\"attributes\":{}}",
             BIGSH_LEN, BIGSH_LEN, BIGSH_INNER);
    put_text(dir, "zarr.json", meta);
    enum { N = BIGSH_LEN / BIGSH_INNER };
    size_t bytes = (size_t)BIGSH_LEN * 8 + N * 16;
    uint8_t *buf = malloc(bytes);
    uint64_t idx[2 * N];
    for (unsigned i = 0; i < N; i++) {
        idx[2 * i] = N * 16 + (uint64_t)i * BIGSH_INNER * 8;
        idx[2 * i + 1] = BIGSH_INNER * 8;
        chunk_values(3000, i, BIGSH_INNER, (int64_t *)(buf + idx[2 * i]), 5);
    }
    memcpy(buf, idx, sizeof idx);
    put(dir, "c/0", buf, bytes);
    free(buf);
}

/* ------------------------------------------------------------ helpers */

static zf_layout_opts opts(const char *index_dir)
{
    zf_layout_opts o;
    memset(&o, 0, sizeof o);
    o.format = ZF_FORMAT_PANDAS;
    o.nat = "NaT";
    o.threads = 2; /* the machine's cores, not the store's connections */
    o.index_dir = index_dir;
    return o;
}

/* the first array node of t (its .txt), or NULL */
static const zf_node *first_file(const zf_tree *t, const char *ext)
{
    for (uint64_t i = 0; i < zf_tree_count(t); i++) {
        const zf_node *n = zf_tree_node_at(t, i);
        size_t len = strlen(n->name), el = strlen(ext);
        if (!n->is_dir && len > el && !strcmp(n->name + len - el, ext))
            return n;
    }
    return NULL;
}

/* the whole text of view v of l (malloc'd), its size in *n; NULL on error */
static char *whole(zf_layout *l, zf_view v, uint64_t *n)
{
    if (zf_layout_size(l, v, n) != ZF_OK)
        return NULL;
    char *buf = malloc(*n + 1);
    size_t got = 0;
    if (zf_layout_read(l, v, 0, buf, (size_t)*n, &got) != ZF_OK || got != *n) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* sorted "name" list of every node of t, joined, to compare trees */
static void names(const zf_tree *t, const zf_node *d, char *out, size_t cap)
{
    for (size_t i = 0; i < d->nchildren; i++) {
        const zf_node *c = zf_tree_child(t, d, i);
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s;", c->name, c->is_dir ? "/" : "");
        if (c->is_dir)
            names(t, c, out, cap);
    }
}

/* do the remote and local trees show the same names, sizes and bytes? */
static void same_as_local(zf_tree *rt, zf_tree *lt, const char *what)
{
    static char a[1 << 16], b[1 << 16];
    a[0] = b[0] = '\0';
    names(rt, zf_tree_node(rt, ZF_ROOT_INO), a, sizeof a);
    names(lt, zf_tree_node(lt, ZF_ROOT_INO), b, sizeof b);
    CHECK(!strcmp(a, b), "%s: the same names as the local tree", what);
    CHECK(zf_tree_count(rt) == zf_tree_count(lt), "%s: %llu nodes, local %llu", what,
          (unsigned long long)zf_tree_count(rt), (unsigned long long)zf_tree_count(lt));
}

/* ----------------------------------------------------------------- tests */

/* the consolidated walk of a 100-array store costs a constant number of
 * requests, whether or not the store can be listed */
static void test_walk_consolidated(zf_cache *cache)
{
    char v2[512], v3[512];
    snprintf(v2, sizeof v2, "%s/v2c", tmp);
    snprintf(v3, sizeof v3, "%s/v3c", tmp);
    make_v2(v2, 100, 1);
    make_v3(v3, 100);
    const char *dirs[2] = {v2, v3};
    for (int d = 0; d < 2; d++)
        for (int can_list = 0; can_list < 2; can_list++) {
            zf_store *inner;
            CHECK(zf_store_open_local(dirs[d], 0, &inner) == ZF_OK, "open %s", dirs[d]);
            fake f;
            zf_store *s = fake_open(&f, inner, can_list, 16, 0);
            zf_layout_opts o = opts(NULL);
            zf_tree *rt = NULL, *lt = NULL;
            CHECK(zf_tree_build(s, cache, &o, &rt) == ZF_OK, "remote walk of %s", dirs[d]);
            CHECK(zf_tree_build(inner, cache, &o, &lt) == ZF_OK, "local walk of %s", dirs[d]);
            char what[64];
            snprintf(what, sizeof what, "v%d consolidated, %s", d ? 3 : 2, can_list ? "S3" : "HTTP");
            if (rt && lt)
                same_as_local(rt, lt, what);
            CHECK(rt && zf_tree_count(rt) == (d ? 302u : 301u), "%s: 100 arrays shown", what);
            CHECK(requests(&f) <= 2, "%s: %ld requests for 100 arrays (reads %ld, stamps %ld, "
                  "lists %ld)", what, requests(&f), (long)f.reads, (long)f.stamps, (long)f.lists);
            CHECK(f.lists == 0 && f.chunk_reads == 0, "%s: no listing, no chunk", what);
            printf("walk, %s: %ld requests for 100 arrays\n", what, requests(&f));
            /* a re-check: one HEAD of the consolidated document, nothing changed */
            reset(&f);
            CHECK(rt && zf_tree_unchanged(rt) == 1, "%s: re-check finds no change", what);
            CHECK(requests(&f) == 1 && f.stamps == 1, "%s: the re-check is one HEAD (%ld requests)",
                  what, requests(&f));
            zf_tree_free(rt);
            zf_tree_free(lt);
            zf_store_close(s);
            zf_store_close(inner);
        }
}

/* without consolidated metadata: plain HTTP shows what the root metadata
 * says; S3 lists, with no stamp request for a document that is read */
static void test_walk_plain(zf_cache *cache)
{
    char v2[512];
    snprintf(v2, sizeof v2, "%s/v2p", tmp);
    make_v2(v2, 30, 0);
    zf_store *inner;
    CHECK(zf_store_open_local(v2, 0, &inner) == ZF_OK, "open");
    zf_layout_opts o = opts(NULL);
    fake f;
    zf_store *s = fake_open(&f, inner, 0, 16, 0);
    zf_tree *t = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "HTTP, a root group without consolidation");
    CHECK(t && zf_tree_count(t) == 1, "only the root is shown");
    CHECK(requests(&f) <= 4, "%ld requests", requests(&f));
    zf_tree_free(t);
    zf_store_close(s);

    s = fake_open(&f, inner, 1, 16, 0);
    zf_tree *lt = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "S3 listing walk");
    CHECK(zf_tree_build(inner, cache, &o, &lt) == ZF_OK, "local walk");
    if (t && lt)
        same_as_local(t, lt, "v2, S3, listed");
    CHECK(f.stamps <= 1, "S3: %ld stamp requests (reads return their stamps)", (long)f.stamps);
    CHECK(f.lists == 1, "S3: one listing (%ld)", (long)f.lists);
    CHECK(f.chunk_reads == 0, "no chunk read");
    printf("walk, v2 unconsolidated, S3: %ld requests for 30 arrays (%ld stamps)\n", requests(&f),
           (long)f.stamps);
    zf_tree_free(t);
    zf_store_close(s);
    s = fake_open(&f, inner, 1, 16, 0); /* 403 on one node's metadata: that node is left out */
    f.deny = "a005/.zarray";
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "S3 walk with a 403");
    CHECK(t && zf_tree_count(t) == zf_tree_count(lt) - 3, "the denied array only is left out");
    CHECK(t && !zf_tree_lookup(t, ZF_ROOT_INO, "a005.txt") && zf_tree_lookup(t, ZF_ROOT_INO, "a006.txt"),
          "a005 left out, a006 shown");
    zf_tree_free(t);
    zf_tree_free(lt);
    zf_store_close(s);
    zf_store_close(inner);
}

/* .info of a store that cannot be listed fetches no chunk and says unknown */
static void test_info(zf_cache *cache)
{
    char v2[512];
    snprintf(v2, sizeof v2, "%s/v2c", tmp);
    zf_store *inner;
    CHECK(zf_store_open_local(v2, 0, &inner) == ZF_OK, "open");
    zf_layout_opts o = opts(NULL);
    for (int can_list = 0; can_list < 2; can_list++) {
        fake f;
        zf_store *s = fake_open(&f, inner, can_list, 16, 0);
        zf_tree *t = NULL;
        CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "walk");
        const zf_node *info = t ? first_file(t, ".info") : NULL;
        CHECK(info != NULL, "an .info file");
        if (!info)
            continue;
        reset(&f);
        uint64_t n;
        char *text = whole(info->layout, ZF_VIEW_INFO, &n);
        CHECK(text != NULL, ".info reads");
        if (text) {
            text[n] = '\0';
            CHECK(strstr(text, can_list ? "chunks_present: 1 of 2\n" : "chunks_present: unknown") != NULL,
                  "chunks_present (%s): %s", can_list ? "S3" : "HTTP", text);
        }
        CHECK(f.chunk_reads == 0 && f.ranges == 0, ".info fetched no chunk (%ld)", (long)f.chunk_reads);
        free(text);
        zf_tree_free(t);
        zf_store_close(s);
    }
    zf_store_close(inner);
}

/* the size pass keeps many requests in flight; sizes and bytes as local;
 * a second mount with the persisted index reads no chunk */
static void test_size(int sharded)
{
    char big[512], idx[512];
    snprintf(big, sizeof big, "%s/%s.zarr", tmp, sharded ? "sharded" : "big");
    if (sharded)
        make_sharded(big);
    else
        make_big(big, 0, UINT32_MAX);
    zf_store *inner;
    CHECK(zf_store_open_local(big, 0, &inner) == ZF_OK, "open");
    zf_layout_opts lo = opts(NULL);
    zf_cache *lc = zf_cache_new(64 << 20);
    zf_tree *lt = NULL;
    CHECK(zf_tree_build(inner, lc, &lo, &lt) == ZF_OK, "local walk");
    const zf_node *ln = lt ? first_file(lt, ".txt") : NULL;
    const zf_node *lcsv = lt ? first_file(lt, ".csv") : NULL;
    uint64_t ltn = 0, lcn = 0;
    char *ltxt = ln ? whole(ln->layout, ZF_VIEW_TXT, &ltn) : NULL;
    char *lcsvt = lcsv ? whole(lcsv->layout, ZF_VIEW_CSV, &lcn) : NULL;
    CHECK(ltxt && lcsvt, "local text");
    for (int can_list = 0; can_list < 2; can_list++) {
        char kind[32];
        snprintf(kind, sizeof kind, "%s%s", can_list ? "S3" : "HTTP", sharded ? ", sharded" : "");
        snprintf(idx, sizeof idx, "%s/idx-%s-%d", tmp, kind, sharded);
        zf_layout_opts o = opts(idx);
        for (int mount = 0; mount < 2; mount++) {
            zf_cache *cache = zf_cache_new(64 << 20);
            fake f;
            zf_store *s = fake_open(&f, inner, can_list, 16, 3000);
            zf_tree *t = NULL;
            CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "walk");
            const zf_node *n = t ? first_file(t, ".txt") : NULL;
            const zf_node *csv = t ? first_file(t, ".csv") : NULL;
            CHECK(n && csv, "a root array");
            if (!n || !csv)
                continue;
            reset(&f);
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            uint64_t size = 0, csize = 0;
            CHECK(zf_layout_size(n->layout, ZF_VIEW_TXT, &size) == ZF_OK, "size");
            CHECK(zf_layout_size(csv->layout, ZF_VIEW_CSV, &csize) == ZF_OK, "csv size");
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
            CHECK(size == ltn && csize == lcn, "%s mount %d: sizes %llu/%llu, local %llu/%llu", kind,
                  mount + 1, (unsigned long long)size, (unsigned long long)csize,
                  (unsigned long long)ltn, (unsigned long long)lcn);
            printf("size pass, %s, mount %d: %.1f ms, %ld chunk reads, %ld requests, at most %d in "
                   "flight (3 ms each)\n", kind, mount + 1, ms, (long)f.chunk_reads, requests(&f),
                   (int)f.max_inflight);
            if (mount == 0) {
                CHECK(f.max_inflight >= 8, "%s: %d requests in flight, want >= 8", kind,
                      (int)f.max_inflight);
                long most = sharded ? SH_LEN / SH_SHARD : 0; /* a HEAD per shard, none per chunk */
                CHECK(f.stamps <= most, "%s: %ld stamp requests, at most %ld", kind, (long)f.stamps,
                      most);
            } else {
                CHECK(f.chunk_reads == 0 && f.ranges == 0 && f.stamps == 0,
                      "%s: the second mount sizes from the persisted index with no chunk request "
                      "(%ld reads, %ld stamps)", kind, (long)f.chunk_reads, (long)f.stamps);
            }
            if (mount == 1) { /* cat: sequential reads keep the store's requests in flight */
                CHECK(zf_cache_start_prefetch(cache, 1) == ZF_OK, "prefetch starts");
                reset(&f);
                zf_cursor cur = {0, UINT64_MAX};
                char piece[4096];
                uint64_t pos = 0;
                size_t got = 0;
                int ok = 1;
                while (ok && pos < size) {
                    ok = zf_layout_read_from(n->layout, ZF_VIEW_TXT, pos, piece, sizeof piece, &got,
                                             &cur) == ZF_OK && got > 0 &&
                         !memcmp(piece, ltxt + pos, got);
                    pos += got;
                }
                CHECK(ok && pos == ltn, "%s: cat reads the local bytes", kind);
                CHECK(f.max_inflight >= 8, "%s: cat keeps %d requests in flight, want >= 8", kind,
                      (int)f.max_inflight);
                printf("cat, %s: %ld requests, at most %d in flight\n", kind, requests(&f),
                       (int)f.max_inflight);
            }
            uint64_t got;
            char *txt = whole(n->layout, ZF_VIEW_TXT, &got), *ctext = whole(csv->layout, ZF_VIEW_CSV, &got);
            CHECK(txt && ltxt && !memcmp(txt, ltxt, (size_t)ltn), "%s mount %d: .txt bytes as local",
                  kind, mount + 1);
            CHECK(ctext && lcsvt && !memcmp(ctext, lcsvt, (size_t)lcn), "%s mount %d: .csv bytes as "
                  "local", kind, mount + 1);
            if (mount == 1 && !sharded) /* the snapshot from the index: absent chunks are not asked for */
                CHECK(f.chunk_reads <= 2 * (BIG_LEN / BIG_CHUNK) * 4 / 5 + 2,
                      "%s: %ld chunk reads for the text", kind, (long)f.chunk_reads);
            free(txt);
            free(ctext);
            zf_tree_free(t);
            zf_store_close(s);
            zf_cache_free(cache);
        }
    }
    free(ltxt);
    free(lcsvt);
    zf_tree_free(lt);
    zf_cache_free(lc);
    zf_store_close(inner);
}

/* a shard too large to read whole is read by spans of neighbouring inner
 * chunks (fewer requests than inner chunks): same size and bytes */
static void test_large_shard(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bigshard.zarr", tmp);
    make_big_shard(dir);
    zf_store *inner;
    CHECK(zf_store_open_local(dir, 0, &inner) == ZF_OK, "open");
    zf_layout_opts o = opts(NULL);
    zf_cache *cache = zf_cache_new(256 << 20);
    fake f;
    zf_store *s = fake_open(&f, inner, 0, 16, 0);
    zf_tree *t = NULL, *lt = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "walk");
    CHECK(zf_tree_build(inner, cache, &o, &lt) == ZF_OK, "local walk");
    const zf_node *n = t ? first_file(t, ".txt") : NULL, *ln = lt ? first_file(lt, ".txt") : NULL;
    uint64_t rn = 0, lnn = 0;
    char *rt = n ? whole(n->layout, ZF_VIEW_TXT, &rn) : NULL;
    char *ltx = ln ? whole(ln->layout, ZF_VIEW_TXT, &lnn) : NULL;
    CHECK(rt && ltx && rn == lnn && !memcmp(rt, ltx, (size_t)rn),
          "a large shard: %llu bytes, local %llu, same bytes", (unsigned long long)rn,
          (unsigned long long)lnn);
    /* ten inner chunks of 880000 bytes: the index, then nine in one span (at
     * most 8 MiB) and the last: three ranged reads, not eleven */
    CHECK(f.ranges <= 3, "coalesced: %ld ranged reads for 10 inner chunks", (long)f.ranges);
    printf("large shard: %ld reads, %ld ranges, %ld stamps\n", (long)f.reads, (long)f.ranges,
           (long)f.stamps);
    free(rt);
    free(ltx);
    zf_tree_free(t);
    zf_tree_free(lt);
    zf_store_close(s);
    zf_cache_free(cache);
    zf_store_close(inner);
}

/* readers of the inner chunks of the large shard, taking the next one in turn */
typedef struct shard_readers {
    zf_array *a;
    atomic_uint next;
    atomic_int wrong;
} shard_readers;

/* read inner chunks until none is left, each compared with what was written */
static void *read_inner_chunks(void *arg)
{
    shard_readers *r = arg;
    int64_t *want = malloc(BIGSH_INNER * sizeof *want);
    unsigned i;
    while (want && (i = atomic_fetch_add(&r->next, 1)) < BIGSH_LEN / BIGSH_INNER) {
        zf_chunk *c = NULL;
        chunk_values(3000, i, BIGSH_INNER, want, 5);
        if (zf_array_get_chunk(r->a, i, &c) || !c->values || c->n != BIGSH_INNER ||
            memcmp(c->values, want, BIGSH_INNER * sizeof *want))
            atomic_fetch_add(&r->wrong, 1);
        zf_array_put_chunk(r->a, c);
    }
    free(want);
    return NULL;
}

/* eight readers of the large shard's neighbouring inner chunks at once share
 * its spans (single flight): fewer ranged reads than inner chunks, every
 * value exact (run after test_large_shard, which writes the store) */
static void test_large_shard_threads(void)
{
    char dir[512], err[256] = "";
    snprintf(dir, sizeof dir, "%s/bigshard.zarr", tmp);
    zf_store *inner;
    zf_store_buf b = {NULL, 0};
    size_t n = 0;
    zf_node_kind kind;
    zf_meta m;
    memset(&m, 0, sizeof m);
    int ok = zf_store_open_local(dir, 0, &inner) == ZF_OK &&
             zf_store_read(inner, "zarr.json", 1 << 20, &b, &n, NULL, err, sizeof err) == ZF_OK &&
             zf_meta_parse_v3((const char *)b.p, n, &kind, &m, err, sizeof err) == ZF_OK;
    free(b.p);
    CHECK(ok, "the large shard's metadata: %s", err);
    if (!ok)
        return;
    fake f;
    zf_store *s = fake_open(&f, inner, 0, 16, 2000);
    zf_cache *cache = zf_cache_new(256 << 20);
    shard_readers r = {zf_array_new(s, "", &m, cache), 0, 0};
    pthread_t th[8];
    for (unsigned i = 0; r.a && i < 8; i++)
        pthread_create(&th[i], NULL, read_inner_chunks, &r);
    for (unsigned i = 0; r.a && i < 8; i++)
        pthread_join(th[i], NULL);
    CHECK(r.a && r.wrong == 0, "%d inner chunks read wrong", (int)r.wrong);
    CHECK(f.ranges < BIGSH_LEN / BIGSH_INNER, "%ld ranged reads for 10 inner chunks", (long)f.ranges);
    printf("large shard, 8 readers: %ld reads, %ld ranges, %ld stamps\n", (long)f.reads,
           (long)f.ranges, (long)f.stamps);
    zf_array_free(r.a);
    zf_cache_free(cache);
    zf_store_close(s);
    zf_store_close(inner);
}

/* plain HTTP: a chunk rewritten behind an index keyed by the metadata is
 * caught when it is read (lazily), never shown with the old offsets */
static void test_stale_chunk(void)
{
    char dir[512], idx[512];
    snprintf(dir, sizeof dir, "%s/stale.zarr", tmp);
    snprintf(idx, sizeof idx, "%s/idx-stale", tmp);
    make_big(dir, 0, UINT32_MAX);
    zf_store *inner;
    CHECK(zf_store_open_local(dir, 0, &inner) == ZF_OK, "open");
    zf_layout_opts o = opts(idx);
    for (int mount = 0; mount < 2; mount++) {
        if (mount == 1) {
            sleep(1); /* a new mtime: a new ETag */
            make_big(dir, 7, 10); /* chunk 10 rewritten, metadata unchanged */
        }
        zf_cache *cache = zf_cache_new(64 << 20);
        fake f;
        zf_store *s = fake_open(&f, inner, 0, 16, 0);
        zf_tree *t = NULL;
        CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "walk");
        const zf_node *n = t ? first_file(t, ".txt") : NULL;
        uint64_t size = 0;
        CHECK(n && zf_layout_size(n->layout, ZF_VIEW_TXT, &size) == ZF_OK, "size");
        if (mount == 1 && n) {
            CHECK(f.chunk_reads == 0, "sized from the index (%ld chunk reads)", (long)f.chunk_reads);
            char buf[64];
            size_t got;
            CHECK(zf_layout_read(n->layout, ZF_VIEW_TXT, 0, buf, sizeof buf, &got) == ZF_OK,
                  "an unchanged chunk reads");
            uint64_t got_all;
            char *all = whole(n->layout, ZF_VIEW_TXT, &got_all);
            CHECK(all == NULL, "the rewritten chunk fails instead of showing new values at old offsets");
            free(all);
        }
        zf_tree_free(t);
        zf_store_close(s);
        zf_cache_free(cache);
    }
    zf_store_close(inner);
}

/* remove the test directory */
static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "%s/zf-remote-core.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    zf_cache *cache = zf_cache_new(64 << 20);
    test_walk_consolidated(cache);
    test_walk_plain(cache);
    test_info(cache);
    zf_cache_free(cache);
    test_size(0);
    test_size(1);
    test_stale_chunk();
    test_large_shard();
    test_large_shard_threads();
    cleanup();
    return check_summary("test_remote_core");
}
