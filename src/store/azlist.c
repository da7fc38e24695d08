/* azlist.c - listing an Azure Blob store: List Blobs pages (prefix,
 * delimiter '/', markers), their EnumerationResults XML read with expat
 * by element path (no DTD, bounded), turned into store entries. */
#include <curl/curl.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "base/vec.h"
#include "store/azure_impl.h"

/* Largest List Blobs answer read (5000 blobs of 1 KiB of XML fit). */
#define PAGE_MAX (32u << 20)
/* Most pages one listing reads before it gives up (a server looping on markers). */
#define PAGES_MAX 1000000u
#define DEPTH_MAX 16
#define PATH_CAP 160
#define TEXT_MAX 4096

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

/* ---- the XML ------------------------------------------------------------------------ */

enum { F_NONE, F_NAME, F_PREFIX_NAME, F_SIZE, F_ETAG, F_MTIME, F_MARKER };

/* the element paths whose text matters */
static const struct {
    const char *path;
    int field;
} fields[] = {
    {"EnumerationResults/Blobs/Blob/Name", F_NAME},
    {"EnumerationResults/Blobs/Blob/Properties/Content-Length", F_SIZE},
    {"EnumerationResults/Blobs/Blob/Properties/Etag", F_ETAG},
    {"EnumerationResults/Blobs/Blob/Properties/Last-Modified", F_MTIME},
    {"EnumerationResults/Blobs/BlobPrefix/Name", F_PREFIX_NAME},
    {"EnumerationResults/NextMarker", F_MARKER},
};

typedef struct azparse {
    XML_Parser xp;
    char path[PATH_CAP];
    size_t lens[DEPTH_MAX + 1];  /* path's length at each depth */
    int depth;
    int field;
    zf_sbuf text;
    char why[160];
    zf_s3list_page *page;
    zf_s3list_item cur;
    size_t cap;
} azparse;

static void fail(azparse *p, const char *why)
{
    if (!p->why[0])
        snprintf(p->why, sizeof p->why, "%s", why);
    XML_StopParser(p->xp, XML_FALSE);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    azparse *p = ud;
    size_t have = p->depth ? p->lens[p->depth] : 0;
    if (p->depth >= DEPTH_MAX || have + strlen(name) + 2 > PATH_CAP) {
        fail(p, "elements nested too deeply");
        return;
    }
    snprintf(p->path + have, PATH_CAP - have, "%s%s", p->depth ? "/" : "", name);
    p->lens[++p->depth] = strlen(p->path);
    if (p->depth == 1 && strcmp(name, "EnumerationResults")) {
        fail(p, "not an EnumerationResults document");
        return;
    }
    int blob = !strcmp(p->path, "EnumerationResults/Blobs/Blob");
    if (blob || !strcmp(p->path, "EnumerationResults/Blobs/BlobPrefix")) {
        if (p->page->n >= ZF_S3LIST_ITEMS) {
            fail(p, "more entries than a page may hold");
            return;
        }
        p->cur = (zf_s3list_item){.prefix = !blob};
    }
    p->field = F_NONE;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (!strcmp(p->path, fields[i].path))
            p->field = fields[i].field;
    p->text.len = 0;
    if (p->text.data)
        p->text.data[0] = '\0';
}

static void XMLCALL on_text(void *ud, const XML_Char *t, int len)
{
    azparse *p = ud;
    if (!p->field)
        return;
    size_t max = p->field == F_NAME || p->field == F_PREFIX_NAME ? ZF_KEY_MAX - 1 : TEXT_MAX;
    if ((size_t)len > max - p->text.len) {
        fail(p, "an element's text too long");
        return;
    }
    zf_sbuf_add(&p->text, t, (size_t)len);
    if (p->text.failed)
        fail(p, "out of memory");
}

/* keep a copy of text in *dst (an element given twice is refused) */
static void keep(azparse *p, char **dst, const char *t)
{
    if (*dst)
        fail(p, "an element given twice");
    else if (!(*dst = strdup(t)))
        fail(p, "out of memory");
}

/* a field's text, now complete */
static void field_done(azparse *p, const char *t)
{
    char *end;
    switch (p->field) {
    case F_NAME:
    case F_PREFIX_NAME: keep(p, &p->cur.key, t); return;
    case F_ETAG: keep(p, &p->cur.etag, t); return;
    case F_MARKER:
        if (*t)
            keep(p, &p->page->next_token, t);
        return;
    case F_SIZE:
        p->cur.size = strtoull(t, &end, 10);
        if (!*t || *end || *t == '-' || *t == '+' || *t == ' ')
            fail(p, "a Content-Length that is not a number");
        return;
    case F_MTIME: {
        time_t s = curl_getdate(t, NULL);
        if (s < 0 || s >= INT64_MAX / 1000000000)
            fail(p, "a Last-Modified that is not a time");
        else
            p->cur.mtime_ns = (int64_t)s * 1000000000;
        return;
    }
    default: return;
    }
}

/* the entry just closed, into the page */
static void push(azparse *p)
{
    if (!p->cur.key || !*p->cur.key) {
        fail(p, "an entry without a name");
        return;
    }
    if (zf_grow(&p->page->items, &p->cap, p->page->n, sizeof *p->page->items, 64)) {
        fail(p, "out of memory");
        return;
    }
    p->page->items[p->page->n++] = p->cur;
    p->cur = (zf_s3list_item){0};
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    azparse *p = ud;
    if (p->field)
        field_done(p, p->text.data ? p->text.data : "");
    p->field = F_NONE;
    if (!strcmp(p->path, "EnumerationResults/Blobs/Blob") ||
        !strcmp(p->path, "EnumerationResults/Blobs/BlobPrefix"))
        push(p);
    p->path[p->depth > 1 ? p->lens[p->depth - 1] : 0] = '\0';
    p->depth--;
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    fail(ud, "a document type declaration (DTDs are refused)");
}

int zf_azlist_parse(const char *xml, size_t len, zf_s3list_page *page, char *err, size_t errcap)
{
    *page = (zf_s3list_page){.key_count = -1};
    azparse p = {.page = page};
    if (!(p.xp = XML_ParserCreate("UTF-8")))
        return ZF_ENOMEM;
    XML_SetUserData(p.xp, &p);
    XML_SetElementHandler(p.xp, on_start, on_end);
    XML_SetCharacterDataHandler(p.xp, on_text);
    XML_SetStartDoctypeDeclHandler(p.xp, on_doctype);
    if (len > PAGE_MAX)
        snprintf(p.why, sizeof p.why, "a document too large");
    else if (XML_Parse(p.xp, xml, (int)len, XML_TRUE) != XML_STATUS_OK && !p.why[0])
        snprintf(p.why, sizeof p.why, "malformed XML at line %lu: %s",
                 (unsigned long)XML_GetCurrentLineNumber(p.xp),
                 XML_ErrorString(XML_GetErrorCode(p.xp)));
    XML_ParserFree(p.xp);
    free(p.text.data);
    free(p.cur.key);
    free(p.cur.etag);
    page->truncated = page->next_token != NULL;
    if (!p.why[0])
        return ZF_OK;
    return ERR(ZF_ECORRUPT, "List Blobs answer: %s", p.why);
}

/* ---- listing -------------------------------------------------------------------------- */

/* one List Blobs page under full from marker (NULL: the first) */
static int list_page(const azure *a, const char *full, const char *marker, unsigned max,
                     zf_store_buf *buf, zf_s3list_page *pg, char *err, size_t errcap, char *code)
{
    char mr[16];
    snprintf(mr, sizeof mr, "%u", max);
    zf_sigv4_param q[6] = {{"comp", "list"}, {"delimiter", "/"}, {"maxresults", mr},
                           {"restype", "container"}, {"prefix", full}, {"marker", marker}};
    size_t nq = 4 + (*full != '\0');
    if (marker) {
        q[nq] = q[5];
        nq++;
    }
    zf_az_req r;
    *pg = (zf_s3list_page){0};
    int rc = zf_azi_prep(a, "GET", NULL, q, nq, 0, 0, &r);
    if (rc != ZF_OK)
        return rc;
    char nerr[ZF_AZI_ERR] = "";
    zf_net_req nr = {.url = r.url, .headers = r.hdrs, .grow = buf, .max = PAGE_MAX, .err = nerr,
                     .errcap = sizeof nerr};
    zf_net_run(a->net, &nr, 1);
    zf_azi_req_free(&r);
    if (nr.rc != ZF_OK) {
        zf_azi_reason(nerr, nr.status >= 300 ? buf->p : NULL, nr.n, err, errcap, code);
        return nr.rc == ZF_ENOTFOUND || nr.rc == ZF_ENOMEM ? nr.rc : ZF_EIO;
    }
    rc = zf_azlist_parse((const char *)buf->p, nr.n, pg, err, errcap);
    return rc == ZF_ECORRUPT ? ZF_EIO : rc; /* an answer that is no page: not "no directory" */
}

static char *full_prefix(const azure *a, const char *prefix)
{
    size_t n = strlen(a->prefix) + strlen(prefix) + 2;
    char *f = malloc(n);
    if (f)
        snprintf(f, n, "%s%s%s", a->prefix, prefix, *prefix ? "/" : "");
    return f;
}

/* is name (a blob of the page) also a prefix of it?  A folder of a
 * hierarchical-namespace account: the directory wins */
static int also_prefix(const zf_s3list_page *pg, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < pg->n; i++)
        if (pg->items[i].prefix && !strncmp(pg->items[i].key, name, n) &&
            !strcmp(pg->items[i].key + n, "/"))
            return 1;
    return 0;
}

/* one listing's pages (zf_store_list_pages); code: Azure's error code of
 * a failed answer (may be NULL) */
typedef struct lister {
    const azure *a;
    const char *full;
    unsigned max;
    char *code;
    zf_store_buf buf;
    zf_s3list_page pg;
} lister;

static int page_read(void *ctx, unsigned page, const char *token, char **next, char *why,
                     size_t whycap)
{
    lister *l = ctx;
    int rc = list_page(l->a, l->full, token, l->max, &l->buf, &l->pg, why, whycap, l->code);
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
    const zf_s3list_page *pg = &l->pg;
    size_t skip = strlen(l->full);
    for (size_t i = 0; i < pg->n; i++) {
        zf_s3list_item *it = &pg->items[i];
        (*seen)++;
        if (!fn || (!it->prefix && !it->size && also_prefix(pg, it->key)))
            continue;
        zf_stamp st = {.kind = ZF_STORE_DIR};
        if (!it->prefix)
            zf_stamp_object(&st, it->size, it->mtime_ns, it->etag);
        int stop = zf_store_list_key(it->key, skip, &st, fn, fnctx);
        if (stop)
            return stop;
    }
    return ZF_OK;
}

static void page_done(void *ctx)
{
    zf_s3list_page_free(&((lister *)ctx)->pg);
}

static const zf_store_pages az_pages = {page_read, page_emit, page_done, "marker"};

/* every page under full, each handed to fn (NULL: stop at the first entry) */
static int walk(const azure *a, const char *full, unsigned max, zf_store_list_fn fn, void *ctx,
                size_t *seen, char *err, size_t errcap, char *code)
{
    lister l = {.a = a, .full = full, .max = max, .code = code};
    int rc = zf_store_list_pages(&az_pages, &l, fn, ctx, seen, err, errcap);
    free(l.buf.p);
    return rc;
}

int zf_azi_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                void *ctx, char *err, size_t errcap)
{
    const azure *a = s->impl;
    if (!a->can_list)
        return ZF_EUNSUPPORTED;
    char *full = full_prefix(a, prefix);
    if (!full)
        return ZF_ENOMEM;
    size_t seen = 0;
    int rc = walk(a, full, a->max_results, fn, ctx, &seen, err, errcap, NULL);
    free(full);
    return rc == ZF_OK && !seen ? ZF_ENOTFOUND : rc;
}

int zf_azi_any(const azure *a, const char *full, char *err, size_t errcap, char *code)
{
    size_t seen = 0;
    int rc = walk(a, full, 1, NULL, NULL, &seen, err, errcap, code);
    return rc == ZF_OK && !seen ? ZF_ENOTFOUND : rc;
}
