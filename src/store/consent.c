/* consent.c - the outside locations a store may read (consent.h). */
#include "store/consent.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "base/vec.h"
#include "store/url.h"

/* Longest canonical prefix or URL compared. */
#define CONSENT_MAX 4096

struct zf_consent {
    zf_strv prefixes; /* canonical */
};

/* the canonical scheme of s (n bytes), or NULL if not one consent knows */
static const char *known_scheme(const char *s, size_t n)
{
    static const char *const names[][2] = {
        {"file", "file"}, {"http", "http"}, {"https", "https"}, {"s3", "s3"}, {"s3a", "s3"},
        {"gs", "gs"},     {"gcs", "gs"},    {"az", "az"},       {"abfs", "az"}, {"abfss", "az"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i][0]) == n && strncasecmp(s, names[i][0], n) == 0)
            return names[i][1];
    return NULL;
}


/* is the segment s (n bytes) "." or "..", also %-encoded?  -1 if it holds a
 * '%' that starts no valid escape */
static int dot_segment(const char *s, size_t n)
{
    size_t dots = 0, chars = 0;
    for (size_t i = 0; i < n; i++, chars++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            if ((c = zf_url_unescape_at(s, n, i)) < 0)
                return -1;
            i += 2;
        }
        dots += c == '.';
    }
    return chars > 0 && chars <= 2 && dots == chars;
}

/* check the path p (n bytes, starting with '/' or empty): no dot segments,
 * and (where the scheme %-decodes paths: escapes) no bad escapes */
static int check_path(const char *p, size_t n, int escapes, char *err, size_t errcap)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && p[j] != '/')
            j++;
        const char *seg = p + i + 1;
        size_t sn = j - i - 1;
        int d = dot_segment(seg, sn);
        if (d < 0 && escapes)
            return zf_errf(err, errcap, ZF_EINVAL, "a bad %%-escape in the path");
        if (d > 0 || ((sn == 1 || sn == 2) && strncmp(seg, "..", sn) == 0))
            return zf_errf(err, errcap, ZF_EINVAL, "a \".\" or \"..\" segment in the path");
        i = j;
    }
    return ZF_OK;
}

/* the authority a (n bytes) of an http(s) URL, canonical, appended at out[*len] */
static int put_http_authority(const char *scheme, const char *a, size_t n, char *out, size_t cap,
                              size_t *len, char *err, size_t errcap)
{
    size_t hostlen = n;
    const char *port = NULL;
    if (n && a[0] == '[') { /* [IPv6] */
        const char *close = memchr(a, ']', n);
        if (!close)
            return zf_errf(err, errcap, ZF_EINVAL, "an unclosed IPv6 address");
        hostlen = (size_t)(close - a) + 1;
        if (hostlen < n && a[hostlen] != ':')
            return zf_errf(err, errcap, ZF_EINVAL, "a bad host");
    } else {
        const char *colon = memchr(a, ':', n);
        if (colon)
            hostlen = (size_t)(colon - a);
    }
    if (hostlen < n)
        port = a + hostlen + 1;
    if (hostlen == 0)
        return zf_errf(err, errcap, ZF_EINVAL, "no host");
    unsigned long pv = 0;
    if (port) {
        size_t plen = n - hostlen - 1;
        if (plen == 0 || plen > 5)
            return zf_errf(err, errcap, ZF_EINVAL, "a bad port");
        for (size_t i = 0; i < plen; i++) {
            if (port[i] < '0' || port[i] > '9')
                return zf_errf(err, errcap, ZF_EINVAL, "a bad port");
            pv = pv * 10 + (unsigned long)(port[i] - '0');
        }
        if (pv == 0 || pv > 65535)
            return zf_errf(err, errcap, ZF_EINVAL, "a bad port");
        if ((pv == 80 && strcmp(scheme, "http") == 0) || (pv == 443 && strcmp(scheme, "https") == 0))
            pv = 0; /* the scheme's own port */
    }
    if (*len + hostlen + 8 >= cap)
        return ZF_ENOMEM;
    for (size_t i = 0; i < hostlen; i++)
        out[(*len)++] = (char)tolower((unsigned char)a[i]);
    if (pv)
        *len += (size_t)snprintf(out + *len, cap - *len, ":%lu", pv);
    return ZF_OK;
}

int zf_consent_canonical(const char *url, char *out, size_t cap, char *err, size_t errcap)
{
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return zf_errf(err, errcap, ZF_EINVAL, "a control character");
    const char *scheme, *rest;
    if (url[0] == '/') {
        scheme = "file";
        rest = url; /* a bare absolute path: empty authority */
    } else {
        const char *sep = strstr(url, "://");
        scheme = sep ? known_scheme(url, (size_t)(sep - url)) : NULL;
        if (!scheme)
            return zf_errf(err, errcap, ZF_EINVAL, "not a file:, http(s):, s3:, gs: or az: URL or an absolute path");
        rest = sep + 3;
    }
    if (strchr(rest, '#'))
        return zf_errf(err, errcap, ZF_EINVAL, "a fragment");
    size_t alen = strcspn(rest, "/?");
    const char *path = rest + alen;
    size_t plen = strcspn(path, "?"); /* the query is not compared */
    if (memchr(rest, '@', alen))
        return zf_errf(err, errcap, ZF_EINVAL, "user information");
    if (path[0] == '?')
        plen = 0;
    size_t len = (size_t)snprintf(out, cap, "%s://", scheme);
    if (len >= cap)
        return ZF_ENOMEM;
    if (strcmp(scheme, "file") == 0) {
        if (alen && !(alen == 9 && strncasecmp(rest, "localhost", 9) == 0))
            return zf_errf(err, errcap, ZF_EINVAL, "a file: URL with a host");
        if (path[0] != '/')
            return zf_errf(err, errcap, ZF_EINVAL, "a file: URL without an absolute path");
    } else if (strncmp(scheme, "http", 4) == 0) {
        int rc = put_http_authority(scheme, rest, alen, out, cap, &len, err, errcap);
        if (rc)
            return rc;
    } else {
        if (alen == 0)
            return zf_errf(err, errcap, ZF_EINVAL, "no bucket or container");
        if (len + alen >= cap)
            return ZF_ENOMEM;
        memcpy(out + len, rest, alen);
        len += alen;
    }
    int escapes = strcmp(scheme, "file") == 0 || strncmp(scheme, "http", 4) == 0;
    int rc = check_path(path, plen, escapes, err, errcap);
    if (rc)
        return rc;
    if (len + plen >= cap)
        return ZF_ENOMEM;
    memcpy(out + len, path, plen);
    out[len + plen] = '\0';
    return ZF_OK;
}

zf_consent *zf_consent_new(void)
{
    return calloc(1, sizeof(zf_consent));
}

void zf_consent_free(zf_consent *c)
{
    if (!c)
        return;
    zf_strv_free(&c->prefixes);
    free(c);
}

int zf_consent_add(zf_consent *c, const char *prefix, char *err, size_t errcap)
{
    char canon[CONSENT_MAX];
    int rc = zf_consent_canonical(prefix, canon, sizeof canon, err, errcap);
    if (rc == ZF_ENOMEM)
        return zf_errf(err, errcap, ZF_EINVAL, "longer than %d bytes", CONSENT_MAX - 1);
    if (rc)
        return rc;
    return zf_strv_add(&c->prefixes, canon, strlen(canon));
}

int zf_consent_add_list(zf_consent *c, const char *list, char *err, size_t errcap)
{
    char item[CONSENT_MAX];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n >= sizeof item)
            return zf_errf(err, errcap, ZF_EINVAL, "a prefix longer than %d bytes", CONSENT_MAX - 1);
        memcpy(item, p, n);
        item[n] = '\0';
        if (n) {
            int rc = zf_consent_add(c, item, err, errcap);
            if (rc)
                return rc;
        }
        p += n + (p[n] == ',');
    }
    return ZF_OK;
}

int zf_consent_allows(const zf_consent *c, const char *url)
{
    char canon[CONSENT_MAX];
    if (!c || zf_consent_canonical(url, canon, sizeof canon, NULL, 0) != ZF_OK)
        return 0;
    const zf_strv *p = &c->prefixes;
    for (size_t i = 0; i < p->n; i++) {
        size_t n = strlen(p->v[i]);
        if (strncmp(canon, p->v[i], n) == 0 &&
            (n && (p->v[i][n - 1] == '/' || canon[n] == '\0' || canon[n] == '/')))
            return 1;
    }
    return 0;
}

size_t zf_consent_count(const zf_consent *c)
{
    return c ? c->prefixes.n : 0;
}

const char *zf_consent_prefix(const zf_consent *c, size_t i)
{
    return c && i < c->prefixes.n ? c->prefixes.v[i] : NULL;
}

int zf_consent_container(const char *url, char *out, size_t cap)
{
    int rc = zf_consent_canonical(url, out, cap, NULL, 0);
    if (rc)
        return rc;
    char *auth = strstr(out, "://") + 3;
    char *cut;
    if (strncmp(out, "file:", 5) == 0)
        cut = strrchr(auth, '/'); /* the directory holding the file */
    else
        cut = strchr(auth, '/'); /* the bucket, container or host */
    if (cut) {
        cut[1] = '\0';
    } else {
        size_t n = strlen(out);
        if (n + 1 >= cap)
            return ZF_ENOMEM;
        out[n] = '/';
        out[n + 1] = '\0';
    }
    return ZF_OK;
}
