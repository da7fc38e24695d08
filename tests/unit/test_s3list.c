/* test_s3list.c - ListObjectsV2 pages and S3 error documents: pages as AWS
 * and versitygw write them, paging fields, and hostile documents (DTDs and
 * entity bombs, deep nesting, huge texts, wrong roots, malformed XML). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "store/s3list.h"
#include "store/store.h"

static const char page1[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>bucket</Name><Prefix>store.zarr/</Prefix><KeyCount>3</KeyCount><MaxKeys>3</MaxKeys>"
    "<Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>"
    "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"
    "<Contents><Key>store.zarr/.zattrs</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
    "<ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size>"
    "<StorageClass>STANDARD</StorageClass><Owner><ID>abc</ID><DisplayName>x</DisplayName></Owner></Contents>\n"
    "  <Contents>\n    <Key>store.zarr/zarr.json</Key>\n"
    "    <LastModified>2024-02-29T23:59:59.123456789Z</LastModified>\n"
    "    <ETag>\"0e3b6a1f-2\"</ETag>\n    <Size>0</Size>\n  </Contents>\n"
    "<CommonPrefixes><Prefix>store.zarr/a b &amp; c/</Prefix></CommonPrefixes>"
    "</ListBucketResult>";

static const char page2[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    "<ListBucketResult><Name>b</Name><Prefix></Prefix><KeyCount>1</KeyCount>"
    "<IsTruncated>false</IsTruncated>"
    "<Contents><Key>\xc3\xa9t\xc3\xa9</Key><Size>18446744073709551615</Size></Contents>"
    "<ContinuationToken>abc</ContinuationToken></ListBucketResult>";

static void test_pages(void)
{
    zf_s3list_page p;
    char err[256] = "";
    CHECK(zf_s3list_parse(page1, sizeof page1 - 1, &p, err, sizeof err) == ZF_OK, "page1: %s", err);
    CHECK(p.n == 3 && p.truncated && p.key_count == 3, "page1: %zu entries", p.n);
    CHECK(p.next_token && !strcmp(p.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="),
          "token");
    if (p.n == 3) {
        CHECK(!strcmp(p.items[0].key, "store.zarr/.zattrs") && !p.items[0].prefix &&
                  p.items[0].size == 434234 && p.items[0].mtime_ns == 1255369830LL * 1000000000 &&
                  !strcmp(p.items[0].etag, "\"fba9dede5f27731c9771645a39863328\""),
              "first object: %s %s", p.items[0].key, p.items[0].etag);
        CHECK(!strcmp(p.items[1].key, "store.zarr/zarr.json") && p.items[1].size == 0 &&
                  p.items[1].mtime_ns == 1709251199LL * 1000000000 + 123456789,
              "second object, whitespace between elements, ns: %lld",
              (long long)p.items[1].mtime_ns);
        CHECK(p.items[2].prefix && !strcmp(p.items[2].key, "store.zarr/a b & c/") && !p.items[2].etag,
              "common prefix: %s", p.items[2].key);
    }
    zf_s3list_page_free(&p);
    CHECK(zf_s3list_parse(page2, sizeof page2 - 1, &p, err, sizeof err) == ZF_OK, "page2: %s", err);
    CHECK(p.n == 1 && !p.truncated && !p.next_token && p.items[0].size == UINT64_MAX &&
              !strcmp(p.items[0].key, "\xc3\xa9t\xc3\xa9"),
          "last page, UTF-8 key, largest size");
    zf_s3list_page_free(&p);
    const char empty[] = "<ListBucketResult><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated>"
                         "</ListBucketResult>";
    CHECK(zf_s3list_parse(empty, sizeof empty - 1, &p, err, sizeof err) == ZF_OK && p.n == 0 &&
              p.key_count == 0, "an empty page");
    zf_s3list_page_free(&p);
}

/* a hostile or broken document must be refused with a reason */
static void refuse(const char *name, const char *xml, size_t len, const char *why)
{
    zf_s3list_page p;
    char err[256] = "";
    int rc = zf_s3list_parse(xml, len, &p, err, sizeof err);
    CHECK(rc == ZF_ECORRUPT && strstr(err, why), "%s: rc %d, %s", name, rc, err);
    zf_s3list_page_free(&p);
}

static void test_hostile(void)
{
    const char laughs[] =
        "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        "<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"
        "<!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">]>"
        "<ListBucketResult><Contents><Key>&lol2;</Key></Contents></ListBucketResult>";
    refuse("billion laughs", laughs, sizeof laughs - 1, "DTD");
    const char ext[] = "<?xml version=\"1.0\"?><!DOCTYPE x SYSTEM \"file:///etc/passwd\">"
                       "<ListBucketResult/>";
    refuse("external DTD", ext, sizeof ext - 1, "DTD");
    const char undef[] = "<ListBucketResult><Contents><Key>&xxe;</Key></Contents></ListBucketResult>";
    refuse("undefined entity", undef, sizeof undef - 1, "malformed XML");
    const char wrong[] = "<Error><Code>AccessDenied</Code></Error>";
    refuse("an error document", wrong, sizeof wrong - 1, "not a ListBucketResult");
    const char trunc[] = "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>";
    refuse("truncated without a token", trunc, sizeof trunc - 1, "NextContinuationToken");
    const char cut[] = "<ListBucketResult><Contents><Key>a</Key>";
    refuse("cut short", cut, sizeof cut - 1, "malformed XML");
    const char nokey[] = "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>";
    refuse("no key", nokey, sizeof nokey - 1, "without a key");
    const char badsize[] = "<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents>"
                           "</ListBucketResult>";
    refuse("negative size", badsize, sizeof badsize - 1, "Size");
    const char bigsize[] = "<ListBucketResult><Contents><Key>a</Key><Size>18446744073709551616</Size>"
                           "</Contents></ListBucketResult>";
    refuse("size overflow", bigsize, sizeof bigsize - 1, "Size");
    const char twice[] = "<ListBucketResult><Contents><Key>a</Key><Key>b</Key></Contents>"
                         "</ListBucketResult>";
    refuse("a key twice", twice, sizeof twice - 1, "twice");
    const char badtime[] = "<ListBucketResult><Contents><Key>a</Key><LastModified>yesterday"
                           "</LastModified></Contents></ListBucketResult>";
    refuse("bad time", badtime, sizeof badtime - 1, "LastModified");
    const char nul[] = "<ListBucketResult>\0</ListBucketResult>";
    refuse("a NUL byte", nul, sizeof nul - 1, "malformed XML");

    /* deep nesting, a key longer than ZF_KEY_MAX, and too many entries */
    size_t cap = 64 * 1024 * 1024;
    char *b = malloc(cap);
    int n = snprintf(b, cap, "<ListBucketResult>");
    for (int i = 0; i < 100; i++)
        n += snprintf(b + n, cap - (size_t)n, "<a>");
    refuse("deep nesting", b, (size_t)n, "nested too deeply");
    n = snprintf(b, cap, "<ListBucketResult><Contents><Key>");
    memset(b + n, 'k', ZF_KEY_MAX);
    n += ZF_KEY_MAX;
    n += snprintf(b + n, cap - (size_t)n, "</Key></Contents></ListBucketResult>");
    refuse("a huge key", b, (size_t)n, "longer than a key");
    n = snprintf(b, cap, "<ListBucketResult><NextContinuationToken>");
    memset(b + n, 't', 10000);
    n += 10000;
    n += snprintf(b + n, cap - (size_t)n, "</NextContinuationToken></ListBucketResult>");
    refuse("a huge token", b, (size_t)n, "too long");
    n = snprintf(b, cap, "<ListBucketResult>");
    for (int i = 0; i <= ZF_S3LIST_ITEMS; i++)
        n += snprintf(b + n, cap - (size_t)n, "<CommonPrefixes><Prefix>p%d/</Prefix></CommonPrefixes>", i);
    n += snprintf(b + n, cap - (size_t)n, "</ListBucketResult>");
    refuse("too many entries", b, (size_t)n, "more entries");
    free(b);
}

static void test_errors(void)
{
    char code[64], msg[128];
    const char denied[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>"
        "<Message>The request signature we calculated does not match the signature you provided."
        "</Message><AWSAccessKeyId>AKIA</AWSAccessKeyId><StringToSign>x</StringToSign>"
        "<RequestId>4442587FB7D0A2F9</RequestId></Error>";
    CHECK(zf_s3list_error(denied, sizeof denied - 1, code, sizeof code, msg, sizeof msg) == ZF_OK &&
              !strcmp(code, "SignatureDoesNotMatch") && !strncmp(msg, "The request signature", 21),
          "SignatureDoesNotMatch: %s / %s", code, msg);
    const char nob[] = "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not "
                       "exist\nat all</Message><BucketName>x</BucketName></Error>";
    CHECK(zf_s3list_error(nob, sizeof nob - 1, code, 8, msg, sizeof msg) == ZF_OK &&
              !strcmp(code, "NoSuchB") && strstr(msg, "exist?at all"),
          "cut to fit, newline replaced: %s / %s", code, msg);
    CHECK(zf_s3list_error(page1, sizeof page1 - 1, code, sizeof code, msg, sizeof msg) == ZF_ECORRUPT &&
              !code[0] && !msg[0], "a page is not an error document");
    const char html[] = "<html><body>502 Bad Gateway</body></html>";
    CHECK(zf_s3list_error(html, sizeof html - 1, code, sizeof code, msg, sizeof msg) == ZF_ECORRUPT,
          "an HTML error page");
    CHECK(zf_s3list_error("", 0, code, sizeof code, msg, sizeof msg) == ZF_ECORRUPT, "no body");
}

static void test_times(void)
{
    int64_t ns;
    CHECK(zf_s3list_time("1970-01-01T00:00:00Z", &ns) == ZF_OK && ns == 0, "epoch");
    CHECK(zf_s3list_time("2013-05-24T00:00:00.5+00:00", &ns) == ZF_OK &&
              ns == 1369353600LL * 1000000000 + 500000000, "+00:00 and a fraction");
    CHECK(zf_s3list_time("2013-05-24 00:00:00Z", &ns) == ZF_ECORRUPT, "a space");
    CHECK(zf_s3list_time("2013-13-24T00:00:00Z", &ns) == ZF_ECORRUPT, "month 13");
    CHECK(zf_s3list_time("2013-05-24T00:00:00+02:00", &ns) == ZF_ECORRUPT, "other zones");
    CHECK(zf_s3list_time("3435-10-12T17:50:30.000Z", &ns) == ZF_ECORRUPT, "past 2262 (ns overflow)");
    CHECK(zf_s3list_time("2262-04-11T23:47:15.999Z", &ns) == ZF_OK && ns == 9223372035999000000,
          "the last whole second that fits: %lld", (long long)ns);
}

int main(void)
{
    test_pages();
    test_hostile();
    test_errors();
    test_times();
    return check_summary("test_s3list");
}
