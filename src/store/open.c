/* open.c - open any store from its STORE argument and options (open.h). */
#include "store/open.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/http.h"
#include "store/net.h"
#include "store/s3.h"
#include "store/url.h"

/* Google Cloud Storage's public endpoint (gs://BUCKET/PREFIX without -o endpoint=) */
#define GCS_ORIGIN "https://storage.googleapis.com"

static int fail(char *err, size_t errcap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errcap, int rc, const char *fmt, ...)
{
    if (err && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errcap, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* a decimal in [lo, hi] */
static int parse_uint(const char *name, const char *v, unsigned lo, unsigned hi, unsigned *out,
                      char *err, size_t errcap)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || end == v || *end || *v == '-' || *v == '+' || n < lo || n > hi)
        return fail(err, errcap, ZF_EINVAL, "invalid %s (a whole number from %u to %u): %s", name,
                    lo, hi, v);
    *out = (unsigned)n;
    return ZF_OK;
}

/* replace *slot with a copy of v */
static int set_string(char **slot, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return ZF_ENOMEM;
    free(*slot);
    *slot = c;
    return ZF_OK;
}

/* an endpoint must be an http(s) URL */
static int check_endpoint(const char *v, char *err, size_t errcap)
{
    zf_url u;
    char why[160];
    int rc = zf_url_parse(v, &u, why, sizeof why);
    if (rc == ZF_ENOMEM)
        return rc;
    int ok = rc == ZF_OK && (u.kind == ZF_URL_HTTP || u.kind == ZF_URL_HTTPS);
    zf_url_free(&u);
    char shown[256]; /* never the password of a user:password@ */
    zf_url_redact(v, shown, sizeof shown);
    if (!ok)
        return fail(err, errcap, ZF_EINVAL, "invalid endpoint (an http:// or https:// URL)%s%s: %s",
                    rc == ZF_OK ? "" : ": ", rc == ZF_OK ? "" : why, shown);
    return ZF_OK;
}

int zf_store_opt_set(zf_store_opts *o, const char *name, const char *value, char *err,
                     size_t errcap)
{
    int flag = !strcmp(name, "follow_symlinks") || !strcmp(name, "anonymous") ||
               !strcmp(name, "requester_pays");
    int known = flag || !strcmp(name, "connections") || !strcmp(name, "retries") ||
                !strcmp(name, "timeout_ms") || !strcmp(name, "cafile") ||
                !strcmp(name, "endpoint") || !strcmp(name, "region") ||
                !strcmp(name, "bearer_token_file");
    if (!known)
        return ZF_ENOTFOUND;
    if (flag && value)
        return fail(err, errcap, ZF_EINVAL, "%s takes no value", name);
    if (!flag && (!value || !*value))
        return fail(err, errcap, ZF_EINVAL, "%s needs a value (-o %s=...)", name, name);
    if (!strcmp(name, "follow_symlinks"))
        o->follow_symlinks = 1;
    else if (!strcmp(name, "anonymous"))
        o->anonymous = 1;
    else if (!strcmp(name, "requester_pays"))
        o->requester_pays = 1;
    else if (!strcmp(name, "bearer_token_file"))
        return set_string(&o->bearer_token_file, value);
    else if (!strcmp(name, "connections"))
        return parse_uint(name, value, 1, 1024, &o->connections, err, errcap);
    else if (!strcmp(name, "retries"))
        return parse_uint(name, value, 1, 100, &o->retries, err, errcap);
    else if (!strcmp(name, "timeout_ms"))
        return parse_uint(name, value, 1, 3600000, &o->timeout_ms, err, errcap);
    else if (!strcmp(name, "cafile"))
        return set_string(&o->cafile, value);
    else if (!strcmp(name, "region"))
        return set_string(&o->region, value);
    else {
        int rc = check_endpoint(value, err, errcap);
        return rc == ZF_OK ? set_string(&o->endpoint, value) : rc;
    }
    return ZF_OK;
}

void zf_store_opts_free(zf_store_opts *o)
{
    free(o->cafile);
    free(o->endpoint);
    free(o->region);
    free(o->bearer_token_file);
    memset(o, 0, sizeof *o);
}

int zf_store_spec_remote(const char *spec)
{
    return zf_url_has_scheme(spec);
}

/* the remote-only options o gives, comma-separated, into names (capacity
 * cap, may be 0); the first of them, or NULL if none */
static const char *remote_options(const zf_store_opts *o, char *names, size_t cap)
{
    const struct { const char *name; int given; } all[] = {
        {"connections", o->connections != 0}, {"retries", o->retries != 0},
        {"timeout_ms", o->timeout_ms != 0}, {"cafile", o->cafile != NULL},
        {"endpoint", o->endpoint != NULL}, {"region", o->region != NULL},
        {"anonymous", o->anonymous}, {"requester_pays", o->requester_pays},
        {"bearer_token_file", o->bearer_token_file != NULL},
    };
    const char *first = NULL;
    size_t len = 0;
    if (cap)
        *names = '\0';
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        if (!all[i].given)
            continue;
        first = first ? first : all[i].name;
        int n = cap > len ? snprintf(names + len, cap - len, "%s%s", len ? ", " : "", all[i].name) : 0;
        len = n > 0 && (size_t)n < cap - len ? len + (size_t)n : len;
    }
    return first;
}

void zf_store_opts_drop_remote(zf_store_opts *o, char *names, size_t cap)
{
    remote_options(o, names, cap);
    zf_store_opts local = {.follow_symlinks = o->follow_symlinks, .note = o->note}; /* what
        zf_store_open_local takes */
    zf_store_opts_free(o);
    *o = local;
}

/* origin and prefix of a gs:// store: the endpoint's (or GCS's), then the bucket */
static int gs_place(const zf_url *u, const zf_store_opts *o, char **origin, char **prefix)
{
    zf_url e = {0};
    zf_sbuf p = {0};
    int rc = o->endpoint ? zf_url_parse(o->endpoint, &e, NULL, 0) : ZF_OK;
    if (rc != ZF_OK)
        return rc;
    *origin = o->endpoint ? zf_url_origin(&e) : strdup(GCS_ORIGIN);
    if (e.path && *e.path)
        zf_sbuf_printf(&p, "%s/", e.path);
    zf_sbuf_printf(&p, "%s%s%s", u->host, *u->path ? "/" : "", u->path);
    zf_url_free(&e);
    *prefix = p.data;
    if (!*origin || !p.data || p.failed) {
        free(*origin);
        free(p.data);
        return ZF_ENOMEM;
    }
    return ZF_OK;
}

/* http(s):// and gs:// */
static int open_http(const char *spec, const zf_url *u, const zf_store_opts *o, zf_store **out,
                     char *err, size_t errcap)
{
    if (o->region)
        return fail(err, errcap, ZF_EINVAL, "-o region= applies to s3:// stores only");
    if (o->endpoint && u->kind != ZF_URL_GS)
        return fail(err, errcap, ZF_EINVAL, "-o endpoint= applies to s3:// and gs:// stores only");
    if (o->requester_pays)
        return fail(err, errcap, ZF_EINVAL, "-o requester_pays applies to s3:// stores only");
    if (o->bearer_token_file && u->kind != ZF_URL_HTTPS)
        return fail(err, errcap, ZF_EINVAL, "-o bearer_token_file applies to https:// stores only "
                    "(a token never goes over plain http)");
    char *origin = NULL, *prefix = NULL;
    int rc;
    if (u->kind == ZF_URL_GS) {
        rc = gs_place(u, o, &origin, &prefix);
    } else {
        origin = zf_url_origin(u);
        prefix = strdup(u->path);
        rc = origin && prefix ? ZF_OK : ZF_ENOMEM;
    }
    zf_net_opts no = {.connections = o->connections, .retries = o->retries,
                      .timeout_ms = o->timeout_ms, .cafile = o->cafile,
                      .netrc = u->kind == ZF_URL_HTTPS};
    if (rc == ZF_OK)
        rc = zf_store_open_http(origin, prefix, spec, &no, o->bearer_token_file, out, err, errcap);
    free(origin);
    free(prefix);
    return rc;
}

/* s3:// (the S3 backend, store/s3.h): credentials, region and endpoint as
 * the AWS CLI finds them, the options over them */
static int open_s3(const zf_url *u, const zf_store_opts *o, zf_store **out, char *err,
                   size_t errcap)
{
    if (o->bearer_token_file)
        return fail(err, errcap, ZF_EINVAL, "-o bearer_token_file applies to https:// stores only");
    zf_s3_opts so = {.cred = {.region = o->region, .endpoint = o->endpoint,
                              .anonymous = o->anonymous, .cafile = o->cafile, .note = o->note},
                     .net = {.connections = o->connections, .retries = o->retries,
                             .timeout_ms = o->timeout_ms, .cafile = o->cafile},
                     .requester_pays = o->requester_pays};
    return zf_store_open_s3(u->host, u->path, &so, out, err, errcap);
}

int zf_store_open_spec(const char *spec, const zf_store_opts *o, zf_store **out, char *err,
                       size_t errcap)
{
    *out = NULL;
    if (err && errcap)
        *err = '\0';
    zf_url u;
    int rc = zf_url_parse(spec, &u, err, errcap);
    if (rc != ZF_OK)
        return rc;
    const char *remote_only = remote_options(o, NULL, 0);
    if (u.kind == ZF_URL_LOCAL && remote_only)
        rc = fail(err, errcap, ZF_EINVAL, "-o %s applies to remote stores only", remote_only);
    else if (u.kind == ZF_URL_LOCAL)
        rc = zf_store_open_local(u.path, o->follow_symlinks, out);
    else if (o->follow_symlinks)
        rc = fail(err, errcap, ZF_EINVAL, "-o follow_symlinks applies to local stores only");
    else if (u.kind == ZF_URL_S3)
        rc = open_s3(&u, o, out, err, errcap);
    else
        rc = open_http(spec, &u, o, out, err, errcap);
    zf_url_free(&u);
    return rc;
}
