/* awschain.c - the AWS CLI's credential chain (s3cred.h's order): which
 * source applies to a profile, built as a zf_aws_src and opened as a
 * cred.h provider. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/err.h"
#include "store/aws_impl.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))
#define env zf_aws_env

/* Roles chained through source_profile at most this deep. */
#define DEPTH_MAX 5
#define DESC_CAP 160

/* 1: found, 0: not configured, < 0: an error */
typedef int found_rc;

void zf_aws_src_free(zf_aws_src *s)
{
    if (!s)
        return;
    if (s->owns_net)
        zf_net_close(s->net);
    zf_cred_value_clear(&s->keys);
    free(s->role_arn);
    free(s->session_name);
    free(s->external_id);
    free(s->token_file);
    free(s->region);
    free(s->endpoint);
    for (char **a = s->argv; a && *a; a++)
        free(*a);
    free(s->argv);
    free(s->cache_key);
    free(s->account);
    free(s->role_name);
    if (s->auth)
        explicit_bzero(s->auth, strlen(s->auth));
    free(s->auth);
    free(s->auth_file);
    zf_aws_src_free(s->inner);
    free(s);
}

static zf_aws_src *src_new(zf_aws_kind kind)
{
    zf_aws_src *s = calloc(1, sizeof *s);
    if (s)
        s->kind = kind;
    return s;
}

static char *profile_value(const zf_aws_chain *ch, const char *profile, const char *key)
{
    return zf_aws_lookup(ch->files, ZF_AWS_PROFILE, profile, NULL, key, NULL);
}

/* printable ASCII without spaces (what goes into a header line) */
static int printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

/* keys fit to go into header lines */
static int keys_ok(const zf_cred_value *v, const char *desc, char *err, size_t errcap)
{
    if (!v->id || !v->secret)
        return ERR(ZF_EIO, "%s gave no access key id and secret", desc);
    if (!*v->id || !printable(v->id) || strchr(v->id, '/'))
        return ERR(ZF_EINVAL, "the S3 access key id (%s) holds a space, '/' or a control "
                   "character", desc);
    if (v->token && !printable(v->token))
        return ERR(ZF_EINVAL, "the S3 session token (%s) holds a space or a control character",
                   desc);
    return ZF_OK;
}

/* ---- static keys ------------------------------------------------------------ */

static found_rc env_keys(zf_cred_value *v, char *err, size_t errcap)
{
    const char *id = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
    if (!id && !secret)
        return 0;
    if (!id || !secret)
        return ERR(ZF_EINVAL, "%s is set but %s is not",
                   id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                   id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    const char *tok = env("AWS_SESSION_TOKEN");
    v->id = strdup(id);
    v->secret = strdup(secret);
    v->token = tok ? strdup(tok) : NULL;
    return !v->id || !v->secret || (tok && !v->token) ? ZF_ENOMEM : 1;
}

/* the profile's keys in one of the two files */
static found_rc file_keys(const zf_aws_chain *ch, zf_aws_section sec, const char *profile,
                          zf_cred_value *v, char *err, size_t errcap)
{
    char *i = zf_aws_lookup(ch->files, sec, profile, NULL, "aws_access_key_id", NULL);
    char *s = zf_aws_lookup(ch->files, sec, profile, NULL, "aws_secret_access_key", NULL);
    if (i && s) {
        v->id = i;
        v->secret = s;
        v->token = zf_aws_lookup(ch->files, sec, profile, NULL, "aws_session_token", NULL);
        return 1;
    }
    free(i);
    if (s)
        explicit_bzero(s, strlen(s));
    free(s);
    if (i || s)
        return ERR(ZF_EINVAL, "profile %s in %s has only one of aws_access_key_id and "
                   "aws_secret_access_key", profile,
                   sec == ZF_AWS_CRED ? ch->files->cred_path : ch->files->conf_path);
    return 0;
}

/* a STATIC source of the keys found by rc (1), else rc */
static found_rc static_src(found_rc rc, zf_cred_value *v, zf_aws_src **out)
{
    if (rc != 1) {
        zf_cred_value_clear(v);
        return rc;
    }
    zf_aws_src *s = src_new(ZF_AWS_STATIC);
    if (!s) {
        zf_cred_value_clear(v);
        return ZF_ENOMEM;
    }
    s->keys = *v;
    memset(v, 0, sizeof *v);
    *out = s;
    return 1;
}

/* ---- web identity, SSO, process, container, instance metadata ---------------- */

/* STS's endpoint for the profile */
static int sts_endpoint(const zf_aws_chain *ch, const char *profile, const char *region,
                        char **out, char *err, size_t errcap)
{
    const char *e = env("AWS_ENDPOINT_URL_STS") ? env("AWS_ENDPOINT_URL_STS") : env("AWS_ENDPOINT_URL");
    char *fe = e ? NULL : zf_aws_lookup(ch->files, ZF_AWS_PROFILE, profile, "sts", "endpoint_url", NULL);
    if (!e && !fe)
        fe = profile_value(ch, profile, "endpoint_url");
    char def[128];
    snprintf(def, sizeof def, "https://sts.%s.amazonaws.com", region);
    int rc = zf_aws_endpoint_check(e ? e : fe ? fe : def, out, err, errcap);
    free(fe);
    return rc;
}

/* the region of STS or the portal: the profile's, else the store's */
static char *src_region(const zf_aws_chain *ch, const char *profile)
{
    char *r = profile_value(ch, profile, "region");
    return r ? r : strdup(ch->region);
}

static char *session_name(const char *given)
{
    if (given)
        return strdup(given);
    char b[48];
    snprintf(b, sizeof b, "zarrfs-%lld", (long long)time(NULL));
    return strdup(b);
}

static found_rc webid_src(const zf_aws_chain *ch, const char *profile, zf_aws_src **out,
                          char *desc, char *err, size_t errcap)
{
    const char *tf = env("AWS_WEB_IDENTITY_TOKEN_FILE");
    char *ptf = tf ? NULL : profile_value(ch, profile, "web_identity_token_file");
    if (!tf && !ptf)
        return 0;
    zf_aws_src *s = src_new(ZF_AWS_WEBID);
    if (!s) {
        free(ptf);
        return ZF_ENOMEM;
    }
    s->token_file = ptf ? ptf : strdup(tf);
    const char *arn = env("AWS_ROLE_ARN"), *sn = env("AWS_ROLE_SESSION_NAME");
    s->role_arn = arn ? strdup(arn) : profile_value(ch, profile, "role_arn");
    char *psn = sn ? NULL : profile_value(ch, profile, "role_session_name");
    s->session_name = session_name(sn ? sn : psn);
    free(psn);
    s->region = src_region(ch, profile);
    int rc = s->token_file && s->session_name && s->region ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK && !s->role_arn)
        rc = ERR(ZF_EINVAL, "a web identity token file is set (AWS_WEB_IDENTITY_TOKEN_FILE or "
                 "web_identity_token_file) but no role (AWS_ROLE_ARN or role_arn)");
    if (rc == ZF_OK)
        rc = sts_endpoint(ch, profile, s->region, &s->endpoint, err, errcap);
    if (rc != ZF_OK) {
        zf_aws_src_free(s);
        return rc;
    }
    snprintf(desc, DESC_CAP, "web identity (role %s)", s->role_arn);
    *out = s;
    return 1;
}

static found_rc sso_src(const zf_aws_chain *ch, const char *profile, zf_aws_src **out,
                        char *desc, char *err, size_t errcap)
{
    char *session = profile_value(ch, profile, "sso_session");
    char *start = profile_value(ch, profile, "sso_start_url");
    if (!session && !start)
        return 0;
    zf_aws_src *s = src_new(ZF_AWS_SSO);
    if (!s) {
        free(session);
        free(start);
        return ZF_ENOMEM;
    }
    s->account = profile_value(ch, profile, "sso_account_id");
    s->role_name = profile_value(ch, profile, "sso_role_name");
    if (session) {
        int seen = 0;
        s->region = zf_aws_lookup(ch->files, ZF_AWS_SSO_SESSION, session, NULL, "sso_region", &seen);
        s->cache_key = session;
        free(start);
        if (!seen) {
            (void)ERR(ZF_EINVAL, "profile %s names sso_session %s, which has no [sso-session %s] "
                "section", profile, session, session);
            zf_aws_src_free(s);
            return ZF_EINVAL;
        }
    } else {
        s->region = profile_value(ch, profile, "sso_region");
        s->cache_key = start;
    }
    int rc = ZF_OK;
    if (!s->account || !s->role_name || !s->region)
        rc = ERR(ZF_EINVAL, "profile %s: SSO needs sso_account_id, sso_role_name and sso_region",
                 profile);
    const char *e = env("AWS_ENDPOINT_URL_SSO");
    char def[128];
    if (rc == ZF_OK) {
        snprintf(def, sizeof def, "https://portal.sso.%s.amazonaws.com", s->region);
        rc = zf_aws_endpoint_check(e ? e : def, &s->endpoint, err, errcap);
    }
    if (rc != ZF_OK) {
        zf_aws_src_free(s);
        return rc;
    }
    snprintf(desc, DESC_CAP, "SSO (account %s, role %s)", s->account, s->role_name);
    *out = s;
    return 1;
}

/* split a credential_process command line as a POSIX shell's words would
 * be split (quotes, backslashes; nothing expanded) */
static char **split_words(const char *cmd)
{
    size_t n = strlen(cmd), cap = n / 2 + 2, k = 0;
    char **argv = calloc(cap, sizeof *argv);
    char *w = malloc(n + 1);
    if (!argv || !w)
        goto oom;
    for (const char *p = cmd; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        size_t m = 0;
        char q = 0;
        for (; *p && (q || (*p != ' ' && *p != '\t')); p++) {
            if (q == '\'' && *p != '\'') {
                w[m++] = *p;
            } else if (*p == '\'' || *p == '"') {
                if (!q)
                    q = *p;
                else if (q == *p)
                    q = 0;
                else
                    w[m++] = *p;
            } else if (*p == '\\' && p[1] && (!q || strchr("\"\\$`", p[1]))) {
                w[m++] = *++p;
            } else {
                w[m++] = *p;
            }
        }
        if (q || k + 1 >= cap || !(argv[k++] = strndup(w, m)))
            goto oom;
    }
    free(w);
    if (!k)
        goto oom;
    return argv;
oom:
    for (size_t i = 0; argv && i < k; i++)
        free(argv[i]);
    free(argv);
    free(w);
    return NULL;
}

static found_rc process_src(const zf_aws_chain *ch, const char *profile, zf_aws_src **out,
                            char *desc, char *err, size_t errcap)
{
    char *cmd = profile_value(ch, profile, "credential_process");
    if (!cmd)
        return 0;
    zf_aws_src *s = src_new(ZF_AWS_PROCESS);
    if (s)
        s->argv = split_words(cmd);
    free(cmd);
    if (!s || !s->argv) {
        zf_aws_src_free(s);
        return ERR(ZF_EINVAL, "profile %s: credential_process is empty or has an unclosed quote",
                   profile);
    }
    snprintf(desc, DESC_CAP, "credential_process (profile %s)", profile);
    *out = s;
    return 1;
}

/* may container credentials come from host h (a FULL_URI over http)? */
static int container_host_ok(const char *url)
{
    static const char *const ok[] = {"http://127.", "http://localhost:", "http://localhost/",
                                     "http://[::1]", "http://169.254.170.2:", "http://169.254.170.2/",
                                     "http://169.254.170.23:", "http://169.254.170.23/",
                                     "http://[fd00:ec2::23]"};
    if (!strncmp(url, "https://", 8))
        return 1;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strncmp(url, ok[i], strlen(ok[i])))
            return 1;
    return 0;
}

static found_rc container_src(zf_aws_src **out, char *desc, char *err, size_t errcap)
{
    const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    if (!rel && !full)
        return 0;
    char url[2048];
    if (rel && rel[0] != '/')
        return ERR(ZF_EINVAL, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI must start with '/'");
    snprintf(url, sizeof url, "%s%s", rel ? "http://169.254.170.2" : full, rel ? rel : "");
    if (!rel && !container_host_ok(url))
        return ERR(ZF_EINVAL, "AWS_CONTAINER_CREDENTIALS_FULL_URI: http only to a loopback or "
                   "the container agent's address (169.254.170.2, 169.254.170.23), else https");
    zf_aws_src *s = src_new(ZF_AWS_CONTAINER);
    if (!s || !(s->endpoint = strdup(url))) {
        zf_aws_src_free(s);
        return ZF_ENOMEM;
    }
    const char *af = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    const char *a = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    if ((af && !(s->auth_file = strdup(af))) || (!af && a && !(s->auth = strdup(a)))) {
        zf_aws_src_free(s);
        return ZF_ENOMEM;
    }
    snprintf(desc, DESC_CAP, "container credentials");
    *out = s;
    return 1;
}

/* does the firmware say this is an EC2 instance (as the AWS SDKs' docs
 * describe it)?  Keeps other machines from waiting on 169.254.169.254 */
static int on_ec2(void)
{
    static const char *const files[] = {"/sys/class/dmi/id/sys_vendor",
                                        "/sys/class/dmi/id/board_vendor",
                                        "/sys/class/dmi/id/bios_version",
                                        "/sys/hypervisor/uuid"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *t = NULL;
        if (zf_aws_read_file(files[i], 4096, &t, NULL, 0) != ZF_OK)
            continue;
        int yes = strcasestr(t, "amazon") || !strncasecmp(t, "ec2", 3);
        free(t);
        if (yes)
            return 1;
    }
    return 0;
}

static found_rc imds_src(int explicit, zf_aws_src **out, char *desc, char *err, size_t errcap)
{
    const char *off = env("AWS_EC2_METADATA_DISABLED");
    if (off && !strcasecmp(off, "true"))
        return 0;
    const char *e = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    if (!e && !explicit && !on_ec2())
        return 0;
    const char *mode = env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
    const char *def = mode && !strcasecmp(mode, "IPv6") ? "http://[fd00:ec2::254]"
                                                         : "http://169.254.169.254";
    zf_aws_src *s = src_new(ZF_AWS_IMDS);
    int rc = s ? zf_aws_endpoint_check(e ? e : def, &s->endpoint, err, errcap) : ZF_ENOMEM;
    if (rc != ZF_OK) {
        zf_aws_src_free(s);
        return rc;
    }
    snprintf(desc, DESC_CAP, "instance metadata");
    *out = s;
    return 1;
}

/* ---- roles ---------------------------------------------------------------- */

static found_rc profile_src(const zf_aws_chain *ch, const char *profile, int depth,
                            zf_aws_src **out, char *desc, char *err, size_t errcap);

/* the credentials a role is assumed with: credential_source or source_profile */
static int role_source(const zf_aws_chain *ch, const char *profile, int depth, zf_aws_src **out,
                       char *desc, char *err, size_t errcap)
{
    char *sp = profile_value(ch, profile, "source_profile");
    char *cs = profile_value(ch, profile, "credential_source");
    zf_cred_value v = {0};
    found_rc rc = 0;
    if (sp && cs)
        rc = ERR(ZF_EINVAL, "profile %s has both source_profile and credential_source", profile);
    else if (!sp && !cs)
        rc = ERR(ZF_EINVAL, "profile %s has role_arn but neither source_profile nor "
                 "credential_source", profile);
    else if (cs && !strcmp(cs, "Environment"))
        rc = (rc = env_keys(&v, err, errcap)) == 0 ? ERR(ZF_EINVAL, "credential_source "
             "Environment: AWS_ACCESS_KEY_ID is not set") : static_src(rc, &v, out);
    else if (cs && !strcmp(cs, "Ec2InstanceMetadata"))
        rc = imds_src(1, out, desc, err, errcap);
    else if (cs && !strcmp(cs, "EcsContainer"))
        rc = container_src(out, desc, err, errcap);
    else if (cs)
        rc = ERR(ZF_EINVAL, "profile %s: credential_source %s (Environment, Ec2InstanceMetadata "
                 "or EcsContainer)", profile, cs);
    else if (!strcmp(sp, profile)) /* a profile whose own keys assume its role */
        rc = (rc = file_keys(ch, ZF_AWS_CRED, profile, &v, err, errcap)) ? static_src(rc, &v, out)
             : static_src(file_keys(ch, ZF_AWS_PROFILE, profile, &v, err, errcap), &v, out);
    else
        rc = profile_src(ch, sp, depth + 1, out, desc, err, errcap);
    if (rc == 0)
        rc = ERR(ZF_EINVAL, "profile %s: its source %s gives no credentials", profile,
                 sp ? sp : cs);
    if (rc == 1 && (*out)->kind == ZF_AWS_STATIC)
        snprintf(desc, DESC_CAP, "%s%s", sp ? "profile " : "environment", sp ? sp : "");
    free(sp);
    free(cs);
    return rc;
}

static found_rc role_src(const zf_aws_chain *ch, const char *profile, int depth, zf_aws_src **out,
                         char *desc, char *err, size_t errcap)
{
    char *arn = profile_value(ch, profile, "role_arn");
    if (!arn)
        return 0;
    if (depth > DEPTH_MAX) {
        free(arn);
        return ERR(ZF_EINVAL, "profile %s: roles chained through source_profile more than %d "
                   "deep (a loop?)", profile, DEPTH_MAX);
    }
    zf_aws_src *s = src_new(ZF_AWS_ROLE);
    if (!s) {
        free(arn);
        return ZF_ENOMEM;
    }
    s->role_arn = arn;
    char *sn = profile_value(ch, profile, "role_session_name");
    s->session_name = session_name(sn);
    free(sn);
    s->external_id = profile_value(ch, profile, "external_id");
    s->region = src_region(ch, profile);
    char inner[DESC_CAP] = "";
    int rc = s->session_name && s->region ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = sts_endpoint(ch, profile, s->region, &s->endpoint, err, errcap);
    if (rc == ZF_OK)
        rc = role_source(ch, profile, depth, &s->inner, inner, err, errcap);
    if (rc < 0) {
        zf_aws_src_free(s);
        return rc;
    }
    snprintf(desc, DESC_CAP, "assume role %.78s (from %.60s)", s->role_arn, inner);
    *out = s;
    return 1;
}

/* a source profile's credentials (botocore: a role of its own unless it has
 * keys, else the profile's sources in the chain's order) */
static found_rc profile_src(const zf_aws_chain *ch, const char *profile, int depth,
                            zf_aws_src **out, char *desc, char *err, size_t errcap)
{
    zf_cred_value v = {0};
    found_rc rc = file_keys(ch, ZF_AWS_CRED, profile, &v, err, errcap);
    if (rc == 0)
        rc = file_keys(ch, ZF_AWS_PROFILE, profile, &v, err, errcap);
    if (rc)
        return static_src(rc, &v, out);
    if ((rc = role_src(ch, profile, depth, out, desc, err, errcap)) ||
        (rc = webid_src(ch, profile, out, desc, err, errcap)) ||
        (rc = sso_src(ch, profile, out, desc, err, errcap)))
        return rc;
    return process_src(ch, profile, out, desc, err, errcap);
}

/* ---- the chain --------------------------------------------------------------- */

/* the first source configured, in s3cred.h's order */
static found_rc resolve(const zf_aws_chain *ch, zf_aws_src **out, char *desc, char *err,
                        size_t errcap)
{
    const char *p = ch->profile;
    zf_cred_value v = {0};
    found_rc rc;
    char *web = profile_value(ch, p, "web_identity_token_file");
    int webrole = web != NULL;
    free(web);
    if ((rc = static_src(env_keys(&v, err, errcap), &v, out)))
        return rc < 0 ? rc : (snprintf(desc, DESC_CAP, "environment"), 1);
    if ((!webrole && (rc = role_src(ch, p, 0, out, desc, err, errcap))) ||
        (rc = webid_src(ch, p, out, desc, err, errcap)) ||
        (rc = sso_src(ch, p, out, desc, err, errcap)))
        return rc;
    if ((rc = static_src(file_keys(ch, ZF_AWS_CRED, p, &v, err, errcap), &v, out)))
        return rc < 0 ? rc : (snprintf(desc, DESC_CAP, "credentials file (profile %s)", p), 1);
    if ((rc = process_src(ch, p, out, desc, err, errcap)))
        return rc;
    if ((rc = static_src(file_keys(ch, ZF_AWS_PROFILE, p, &v, err, errcap), &v, out)))
        return rc < 0 ? rc : (snprintf(desc, DESC_CAP, "config file (profile %s)", p), 1);
    if ((rc = container_src(out, desc, err, errcap)))
        return rc;
    return imds_src(0, out, desc, err, errcap);
}

/* give s and its inner sources the engine net (s owns it) */
static void share_net(zf_aws_src *s, zf_net *net)
{
    s->owns_net = 1;
    for (; s; s = s->inner)
        s->net = net;
}

int zf_aws_fetch(void *ctx, zf_cred_value *v, char *desc, size_t cap, char *err, size_t errcap)
{
    zf_aws_src *s = ctx;
    int rc;
    switch (s->kind) {
    case ZF_AWS_ROLE:
    case ZF_AWS_WEBID:
        rc = zf_aws_sts_fetch(s, v, err, errcap);
        break;
    case ZF_AWS_PROCESS:
        rc = zf_aws_process_fetch(s, v, err, errcap);
        break;
    case ZF_AWS_STATIC:
        v->id = strdup(s->keys.id);
        v->secret = strdup(s->keys.secret);
        v->token = s->keys.token ? strdup(s->keys.token) : NULL;
        rc = v->id && v->secret && (v->token || !s->keys.token) ? ZF_OK : ZF_ENOMEM;
        break;
    default:
        rc = zf_aws_http_fetch(s, v, desc, cap, err, errcap);
    }
    return rc == ZF_OK ? keys_ok(v, desc, err, errcap) : rc;
}

static void src_free_void(void *p)
{
    zf_aws_src_free(p);
}

/* why nothing was found: the profile exists without credentials, or not at all */
static int none_found(const zf_aws_chain *ch, char *err, size_t errcap)
{
    int seen = 0;
    free(zf_aws_lookup(ch->files, ZF_AWS_CRED, ch->profile, NULL, "-", &seen));
    free(zf_aws_lookup(ch->files, ZF_AWS_PROFILE, ch->profile, NULL, "-", &seen));
    if (seen)
        return ERR(ZF_ENOTFOUND, "profile %s has no credentials (keys, role_arn, SSO, "
                   "credential_process or web identity); -o anonymous for a public bucket",
                   ch->profile);
    if (ch->explicit_profile)
        return ERR(ZF_EINVAL, "the profile %s (AWS_PROFILE) is in neither %s nor %s", ch->profile,
                   ch->files->cred_path ? ch->files->cred_path : "~/.aws/credentials",
                   ch->files->conf_path ? ch->files->conf_path : "~/.aws/config");
    return ERR(ZF_ENOTFOUND, "no S3 credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a "
               "profile in ~/.aws, web identity, container or instance credentials); "
               "-o anonymous for a public bucket");
}

int zf_aws_chain_open(const zf_aws_chain *ch, zf_cred **out, char *err, size_t errcap)
{
    *out = NULL;
    zf_aws_src *s = NULL;
    char desc[DESC_CAP] = "";
    found_rc rc = resolve(ch, &s, desc, err, errcap);
    if (rc == 0)
        return none_found(ch, err, errcap);
    if (rc < 0)
        return rc;
    if (s->kind == ZF_AWS_STATIC) {
        rc = keys_ok(&s->keys, desc, err, errcap);
        if (rc == ZF_OK)
            rc = zf_cred_open_static(desc, &s->keys, ch->note, out);
        zf_aws_src_free(s);
        return rc;
    }
    zf_net_opts no = {.connections = 2, .retries = 3, .timeout_ms = 5000, .budget_ms = 20000,
                      .cafile = ch->net ? ch->net->cafile : NULL};
    zf_net *net = NULL;
    rc = zf_net_open(&no, &net, err, errcap);
    if (rc != ZF_OK) {
        zf_aws_src_free(s);
        return rc;
    }
    share_net(s, net);
    return zf_cred_open(desc, zf_aws_fetch, s, src_free_void, ch->note, out, err, errcap);
}
