/* test_s3.c - the S3 backend.  Addressing: virtual-hosted style on AWS,
 * path style for bucket names that are no DNS label and under a custom
 * endpoint (with a base path, a port, an IPv6 literal), bucket names S3
 * cannot have.  Against tests/unit/s3_server.py (an S3 server on loopback
 * that checks each signature with its own SigV4 code): listing pages with
 * continuation tokens, stamps equal from a listing, a GET and a HEAD, byte
 * ranges, odd key names, session tokens, wrong and unknown keys failing at
 * open with S3's error code, anonymous access, denied listings, a server
 * whose pages never end, and many threads on one store. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "check.h"
#include "net_server.h"
#include "store/s3.h"

static net_server srv;
static char s3_endpoint[64];
static zf_net *probe_net; /* for the server's page counter */

static void expect(const char *region, const char *endpoint, const char *bucket, const char *origin,
                   const char *host, const char *root)
{
    zf_s3cred c = {.region = (char *)region, .endpoint = (char *)endpoint};
    zf_s3_addr a;
    char err[256] = "";
    int rc = zf_s3_addr_make(&c, bucket, &a, err, sizeof err);
    CHECK(rc == ZF_OK, "%s: %s", bucket, err);
    if (rc != ZF_OK)
        return;
    CHECK(!strcmp(a.origin, origin) && !strcmp(a.host, host) && !strcmp(a.root, root),
          "%s %s: origin %s host %s root %s", bucket, endpoint ? endpoint : "(aws)", a.origin, a.host,
          a.root);
    zf_s3_addr_free(&a);
}

static void test_addressing(void)
{
    expect("us-east-1", NULL, "my-bucket", "https://my-bucket.s3.us-east-1.amazonaws.com",
           "my-bucket.s3.us-east-1.amazonaws.com", "");
    expect("eu-west-3", NULL, "data.example.org", "https://s3.eu-west-3.amazonaws.com",
           "s3.eu-west-3.amazonaws.com", "/data.example.org");
    expect("us-west-2", NULL, "Legacy_Bucket", "https://s3.us-west-2.amazonaws.com",
           "s3.us-west-2.amazonaws.com", "/Legacy_Bucket");
    expect("us-east-1", "http://127.0.0.1:7070", "zarr", "http://127.0.0.1:7070", "127.0.0.1:7070",
           "/zarr");
    expect("garage", "https://s3.example.test/base/path", "b.c", "https://s3.example.test",
           "s3.example.test", "/base/path/b.c");
    expect("us-east-1", "http://[::1]:9000", "zarr", "http://[::1]:9000", "[::1]:9000", "/zarr");
    const char *bad[] = {"ab", "a/b", "a b", "bucket?x", "b\xc3\xa9t", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        zf_s3cred c = {.region = "us-east-1"};
        zf_s3_addr a;
        char err[256] = "";
        CHECK(zf_s3_addr_make(&c, bad[i], &a, err, sizeof err) == ZF_EINVAL && strstr(err, "bucket"),
              "bucket name '%s' refused: %s", bad[i], err);
    }
}

/* the environment of one case: key id, secret, token (NULL: unset) */
static void creds(const char *id, const char *secret, const char *token)
{
    const char *vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"};
    const char *vals[] = {id, secret, token};
    for (int i = 0; i < 3; i++) {
        if (vals[i])
            setenv(vars[i], vals[i], 1);
        else
            unsetenv(vars[i]);
    }
}

static int open_store(const char *bucket, const char *prefix, unsigned max_keys, int anonymous,
                      zf_store **s, char *err, size_t errcap)
{
    zf_s3_opts o = {.cred = {.endpoint = s3_endpoint, .anonymous = anonymous},
                    .net = {.retries = 2, .timeout_ms = 5000},
                    .max_keys = max_keys};
    *err = '\0';
    return zf_store_open_s3(bucket, prefix, &o, s, err, errcap);
}

/* a listing gathered: names (joined by ' ', in order) and stamps of files */
typedef struct seen {
    char names[4096];
    size_t n;
    zf_stamp stamps[64];
} seen;

static int gather(void *ctx, const zf_store_entry *e)
{
    seen *v = ctx;
    size_t len = strlen(v->names);
    snprintf(v->names + len, sizeof v->names - len, "%s%s%s", len ? " " : "", e->name,
             e->stamp.kind == ZF_STORE_DIR ? "/" : "");
    if (v->n < 64)
        v->stamps[v->n] = e->stamp;
    v->n++;
    return 0;
}

/* ListObjectsV2 requests the server has answered */
static long server_pages(void)
{
    char u[128], out[32] = "";
    snprintf(u, sizeof u, "%s/_pages", s3_endpoint);
    zf_net_req r = {.url = u, .buf = (uint8_t *)out, .cap = sizeof out - 1};
    zf_net_run(probe_net, &r, 1);
    return r.rc == ZF_OK ? atol(out) : -1;
}

static int same_stamp(const zf_stamp *a, const zf_stamp *b)
{
    zf_fp x = zf_stamp_digest(a), y = zf_stamp_digest(b);
    return x.a == y.a && x.b == y.b;
}

static void test_listing(void)
{
    creds("AKTEST", "secret/Test+key=1", NULL);
    zf_store *s;
    char err[512];
    CHECK(open_store("bkt", "/st/", 4, 0, &s, err, sizeof err) == ZF_OK, "open: %s", err);
    if (!s)
        return;
    CHECK(!strcmp(zf_store_path(s), "s3://bkt/st"), "name %s", zf_store_path(s));
    CHECK(s->remote == 1 && s->parallel >= 1, "remote store, parallel %u", s->parallel);
    seen v = {0};
    CHECK(zf_store_list(s, "", 0, gather, &v, NULL, 0) == ZF_OK && !strcmp(v.names, "a/ b/ zarr.json"),
          "root: %s", v.names);
    long before = server_pages();
    v = (seen){0};
    CHECK(zf_store_list(s, "a/c", 0, gather, &v, NULL, 0) == ZF_OK && v.n == 25, "a/c: %zu entries", v.n);
    long pages = server_pages() - before;
    CHECK(pages == 7, "25 keys in pages of 4: %ld pages", pages);
    char want[512] = "";
    const char *sorted[] = {"0", "1", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "2",
                            "20", "21", "22", "23", "24", "3", "4", "5", "6", "7", "8", "9"};
    for (int i = 0; i < 25; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? " " : "", sorted[i]);
    CHECK(!strcmp(v.names, want), "every key once, in order: %s", v.names);
    /* stamps: the listing's, a GET's and a HEAD's agree (Last-Modified in whole seconds) */
    zf_store_buf b = {0};
    size_t n = 0;
    zf_stamp got, head;
    CHECK(zf_store_read(s, "a/c/3", 1000, &b, &n, &got, err, sizeof err) == ZF_OK && n == 103,
          "read a/c/3: %s", err);
    int bytes_ok = n == 103;
    for (size_t i = 0; bytes_ok && i < n; i++)
        bytes_ok = b.p[i] == (uint8_t)((3 * 7 + i) % 251);
    CHECK(bytes_ok, "the bytes of a/c/3");
    CHECK(zf_store_stamp(s, "a/c/3", &head) == ZF_OK && head.kind == ZF_STORE_FILE, "HEAD a/c/3");
    CHECK(same_stamp(&got, &head) && same_stamp(&got, &v.stamps[18]) && got.size == 103 &&
              got.tag.a && got.mtime == 1796119200LL * 1000000000,
          "one stamp from GET, HEAD and listing: size %llu mtime %lld",
          (unsigned long long)got.size, (long long)got.mtime);
    CHECK(zf_store_read(s, "a/c/3", 50, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT,
          "larger than max: %s", err);
    CHECK(zf_store_read(s, "nope", 1000, &b, &n, NULL, err, sizeof err) == ZF_ENOTFOUND &&
              strstr(err, "NoSuchKey"), "missing key: %s", err);
    zf_stamp st;
    CHECK(zf_store_stamp(s, "a", &st) == ZF_OK && st.kind == ZF_STORE_DIR, "a prefix is a DIR");
    CHECK(zf_store_stamp(s, "a/c/99", &st) == ZF_ENOTFOUND && st.kind == ZF_STORE_ABSENT, "absent");
    CHECK(zf_store_stamp(s, "", &st) == ZF_OK && st.kind == ZF_STORE_DIR, "the root");
    CHECK(zf_store_list(s, "zz", 0, gather, &v, NULL, 0) == ZF_ENOTFOUND, "listing an absent prefix");
    /* odd names: signed and encoded alike */
    v = (seen){0};
    CHECK(zf_store_list(s, "b", 0, gather, &v, NULL, 0) == ZF_OK &&
              !strcmp(v.names, "sp ace+plus%&=.txt \xc3\xa9t\xc3\xa9"), "b: %s", v.names);
    CHECK(zf_store_read(s, "b/sp ace+plus%&=.txt", 100, &b, &n, NULL, err, sizeof err) == ZF_OK &&
              n == 8 && !memcmp(b.p, "odd name", 8), "a key with ' +%%&=': %s", err);
    CHECK(zf_store_read(s, "b/\xc3\xa9t\xc3\xa9", 100, &b, &n, NULL, err, sizeof err) == ZF_OK &&
              n == 7, "a UTF-8 key: %s", err);
    /* many ranges at once */
    uint8_t r[4][10];
    char e[4][200];
    zf_store_req q[4] = {{"a/c/1", 5, 10, r[0], e[0], 200, 0, NULL}, {"a/c/24", 110, 10, r[1], e[1], 200, 0, NULL},
                         {"a/c/77", 0, 10, r[2], e[2], 200, 0, NULL}, {"a/c/2", 100, 10, r[3], e[3], 200, 0, NULL}};
    int rc = zf_store_read_many(s, q, 4);
    CHECK(rc == ZF_ENOTFOUND && q[0].rc == ZF_OK && q[1].rc == ZF_OK && q[2].rc == ZF_ENOTFOUND &&
              q[3].rc == ZF_ECORRUPT, "read_many: %d %d %d %d", q[0].rc, q[1].rc, q[2].rc, q[3].rc);
    CHECK(r[0][0] == (1 * 7 + 5) % 251 && r[1][9] == (24 * 7 + 119) % 251, "the ranges' bytes");
    free(b.p);
    zf_store_close(s);
    CHECK(open_store("bkt", "st/a/c/3", 0, 0, &s, err, sizeof err) == ZF_ENOTFOUND &&
              strstr(err, "no keys"), "a prefix with no keys below: %s", err);
}

/* one of many threads on one store: reads, lists and stamps; failures counted */
static void *worker(void *arg)
{
    zf_store *s = arg;
    long bad = 0;
    zf_store_buf b = {0};
    for (int i = 0; i < 25; i++) {
        char key[32], err[256];
        size_t n = 0;
        snprintf(key, sizeof key, "a/c/%d", i);
        bad += zf_store_read(s, key, 1000, &b, &n, NULL, err, sizeof err) != ZF_OK || n != 100u + i;
        zf_stamp st;
        bad += zf_store_stamp(s, key, &st) != ZF_OK || st.size != 100u + i;
        if (i % 8 == 0) {
            seen v = {0};
            bad += zf_store_list(s, "a/c", 0, gather, &v, NULL, 0) != ZF_OK || v.n != 25;
        }
    }
    free(b.p);
    return (void *)bad;
}

static void test_threads(void)
{
    creds("AKTEST", "secret/Test+key=1", NULL);
    zf_store *s;
    char err[512];
    CHECK(open_store("bkt", "st", 10, 0, &s, err, sizeof err) == ZF_OK, "open: %s", err);
    if (!s)
        return;
    pthread_t t[8];
    long bad = 0;
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, s);
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    CHECK(bad == 0, "8 threads on one store: %ld failures", bad);
    zf_store_close(s);
}

static void test_refusals(void)
{
    zf_store *s;
    char err[512];
    creds("AKTEST", "wrong-secret-123", NULL);
    CHECK(open_store("bkt", "st", 0, 0, &s, err, sizeof err) == ZF_EIO &&
              strstr(err, "SignatureDoesNotMatch") && strstr(err, "403") &&
              !strstr(err, "wrong-secret-123"), "a wrong secret: %s", err);
    creds("AKNOBODY", "secret/Test+key=1", NULL);
    CHECK(open_store("bkt", "st", 0, 0, &s, err, sizeof err) == ZF_EIO &&
              strstr(err, "InvalidAccessKeyId"), "an unknown key: %s", err);
    creds("AKTOKEN", "tokensecret", "tok/en+1");
    CHECK(open_store("bkt", "st", 0, 0, &s, err, sizeof err) == ZF_OK, "a session token: %s", err);
    zf_store_close(s);
    creds("AKTOKEN", "tokensecret", NULL);
    CHECK(open_store("bkt", "st", 0, 0, &s, err, sizeof err) == ZF_EIO && strstr(err, "AccessDenied"),
          "the token left out: %s", err);
    creds(NULL, NULL, NULL);
    CHECK(open_store("public", "st", 0, 1, &s, err, sizeof err) == ZF_OK, "anonymous, public: %s", err);
    zf_store_close(s);
    CHECK(open_store("bkt", "st", 0, 1, &s, err, sizeof err) == ZF_EIO && strstr(err, "AccessDenied") &&
              strstr(err, "anonymous"), "anonymous, private: %s", err);
    creds("AKTEST", "secret/Test+key=1", NULL);
    CHECK(open_store("nobkt", "st", 0, 0, &s, err, sizeof err) == ZF_ENOTFOUND &&
              strstr(err, "NoSuchBucket"), "no such bucket: %s", err);
    CHECK(open_store("denyall", "st", 0, 0, &s, err, sizeof err) == ZF_EIO &&
              strstr(err, "AccessDenied"), "everything denied: %s", err);
    CHECK(open_store("deny", "st", 0, 0, &s, err, sizeof err) == ZF_OK, "listing denied: %s", err);
    if (s) {
        seen v = {0};
        zf_store_buf b = {0};
        size_t n;
        CHECK(zf_store_list(s, "", 0, gather, &v, NULL, 0) == ZF_EUNSUPPORTED, "no listing");
        CHECK(zf_store_read(s, "zarr.json", 100, &b, &n, NULL, err, sizeof err) == ZF_OK, "read: %s", err);
        free(b.p);
        zf_store_close(s);
    }
    CHECK(open_store("loop", "st", 2, 0, &s, err, sizeof err) == ZF_OK, "loop: %s", err);
    if (s) {
        seen v = {0};
        time_t t0 = time(NULL);
        CHECK(zf_store_list(s, "a/c", 0, gather, &v, NULL, 0) == ZF_EIO && time(NULL) - t0 < 30,
              "a server repeating its token is left (%zu entries)", v.n);
        zf_store_close(s);
    }
}

int main(void)
{
    test_addressing();
    if (net_server_start(&srv, "unit/s3_server.py") != 0) {
        fprintf(stderr, "test_s3: cannot start unit/s3_server.py\n");
        return 1;
    }
    snprintf(s3_endpoint, sizeof s3_endpoint, "http://127.0.0.1:%u", srv.port);
    const char *unset[] = {"AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                           "AWS_ENDPOINT_URL_S3", "ZF_S3_MAX_KEYS"};
    for (size_t i = 0; i < sizeof unset / sizeof *unset; i++)
        unsetenv(unset[i]);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
    char err[200];
    if (zf_net_global_init(err, sizeof err) != ZF_OK) {
        fprintf(stderr, "test_s3: %s\n", err);
        return 1;
    }
    zf_net_opts no = {0};
    if (zf_net_open(&no, &probe_net, err, sizeof err) != ZF_OK) {
        fprintf(stderr, "test_s3: %s\n", err);
        return 1;
    }
    test_listing();
    test_threads();
    test_refusals();
    zf_net_close(probe_net);
    net_server_stop(&srv);
    zf_net_global_cleanup();
    return check_summary("test_s3");
}
