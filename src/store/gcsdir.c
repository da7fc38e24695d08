/* gcsdir.c - listing a Google Cloud Storage store: objects.list pages
 * (prefix, delimiter '/', page tokens) read with cJSON within bounds and
 * turned into store entries; prefixes as directories. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/gcs_impl.h"
#include "store/s3list.h"
#include "store/sigv4.h"

/* Largest objects.list answer read (1000 full object resources fit). */
#define PAGE_MAX (16u << 20)
/* Longest page token kept. */
#define TOKEN_MAX 4096

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

/* ---- the JSON --------------------------------------------------------------------- */

/* a decimal count given as a JSON string (the API's int64 form) or number */
static int count_of(const cJSON *j, uint64_t *v)
{
    if (cJSON_IsNumber(j)) {
        if (j->valuedouble < 0 || j->valuedouble > 9007199254740992.0 ||
            j->valuedouble != (double)(uint64_t)j->valuedouble)
            return 0;
        *v = (uint64_t)j->valuedouble;
        return 1;
    }
    if (!cJSON_IsString(j) || !*j->valuestring || strlen(j->valuestring) > 19)
        return 0;
    uint64_t x = 0;
    for (const char *p = j->valuestring; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *v = x;
    return 1;
}

/* a name fit for a store key */
static int name_ok(const cJSON *j)
{
    return cJSON_IsString(j) && *j->valuestring && strlen(j->valuestring) < ZF_KEY_MAX;
}

/* the size, generation and updated time of an object resource */
static int object_fields(const cJSON *o, uint64_t *size, char gen[24], int64_t *mtime_ns,
                         const char **why)
{
    uint64_t g;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "updated");
    *mtime_ns = 0;
    if (!count_of(cJSON_GetObjectItemCaseSensitive(o, "size"), size))
        *why = "an object without a size";
    else if (!count_of(cJSON_GetObjectItemCaseSensitive(o, "generation"), &g))
        *why = "an object without a generation";
    else if (u && (!cJSON_IsString(u) || zf_s3list_time(u->valuestring, mtime_ns) != ZF_OK))
        *why = "an updated time that is no time";
    else {
        snprintf(gen, 24, "%llu", (unsigned long long)g);
        return ZF_OK;
    }
    return ZF_ECORRUPT;
}

int zf_gcs_object_parse(const char *doc, size_t n, zf_stamp *st, char *err, size_t errcap)
{
    cJSON *j = doc ? cJSON_ParseWithLength(doc, n) : NULL;
    uint64_t size = 0;
    int64_t mtime = 0;
    char gen[24];
    const char *why = "not a JSON object";
    int rc = cJSON_IsObject(j) ? object_fields(j, &size, gen, &mtime, &why) : ZF_ECORRUPT;
    if (rc == ZF_OK)
        zf_stamp_object(st, size, mtime, gen);
    cJSON_Delete(j);
    return rc == ZF_OK ? ZF_OK : ERR(rc, "objects.get answer: %s", why);
}

void zf_gcs_page_free(zf_gcs_page *pg)
{
    for (size_t i = 0; i < pg->n; i++)
        free(pg->items[i].name);
    free(pg->items);
    free(pg->next_token);
    *pg = (zf_gcs_page){0};
}

/* append one entry (name copied; room made by page_entries) */
static int push(zf_gcs_page *pg, const zf_gcs_item *it)
{
    pg->items[pg->n] = *it;
    if (!(pg->items[pg->n].name = strdup(it->name)))
        return ZF_ENOMEM;
    pg->n++;
    return ZF_OK;
}

/* the page's "prefixes" and "items" arrays into pg */
static int page_entries(const cJSON *j, zf_gcs_page *pg, const char **why)
{
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(j, "prefixes");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, "items");
    if ((pre && !cJSON_IsArray(pre)) || (items && !cJSON_IsArray(items))) {
        *why = "prefixes or items that are no arrays";
        return ZF_ECORRUPT;
    }
    size_t total = (size_t)cJSON_GetArraySize(pre) + (size_t)cJSON_GetArraySize(items);
    if (total > ZF_GCS_PAGE_ITEMS) {
        *why = "more entries than a page may hold";
        return ZF_ECORRUPT;
    }
    if (!(pg->items = calloc(total ? total : 1, sizeof *pg->items)))
        return ZF_ENOMEM;
    const cJSON *e;
    cJSON_ArrayForEach(e, pre) {
        if (!name_ok(e)) {
            *why = "a prefix that is no name";
            return ZF_ECORRUPT;
        }
        zf_gcs_item it = {.name = e->valuestring, .prefix = 1};
        if (push(pg, &it) != ZF_OK)
            return ZF_ENOMEM;
    }
    cJSON_ArrayForEach(e, items) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        zf_gcs_item it = {0};
        if (!cJSON_IsObject(e) || !name_ok(name)) {
            *why = "an object without a name";
            return ZF_ECORRUPT;
        }
        int rc = object_fields(e, &it.size, it.generation, &it.mtime_ns, why);
        it.name = name->valuestring;
        if (rc == ZF_OK)
            rc = push(pg, &it);
        if (rc != ZF_OK)
            return rc;
    }
    return ZF_OK;
}

int zf_gcs_list_parse(const char *doc, size_t n, zf_gcs_page *pg, char *err, size_t errcap)
{
    *pg = (zf_gcs_page){0};
    cJSON *j = doc && n <= PAGE_MAX ? cJSON_ParseWithLength(doc, n) : NULL;
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(j, "nextPageToken");
    const char *why = "not a JSON object";
    int rc = cJSON_IsObject(j) ? page_entries(j, pg, &why) : ZF_ECORRUPT;
    if (rc == ZF_OK && tok && (!cJSON_IsString(tok) || strlen(tok->valuestring) > TOKEN_MAX)) {
        why = "a nextPageToken that is no token";
        rc = ZF_ECORRUPT;
    }
    if (rc == ZF_OK && cJSON_IsString(tok) && *tok->valuestring &&
        !(pg->next_token = strdup(tok->valuestring)))
        rc = ZF_ENOMEM;
    cJSON_Delete(j);
    if (rc == ZF_ECORRUPT)
        return ERR(rc, "objects.list answer: %s", why);
    return rc;
}

/* ---- listing ------------------------------------------------------------------------- */

int zf_gcsi_list_page(const gcs *g, const char *full, const char *token, unsigned max,
                      zf_store_buf *buf, zf_gcs_page *pg, char *err, size_t errcap, long *status)
{
    *pg = (zf_gcs_page){0};
    zf_sbuf q = {0};
    zf_sbuf_printf(&q, "prefix=");
    zf_sigv4_encode(&q, full, 0);
    zf_sbuf_printf(&q, "&delimiter=%%2F&maxResults=%u"
                   "&fields=nextPageToken,prefixes,items(name,size,generation,updated)", max);
    if (token) {
        zf_sbuf_printf(&q, "&pageToken=");
        zf_sigv4_encode(&q, token, 0);
    }
    char nerr[ZF_GCSI_ERR] = "";
    zf_net_req r = {.grow = buf, .max = PAGE_MAX, .err = nerr, .errcap = sizeof nerr};
    int rc = q.failed ? ZF_ENOMEM : zf_gcsi_run(g, NULL, q.data, &r);
    free(q.data);
    if (status)
        *status = r.status;
    if (rc == ZF_ENOMEM)
        return rc;
    if (rc != ZF_OK) {
        zf_gcsi_reason(nerr, r.status >= 300 ? buf->p : NULL, r.n, err, errcap);
        return rc == ZF_ENOTFOUND ? rc : ZF_EIO; /* (404: no such bucket) */
    }
    rc = zf_gcs_list_parse((const char *)buf->p, r.n, pg, err, errcap);
    return rc == ZF_ECORRUPT ? ZF_EIO : rc; /* an answer that is no page: not "no directory" */
}

/* the bucket-wide prefix of a store prefix (malloc'd) */
static char *full_prefix(const gcs *g, const char *prefix)
{
    size_t n = strlen(g->prefix) + strlen(prefix) + 2;
    char *f = malloc(n);
    if (f)
        snprintf(f, n, "%s%s%s", g->prefix, prefix, *prefix ? "/" : "");
    return f;
}

/* one listing's pages (zf_store_list_pages); status: the first answer's
 * HTTP status (may be NULL) */
typedef struct lister {
    const gcs *g;
    const char *full;
    unsigned max;
    long *status;
    zf_store_buf buf;
    zf_gcs_page pg;
} lister;

static int page_read(void *ctx, unsigned page, const char *token, char **next, char *why,
                     size_t whycap)
{
    lister *l = ctx;
    int rc = zf_gcsi_list_page(l->g, l->full, token, l->max, &l->buf, &l->pg, why, whycap,
                               page ? NULL : l->status);
    if (rc == ZF_OK && l->pg.next_token) {
        *next = l->pg.next_token;
        l->pg.next_token = NULL;
    }
    return rc;
}

/* hand the page's entries to fn (NULL: count them); *seen counts every entry */
static int page_emit(void *ctx, zf_store_list_fn fn, void *fnctx, size_t *seen)
{
    const lister *l = ctx;
    size_t skip = strlen(l->full);
    for (size_t i = 0; i < l->pg.n; i++) {
        const zf_gcs_item *it = &l->pg.items[i];
        (*seen)++;
        zf_stamp st = {.kind = ZF_STORE_DIR};
        if (!it->prefix)
            zf_stamp_object(&st, it->size, it->mtime_ns, it->generation);
        int stop = fn ? zf_store_list_key(it->name, skip, &st, fn, fnctx) : 0;
        if (stop)
            return stop;
    }
    return ZF_OK;
}

static void page_done(void *ctx)
{
    zf_gcs_page_free(&((lister *)ctx)->pg);
}

static const zf_store_pages gcs_pages = {page_read, page_emit, page_done, "page token"};

/* every page under full, each handed to fn (NULL: stop at the first page
 * with an entry); *status: the first answer's HTTP status (may be NULL) */
static int walk(const gcs *g, const char *full, unsigned max, zf_store_list_fn fn, void *ctx,
                size_t *seen, long *status, char *err, size_t errcap)
{
    lister l = {.g = g, .full = full, .max = max, .status = status};
    int rc = zf_store_list_pages(&gcs_pages, &l, fn, ctx, seen, err, errcap);
    free(l.buf.p);
    return rc;
}

int zf_gcsi_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                 void *ctx, char *err, size_t errcap)
{
    const gcs *g = s->impl;
    if (!g->can_list)
        return ZF_EUNSUPPORTED;
    char *full = full_prefix(g, prefix);
    if (!full)
        return ZF_ENOMEM;
    size_t seen = 0;
    int rc = walk(g, full, g->max_results, fn, ctx, &seen, NULL, err, errcap);
    free(full);
    return rc == ZF_OK && !seen ? ZF_ENOTFOUND : rc; /* no object under it: no such prefix */
}

int zf_gcsi_any(const gcs *g, const char *full, long *status, char *err, size_t errcap)
{
    size_t seen = 0;
    int rc = walk(g, full, 1, NULL, NULL, &seen, status, err, errcap);
    return rc == ZF_OK && !seen ? ZF_ENOTFOUND : rc;
}

int zf_gcsi_dir_stamp(const gcs *g, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    if (!g->can_list)
        return ZF_ENOTFOUND;
    char *full = full_prefix(g, key);
    if (!full)
        return ZF_ENOMEM;
    int rc = zf_gcsi_any(g, full, NULL, err, errcap);
    if (rc == ZF_OK)
        st->kind = ZF_STORE_DIR;
    free(full);
    return rc;
}
