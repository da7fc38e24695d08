/* targets.c - byte ranges of outside objects, read on the user's consent
 * (targets.h): locations to stores and keys, the pool of stores, reads with
 * neighbours coalesced, and the version checks. */
#include "store/targets.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "store/url.h"

#define URL_MAX 4096
#define GAP_MAX (64u << 10)        /* neighbours at most this far apart are read together */
#define READ_MAX ((size_t)16 << 20) /* ... up to this much at once */

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

/* one opened location root */
typedef struct pooled {
    char *spec;
    zf_store *store;
} pooled;

struct zf_targets {
    zf_consent *consent;
    zf_targets_open_fn open;
    void *ctx;
    void (*ctx_free)(void *);
    pthread_mutex_t mu;
    pooled *v;
    size_t n, cap;
};

zf_targets *zf_targets_new(zf_consent *consent, zf_targets_open_fn open, void *ctx,
                           void (*ctx_free)(void *))
{
    zf_targets *t = calloc(1, sizeof *t);
    if (!t) {
        zf_consent_free(consent);
        if (ctx_free)
            ctx_free(ctx);
        return NULL;
    }
    *t = (zf_targets){.consent = consent, .open = open, .ctx = ctx, .ctx_free = ctx_free};
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void zf_targets_free(zf_targets *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].spec);
        zf_store_close(t->v[i].store);
    }
    free(t->v);
    zf_consent_free(t->consent);
    if (t->ctx_free)
        t->ctx_free(t->ctx);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

const zf_consent *zf_targets_consent(const zf_targets *t)
{
    return t->consent;
}

int zf_targets_allowed(const zf_targets *t, const char *url, char *out, size_t cap)
{
    if (zf_consent_allows(t->consent, url))
        return 1;
    return zf_consent_container(url, out, cap) == ZF_OK ? 0 : -1;
}

/* ------------------------------------------------------------ locations */


/* %-decode s (n bytes) into out; refuse bad escapes, NUL, and "." or ".."
 * segments or empty segments the decoding made */
static int decode_key(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            if ((c = zf_url_unescape_at(s, n, i)) < 0)
                return -1;
            i += 2;
        }
        if (c == 0 || k + 1 >= cap)
            return -1;
        out[k++] = (char)c;
    }
    out[k] = '\0';
    for (char *seg = out; *seg;) { /* every segment a name */
        size_t len = strcspn(seg, "/");
        if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && !strncmp(seg, "..", 2)))
            return -1;
        seg += len + (seg[len] == '/');
    }
    return 0;
}

/* where a location is: the store's root spec and the key under it */
typedef struct place {
    char spec[URL_MAX];
    char key[URL_MAX];
} place;

/* the directory a canonical file: consent prefix roots, %-decoded into out
 * without a trailing '/' ("/" for the root): the prefix itself when it ends
 * in '/' or is a directory of the URL's (dir), else the directory holding it
 * (the prefix names the file itself).  The length of its encoded form
 * (after "file://"), or -1. */
static long file_root(const char *prefix, int dir, char *out, size_t cap)
{
    const char *path = prefix + 7;
    size_t n = strlen(path);
    while (!dir && n > 1 && path[n - 1] != '/')
        n--;
    while (n > 1 && path[n - 1] == '/')
        n--;
    out[0] = '/';
    out[1] = '\0';
    if (n > 1 && decode_key(path + 1, n - 1, out + 1, cap - 1) != 0)
        return -1;
    return (long)n;
}

/* the place of url (canonical: consent's form), allowed by consent */
static int locate(const zf_targets *t, const char *url, place *p, char *err, size_t errcap)
{
    char canon[URL_MAX], why[160] = "";
    if (zf_consent_canonical(url, canon, sizeof canon, why, sizeof why) != ZF_OK)
        return ERR(ZF_EIO, "not a location zarrfs can read (%s)", *why ? why : "too long");
    if (!zf_consent_allows(t->consent, url)) {
        char cont[URL_MAX];
        if (zf_consent_container(url, cont, sizeof cont) != ZF_OK)
            snprintf(cont, sizeof cont, "%s", canon);
        return ERR(ZF_EIO, "not authorised; to read it, add -o virtual=%s", cont);
    }
    char *auth = strstr(canon, "://") + 3, *path = strchr(auth, '/');
    const char *rest = path ? path + 1 : "";
    if (!strncmp(canon, "file:", 5)) { /* rooted at the consent prefix that allows it */
        for (size_t i = 0; i < zf_consent_count(t->consent); i++) {
            const char *pre = zf_consent_prefix(t->consent, i);
            size_t pn = strlen(pre);
            if (strncmp(pre, "file:", 5) || strncmp(canon, pre, pn) ||
                !(pre[pn - 1] == '/' || canon[pn] == '/' || !canon[pn]))
                continue;
            long root = file_root(pre, canon[pn] == '/', p->spec, sizeof p->spec);
            if (root < 0)
                return ERR(ZF_EIO, "the authorised prefix %s is not a directory path", pre);
            const char *key = canon + 7 + root + (root > 1); /* after the root's '/' */
            if (decode_key(key, strlen(key), p->key, sizeof p->key) != 0)
                return ERR(ZF_EIO, "a path zarrfs does not read (an escape, or an empty, \".\" or \"..\" segment)");
            return ZF_OK;
        }
        return ERR(ZF_EIO, "not authorised");
    }
    if (!strncmp(canon, "az:", 3))
        return ERR(ZF_EIO, "az:// locations are not supported");
    size_t alen = path ? (size_t)(path - canon) : strlen(canon);
    if (alen >= sizeof p->spec)
        return ERR(ZF_EIO, "a location too long");
    memcpy(p->spec, canon, alen);
    p->spec[alen] = '\0';
    if (!*rest || decode_key(rest, strlen(rest), p->key, sizeof p->key) != 0)
        return ERR(ZF_EIO, "a key zarrfs does not read (none, an escape, or an empty, \".\" or \"..\" segment)");
    return ZF_OK;
}

/* the store of spec, opened once */
static int pool_get(zf_targets *t, const char *spec, zf_store **out, char *err, size_t errcap)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].spec, spec)) {
            *out = t->v[i].store;
            pthread_mutex_unlock(&t->mu);
            return ZF_OK;
        }
    int rc = ZF_ENOMEM;
    char why[256] = "";
    if (zf_grow(&t->v, &t->cap, t->n, sizeof *t->v, 4))
        goto out;
    char *copy = strdup(spec);
    zf_store *s = NULL;
    if (copy && (rc = t->open(t->ctx, spec, &s, why, sizeof why)) == ZF_OK) {
        t->v[t->n++] = (pooled){copy, s};
        *out = s;
    } else {
        free(copy);
    }
out:
    pthread_mutex_unlock(&t->mu); /* a failure is not kept: the next read tries again */
    if (rc == ZF_ENOMEM)
        return rc;
    return rc == ZF_OK ? rc : ERR(ZF_EIO, "cannot open %s: %s", spec, *why ? why : zf_strerror(rc));
}

/* ------------------------------------------------------------ checks */

/* s without a weak prefix and surrounding quotes, into out */
static void bare_etag(const char *s, char *out, size_t cap)
{
    if (!strncmp(s, "W/", 2))
        s += 2;
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    snprintf(out, cap, "%.*s", (int)n, s);
}

/* is the version the read saw the one the request asks for? */
static int check_version(const zf_target_req *q, int local, const zf_store_seen *seen)
{
    char *err = q->err;
    size_t errcap = q->errcap;
    if (q->etag && *q->etag) {
        char want[256], got[256];
        bare_etag(q->etag, want, sizeof want);
        if (local) /* as Icechunk's local store: inode, mtime in us, size, in hex */
            snprintf(got, sizeof got, "%llx-%llx-%llx", (unsigned long long)seen->ino,
                     (unsigned long long)(seen->mtime_ns / 1000), (unsigned long long)seen->size);
        else
            bare_etag(seen->etag, got, sizeof got);
        if (!*got)
            return ERR(ZF_EIO, "the server sends no ETag to check against the reference's \"%s\"", want);
        if (strcmp(want, got))
            return ERR(ZF_EIO, "changed since the reference was written: ETag \"%s\", the reference "
                       "has \"%s\"", got, want);
    }
    if (q->last_modified) {
        if (!seen->mtime_ns)
            return ERR(ZF_EIO, "the server sends no Last-Modified to check against the reference's");
        if (seen->mtime_ns > (int64_t)q->last_modified * 1000000000)
            return ERR(ZF_EIO, "modified after the time the reference has (%u s since the epoch)",
                       q->last_modified);
    }
    return ZF_OK;
}

/* ------------------------------------------------------------ reads */

/* one read of a store: a range covering one or more requests */
typedef struct job {
    zf_store *store;
    int local;
    place *where;
    uint64_t off;
    size_t len;
    uint8_t *buf;            /* the single request's, or a scratch buffer */
    size_t first, count;     /* requests order[first .. first+count) */
    zf_store_seen seen;
    char err[256];
    int rc;
} job;

typedef struct sort_item {
    size_t req;
    zf_store *store;
    place *where;
} sort_item;

/* order: store, key, offset */
static int by_place(const void *a, const void *b, void *arg)
{
    const sort_item *x = a, *y = b;
    const zf_target_req *reqs = arg;
    if (x->store != y->store)
        return x->store < y->store ? -1 : 1;
    int c = strcmp(x->where->key, y->where->key);
    if (c || !reqs)
        return c;
    uint64_t p = reqs[x->req].off, q = reqs[y->req].off;
    return (p > q) - (p < q);
}

/* group sorted items into jobs (neighbours coalesced); the number of jobs */
static size_t make_jobs(const sort_item *it, size_t n, const zf_target_req *reqs, job *jobs)
{
    size_t nj = 0;
    for (size_t i = 0; i < n; i++) {
        const zf_target_req *q = &reqs[it[i].req];
        job *j = nj ? &jobs[nj - 1] : NULL;
        if (j && !by_place(&it[i - 1], &it[i], NULL) && q->off <= j->off + j->len + GAP_MAX &&
            q->off + q->len - j->off <= READ_MAX) {
            uint64_t end = q->off + q->len > j->off + j->len ? q->off + q->len : j->off + j->len;
            j->len = (size_t)(end - j->off);
            j->count++;
            continue;
        }
        jobs[nj++] = (job){.store = it[i].store, .where = it[i].where, .off = q->off, .len = q->len,
                           .first = i, .count = 1,
                           .local = !strncmp(it[i].where->spec, "/", 1)};
    }
    return nj;
}

/* run the jobs, each store's together */
static void run_jobs(job *jobs, size_t nj, const sort_item *it, zf_target_req *reqs)
{
    for (size_t a = 0; a < nj;) {
        size_t b = a;
        while (b < nj && jobs[b].store == jobs[a].store)
            b++;
        zf_store_req *sr = calloc(b - a, sizeof *sr);
        for (size_t k = a; k < b; k++) {
            job *j = &jobs[k];
            j->buf = j->count == 1 ? reqs[it[j->first].req].buf : malloc(j->len ? j->len : 1);
            j->rc = j->buf ? ZF_OK : ZF_ENOMEM;
            if (sr)
                sr[k - a] = (zf_store_req){.key = j->where->key, .off = j->off, .len = j->len,
                                           .buf = j->buf, .err = j->err, .errcap = sizeof j->err,
                                           .seen = &j->seen};
        }
        if (sr)
            zf_store_read_many(jobs[a].store, sr, b - a);
        for (size_t k = a; k < b; k++)
            if (jobs[k].rc == ZF_OK)
                jobs[k].rc = sr ? sr[k - a].rc : ZF_ENOMEM;
        free(sr);
        a = b;
    }
}

/* each request of job j: its bytes and its version checked */
static void finish_job(job *j, const sort_item *it, zf_target_req *reqs)
{
    for (size_t m = j->first; m < j->first + j->count; m++) {
        zf_target_req *q = &reqs[it[m].req];
        char *err = q->err;
        size_t errcap = q->errcap;
        if (j->rc == ZF_ENOMEM)
            q->rc = ZF_ENOMEM;
        else if (j->rc == ZF_ENOTFOUND)
            q->rc = ERR(ZF_EIO, "the object does not exist");
        else if (j->rc != ZF_OK)
            q->rc = ERR(ZF_EIO, "%s", *j->err ? j->err : zf_strerror(j->rc));
        else
            q->rc = check_version(q, j->local, &j->seen);
        if (q->rc == ZF_OK && j->buf != q->buf)
            memcpy(q->buf, j->buf + (q->off - j->off), q->len);
    }
    if (j->count > 1)
        free(j->buf);
}

/* a failed request's reason, after the object's URL (canonical: no query,
 * which may hold a signature; as given, cut, if it has no canonical form) */
static void name_failure(zf_target_req *q)
{
    if (q->rc == ZF_OK || !q->err || !q->errcap)
        return;
    char url[URL_MAX], why[512];
    if (zf_consent_canonical(q->url, url, sizeof url, NULL, 0) != ZF_OK)
        snprintf(url, sizeof url, "%.*s", (int)strcspn(q->url, "?#"), q->url);
    snprintf(why, sizeof why, "%s", q->err);
    snprintf(q->err, q->errcap, "%.300s: %s", url, *why ? why : zf_strerror(q->rc));
}

int zf_targets_read(zf_targets *t, zf_target_req *reqs, size_t n)
{
    sort_item *it = calloc(n ? n : 1, sizeof *it);
    place *where = calloc(n ? n : 1, sizeof *where);
    job *jobs = calloc(n ? n : 1, sizeof *jobs);
    size_t k = 0;
    int rc = it && where && jobs ? ZF_OK : ZF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        zf_target_req *q = &reqs[i];
        char *err = q->err;
        size_t errcap = q->errcap;
        if (rc != ZF_OK || q->len == 0) {
            q->rc = rc;
            continue;
        }
        if (q->off > UINT64_MAX - q->len) {
            q->rc = ERR(ZF_EIO, "a range beyond the largest object");
            continue;
        }
        zf_store *s = NULL;
        q->rc = locate(t, q->url, &where[i], err, errcap);
        if (q->rc == ZF_OK)
            q->rc = pool_get(t, where[i].spec, &s, err, errcap);
        if (q->rc == ZF_OK)
            it[k++] = (sort_item){i, s, &where[i]};
    }
    if (rc == ZF_OK && k) {
        qsort_r(it, k, sizeof *it, by_place, reqs);
        size_t nj = make_jobs(it, k, reqs, jobs);
        run_jobs(jobs, nj, it, reqs);
        for (size_t j = 0; j < nj; j++)
            finish_job(&jobs[j], it, reqs);
    }
    free(it);
    free(where);
    free(jobs);
    for (size_t i = 0; i < n; i++)
        name_failure(&reqs[i]);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return rc;
}

int zf_targets_stamp(zf_targets *t, const char *url, zf_stamp *st, char *err, size_t errcap)
{
    place *where = malloc(sizeof *where);
    zf_store *s = NULL;
    zf_target_req q = {.url = url, .err = err, .errcap = errcap};
    memset(st, 0, sizeof *st);
    q.rc = where ? locate(t, url, where, err, errcap) : ZF_ENOMEM;
    if (q.rc == ZF_OK)
        q.rc = pool_get(t, where->spec, &s, err, errcap);
    if (q.rc == ZF_OK) {
        char why[256] = "";
        q.rc = zf_store_stamp_why(s, where->key, st, why, sizeof why);
        if (q.rc == ZF_ENOTFOUND)
            q.rc = ERR(ZF_EIO, "the object does not exist");
        else if (q.rc == ZF_OK && st->kind != ZF_STORE_FILE)
            q.rc = ERR(ZF_EIO, "not a regular file");
        else if (q.rc != ZF_OK && q.rc != ZF_ENOMEM)
            q.rc = ERR(ZF_EIO, "%s", *why ? why : zf_strerror(q.rc));
    }
    free(where);
    name_failure(&q);
    return q.rc;
}
