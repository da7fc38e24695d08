/* test_presence.c - the presence invariant (store.h) above the store layer:
 * a chunk, array or group is absent only when the store said so.  Every
 * failure at every store operation (a listing, a later page of one, a
 * stamp, a read, a ranged read), on an S3-like store (listed) and a plain
 * HTTP-like one, for arrays of one chunk, flat, nested and sharded keys:
 * sizes and .info fail (never fill values, never a count of part of the
 * chunks), nothing of the failure is kept (the same tree sizes exactly once
 * the store answers), the re-check cannot tell rather than "changed", and a
 * group whose listing or a child's metadata fails is incomplete rather than
 * empty.  Every size and byte served is compared with the local store's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "check.h"
#include "chunk/array.h"
#include "fake_remote.h"
#include "tree/tree.h"

static char tmp[256];

enum { NEST_R = 40, NEST_C = 30, NEST_CHUNK = 10 };

/* a root v3 array of NEST_R x NEST_C values, chunks of NEST_CHUNK square,
 * keys c/I/J (a directory level per dimension), chunk (1, 1) missing */
static void make_nested(const char *dir)
{
    mkdir(dir, 0755);
    char meta[1024], name[64];
    snprintf(meta, sizeof meta,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%d,%d],\"data_type\":{\"name\":"
             "\"numpy.timedelta64\",\"configuration\":{\"unit\":\"ms\",\"scale_factor\":1}},"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d,%d]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":0,\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
             "\"little\"}}],\"attributes\":{}}", NEST_R, NEST_C, NEST_CHUNK, NEST_CHUNK);
    put_text(dir, "zarr.json", meta);
    for (unsigned i = 0; i < NEST_R / NEST_CHUNK; i++)
        for (unsigned j = 0; j < NEST_C / NEST_CHUNK; j++) {
            if (i == 1 && j == 1)
                continue;
            int64_t v[NEST_CHUNK * NEST_CHUNK];
            chunk_values(4000 + i, j, NEST_CHUNK * NEST_CHUNK, v, 9);
            snprintf(name, sizeof name, "c/%u/%u", i, j);
            put(dir, name, v, sizeof v);
        }
}

/* a root v2 array held by one chunk (as xarray writes a short coordinate) */
static void make_single(const char *dir)
{
    mkdir(dir, 0755);
    put_text(dir, ".zarray", "{\"zarr_format\":2,\"shape\":[12],\"chunks\":[12],\"dtype\":\"<m8[h]\","
                             "\"compressor\":null,\"fill_value\":null,\"order\":\"C\",\"filters\":null}");
    int64_t v[12];
    chunk_values(5000, 0, 12, v, 2);
    put(dir, "0", v, sizeof v);
}

/* one store of the matrix, its local text the reference */
typedef struct layout_case {
    const char *name;
    void (*make)(const char *dir);
    char dir[512];
    char *txt, *csv;        /* the local store's views */
    uint64_t ntxt, ncsv;
} layout_case;

static void make_flat(const char *dir)
{
    make_big(dir, 0, UINT32_MAX);
}

/* the local store's .txt and .csv of the root array of c->dir */
static void reference(layout_case *c, zf_cache *cache)
{
    snprintf(c->dir, sizeof c->dir, "%s/%s.zarr", tmp, c->name);
    c->make(c->dir);
    zf_store *s;
    zf_tree *t = NULL;
    zf_layout_opts o = opts(NULL);
    CHECK(zf_store_open_local(c->dir, 0, &s) == ZF_OK && zf_tree_build(s, cache, &o, &t) == ZF_OK,
          "%s: the local store", c->name);
    const zf_node *n = t ? first_file(t, ".txt") : NULL, *v = t ? first_file(t, ".csv") : NULL;
    c->txt = n ? whole(n->layout, ZF_VIEW_TXT, &c->ntxt) : NULL;
    c->csv = v ? whole(v->layout, ZF_VIEW_CSV, &c->ncsv) : NULL;
    CHECK(c->txt && c->csv, "%s: the local text", c->name);
    zf_tree_free(t);
    zf_store_close(s);
}

/* a fault of the matrix */
typedef struct fault_case {
    const char *name;
    fake_fault fault;
} fault_case;

static const fault_case faults[] = {
    {"listing fails", {FAKE_LIST, NULL, ZF_EIO, "HTTP 503 after 8 attempts", 0}},
    {"a later page of the listing fails", {FAKE_LIST, NULL, ZF_EIO, "page 2 of the listing: HTTP 500", 1}},
    {"the listing's last page fails", {FAKE_LIST, NULL, ZF_EIO, "page 9 of the listing: not a ListObjectsV2 page", 1000}},
    {"a listing is refused (403)", {FAKE_LIST, NULL, ZF_EIO, "HTTP 403 InvalidAccessKeyId", 0}},
    {"a stamp (HEAD) fails", {FAKE_STAMP, "c", ZF_EIO, "HTTP 405", 0}},
    {"a stamp (HEAD) is garbage", {FAKE_STAMP, NULL, ZF_ECORRUPT, "HTTP 416: the range asked is beyond the object's end", 0}},
    {"a chunk read fails", {FAKE_READ, "c", ZF_EIO, "HTTP 503 after 8 attempts", 0}},
    {"a v2 chunk read fails", {FAKE_READ, "/0", ZF_EIO, "timed out after 8 attempts", 0}},
    {"a ranged read fails", {FAKE_RANGE, NULL, ZF_EIO, "connection refused after 8 attempts", 0}},
    {"a chunk read finds it gone (404 after it was listed)", {FAKE_READ, "c/", ZF_ENOTFOUND, "HTTP 404", 0}},
    {"a ranged read finds it gone (404 after it was seen)", {FAKE_RANGE, NULL, ZF_ENOTFOUND, "HTTP 404", 0}},
};
enum { NFAULTS = sizeof faults / sizeof *faults };

/* size and read the root array of c through a fake store (can_list: S3
 * or plain HTTP) with fault f: every failure the fault made must fail the
 * size (and .info, when the fault hit the listing that counts the chunks);
 * once the fault is gone, the same tree serves exactly the local bytes */
static void one_case(layout_case *c, const fault_case *fc, int can_list, size_t cache_size)
{
    char what[256];
    snprintf(what, sizeof what, "%s, %s, %s, cache %zu KiB", c->name, can_list ? "S3" : "HTTP",
             fc->name, cache_size >> 10);
    if (fc->fault.rc == ZF_ENOTFOUND && !can_list && strcmp(c->name, "single"))
        return; /* unlisted: a 404 is the store's answer itself (no snapshot says otherwise) */
    zf_store *inner;
    CHECK(zf_store_open_local(c->dir, 0, &inner) == ZF_OK, "%s: open", what);
    zf_cache *cache = zf_cache_new(cache_size);
    fake f;
    zf_store *s = fake_open(&f, inner, can_list, 4, 0);
    zf_layout_opts o = opts(NULL);
    zf_tree *t = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "%s: walk", what);
    const zf_node *txt = t ? first_file(t, ".txt") : NULL, *csv = t ? first_file(t, ".csv") : NULL;
    const zf_node *info = t ? first_file(t, ".info") : NULL;
    if (!txt || !csv || !info) {
        CHECK(0, "%s: no array files", what);
        goto out;
    }
    f.fault = fc->fault;
    uint64_t size = 0, got = 0;
    int rc = zf_layout_size(txt->layout, ZF_VIEW_TXT, &size);
    char *text = rc == ZF_OK ? whole(txt->layout, ZF_VIEW_TXT, &got) : NULL;
    if (f.faulted == 0) { /* the fault met nothing this layout asks for */
        CHECK(rc == ZF_OK && size == c->ntxt && text && !memcmp(text, c->txt, (size_t)got),
              "%s: untouched by the fault, yet not the local text", what);
    } else {
        /* the failure must show: the size (the pass read the chunk), or the
         * read (sized from the listing alone before the chunk failed) */
        CHECK(rc != ZF_OK || !text, "%s: %ld faulted requests, yet the whole text was served "
              "(%llu bytes, local %llu)", what, (long)f.faulted, (unsigned long long)size,
              (unsigned long long)c->ntxt);
        CHECK(rc == ZF_OK || rc == ZF_EIO || rc == ZF_ESTALE, "%s: the size failed with %s", what,
              zf_strerror(rc));
        if (rc == ZF_OK) /* what was served before the failure is the local text */
            CHECK(size == c->ntxt, "%s: a size of %llu, local %llu", what,
                  (unsigned long long)size, (unsigned long long)c->ntxt);
    }
    free(text);
    if (fc->fault.ops & FAKE_LIST) { /* the count of the chunks needs the listing */
        uint64_t isize;
        long before = f.faulted;
        int irc = zf_layout_size(info->layout, ZF_VIEW_INFO, &isize);
        CHECK(irc == ZF_OK ? f.faulted == before : irc == ZF_EIO,
              "%s: .info: %s after %ld faulted listings", what, zf_strerror(irc),
              (long)(f.faulted - before));
    }
    f.fault.ops = 0; /* the store answers again: nothing of the failure was kept */
    text = whole(txt->layout, ZF_VIEW_TXT, &got);
    CHECK(text && got == c->ntxt && !memcmp(text, c->txt, (size_t)got),
          "%s: after the fault, .txt is not the local text (%llu bytes, local %llu)", what,
          (unsigned long long)got, (unsigned long long)c->ntxt);
    free(text);
    text = whole(csv->layout, ZF_VIEW_CSV, &got);
    CHECK(text && got == c->ncsv && !memcmp(text, c->csv, (size_t)got),
          "%s: after the fault, .csv is not the local text", what);
    free(text);
out:
    zf_tree_free(t);
    zf_store_close(s);
    zf_cache_free(cache);
    zf_store_close(inner);
}

/* the whole matrix: layouts x faults x (S3, HTTP) x (a large cache, one too
 * small for whole shards) */
static void test_matrix(layout_case *cases, unsigned ncases)
{
    for (unsigned i = 0; i < ncases; i++)
        for (unsigned k = 0; k < NFAULTS; k++)
            for (int can_list = 0; can_list < 2; can_list++) {
                one_case(&cases[i], &faults[k], can_list, (size_t)64 << 20);
                if (!strcmp(cases[i].name, "sharded"))
                    one_case(&cases[i], &faults[k], can_list, (size_t)64 << 10);
            }
}

/* the re-check of an array whose size was computed: a listing that fails
 * says it cannot tell (never "changed", which would swap in a view built
 * from the failure, nor "unchanged") */
static void test_recheck(layout_case *c)
{
    zf_store *inner;
    CHECK(zf_store_open_local(c->dir, 0, &inner) == ZF_OK, "open");
    zf_cache *cache = zf_cache_new(64 << 20);
    fake f;
    zf_store *s = fake_open(&f, inner, 1, 4, 0);
    zf_layout_opts o = opts(NULL);
    zf_tree *t = NULL, *fresh = NULL;
    uint64_t size;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK && zf_tree_build(s, cache, &o, &fresh) == ZF_OK,
          "%s: walks", c->name);
    const zf_node *n = t ? first_file(t, ".txt") : NULL;
    CHECK(n && zf_layout_size(n->layout, ZF_VIEW_TXT, &size) == ZF_OK, "%s: sized", c->name);
    char why[512] = "";
    CHECK(t && fresh && zf_tree_stale(t, fresh, 1, why, sizeof why) == 0, "%s: nothing changed",
          c->name);
    for (size_t after = 0; after < 3; after += 2) {
        f.fault = (fake_fault){FAKE_LIST, NULL, ZF_EIO, "HTTP 503 after 8 attempts", after};
        why[0] = '\0';
        int rc = t && fresh ? zf_tree_stale(t, fresh, 1, why, sizeof why) : 0;
        CHECK(rc == ZF_EIO && strstr(why, "503"), "%s: the re-check's listing fails after %zu "
              "entries: %d (%s), want ZF_EIO and the reason", c->name, after, rc, why);
    }
    f.fault.ops = 0;
    CHECK(t && fresh && zf_tree_stale(t, fresh, 1, why, sizeof why) == 0, "%s: the store answers "
          "again: nothing changed", c->name);
    zf_tree_free(t);
    zf_tree_free(fresh);
    zf_store_close(s);
    zf_cache_free(cache);
    zf_store_close(inner);
}

/* children of the root of t, as "name;" in order */
static void root_names(const zf_tree *t, char *out, size_t cap)
{
    out[0] = '\0';
    names(t, zf_tree_node(t, ZF_ROOT_INO), out, cap);
}

/* the walk: a group whose listing fails (at once, or after some entries: a
 * later page) or a child whose metadata cannot be read is incomplete (its
 * known children only, lookups of others unknown), never shown as empty;
 * a store that cannot be listed, whose consolidated metadata cannot be
 * read, is incomplete too (not a group without children) */
static void test_walk(zf_cache *cache)
{
    char dir[512], cons[512], all[8192], got[8192];
    snprintf(dir, sizeof dir, "%s/walk.zarr", tmp);
    snprintf(cons, sizeof cons, "%s/walkc.zarr", tmp);
    make_v2(dir, 6, 0);
    make_v2(cons, 6, 1);
    put_text(dir, "sub/.zgroup", "{\"zarr_format\":2}");
    zf_store *inner, *cinner;
    CHECK(zf_store_open_local(dir, 0, &inner) == ZF_OK && zf_store_open_local(cons, 0, &cinner) == ZF_OK,
          "open");
    zf_layout_opts o = opts(NULL);
    fake f;
    zf_store *s = fake_open(&f, inner, 1, 4, 0);
    zf_tree *t = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK && !zf_tree_incomplete(t, got, sizeof got),
          "a whole walk");
    root_names(t, all, sizeof all);
    zf_tree_free(t);
    static const struct {
        const char *name;
        fake_fault fault;
        const char *shown;    /* a child still shown, or NULL: none */
        const char *hidden;   /* a child not shown */
    } cases[] = {
        {"the root's listing fails", {FAKE_LIST, "", ZF_EIO, "HTTP 503 after 8 attempts", 0}, NULL, "a000.txt"},
        {"a later page of the root's listing fails", {FAKE_LIST, "", ZF_EIO, "page 2: HTTP 500", 3}, NULL, "a005.txt"},
        {"an array's metadata cannot be read", {FAKE_READ, "a002/.zarray", ZF_EIO, "HTTP 403 ExpiredToken", 0}, "a003.txt", "a002.txt"},
        {"a group's .zgroup cannot be stamped", {FAKE_STAMP, "sub/.zgroup", ZF_EIO, "HTTP 503", 0}, "a001.txt", "sub"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        f.fault = cases[i].fault;
        char why[512] = "";
        t = NULL;
        CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "%s: the walk goes on", cases[i].name);
        if (!t)
            continue;
        root_names(t, got, sizeof got);
        CHECK(zf_tree_node(t, ZF_ROOT_INO)->incomplete, "%s: the root is not marked incomplete",
              cases[i].name);
        CHECK(zf_tree_incomplete(t, why, sizeof why) && strstr(why, cases[i].fault.why),
              "%s: the tree does not say why: %s", cases[i].name, why);
        CHECK(!zf_tree_lookup(t, ZF_ROOT_INO, cases[i].hidden), "%s: %s shown", cases[i].name,
              cases[i].hidden);
        CHECK(!cases[i].shown ? !strcmp(got, "")
                              : zf_tree_lookup(t, ZF_ROOT_INO, cases[i].shown) != NULL,
              "%s: children shown: %s", cases[i].name, got);
        zf_tree_free(t);
    }
    f.fault.ops = 0; /* the store answers: the whole tree again */
    t = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK && !zf_tree_incomplete(t, got, sizeof got),
          "a whole walk once the store answers");
    if (t)
        root_names(t, got, sizeof got);
    CHECK(t && !strcmp(got, all), "the same children as before the faults: %s", got);
    zf_tree_free(t);
    zf_store_close(s);
    /* plain HTTP: the consolidated metadata is the only list of children */
    s = fake_open(&f, cinner, 0, 4, 0);
    f.fault = (fake_fault){FAKE_READ, ".zmetadata", ZF_EIO, "HTTP 503 after 8 attempts", 0};
    t = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK, "HTTP without its consolidated metadata");
    CHECK(t && zf_tree_node(t, ZF_ROOT_INO)->incomplete && zf_tree_incomplete(t, got, sizeof got) &&
              strstr(got, ".zmetadata"),
          "HTTP: a consolidated document that cannot be read makes the root incomplete, not "
          "empty: %s", t ? got : "(no tree)");
    zf_tree_free(t);
    f.fault.ops = 0;
    t = NULL;
    CHECK(zf_tree_build(s, cache, &o, &t) == ZF_OK && !zf_tree_incomplete(t, got, sizeof got),
          "HTTP: whole once the document is read");
    CHECK(t && zf_tree_lookup(t, ZF_ROOT_INO, "a005.txt"), "HTTP: every array shown");
    zf_tree_free(t);
    zf_store_close(s);
    zf_store_close(inner);
    zf_store_close(cinner);
}

int main(void)
{
    if (test_dir_make(tmp, sizeof tmp, "zf-presence"))
        return 1;
    zf_cache *cache = zf_cache_new(64 << 20);
    layout_case cases[] = {
        {"single", make_single, "", NULL, NULL, 0, 0},
        {"flat", make_flat, "", NULL, NULL, 0, 0},
        {"nested", make_nested, "", NULL, NULL, 0, 0},
        {"sharded", make_sharded, "", NULL, NULL, 0, 0},
    };
    enum { N = sizeof cases / sizeof *cases };
    for (unsigned i = 0; i < N; i++)
        reference(&cases[i], cache);
    test_matrix(cases, N);
    for (unsigned i = 1; i < N; i++) /* (one chunk: stamped, not listed) */
        test_recheck(&cases[i]);
    test_walk(cache);
    for (unsigned i = 0; i < N; i++) {
        free(cases[i].txt);
        free(cases[i].csv);
    }
    zf_cache_free(cache);
    test_dir_remove(tmp);
    return check_summary("test_presence");
}
