/* test_kerchunk.c - kerchunk reference sets as stores: versions 0 and 1
 * (inline raw, base64 and nested JSON values, ranges and whole files,
 * templates and gen), listings, stamps, compressed documents, consent,
 * damaged targets, and every way a hostile document is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "base/err.h"
#include "check.h"
#include "store/kerchunk.h"
#include "store/open.h"

static char dir[64];

static void put(const char *name, const void *data, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n, "write %s", path);
    if (f)
        fclose(f);
}

static void put_text(const char *name, const char *text)
{
    put(name, text, strlen(text));
}

/* open dir/name with -o virtual=virt (NULL: none); the error in err */
static int open_doc(const char *name, const char *virt, zf_store **s, char *err, size_t cap)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    zf_store_opts o = {0};
    if (virt)
        zf_store_opt_set(&o, "virtual", virt, err, cap);
    int rc = zf_store_open_spec(path, &o, s, err, cap);
    zf_store_opts_free(&o);
    return rc;
}

/* the whole value of key equals want (n bytes) */
static void value_is(const zf_store *s, const char *key, const char *want, size_t n)
{
    zf_store_buf b = {0};
    size_t got = 0;
    zf_stamp st;
    char err[256] = "";
    int rc = zf_store_read(s, key, 1 << 20, &b, &got, &st, err, sizeof err);
    CHECK(rc == ZF_OK && got == n && !memcmp(b.p, want, n) && st.size == n, "%s: rc %d (%s), %zu bytes", key, rc, err, got);
    zf_stamp st2;
    CHECK(zf_store_stamp(s, key, &st2) == ZF_OK && zf_stamp_same_version(&st, &st2) &&
          st2.kind == ZF_STORE_FILE, "%s: stamp", key);
    free(b.p);
}

typedef struct names {
    char list[512];
} names;

static int add_name(void *ctx, const zf_store_entry *e)
{
    names *n = ctx;
    size_t len = strlen(n->list);
    snprintf(n->list + len, sizeof n->list - len, "%s%s%s", len ? " " : "", e->name,
             e->stamp.kind == ZF_STORE_DIR ? "/" : "");
    return 0;
}

static void listing_is(const zf_store *s, const char *prefix, const char *want)
{
    names n = {""};
    int rc = zf_store_list(s, prefix, 0, add_name, &n, NULL, 0);
    CHECK(rc == ZF_OK && !strcmp(n.list, want), "list '%s': rc %d '%s', want '%s'", prefix, rc, n.list, want);
}

static const char target[] = "0123456789abcdefghij";

static void test_v0(void)
{
    put_text("v0.json", "{\".zgroup\": {\"zarr_format\": 2},"
             " \"a/.zarray\": \"{\\\"x\\\": 1}\","
             " \"a/.zattrs\": \"base64:eyJ5IjogMn0=\","
             " \"a/0\": [\"t.bin\", 2, 5],"
             " \"a/1\": [\"" "file://%DIR%/t.bin\", 10, 3],"
             " \"a/2\": [\"t.bin\"],"
             " \"a/3\": \"x\\u0000y\","
             " \"b/c/d\": \"deep\"}");
    /* the absolute URL needs the directory: rewrite it */
    char text[1024], path[256];
    snprintf(path, sizeof path, "%s/v0.json", dir);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    char out[1200], *at = strstr(text, "%DIR%");
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, dir, at + 5);
    put_text("v0.json", out);

    zf_store *s = NULL;
    char err[256] = "";
    int rc = open_doc("v0.json", NULL, &s, err, sizeof err);
    CHECK(rc == ZF_OK, "open v0: %d %s", rc, err);
    if (rc)
        return;
    value_is(s, ".zgroup", "{\"zarr_format\": 2}", 18);
    value_is(s, "a/.zarray", "{\"x\": 1}", 8);
    value_is(s, "a/.zattrs", "{\"y\": 2}", 8);
    value_is(s, "a/0", "23456", 5);
    value_is(s, "a/1", "abc", 3);
    value_is(s, "a/2", target, 20);
    value_is(s, "a/3", "x\0y", 3);
    listing_is(s, "", ".zgroup a/ b/");
    listing_is(s, "a", ".zarray .zattrs 0 1 2 3");
    listing_is(s, "b", "c/");
    zf_stamp st;
    CHECK(zf_store_stamp(s, "a/9", &st) == ZF_ENOTFOUND, "absent key");
    CHECK(zf_store_stamp(s, "b/c", &st) == ZF_OK && st.kind == ZF_STORE_DIR, "directory");
    CHECK(zf_store_list(s, "zz", 0, add_name, &(names){""}, NULL, 0) == ZF_ENOTFOUND, "absent dir");
    uint8_t buf[8];
    CHECK(zf_store_read_range(s, "a/0", 1, 3, buf, err, sizeof err) == ZF_OK && !memcmp(buf, "345", 3),
          "range of a range");
    CHECK(zf_store_read_range(s, "a/0", 3, 3, buf, err, sizeof err) == ZF_ECORRUPT, "past its length");
    zf_sbuf d = {0};
    zf_store_describe(s, "a", &d);
    CHECK(d.data && strstr(d.data, "kerchunk version 0") && strstr(d.data, "chunk_refs: 1 inline, 2 ranges, 1 whole"),
          "describe: %s", d.data ? d.data : "");
    free(d.data);
    zf_store_close(s);
}

static void test_v1(void)
{
    put_text("v1.json", "{\"version\": 1, \"templates\": {\"u\": \"t.bin\"},"
             " \"refs\": {\".zgroup\": \"{}\", \"a/0\": [\"{{u}}\", 0, 4], \"a/1\": [\"{{ u }}\", 4, 4]},"
             " \"gen\": [{\"key\": \"g/{{i}}.{{j}}\", \"url\": \"{{u}}\", \"offset\": \"{{i}}\","
             " \"length\": \"{{j}}\", \"dimensions\": {\"i\": {\"stop\": 3}, \"j\": [1, 2]}}]}");
    zf_store *s = NULL;
    char err[256] = "";
    int rc = open_doc("v1.json", NULL, &s, err, sizeof err);
    CHECK(rc == ZF_OK, "open v1: %d %s", rc, err);
    if (rc)
        return;
    value_is(s, "a/0", "0123", 4);
    value_is(s, "a/1", "4567", 4);
    value_is(s, "g/2.2", "23", 2);
    value_is(s, "g/0.1", "0", 1);
    listing_is(s, "g", "0.1 0.2 1.1 1.2 2.1 2.2");
    zf_store_close(s);
}

static void refused(const char *doc, int want, const char *why)
{
    put_text("bad.json", doc);
    zf_store *s = NULL;
    char err[256] = "";
    int rc = open_doc("bad.json", NULL, &s, err, sizeof err);
    CHECK(rc == want && strstr(err, why), "%s: rc %d '%s', want %d '%s'", doc, rc, err, want, why);
    zf_store_close(s);
    CHECK(zf_kerchunk_check(doc, strlen(doc), err, sizeof err) == want, "check: %s", doc);
}

static void test_refused(void)
{
    refused("{\"a/../b\": \"x\"}", ZF_ECORRUPT, "not a key");
    refused("{\"/a\": \"x\"}", ZF_ECORRUPT, "not a key");
    refused("{\"a\\u0000b\": \"x\"}", ZF_ECORRUPT, "malformed JSON");
    refused("{\"a\": \"x\", \"a\": \"y\"}", ZF_ECORRUPT, "given twice");
    refused("{\"a\": \"x\", \"a/b\": \"y\"}", ZF_ECORRUPT, "both a value and a directory");
    refused("{\"a\": [\"t.bin\", -1, 2]}", ZF_ECORRUPT, "whole number from 0 to 2^62");
    refused("{\"a\": [\"t.bin\", 4611686018427387905, 2]}", ZF_ECORRUPT, "2^62");
    refused("{\"a\": [\"t.bin\", 4611686018427387900, 10]}", ZF_ECORRUPT, "beyond 2^62");
    refused("{\"a\": [\"t.bin\", 1.5, 2]}", ZF_ECORRUPT, "whole number");
    refused("{\"a\": [\"t.bin\", 1]}", ZF_ECORRUPT, "2 items");
    refused("{\"a\": [1, 2, 3]}", ZF_ECORRUPT, "URL is not a string");
    refused("{\"a\": 5}", ZF_ECORRUPT, "neither data");
    refused("{\"a\": \"base64:abc\"}", ZF_ECORRUPT, "base64");
    refused("{\"a\": \"x\"", ZF_ECORRUPT, "malformed JSON");
    refused("[1]", ZF_ECORRUPT, "not an object");
    refused("{\"version\": 1, \"refs\": {\"a\": \"x\"", ZF_ECORRUPT, "malformed JSON");
    refused("{\"version\": 2, \"refs\": {}}", ZF_EUNSUPPORTED, "version 2");
    refused("{\"version\": 1, \"refs\": {\"a\": [\"{{u|upper}}\"]}, \"templates\": {\"u\": \"x\"}}",
            ZF_EUNSUPPORTED, "only {{name}}");
    refused("{\"version\": 1, \"refs\": {\"a\": [\"{{v}}\"]}, \"templates\": {\"u\": \"x\"}}",
            ZF_ECORRUPT, "not defined");
    refused("{\"version\": 1, \"gen\": [{\"key\": \"k{{i}}\", \"url\": \"u\", \"offset\": \"{{(i+1)*10}}\","
            " \"length\": \"1\", \"dimensions\": {\"i\": [1]}}]}", ZF_EUNSUPPORTED, "only {{name}}");
    refused("{\"version\": 1, \"gen\": [{\"key\": \"k{{i}}\", \"url\": \"u\", \"dimensions\":"
            " {\"i\": {\"stop\": 100000000000}, \"j\": {\"stop\": 100000000000}}}]}", ZF_ECORRUPT, "memory");
    refused("{\"version\": 1, \"templates\": {\"u\": \"{{v}}\"}, \"refs\": {}}", ZF_EUNSUPPORTED,
            "itself a template");
}

/* missing, short and unauthorised targets: EIO with the URL and reason */
static void test_targets(void)
{
    put_text("t.json", "{\"missing\": [\"nope.bin\", 0, 4], \"short\": [\"t.bin\", 18, 4],"
             " \"outside\": [\"/etc/hostname\", 0, 1], \"remote\": [\"s3://bucket/k\", 0, 1]}");
    zf_store *s = NULL;
    char err[512] = "";
    int rc = open_doc("t.json", NULL, &s, err, sizeof err);
    CHECK(rc == ZF_OK, "open: %s", err);
    if (rc)
        return;
    uint8_t buf[8];
    rc = zf_store_read_range(s, "missing", 0, 4, buf, err, sizeof err);
    CHECK(rc == ZF_EIO && strstr(err, "nope.bin") && strstr(err, "does not exist"), "missing: %d %s", rc, err);
    rc = zf_store_read_range(s, "short", 0, 4, buf, err, sizeof err);
    CHECK(rc == ZF_EIO && strstr(err, "t.bin"), "short: %d %s", rc, err);
    rc = zf_store_read_range(s, "outside", 0, 1, buf, err, sizeof err);
    CHECK(rc == ZF_EIO && strstr(err, "not authorised") && strstr(err, "-o virtual=file:///etc/"),
          "outside: %d %s", rc, err);
    rc = zf_store_read_range(s, "remote", 0, 1, buf, err, sizeof err);
    CHECK(rc == ZF_EIO && strstr(err, "-o virtual=s3://bucket/"), "remote: %d %s", rc, err);
    zf_stamp st;
    CHECK(zf_store_stamp(s, "missing", &st) == ZF_OK && st.size == 4, "a range's stamp needs no read");
    zf_store_close(s);
}

static void test_compressed(void)
{
    const char doc[] = "{\"k\": [\"t.bin\", 1, 2]}";
    uint8_t z[256];
    size_t zn = ZSTD_compress(z, sizeof z, doc, strlen(doc), 3);
    put("c.json.zst", z, zn);
    uLongf gn = sizeof z;
    z_stream g = {0};
    deflateInit2(&g, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    g.next_in = (Bytef *)doc;
    g.avail_in = (uInt)strlen(doc);
    g.next_out = z;
    g.avail_out = (uInt)gn;
    deflate(&g, Z_FINISH);
    gn = g.total_out;
    deflateEnd(&g);
    put("c.json.gz", z, gn);
    const char *docs[] = {"c.json.zst", "c.json.gz"};
    for (int i = 0; i < 2; i++) {
        zf_store *s = NULL;
        char err[256] = "";
        int rc = open_doc(docs[i], NULL, &s, err, sizeof err);
        CHECK(rc == ZF_OK, "%s: %s", docs[i], err);
        if (rc == ZF_OK)
            value_is(s, "k", "12", 2);
        zf_store_close(s);
    }
    put("bad.json.gz", "not gzip", 8);
    zf_store *s = NULL;
    char err[256] = "";
    CHECK(open_doc("bad.json.gz", NULL, &s, err, sizeof err) == ZF_ECORRUPT && strstr(err, "gzip"), "bad gzip: %s", err);
}

static void test_consent_option(void)
{
    put_text("o.json", "{\"k\": [\"/etc/hostname\", 0, 1]}");
    zf_store *s = NULL;
    char err[256] = "";
    int rc = open_doc("o.json", "file:///etc/", &s, err, sizeof err);
    CHECK(rc == ZF_OK, "open: %s", err);
    uint8_t c;
    if (rc == ZF_OK)
        CHECK(zf_store_read_range(s, "k", 0, 1, &c, err, sizeof err) == ZF_OK, "authorised: %s", err);
    zf_store_close(s);
}

static void test_parquet(void)
{
    char sub[128];
    snprintf(sub, sizeof sub, "%s/pq", dir);
    mkdir(sub, 0755);
    put_text("pq/.zmetadata", "{\"metadata\": {\".zgroup\": {\"zarr_format\": 2}}, \"record_size\": 10000}");
    zf_store_opts o = {0};
    zf_store *s = NULL;
    char err[256] = "";
    int rc = zf_store_open_spec(sub, &o, &s, err, sizeof err);
    CHECK(rc == ZF_EUNSUPPORTED && strstr(err, "Parquet"), "parquet: %d %s", rc, err);
    zf_store_close(s);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/zf-kerchunk-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    put("t.bin", target, 20);
    test_v0();
    test_v1();
    test_refused();
    test_targets();
    test_compressed();
    test_consent_option();
    test_parquet();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return check_summary("test_kerchunk");
}
