/* azauth.c - Azure Blob Storage: the account, endpoint and credentials
 * (azure.h's order), and requests signed with SharedKey as Microsoft
 * documents it ("Authorize with Shared Key": the string to sign of the
 * Blob service, version 2015-02-21 and later). */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/aws_impl.h"
#include "store/azure_impl.h"
#include "store/url.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))
#define env zf_aws_env

/* The service version requests ask for. */
#define AZ_VERSION "2021-08-06"
/* Azurite's development account (UseDevelopmentStorage=true), published by Microsoft */
#define DEV_ACCOUNT "devstoreaccount1"
#define DEV_KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define DEV_ENDPOINT "http://127.0.0.1:10000/" DEV_ACCOUNT
/* A connection string longer than this is refused. */
#define CONN_MAX 8192

void zf_azi_conf_free(zf_az_conf *c)
{
    free(c->account);
    free(c->origin);
    free(c->base);
    if (c->sas)
        explicit_bzero(c->sas, strlen(c->sas));
    free(c->sas);
    explicit_bzero(c, sizeof *c);
}

/* ---- the connection string ------------------------------------------------------ */

/* The settings of a connection string that zarrfs reads (malloc'd). */
typedef struct conn {
    char *account, *key, *sas, *endpoint, *protocol, *suffix;
    int dev;
} conn;

static void conn_free(conn *c)
{
    free(c->account);
    if (c->key)
        explicit_bzero(c->key, strlen(c->key));
    free(c->key);
    if (c->sas)
        explicit_bzero(c->sas, strlen(c->sas));
    free(c->sas);
    free(c->endpoint);
    free(c->protocol);
    free(c->suffix);
}

/* "Name=Value;..." (names any case; a value may hold '='); never quotes a value in err */
static int conn_parse(const char *s, conn *c, char *err, size_t errcap)
{
    if (strlen(s) > CONN_MAX)
        return ERR(ZF_EINVAL, "AZURE_STORAGE_CONNECTION_STRING: longer than %u bytes", CONN_MAX);
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, ";");
        const char *eq = memchr(p, '=', n);
        if (n && !eq)
            return ERR(ZF_EINVAL, "AZURE_STORAGE_CONNECTION_STRING: a setting without '='");
        if (n) {
            size_t kl = (size_t)(eq - p);
            char *v = strndup(eq + 1, n - kl - 1), **slot = NULL;
            if (!v)
                return ZF_ENOMEM;
#define IS(name) (kl == strlen(name) && !strncasecmp(p, name, kl))
            if (IS("AccountName")) slot = &c->account;
            else if (IS("AccountKey")) slot = &c->key;
            else if (IS("SharedAccessSignature")) slot = &c->sas;
            else if (IS("BlobEndpoint")) slot = &c->endpoint;
            else if (IS("DefaultEndpointsProtocol")) slot = &c->protocol;
            else if (IS("EndpointSuffix")) slot = &c->suffix;
            else if (IS("UseDevelopmentStorage")) c->dev = !strcasecmp(v, "true");
#undef IS
            if (slot) {
                free(*slot);
                *slot = v;
            } else {
                explicit_bzero(v, strlen(v));
                free(v);
            }
        }
        p += n + (p[n] == ';');
    }
    return ZF_OK;
}

/* ---- checks ----------------------------------------------------------------------- */

static int account_ok(const char *a)
{
    size_t n = strlen(a);
    for (size_t i = 0; i < n; i++)
        if (!((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= '0' && a[i] <= '9')))
            return 0;
    return n >= 1 && n <= 64;
}

/* the base64 account key into c->key */
static int key_set(zf_az_conf *c, const char *b64, const char *via, char *err, size_t errcap)
{
    size_t n = strlen(b64), pad = 0;
    int ok = n && n % 4 == 0 && n / 4 * 3 <= ZF_AZI_KEY_MAX;
    for (size_t i = 0; ok && i < n; i++) {
        int c64 = (b64[i] >= 'A' && b64[i] <= 'Z') || (b64[i] >= 'a' && b64[i] <= 'z') ||
                  (b64[i] >= '0' && b64[i] <= '9') || b64[i] == '+' || b64[i] == '/';
        ok = c64 ? !pad : b64[i] == '=' && i >= n - 2 && ++pad;
    }
    int got = ok ? EVP_DecodeBlock(c->key, (const unsigned char *)b64, (int)n) : -1;
    if (got < 0 || (size_t)got < pad)
        return ERR(ZF_EINVAL, "%s: the account key is not base64", via);
    c->keylen = (size_t)got - pad;
    c->auth = ZF_AZ_KEY;
    return ZF_OK;
}

/* a SAS token (with or without its '?') into c->sas */
static int sas_set(zf_az_conf *c, const char *sas, const char *via, char *err, size_t errcap)
{
    sas += *sas == '?';
    for (const char *p = sas; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || *p == '#')
            return ERR(ZF_EINVAL, "%s: the SAS token holds spaces, control characters or '#'", via);
    if (!strstr(sas, "sig="))
        return ERR(ZF_EINVAL, "%s: the SAS token has no sig=", via);
    if (!(c->sas = strdup(sas)))
        return ZF_ENOMEM;
    c->auth = ZF_AZ_SAS;
    return ZF_OK;
}

/* origin and base path of an endpoint URL */
static int endpoint_set(zf_az_conf *c, const char *url, const char *via, char *err, size_t errcap)
{
    zf_url u;
    char why[160] = "";
    int rc = zf_url_parse(url, &u, why, sizeof why);
    if (rc == ZF_OK && u.kind != ZF_URL_HTTP && u.kind != ZF_URL_HTTPS)
        rc = ZF_EINVAL;
    if (rc == ZF_OK) {
        c->origin = zf_url_origin(&u);
        size_t n = strlen(u.path) + 2;
        if ((c->base = malloc(n)))
            snprintf(c->base, n, "%s%s", *u.path ? "/" : "", u.path);
        rc = c->origin && c->base ? ZF_OK : ZF_ENOMEM;
    }
    zf_url_free(&u);
    if (rc == ZF_EINVAL)
        return ERR(rc, "%s: the endpoint %s is no http:// or https:// URL%s%s", via, url,
                   *why ? ": " : "", why);
    return rc;
}

/* ---- which account, where, with what --------------------------------------------- */

/* credentials: the connection string's, then the key, then a SAS token */
static int creds(zf_az_conf *c, const conn *cs, char *err, size_t errcap)
{
    const char *k = env("AZURE_STORAGE_KEY") ? "AZURE_STORAGE_KEY" : "AZURE_STORAGE_ACCOUNT_KEY";
    int rc = ZF_OK;
    if (cs->key || cs->dev) {
        rc = key_set(c, cs->key ? cs->key : DEV_KEY, "AZURE_STORAGE_CONNECTION_STRING", err, errcap);
        snprintf(c->source, sizeof c->source, "shared key (AZURE_STORAGE_CONNECTION_STRING)");
    } else if (cs->sas) {
        rc = sas_set(c, cs->sas, "AZURE_STORAGE_CONNECTION_STRING", err, errcap);
        snprintf(c->source, sizeof c->source, "SAS token (AZURE_STORAGE_CONNECTION_STRING)");
    } else if (env(k)) {
        rc = key_set(c, env(k), k, err, errcap);
        snprintf(c->source, sizeof c->source, "shared key (%s)", k);
    } else if (env("AZURE_STORAGE_SAS_TOKEN")) {
        rc = sas_set(c, env("AZURE_STORAGE_SAS_TOKEN"), "AZURE_STORAGE_SAS_TOKEN", err, errcap);
        snprintf(c->source, sizeof c->source, "SAS token (AZURE_STORAGE_SAS_TOKEN)");
    }
    return rc;
}

int zf_azi_conf_load(const zf_az_opts *o, zf_az_conf *c, char *err, size_t errcap)
{
    memset(c, 0, sizeof *c);
    snprintf(c->source, sizeof c->source, "none (anonymous)");
    conn cs = {0};
    const char *s = o->anonymous ? NULL : env("AZURE_STORAGE_CONNECTION_STRING");
    int rc = s ? conn_parse(s, &cs, err, errcap) : ZF_OK;
    const char *acct = o->account ? o->account
                       : env("AZURE_STORAGE_ACCOUNT_NAME") ? env("AZURE_STORAGE_ACCOUNT_NAME")
                       : env("AZURE_STORAGE_ACCOUNT") ? env("AZURE_STORAGE_ACCOUNT")
                       : cs.account ? cs.account : cs.dev ? DEV_ACCOUNT : NULL;
    if (rc == ZF_OK && !acct)
        rc = ERR(ZF_EINVAL, "no Azure storage account: -o account=, AZURE_STORAGE_ACCOUNT_NAME or "
                 "AZURE_STORAGE_CONNECTION_STRING");
    else if (rc == ZF_OK && !account_ok(acct))
        rc = ERR(ZF_EINVAL, "storage account %s: lower-case letters and digits only", acct);
    else if (rc == ZF_OK && !(c->account = strdup(acct)))
        rc = ZF_ENOMEM;
    const char *ep = o->endpoint ? o->endpoint
                     : env("AZURE_STORAGE_BLOB_ENDPOINT") ? env("AZURE_STORAGE_BLOB_ENDPOINT")
                     : cs.endpoint ? cs.endpoint : cs.dev ? DEV_ENDPOINT : NULL;
    char def[300];
    if (rc == ZF_OK && !ep) {
        snprintf(def, sizeof def, "%s://%s.blob.%s", cs.protocol ? cs.protocol : "https",
                 c->account, cs.suffix ? cs.suffix : "core.windows.net");
        ep = def;
    }
    if (rc == ZF_OK)
        rc = endpoint_set(c, ep, o->endpoint ? "-o endpoint=" : "the blob endpoint", err, errcap);
    if (rc == ZF_OK && !o->anonymous)
        rc = creds(c, &cs, err, errcap);
    conn_free(&cs);
    return rc;
}

/* ---- signed requests ---------------------------------------------------------------- */

void zf_azi_req_free(zf_az_req *r)
{
    free(r->url);
    for (int i = 0; i < 3; i++)
        if (r->lines[i]) {
            explicit_bzero(r->lines[i], strlen(r->lines[i]));
            free(r->lines[i]);
        }
    *r = (zf_az_req){0};
}

/* the Authorization line of a request: SharedKey ACCOUNT:base64(HMAC-SHA256(key, sts)) */
static char *shared_key_line(const zf_az_conf *c, const zf_sbuf *sts)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned maclen = 0;
    if (!HMAC(EVP_sha256(), c->key, (int)c->keylen, (const unsigned char *)sts->data, sts->len,
              mac, &maclen))
        return NULL;
    unsigned char b64[4 * EVP_MAX_MD_SIZE / 3 + 8];
    EVP_EncodeBlock(b64, mac, (int)maclen);
    zf_sbuf line = {0};
    zf_sbuf_printf(&line, "Authorization: SharedKey %s:%s", c->account, (const char *)b64);
    explicit_bzero(mac, sizeof mac);
    if (line.failed) {
        free(line.data);
        return NULL;
    }
    return line.data;
}

/* the string to sign of a request (Blob service, 2015-02-21 and later) */
static void string_to_sign(zf_sbuf *sts, const zf_az_conf *c, const char *method,
                           const char *range, const char *date, const char *encpath,
                           const zf_sigv4_param *q, size_t nq)
{
    /* VERB, then Content-Encoding, -Language, -Length, -MD5, -Type, Date,
     * If-Modified-Since, If-Match, If-None-Match, If-Unmodified-Since: all
     * empty (no body, x-ms-date instead of Date), then Range */
    zf_sbuf_printf(sts, "%s\n\n\n\n\n\n\n\n\n\n\n%s\n", method, range);
    zf_sbuf_printf(sts, "x-ms-date:%s\nx-ms-version:" AZ_VERSION "\n", date);
    zf_sbuf_printf(sts, "/%s%s", c->account, encpath);
    size_t order[8];
    for (size_t i = 0; i < nq && i < 8; i++) { /* by name (names are lower case) */
        size_t j = i;
        for (; j && strcmp(q[order[j - 1]].name, q[i].name) > 0; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (size_t i = 0; i < nq && i < 8; i++)
        zf_sbuf_printf(sts, "\n%s:%s", q[order[i]].name, q[order[i]].value);
}

int zf_azi_prep(const azure *a, const char *method, const char *blob, const zf_sigv4_param *q,
                size_t nq, uint64_t off, uint64_t len, zf_az_req *r)
{
    *r = (zf_az_req){0};
    const zf_az_conf *c = &a->conf;
    zf_sbuf path = {0}, enc = {0}, url = {0}, sts = {0}, dl = {0}, vl = {0};
    zf_sbuf_printf(&path, "%s/%s", c->base, a->container);
    if (blob)
        zf_sbuf_printf(&path, "/%s%s", a->prefix, blob);
    zf_sigv4_path(&enc, path.data ? path.data : "/");
    zf_sbuf_printf(&url, "%s%s", c->origin, enc.data ? enc.data : "/");
    if (nq) {
        zf_sbuf_add(&url, "?", 1);
        zf_sigv4_query(&url, q, nq);
    }
    if (c->auth == ZF_AZ_SAS)
        zf_sbuf_printf(&url, "%s%s", nq ? "&" : "?", c->sas);
    char date[64], range[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
    if (len)
        snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off,
                 (unsigned long long)(off + len - 1));
    zf_sbuf_printf(&dl, "x-ms-date: %s", date);
    zf_sbuf_printf(&vl, "x-ms-version: " AZ_VERSION);
    r->url = url.data;
    r->lines[0] = dl.data;
    r->lines[1] = vl.data;
    int rc = path.failed || enc.failed || url.failed || dl.failed || vl.failed ? ZF_ENOMEM : ZF_OK;
    if (rc == ZF_OK && c->auth == ZF_AZ_KEY) {
        string_to_sign(&sts, c, method, range, date, enc.data ? enc.data : "/", q, nq);
        r->lines[2] = sts.failed ? NULL : shared_key_line(c, &sts);
        rc = r->lines[2] ? ZF_OK : sts.failed ? ZF_ENOMEM : ZF_EIO;
    }
    free(path.data);
    free(enc.data);
    free(sts.data);
    if (rc != ZF_OK) {
        zf_azi_req_free(r);
        return rc;
    }
    for (int i = 0, k = 0; i < 3; i++)
        if (r->lines[i])
            r->hdrs[k++] = r->lines[i];
    return ZF_OK;
}
