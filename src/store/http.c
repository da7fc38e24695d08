/* http.c - the plain HTTP(S) backend (http.h): whole and ranged GETs, HEAD
 * stamps, no listing. */
#include "store/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/url.h"

typedef struct http {
    zf_net *net;
    char *origin;   /* "http[s]://host[:port]" */
    char *prefix;   /* unescaped, "" for the root */
} http;

static const http *impl(const zf_store *s)
{
    return s->impl;
}

/* the URL of key (malloc'd; NULL when out of memory) */
static char *key_url(const http *h, const char *key)
{
    return zf_url_object(h->origin, h->prefix, key);
}

/* the stamp a response describes */
static void stamp_of(const zf_net_req *r, uint64_t size, zf_stamp *st)
{
    memset(st, 0, sizeof *st);
    st->kind = ZF_STORE_FILE;
    st->size = size;
    st->mtime = r->last_modified_ns;
    if (r->etag[0]) {
        zf_fp_init(&st->tag);
        zf_fp_add(&st->tag, r->etag, strlen(r->etag));
    }
}

static void http_close(zf_store *s)
{
    http *h = s->impl;
    zf_net_close(h->net);
    free(h->origin);
    free(h->prefix);
    free(h);
}

static int http_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                     zf_stamp *st, char *err, size_t errcap)
{
    *n = 0;
    char *url = key_url(impl(s), key);
    if (!url)
        return ZF_ENOMEM;
    zf_net_req r = {.url = url, .grow = b, .max = max, .err = err, .errcap = errcap};
    int rc = zf_net_run(impl(s)->net, &r, 1);
    free(url);
    if (rc == ZF_OK) {
        *n = r.n;
        stamp_of(&r, r.n, st);
    }
    return rc;
}

static int http_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    size_t m = 0; /* requests of length 0 need no fetch */
    for (size_t i = 0; i < n; i++) {
        reqs[i].rc = ZF_OK;
        m += reqs[i].len > 0;
    }
    zf_net_req *rs = calloc(m ? m : 1, sizeof *rs);
    if (!rs)
        return ZF_ENOMEM;
    int rc = ZF_OK;
    for (size_t i = 0, j = 0; i < n; i++) {
        zf_store_req *q = &reqs[i];
        if (!q->len)
            continue;
        rs[j] = (zf_net_req){.url = key_url(impl(s), q->key), .off = q->off, .len = q->len,
                             .buf = q->buf, .cap = q->len, .err = q->err, .errcap = q->errcap};
        if (!rs[j++].url)
            rc = ZF_ENOMEM;
    }
    if (rc == ZF_OK)
        zf_net_run(impl(s)->net, rs, m);
    for (size_t i = 0, j = 0; i < n; i++) {
        if (!reqs[i].len)
            continue;
        reqs[i].rc = rc == ZF_OK ? rs[j].rc : rc;
        if (reqs[i].rc == ZF_OK && reqs[i].seen)
            zf_net_req_seen(&rs[j], reqs[i].seen);
        free((char *)rs[j++].url);
    }
    free(rs);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return ZF_OK;
}

static int http_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    char *url = key_url(impl(s), key);
    if (!url)
        return ZF_ENOMEM;
    zf_net_req r = {.url = url, .head = 1, .err = err, .errcap = errcap};
    int rc = zf_net_run(impl(s)->net, &r, 1);
    free(url);
    if (rc == ZF_OK)
        stamp_of(&r, r.size_known ? r.size : 0, st);
    return rc;
}

static int http_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                     void *ctx)
{
    return ZF_EUNSUPPORTED;
}

static const zf_store_ops http_ops = {
    .close = http_close,
    .read = http_read,
    .read_many = http_read_many,
    .stamp = http_stamp,
    .list = http_list,
};

int zf_store_open_http(const char *origin, const char *prefix, const char *name,
                       const zf_net_opts *o, zf_store **out, char *err, size_t errcap)
{
    *out = NULL;
    zf_store *s = calloc(1, sizeof *s);
    http *h = calloc(1, sizeof *h);
    if (!s || !h || !(h->origin = strdup(origin)) || !(h->prefix = strdup(prefix)) ||
        !(s->name = strdup(name))) {
        if (h) {
            free(h->origin);
            free(h->prefix);
        }
        free(h);
        if (s)
            free(s->name);
        free(s);
        return ZF_ENOMEM;
    }
    int rc = zf_net_open(o, &h->net, err, errcap);
    if (rc != ZF_OK) {
        free(h->origin);
        free(h->prefix);
        free(h);
        free(s->name);
        free(s);
        return rc;
    }
    s->ops = &http_ops;
    s->impl = h;
    s->parallel = zf_net_connections(h->net);
    s->budget_ms = zf_net_budget_ms(h->net);
    s->remote = 1;
    *out = s;
    return ZF_OK;
}
