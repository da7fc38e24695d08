/* gcs.c - the Google Cloud Storage backend (gcs.h): requests with a bearer
 * token, reads (alt=media), stamps (objects.get), and the store's opening
 * (gcsdir.c lists). */
#include "store/gcs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/gcs_impl.h"
#include "store/gcscred.h"
#include "store/sigv4.h"
#include "store/url.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

/* Google Cloud Storage's own endpoint */
#define GCS_ORIGIN "https://storage.googleapis.com"
/* Largest object resource (objects.get's JSON) read for a stamp. */
#define OBJECT_DOC_MAX (64u << 10)

static const gcs *impl(const zf_store *s)
{
    return s->impl;
}

/* ---- requests ------------------------------------------------------------------ */

/* A request made ready: its URL, its Authorization line and the token held. */
typedef struct greq {
    char *url;
    char *auth;
    const char *hdrs[2];
    const zf_cred_value *cv;
} greq;

static void greq_free(const gcs *g, greq *q)
{
    free(q->url);
    if (q->auth) {
        explicit_bzero(q->auth, strlen(q->auth));
        free(q->auth);
    }
    if (q->cv)
        zf_cred_put(g->cred, q->cv);
    *q = (greq){0};
}

/* the URL and Authorization line of a request for object (NULL: listing) */
static int greq_make(const gcs *g, const char *object, const char *query, greq *q, char *err,
                     size_t errcap)
{
    *q = (greq){0};
    zf_sbuf url = {0};
    zf_sbuf_printf(&url, "%s", g->base);
    if (object) {
        zf_sbuf_add(&url, "/", 1);
        zf_sigv4_encode(&url, object, 0); /* one path segment: '/' as %2F */
    }
    const char *sep = "?";
    if (*query) {
        zf_sbuf_printf(&url, "?%s", query);
        sep = "&";
    }
    if (g->project)
        zf_sbuf_printf(&url, "%suserProject=%s", sep, g->project);
    q->url = url.data;
    int rc = url.failed ? ZF_ENOMEM : ZF_OK;
    if (rc == ZF_OK && g->cred)
        rc = zf_cred_get(g->cred, &q->cv, err, errcap);
    if (rc == ZF_OK && q->cv) {
        size_t n = strlen(q->cv->token) + 32;
        if ((q->auth = malloc(n)))
            snprintf(q->auth, n, "Authorization: Bearer %s", q->cv->token);
        else
            rc = ZF_ENOMEM;
    }
    q->hdrs[0] = q->auth;
    if (rc != ZF_OK)
        greq_free(g, q);
    return rc;
}

/* was q refused because its token expired?  Then the provider fetches anew: 1 */
static int greq_expired(const gcs *g, const greq *q, long status)
{
    return q->cv && status == 401 && zf_cred_reject(g->cred, q->cv);
}

int zf_gcsi_run(const gcs *g, const char *object, const char *query, zf_net_req *r)
{
    for (int tries = 0;; tries++) {
        greq q;
        int rc = greq_make(g, object, query, &q, r->err, r->errcap);
        if (rc != ZF_OK)
            return r->rc = rc;
        r->url = q.url;
        r->headers = q.hdrs;
        zf_net_run(g->net, r, 1);
        int retry = !tries && r->rc != ZF_OK && greq_expired(g, &q, r->status);
        greq_free(g, &q);
        r->url = NULL;
        r->headers = NULL;
        if (!retry)
            return r->rc;
    }
}

void zf_gcsi_reason(const char *net_err, const uint8_t *body, size_t n, char *err, size_t errcap)
{
    if (!err || !errcap)
        return;
    snprintf(err, errcap, "%s", net_err);
    char doc[4097];
    if (!body || !n)
        return;
    n = n < sizeof doc - 1 ? n : sizeof doc - 1;
    memcpy(doc, body, n);
    doc[n] = '\0';
    zf_gcs_oauth_error(doc, err, errcap);
}

/* the whole object name of key */
static char *object_name(const gcs *g, const char *key)
{
    size_t n = strlen(g->prefix) + strlen(key) + 1;
    char *o = malloc(n);
    if (o)
        snprintf(o, n, "%s%s", g->prefix, key);
    return o;
}

/* ---- reads and stamps ------------------------------------------------------------ */

static int gcs_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                    zf_stamp *st, char *err, size_t errcap)
{
    char nerr[ZF_GCSI_ERR] = "", *obj = object_name(impl(s), key);
    if (!obj)
        return ZF_ENOMEM;
    zf_net_req r = {.grow = b, .max = max, .err = nerr, .errcap = sizeof nerr};
    int rc = zf_gcsi_run(impl(s), obj, "alt=media", &r);
    free(obj);
    if (rc != ZF_OK) {
        zf_gcsi_reason(nerr, r.status >= 300 ? b->p : NULL, r.n, err, errcap);
        return rc;
    }
    *n = r.n;
    zf_stamp_object(st, r.size_known ? r.size : r.n, r.last_modified_ns, r.generation);
    return ZF_OK;
}

/* one request of a batch: what the engine needs, its token, its reason */
typedef struct bitem {
    greq q;
    char *obj;
    char nerr[ZF_GCSI_ERR];
} bitem;

/* one pass over the requests not done; those refused for an expired token
 * are left undone for a second pass (*again counts them) */
static int read_pass(const gcs *g, zf_store_req *reqs, size_t n, unsigned char *done,
                     size_t *again, int may_retry)
{
    zf_net_req *nr = calloc(n ? n : 1, sizeof *nr);
    bitem *bi = calloc(n ? n : 1, sizeof *bi);
    size_t *map = calloc(n ? n : 1, sizeof *map), k = 0;
    int rc = nr && bi && map ? ZF_OK : ZF_ENOMEM;
    *again = 0;
    for (size_t i = 0; rc == ZF_OK && i < n; i++) {
        zf_store_req *q = &reqs[i];
        if (done[i])
            continue;
        done[i] = 1;
        q->rc = ZF_OK;
        if (!q->len)
            continue;
        if (!(bi[k].obj = object_name(g, q->key))) {
            q->rc = ZF_ENOMEM;
            continue;
        }
        q->rc = greq_make(g, bi[k].obj, "alt=media", &bi[k].q, q->err, q->errcap);
        if (q->rc != ZF_OK) {
            free(bi[k].obj);
            bi[k].obj = NULL;
            continue;
        }
        nr[k] = (zf_net_req){.url = bi[k].q.url, .headers = bi[k].q.hdrs, .off = q->off,
                             .len = q->len, .buf = q->buf, .cap = q->len, .err = bi[k].nerr,
                             .errcap = sizeof bi[k].nerr};
        map[k++] = i;
    }
    if (k)
        zf_net_run(g->net, nr, k);
    for (size_t j = 0; j < k; j++) {
        zf_store_req *q = &reqs[map[j]];
        q->rc = nr[j].rc;
        if (q->rc != ZF_OK && may_retry && greq_expired(g, &bi[j].q, nr[j].status)) {
            done[map[j]] = 0;
            (*again)++;
        } else if (q->rc != ZF_OK) {
            zf_gcsi_reason(bi[j].nerr, nr[j].status >= 300 ? q->buf : NULL, nr[j].n, q->err,
                           q->errcap);
        }
        greq_free(g, &bi[j].q);
        free(bi[j].obj);
    }
    free(nr);
    free(bi);
    free(map);
    return rc;
}

static int gcs_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    unsigned char *done = calloc(n ? n : 1, 1);
    if (!done)
        return ZF_ENOMEM;
    size_t again = 0;
    int rc = read_pass(impl(s), reqs, n, done, &again, 1);
    if (rc == ZF_OK && again) /* the token expired: once more with a new one */
        rc = read_pass(impl(s), reqs, n, done, &again, 0);
    free(done);
    for (size_t i = 0; rc == ZF_OK && i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return rc;
}

static int gcs_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    *st = (zf_stamp){0};
    if (!*key) { /* the root: its objects were seen at open */
        st->kind = ZF_STORE_DIR;
        return ZF_OK;
    }
    char nerr[ZF_GCSI_ERR] = "", *obj = object_name(impl(s), key);
    if (!obj)
        return ZF_ENOMEM;
    zf_store_buf b = {0};
    zf_net_req r = {.grow = &b, .max = OBJECT_DOC_MAX, .err = nerr, .errcap = sizeof nerr};
    int rc = zf_gcsi_run(impl(s), obj, "", &r);
    free(obj);
    if (rc == ZF_OK)
        rc = zf_gcs_object_parse((const char *)b.p, r.n, st, err, errcap);
    else if (rc != ZF_ENOTFOUND)
        zf_gcsi_reason(nerr, r.status >= 300 ? b.p : NULL, r.n, err, errcap);
    free(b.p);
    if (rc != ZF_ENOTFOUND)
        return rc;
    rc = zf_gcsi_dir_stamp(impl(s), key, st, err, errcap);
    if (rc == ZF_OK && err && errcap)
        *err = '\0';
    return rc;
}

/* ---- open and close ------------------------------------------------------------------ */

static void gcs_close(zf_store *s)
{
    gcs *g = s->impl;
    if (!g)
        return;
    zf_net_close(g->net);
    zf_cred_free(g->cred);
    free(g->base);
    free(g->prefix);
    free(g->project);
    free(g);
}

/* the token's source, or anonymous */
static void gcs_credentials(const zf_store *s, char *out, size_t cap)
{
    if (impl(s)->cred)
        zf_cred_describe(impl(s)->cred, out, cap);
    else
        snprintf(out, cap, "none (anonymous)");
}

static const zf_store_ops gcs_ops = {.close = gcs_close, .read = gcs_read, .read_many = gcs_read_many,
                                     .stamp = gcs_stamp, .list = zf_gcsi_list};

/* may a token go to the endpoint?  https, or http to a loopback address */
static int secure_endpoint(const char *endpoint)
{
    zf_url u;
    if (zf_url_parse(endpoint, &u, NULL, 0) != ZF_OK)
        return 0;
    int ok = u.kind == ZF_URL_HTTPS ||
             (u.kind == ZF_URL_HTTP && (!strcmp(u.host, "localhost") || !strncmp(u.host, "127.", 4) ||
                                        !strcmp(u.host, "[::1]")));
    zf_url_free(&u);
    return ok;
}

/* base URL and prefix of the store */
static int place(gcs *g, const char *bucket, const char *prefix, const char *endpoint)
{
    zf_sbuf b = {0}, p = {0};
    size_t n = strlen(endpoint);
    while (n && endpoint[n - 1] == '/')
        n--;
    zf_sbuf_add(&b, endpoint, n);
    zf_sbuf_printf(&b, "/storage/v1/b/");
    zf_sigv4_encode(&b, bucket, 0);
    zf_sbuf_printf(&b, "/o");
    while (*prefix == '/')
        prefix++;
    n = strlen(prefix);
    while (n && prefix[n - 1] == '/')
        n--;
    zf_sbuf_add(&p, prefix, n);
    zf_sbuf_add(&p, n ? "/" : "", n ? 1 : 0);
    zf_sbuf_add(&p, "", 0);
    g->base = b.data;
    g->prefix = p.data ? p.data : strdup("");
    return b.failed || p.failed || !g->base || !g->prefix ? ZF_ENOMEM : ZF_OK;
}

/* the backend's state, short of the first request */
static int gcs_new(const char *bucket, const char *prefix, const zf_gcs_opts *o, gcs **out,
                   char *err, size_t errcap)
{
    gcs *g = calloc(1, sizeof *g);
    if (!g)
        return ZF_ENOMEM;
    *out = g;
    g->can_list = 1;
    int rc = zf_store_page_size(o->max_results, "ZF_GCS_MAX_RESULTS", ZF_GCS_MAX_RESULTS,
                                &g->max_results, err, errcap);
    if (rc == ZF_OK)
        rc = place(g, bucket, prefix, o->endpoint ? o->endpoint : GCS_ORIGIN);
    if (rc == ZF_OK && o->user_project) {
        zf_sbuf p = {0};
        zf_sigv4_encode(&p, o->user_project, 0);
        g->project = p.data;
        rc = p.failed || !p.data ? ZF_ENOMEM : ZF_OK;
    }
    zf_gcscred_opts co = {.cafile = o->net.cafile, .note = o->note};
    if (rc == ZF_OK && !o->anonymous)
        rc = zf_gcscred_open(&co, &g->cred, err, errcap);
    if (rc == ZF_OK && g->cred && o->endpoint && !secure_endpoint(o->endpoint))
        rc = ERR(ZF_EINVAL, "-o endpoint=%s: tokens go over https only (or to a loopback "
                 "address); -o anonymous for an emulator", o->endpoint);
    if (rc == ZF_OK && !g->cred && o->note)
        o->note(ZF_LOG_INFO, o->anonymous ? "credentials: none (anonymous)"
                             : "credentials: none (anonymous: no Google credentials found)");
    if (rc == ZF_OK)
        rc = zf_net_open(&o->net, &g->net, err, errcap);
    return rc;
}

/* can any root metadata document be read (objects.get)?  For a store whose
 * listing is refused: objects may still be readable one by one. */
static int root_readable(const gcs *g)
{
    static const char *const keys[] = {"zarr.json", ".zmetadata", ".zgroup", ".zarray"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char *obj = object_name(g, keys[i]);
        zf_store_buf b = {0};
        zf_net_req r = {.grow = &b, .max = OBJECT_DOC_MAX};
        int rc = obj ? zf_gcsi_run(g, obj, "", &r) : ZF_ENOMEM;
        free(obj);
        free(b.p);
        if (rc == ZF_OK)
            return 1;
    }
    return 0;
}

/* the first listing: credentials, bucket and prefix checked at once */
static int probe(gcs *g, char *err, size_t errcap)
{
    char why[ZF_GCSI_ERR + 160] = "";
    long status = 0;
    int rc = zf_gcsi_any(g, g->prefix, &status, why, sizeof why);
    if (rc == ZF_ENOTFOUND && status == 404) {
        rc = ERR(ZF_ENOTFOUND, "%s", why); /* no such bucket */
    } else if (rc == ZF_ENOTFOUND) {
        rc = ERR(ZF_ENOTFOUND, "no objects under this prefix");
    } else if (rc != ZF_OK && (status == 401 || status == 403) && root_readable(g)) {
        g->can_list = 0; /* read key by key, from the root's metadata */
        rc = ZF_OK;
    } else if (rc != ZF_OK) {
        char src[160] = "anonymous";
        if (g->cred)
            zf_cred_describe(g->cred, src, sizeof src);
        rc = ERR(rc, "%s (credentials: %s)", why, src);
    }
    return rc;
}

int zf_store_open_gcs(const char *bucket, const char *prefix, const zf_gcs_opts *o,
                      zf_store **out, char *err, size_t errcap)
{
    *out = NULL;
    zf_store *s = calloc(1, sizeof *s);
    if (!s)
        return ZF_ENOMEM;
    s->ops = &gcs_ops;
    gcs *g = NULL;
    int rc = gcs_new(bucket, prefix, o, &g, err, errcap);
    s->impl = g;
    if (rc == ZF_OK) {
        size_t n = strlen(bucket) + strlen(g->prefix) + 8, plen = strlen(g->prefix);
        if ((s->name = malloc(n))) /* the prefix without its trailing '/' */
            snprintf(s->name, n, "gs://%s/%.*s", bucket, (int)(plen ? plen - 1 : 0), g->prefix);
        rc = s->name ? probe(g, err, errcap) : ZF_ENOMEM;
    }
    if (rc != ZF_OK) {
        zf_store_close(s);
        return rc;
    }
    s->parallel = zf_net_connections(g->net);
    s->budget_ms = zf_net_budget_ms(g->net);
    s->remote = 1;
    s->credentials = gcs_credentials;
    *out = s;
    return ZF_OK;
}
