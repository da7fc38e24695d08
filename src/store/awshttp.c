/* awshttp.c - AWS credentials from HTTP endpoints that answer JSON: the SSO
 * portal (GetRoleCredentials with the token `aws sso login` cached), the
 * container credentials endpoint (ECS, EKS Pod Identity) and EC2 instance
 * metadata (IMDSv2: a session token by PUT, then the role's credentials). */
#include <openssl/evp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "store/aws_impl.h"
#include "store/credhttp.h"
#include "store/s3cred.h"
#include "store/sigv4.h"
#include "store/s3list.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

/* An authorization token file, or the SSO cache file, larger than this is refused. */
#define SMALL_MAX (64u << 10)
/* The instance metadata session token's lifetime asked for (s). */
#define IMDS_TTL "21600"

int zf_aws_time(const char *s, int64_t *out)
{
    int64_t ns;
    char z[64];
    size_t n = strlen(s);
    if (n >= 20 && n < sizeof z - 1 && s[n - 1] != 'Z' && !strchr(s + 19, '+')) {
        snprintf(z, sizeof z, "%sZ", s); /* "2026-01-02T03:04:05" (no zone: UTC) */
        s = z;
    }
    int rc = zf_s3list_time(s, &ns);
    if (rc == ZF_OK)
        *out = ns / 1000000000;
    return rc;
}

static char *dup_string(const cJSON *o, const char *name)
{
    const cJSON *i = name ? cJSON_GetObjectItemCaseSensitive(o, name) : NULL;
    return cJSON_IsString(i) && i->valuestring[0] ? strdup(i->valuestring) : NULL;
}

int zf_aws_json_creds(const cJSON *obj, const char *const names[4], const char *what,
                      zf_cred_value *v, char *err, size_t errcap)
{
    if (!cJSON_IsObject(obj))
        return ERR(ZF_EIO, "%s: the answer is not a JSON object", what);
    v->id = dup_string(obj, names[0]);
    v->secret = dup_string(obj, names[1]);
    v->token = dup_string(obj, names[2]);
    if (!v->id || !v->secret)
        return ERR(ZF_EIO, "%s: the answer has no %s and %s", what, names[0], names[1]);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(obj, names[3]);
    int64_t ms;
    if (!e)
        v->expires = 0;
    else if (cJSON_IsString(e) && zf_aws_time(e->valuestring, &v->expires) == ZF_OK)
        return ZF_OK;
    else if (zf_json_int(e, 1, INT64_MAX, &ms))
        v->expires = ms / 1000;
    else
        return ERR(ZF_EIO, "%s: %s is no time", what, names[3]);
    return ZF_OK;
}

/* GET (or PUT when put) url with the header lines hdrs (NULL-terminated);
 * the body, NUL-terminated, in *out (the caller wipes and frees it) */
static int fetch_doc(zf_aws_src *s, const char *url, const char *const *hdrs, int put,
                     const char *what, char **out, char *err, size_t errcap)
{
    zf_credhttp_req q = {.url = url, .headers = hdrs, .method = put ? "PUT" : NULL, .what = what};
    int rc = zf_credhttp_fetch(s->net, &q, out, NULL, err, errcap);
    if (rc != ZF_OK) {
        zf_credhttp_free(*out);
        *out = NULL;
    }
    return rc;
}

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

/* a token fit for a header line: printable ASCII, trailing white space cut */
static int header_token(char *t)
{
    size_t n = strlen(t);
    while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t'))
        t[--n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)t[i] < ' ' || (unsigned char)t[i] >= 0x7f)
            return 0;
    return n > 0;
}

/* parse the JSON doc's credentials (inside member sub when not NULL) */
static int doc_creds(const char *doc, const char *sub, const char *const names[4],
                     const char *what, zf_cred_value *v, char *err, size_t errcap)
{
    cJSON *j = cJSON_Parse(doc);
    const cJSON *o = sub ? cJSON_GetObjectItemCaseSensitive(j, sub) : j;
    int rc = zf_aws_json_creds(o, names, what, v, err, errcap);
    cJSON_Delete(j);
    return rc;
}

int zf_aws_creds_parse(const char *doc, int sso, zf_cred_value *v, char *err, size_t errcap)
{
    static const char *const names[4] = {"AccessKeyId", "SecretAccessKey", "Token", "Expiration"};
    static const char *const sso_names[4] = {"accessKeyId", "secretAccessKey", "sessionToken",
                                             "expiration"};
    return sso ? doc_creds(doc, "roleCredentials", sso_names, "SSO GetRoleCredentials", v, err,
                           errcap)
               : doc_creds(doc, NULL, names, "credentials", v, err, errcap);
}

/* ---- SSO ----------------------------------------------------------------------- */

/* the cache file `aws sso login` wrote: ~/.aws/sso/cache/SHA1(key).json */
static char *sso_cache_path(const char *key)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (!EVP_Digest(key, strlen(key), d, &n, EVP_sha1(), NULL))
        return NULL;
    const char *home = zf_aws_env("HOME");
    if (!home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    zf_sbuf b = {0};
    zf_sbuf_printf(&b, "%s/.aws/sso/cache/", home ? home : "");
    for (unsigned i = 0; i < n; i++)
        zf_sbuf_printf(&b, "%02x", d[i]);
    zf_sbuf_printf(&b, ".json");
    if (b.failed || !home) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* the cached SSO access token (malloc'd), if it has not expired */
static int sso_token(zf_aws_src *s, char **token, char *err, size_t errcap)
{
    char *path = sso_cache_path(s->cache_key), *text = NULL;
    if (!path)
        return ZF_ENOMEM;
    int rc = zf_aws_read_file(path, SMALL_MAX, &text, err, errcap);
    if (rc == ZF_ENOTFOUND)
        rc = ERR(ZF_EIO, "no SSO token cached in %s: run aws sso login", path);
    cJSON *j = rc == ZF_OK ? cJSON_Parse(text) : NULL;
    wipe_free(text);
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(j, "expiresAt");
    int64_t t = 0;
    if (rc == ZF_OK && !(*token = dup_string(j, "accessToken")))
        rc = ERR(ZF_EIO, "%s holds no accessToken", path);
    else if (rc == ZF_OK && (!cJSON_IsString(exp) || zf_aws_time(exp->valuestring, &t) != ZF_OK))
        rc = ERR(ZF_EIO, "%s: expiresAt is no time", path);
    else if (rc == ZF_OK && t <= (int64_t)time(NULL))
        rc = ERR(ZF_EIO, "the SSO token in %s expired: run aws sso login", path);
    else if (rc == ZF_OK && !header_token(*token))
        rc = ERR(ZF_EIO, "%s: the accessToken holds control characters", path);
    if (rc != ZF_OK) {
        wipe_free(*token);
        *token = NULL;
    }
    cJSON_Delete(j);
    free(path);
    return rc;
}

static int sso_fetch(zf_aws_src *s, zf_cred_value *v, char *err, size_t errcap)
{
    char *token = NULL, *doc = NULL;
    int rc = sso_token(s, &token, err, errcap);
    if (rc != ZF_OK)
        return rc;
    zf_sbuf url = {0}, hdr = {0};
    zf_sbuf_printf(&url, "%s/federation/credentials?account_id=", s->endpoint);
    zf_sigv4_encode(&url, s->account, 0);
    zf_sbuf_printf(&url, "&role_name=");
    zf_sigv4_encode(&url, s->role_name, 0);
    zf_sbuf_printf(&hdr, "x-amz-sso_bearer_token: %s", token);
    wipe_free(token);
    const char *hdrs[] = {hdr.data, NULL};
    rc = url.failed || hdr.failed ? ZF_ENOMEM
                                  : fetch_doc(s, url.data, hdrs, 0, "SSO GetRoleCredentials",
                                              &doc, err, errcap);
    static const char *const names[4] = {"accessKeyId", "secretAccessKey", "sessionToken",
                                         "expiration"};
    if (rc == ZF_OK)
        rc = doc_creds(doc, "roleCredentials", names, "SSO GetRoleCredentials", v, err, errcap);
    wipe_free(doc);
    wipe_free(hdr.data);
    free(url.data);
    return rc;
}

/* ---- container credentials ------------------------------------------------------ */

static int container_fetch(zf_aws_src *s, zf_cred_value *v, char *err, size_t errcap)
{
    char *tok = NULL, *doc = NULL;
    int rc = ZF_OK;
    if (s->auth_file) {
        rc = zf_aws_read_file(s->auth_file, SMALL_MAX, &tok, err, errcap);
        if (rc == ZF_ENOTFOUND)
            rc = ERR(ZF_EIO, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s does not exist", s->auth_file);
    } else if (s->auth && !(tok = strdup(s->auth))) {
        rc = ZF_ENOMEM;
    }
    if (rc == ZF_OK && tok && !header_token(tok))
        rc = ERR(ZF_EIO, "the container authorization token is empty or holds control characters");
    zf_sbuf hdr = {0};
    if (tok)
        zf_sbuf_printf(&hdr, "Authorization: %s", tok);
    wipe_free(tok);
    const char *hdrs[] = {hdr.data, NULL};
    if (rc == ZF_OK)
        rc = hdr.failed ? ZF_ENOMEM : fetch_doc(s, s->endpoint, hdrs, 0, "container credentials",
                                                &doc, err, errcap);
    static const char *const names[4] = {"AccessKeyId", "SecretAccessKey", "Token", "Expiration"};
    if (rc == ZF_OK)
        rc = doc_creds(doc, NULL, names, "container credentials", v, err, errcap);
    wipe_free(doc);
    wipe_free(hdr.data);
    return rc;
}

/* ---- instance metadata (IMDSv2) --------------------------------------------------- */

/* a role name fit for a URL path segment and a message */
static int role_ok(const char *r)
{
    size_t n = strlen(r);
    for (size_t i = 0; i < n; i++)
        if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= 'A' && r[i] <= 'Z') ||
              (r[i] >= '0' && r[i] <= '9') || strchr("+=,.@_-", r[i])))
            return 0;
    return n > 0 && n <= 128;
}

static int imds_fetch(zf_aws_src *s, zf_cred_value *v, char *desc, size_t cap, char *err,
                      size_t errcap)
{
    char url[1200], *token = NULL, *role = NULL, *doc = NULL;
    snprintf(url, sizeof url, "%s/latest/api/token", s->endpoint);
    const char *ttl[] = {"X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TTL, NULL};
    int rc = fetch_doc(s, url, ttl, 1, "instance metadata (session token)", &token, err, errcap);
    zf_sbuf hdr = {0};
    if (rc == ZF_OK && !header_token(token))
        rc = ERR(ZF_EIO, "instance metadata: the session token holds control characters");
    if (rc == ZF_OK)
        zf_sbuf_printf(&hdr, "X-aws-ec2-metadata-token: %s", token);
    const char *hdrs[] = {hdr.data, NULL};
    snprintf(url, sizeof url, "%s/latest/meta-data/iam/security-credentials/", s->endpoint);
    if (rc == ZF_OK)
        rc = hdr.failed ? ZF_ENOMEM : fetch_doc(s, url, hdrs, 0, "instance metadata (role)", &role,
                                                err, errcap);
    if (rc == ZF_OK) {
        role[strcspn(role, "\r\n")] = '\0';
        if (!role_ok(role))
            rc = ERR(ZF_EIO, "instance metadata: no IAM role is attached to this instance, or "
                     "its name is not one");
    }
    if (rc == ZF_OK) {
        snprintf(url, sizeof url, "%s/latest/meta-data/iam/security-credentials/%s", s->endpoint,
                 role);
        rc = fetch_doc(s, url, hdrs, 0, "instance metadata (credentials)", &doc, err, errcap);
    }
    static const char *const names[4] = {"AccessKeyId", "SecretAccessKey", "Token", "Expiration"};
    if (rc == ZF_OK)
        rc = doc_creds(doc, NULL, names, "instance metadata", v, err, errcap);
    if (rc == ZF_OK)
        snprintf(desc, cap, "instance metadata (role %s)", role);
    wipe_free(token);
    wipe_free(hdr.data);
    wipe_free(doc);
    free(role);
    return rc;
}

int zf_aws_http_fetch(zf_aws_src *s, zf_cred_value *v, char *desc, size_t cap, char *err,
                      size_t errcap)
{
    switch (s->kind) {
    case ZF_AWS_SSO:
        return sso_fetch(s, v, err, errcap);
    case ZF_AWS_CONTAINER:
        return container_fetch(s, v, err, errcap);
    case ZF_AWS_IMDS:
        return imds_fetch(s, v, desc, cap, err, errcap);
    default:
        return ZF_EINVAL;
    }
}
