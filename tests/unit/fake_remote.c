/* fake_remote.c - a fake remote store for the unit tests above the store
 * layer (a zf_store_ops table over a local directory) that can refuse
 * listing (plain HTTP) or list (S3), adds latency, counts requests by kind
 * and what is in flight, gives ETag-style stamps (no dev/ino/ctime), and
 * injects a failure into chosen requests; and the stores on disk the tests
 * read through it. */
#include "fake_remote.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"

/* ------------------------------------------------------- the fake store */

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

/* does f's fault hit a request of kind op for key?  (the reason into err) */
static int hit(fake *f, unsigned op, const char *key, char *err, size_t errcap)
{
    const fake_fault *x = &f->fault;
    if (!(x->ops & op) || !strstr(key, x->key ? x->key : ""))
        return 0;
    atomic_fetch_add(&f->faulted, 1);
    if (err && errcap)
        snprintf(err, errcap, "%s", x->why ? x->why : "HTTP 503 after 8 attempts");
    return 1;
}

/* the result of a request of kind op for key that answered rc with stamp
 * st: the fault's instead (st cleared) when it hits the request */
static int answer(fake *f, unsigned op, const char *key, int rc, zf_stamp *st, char *err,
                  size_t errcap)
{
    if (!hit(f, op, key, err, errcap))
        return rc;
    memset(st, 0, sizeof *st);
    return f->fault.rc;
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
    return answer(f, FAKE_READ, key, rc, st, err, errcap);
}

static int fake_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    fake *f = F(s);
    atomic_fetch_add(&f->ranges, (long)n);
    request_begin(f);
    int rc = zf_store_read_many(f->inner, reqs, n);
    request_end(f);
    for (size_t i = 0; i < n; i++)
        if (hit(f, FAKE_RANGE, reqs[i].key, reqs[i].err, reqs[i].errcap))
            rc = reqs[i].rc = f->fault.rc;
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
    return answer(f, FAKE_STAMP, key, rc, st, err, errcap);
}

/* a listing in progress: where its entries go, and where a fault cuts it */
typedef struct list_ctx {
    zf_store_list_fn fn;
    void *ctx;
    long cut;         /* entries handed on before the fault (-1: none) */
    long n;
} list_ctx;

#define CUT 1 /* an entry callback's value: the fault cuts the listing here */

static int remote_entry(void *arg, const zf_store_entry *e)
{
    list_ctx *c = arg;
    if (c->cut >= 0 && c->n >= c->cut)
        return CUT;
    c->n++;
    zf_store_entry r = *e;
    remote_stamp(&r.stamp);
    r.alias = 0;
    return c->fn(c->ctx, &r);
}

/* a listing through f's fault: cut after fault.after entries (a page that
 * fails after the earlier ones came), or at its end */
static int fake_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                     void *ctx, char *err, size_t errcap)
{
    fake *f = F(s);
    if (!f->can_list) {
        atomic_fetch_add(&f->refused, 1);
        return ZF_EUNSUPPORTED;
    }
    atomic_fetch_add(&f->lists, 1);
    request_begin(f);
    int faulted = hit(f, FAKE_LIST, prefix, NULL, 0);
    list_ctx c = {fn, ctx, faulted ? (long)f->fault.after : -1, 0};
    int rc = zf_store_list(f->inner, prefix, flags & ~ZF_LIST_KINDS, remote_entry, &c, err, errcap);
    request_end(f);
    if (faulted && (rc == CUT || rc == ZF_OK || rc == ZF_ENOTFOUND)) {
        hit(f, FAKE_LIST, prefix, err, errcap);
        rc = f->fault.rc;
    }
    return rc;
}

static const zf_store_ops fake_ops = {.close = fake_close, .read = fake_read, .read_many = fake_read_many,
                                      .stamp = fake_stamp, .list = fake_list};

/* a remote store over inner, named by a URL ending as its directory does
 * (a root array's files are named after it); the caller frees both */
zf_store *fake_open(fake *f, zf_store *inner, int can_list, unsigned parallel,
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

long requests(fake *f)
{
    return f->reads + f->ranges + f->stamps + f->lists;
}

void reset(fake *f)
{
    f->reads = f->chunk_reads = f->ranges = f->stamps = f->lists = f->refused = f->faulted = 0;
    f->max_inflight = 0;
}

/* ------------------------------------------------------ stores on disk */

void put(const char *dir, const char *rel, const void *data, size_t n)
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

void put_text(const char *dir, const char *rel, const char *text)
{
    put(dir, rel, text, strlen(text));
}

/* values of chunk c of array i: varied text lengths, some NaT */
void chunk_values(unsigned i, unsigned c, unsigned len, int64_t *v, unsigned salt)
{
    for (unsigned k = 0; k < len; k++) {
        uint64_t x = (uint64_t)(i * 7919u + c * 104729u + k * 31u + salt) * 0x9E3779B97F4A7C15ull;
        v[k] = k % 17 == 5 ? INT64_MIN : (int64_t)(x >> (40 - (k % 5) * 7)) - (int64_t)(x >> 50);
    }
}


/* a v2 store of n arrays a000... (SMALL_LEN values, chunks of SMALL_CHUNK;
 * every third array's last chunk missing), consolidated or not */
void make_v2(const char *dir, unsigned n, int consolidated)
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
void make_v3(const char *dir, unsigned n)
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


/* a root v2 array of BIG_LEN values in chunks of BIG_CHUNK (every fifth missing) */
void make_big(const char *dir, unsigned salt, unsigned only_chunk)
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


/* the zarr.json of a root 1-D v3 array of len timedelta64[unit] values in
 * shards of shard, inner chunks of inner (raw bytes), its index at `where` */
static void put_sharded_meta(const char *dir, const char *unit, unsigned len, unsigned shard,
                             unsigned inner, const char *where)
{
    char meta[1024];
    snprintf(meta, sizeof meta,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%u],\"data_type\":{\"name\":"
             "\"numpy.timedelta64\",\"configuration\":{\"unit\":\"%s\",\"scale_factor\":1}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%u]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
             "\"chunk_shape\":[%u],\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"index_location\":\"%s\"}}],\"attributes\":{}}",
             len, unit, shard, inner, where);
    put_text(dir, "zarr.json", meta);
}

/* a root v3 array of SH_LEN values in shards of SH_SHARD, inner chunks of
 * SH_INNER (index at the end, no checksum); every seventh shard missing,
 * every third inner chunk empty */
void make_sharded(const char *dir)
{
    mkdir(dir, 0755);
    char name[64];
    put_sharded_meta(dir, "us", SH_LEN, SH_SHARD, SH_INNER, "end");
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

/* a root v3 array held by one shard of over 8 MiB (ZF_SHARD_WHOLE_MAX: too
 * large to be read whole) of ten inner chunks */
void make_big_shard(const char *dir)
{
    mkdir(dir, 0755);
    put_sharded_meta(dir, "ns", BIGSH_LEN, BIGSH_LEN, BIGSH_INNER, "start");
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

zf_layout_opts opts(const char *index_dir)
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
const zf_node *first_file(const zf_tree *t, const char *ext)
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
char *whole(zf_layout *l, zf_view v, uint64_t *n)
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
void names(const zf_tree *t, const zf_node *d, char *out, size_t cap)
{
    for (size_t i = 0; i < d->nchildren; i++) {
        const zf_node *c = zf_tree_child(t, d, i);
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s;", c->name, c->is_dir ? "/" : "");
        if (c->is_dir)
            names(t, c, out, cap);
    }
}

int test_dir_make(char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "%s/%s.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    if (mkdtemp(dir))
        return 0;
    perror("mkdtemp");
    return -1;
}

void test_dir_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}
