/* test_sigv4.c - AWS Signature Version 4 against AWS's published vectors:
 * the aws-sig-v4-test-suite (service "service", 2015-08-30) and the S3
 * examples of "Signature Calculations for the Authorization Header:
 * Transferring Payload in a Single Chunk" (examplebucket, 2013-05-24). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "store/sigv4.h"

#define SUITE_TIME 1440938160 /* 20150830T123600Z */
#define S3_TIME 1369353600    /* 20130524T000000Z */
#define SUITE_AUTH "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
#define S3_AUTH "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "

static const zf_sigv4_cred suite_cred = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                         NULL, "us-east-1", "service"};
static const zf_sigv4_cred s3_cred = {"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                      NULL, "us-east-1", "s3"};

/* sign r with c and compare the Authorization line with want */
static void expect(const char *name, const zf_sigv4_cred *c, const zf_sigv4_req *r, const char *want)
{
    char **lines = NULL;
    int rc = zf_sigv4_sign(c, r, &lines);
    CHECK(rc == ZF_OK && lines && lines[0], "%s: rc %d", name, rc);
    if (rc == ZF_OK)
        CHECK(!strcmp(lines[0], want), "%s:\n  got  %s\n  want %s", name, lines[0], want);
    zf_sigv4_free(lines);
}

static void suite_get(const char *name, const char *path, const zf_sigv4_param *q, size_t nq,
                      const char *want)
{
    zf_sigv4_req r = {.method = "GET", .host = "example.amazonaws.com", .path = path,
                      .query = q, .nquery = nq, .time = SUITE_TIME};
    expect(name, &suite_cred, &r, want);
}

static void test_suite(void)
{
    suite_get("get-vanilla", "/", NULL, 0,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    zf_sigv4_param empty_key[] = {{"Param1", "value1"}};
    suite_get("get-vanilla-empty-query-key", "/", empty_key, 1,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb");
    zf_sigv4_param order_key[] = {{"Param1", "value2"}, {"Param1", "Value1"}};
    suite_get("get-vanilla-query-order-key", "/", order_key, 2,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1");
    zf_sigv4_param order_key_case[] = {{"Param2", "value2"}, {"Param1", "value1"}};
    suite_get("get-vanilla-query-order-key-case", "/", order_key_case, 2,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
    zf_sigv4_param order_value[] = {{"Param1", "value2"}, {"Param1", "value1"}};
    suite_get("get-vanilla-query-order-value", "/", order_value, 2,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694");
    const char *unres = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    zf_sigv4_param unreserved[] = {{unres, unres}};
    suite_get("get-vanilla-query-unreserved", "/", unreserved, 1,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197");
    zf_sigv4_param utf8q[] = {{"\xe1\x88\xb4", "bar"}};
    suite_get("get-vanilla-utf8-query", "/", utf8q, 1,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04");
    suite_get("get-unreserved",
              "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", NULL, 0,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f");
    suite_get("get-utf8", "/\xe1\x88\xb4", NULL, 0,
              SUITE_AUTH "SignedHeaders=host;x-amz-date, "
              "Signature=8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
}

static void test_suite_headers(void)
{
    zf_sigv4_param trim[] = {{"My-Header1", "value1"}, {"My-Header2", "\"a   b   c\""}};
    zf_sigv4_req r = {.method = "GET", .host = "example.amazonaws.com", .path = "/",
                      .headers = trim, .nheaders = 2, .time = SUITE_TIME};
    expect("get-header-value-trim", &suite_cred, &r,
           SUITE_AUTH "SignedHeaders=host;my-header1;my-header2;x-amz-date, "
           "Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736");
    zf_sigv4_param sort[] = {{"My-Header1", "  value1  "}};
    r = (zf_sigv4_req){.method = "POST", .host = "example.amazonaws.com", .path = "/",
                       .headers = sort, .nheaders = 1, .time = SUITE_TIME};
    expect("post-header-key-sort", &suite_cred, &r,
           SUITE_AUTH "SignedHeaders=host;my-header1;x-amz-date, "
           "Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c");
    zf_sigv4_param vcase[] = {{"My-Header1", "VALUE1"}};
    r.headers = vcase;
    expect("post-header-value-case", &suite_cred, &r,
           SUITE_AUTH "SignedHeaders=host;my-header1;x-amz-date, "
           "Signature=cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d");
    r.headers = NULL;
    r.nheaders = 0;
    expect("post-vanilla", &suite_cred, &r,
           SUITE_AUTH "SignedHeaders=host;x-amz-date, "
           "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
    zf_sigv4_param nonunres[] = {{"@#$%^", ""}, {"+", "/,?><`\";:\\|][{}"}};
    r.query = nonunres;
    r.nquery = 2;
    expect("post-vanilla-query-nonunreserved", &suite_cred, &r,
           SUITE_AUTH "SignedHeaders=host;x-amz-date, "
           "Signature=66c82657c86e26fb25238d0e69f011edc4c6df5ae71119d7cb98ed9b87393c1e");
}

static void test_suite_token(void)
{
    const char *token =
        "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIe"
        "oIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0w"
        "q5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDryp"
        "NC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";
    zf_sigv4_cred c = suite_cred;
    c.session_token = token;
    zf_sigv4_req r = {.method = "POST", .host = "example.amazonaws.com", .path = "/",
                      .time = SUITE_TIME};
    expect("post-sts-header-before", &c, &r,
           SUITE_AUTH "SignedHeaders=host;x-amz-date;x-amz-security-token, "
           "Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead");
    char **lines = NULL;
    CHECK(zf_sigv4_sign(&c, &r, &lines) == ZF_OK, "sign with a token");
    int saw = 0;
    for (size_t i = 0; lines && lines[i]; i++) {
        if (!strncmp(lines[i], "x-amz-security-token: ", 22))
            saw = !strcmp(lines[i] + 22, token);
        CHECK(!strstr(lines[i], c.secret_key), "the secret key is sent: %s", lines[i]);
    }
    CHECK(saw, "the session token is sent as x-amz-security-token");
    zf_sigv4_free(lines);
}

/* the S3 examples: GET Object (ranged, range signed), GET lifecycle, ListObjects */
static void test_s3_examples(void)
{
    zf_sigv4_param range[] = {{"Range", "bytes=0-9"}};
    zf_sigv4_req r = {.method = "GET", .host = "examplebucket.s3.amazonaws.com", .path = "/test.txt",
                      .headers = range, .nheaders = 1, .content_sha256 = 1, .time = S3_TIME};
    expect("s3 GET Object", &s3_cred, &r,
           S3_AUTH "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
           "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    zf_sigv4_param lifecycle[] = {{"lifecycle", ""}};
    r = (zf_sigv4_req){.method = "GET", .host = "examplebucket.s3.amazonaws.com", .path = "/",
                       .query = lifecycle, .nquery = 1, .content_sha256 = 1, .time = S3_TIME};
    expect("s3 GET Bucket Lifecycle", &s3_cred, &r,
           S3_AUTH "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
           "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    zf_sigv4_param list[] = {{"prefix", "J"}, {"max-keys", "2"}};
    r.query = list;
    r.nquery = 2;
    expect("s3 GET Bucket (List Objects)", &s3_cred, &r,
           S3_AUTH "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
           "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    char **lines = NULL;
    CHECK(zf_sigv4_sign(&s3_cred, &r, &lines) == ZF_OK && lines[1] && lines[2] && !lines[3],
          "three lines without a token");
    CHECK(lines && !strcmp(lines[1], "x-amz-date: 20130524T000000Z"), "%s", lines ? lines[1] : "");
    CHECK(lines && !strcmp(lines[2], "x-amz-content-sha256: " ZF_SIGV4_EMPTY_SHA256), "%s",
          lines ? lines[2] : "");
    zf_sigv4_free(lines);
}

/* a day's signing key gives the same signatures; another day's is not used */
static void test_day_key(void)
{
    zf_sigv4_key k, other;
    CHECK(zf_sigv4_derive(&s3_cred, S3_TIME + 3600, &k) == ZF_OK && !strcmp(k.day, "20130524"),
          "the day of the key: %s", k.day);
    CHECK(zf_sigv4_derive(&s3_cred, S3_TIME - 1, &other) == ZF_OK && !strcmp(other.day, "20130523"),
          "the day before: %s", other.day);
    zf_sigv4_param range[] = {{"Range", "bytes=0-9"}};
    zf_sigv4_req r = {.method = "GET", .host = "examplebucket.s3.amazonaws.com", .path = "/test.txt",
                      .headers = range, .nheaders = 1, .content_sha256 = 1, .time = S3_TIME,
                      .key = &k};
    const char *want = S3_AUTH "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                       "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
    expect("s3 GET Object with the day's key", &s3_cred, &r, want);
    r.key = &other;
    expect("s3 GET Object with another day's key (not used)", &s3_cred, &r, want);
    zf_sigv4_cred wrong = s3_cred;
    wrong.secret_key = "not the secret";
    CHECK(zf_sigv4_derive(&wrong, S3_TIME, &k) == ZF_OK, "derive");
    r.key = &k;
    char **lines = NULL;
    CHECK(zf_sigv4_sign(&s3_cred, &r, &lines) == ZF_OK && !strstr(lines[0], "f0e8bdb87c96"),
          "the key given is the key used");
    zf_sigv4_free(lines);
}

static void test_encoding(void)
{
    zf_sbuf b = {0};
    zf_sigv4_path(&b, "/a b/c+d/\xc3\xa9/x~y.z_-/");
    CHECK(b.data && !strcmp(b.data, "/a%20b/c%2Bd/%C3%A9/x~y.z_-/"), "path: %s", b.data);
    free(b.data);
    b = (zf_sbuf){0};
    zf_sigv4_param q[] = {{"prefix", "store.zarr/a b/"}, {"delimiter", "/"}, {"list-type", "2"},
                          {"continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="}};
    zf_sigv4_query(&b, q, 4);
    CHECK(b.data && !strcmp(b.data, "continuation-token=1ueGcxLPRx1Tr%2FXYExHnhbYLgveDs2J%2Fwm36Hy4vbOwM%3D"
                                    "&delimiter=%2F&list-type=2&prefix=store.zarr%2Fa%20b%2F"),
          "query: %s", b.data);
    free(b.data);
}

static void test_refusals(void)
{
    char **lines = (char **)1;
    zf_sigv4_param bad[] = {{"X-Evil", "a\r\nHost: other"}};
    zf_sigv4_req r = {.method = "GET", .host = "h", .path = "/", .headers = bad, .nheaders = 1,
                      .time = S3_TIME};
    CHECK(zf_sigv4_sign(&s3_cred, &r, &lines) == ZF_EINVAL && !lines, "CR LF in a header value");
    zf_sigv4_param dup[] = {{"X-Amz-Date", "20000101T000000Z"}};
    r.headers = dup;
    CHECK(zf_sigv4_sign(&s3_cred, &r, &lines) == ZF_EINVAL, "a header signed twice");
    zf_sigv4_param badname[] = {{"a b", "x"}};
    r.headers = badname;
    CHECK(zf_sigv4_sign(&s3_cred, &r, &lines) == ZF_EINVAL, "a space in a header name");
    r.headers = NULL;
    r.nheaders = 0;
    r.payload_hash = "abc";
    CHECK(zf_sigv4_sign(&s3_cred, &r, &lines) == ZF_EINVAL, "a payload hash of the wrong length");
}

int main(void)
{
    test_suite();
    test_suite_headers();
    test_suite_token();
    test_s3_examples();
    test_day_key();
    test_encoding();
    test_refusals();
    return check_summary("test_sigv4");
}
