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

/* one listing's pages (zf_store_list_pages) */
typedef struct lister {
    const s3 *x;
    char *full; /* the listed prefix (owned) */
    zf_store_buf buf;
    zf_s3list_page pg;
} lister;

static int page_read(void *ctx, unsigned page, const char *token, char **next, char *why,
                     size_t whycap)
{
    lister *l = ctx;
    int rc = zf_s3i_list_page(l->x, l->full, token, l->x->max_keys, &l->buf, &l->pg, why, whycap,
                              NULL);
    if (rc == ZF_OK && l->pg.truncated) {
        *next = l->pg.next_token;
        l->pg.next_token = NULL;
    }
    return rc;
}

/* hand the page's entries to fn; *seen counts every entry (even skipped) */
static int page_emit(void *ctx, zf_store_list_fn fn, void *fnctx, size_t *seen)
{
    const lister *l = ctx;
    size_t skip = strlen(l->full);
    for (size_t i = 0; i < l->pg.n; i++) {
        zf_s3list_item *it = &l->pg.items[i];
        (*seen)++;
        zf_stamp st = {.kind = ZF_STORE_DIR};
        if (!it->prefix)
            zf_s3i_file_stamp(&st, it->size, it->mtime_ns, it->etag);
        int stop = fn ? zf_store_list_key(it->key, skip, &st, fn, fnctx) : 0;
        if (stop)
            return stop;
    }
    return ZF_OK;
}

static void page_done(void *ctx)
{
    zf_s3list_page_free(&((lister *)ctx)->pg);
}

static const zf_store_pages s3_pages = {page_read, page_emit, page_done, "continuation token"};

/* every page in turn: complete (ZF_OK, or ZF_ENOTFOUND when nothing is
 * under the prefix), or an error (store.h) */
int zf_s3i_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                void *ctx, char *err, size_t errcap)
{
    const s3 *x = s->impl;
    if (!x->can_list)
        return ZF_EUNSUPPORTED;
    lister l = {.x = x, .full = zf_s3i_full_prefix(x, prefix)};
    if (!l.full)
        return ZF_ENOMEM;
    size_t seen = 0;
    int rc = zf_store_list_pages(&s3_pages, &l, fn, ctx, &seen, err, errcap);
    free(l.full);
    free(l.buf.p);
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
