/* test_http.c - the http(s) backend and zf_store_open_spec against
 * tests/unit/net_server.py: whole reads with stamps from the response, many
 * ranges at once, HEAD stamps, no listing, and
 * the options and arguments that are refused. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "net_server.h"
#include "store/net.h"
#include "store/open.h"

static net_server srv;
static char base[64];

static uint8_t obj_byte(uint64_t size, uint64_t i)
{
    return (uint8_t)((i * 7 + size) % 251);
}

static int same(const uint8_t *buf, uint64_t size, uint64_t off, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != obj_byte(size, off + i))
            return 0;
    return 1;
}

/* open spec with o, or fail the check */
static zf_store *open_ok(const char *spec, const zf_store_opts *o)
{
    zf_store *s = NULL;
    char err[256] = "";
    int rc = zf_store_open_spec(spec, o, &s, err, sizeof err);
    CHECK(rc == ZF_OK && s, "open %s: %d %s", spec, rc, err);
    return s;
}

/* the tag a response with this ETag gives */
static zf_fp tag_of(const char *etag)
{
    zf_fp fp;
    zf_fp_init(&fp);
    zf_fp_add(&fp, etag, strlen(etag));
    return fp;
}

static void test_reads(void)
{
    zf_store_opts o = {.connections = 3};
    zf_store *s = open_ok(base, &o);
    if (!s)
        return;
    CHECK(s->remote == 1 && s->parallel == 3, "remote %d parallel %u", s->remote, s->parallel);
    CHECK(!strcmp(zf_store_path(s), base), "name %s", zf_store_path(s));
    zf_store_buf b = {0};
    size_t n;
    zf_stamp st;
    char err[200];
    CHECK(zf_store_read(s, "data/1000", 2000, &b, &n, &st, err, sizeof err) == ZF_OK, "read: %s", err);
    zf_fp t = tag_of("\"s1000\"");
    CHECK(n == 1000 && same(b.p, 1000, 0, 1000), "read bytes %zu", n);
    CHECK(st.kind == ZF_STORE_FILE && st.size == 1000 && st.mtime == INT64_C(1796119200) * 1000000000 &&
          st.tag.a == t.a && st.tag.b == t.b && !st.dev && !st.ino && !st.ctime, "read stamp");
    CHECK(zf_store_read(s, "data/1000", 999, &b, &n, &st, err, sizeof err) == ZF_ECORRUPT, "max: %s", err);
    CHECK(zf_store_read(s, "nothing/here", 999, &b, &n, &st, err, sizeof err) == ZF_ENOTFOUND, "404");
    free(b.p);

    zf_stamp h;
    CHECK(zf_store_stamp(s, "data/777", &h) == ZF_OK && h.kind == ZF_STORE_FILE && h.size == 777,
          "stamp: kind %u size %" PRIu64, h.kind, h.size);
    t = tag_of("\"s777\"");
    CHECK(h.tag.a == t.a && h.tag.b == t.b && h.mtime > 0, "stamp tag");
    CHECK(zf_store_stamp(s, "nothing", &h) == ZF_ENOTFOUND && h.kind == ZF_STORE_ABSENT, "stamp 404");
    CHECK(zf_store_stamp_why(s, "data/777", &h, err, sizeof err) == ZF_OK && !*err, "stamp_why: %s", err);
    zf_store_opts o2 = {.retries = 2};
    zf_store *s2 = open_ok(base, &o2);
    if (s2) { /* a failed stamp says why, as a failed read does */
        CHECK(zf_store_stamp_why(s2, "fail/stamp/100/503/10", &h, err, sizeof err) == ZF_EIO &&
                  h.kind == ZF_STORE_ABSENT, "stamp 503");
        CHECK(!strcmp(err, "HTTP 503 after 2 attempts"), "stamp reason: %s", err);
        CHECK(zf_store_stamp_why(s2, "fail/stamp403/100/403/10", &h, NULL, 0) == ZF_EIO, "no reason buffer");
        zf_store_close(s2);
    }
    CHECK(zf_store_list(s, "", 0, NULL, NULL, NULL, 0) == ZF_EUNSUPPORTED, "list");

    /* many ranges at once: one empty, one absent */
    enum { N = 6 };
    uint8_t bufs[N][500];
    char errs[N][200];
    const char *keys[N] = {"data/5000", "data/6000", "data/7000", "data/100", "none", "data/8000"};
    uint64_t offs[N] = {0, 1234, 6500, 50, 0, 7999};
    size_t lens[N] = {500, 300, 500, 0, 10, 1};
    zf_store_req r[N];
    for (int i = 0; i < N; i++)
        r[i] = (zf_store_req){.key = keys[i], .off = offs[i], .len = lens[i], .buf = bufs[i],
                              .err = errs[i], .errcap = sizeof errs[i]};
    CHECK(zf_store_read_many(s, r, N) == ZF_ENOTFOUND, "read_many: first failure");
    for (int i = 0; i < N; i++) {
        if (i == 4) {
            CHECK(r[i].rc == ZF_ENOTFOUND && !strcmp(errs[i], "HTTP 404"), "absent: %s", errs[i]);
            continue;
        }
        uint64_t size = strtoull(keys[i] + 5, NULL, 10);
        CHECK(r[i].rc == ZF_OK && same(bufs[i], size, offs[i], lens[i]), "range %d: %s", i, errs[i]);
    }
    /* a range past the end */
    CHECK(zf_store_read_range(s, "data/100", 90, 20, bufs[0], err, sizeof err) == ZF_ECORRUPT, "short: %s", err);
    zf_store_close(s);

    /* a prefix: keys are beneath it */
    char spec[128];
    snprintf(spec, sizeof spec, "%s/data/", base);
    s = open_ok(spec, &o);
    if (s) {
        CHECK(zf_store_read_range(s, "300", 10, 100, bufs[0], err, sizeof err) == ZF_OK &&
              same(bufs[0], 300, 10, 100), "prefix: %s", err);
        zf_store_close(s);
    }
}

/* spec with the option name=value is refused with a reason holding want */
static void refused(const char *spec, const char *name, const char *value, int want_rc, const char *want)
{
    zf_store_opts o = {0};
    char err[256] = "";
    int rc = name ? zf_store_opt_set(&o, name, value, err, sizeof err) : ZF_OK;
    zf_store *s = NULL;
    if (rc == ZF_OK)
        rc = zf_store_open_spec(spec, &o, &s, err, sizeof err);
    CHECK(rc == want_rc && !s, "%s -o %s=%s: rc %d", spec, name ? name : "", value ? value : "", rc);
    CHECK(strstr(err, want) != NULL, "%s -o %s: reason '%s', want '%s'", spec, name ? name : "", err, want);
    zf_store_close(s);
    zf_store_opts_free(&o);
}

static void test_refused(void)
{
    refused("unit", "connections", "4", ZF_EINVAL, "-o connections applies to remote stores only");
    refused("unit", "anonymous", NULL, ZF_EINVAL, "-o anonymous applies to remote stores only");
    refused(base, "follow_symlinks", NULL, ZF_EINVAL, "applies to local stores only");
    refused(base, "region", "eu-west-1", ZF_EINVAL, "-o region= applies to s3:// stores only");
    refused(base, "endpoint", base, ZF_EINVAL, "-o endpoint= applies to s3://, gs:// and az:// stores only");
    refused("s3://ab/x", NULL, NULL, ZF_EINVAL, "bucket name ab");
    refused("ftp://h/x", NULL, NULL, ZF_EINVAL, "unsupported scheme");
    refused("https://u:p@h/x", NULL, NULL, ZF_EINVAL, "credentials never go");
    refused(base, "connections", "0", ZF_EINVAL, "invalid connections (a whole number from 1 to 1024): 0");
    refused(base, "connections", "4x", ZF_EINVAL, "invalid connections");
    refused(base, "retries", "-1", ZF_EINVAL, "invalid retries");
    refused(base, "timeout_ms", "", ZF_EINVAL, "timeout_ms needs a value");
    refused(base, "endpoint", "ftp://h", ZF_EINVAL, "invalid endpoint (an http:// or https:// URL)");
    refused(base, "endpoint", "s3://b", ZF_EINVAL, "invalid endpoint");
    refused(base, "anonymous", "1", ZF_EINVAL, "anonymous takes no value");
    refused(base, "cafile", "/nonexistent/ca.pem", ZF_EINVAL, "cannot read cafile /nonexistent/ca.pem");
    zf_store_opts o = {0};
    /* an endpoint with user information is refused without showing it (issue 24) */
    const char *with_user[] = {"http://user:hunter2@h/x", "ftp://user:hunter2@h", "http://u:hun/ter2@h",
                               "https://u:hun?ter2@h", "ftp://u:hun#ter2@h"};
    for (size_t i = 0; i < sizeof with_user / sizeof *with_user; i++) {
        char err[256] = "";
        CHECK(zf_store_opt_set(&o, "endpoint", with_user[i], err, sizeof err) == ZF_EINVAL &&
                  strstr(err, "invalid endpoint") && !strstr(err, "hunter2") && !strstr(err, "ter2"),
              "endpoint %zu refused without its password: %s", i, err);
    }
    CHECK(zf_store_opt_set(&o, "format", "iso", NULL, 0) == ZF_ENOTFOUND, "not a store option");
    /* a local directory, as before */
    zf_store *s = open_ok("unit", &o);
    CHECK(s && s->remote == 0 && s->parallel == 1 && zf_store_path(s)[0] == '/', "local");
    zf_store_close(s);
    char err[200] = "x";
    CHECK(zf_store_open_spec("no/such/dir", &o, &s, err, sizeof err) == ZF_ENOTFOUND && !err[0],
          "local absent: '%s'", err);
    CHECK(zf_store_spec_remote("s3://b") && zf_store_spec_remote("http://h") &&
          !zf_store_spec_remote("/data/x") && !zf_store_spec_remote("a:b"), "spec_remote");
}

int main(void)
{
    char err[200];
    if (zf_net_global_init(err, sizeof err) != ZF_OK) {
        fprintf(stderr, "test_http: %s\n", err);
        return 1;
    }
    if (net_server_start(&srv, "unit/net_server.py") != 0) {
        fprintf(stderr, "test_http: cannot start unit/net_server.py\n");
        return 1;
    }
    snprintf(base, sizeof base, "http://127.0.0.1:%u", srv.port);
    test_reads();
    test_refused();
    net_server_stop(&srv);
    zf_net_global_cleanup();
    return check_summary("test_http");
}
