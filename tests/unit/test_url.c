/* test_url.c - the STORE argument: local paths, http(s) URLs (hosts, IPv6
 * literals, ports, paths), s3://, gs:// and az://, what is refused and why, and
 * object URLs with %-encoded keys. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "store/url.h"

/* parse spec and compare with the expected parts */
static void ok(const char *spec, zf_url_kind kind, const char *host, unsigned port, const char *path)
{
    zf_url u;
    char err[200] = "";
    int rc = zf_url_parse(spec, &u, err, sizeof err);
    CHECK(rc == ZF_OK, "%s: %s", spec, err);
    if (rc != ZF_OK)
        return;
    CHECK(u.kind == kind, "%s: kind %d", spec, (int)u.kind);
    CHECK(host ? u.host && !strcmp(u.host, host) : !u.host, "%s: host %s", spec, u.host ? u.host : "(null)");
    CHECK(u.port == port, "%s: port %u", spec, u.port);
    CHECK(!strcmp(u.path, path), "%s: path '%s'", spec, u.path);
    zf_url_free(&u);
}

/* spec is refused with a reason holding want */
static void bad(const char *spec, const char *want)
{
    zf_url u;
    char err[200] = "";
    CHECK(zf_url_parse(spec, &u, err, sizeof err) == ZF_EINVAL, "%s: accepted", spec);
    CHECK(strstr(err, want) != NULL, "%s: reason '%s', want '%s'", spec, err, want);
    CHECK(!strchr(err, '\n'), "%s: one line", spec);
    CHECK(!u.host && !u.path, "%s: nothing left allocated", spec);
}

static void test_parse(void)
{
    /* local paths: anything without SCHEME:// */
    ok("examples/lead_times.zarr", ZF_URL_LOCAL, NULL, 0, "examples/lead_times.zarr");
    ok("/data/a:b/x.zarr", ZF_URL_LOCAL, NULL, 0, "/data/a:b/x.zarr");
    ok("c:/x", ZF_URL_LOCAL, NULL, 0, "c:/x");
    ok("./http:/x", ZF_URL_LOCAL, NULL, 0, "./http:/x");
    ok("3s://x", ZF_URL_LOCAL, NULL, 0, "3s://x");
    /* http(s) */
    ok("http://127.0.0.1:8080/lead_times.zarr", ZF_URL_HTTP, "127.0.0.1", 8080, "lead_times.zarr");
    ok("https://data.dynamical.org/noaa/gefs/forecast-35-day/latest.zarr/", ZF_URL_HTTPS,
       "data.dynamical.org", 0, "noaa/gefs/forecast-35-day/latest.zarr");
    ok("HTTPS://Example.com", ZF_URL_HTTPS, "Example.com", 0, "");
    ok("http://h/", ZF_URL_HTTP, "h", 0, "");
    ok("http://[::1]:9000/a//b/", ZF_URL_HTTP, "[::1]", 9000, "a/b");
    ok("http://[fe80::1:2]/s", ZF_URL_HTTP, "[fe80::1:2]", 0, "s");
    ok("http://h/my%20store.zarr/x%2Fy", ZF_URL_HTTP, "h", 0, "my store.zarr/x/y");
    ok("http://h:65535/.zarr/..x", ZF_URL_HTTP, "h", 65535, ".zarr/..x");
    /* s3, gs: prefixes taken literally */
    ok("s3://bucket", ZF_URL_S3, "bucket", 0, "");
    ok("s3://my.bucket/a/b/", ZF_URL_S3, "my.bucket", 0, "a/b");
    ok("s3://b/%41", ZF_URL_S3, "b", 0, "A");
    ok("s3://b/my%20data/x.zarr", ZF_URL_S3, "b", 0, "my data/x.zarr");
    ok("s3://b/my data/x.zarr", ZF_URL_S3, "b", 0, "my data/x.zarr");
    ok("gs://b/100%25 sure/%3F%23", ZF_URL_GS, "b", 0, "100% sure/?#");
    ok("s3://b/caf%C3%A9", ZF_URL_S3, "b", 0, "caf\xc3\xa9");
    ok("gs://weatherbench2/datasets/era5/x.zarr", ZF_URL_GS, "weatherbench2", 0, "datasets/era5/x.zarr");
    ok("az://data/era5/x.zarr", ZF_URL_AZ, "data", 0, "era5/x.zarr");
    ok("abfs://data/x.zarr/", ZF_URL_AZ, "data", 0, "x.zarr");
    ok("ABFSS://data", ZF_URL_AZ, "data", 0, "");
    /* refused */
    bad("ftp://h/x", "unsupported scheme ftp://");
    bad("file:///x", "unsupported scheme file://");
    bad("https://user:secret@h/x", "credentials never go in the STORE argument");
    bad("https://user@h/x", "user information");
    bad("s3://key:secret@bucket/x", "credentials never go");
    bad("http://h/x?X-Amz-Signature=abc", "query strings");
    bad("http://h/x#frag", "fragments");
    bad("s3://b/x?versionId=1", "query strings");
    bad("http:///x", "no host");
    bad("http://", "no host");
    bad("s3://", "no bucket");
    bad("gs:///x", "no bucket");
    bad("az://c@acct.dfs.core.windows.net/x", "credentials never go");
    bad("http://h:/x", "bad port");
    bad("http://h:0/x", "bad port");
    bad("http://h:65536/x", "bad port");
    bad("http://h:8a/x", "bad port");
    bad("http://[::1/x", "IPv6");
    bad("http://[]/x", "IPv6");
    bad("http://[::g]/x", "IPv6");
    bad("http://h%20/x", "bad character in the store URL's host");
    bad("http://h/a/../b", "'.' and '..'");
    bad("http://h/a/./b", "'.' and '..'");
    bad("http://h/a/%2e%2E/b", "'.' and '..'");
    bad("s3://b/..", "'.' and '..'");
    bad("http://h/a%2", "bad %-escape");
    bad("http://h/a%zz", "bad %-escape");
    bad("http://h/a%00b", "control characters");
    bad("s3://b/a%0Ab", "control characters");
    bad("s3://b/a\tb", "control characters");
    bad("s3://b/100%", "bad %-escape");
    bad("gs://b/50%off", "bad %-escape");
    bad("http://h/a b", "spaces");
    bad("s3://Bu cket/x", "bad character in the bucket");
    bad("s3://b!/x", "bad character in the bucket");
}

static void test_build(void)
{
    zf_url u;
    char err[200];
    CHECK(zf_url_parse("http://[::1]:8080/p", &u, err, sizeof err) == ZF_OK, "%s", err);
    char *o = zf_url_origin(&u);
    CHECK(o && !strcmp(o, "http://[::1]:8080"), "origin %s", o);
    free(o);
    zf_url_free(&u);
    CHECK(zf_url_parse("https://h/p", &u, err, sizeof err) == ZF_OK, "%s", err);
    o = zf_url_origin(&u);
    CHECK(o && !strcmp(o, "https://h"), "origin %s", o);
    free(o);
    zf_url_free(&u);

    struct {
        const char *prefix, *key, *want;
    } cases[] = {
        {"store.zarr", "a/zarr.json", "https://h/store.zarr/a/zarr.json"},
        {"", "zarr.json", "https://h/zarr.json"},
        {"s", "", "https://h/s"},
        {"", "", "https://h/"},
        {"my store", "a/c/0.1", "https://h/my%20store/a/c/0.1"},
        {"p", "x~y_z-1.2/+?#%&=:@", "https://h/p/x~y_z-1.2/%2B%3F%23%25%26%3D%3A%40"},
        {"p", "\xc3\xa9t\xc3\xa9", "https://h/p/%C3%A9t%C3%A9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *url = zf_url_object("https://h", cases[i].prefix, cases[i].key);
        CHECK(url && !strcmp(url, cases[i].want), "object %s: %s", cases[i].want, url);
        free(url);
    }
}

static void test_redact(void)
{
    struct {
        const char *spec, *want;
    } cases[] = {
        {"https://user:secret@h/x", "https://***@h/x"},
        {"https://a@b:c@h:80/x?y", "https://***@h:80/x?***"},
        {"s3://KEY:SECRET@bucket/p", "s3://***@bucket/p"},
        {"https://h/x?X-Amz-Signature=abc#f", "https://h/x?***"},
        {"http://h/a@b", "http://***@b"}, /* a path with '@' may be user information */
        {"https://user:pa/ss@h/x", "https://***@h/x"},
        {"https://user:pa?ss@h/x", "https://***@h/x"},
        {"https://user:pa#ss@h/x?q", "https://***@h/x?***"},
        {"http://u:p@h/x?a=b@c", "http://***@c"},
        {"/local/p@th?x", "/local/p@th?x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[128];
        zf_url_redact(cases[i].spec, out, sizeof out);
        CHECK(!strcmp(out, cases[i].want), "redact %s: %s", cases[i].spec, out);
    }
}

int main(void)
{
    test_redact();
    test_parse();
    test_build();
    return check_summary("test_url");
}
