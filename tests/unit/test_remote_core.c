/* test_remote_core.c - everything above the store layer on a remote store
 * (the fake remote store of fake_remote.h): the tree walk, the array
 * snapshot, the size pass, .info and the persisted index, every size and
 * byte compared with the local store. */
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
#include "fake_remote.h"
#include "tree/tree.h"
#include "zarr/meta.h"

static char tmp[256];

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
            CHECK(rt && zf_tree_unchanged(rt, 1, NULL, 0) == 1, "%s: re-check finds no change", what);
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
    CHECK(requests(&f) <= 5, "%ld requests (the root .zattrs: its coordinates)", requests(&f));
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
    /* 403 on one node's metadata: that node is unknown (not shown), and its
     * group says the store could not tell all of it */
    s = fake_open(&f, inner, 1, 16, 0);
    f.fault = (fake_fault){FAKE_READ, "a005/.zarray", ZF_EIO, "HTTP 403 (AccessDenied)", 0};
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "S3 walk with a 403");
    CHECK(t && zf_tree_count(t) == zf_tree_count(lt) - 3, "the denied array only is not shown");
    CHECK(t && !zf_tree_lookup(t, ZF_ROOT_INO, "a005.txt") && zf_tree_lookup(t, ZF_ROOT_INO, "a006.txt"),
          "a005 not shown, a006 shown");
    char why[512] = "";
    CHECK(t && zf_tree_node(t, ZF_ROOT_INO)->incomplete && zf_tree_incomplete(t, why, sizeof why) &&
              strstr(why, "a005") && strstr(why, "403"),
          "the root is incomplete, naming a005 and the 403: %s", why);
    zf_tree_free(t);
    zf_tree_free(lt);
    zf_store_close(s);
    zf_store_close(inner);
}

/* .info of a remote array not yet sized asks the store nothing (no chunk, no
 * listing: it never waits on a stalled server) and says unknown; once the
 * array is sized, the next open of .info (zf_layout_info_now) counts the
 * chunks from what sizing learned */
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
            CHECK(strstr(text, "chunks_present: unknown (2 expected") != NULL,
                  "chunks_present before sizing (%s): %s", can_list ? "S3" : "HTTP", text);
        }
        CHECK(f.chunk_reads == 0 && f.ranges == 0 && f.lists == 0,
              ".info asked the store nothing (%ld chunks, %ld listings)", (long)f.chunk_reads,
              (long)f.lists);
        free(text);
        uint64_t size;
        CHECK(zf_layout_size(info->layout, ZF_VIEW_TXT, &size) == ZF_OK, "sized");
        char *now = NULL;
        size_t len = 0;
        CHECK(zf_layout_info_now(info->layout, &now, &len) == ZF_OK && now && strlen(now) == len,
              "built again at an open");
        free(now);
        text = whole(info->layout, ZF_VIEW_INFO, &n);
        if (text) {
            text[n] = '\0';
            CHECK(strstr(text, "chunks_present: 1 of 2\n") != NULL,
                  "chunks_present once sized (%s): %s", can_list ? "S3" : "HTTP", text);
        }
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

int main(void)
{
    if (test_dir_make(tmp, sizeof tmp, "zf-remote-core"))
        return 1;
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
    test_dir_remove(tmp);
    return check_summary("test_remote_core");
}
