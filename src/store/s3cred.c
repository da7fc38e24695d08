/* s3cred.c - S3 credentials, region and endpoint from the environment and
 * the AWS CLI's shared files (an INI dialect: [sections], key = value,
 * indented lines nesting under a key without a value, # and ; comments). */
#include "store/s3cred.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "store/url.h"

/* A shared file larger than this is refused (they hold a few profiles). */
#define FILE_MAX (1u << 20)

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void zf_s3cred_free(zf_s3cred *c)
{
    if (!c)
        return;
    free(c->access_key);
    wipe_free(c->secret_key);
    wipe_free(c->session_token);
    free(c->region);
    free(c->endpoint);
    free(c->ca_bundle);
    free(c);
}

/* the environment variable name, if set and not empty */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* path of a shared file: $var, else ~/.aws/name (malloc'd; NULL: no home) */
static char *shared_path(const char *var, const char *name)
{
    const char *p = env(var);
    if (p)
        return strdup(p);
    const char *home = env("HOME");
    if (!home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home)
        return NULL;
    size_t n = strlen(home) + strlen(name) + 8;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/.aws/%s", home, name);
    return s;
}

/* the whole of a shared file (NUL-terminated; wipe when done); *text NULL
 * and ZF_OK if it does not exist */
static int read_file(const char *path, char **text, char *err, size_t errcap)
{
    *text = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? ZF_OK
                                                   : ERR(ZF_ECORRUPT, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > FILE_MAX) {
        close(fd);
        return ERR(ZF_ECORRUPT, "%s: not a regular file of at most %u bytes", path, FILE_MAX);
    }
    char *b = malloc((size_t)st.st_size + 1);
    if (!b) {
        close(fd);
        return ZF_ENOMEM;
    }
    size_t n = 0;
    while (n < (size_t)st.st_size) {
        ssize_t k = read(fd, b + n, (size_t)st.st_size - n);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    b[n] = '\0';
    *text = b;
    return ZF_OK;
}

static const char *skip_ws(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

static const char *trim_end(const char *s, const char *end)
{
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    return end;
}

static int span_is(const char *s, const char *e, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(e - s) == n && !memcmp(s, word, n);
}

/* does the header "[...]" (s..e inside the brackets) name the profile? */
static int section_is(const char *s, const char *e, const char *profile, int config)
{
    s = skip_ws(s, e);
    e = trim_end(s, e);
    if (!config)
        return span_is(s, e, profile);
    if (!strcmp(profile, "default") && span_is(s, e, "default"))
        return 1;
    if (e - s < 8 || memcmp(s, "profile", 7) || (s[7] != ' ' && s[7] != '\t'))
        return 0;
    return span_is(skip_ws(s + 7, e), e, profile);
}

/* A search in an INI text: the value of key in the profile's section,
 * nested under the key sub when sub is not NULL. */
typedef struct ini_query {
    const char *profile, *sub, *key;
    int config;       /* config file: [profile NAME] sections */
    int seen;         /* out: the section exists */
} ini_query;

/* the value found (malloc'd), or NULL */
static char *ini_find(const char *text, ini_query *q)
{
    int in = 0, nested = 0; /* in the section; under a key without a value */
    const char *parent = NULL, *parent_end = NULL;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
        const char *s = skip_ws(line, end), *e = trim_end(s, end);
        int indented = s > line;
        line = nl ? nl + 1 : NULL;
        if (s == e || *s == '#' || *s == ';')
            continue;
        if (*s == '[' && !indented) {
            const char *close = memchr(s, ']', (size_t)(e - s));
            in = close && section_is(s + 1, close, q->profile, q->config);
            q->seen |= in;
            nested = 0;
            continue;
        }
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (!in || !eq)
            continue;
        const char *k = s, *ke = trim_end(s, eq), *v = skip_ws(eq + 1, e);
        if (!indented) {
            nested = v == e;
            parent = k;
            parent_end = ke;
        }
        int under = indented && nested;
        if (q->sub ? under && span_is(parent, parent_end, q->sub) : !under) {
            if (span_is(k, ke, q->key) && v < e)
                return strndup(v, (size_t)(e - v));
        }
    }
    return NULL;
}

/* the region, endpoint and credentials that are not set yet, from the
 * profile's sections of the shared files */
typedef struct found {
    char *cred_text, *conf_text; /* the files (wiped when done) */
    char *cred_path, *conf_path;
} found;

static void found_free(found *f)
{
    wipe_free(f->cred_text);
    wipe_free(f->conf_text);
    free(f->cred_path);
    free(f->conf_path);
}

static int load_files(found *f, char *err, size_t errcap)
{
    f->cred_path = shared_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    f->conf_path = shared_path("AWS_CONFIG_FILE", "config");
    int rc = f->cred_path ? read_file(f->cred_path, &f->cred_text, err, errcap) : ZF_OK;
    if (rc == ZF_OK && f->conf_path)
        rc = read_file(f->conf_path, &f->conf_text, err, errcap);
    return rc;
}

/* the value of key in the profile's section of text (config: [profile NAME]) */
static char *lookup(const char *text, const char *profile, int config, const char *sub,
                    const char *key, int *seen)
{
    if (!text)
        return NULL;
    ini_query q = {profile, sub, key, config, 0};
    char *v = ini_find(text, &q);
    *seen |= q.seen;
    return v;
}

/* credentials from the environment, else from the profile in the files */
static int find_keys(zf_s3cred *c, const found *f, const char *profile, int explicit_profile,
                     int *seen, char *err, size_t errcap)
{
    const char *id = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
    if (id || secret) {
        if (!id || !secret)
            return ERR(ZF_EINVAL, "%s is set but %s is not",
                       id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                       id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
        c->access_key = strdup(id);
        c->secret_key = strdup(secret);
        c->session_token = dup_or_null(env("AWS_SESSION_TOKEN"));
        c->source = "environment";
        return env("AWS_SESSION_TOKEN") && !c->session_token ? ZF_ENOMEM : ZF_OK;
    }
    for (int config = 0; config <= 1 && !c->access_key; config++) {
        const char *text = config ? f->conf_text : f->cred_text;
        char *i = lookup(text, profile, config, NULL, "aws_access_key_id", seen);
        char *s = lookup(text, profile, config, NULL, "aws_secret_access_key", seen);
        if (i && s) {
            c->access_key = i;
            c->secret_key = s;
            c->session_token = lookup(text, profile, config, NULL, "aws_session_token", seen);
            c->source = config ? "config file" : "credentials file";
            return ZF_OK;
        }
        free(i);
        wipe_free(s);
        if (i || s)
            return ERR(ZF_EINVAL, "profile %s in %s has only one of aws_access_key_id and "
                       "aws_secret_access_key", profile, config ? f->conf_path : f->cred_path);
    }
    if (*seen)
        return ERR(ZF_ENOTFOUND, "profile %s has no aws_access_key_id and aws_secret_access_key "
                   "(roles, SSO and credential_process are not supported); -o anonymous for a "
                   "public bucket", profile);
    if (explicit_profile)
        return ERR(ZF_EINVAL, "the profile %s (AWS_PROFILE) is in neither %s nor %s", profile,
                   f->cred_path ? f->cred_path : "~/.aws/credentials",
                   f->conf_path ? f->conf_path : "~/.aws/config");
    return ERR(ZF_ENOTFOUND, "no S3 credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
               "profile %s in ~/.aws/credentials); -o anonymous for a public bucket", profile);
}

/* printable ASCII without spaces (what goes into a header line) */
static int printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

/* every copy made, and fit to go into header lines */
static int keys_ok(const zf_s3cred *c, char *err, size_t errcap)
{
    if (!c->access_key || !c->secret_key)
        return ZF_ENOMEM;
    if (!*c->access_key || !printable(c->access_key) || strchr(c->access_key, '/'))
        return ERR(ZF_EINVAL, "the S3 access key id (%s) holds a space, '/' or a control "
                   "character", c->source);
    if (c->session_token && !printable(c->session_token))
        return ERR(ZF_EINVAL, "the S3 session token (%s) holds a space or a control character",
                   c->source);
    return ZF_OK;
}

/* check and normalise an endpoint URL (no trailing '/', no user:password) */
static int endpoint_ok(const char *u, char **out, char *err, size_t errcap)
{
    size_t skip = !strncmp(u, "https://", 8) ? 8 : !strncmp(u, "http://", 7) ? 7 : 0;
    char shown[256]; /* never the password of a user:password@ */
    zf_url_redact(u, shown, sizeof shown);
    if (!skip || !u[skip] || u[skip] == '/')
        return ERR(ZF_EINVAL, "endpoint %s: not an http:// or https:// URL", shown);
    for (const char *p = u; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#' || *p == '@')
            return ERR(ZF_EINVAL, "endpoint: a URL without spaces, query, fragment or "
                       "user name is needed");
    size_t n = strlen(u);
    while (n > skip && u[n - 1] == '/')
        n--;
    *out = strndup(u, n);
    return *out ? ZF_OK : ZF_ENOMEM;
}

static int region_ok(const char *r)
{
    size_t n = strlen(r);
    if (!n || n > 64)
        return 0;
    for (; *r; r++)
        if (!((*r >= 'a' && *r <= 'z') || (*r >= 'A' && *r <= 'Z') || (*r >= '0' && *r <= '9') ||
              *r == '-' || *r == '_' || *r == '.'))
            return 0;
    return 1;
}

/* region, endpoint and CA bundle, by precedence */
static int find_place(zf_s3cred *c, const zf_s3cred_opts *o, const found *f,
                      const char *profile, int *seen, char *err, size_t errcap)
{
    const char *r = o->region ? o->region : env("AWS_REGION") ? env("AWS_REGION")
                                                              : env("AWS_DEFAULT_REGION");
    c->region = r ? strdup(r) : lookup(f->conf_text, profile, 1, NULL, "region", seen);
    if (!c->region)
        c->region = strdup("us-east-1");
    if (!c->region)
        return ZF_ENOMEM;
    if (!region_ok(c->region))
        return ERR(ZF_EINVAL, "region %s: letters, digits, '-', '_' and '.' only", c->region);
    const char *e = o->endpoint ? o->endpoint : env("AWS_ENDPOINT_URL_S3") ? env("AWS_ENDPOINT_URL_S3")
                                                                         : env("AWS_ENDPOINT_URL");
    char *fe = NULL;
    if (!e) {
        fe = lookup(f->conf_text, profile, 1, "s3", "endpoint_url", seen);
        if (!fe)
            fe = lookup(f->conf_text, profile, 1, NULL, "endpoint_url", seen);
        e = fe;
    }
    int rc = e ? endpoint_ok(e, &c->endpoint, err, errcap) : ZF_OK;
    free(fe);
    const char *ca = env("AWS_CA_BUNDLE");
    c->ca_bundle = ca ? strdup(ca) : lookup(f->conf_text, profile, 1, NULL, "ca_bundle", seen);
    if (rc == ZF_OK && ca && !c->ca_bundle)
        rc = ZF_ENOMEM;
    return rc;
}

int zf_s3cred_load(const zf_s3cred_opts *o, zf_s3cred **out, char *err, size_t errcap)
{
    *out = NULL;
    zf_s3cred *c = calloc(1, sizeof *c);
    if (!c)
        return ZF_ENOMEM;
    const char *profile = env("AWS_PROFILE") ? env("AWS_PROFILE") : env("AWS_DEFAULT_PROFILE");
    int explicit_profile = profile != NULL, seen = 0;
    if (!profile)
        profile = "default";
    found f = {0};
    int rc = load_files(&f, err, errcap);
    if (rc == ZF_OK)
        rc = find_place(c, o, &f, profile, &seen, err, errcap);
    if (rc == ZF_OK && o->anonymous)
        c->source = "anonymous";
    else if (rc == ZF_OK)
        rc = find_keys(c, &f, profile, explicit_profile, &seen, err, errcap);
    if (rc == ZF_OK && !o->anonymous)
        rc = keys_ok(c, err, errcap);
    found_free(&f);
    if (rc != ZF_OK) {
        zf_s3cred_free(c);
        return rc;
    }
    *out = c;
    return ZF_OK;
}
