/* test_s3.c - S3 addressing: virtual-hosted style on AWS, path style for
 * dotted bucket names and under a custom endpoint (with a base path, a
 * port, an IPv6 literal), and bucket names S3 cannot have. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "store/s3.h"

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

int main(void)
{
    expect("us-east-1", NULL, "my-bucket", "https://my-bucket.s3.us-east-1.amazonaws.com",
           "my-bucket.s3.us-east-1.amazonaws.com", "");
    expect("eu-west-3", NULL, "data.example.org", "https://s3.eu-west-3.amazonaws.com",
           "s3.eu-west-3.amazonaws.com", "/data.example.org");
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
    return check_summary("test_s3");
}
