/* sigv4.c - AWS Signature Version 4: canonical request, string to sign,
 * signing key and Authorization header (OpenSSL SHA-256; HMAC on it). */
#include "store/sigv4.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"

#define SHA_LEN 32

static const char hexdig[] = "0123456789abcdef";

static void hex(const unsigned char *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hexdig[d[i] >> 4];
        out[2 * i + 1] = hexdig[d[i] & 15];
    }
    out[2 * n] = '\0';
}

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

void zf_sigv4_encode(zf_sbuf *b, const char *s, int keep_slash)
{
    static const char up[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (unreserved(*p) || (keep_slash && *p == '/')) {
            zf_sbuf_add(b, (const char *)p, 1);
        } else {
            char e[3] = {'%', up[*p >> 4], up[*p & 15]};
            zf_sbuf_add(b, e, 3);
        }
    }
}

void zf_sigv4_path(zf_sbuf *b, const char *path)
{
    if (*path != '/')
        zf_sbuf_add(b, "/", 1);
    zf_sigv4_encode(b, path, 1);
}

/* one query pair, encoded */
typedef struct qpair {
    char *name, *value;
} qpair;

static int qpair_cmp(const void *a, const void *b)
{
    const qpair *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static char *encoded(const char *s)
{
    zf_sbuf b = {0};
    zf_sigv4_encode(&b, s, 0);
    if (!b.failed && !b.data)
        zf_sbuf_add(&b, "", 0);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

void zf_sigv4_query(zf_sbuf *b, const zf_sigv4_param *q, size_t n)
{
    if (!n)
        return;
    qpair *v = calloc(n, sizeof *v);
    int ok = v != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        v[i].name = encoded(q[i].name);
        v[i].value = encoded(q[i].value ? q[i].value : "");
        ok = v[i].name && v[i].value;
    }
    if (ok) {
        qsort(v, n, sizeof *v, qpair_cmp);
        for (size_t i = 0; i < n; i++)
            zf_sbuf_printf(b, "%s%s=%s", i ? "&" : "", v[i].name, v[i].value);
    } else {
        b->failed = 1;
    }
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].name);
        free(v[i].value);
    }
    free(v);
}

/* one header to sign: lower-case name, canonical value (both owned) */
typedef struct hdr {
    char *name, *value;
} hdr;

static int hdr_cmp(const void *a, const void *b)
{
    return strcmp(((const hdr *)a)->name, ((const hdr *)b)->name);
}

/* name lower-cased; NULL if it holds a control character, space or ':' */
static char *lower_name(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    for (size_t i = 0; i <= n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i < n && (c <= ' ' || c == ':' || c == 0x7f)) {
            free(d);
            return NULL;
        }
        d[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    if (!n) {
        free(d);
        return NULL;
    }
    return d;
}

/* value trimmed, inner runs of spaces as one; NULL on a control character */
static char *trim_value(const char *s)
{
    char *d = malloc(strlen(s) + 1), *o = d;
    if (!d)
        return NULL;
    while (*s == ' ' || *s == '\t')
        s++;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c < ' ' && c != '\t') || c == 0x7f) {
            free(d);
            return NULL;
        }
        if (c == ' ' || c == '\t') {
            if (s[1] && s[1] != ' ' && s[1] != '\t')
                *o++ = ' ';
            continue;
        }
        *o++ = (char)c;
    }
    *o = '\0';
    return d;
}

static void hdrs_free(hdr *h, size_t n)
{
    for (size_t i = 0; h && i < n; i++) {
        free(h[i].name);
        if (h[i].value) {
            explicit_bzero(h[i].value, strlen(h[i].value));
            free(h[i].value);
        }
    }
    free(h);
}

static int hdr_set(hdr *h, const char *name, const char *value)
{
    h->name = lower_name(name);
    h->value = trim_value(value);
    return h->name && h->value ? ZF_OK : ZF_EINVAL;
}

/* every header to sign, sorted by name: *out owns them */
static int signed_headers(const zf_sigv4_cred *c, const zf_sigv4_req *r, const char *date,
                          const char *payload, hdr **out, size_t *n)
{
    size_t cap = r->nheaders + 4;
    hdr *h = calloc(cap, sizeof *h);
    if (!h)
        return ZF_ENOMEM;
    size_t k = 0;
    int rc = hdr_set(&h[k++], "host", r->host);
    for (size_t i = 0; rc == ZF_OK && i < r->nheaders; i++)
        rc = hdr_set(&h[k++], r->headers[i].name, r->headers[i].value);
    if (rc == ZF_OK && r->content_sha256)
        rc = hdr_set(&h[k++], "x-amz-content-sha256", payload);
    if (rc == ZF_OK)
        rc = hdr_set(&h[k++], "x-amz-date", date);
    if (rc == ZF_OK && c->session_token && *c->session_token)
        rc = hdr_set(&h[k++], "x-amz-security-token", c->session_token);
    if (rc == ZF_OK) {
        qsort(h, k, sizeof *h, hdr_cmp);
        for (size_t i = 1; i < k; i++)
            if (!strcmp(h[i - 1].name, h[i].name))
                rc = ZF_EINVAL; /* a header given twice (or one we add ourselves) */
    }
    if (rc != ZF_OK) {
        hdrs_free(h, cap);
        return rc;
    }
    *out = h;
    *n = k;
    return ZF_OK;
}

/* SHA-256, fetched once: an implicit fetch on every use costs more than
 * the hashing of a request */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
    pthread_once(&sha256_once, sha256_fetch);
    return sha256_md ? sha256_md : EVP_sha256();
}

static int sha256_hex(const char *s, size_t n, char out[2 * SHA_LEN + 1])
{
    unsigned char d[SHA_LEN];
    unsigned len = 0;
    if (!EVP_Digest(s, n, d, &len, sha256(), NULL) || len != SHA_LEN)
        return ZF_EIO;
    hex(d, SHA_LEN, out);
    return ZF_OK;
}

int zf_sigv4_sha256_hex(const void *data, size_t n, char out[65])
{
    return sha256_hex(data, n, out);
}

/* HMAC-SHA256 (RFC 2104) of msg under key; key and pads wiped after */
static int hmac(const void *key, size_t klen, const char *msg, unsigned char out[SHA_LEN])
{
    enum { BLOCK = 64 };
    unsigned char k[BLOCK] = {0}, pad[BLOCK], inner[SHA_LEN];
    unsigned len = 0;
    int ok = 1;
    if (klen > BLOCK)
        ok = EVP_Digest(key, klen, k, &len, sha256(), NULL);
    else
        memcpy(k, key, klen);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    ok = ok && c;
    for (int pass = 0; ok && pass < 2; pass++) { /* inner: ipad, msg; outer: opad, inner */
        for (int i = 0; i < BLOCK; i++)
            pad[i] = k[i] ^ (pass ? 0x5c : 0x36);
        ok = EVP_DigestInit_ex(c, sha256(), NULL) && EVP_DigestUpdate(c, pad, BLOCK) &&
             (pass ? EVP_DigestUpdate(c, inner, SHA_LEN) : EVP_DigestUpdate(c, msg, strlen(msg))) &&
             EVP_DigestFinal_ex(c, pass ? out : inner, &len) && len == SHA_LEN;
    }
    EVP_MD_CTX_free(c);
    explicit_bzero(k, sizeof k);
    explicit_bzero(pad, sizeof pad);
    explicit_bzero(inner, sizeof inner);
    return ok ? ZF_OK : ZF_EIO;
}

/* the signing key of c for day ("YYYYMMDD") into k */
static int derive(const zf_sigv4_cred *c, const char *day, unsigned char k[SHA_LEN])
{
    size_t slen = strlen(c->secret_key);
    char *k0 = malloc(slen + 5);
    if (!k0)
        return ZF_ENOMEM;
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, c->secret_key, slen + 1);
    int rc = hmac(k0, slen + 4, day, k);
    explicit_bzero(k0, slen + 4);
    free(k0);
    const char *steps[] = {c->region, c->service, "aws4_request"};
    for (size_t i = 0; rc == ZF_OK && i < 3; i++)
        rc = hmac(k, SHA_LEN, steps[i], k);
    return rc;
}

/* "YYYYMMDDTHHMMSSZ" of t into date (32 bytes) and its day into day (16) */
static int dates(int64_t time, char *date, char *day)
{
    struct tm tm;
    time_t t = (time_t)time;
    if (!gmtime_r(&t, &tm) || !strftime(date, 32, "%Y%m%dT%H%M%SZ", &tm) || strlen(date) != 16)
        return ZF_EINVAL;
    memcpy(day, date, 8);
    day[8] = '\0';
    return ZF_OK;
}

int zf_sigv4_derive(const zf_sigv4_cred *c, int64_t time, zf_sigv4_key *k)
{
    char date[32], day[16];
    int rc = dates(time, date, day);
    if (rc == ZF_OK)
        rc = derive(c, day, k->key);
    memcpy(k->day, rc == ZF_OK ? day : "", rc == ZF_OK ? 9 : 1);
    return rc;
}

/* hex signature of sts under the key of c for day (key's when it is that day's) */
static int signature(const zf_sigv4_cred *c, const zf_sigv4_key *key, const char *day,
                     const char *sts, char out[2 * SHA_LEN + 1])
{
    unsigned char k[SHA_LEN], sig[SHA_LEN];
    int rc = ZF_OK;
    if (key && !strcmp(key->day, day))
        memcpy(k, key->key, SHA_LEN);
    else
        rc = derive(c, day, k);
    if (rc == ZF_OK)
        rc = hmac(k, SHA_LEN, sts, sig);
    explicit_bzero(k, sizeof k);
    if (rc == ZF_OK)
        hex(sig, SHA_LEN, out);
    explicit_bzero(sig, sizeof sig);
    return rc;
}

/* the canonical request of r with its sorted headers h */
static void canonical(zf_sbuf *b, const zf_sigv4_req *r, const hdr *h, size_t nh,
                      const char *payload)
{
    zf_sbuf_printf(b, "%s\n", r->method);
    zf_sigv4_path(b, r->path);
    zf_sbuf_add(b, "\n", 1);
    zf_sigv4_query(b, r->query, r->nquery);
    zf_sbuf_add(b, "\n", 1);
    for (size_t i = 0; i < nh; i++)
        zf_sbuf_printf(b, "%s:%s\n", h[i].name, h[i].value);
    zf_sbuf_add(b, "\n", 1);
    for (size_t i = 0; i < nh; i++)
        zf_sbuf_printf(b, "%s%s", i ? ";" : "", h[i].name);
    zf_sbuf_printf(b, "\n%s", payload);
}

static void sbuf_wipe(zf_sbuf *b)
{
    if (b->data)
        explicit_bzero(b->data, b->cap);
    free(b->data);
    *b = (zf_sbuf){0};
}

/* the header lines, one allocation: pointers then the strings */
static int make_lines(const zf_sigv4_cred *c, const zf_sigv4_req *r, const char *date,
                      const char *payload, const char *auth, char ***lines)
{
    const char *tok = c->session_token && *c->session_token ? c->session_token : NULL;
    char dl[64], pl[96];
    snprintf(dl, sizeof dl, "x-amz-date: %s", date);
    snprintf(pl, sizeof pl, "x-amz-content-sha256: %s", payload);
    const char *src[4] = {auth, dl, NULL, NULL};
    const char *prefix[4] = {"", "", "", ""};
    size_t k = 2;
    if (r->content_sha256)
        src[k++] = pl;
    if (tok) {
        prefix[k] = "x-amz-security-token: ";
        src[k++] = tok;
    }
    size_t size = (k + 1) * sizeof(char *);
    for (size_t i = 0; i < k; i++)
        size += strlen(prefix[i]) + strlen(src[i]) + 1;
    char **v = malloc(size);
    if (!v)
        return ZF_ENOMEM;
    char *p = (char *)(v + k + 1);
    for (size_t i = 0; i < k; i++) {
        v[i] = p;
        p += sprintf(p, "%s%s", prefix[i], src[i]) + 1;
    }
    v[k] = NULL;
    *lines = v;
    return ZF_OK;
}

int zf_sigv4_sign(const zf_sigv4_cred *c, const zf_sigv4_req *r, char ***lines)
{
    *lines = NULL;
    char date[32], day[16], payload[2 * SHA_LEN + 1], hash[2 * SHA_LEN + 1];
    char sig[2 * SHA_LEN + 1] = "";
    if (dates(r->time, date, day) != ZF_OK)
        return ZF_EINVAL;
    if (r->payload_hash && strlen(r->payload_hash) != 2 * SHA_LEN)
        return ZF_EINVAL;
    snprintf(payload, sizeof payload, "%s", r->payload_hash ? r->payload_hash : ZF_SIGV4_EMPTY_SHA256);
    hdr *h;
    size_t nh;
    int rc = signed_headers(c, r, date, payload, &h, &nh);
    if (rc != ZF_OK)
        return rc;
    zf_sbuf creq = {0}, sts = {0}, auth = {0};
    canonical(&creq, r, h, nh, payload);
    rc = creq.failed ? ZF_ENOMEM : sha256_hex(creq.data, creq.len, hash);
    zf_sbuf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", date, day, c->region,
                   c->service, hash);
    if (rc == ZF_OK)
        rc = sts.failed ? ZF_ENOMEM : signature(c, r->key, day, sts.data, sig);
    zf_sbuf_printf(&auth, "Authorization: AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, "
                          "SignedHeaders=", c->access_key, day, c->region, c->service);
    for (size_t i = 0; i < nh; i++)
        zf_sbuf_printf(&auth, "%s%s", i ? ";" : "", h[i].name);
    zf_sbuf_printf(&auth, ", Signature=%s", sig);
    if (rc == ZF_OK)
        rc = auth.failed ? ZF_ENOMEM : make_lines(c, r, date, payload, auth.data, lines);
    hdrs_free(h, nh);
    sbuf_wipe(&creq);
    sbuf_wipe(&sts);
    sbuf_wipe(&auth);
    explicit_bzero(sig, sizeof sig);
    return rc;
}

void zf_sigv4_free(char **lines)
{
    if (!lines)
        return;
    size_t k = 0, size;
    while (lines[k])
        k++;
    size = (k + 1) * sizeof(char *);
    for (size_t i = 0; i < k; i++)
        size += strlen(lines[i]) + 1;
    explicit_bzero(lines, size);
    free(lines);
}
