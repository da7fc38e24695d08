/* gcscred.c - Google Application Default Credentials (gcscred.h): which
 * source applies, and each source's fetch of an access token for cred.h's
 * provider. */
#include "store/gcscred.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/err.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "store/aws_impl.h"
#include "store/credhttp.h"
#include "store/gcs_impl.h"
#include "store/sigv4.h"
#include "store/url.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))
#define env zf_aws_env

#define SCOPE "https://www.googleapis.com/auth/devstorage.read_only"
/* What Google's libraries put in every assertion's aud, whatever the key's token_uri */
#define GOOGLE_TOKEN_URI "https://oauth2.googleapis.com/token"
#define JWT_LIFE_S 3600
#define KEY_FILE_MAX (64u << 10)
#define META_HOST "metadata.google.internal"
#define META_SA "/computeMetadata/v1/instance/service-accounts/default/"
/* An access token's lifetime is believed up to this (Google's are 1 hour). */
#define EXPIRES_MAX_S (7 * 86400)
#define WHAT_CAP 200

typedef enum { SRC_KEY, SRC_USER, SRC_META } src_kind;

/* One source, the provider's context; secrets wiped when freed. */
typedef struct gsrc {
    src_kind kind;
    zf_net *net;
    char *email, *key_pem, *key_id;                 /* KEY */
    char *client_id, *client_secret, *refresh;      /* USER */
    char *token_uri;                                /* KEY, USER */
    char *meta;                                     /* META: "http://HOST[:PORT]" */
    char what[WHAT_CAP];                            /* the source, for messages */
} gsrc;

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void gsrc_free(void *p)
{
    gsrc *s = p;
    if (!s)
        return;
    zf_net_close(s->net);
    free(s->email);
    wipe_free(s->key_pem);
    free(s->key_id);
    free(s->client_id);
    wipe_free(s->client_secret);
    wipe_free(s->refresh);
    free(s->token_uri);
    free(s->meta);
    free(s);
}

/* ---- answers ----------------------------------------------------------------- */

/* copy t into the end of err, control characters as '?' */
static void append_clean(char *err, size_t errcap, const char *t)
{
    size_t n = strlen(err);
    for (; *t && n + 1 < errcap; t++)
        err[n++] = (unsigned char)*t < ' ' || *t == 0x7f ? '?' : *t;
    err[n] = '\0';
}

void zf_gcs_oauth_error(const char *doc, char *err, size_t errcap)
{
    if (!doc || !err || !errcap)
        return;
    cJSON *j = cJSON_Parse(doc);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "error_description");
    if (cJSON_IsObject(e)) /* Google's API errors: {"error": {"message": ...}} */
        d = cJSON_GetObjectItemCaseSensitive(e, "message");
    char tail[240] = "";
    snprintf(tail, sizeof tail, "%s%s%s%s", cJSON_IsString(e) ? " " : "",
             cJSON_IsString(e) ? e->valuestring : "", cJSON_IsString(d) ? ": " : "",
             cJSON_IsString(d) ? d->valuestring : "");
    append_clean(err, errcap, tail);
    cJSON_Delete(j);
}

/* a token fit for a header line: printable ASCII without spaces */
static int token_ok(const char *t)
{
    for (const char *p = t; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
            return 0;
    return *t != '\0';
}

/* wipe every string of a parsed document (before cJSON_Delete) */
static void json_wipe(cJSON *j)
{
    for (; j; j = j->next) {
        if (j->valuestring)
            explicit_bzero(j->valuestring, strlen(j->valuestring));
        json_wipe(j->child);
    }
}

int zf_gcs_token_parse(const char *doc, int64_t now, const char *what, zf_cred_value *v, char *err,
                       size_t errcap)
{
    cJSON *j = cJSON_Parse(doc);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "access_token");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "expires_in");
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(j, "token_type");
    int64_t life = 0;
    int rc = ZF_OK;
    if (!cJSON_IsObject(j))
        rc = ERR(ZF_EIO, "%s: the answer is not a JSON object", what);
    else if (!cJSON_IsString(t) || !token_ok(t->valuestring))
        rc = ERR(ZF_EIO, "%s: the answer has no access_token fit for a header", what);
    else if (ty && (!cJSON_IsString(ty) || strcasecmp(ty->valuestring, "Bearer")))
        rc = ERR(ZF_EIO, "%s: the token is not a bearer token", what);
    else if (!zf_json_int(e, 1, EXPIRES_MAX_S, &life))
        rc = ERR(ZF_EIO, "%s: expires_in is not a number of seconds up to %d", what, EXPIRES_MAX_S);
    else if (!(v->token = strdup(t->valuestring)))
        rc = ZF_ENOMEM;
    else
        v->expires = now + life;
    json_wipe(j);
    cJSON_Delete(j);
    return rc;
}

/* ---- fetching a token ------------------------------------------------------------- */

/* POST the form body to the token endpoint, the answer's token into v */
static int token_post(gsrc *s, const zf_sbuf *body, zf_cred_value *v, char *err, size_t errcap)
{
    const char *hdrs[] = {"Content-Type: application/x-www-form-urlencoded", "Accept: application/json",
                          NULL};
    const char *what = "token endpoint";
    zf_credhttp_req q = {.url = s->token_uri, .method = "POST", .headers = hdrs,
                         .body = body->data, .body_len = body->len, .what = what};
    char *doc = NULL;
    int rc = body->failed ? ZF_ENOMEM : zf_credhttp_fetch(s->net, &q, &doc, NULL, err, errcap);
    if (rc == ZF_OK)
        rc = zf_gcs_token_parse(doc, (int64_t)time(NULL), what, v, err, errcap);
    else if (rc == ZF_EIO)
        zf_gcs_oauth_error(doc, err, errcap);
    zf_credhttp_free(doc);
    return rc;
}

/* append "&name=value" (or "name=value" first), form-encoded */
static void form(zf_sbuf *b, const char *name, const char *value)
{
    zf_sbuf_printf(b, "%s%s=", b->len ? "&" : "", name);
    zf_sigv4_encode(b, value, 0);
}

static int key_fetch(gsrc *s, zf_cred_value *v, char *err, size_t errcap)
{
    zf_gcs_jwt_claims c = {.issuer = s->email, .scope = SCOPE, .audience = GOOGLE_TOKEN_URI,
                           .key_id = s->key_id, .key_pem = s->key_pem,
                           .issued = (int64_t)time(NULL), .lifetime = JWT_LIFE_S};
    char *jwt = NULL;
    int rc = zf_gcs_jwt(&c, &jwt);
    if (rc == ZF_EINVAL)
        return ERR(ZF_EINVAL, "private_key is no RSA private key in PEM");
    if (rc != ZF_OK)
        return rc;
    zf_sbuf body = {0};
    form(&body, "grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer");
    form(&body, "assertion", jwt);
    wipe_free(jwt);
    rc = token_post(s, &body, v, err, errcap);
    if (body.data)
        explicit_bzero(body.data, body.len);
    free(body.data);
    return rc;
}

static int user_fetch(gsrc *s, zf_cred_value *v, char *err, size_t errcap)
{
    zf_sbuf body = {0};
    form(&body, "grant_type", "refresh_token");
    form(&body, "client_id", s->client_id);
    form(&body, "client_secret", s->client_secret);
    form(&body, "refresh_token", s->refresh);
    int rc = token_post(s, &body, v, err, errcap);
    if (body.data)
        explicit_bzero(body.data, body.len);
    free(body.data);
    return rc;
}

/* GET META_SA + leaf from the metadata server */
static int meta_get(gsrc *s, const char *leaf, const char *what, char **doc, char *err,
                    size_t errcap)
{
    const char *hdrs[] = {"Metadata-Flavor: Google", NULL};
    char url[600];
    snprintf(url, sizeof url, "%s" META_SA "%s", s->meta, leaf);
    zf_credhttp_req q = {.url = url, .headers = hdrs, .what = what};
    int rc = zf_credhttp_fetch(s->net, &q, doc, NULL, err, errcap);
    if (rc != ZF_OK) {
        zf_credhttp_free(*doc);
        *doc = NULL;
    }
    return rc;
}

/* an e-mail address fit for a message */
static int email_ok(const char *e)
{
    size_t n = strlen(e);
    for (size_t i = 0; i < n; i++)
        if (!((e[i] >= 'a' && e[i] <= 'z') || (e[i] >= 'A' && e[i] <= 'Z') ||
              (e[i] >= '0' && e[i] <= '9') || strchr("@.-_+", e[i])))
            return 0;
    return n > 0 && n <= 254 && strchr(e, '@');
}

static int meta_fetch(gsrc *s, zf_cred_value *v, char *desc, size_t cap, char *err, size_t errcap)
{
    char *doc = NULL, *email = NULL;
    int rc = meta_get(s, "token", "token request", &doc, err, errcap);
    if (rc == ZF_OK)
        rc = zf_gcs_token_parse(doc, (int64_t)time(NULL), "token request", v, err, errcap);
    zf_credhttp_free(doc);
    if (rc == ZF_OK && meta_get(s, "email", "", &email, NULL, 0) == ZF_OK) {
        email[strcspn(email, "\r\n")] = '\0';
        if (email_ok(email))
            snprintf(desc, cap, "metadata server (service account %s)", email);
    }
    zf_credhttp_free(email);
    return rc;
}

static int gsrc_fetch(void *ctx, zf_cred_value *v, char *desc, size_t cap, char *err,
                      size_t errcap)
{
    gsrc *s = ctx;
    switch (s->kind) {
    case SRC_KEY:
        return key_fetch(s, v, err, errcap);
    case SRC_USER:
        return user_fetch(s, v, err, errcap);
    default:
        return meta_fetch(s, v, desc, cap, err, errcap);
    }
}

/* ---- which source ------------------------------------------------------------------ */

static char *dup_member(const cJSON *j, const char *name)
{
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsString(i) && i->valuestring[0] ? strdup(i->valuestring) : NULL;
}

/* a token endpoint: https, or http to a loopback address (a test's) */
static int token_uri_ok(const char *uri)
{
    zf_url u;
    if (zf_url_parse(uri, &u, NULL, 0) != ZF_OK)
        return 0;
    int ok = u.kind == ZF_URL_HTTPS ||
             (u.kind == ZF_URL_HTTP && (!strcmp(u.host, "localhost") || !strncmp(u.host, "127.", 4) ||
                                        !strcmp(u.host, "[::1]")));
    zf_url_free(&u);
    return ok && !strpbrk(uri, "?#");
}

/* the key file's fields into s (what names the file in messages, via where
 * it was found in the source's description) */
static int from_json(gsrc *s, const cJSON *j, const char *what, const char *via, char *err,
                     size_t errcap)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
    const char *t = cJSON_IsString(type) ? type->valuestring : "";
    if (!strcmp(t, "service_account")) {
        s->kind = SRC_KEY;
        s->email = dup_member(j, "client_email");
        s->key_pem = dup_member(j, "private_key");
        s->key_id = dup_member(j, "private_key_id");
        if (!s->email || !s->key_pem || !email_ok(s->email))
            return ERR(ZF_EINVAL, "%s: a service account key needs client_email and private_key",
                       what);
        snprintf(s->what, sizeof s->what, "service account %.100s (%s)", s->email, via);
    } else if (!strcmp(t, "authorized_user")) {
        s->kind = SRC_USER;
        s->client_id = dup_member(j, "client_id");
        s->client_secret = dup_member(j, "client_secret");
        s->refresh = dup_member(j, "refresh_token");
        if (!s->client_id || !s->client_secret || !s->refresh)
            return ERR(ZF_EINVAL, "%s: authorized user credentials need client_id, "
                       "client_secret and refresh_token", what);
        snprintf(s->what, sizeof s->what, "authorized user (%s)", via);
    } else {
        return ERR(ZF_EINVAL, "%s: credentials of type \"%.40s\" are not supported "
                   "(service_account and authorized_user are)", what, t);
    }
    s->token_uri = dup_member(j, "token_uri");
    if (!s->token_uri && !(s->token_uri = strdup(GOOGLE_TOKEN_URI)))
        return ZF_ENOMEM;
    if (!token_uri_ok(s->token_uri))
        return ERR(ZF_EINVAL, "%s: token_uri is no https:// URL", what);
    return ZF_OK;
}

/* the source a key file describes; ZF_ENOTFOUND if it does not exist */
static int from_file(const char *path, const char *via, gsrc *s, char *err, size_t errcap)
{
    char *text = NULL;
    const char *what = path;
    int rc = zf_aws_read_file(path, KEY_FILE_MAX, &text, err, errcap);
    if (rc != ZF_OK)
        return rc;
    cJSON *j = cJSON_Parse(text);
    explicit_bzero(text, strlen(text));
    free(text);
    rc = cJSON_IsObject(j) ? from_json(s, j, what, via, err, errcap)
                           : ERR(ZF_EINVAL, "%s: not a JSON key file", what);
    json_wipe(j);
    cJSON_Delete(j);
    return rc;
}

/* gcloud's application default credentials file (malloc'd; NULL: no home) */
static char *well_known_path(void)
{
    const char *dir = env("CLOUDSDK_CONFIG"), *home = env("HOME");
    zf_sbuf b = {0};
    if (dir)
        zf_sbuf_printf(&b, "%s/application_default_credentials.json", dir);
    else if (home)
        zf_sbuf_printf(&b, "%s/.config/gcloud/application_default_credentials.json", home);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* does the firmware say this is a Google Cloud machine? */
static int on_google(void)
{
    static const char *const files[] = {"/sys/class/dmi/id/product_name",
                                        "/sys/class/dmi/id/bios_vendor"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *t = NULL;
        if (zf_aws_read_file(files[i], 4096, &t, NULL, 0) != ZF_OK)
            continue;
        int yes = strstr(t, "Google") != NULL;
        free(t);
        if (yes)
            return 1;
    }
    return 0;
}

/* the metadata server's origin, or ZF_ENOTFOUND when it is not to be asked */
static int meta_source(gsrc *s, char *err, size_t errcap)
{
    const char *h = env("GCE_METADATA_HOST");
    if (!h && !on_google())
        return ZF_ENOTFOUND;
    h = h ? h : META_HOST;
    for (const char *p = h; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr(".-:[]", *p)))
            return ERR(ZF_EINVAL, "GCE_METADATA_HOST %s: a HOST[:PORT] is needed", h);
    size_t n = strlen(h) + 8;
    if (!(s->meta = malloc(n)))
        return ZF_ENOMEM;
    snprintf(s->meta, n, "http://%s", h);
    s->kind = SRC_META;
    snprintf(s->what, sizeof s->what, "metadata server");
    return ZF_OK;
}

/* the first source configured into s: ZF_OK, ZF_ENOTFOUND (none), or an error */
static int resolve(gsrc *s, char *err, size_t errcap)
{
    const char *p = env("GOOGLE_APPLICATION_CREDENTIALS");
    if (p) {
        int rc = from_file(p, "GOOGLE_APPLICATION_CREDENTIALS", s, err, errcap);
        return rc == ZF_ENOTFOUND
                   ? ERR(ZF_EINVAL, "GOOGLE_APPLICATION_CREDENTIALS %s does not exist", p) : rc;
    }
    char *wk = well_known_path();
    int rc = wk ? from_file(wk, "gcloud's application default credentials", s, err, errcap) : ZF_ENOTFOUND;
    free(wk);
    return rc == ZF_ENOTFOUND ? meta_source(s, err, errcap) : rc;
}

int zf_gcscred_open(const zf_gcscred_opts *o, zf_cred **out, char *err, size_t errcap)
{
    *out = NULL;
    gsrc *s = calloc(1, sizeof *s);
    if (!s)
        return ZF_ENOMEM;
    int rc = resolve(s, err, errcap);
    if (rc == ZF_ENOTFOUND) {
        gsrc_free(s);
        return ZF_OK;
    }
    zf_net_opts no = {.connections = 2, .retries = 3, .timeout_ms = 5000, .budget_ms = 20000,
                      .cafile = o->cafile};
    if (rc == ZF_OK)
        rc = zf_net_open(&no, &s->net, err, errcap);
    if (rc != ZF_OK) {
        gsrc_free(s);
        return rc;
    }
    return zf_cred_open(s->what, gsrc_fetch, s, gsrc_free, o->note, out, err, errcap);
}
