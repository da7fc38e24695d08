/* http.c - the plain HTTP(S) backend (http.h): whole and ranged GETs, HEAD
 * stamps, no listing; a bearer token read from a file when it changes. */
#include "store/http.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "store/url.h"

/* A bearer token file larger than this is refused. */
#define TOKEN_MAX (16u << 10)

/* The bearer token file and the token last read from it. */
typedef struct bearer {
    pthread_mutex_t mu;
    char *path;
    char *token;         /* NULL until read; wiped when replaced */
    struct stat seen;    /* the file when it was read */
} bearer;

typedef struct http {
    zf_net *net;
    char *origin;   /* "http[s]://host[:port]" */
    char *prefix;   /* unescaped, "" for the root */
    bearer *tok;    /* NULL: no bearer token */
} http;

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

/* the token of the open file fd (st its stat): one line of printable ASCII */
static char *read_token(int fd, const struct stat *st)
{
    char *t = malloc((size_t)st->st_size + 1);
    ssize_t n = t ? read(fd, t, (size_t)st->st_size) : -1;
    if (n < 0) {
        free(t);
        return NULL;
    }
    t[n] = '\0';
    while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t'))
        t[--n] = '\0';
    for (ssize_t i = 0; i < n; i++)
        if ((unsigned char)t[i] <= ' ' || (unsigned char)t[i] >= 0x7f)
            n = 0;
    if (!n) {
        wipe_free(t);
        return NULL;
    }
    return t;
}

/* a copy of the current token (malloc'd: wipe_free), the file read again
 * when it changed (another inode, size, mtime or ctime) */
static int token_copy(bearer *b, char **out, char *err, size_t errcap)
{
    *out = NULL;
    int fd = open(b->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    int rc = ZF_OK;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > TOKEN_MAX)
        rc = ZF_EIO;
    pthread_mutex_lock(&b->mu);
    int same = rc == ZF_OK && b->token && st.st_ino == b->seen.st_ino &&
               st.st_dev == b->seen.st_dev && st.st_size == b->seen.st_size &&
               st.st_mtim.tv_sec == b->seen.st_mtim.tv_sec &&
               st.st_mtim.tv_nsec == b->seen.st_mtim.tv_nsec &&
               st.st_ctim.tv_sec == b->seen.st_ctim.tv_sec &&
               st.st_ctim.tv_nsec == b->seen.st_ctim.tv_nsec;
    char *fresh = rc == ZF_OK && !same ? read_token(fd, &st) : NULL;
    if (rc == ZF_OK && !same && !fresh)
        rc = ZF_EIO;
    if (fresh) {
        wipe_free(b->token);
        b->token = fresh;
        b->seen = st;
    }
    if (rc == ZF_OK && !(*out = strdup(b->token)))
        rc = ZF_ENOMEM;
    pthread_mutex_unlock(&b->mu);
    if (fd >= 0)
        close(fd);
    if (rc == ZF_EIO && err && errcap)
        snprintf(err, errcap, "bearer token file %s: not a regular file of at most %u bytes "
                 "holding one token", b->path, TOKEN_MAX);
    return rc;
}

static void bearer_free(bearer *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->mu);
    wipe_free(b->token);
    free(b->path);
    free(b);
}

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
    if (!h)
        return;
    zf_net_close(h->net);
    bearer_free(h->tok);
    free(h->origin);
    free(h->prefix);
    free(h);
}

static int http_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                     zf_stamp *st, char *err, size_t errcap)
{
    *n = 0;
    char *url = key_url(impl(s), key), *tok = NULL;
    if (!url)
        return ZF_ENOMEM;
    int rc = impl(s)->tok ? token_copy(impl(s)->tok, &tok, err, errcap) : ZF_OK;
    zf_net_req r = {.url = url, .bearer = tok, .grow = b, .max = max, .err = err, .errcap = errcap};
    if (rc == ZF_OK)
        rc = zf_net_run(impl(s)->net, &r, 1);
    free(url);
    wipe_free(tok);
    if (rc == ZF_OK) {
        *n = r.n;
        stamp_of(&r, r.size_known ? r.size : r.n, st);
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
    char *tok = NULL;
    int rc = impl(s)->tok && m ? token_copy(impl(s)->tok, &tok, reqs[0].err, reqs[0].errcap)
                               : ZF_OK;
    for (size_t i = 0, j = 0; rc == ZF_OK && i < n; i++) {
        zf_store_req *q = &reqs[i];
        if (!q->len)
            continue;
        rs[j] = (zf_net_req){.url = key_url(impl(s), q->key), .bearer = tok, .off = q->off,
                             .len = q->len, .buf = q->buf, .cap = q->len, .err = q->err,
                             .errcap = q->errcap};
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
    wipe_free(tok);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return ZF_OK;
}

static int http_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    char *url = key_url(impl(s), key), *tok = NULL;
    if (!url)
        return ZF_ENOMEM;
    int rc = impl(s)->tok ? token_copy(impl(s)->tok, &tok, err, errcap) : ZF_OK;
    zf_net_req r = {.url = url, .bearer = tok, .head = 1, .err = err, .errcap = errcap};
    if (rc == ZF_OK)
        rc = zf_net_run(impl(s)->net, &r, 1);
    if (rc == ZF_EIO && (r.status == 405 || r.status == 501)) { /* a server without HEAD: */
        uint8_t first;                                        /* its first byte's answer */
        r = (zf_net_req){.url = url, .bearer = tok, .off = 0, .len = 1, .buf = &first,
                         .cap = 1, .err = err, .errcap = errcap};
        rc = zf_net_run(impl(s)->net, &r, 1);
    }
    free(url);
    wipe_free(tok);
    if (rc == ZF_OK)
        stamp_of(&r, r.size_known ? r.size : 0, st);
    return rc;
}

static int http_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                     void *ctx, char *err, size_t errcap)
{
    return ZF_EUNSUPPORTED;
}

/* a bearer token's file, when the store has one */
static void http_credentials(const zf_store *s, char *out, size_t cap)
{
    if (impl(s)->tok)
        snprintf(out, cap, "bearer token (file %s)", impl(s)->tok->path);
}

static const zf_store_ops http_ops = {
    .close = http_close,
    .read = http_read,
    .read_many = http_read_many,
    .stamp = http_stamp,
    .list = http_list,
};

/* the bearer token file's state (its first read checks it now) */
static int bearer_open(const char *path, bearer **out, char *err, size_t errcap)
{
    bearer *b = calloc(1, sizeof *b);
    if (!b || !(b->path = realpath(path, NULL))) { /* the daemon leaves its directory */
        int e = errno;
        free(b);
        if (!b)
            return ZF_ENOMEM;
        if (err && errcap)
            snprintf(err, errcap, "bearer token file %s: %s", path, strerror(e));
        return ZF_EINVAL;
    }
    pthread_mutex_init(&b->mu, NULL);
    *out = b;
    char *t = NULL;
    int rc = token_copy(b, &t, err, errcap);
    wipe_free(t);
    return rc;
}

int zf_store_open_http(const char *origin, const char *prefix, const char *name,
                       const zf_net_opts *o, const char *bearer_file, zf_store **out, char *err,
                       size_t errcap)
{
    *out = NULL;
    zf_store *s = calloc(1, sizeof *s);
    http *h = calloc(1, sizeof *h);
    if (s) {
        s->ops = &http_ops;
        s->impl = h;
    }
    int rc = s && h && (h->origin = strdup(origin)) && (h->prefix = strdup(prefix)) &&
                     (s->name = strdup(name)) ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK && bearer_file)
        rc = bearer_open(bearer_file, &h->tok, err, errcap);
    if (rc == ZF_OK)
        rc = zf_net_open(o, &h->net, err, errcap);
    if (rc != ZF_OK) {
        if (h)
            zf_store_close(s);
        else
            free(s);
        return rc;
    }
    s->parallel = zf_net_connections(h->net);
    s->budget_ms = zf_net_budget_ms(h->net);
    s->remote = 1;
    s->credentials = http_credentials;
    *out = s;
    return ZF_OK;
}
