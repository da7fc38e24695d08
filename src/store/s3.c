/* s3.c - the S3 backend: keys as objects under a bucket's prefix, each
 * request signed (SigV4) just before it is handed to the net engine. */
#include "store/s3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/s3list.h"
#include "store/sigv4.h"

/* Largest ListObjectsV2 answer read (1000 keys of 4 KiB fit). */
#define PAGE_MAX (16u << 20)
/* Most pages one listing reads before it gives up (a server looping on tokens). */
#define PAGES_MAX 1000000u

typedef struct s3 {
    zf_net *net;
    zf_s3cred *cred;
    zf_s3_addr addr;
    char *prefix;      /* the store's prefix in the bucket: "" or "a/b/" */
    char *host_line;   /* "Host: ..." */
    unsigned max_keys;
    int can_list;      /* 0: the first listing was denied (AccessDenied) */
} s3;

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

static const s3 *impl(const zf_store *s)
{
    return s->impl;
}

/* ---- addressing ---------------------------------------------------------- */

/* ZF_OK for a bucket name S3 can have, else ZF_EINVAL with the reason */
static int bucket_check(const char *bucket, char *err, size_t errcap)
{
    size_t n = strlen(bucket);
    int ok = n >= 3 && n <= 255;
    for (const char *b = bucket; ok && *b; b++)
        ok = (*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z') || (*b >= '0' && *b <= '9') ||
             *b == '-' || *b == '.' || *b == '_';
    return ok ? ZF_OK
              : ERR(ZF_EINVAL, "bucket name %s: 3 to 255 letters, digits, '.', '-' or '_'", bucket);
}

/* can bucket be a host name's first label (virtual-hosted style)?  Not
 * with dots (TLS wildcards cover one label), upper case or '_' */
static int dns_label(const char *bucket)
{
    size_t n = strlen(bucket);
    if (n > 63 || bucket[0] == '-' || bucket[n - 1] == '-')
        return 0;
    for (const char *b = bucket; *b; b++)
        if (!((*b >= 'a' && *b <= 'z') || (*b >= '0' && *b <= '9') || *b == '-'))
            return 0;
    return 1;
}

static char *sbuf_take(zf_sbuf *b)
{
    if (b->failed) {
        free(b->data);
        return NULL;
    }
    return b->data ? b->data : strdup("");
}

void zf_s3_addr_free(zf_s3_addr *a)
{
    free(a->origin);
    free(a->host);
    free(a->root);
    *a = (zf_s3_addr){0};
}

int zf_s3_addr_make(const zf_s3cred *c, const char *bucket, zf_s3_addr *a, char *err, size_t errcap)
{
    *a = (zf_s3_addr){0};
    int rc = bucket_check(bucket, err, errcap);
    if (rc != ZF_OK)
        return rc;
    zf_sbuf origin = {0}, host = {0}, root = {0};
    if (c->endpoint) { /* path style under the endpoint: scheme://authority[/base] */
        const char *auth = strstr(c->endpoint, "://") + 3, *slash = strchr(auth, '/');
        size_t alen = slash ? (size_t)(slash - auth) : strlen(auth);
        zf_sbuf_add(&origin, c->endpoint, (size_t)(auth - c->endpoint) + alen);
        zf_sbuf_add(&host, auth, alen);
        zf_sbuf_printf(&root, "%s/%s", slash ? slash : "", bucket);
    } else if (!dns_label(bucket)) {
        zf_sbuf_printf(&host, "s3.%s.amazonaws.com", c->region);
        zf_sbuf_printf(&origin, "https://%s", host.data ? host.data : "");
        zf_sbuf_printf(&root, "/%s", bucket);
    } else {
        zf_sbuf_printf(&host, "%s.s3.%s.amazonaws.com", bucket, c->region);
        zf_sbuf_printf(&origin, "https://%s", host.data ? host.data : "");
    }
    a->origin = sbuf_take(&origin);
    a->host = sbuf_take(&host);
    a->root = sbuf_take(&root);
    if (!a->origin || !a->host || !a->root) {
        zf_s3_addr_free(a);
        return ZF_ENOMEM;
    }
    return ZF_OK;
}

/* ---- requests ------------------------------------------------------------ */

/* A request made ready for the engine: its URL and header lines (owned). */
typedef struct prep {
    char *url;
    char **sig;           /* from zf_sigv4_sign, or NULL (anonymous) */
    const char *hdrs[8];  /* sig's lines, then Host; NULL-terminated */
} prep;

static void prep_free(prep *p)
{
    free(p->url);
    zf_sigv4_free(p->sig);
    *p = (prep){0};
}

/* URL and signed headers of method on key (under the store's prefix), or on
 * the bucket itself with query q when key is NULL */
static int prep_make(const s3 *b, const char *method, const char *key, const zf_sigv4_param *q,
                     size_t nq, prep *p)
{
    *p = (prep){0};
    zf_sbuf path = {0}, url = {0};
    if (key)
        zf_sbuf_printf(&path, "%s/%s%s", b->addr.root, b->prefix, key);
    else
        zf_sbuf_printf(&path, "%s", *b->addr.root ? b->addr.root : "/");
    zf_sbuf_printf(&url, "%s", b->addr.origin);
    zf_sigv4_path(&url, path.data ? path.data : "/");
    if (nq) {
        zf_sbuf_add(&url, "?", 1);
        zf_sigv4_query(&url, q, nq);
    }
    int rc = path.failed || url.failed ? ZF_ENOMEM : ZF_OK;
    if (rc == ZF_OK && b->cred->access_key) {
        zf_sigv4_cred c = {b->cred->access_key, b->cred->secret_key, b->cred->session_token,
                           b->cred->region, "s3"};
        zf_sigv4_req r = {.method = method, .host = b->addr.host, .path = path.data, .query = q,
                          .nquery = nq, .content_sha256 = 1, .time = (int64_t)time(NULL)};
        rc = zf_sigv4_sign(&c, &r, &p->sig);
    }
    free(path.data);
    p->url = url.data;
    if (rc != ZF_OK) {
        prep_free(p);
        return rc;
    }
    size_t k = 0;
    for (size_t i = 0; p->sig && p->sig[i] && k < 6; i++)
        p->hdrs[k++] = p->sig[i];
    p->hdrs[k++] = b->host_line;
    p->hdrs[k] = NULL;
    return ZF_OK;
}

/* err = the engine's reason, with the S3 error code and message when the
 * answer's body (body, n bytes) is an S3 error document; the code also in
 * code (S3_CODE bytes; may be NULL) */
#define S3_CODE 64
static void reason(const char *net_err, const uint8_t *body, size_t n, char *err, size_t errcap,
                   char *s3code)
{
    char code[S3_CODE] = "", msg[160] = "";
    if (body && n)
        zf_s3list_error((const char *)body, n, code, sizeof code, msg, sizeof msg);
    if (s3code)
        memcpy(s3code, code, sizeof code);
    if (!err || !errcap)
        return;
    const char *hint = !strcmp(code, "AuthorizationHeaderMalformed") ||
                               !strcmp(code, "PermanentRedirect")
                           ? " (another region? -o region=)" : "";
    if (*code)
        snprintf(err, errcap, "%s %s: %s%s", net_err, code, msg, hint);
    else
        snprintf(err, errcap, "%s", net_err);
}

/* tag of an ETag: its digest without W/ and quotes ({0, 0} for none) */
static zf_fp etag_tag(const char *etag)
{
    zf_fp fp = {0, 0};
    if (!etag)
        return fp;
    if (!strncmp(etag, "W/", 2))
        etag += 2;
    size_t n = strlen(etag);
    if (n >= 2 && etag[0] == '"' && etag[n - 1] == '"') {
        etag++;
        n -= 2;
    }
    if (n) {
        zf_fp_init(&fp);
        zf_fp_add(&fp, etag, n);
    }
    return fp;
}

/* stamp of an object: Last-Modified in whole seconds (a listing has ms) */
static void file_stamp(zf_stamp *st, uint64_t size, int64_t mtime_ns, const char *etag)
{
    *st = (zf_stamp){.size = size, .mtime = mtime_ns / 1000000000 * 1000000000,
                     .tag = etag_tag(etag), .kind = ZF_STORE_FILE};
}

/* ---- reads ----------------------------------------------------------------- */

static int s3_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                   zf_stamp *st, char *err, size_t errcap)
{
    const s3 *x = impl(s);
    prep p;
    int rc = prep_make(x, "GET", key, NULL, 0, &p);
    if (rc != ZF_OK)
        return ERR(rc, "cannot sign the request");
    char nerr[160] = "";
    zf_net_req r = {.url = p.url, .headers = p.hdrs, .grow = b, .max = max, .err = nerr,
                    .errcap = sizeof nerr};
    zf_net_run(x->net, &r, 1);
    prep_free(&p);
    if (r.rc != ZF_OK) {
        reason(nerr, r.status >= 300 ? b->p : NULL, r.n, err, errcap, NULL);
        return r.rc;
    }
    *n = r.n;
    file_stamp(st, r.size_known ? r.size : r.n, r.last_modified_ns, r.etag);
    return ZF_OK;
}

/* per request of a batch: what the engine needs, and its reason buffer */
typedef struct batch_item {
    prep p;
    char nerr[160];
} batch_item;

static int s3_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    const s3 *x = impl(s);
    zf_net_req *nr = calloc(n ? n : 1, sizeof *nr);
    batch_item *bi = calloc(n ? n : 1, sizeof *bi);
    size_t *map = calloc(n ? n : 1, sizeof *map), k = 0;
    int rc = nr && bi && map ? ZF_OK : ZF_ENOMEM;
    for (size_t i = 0; rc == ZF_OK && i < n; i++) {
        reqs[i].rc = ZF_OK;
        if (!reqs[i].len)
            continue;
        reqs[i].rc = prep_make(x, "GET", reqs[i].key, NULL, 0, &bi[k].p);
        if (reqs[i].rc != ZF_OK) {
            if (reqs[i].err && reqs[i].errcap)
                snprintf(reqs[i].err, reqs[i].errcap, "cannot sign the request");
            continue;
        }
        nr[k] = (zf_net_req){.url = bi[k].p.url, .headers = bi[k].p.hdrs, .off = reqs[i].off,
                             .len = reqs[i].len, .buf = reqs[i].buf, .cap = reqs[i].len,
                             .err = bi[k].nerr, .errcap = sizeof bi[k].nerr};
        map[k++] = i;
    }
    if (rc == ZF_OK && k)
        zf_net_run(x->net, nr, k);
    for (size_t j = 0; rc == ZF_OK && j < k; j++) {
        zf_store_req *q = &reqs[map[j]];
        q->rc = nr[j].rc;
        if (q->rc != ZF_OK)
            reason(bi[j].nerr, nr[j].status >= 300 ? q->buf : NULL, nr[j].n, q->err, q->errcap,
                   NULL);
    }
    for (size_t j = 0; bi && j < k; j++)
        prep_free(&bi[j].p);
    free(nr);
    free(bi);
    free(map);
    for (size_t i = 0; rc == ZF_OK && i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return rc;
}

/* ---- listing ------------------------------------------------------------- */

/* one ListObjectsV2 page of the keys under full (a bucket-wide prefix) from
 * token (NULL: the first page); reason in err, S3's error code in code
 * (S3_CODE bytes, may be NULL) */
static int list_page(const s3 *x, const char *full, const char *token, unsigned max_keys,
                     zf_store_buf *buf, zf_s3list_page *page, char *err, size_t errcap, char *code)
{
    char mk[16];
    snprintf(mk, sizeof mk, "%u", max_keys);
    zf_sigv4_param q[5] = {{"list-type", "2"}, {"prefix", full}, {"delimiter", "/"},
                           {"max-keys", mk}, {"continuation-token", token}};
    prep p;
    *page = (zf_s3list_page){0};
    int rc = prep_make(x, "GET", NULL, q, token ? 5 : 4, &p);
    if (rc != ZF_OK)
        return ERR(rc, "cannot sign the request");
    char nerr[160] = "";
    zf_net_req r = {.url = p.url, .headers = p.hdrs, .grow = buf, .max = PAGE_MAX, .err = nerr,
                    .errcap = sizeof nerr};
    zf_net_run(x->net, &r, 1);
    prep_free(&p);
    if (r.rc != ZF_OK) {
        reason(nerr, r.status >= 300 ? buf->p : NULL, r.n, err, errcap, code);
        return r.rc;
    }
    return zf_s3list_parse((const char *)buf->p, r.n, page, err, errcap);
}

/* the bucket-wide prefix of a store prefix ("" or "a/b": "P" "a/b/") */
static char *full_prefix(const s3 *x, const char *prefix)
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
        if (strlen(it->key) <= skip)
            continue; /* the prefix itself (a "directory marker" object) */
        char *name = it->key + skip;
        size_t len = strlen(name);
        if (it->prefix && name[len - 1] == '/')
            name[--len] = '\0';
        if (!len || strchr(name, '/'))
            continue;
        zf_store_entry e = {.name = name};
        if (it->prefix)
            e.stamp.kind = ZF_STORE_DIR;
        else
            file_stamp(&e.stamp, it->size, it->mtime_ns, it->etag);
        int stop = fn(ctx, &e);
        if (stop)
            return stop;
    }
    return ZF_OK;
}

static int s3_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                   void *ctx)
{
    const s3 *x = impl(s);
    if (!x->can_list)
        return ZF_EUNSUPPORTED;
    char *full = full_prefix(x, prefix), *token = NULL;
    if (!full)
        return ZF_ENOMEM;
    zf_store_buf buf = {0};
    size_t seen = 0;
    int rc = ZF_OK;
    for (unsigned pages = 0;; pages++) {
        zf_s3list_page pg = {0};
        rc = pages < PAGES_MAX ? list_page(x, full, token, x->max_keys, &buf, &pg, NULL, 0, NULL) : ZF_EIO;
        if (rc == ZF_OK)
            rc = list_emit(&pg, strlen(full), fn, ctx, &seen);
        int more = rc == ZF_OK && pg.truncated;
        if (more && token && !strcmp(token, pg.next_token)) {
            rc = ZF_EIO; /* the same page again: the server loops */
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

/* ---- stamps -------------------------------------------------------------- */

/* is there any key under key + "/"?  ZF_OK (a DIR) or ZF_ENOTFOUND */
static int dir_stamp(const s3 *x, const char *key, zf_stamp *st)
{
    if (!x->can_list)
        return ZF_ENOTFOUND;
    char *full = full_prefix(x, key);
    if (!full)
        return ZF_ENOMEM;
    zf_store_buf buf = {0};
    zf_s3list_page pg;
    int rc = list_page(x, full, NULL, 1, &buf, &pg, NULL, 0, NULL);
    if (rc == ZF_OK && !pg.n)
        rc = ZF_ENOTFOUND;
    if (rc == ZF_OK)
        st->kind = ZF_STORE_DIR;
    zf_s3list_page_free(&pg);
    free(buf.p);
    free(full);
    return rc;
}

static int s3_stamp(const zf_store *s, const char *key, zf_stamp *st)
{
    const s3 *x = impl(s);
    *st = (zf_stamp){0};
    if (!*key) { /* the root: its keys were seen at open */
        st->kind = ZF_STORE_DIR;
        return ZF_OK;
    }
    prep p;
    int rc = prep_make(x, "HEAD", key, NULL, 0, &p);
    if (rc != ZF_OK)
        return rc;
    zf_net_req r = {.url = p.url, .headers = p.hdrs, .head = 1};
    zf_net_run(x->net, &r, 1);
    prep_free(&p);
    if (r.rc == ZF_OK)
        file_stamp(st, r.size, r.last_modified_ns, r.etag);
    else if (r.rc == ZF_ENOTFOUND)
        return dir_stamp(x, key, st);
    return r.rc;
}

/* ---- open and close ------------------------------------------------------ */

static void s3_close(zf_store *s)
{
    s3 *x = s->impl;
    if (!x)
        return;
    zf_net_close(x->net);
    zf_s3cred_free(x->cred);
    zf_s3_addr_free(&x->addr);
    free(x->prefix);
    free(x->host_line);
    free(x);
}

static const zf_store_ops s3_ops = {s3_close, s3_read, s3_read_many, s3_stamp, s3_list};

/* the page size: o's, else $ZF_S3_MAX_KEYS, else S3's largest */
static int max_keys(const zf_s3_opts *o, unsigned *out, char *err, size_t errcap)
{
    unsigned long v = o->max_keys;
    const char *e = getenv("ZF_S3_MAX_KEYS");
    if (!v && e && *e) {
        char *end;
        v = strtoul(e, &end, 10);
        if (*end || !v)
            v = ZF_S3_MAX_KEYS + 1;
    }
    if (v > ZF_S3_MAX_KEYS)
        return ERR(ZF_EINVAL, "max-keys: 1 to %u", ZF_S3_MAX_KEYS);
    *out = v ? (unsigned)v : ZF_S3_MAX_KEYS;
    return ZF_OK;
}

/* the store's prefix: no leading or trailing '/', then one '/' after it */
static char *store_prefix(const char *p)
{
    while (*p == '/')
        p++;
    size_t n = strlen(p);
    while (n && p[n - 1] == '/')
        n--;
    char *s = malloc(n + 2);
    if (s)
        snprintf(s, n + 2, "%.*s%s", (int)n, p, n ? "/" : "");
    return s;
}

/* the backend's state, short of the first request */
static int s3_new(const char *bucket, const char *prefix, const zf_s3_opts *o, s3 **out,
                  char *err, size_t errcap)
{
    s3 *x = calloc(1, sizeof *x);
    if (!x)
        return ZF_ENOMEM;
    x->can_list = 1;
    int rc = bucket_check(bucket, err, errcap); /* before any file or variable is read */
    if (rc == ZF_OK)
        rc = max_keys(o, &x->max_keys, err, errcap);
    if (rc == ZF_OK)
        rc = zf_s3cred_load(&o->cred, &x->cred, err, errcap);
    if (rc == ZF_OK)
        rc = zf_s3_addr_make(x->cred, bucket, &x->addr, err, errcap);
    if (rc == ZF_OK) {
        size_t n = strlen(x->addr.host) + 8;
        x->prefix = store_prefix(prefix);
        x->host_line = malloc(n);
        if (x->host_line)
            snprintf(x->host_line, n, "Host: %s", x->addr.host);
        rc = x->prefix && x->host_line ? ZF_OK : ZF_ENOMEM;
    }
    if (rc == ZF_OK)
        rc = zf_net_open(&o->net, &x->net, err, errcap);
    *out = x;
    return rc;
}

/* can any root metadata document be read (HEAD)?  For a store whose
 * listing is denied: keys may still be readable one by one. */
static int root_readable(const s3 *x)
{
    static const char *const keys[] = {"zarr.json", ".zmetadata", ".zgroup", ".zarray"};
    enum { N = sizeof keys / sizeof *keys };
    prep p[N];
    zf_net_req r[N];
    size_t k = 0;
    for (size_t i = 0; i < N; i++) {
        if (prep_make(x, "HEAD", keys[i], NULL, 0, &p[k]) != ZF_OK)
            continue;
        r[k] = (zf_net_req){.url = p[k].url, .headers = p[k].hdrs, .head = 1};
        k++;
    }
    if (k)
        zf_net_run(x->net, r, k);
    int ok = 0;
    for (size_t i = 0; i < k; i++) {
        ok |= r[i].rc == ZF_OK;
        prep_free(&p[i]);
    }
    return ok;
}

/* the first listing: credentials, bucket and prefix checked at once */
static int probe(s3 *x, char *err, size_t errcap)
{
    zf_store_buf buf = {0};
    zf_s3list_page pg;
    char why[320] = "", code[S3_CODE] = "";
    int rc = list_page(x, x->prefix, NULL, 1, &buf, &pg, why, sizeof why, code);
    if (rc == ZF_OK && !pg.n) {
        rc = ERR(ZF_ENOTFOUND, "no keys under this prefix");
    } else if (rc != ZF_OK && !strcmp(code, "AccessDenied") && root_readable(x)) {
        x->can_list = 0; /* read key by key, from the root's metadata */
        rc = ZF_OK;
    } else if (rc != ZF_OK) {
        rc = ERR(rc, "%s (credentials: %s)", why, x->cred->source);
    }
    zf_s3list_page_free(&pg);
    free(buf.p);
    return rc;
}

int zf_store_open_s3(const char *bucket, const char *prefix, const zf_s3_opts *o, zf_store **out,
                     char *err, size_t errcap)
{
    *out = NULL;
    zf_store *s = calloc(1, sizeof *s);
    if (!s)
        return ZF_ENOMEM;
    s->ops = &s3_ops;
    s3 *x = NULL;
    int rc = s3_new(bucket, prefix, o, &x, err, errcap);
    s->impl = x;
    if (rc == ZF_OK) {
        size_t n = strlen(bucket) + strlen(x->prefix) + 8;
        s->name = malloc(n);
        size_t plen = strlen(x->prefix);
        if (s->name) /* the prefix without its trailing '/' */
            snprintf(s->name, n, "s3://%s/%.*s", bucket, (int)(plen ? plen - 1 : 0), x->prefix);
        rc = s->name ? probe(x, err, errcap) : ZF_ENOMEM;
    }
    if (rc != ZF_OK) {
        zf_store_close(s);
        return rc;
    }
    s->parallel = zf_net_connections(x->net);
    s->remote = 1;
    *out = s;
    return ZF_OK;
}
