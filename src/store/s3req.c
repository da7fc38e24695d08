/* s3req.c - requests of the S3 backend: where a bucket's requests go,
 * signed URLs and header lines, error reasons from S3's error documents,
 * and stamps of objects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/s3_impl.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

int zf_s3i_bucket_check(const char *bucket, char *err, size_t errcap)
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
    int rc = zf_s3i_bucket_check(bucket, err, errcap);
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

void zf_s3i_prep_free(prep *p)
{
    free(p->url);
    zf_sigv4_free(p->sig);
    if (p->cred)
        zf_cred_put(p->cred, p->cv);
    *p = (prep){0};
}

/* the signing key for time's day into *k: the shared one, derived anew
 * (under the lock) when the day or the credentials have changed */
static int todays_key(const s3 *b, const zf_sigv4_cred *c, uint64_t gen, int64_t time,
                      zf_sigv4_key *k)
{
    char day[16];
    struct tm tm;
    time_t t = (time_t)time;
    if (!gmtime_r(&t, &tm) || !strftime(day, sizeof day, "%Y%m%d", &tm))
        return ZF_EINVAL;
    pthread_mutex_lock(&b->keys->lock);
    int rc = ZF_OK;
    if (strcmp(b->keys->key.day, day) || b->keys->gen != gen) {
        rc = zf_sigv4_derive(c, time, &b->keys->key);
        b->keys->gen = rc == ZF_OK ? gen : 0;
    }
    if (rc == ZF_OK)
        *k = b->keys->key;
    pthread_mutex_unlock(&b->keys->lock);
    return rc;
}

/* sign p for method on path (query q) with the current credentials */
static int sign(const s3 *b, const char *method, const char *path, const zf_sigv4_param *q,
                size_t nq, prep *p, char *err, size_t errcap)
{
    p->cred = b->cred->cred;
    int rc = zf_cred_get(p->cred, &p->cv, err, errcap);
    if (rc != ZF_OK)
        return rc;
    zf_sigv4_cred c = {p->cv->id, p->cv->secret, p->cv->token, b->cred->region, "s3"};
    zf_sigv4_param payer = {"x-amz-request-payer", "requester"};
    zf_sigv4_req r = {.method = method, .host = b->addr.host, .path = path, .query = q,
                      .nquery = nq, .headers = b->requester_pays ? &payer : NULL,
                      .nheaders = b->requester_pays ? 1 : 0, .content_sha256 = 1,
                      .time = (int64_t)time(NULL)};
    zf_sigv4_key k;
    int have = b->keys && todays_key(b, &c, p->cv->gen, r.time, &k) == ZF_OK;
    r.key = have ? &k : NULL;
    rc = zf_sigv4_sign(&c, &r, &p->sig);
    explicit_bzero(&k, sizeof k);
    if (rc != ZF_OK && err && errcap)
        snprintf(err, errcap, "cannot sign the request");
    return rc;
}

int zf_s3i_prep(const s3 *b, const char *method, const char *key, const zf_sigv4_param *q,
                size_t nq, prep *p, char *err, size_t errcap)
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
    if (rc == ZF_OK && b->cred->cred)
        rc = sign(b, method, path.data, q, nq, p, err, errcap);
    free(path.data);
    p->url = url.data;
    if (rc != ZF_OK) {
        zf_s3i_prep_free(p);
        return rc;
    }
    size_t k = 0;
    for (size_t i = 0; p->sig && p->sig[i] && k < 5; i++)
        p->hdrs[k++] = p->sig[i];
    p->hdrs[k++] = b->host_line;
    if (b->requester_pays)
        p->hdrs[k++] = "x-amz-request-payer: requester";
    p->hdrs[k] = NULL;
    return ZF_OK;
}

int zf_s3i_expired(const prep *p, long status, const uint8_t *body, size_t n)
{
    if (!p->cv || (status != 400 && status != 403))
        return 0;
    char code[ZF_S3I_CODE] = "", msg[8];
    if (body && n)
        zf_s3list_error((const char *)body, n, code, sizeof code, msg, sizeof msg);
    int expired = !strcmp(code, "ExpiredToken") || !strcmp(code, "InvalidToken") ||
                  !strcmp(code, "TokenRefreshRequired") || (!*code && !n && status == 400);
    return expired && zf_cred_reject(p->cred, p->cv);
}

void zf_s3i_reason(const char *net_err, const uint8_t *body, size_t n, char *err, size_t errcap,
                   char *s3code)
{
    char code[ZF_S3I_CODE] = "", msg[160] = "";
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

void zf_s3i_file_stamp(zf_stamp *st, uint64_t size, int64_t mtime_ns, const char *etag)
{
    zf_stamp_object(st, size, mtime_ns, etag);
}
