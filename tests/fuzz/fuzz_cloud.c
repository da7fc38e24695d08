/* fuzz_cloud.c - libFuzzer target: what cloud credential sources and
 * storage services answer, parsed.
 *
 * The first input byte (mod 5) picks the parser, the rest is the answer:
 *   0  an AWS STS AssumeRole* answer (XML): zf_aws_sts_parse
 *   1  an AWS credentials JSON document (container, instance metadata,
 *      credential_process; and as SSO's roleCredentials): zf_aws_creds_parse
 *   2  a Google OAuth token answer (token endpoint, metadata server) and an
 *      OAuth or API error: zf_gcs_token_parse, zf_gcs_oauth_error
 *   3  a GCS objects.list page and an object resource (JSON):
 *      zf_gcs_list_parse, zf_gcs_object_parse
 *   4  an Azure List Blobs page (XML): zf_azlist_parse
 * Every result is checked for what its callers rely on: success or one of
 * the documented errors with a reason; a value has its key id and secret
 * (AWS) or a header-safe token (Google) and an expiry after now; a page's
 * names are non-empty and shorter than ZF_KEY_MAX, within the entry bound,
 * its token non-empty when present; reasons fit their buffers and carry no
 * control characters.
 *
 * Build: scripts/fuzz (or CMake with -DZF_FUZZ=ON, clang). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "store/azure.h"
#include "store/gcs.h"
#include "store/gcscred.h"
#include "store/s3cred.h"
#include "store/store.h"

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz_cloud: check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                                \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* a reason: NUL-terminated within its buffer (cap bytes) */
static void check_reason(const char *err, size_t cap, int rc)
{
    CHECK(strnlen(err, cap) < cap);
    if (rc != ZF_OK && rc != ZF_ENOMEM)
        CHECK(err[0] != '\0');
}

static void aws_sts(const char *doc, size_t n)
{
    zf_cred_value v = {0};
    char err[160] = "";
    int rc = zf_aws_sts_parse(doc, n, "AssumeRole", &v, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_EIO || rc == ZF_ENOMEM);
    check_reason(err, sizeof err, rc);
    if (rc == ZF_OK)
        CHECK(v.id && v.secret);
    zf_cred_value_clear(&v);
}

static void aws_json(const char *doc)
{
    for (int sso = 0; sso < 2; sso++) {
        zf_cred_value v = {0};
        char err[160] = "";
        int rc = zf_aws_creds_parse(doc, sso, &v, err, sizeof err);
        CHECK(rc == ZF_OK || rc == ZF_EIO || rc == ZF_ENOMEM);
        check_reason(err, sizeof err, rc);
        if (rc == ZF_OK)
            CHECK(v.id && v.secret && v.id[0] && v.secret[0]);
        zf_cred_value_clear(&v);
    }
}

static void gcs_token(const char *doc)
{
    zf_cred_value v = {0};
    char err[160] = "";
    int64_t now = (int64_t)time(NULL);
    int rc = zf_gcs_token_parse(doc, now, "token endpoint", &v, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_EIO || rc == ZF_ENOMEM);
    check_reason(err, sizeof err, rc);
    if (rc == ZF_OK) {
        CHECK(v.token && v.token[0] && v.expires > now && !v.id && !v.secret);
        for (const char *p = v.token; *p; p++)
            CHECK((unsigned char)*p > ' ' && (unsigned char)*p < 0x7f);
    }
    zf_cred_value_clear(&v);
    for (size_t cap = 1; cap <= 301; cap += 50) {
        char *e = malloc(cap);
        if (!e)
            return;
        snprintf(e, cap, "HTTP 400");
        zf_gcs_oauth_error(doc, e, cap);
        CHECK(strnlen(e, cap) < cap);
        for (const char *p = e; *p; p++)
            CHECK((unsigned char)*p >= ' ' && *p != 0x7f);
        free(e);
    }
}

static void gcs_list(const char *doc, size_t n)
{
    zf_gcs_page pg;
    char err[160] = "";
    int rc = zf_gcs_list_parse(doc, n, &pg, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ECORRUPT || rc == ZF_ENOMEM);
    check_reason(err, sizeof err, rc);
    if (rc == ZF_OK) {
        CHECK(pg.n <= ZF_GCS_PAGE_ITEMS);
        CHECK(!pg.next_token || pg.next_token[0]);
        for (size_t i = 0; i < pg.n; i++) {
            const zf_gcs_item *it = &pg.items[i];
            CHECK(it->name && it->name[0] && strlen(it->name) < ZF_KEY_MAX);
            CHECK(it->prefix ? !it->size && !it->generation[0] : it->generation[0] != '\0');
        }
    }
    zf_gcs_page_free(&pg);
    zf_stamp st = {0};
    rc = zf_gcs_object_parse(doc, n, &st, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ECORRUPT);
    if (rc == ZF_OK)
        CHECK(st.kind == ZF_STORE_FILE && (st.tag.a || st.tag.b));
}

static void az_list(const char *doc, size_t n)
{
    zf_s3list_page pg;
    char err[160] = "";
    int rc = zf_azlist_parse(doc, n, &pg, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ECORRUPT || rc == ZF_ENOMEM);
    check_reason(err, sizeof err, rc);
    if (rc == ZF_OK) {
        CHECK(pg.n <= ZF_S3LIST_ITEMS);
        CHECK(pg.truncated == (pg.next_token != NULL));
        CHECK(!pg.next_token || pg.next_token[0]);
        for (size_t i = 0; i < pg.n; i++) {
            const zf_s3list_item *it = &pg.items[i];
            CHECK(it->key && it->key[0] && strlen(it->key) < ZF_KEY_MAX);
        }
    }
    zf_s3list_page_free(&pg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    size_t n = size - 1;
    char *doc = malloc(n + 1); /* the JSON parsers get a terminator, the others lengths too */
    if (!doc)
        return 0;
    memcpy(doc, data + 1, n);
    doc[n] = '\0';
    switch (data[0] % 5) {
    case 0: aws_sts(doc, n); break;
    case 1: aws_json(doc); break;
    case 2: gcs_token(doc); break;
    case 3: gcs_list(doc, n); break;
    default: az_list(doc, n); break;
    }
    free(doc);
    return 0;
}
