/* fuzz_s3list.c - libFuzzer target: what an S3 server answers, parsed.
 *
 * The input is one XML document (from a hostile or broken server).  It is
 * parsed as a ListObjectsV2 page and as an error document.  A page that
 * parses must be consistent: at most ZF_S3LIST_ITEMS entries, every key
 * non-empty and shorter than ZF_KEY_MAX, a common prefix without size, ETag
 * or time, a truncated page with a continuation token, KeyCount -1 or at
 * most the bound.  The error parse writes NUL-terminated texts within its
 * (exact-size heap) buffers, without control characters, and both empty
 * when it fails.  The LastModified parser gets the input as a string too.
 *
 * Build: scripts/fuzz (or CMake with -DZF_FUZZ=ON, clang). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/s3list.h"
#include "store/store.h"

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz_s3list: check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                                \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

static void check_page(const char *xml, size_t n)
{
    zf_s3list_page p;
    char err[200];
    int rc = zf_s3list_parse(xml, n, &p, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ECORRUPT || rc == ZF_ENOMEM);
    if (rc == ZF_ECORRUPT)
        CHECK(strlen(err) > 0 && strlen(err) < sizeof err);
    if (rc == ZF_OK) {
        CHECK(p.n <= ZF_S3LIST_ITEMS);
        CHECK(!p.truncated || p.next_token);
        CHECK(p.key_count >= -1 && p.key_count <= ZF_S3LIST_ITEMS);
        for (size_t i = 0; i < p.n; i++) {
            const zf_s3list_item *it = &p.items[i];
            CHECK(it->key && it->key[0] && strlen(it->key) < ZF_KEY_MAX);
            if (it->prefix)
                CHECK(!it->size && !it->etag && !it->mtime_ns);
        }
    }
    zf_s3list_page_free(&p);
}

static void check_error(const char *xml, size_t n, size_t cap)
{
    char *code = malloc(cap), *msg = malloc(cap);
    if (!code || !msg) {
        free(code);
        free(msg);
        return;
    }
    int rc = zf_s3list_error(xml, n, code, cap, msg, cap);
    CHECK(rc == ZF_OK || rc == ZF_ECORRUPT || rc == ZF_ENOMEM);
    CHECK(strlen(code) < cap && strlen(msg) < cap);
    for (const char *s = code; *s; s++)
        CHECK((unsigned char)*s >= ' ' && *s != 0x7f);
    for (const char *s = msg; *s; s++)
        CHECK((unsigned char)*s >= ' ' && *s != 0x7f);
    if (rc != ZF_OK)
        CHECK(!code[0] && !msg[0]);
    else
        CHECK(cap == 1 || code[0]);
    free(code);
    free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *xml = malloc(size ? size : 1); /* no terminator: the parsers get lengths */
    if (!xml)
        return 0;
    if (size)
        memcpy(xml, data, size);
    check_page(xml, size);
    check_error(xml, size, 1);
    check_error(xml, size, 9);
    check_error(xml, size, 300);
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
        int64_t ns;
        int rc = zf_s3list_time(s, &ns);
        CHECK(rc == ZF_OK || rc == ZF_ECORRUPT);
        free(s);
    }
    free(xml);
    return 0;
}
