/* open.c - open any store from its STORE argument and options (open.h). */
#include "store/open.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/azure.h"
#include "store/gcs.h"
#include "store/http.h"
#include "store/icechunk.h"
#include "store/kerchunk.h"
#include "store/net.h"
#include "store/s3.h"
#include "store/url.h"

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

/* the string option of a repository called name, or NULL */
static char **repo_option(zf_store_opts *o, const char *name)
{
    return !strcmp(name, "branch") ? &o->branch : !strcmp(name, "tag") ? &o->tag
           : !strcmp(name, "snapshot") ? &o->snapshot : !strcmp(name, "virtual") ? &o->virtual_ok
           : NULL;
}

int zf_store_opt_set(zf_store_opts *o, const char *name, const char *value, char *err,
                     size_t errcap)
{
    char **repo = repo_option(o, name);
    if (repo && (!value || !*value))
        return fail(err, errcap, ZF_EINVAL, "%s needs a value (-o %s=...)", name, name);
    if (repo)
        return set_string(repo, value);
    int flag = !strcmp(name, "follow_symlinks") || !strcmp(name, "anonymous") ||
               !strcmp(name, "requester_pays");
    int known = flag || !strcmp(name, "connections") || !strcmp(name, "retries") ||
                !strcmp(name, "timeout_ms") || !strcmp(name, "cafile") ||
                !strcmp(name, "endpoint") || !strcmp(name, "region") ||
                !strcmp(name, "bearer_token_file") || !strcmp(name, "account");
    if (!known)
        return ZF_ENOTFOUND;
    if (!strcmp(name, "requester_pays") && value) /* gs://: the project billed */
        return set_string(&o->user_project, value);
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
    else if (!strcmp(name, "account"))
        return set_string(&o->account, value);
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
    free(o->branch);
    free(o->tag);
    free(o->snapshot);
    free(o->virtual_ok);
    free(o->bearer_token_file);
    free(o->user_project);
    free(o->account);
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
        {"anonymous", o->anonymous}, {"requester_pays", o->requester_pays || o->user_project},
        {"bearer_token_file", o->bearer_token_file != NULL}, {"account", o->account != NULL},
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
    if (cap)
        *names = '\0';
    if (o->virtual_ok) /* a repository's virtual chunks may be remote: they apply */
        return;
    remote_options(o, names, cap);
    char **strings[] = {&o->cafile, &o->endpoint, &o->region, &o->user_project, &o->account,
                        &o->bearer_token_file};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++) {
        free(*strings[i]);
        *strings[i] = NULL;
    }
    o->connections = o->retries = o->timeout_ms = 0;
    o->anonymous = o->requester_pays = 0;
}

/* http(s):// */
static int open_http(const char *spec, const zf_url *u, const zf_store_opts *o, zf_store **out,
                     char *err, size_t errcap)
{
    if (o->region)
        return fail(err, errcap, ZF_EINVAL, "-o region= applies to s3:// stores only");
    if (o->endpoint)
        return fail(err, errcap, ZF_EINVAL, "-o endpoint= applies to s3://, gs:// and az:// "
                    "stores only");
    if (o->requester_pays || o->user_project)
        return fail(err, errcap, ZF_EINVAL, "-o requester_pays applies to s3:// and gs:// "
                    "stores only");
    if (o->bearer_token_file && u->kind != ZF_URL_HTTPS)
        return fail(err, errcap, ZF_EINVAL, "-o bearer_token_file applies to https:// stores only "
                    "(a token never goes over plain http)");
    char *origin = zf_url_origin(u), *prefix = strdup(u->path);
    int rc = origin && prefix ? ZF_OK : ZF_ENOMEM;
    zf_net_opts no = {.connections = o->connections, .retries = o->retries,
                      .timeout_ms = o->timeout_ms, .cafile = o->cafile,
                      .netrc = u->kind == ZF_URL_HTTPS};
    if (rc == ZF_OK)
        rc = zf_store_open_http(origin, prefix, spec, &no, o->bearer_token_file, out, err, errcap);
    free(origin);
    free(prefix);
    return rc;
}

/* gs:// (the GCS backend, store/gcs.h): Application Default Credentials,
 * or anonymous */
static int open_gcs(const zf_url *u, const zf_store_opts *o, zf_store **out, char *err,
                    size_t errcap)
{
    if (o->region)
        return fail(err, errcap, ZF_EINVAL, "-o region= applies to s3:// stores only");
    if (o->bearer_token_file)
        return fail(err, errcap, ZF_EINVAL, "-o bearer_token_file applies to https:// stores only");
    if (o->requester_pays && !o->user_project)
        return fail(err, errcap, ZF_EINVAL, "-o requester_pays=PROJECT: a gs:// store needs the "
                    "project billed for its requests");
    zf_gcs_opts go = {.endpoint = o->endpoint, .anonymous = o->anonymous,
                      .user_project = o->user_project, .note = o->note,
                      .net = {.connections = o->connections, .retries = o->retries,
                              .timeout_ms = o->timeout_ms, .cafile = o->cafile}};
    return zf_store_open_gcs(u->host, u->path, &go, out, err, errcap);
}

/* az:// (the Azure Blob backend, store/azure.h) */
static int open_azure(const zf_url *u, const zf_store_opts *o, zf_store **out, char *err,
                      size_t errcap)
{
    const char *bad = o->region ? "region=" : o->bearer_token_file ? "bearer_token_file"
                      : o->requester_pays || o->user_project ? "requester_pays" : NULL;
    if (bad)
        return fail(err, errcap, ZF_EINVAL, "-o %s does not apply to az:// stores", bad);
    zf_az_opts ao = {.account = o->account, .endpoint = o->endpoint, .anonymous = o->anonymous,
                     .note = o->note,
                     .net = {.connections = o->connections, .retries = o->retries,
                             .timeout_ms = o->timeout_ms, .cafile = o->cafile}};
    return zf_store_open_azure(u->host, u->path, &ao, out, err, errcap);
}

/* s3:// (the S3 backend, store/s3.h): credentials, region and endpoint as
 * the AWS CLI finds them, the options over them */
static int open_s3(const zf_url *u, const zf_store_opts *o, int objects_only, zf_store **out,
                   char *err, size_t errcap)
{
    if (o->bearer_token_file)
        return fail(err, errcap, ZF_EINVAL, "-o bearer_token_file applies to https:// stores only");
    if (o->user_project)
        return fail(err, errcap, ZF_EINVAL, "-o requester_pays takes no value for an s3:// store");
    zf_s3_opts so = {.cred = {.region = o->region, .endpoint = o->endpoint,
                              .anonymous = o->anonymous, .cafile = o->cafile, .note = o->note},
                     .net = {.connections = o->connections, .retries = o->retries,
                             .timeout_ms = o->timeout_ms, .cafile = o->cafile},
                     .objects_only = objects_only, .requester_pays = o->requester_pays};
    return zf_store_open_s3(u->host, u->path, &so, out, err, errcap);
}

/* the store spec names, as it is (no repository recognised); target: a
 * virtual chunk target's root (an s3 bucket read by key alone; the mount's
 * remote options do not concern a local one) */
static int open_plain(const char *spec, const zf_store_opts *o, int target, zf_store **out,
                      char *err, size_t errcap)
{
    zf_url u;
    int rc = zf_url_parse(spec, &u, err, errcap);
    if (rc != ZF_OK)
        return rc;
    /* remote options apply to a local repository's remote virtual chunks too */
    const char *remote_only = o->virtual_ok || target ? NULL : remote_options(o, NULL, 0);
    if (u.kind == ZF_URL_LOCAL && remote_only)
        rc = fail(err, errcap, ZF_EINVAL, "-o %s applies to remote stores only", remote_only);
    else if (u.kind == ZF_URL_LOCAL)
        rc = zf_store_open_local(u.path, o->follow_symlinks, out);
    else if (o->follow_symlinks)
        rc = fail(err, errcap, ZF_EINVAL, "-o follow_symlinks applies to local stores only");
    else if (u.kind == ZF_URL_S3)
        rc = open_s3(&u, o, target, out, err, errcap);
    else if (u.kind == ZF_URL_GS)
        rc = open_gcs(&u, o, out, err, errcap);
    else if (u.kind == ZF_URL_AZ)
        rc = open_azure(&u, o, out, err, errcap);
    else if (o->account)
        rc = fail(err, errcap, ZF_EINVAL, "-o account= applies to az:// stores only");
    else
        rc = open_http(spec, &u, o, out, err, errcap);
    zf_url_free(&u);
    return rc;
}

/* the opener of a repository's virtual chunk targets: the mount's remote
 * options (target_opts: no symlinks followed out of a local root), no
 * repository probe */
static int open_target(void *ctx, const char *spec, zf_store **out, char *err, size_t errcap)
{
    return open_plain(spec, ctx, 1, out, err, errcap);
}

/* a copy of o's remote options, for open_target (freed by free_target_ctx) */
static zf_store_opts *target_opts(const zf_store_opts *o)
{
    zf_store_opts *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    /* not the bearer token: it is the repository server's, never another's */
    *c = (zf_store_opts){.connections = o->connections, .retries = o->retries,
                         .timeout_ms = o->timeout_ms, .anonymous = o->anonymous,
                         .requester_pays = o->requester_pays, .note = o->note};
    if ((o->cafile && !(c->cafile = strdup(o->cafile))) ||
        (o->endpoint && !(c->endpoint = strdup(o->endpoint))) ||
        (o->region && !(c->region = strdup(o->region))) ||
        (o->user_project && !(c->user_project = strdup(o->user_project))) ||
        (o->account && !(c->account = strdup(o->account)))) {
        zf_store_opts_free(c);
        free(c);
        return NULL;
    }
    return c;
}

static void free_target_ctx(void *ctx)
{
    zf_store_opts_free(ctx);
    free(ctx);
}

/* raw (taken) as the repository it holds, at the snapshot o selects */
static int open_repository(zf_store *raw, int layout, const zf_store_opts *o, zf_store **out,
                           char *err, size_t errcap)
{
    zf_store_opts *ctx = target_opts(o);
    if (!ctx) {
        zf_store_close(raw);
        return ZF_ENOMEM;
    }
    zf_icechunk_opts io = {.branch = o->branch, .tag = o->tag, .snapshot = o->snapshot,
                           .virtual_ok = o->virtual_ok, .cache_bytes = o->cache_bytes,
                           .open_target = open_target, .open_ctx = ctx,
                           .free_ctx = free_target_ctx};
    return zf_store_open_icechunk(raw, layout, &io, out, err, errcap);
}

/* the kerchunk reference document spec names (a local file, or a remote
 * one's URL), its targets read with the mount's remote options */
static int open_reference_set(const char *spec, const zf_store_opts *o, zf_store **out,
                              char *err, size_t errcap)
{
    if (o->branch || o->tag || o->snapshot)
        return fail(err, errcap, ZF_EINVAL, "-o %s applies to Icechunk repositories only",
                    o->branch ? "branch=" : o->tag ? "tag=" : "snapshot=");
    char url[PATH_MAX + 4096];
    if (zf_store_spec_remote(spec))
        snprintf(url, sizeof url, "%s", spec);
    else if (!realpath(spec, url))
        return fail(err, errcap, ZF_EIO, "%s", strerror(errno));
    char *slash = strrchr(url, '/'), *dir = strndup(url, (size_t)(slash - url));
    zf_store_opts *ctx = target_opts(o);
    zf_store *raw = NULL;
    int rc = dir && ctx ? open_plain(*dir ? dir : "/", o, 1, &raw, err, errcap) : ZF_ENOMEM;
    zf_kerchunk_opts ko = {.virtual_ok = o->virtual_ok, .open_target = open_target,
                           .open_ctx = ctx, .free_ctx = free_target_ctx};
    if (rc == ZF_OK)
        rc = zf_store_open_kerchunk(raw, slash + 1, url, &ko, out, err, errcap); /* takes raw, ctx */
    else if (ctx)
        free_target_ctx(ctx);
    free(dir);
    return rc;
}

int zf_store_open_spec(const char *spec, const zf_store_opts *o, zf_store **out, char *err,
                       size_t errcap)
{
    *out = NULL;
    if (err && errcap)
        *err = '\0';
    if (zf_kerchunk_spec(spec))
        return open_reference_set(spec, o, out, err, errcap);
    zf_store *raw;
    int rc = open_plain(spec, o, 0, &raw, err, errcap), layout;
    if (rc != ZF_OK)
        return rc;
    if (!raw->remote && zf_kerchunk_parquet(raw, err, errcap)) {
        zf_store_close(raw);
        return ZF_EUNSUPPORTED;
    }
    int repo_opts = o->branch || o->tag || o->snapshot || o->virtual_ok;
    char why[256] = "";
    rc = zf_icechunk_probe(raw, &layout, why, sizeof why);
    if (rc == ZF_OK)
        return open_repository(raw, layout, o, out, err, errcap);
    if (repo_opts) { /* asked for a repository: say why this is none */
        zf_store_close(raw);
        return fail(err, errcap, ZF_EINVAL, "-o %s applies to Icechunk repositories only, and %s",
                    o->branch ? "branch=" : o->tag ? "tag=" : o->snapshot ? "snapshot=" : "virtual=",
                    rc == ZF_ENOTFOUND ? "this has no repo file or refs/branch.main/ref.json" : why);
    }
    *out = raw; /* a plain store (or one that could not say: its own reads will tell) */
    return ZF_OK;
}
