/* s3cred.c - S3 region and endpoint from the environment and the AWS
 * CLI's shared files (an INI dialect: [sections], key = value, indented
 * lines nesting under a key without a value, # and ; comments); the
 * credentials from the chain of awschain.c. */
#include "store/s3cred.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/err.h"
#include "store/aws_impl.h"
#include "store/url.h"

/* A shared file larger than this is refused (they hold a few profiles). */
#define FILE_MAX (1u << 20)

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

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
    zf_cred_free(c->cred);
    free(c->region);
    free(c->endpoint);
    free(c->ca_bundle);
    free(c);
}

const char *zf_aws_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

#define env zf_aws_env

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

int zf_aws_read_file(const char *path, size_t max, char **text, char *err, size_t errcap)
{
    *text = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? ZF_ENOTFOUND
                                                   : ERR(ZF_ECORRUPT, "%s: %s", path, strerror(errno));
    struct stat st;
    int got = fstat(fd, &st) == 0;
    if (got && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
        st.st_size = 0; /* /dev/null: an empty file, as the AWS CLI reads it */
    else if (!got || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
        close(fd);
        return ERR(ZF_ECORRUPT, "%s: not a regular file of at most %zu bytes", path, max);
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

/* does the header "[...]" (s..e inside the brackets) name the section? */
static int section_is(const char *s, const char *e, zf_aws_section sec, const char *name)
{
    s = skip_ws(s, e);
    e = trim_end(s, e);
    if (sec == ZF_AWS_CRED)
        return span_is(s, e, name);
    if (sec == ZF_AWS_PROFILE && !strcmp(name, "default") && span_is(s, e, "default"))
        return 1;
    const char *word = sec == ZF_AWS_PROFILE ? "profile" : "sso-session";
    size_t w = strlen(word);
    if ((size_t)(e - s) < w + 1 || memcmp(s, word, w) || (s[w] != ' ' && s[w] != '\t'))
        return 0;
    return span_is(skip_ws(s + w, e), e, name);
}

/* A search in an INI text: the value of key in the section, nested under
 * the key sub when sub is not NULL. */
typedef struct ini_query {
    const char *name, *sub, *key;
    zf_aws_section sec;
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
            in = close && section_is(s + 1, close, q->sec, q->name);
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

void zf_awsfiles_free(zf_awsfiles *f)
{
    wipe_free(f->cred_text);
    wipe_free(f->conf_text);
    free(f->cred_path);
    free(f->conf_path);
    memset(f, 0, sizeof *f);
}

int zf_awsfiles_load(zf_awsfiles *f, char *err, size_t errcap)
{
    memset(f, 0, sizeof *f);
    f->cred_path = shared_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    f->conf_path = shared_path("AWS_CONFIG_FILE", "config");
    int rc = f->cred_path ? zf_aws_read_file(f->cred_path, FILE_MAX, &f->cred_text, err, errcap)
                          : ZF_OK;
    if ((rc == ZF_OK || rc == ZF_ENOTFOUND) && f->conf_path)
        rc = zf_aws_read_file(f->conf_path, FILE_MAX, &f->conf_text, err, errcap);
    return rc == ZF_ENOTFOUND ? ZF_OK : rc;
}

char *zf_aws_lookup(const zf_awsfiles *f, zf_aws_section sec, const char *name, const char *sub,
                    const char *key, int *seen)
{
    const char *text = sec == ZF_AWS_CRED ? f->cred_text : f->conf_text;
    if (!text)
        return NULL;
    ini_query q = {name, sub, key, sec, 0};
    char *v = ini_find(text, &q);
    if (seen)
        *seen |= q.seen;
    return v;
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
static int find_place(zf_s3cred *c, const zf_s3cred_opts *o, const zf_awsfiles *f,
                      const char *profile, int *seen, char *err, size_t errcap)
{
    const char *r = o->region ? o->region : env("AWS_REGION") ? env("AWS_REGION")
                                                              : env("AWS_DEFAULT_REGION");
    c->region = r ? strdup(r) : zf_aws_lookup(f, ZF_AWS_PROFILE, profile, NULL, "region", seen);
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
        fe = zf_aws_lookup(f, ZF_AWS_PROFILE, profile, "s3", "endpoint_url", seen);
        if (!fe)
            fe = zf_aws_lookup(f, ZF_AWS_PROFILE, profile, NULL, "endpoint_url", seen);
        e = fe;
    }
    int rc = e ? endpoint_ok(e, &c->endpoint, err, errcap) : ZF_OK;
    free(fe);
    const char *ca = env("AWS_CA_BUNDLE");
    c->ca_bundle = ca ? strdup(ca) : zf_aws_lookup(f, ZF_AWS_PROFILE, profile, NULL, "ca_bundle", seen);
    if (rc == ZF_OK && ca && !c->ca_bundle)
        rc = ZF_ENOMEM;
    return rc;
}

int zf_aws_endpoint_check(const char *url, char **out, char *err, size_t errcap)
{
    return endpoint_ok(url, out, err, errcap);
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
    zf_awsfiles f;
    int rc = zf_awsfiles_load(&f, err, errcap);
    if (rc == ZF_OK)
        rc = find_place(c, o, &f, profile, &seen, err, errcap);
    if (rc == ZF_OK && !o->anonymous) {
        zf_net_opts no = {.cafile = o->cafile ? o->cafile : c->ca_bundle};
        zf_aws_chain ch = {.files = &f, .profile = profile, .explicit_profile = explicit_profile,
                           .region = c->region, .net = &no, .note = o->note};
        rc = zf_aws_chain_open(&ch, &c->cred, err, errcap);
    }
    zf_awsfiles_free(&f);
    if (rc != ZF_OK) {
        zf_s3cred_free(c);
        return rc;
    }
    *out = c;
    return ZF_OK;
}
