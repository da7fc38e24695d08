/* url.c - parse the STORE argument (url.h) and build object URLs. */
#include "store/url.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"

static int fail(char *err, size_t errcap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errcap, const char *fmt, ...)
{
    if (err && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errcap, fmt, ap);
        va_end(ap);
    }
    return ZF_EINVAL;
}

static int is_alnum(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int zf_url_unescape_at(const char *s, size_t n, size_t i)
{
    int h = i + 2 < n && s[i] == '%' ? hexval(s[i + 1]) : -1;
    int l = h < 0 ? -1 : hexval(s[i + 2]);
    return l < 0 ? -1 : h * 16 + l;
}

/* length of "SCHEME" if spec starts with "SCHEME://", else 0 */
static size_t scheme_len(const char *spec)
{
    size_t i = 0;
    if (!((spec[0] >= 'a' && spec[0] <= 'z') || (spec[0] >= 'A' && spec[0] <= 'Z')))
        return 0;
    while (is_alnum(spec[i]) || spec[i] == '+' || spec[i] == '-' || spec[i] == '.')
        i++;
    return strncmp(spec + i, "://", 3) == 0 ? i : 0;
}

int zf_url_has_scheme(const char *spec)
{
    return scheme_len(spec) > 0;
}

void zf_url_redact(const char *spec, char *out, size_t cap)
{
    zf_sbuf b = {0};
    size_t sl = scheme_len(spec);
    const char *p = spec;
    if (sl) {
        /* user information may hold '/', '?' or '#' too: everything up to the
         * last '@' goes, wherever it is */
        const char *a = spec + sl + 3, *at = strrchr(a, '@');
        zf_sbuf_add(&b, spec, (size_t)(a - spec));
        if (at)
            zf_sbuf_add(&b, "***", 3);
        p = at ? at : a;
        size_t rest = strcspn(p, "?#");
        zf_sbuf_add(&b, p, rest);
        if (p[rest])
            zf_sbuf_printf(&b, "%c***", p[rest]);
    } else {
        zf_sbuf_add(&b, spec, strlen(spec));
    }
    snprintf(out, cap, "%s", b.failed || !b.data ? "(a store)" : b.data);
    free(b.data);
}

/* the prefix of s (n bytes): segments joined by single '/', %-decoded (a
 * decoded '/' is a byte of its segment); "." and ".." segments, and control
 * characters however written, refused */
static int make_prefix(const char *s, size_t n, char **out, char *err, size_t errcap)
{
    char *p = malloc(n + 1);
    if (!p)
        return ZF_ENOMEM;
    size_t o = 0, seg = 0; /* seg: where the current segment starts in p */
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '/') {
            size_t len = o - seg;
            if (len == 0)
                continue; /* an empty segment: nothing to join */
            if ((len == 1 && p[seg] == '.') || (len == 2 && p[seg] == '.' && p[seg + 1] == '.')) {
                free(p);
                return fail(err, errcap, "'.' and '..' are not allowed in a store URL's path");
            }
            if (i < n)
                p[o++] = '/';
            seg = o;
            continue;
        }
        int c = (unsigned char)s[i];
        if (c == '%') {
            if ((c = zf_url_unescape_at(s, n, i)) < 0) {
                free(p);
                return fail(err, errcap, "a bad %%-escape in the store URL's path (%%XX, two hex "
                                         "digits; a '%%' itself is %%25)");
            }
            i += 2;
        }
        if (c < ' ' || c == 0x7f) {
            free(p);
            return fail(err, errcap, "control characters are not allowed in a store URL");
        }
        p[o++] = (char)c;
    }
    while (o > 0 && p[o - 1] == '/')
        o--;
    p[o] = '\0';
    *out = p;
    return ZF_OK;
}

/* HOST[:PORT] of an http(s) URL (n bytes at a) */
static int parse_authority(const char *a, size_t n, zf_url *u, char *err, size_t errcap)
{
    if (memchr(a, '@', n))
        return fail(err, errcap, "user information (user:password@) is not allowed in a store URL: "
                                 "credentials never go in the STORE argument");
    size_t hlen;
    const char *rest;
    if (n && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close || close == a + 1)
            return fail(err, errcap, "a bad IPv6 address in the store URL (want [ADDRESS])");
        for (const char *c = a + 1; c < close; c++)
            if (hexval(*c) < 0 && *c != ':' && *c != '.')
                return fail(err, errcap, "a bad IPv6 address in the store URL (want [ADDRESS])");
        hlen = (size_t)(close - a) + 1;
    } else {
        hlen = 0;
        while (hlen < n && a[hlen] != ':') {
            if (!is_alnum(a[hlen]) && a[hlen] != '-' && a[hlen] != '.' && a[hlen] != '_')
                return fail(err, errcap, "a bad character in the store URL's host");
            hlen++;
        }
    }
    if (hlen == 0)
        return fail(err, errcap, "the store URL has no host");
    rest = a + hlen;
    if (rest < a + n) {
        if (*rest != ':' || rest + 1 == a + n)
            return fail(err, errcap, "a bad port in the store URL");
        unsigned long port = 0;
        for (const char *c = rest + 1; c < a + n; c++) {
            if (*c < '0' || *c > '9' || (port = port * 10 + (unsigned long)(*c - '0')) > 65535)
                return fail(err, errcap, "a bad port in the store URL");
        }
        if (port == 0)
            return fail(err, errcap, "a bad port in the store URL");
        u->port = (unsigned)port;
    }
    u->host = strndup(a, hlen);
    return u->host ? ZF_OK : ZF_ENOMEM;
}

/* BUCKET of s3:// or gs:// (n bytes at a) */
static int parse_bucket(const char *a, size_t n, zf_url *u, char *err, size_t errcap)
{
    if (n == 0)
        return fail(err, errcap, "the store URL has no bucket");
    if (memchr(a, '@', n))
        return fail(err, errcap, "user information (user:password@) is not allowed in a store URL: "
                                 "credentials never go in the STORE argument");
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(a[i]) && a[i] != '-' && a[i] != '.' && a[i] != '_')
            return fail(err, errcap, "a bad character in the bucket name (letters, digits, "
                                     "'-', '.' and '_' only)");
    }
    u->host = strndup(a, n);
    return u->host ? ZF_OK : ZF_ENOMEM;
}

int zf_url_parse(const char *spec, zf_url *u, char *err, size_t errcap)
{
    memset(u, 0, sizeof *u);
    size_t sl = scheme_len(spec);
    if (!sl) {
        u->path = strdup(spec);
        return u->path ? ZF_OK : ZF_ENOMEM;
    }
    if (sl == 4 && !strncasecmp(spec, "http", 4))
        u->kind = ZF_URL_HTTP;
    else if (sl == 5 && !strncasecmp(spec, "https", 5))
        u->kind = ZF_URL_HTTPS;
    else if (sl == 2 && !strncasecmp(spec, "s3", 2))
        u->kind = ZF_URL_S3;
    else if (sl == 2 && !strncasecmp(spec, "gs", 2))
        u->kind = ZF_URL_GS;
    else if ((sl == 2 && !strncasecmp(spec, "az", 2)) || (sl == 4 && !strncasecmp(spec, "abfs", 4)) ||
             (sl == 5 && !strncasecmp(spec, "abfss", 5)))
        u->kind = ZF_URL_AZ;
    else
        return fail(err, errcap, "unsupported scheme %.*s:// (use http://, https://, s3://, gs://, "
                                 "az:// or a local path)", (int)(sl > 16 ? 16 : sl), spec);
    if (strpbrk(spec, "?#"))
        return fail(err, errcap, "query strings and fragments ('?', '#') are not allowed in a store "
                                 "URL (a '?' or '#' in a key is %%3F, %%23)");
    int web = u->kind == ZF_URL_HTTP || u->kind == ZF_URL_HTTPS;
    for (const char *c = spec; *c; c++) {
        if ((unsigned char)*c < ' ' || *c == 0x7f)
            return fail(err, errcap, "control characters are not allowed in a store URL");
        if (*c == ' ' && web)
            return fail(err, errcap, "spaces are not allowed in an http(s) store URL (write %%20)");
    }
    const char *a = spec + sl + 3, *slash = strchr(a, '/');
    size_t alen = slash ? (size_t)(slash - a) : strlen(a);
    int rc = web ? parse_authority(a, alen, u, err, errcap) : parse_bucket(a, alen, u, err, errcap);
    const char *p = a + alen;
    if (rc == ZF_OK)
        rc = make_prefix(p, strlen(p), &u->path, err, errcap);
    if (rc != ZF_OK)
        zf_url_free(u);
    return rc;
}

void zf_url_free(zf_url *u)
{
    free(u->host);
    free(u->path);
    memset(u, 0, sizeof *u);
}

char *zf_url_origin(const zf_url *u)
{
    zf_sbuf b = {0};
    zf_sbuf_printf(&b, "%s://%s", u->kind == ZF_URL_HTTPS ? "https" : "http", u->host);
    if (u->port)
        zf_sbuf_printf(&b, ":%u", u->port);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

void zf_url_escape(zf_sbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (is_alnum(*c) || *c == '-' || *c == '.' || *c == '_' || *c == '~' || *c == '/') {
            zf_sbuf_add(b, (const char *)c, 1);
        } else {
            char e[3] = {'%', hex[*c >> 4], hex[*c & 15]};
            zf_sbuf_add(b, e, 3);
        }
    }
}

char *zf_url_object(const char *origin, const char *prefix, const char *key)
{
    zf_sbuf b = {0};
    zf_sbuf_add(&b, origin, strlen(origin));
    zf_sbuf_add(&b, "/", 1);
    zf_url_escape(&b, prefix);
    if (*prefix && *key)
        zf_sbuf_add(&b, "/", 1);
    zf_url_escape(&b, key);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
