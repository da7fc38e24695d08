/* s3.c - the S3 backend: keys as objects under a bucket's prefix, each
 * request signed (SigV4) just before it is handed to the net engine; reads,
 * stamps, and the store's opening (s3req.c makes the requests, s3dir.c
 * lists). */
#include "store/s3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/s3_impl.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

static const s3 *impl(const zf_store *s)
{
    return s->impl;
}

/* ---- reads and stamps ------------------------------------------------------ */

static int s3_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                   zf_stamp *st, char *err, size_t errcap)
{
    const s3 *x = impl(s);
    char nerr[160] = "";
    zf_net_req r;
    for (int tries = 0; tries < 2; tries++) {
        prep p;
        int rc = zf_s3i_prep(x, "GET", key, NULL, 0, &p, err, errcap);
        if (rc != ZF_OK)
            return rc;
        r = (zf_net_req){.url = p.url, .headers = p.hdrs, .grow = b, .max = max, .err = nerr,
                         .errcap = sizeof nerr};
        zf_net_run(x->net, &r, 1);
        int retry = !tries && r.rc != ZF_OK && zf_s3i_expired(&p, r.status, b->p, r.n);
        zf_s3i_prep_free(&p);
        if (!retry)
            break;
    }
    if (r.rc != ZF_OK) {
        zf_s3i_reason(nerr, r.status >= 300 ? b->p : NULL, r.n, err, errcap, NULL);
        return r.rc;
    }
    *n = r.n;
    zf_s3i_file_stamp(st, r.size_known ? r.size : r.n, r.last_modified_ns, r.etag);
    return ZF_OK;
}

/* per request of a batch: what the engine needs, and its reason buffer */
typedef struct batch_item {
    prep p;
    char nerr[160];
} batch_item;

/* one pass of the batch over the requests not done; *expired gets how many
 * failed because the credentials expired (left undone for another pass) */
static int read_pass(const s3 *x, zf_store_req *reqs, size_t n, unsigned char *done,
                     size_t *expired, int may_retry)
{
    zf_net_req *nr = calloc(n ? n : 1, sizeof *nr);
    batch_item *bi = calloc(n ? n : 1, sizeof *bi);
    size_t *map = calloc(n ? n : 1, sizeof *map), k = 0;
    int rc = nr && bi && map ? ZF_OK : ZF_ENOMEM;
    *expired = 0;
    for (size_t i = 0; rc == ZF_OK && i < n; i++) {
        if (done[i])
            continue;
        done[i] = 1;
        reqs[i].rc = ZF_OK;
        if (!reqs[i].len)
            continue;
        reqs[i].rc = zf_s3i_prep(x, "GET", reqs[i].key, NULL, 0, &bi[k].p, reqs[i].err,
                                 reqs[i].errcap);
        if (reqs[i].rc != ZF_OK)
            continue;
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
        if (q->rc == ZF_OK && q->seen)
            zf_net_req_seen(&nr[j], q->seen);
        if (q->rc != ZF_OK && may_retry &&
            zf_s3i_expired(&bi[j].p, nr[j].status, q->buf, nr[j].n)) {
            done[map[j]] = 0; /* signed again in the next pass */
            (*expired)++;
        } else if (q->rc != ZF_OK) {
            zf_s3i_reason(bi[j].nerr, nr[j].status >= 300 ? q->buf : NULL, nr[j].n, q->err,
                          q->errcap, NULL);
        }
    }
    for (size_t j = 0; bi && j < k; j++)
        zf_s3i_prep_free(&bi[j].p);
    free(nr);
    free(bi);
    free(map);
    return rc;
}

static int s3_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    unsigned char *done = calloc(n ? n : 1, 1);
    if (!done)
        return ZF_ENOMEM;
    size_t expired = 0;
    int rc = read_pass(impl(s), reqs, n, done, &expired, 1);
    if (rc == ZF_OK && expired) /* the credentials expired: once more with new ones */
        rc = read_pass(impl(s), reqs, n, done, &expired, 0);
    free(done);
    for (size_t i = 0; rc == ZF_OK && i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return rc;
}

static int s3_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    const s3 *x = impl(s);
    *st = (zf_stamp){0};
    if (!*key) { /* the root: its keys were seen at open */
        st->kind = ZF_STORE_DIR;
        return ZF_OK;
    }
    zf_net_req r;
    int rc;
    for (int tries = 0; tries < 2; tries++) {
        prep p;
        rc = zf_s3i_prep(x, "HEAD", key, NULL, 0, &p, err, errcap);
        if (rc != ZF_OK)
            return rc;
        r = (zf_net_req){.url = p.url, .headers = p.hdrs, .head = 1, .err = err, .errcap = errcap};
        zf_net_run(x->net, &r, 1);
        int retry = !tries && r.rc != ZF_OK && zf_s3i_expired(&p, r.status, NULL, 0);
        zf_s3i_prep_free(&p);
        if (!retry)
            break;
    }
    if (r.rc == ZF_OK)
        zf_s3i_file_stamp(st, r.size, r.last_modified_ns, r.etag);
    if (r.rc != ZF_ENOTFOUND)
        return r.rc;
    rc = zf_s3i_dir_stamp(x, key, st, err, errcap);
    if (rc == ZF_OK && err && errcap)
        *err = '\0'; /* a prefix: the HEAD's 404 was no error */
    return rc;
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
    if (x->keys) {
        pthread_mutex_destroy(&x->keys->lock);
        explicit_bzero(x->keys, sizeof *x->keys);
        free(x->keys);
    }
    free(x);
}

/* the credentials' source, or anonymous */
static void s3_credentials(const zf_store *s, char *out, size_t cap)
{
    if (impl(s)->cred->cred)
        zf_cred_describe(impl(s)->cred->cred, out, cap);
    else
        snprintf(out, cap, "none (anonymous)");
}

static const zf_store_ops s3_ops = {.close = s3_close, .read = s3_read, .read_many = s3_read_many,
                                    .stamp = s3_stamp, .list = zf_s3i_list};

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
    int rc = zf_s3i_bucket_check(bucket, err, errcap); /* before any file or variable is read */
    if (rc == ZF_OK)
        rc = zf_store_page_size(o->max_keys, "ZF_S3_MAX_KEYS", ZF_S3_MAX_KEYS, &x->max_keys, err,
                                errcap);
    x->requester_pays = o->requester_pays;
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
    if (rc == ZF_OK && x->cred->cred) { /* the signing key, shared */
        x->keys = calloc(1, sizeof *x->keys);
        rc = x->keys ? ZF_OK : ZF_ENOMEM;
        if (x->keys)
            pthread_mutex_init(&x->keys->lock, NULL);
    }
    if (rc == ZF_OK) {
        zf_net_opts no = o->net; /* -o cafile= over the AWS CLI's CA bundle */
        if (!no.cafile)
            no.cafile = x->cred->ca_bundle;
        rc = zf_net_open(&no, &x->net, err, errcap);
    }
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
        if (zf_s3i_prep(x, "HEAD", keys[i], NULL, 0, &p[k], NULL, 0) != ZF_OK)
            continue;
        r[k] = (zf_net_req){.url = p[k].url, .headers = p[k].hdrs, .head = 1};
        k++;
    }
    if (k)
        zf_net_run(x->net, r, k);
    int ok = 0;
    for (size_t i = 0; i < k; i++) {
        ok |= r[i].rc == ZF_OK;
        zf_s3i_prep_free(&p[i]);
    }
    return ok;
}

/* the first listing: credentials, bucket and prefix checked at once */
static int probe(s3 *x, char *err, size_t errcap)
{
    zf_store_buf buf = {0};
    zf_s3list_page pg;
    char why[320] = "", code[ZF_S3I_CODE] = "";
    int rc = zf_s3i_list_page(x, x->prefix, NULL, 1, &buf, &pg, why, sizeof why, code);
    if (rc == ZF_OK && !pg.n) {
        rc = ERR(ZF_ENOTFOUND, "no keys under this prefix");
    } else if (rc != ZF_OK && !strcmp(code, "AccessDenied") && root_readable(x)) {
        x->can_list = 0; /* read key by key, from the root's metadata */
        rc = ZF_OK;
    } else if (rc != ZF_OK) {
        char src[160] = "anonymous";
        if (x->cred->cred)
            zf_cred_describe(x->cred->cred, src, sizeof src);
        rc = ERR(rc, "%s (credentials: %s)", why, src);
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
        rc = !s->name ? ZF_ENOMEM : o->objects_only ? ZF_OK : probe(x, err, errcap);
    }
    if (rc != ZF_OK) {
        zf_store_close(s);
        return rc;
    }
    s->parallel = zf_net_connections(x->net);
    s->budget_ms = zf_net_budget_ms(x->net);
    s->remote = 1;
    s->credentials = s3_credentials;
    if (!x->cred->cred && o->cred.note)
        o->cred.note(ZF_LOG_INFO, "credentials: none (anonymous)");
    *out = s;
    return ZF_OK;
}
