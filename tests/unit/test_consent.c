/* test_consent.c - the outside locations a store may read: canonical forms,
 * prefix boundaries, and every way a URL could slip out of a prefix. */
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "store/consent.h"

static void canon(const char *url, const char *want)
{
    char out[256], err[128] = "";
    int rc = zf_consent_canonical(url, out, sizeof out, err, sizeof err);
    CHECK(rc == ZF_OK, "%s: %s", url, err);
    CHECK(rc != ZF_OK || strcmp(out, want) == 0, "%s: '%s', want '%s'", url, out, want);
}

static void refused(const char *url, const char *why)
{
    char out[256], err[128] = "";
    CHECK(zf_consent_canonical(url, out, sizeof out, err, sizeof err) == ZF_EINVAL, "%s: accepted", url);
    CHECK(strstr(err, why) != NULL, "%s: reason '%s', want '%s'", url, err, why);
}

static void container(const char *url, const char *want)
{
    char out[256];
    CHECK(zf_consent_container(url, out, sizeof out) == ZF_OK && strcmp(out, want) == 0,
          "%s: container '%s', want '%s'", url, out, want);
}

static void test_canonical(void)
{
    canon("/data/a.nc", "file:///data/a.nc");
    canon("file:///data/a.nc", "file:///data/a.nc");
    canon("file://localhost/data/a.nc", "file:///data/a.nc");
    canon("HTTPS://Host.Example:443/x/y?sig=1", "https://host.example/x/y");
    canon("http://h:80/x", "http://h/x");
    canon("http://h:8080/x", "http://h:8080/x");
    canon("https://[::1]:9000/x", "https://[::1]:9000/x");
    canon("s3://bucket/key/a", "s3://bucket/key/a");
    canon("s3a://bucket", "s3://bucket");
    canon("gcs://b/k", "gs://b/k");
    canon("abfs://c/k", "az://c/k");
    canon("s3://b/100%/x", "s3://b/100%/x"); /* S3 keys are literal */
    refused("ftp://h/x", "not a file:");
    refused("relative/path", "not a file:");
    refused("file://host/x", "with a host");
    refused("https://user:pw@h/x", "user information");
    refused("s3://b/x#frag", "fragment");
    refused("file:///data/../etc/shadow", "segment");
    refused("file:///data/%2e%2E/etc/shadow", "segment");
    refused("https://h/a/./b", "segment");
    refused("s3://b/a/../b", "segment");
    refused("https://h/a/%zz", "escape");
    refused("https://h:0/x", "port");
    refused("https://h:99999/x", "port");
    refused("https://:80/x", "no host");
    refused("s3:///x", "no bucket");
    refused("/data/a\nb", "control");
}

static void test_allows(void)
{
    char err[128] = "";
    zf_consent *c = zf_consent_new();
    CHECK(!zf_consent_allows(c, "s3://b/x"), "empty set allows nothing");
    CHECK(zf_consent_add_list(c, "s3://noaa-gefs-pds/,https://host/data,/local/dir/,,file:///one.nc", err,
                              sizeof err) == ZF_OK, "%s", err);
    CHECK(zf_consent_count(c) == 4, "count %zu", zf_consent_count(c));
    CHECK(strcmp(zf_consent_prefix(c, 2), "file:///local/dir/") == 0, "prefix 2");
    CHECK(zf_consent_allows(c, "s3://noaa-gefs-pds/gefs.20240101/x.grib2"), "bucket");
    CHECK(!zf_consent_allows(c, "s3://noaa-gefs-pds-evil/x"), "another bucket");
    CHECK(!zf_consent_allows(c, "s3://noaa-gefs-pds"), "the bucket without its slash is not under s3://noaa-gefs-pds/");
    CHECK(zf_consent_allows(c, "https://HOST:443/data/f.nc?x=1"), "host case, default port, query");
    CHECK(zf_consent_allows(c, "https://host/data"), "the prefix itself");
    CHECK(!zf_consent_allows(c, "https://host/database/f"), "a name that only starts with the prefix");
    CHECK(!zf_consent_allows(c, "http://host/data/f"), "another scheme");
    CHECK(!zf_consent_allows(c, "https://host:8443/data/f"), "another port");
    CHECK(!zf_consent_allows(c, "https://host/data/../secret"), "dot-dot");
    CHECK(!zf_consent_allows(c, "https://host/data/%2e%2e/secret"), "encoded dot-dot");
    CHECK(zf_consent_allows(c, "/local/dir/a.nc"), "bare path");
    CHECK(zf_consent_allows(c, "file:///local/dir/sub/a.nc"), "file URL below");
    CHECK(!zf_consent_allows(c, "file:///local/dirt/a.nc"), "sibling directory");
    CHECK(!zf_consent_allows(c, "file:///etc/shadow"), "elsewhere");
    CHECK(zf_consent_allows(c, "file:///one.nc"), "one file");
    CHECK(!zf_consent_allows(c, "file:///one.nc.bak"), "one file's neighbour");
    CHECK(!zf_consent_allows(NULL, "s3://noaa-gefs-pds/x"), "NULL set");
    CHECK(zf_consent_add(c, "https://u:p@h/", err, sizeof err) == ZF_EINVAL && !strstr(err, "u:p"),
          "user information refused without echoing it: %s", err);
    zf_consent_free(c);
}

static void test_container(void)
{
    container("s3://bucket/a/b.nc", "s3://bucket/");
    container("s3://bucket", "s3://bucket/");
    container("https://Host:8443/a/b", "https://host:8443/");
    container("/data/x/y.nc", "file:///data/x/");
    container("gcs://b/k", "gs://b/");
}

int main(void)
{
    test_canonical();
    test_allows();
    test_container();
    return check_summary("test_consent");
}
