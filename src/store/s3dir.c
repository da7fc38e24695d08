/* s3dir.c - listing an S3 store: ListObjectsV2 pages (prefix, delimiter
 * '/', continuation tokens) turned into store entries, and prefixes as
 * directories. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/s3_impl.h"

/* Largest ListObjectsV2 answer read (1000 keys of 4 KiB fit). */
#define PAGE_MAX (16u << 20)
/* Most pages one listing reads before it gives up (a server looping on tokens). */
#define PAGES_MAX 1000000u

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

int zf_s3i_list_page(const s3 *x, const char *full, const char *token, unsigned max_keys,
                     zf_store_buf *buf, zf_s3list_page *page, char *err, size_t errcap,
                     char *code)
{
    char mk[16];
    snprintf(mk, sizeof mk, "%u", max_keys);
    zf_sigv4_param q[5] = {{"list-type", "2"}, {"prefix", full}, {"delimiter", "/"},
                           {"max-keys", mk}, {"continuation-token", token}};
    *page = (zf_s3list_page){0};
    char nerr[160] = "";
    zf_net_req r;
    for (int tries = 0; tries < 2; tries++) {
        prep p;
        int rc = zf_s3i_prep(x, "GET", NULL, q, token ? 5 : 4, &p, err, errcap);
        if (rc != ZF_OK)
            return rc;
        r = (zf_net_req){.url = p.url, .headers = p.hdrs, .grow = buf, .max = PAGE_MAX,
                         .err = nerr, .errcap = sizeof nerr};
        zf_net_run(x->net, &r, 1);
        int retry = !tries && r.rc != ZF_OK && zf_s3i_expired(&p, r.status, buf->p, r.n);
        zf_s3i_prep_free(&p);
        if (!retry)
            break;
    }
    if (r.rc != ZF_OK) {
        zf_s3i_reason(nerr, r.status >= 300 ? buf->p : NULL, r.n, err, errcap, code);
        return r.rc == ZF_ENOMEM || r.rc == ZF_ENOTFOUND ? r.rc : ZF_EIO; /* (404: NoSuchBucket) */
    }
    char why[200] = "";
    int rc = zf_s3list_parse((const char *)buf->p, r.n, page, why, sizeof why);
    return rc == ZF_OK || rc == ZF_ENOMEM ? rc : ERR(ZF_EIO, "not a ListObjectsV2 page: %s", why);
}

char *zf_s3i_full_prefix(const s3 *x, const char *prefix)
{
    size_t n = strlen(x->prefix) + strlen(prefix) + 2;
    char *f = malloc(n);
    if (f)
        snprintf(f, n, "%s%s%s", x->prefix, prefix, *prefix ? "/" : "");
    return f;
}

/* hand one page's entries to fn; *seen counts every entry (even skipped) */
static int list_emit(const zf_s3list_page *pg, size_t skip, zf_store_list_fn fn, void *ctx,
                     size_t *seen)
{
    for (size_t i = 0; i < pg->n; i++) {
        zf_s3list_item *it = &pg->items[i];
        (*seen)++;
        zf_stamp st = {.kind = ZF_STORE_DIR};
        if (!it->prefix)
            zf_s3i_file_stamp(&st, it->size, it->mtime_ns, it->etag);
        int stop = zf_store_list_key(it->key, skip, &st, fn, ctx);
        if (stop)
            return stop;
    }
    return ZF_OK;
}

/* page number pages of a listing failed: say which (the first has no number) */
static int page_failed(int rc, unsigned pages, const char *why, char *err, size_t errcap)
{
    if (pages)
        return ERR(rc, "page %u of the listing: %s", pages + 1, why);
    return ERR(rc, "%s", why);
}

/* every page in turn: complete (ZF_OK, or ZF_ENOTFOUND when nothing is
 * under the prefix), or an error (store.h) */
int zf_s3i_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                void *ctx, char *err, size_t errcap)
{
    const s3 *x = s->impl;
    if (!x->can_list)
        return ZF_EUNSUPPORTED;
    char *full = zf_s3i_full_prefix(x, prefix), *token = NULL;
    if (!full)
        return ZF_ENOMEM;
    zf_store_buf buf = {0};
    size_t seen = 0;
    int rc = ZF_OK;
    for (unsigned pages = 0;; pages++) {
        zf_s3list_page pg = {0};
        char why[320] = "more than a million pages";
        rc = pages < PAGES_MAX
                 ? zf_s3i_list_page(x, full, token, x->max_keys, &buf, &pg, why, sizeof why, NULL)
                 : ZF_EIO;
        if (rc != ZF_OK) /* a 404 after pages came: not "nothing there" */
            rc = page_failed(rc == ZF_ENOTFOUND && pages ? ZF_EIO : rc, pages, why, err, errcap);
        if (rc == ZF_OK)
            rc = list_emit(&pg, strlen(full), fn, ctx, &seen);
        int more = rc == ZF_OK && pg.truncated;
        if (more && token && !strcmp(token, pg.next_token)) {
            rc = page_failed(ZF_EIO, pages, "the same continuation token again", err, errcap);
            more = 0;
        }
        free(token);
        token = more ? pg.next_token : NULL;
        if (more)
            pg.next_token = NULL;
        zf_s3list_page_free(&pg);
        if (!more)
            break;
    }
    free(token);
    free(full);
    free(buf.p);
    if (rc == ZF_OK && !seen)
        rc = ZF_ENOTFOUND; /* S3 has no empty directories: nothing under it, no prefix */
    return rc;
}

int zf_s3i_dir_stamp(const s3 *x, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    if (!x->can_list)
        return ZF_ENOTFOUND;
    char *full = zf_s3i_full_prefix(x, key);
    if (!full)
        return ZF_ENOMEM;
    zf_store_buf buf = {0};
    zf_s3list_page pg;
    int rc = zf_s3i_list_page(x, full, NULL, 1, &buf, &pg, err, errcap, NULL);
    if (rc == ZF_OK && !pg.n)
        rc = ZF_ENOTFOUND;
    if (rc == ZF_OK)
        st->kind = ZF_STORE_DIR;
    zf_s3list_page_free(&pg);
    free(buf.p);
    free(full);
    return rc;
}
