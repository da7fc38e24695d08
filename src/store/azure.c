/* azure.c - the Azure Blob Storage backend (azure.h): reads (Get Blob),
 * stamps (Get Blob Properties), and the store's opening; azauth.c finds
 * the account and signs, azlist.c lists. */
#include "store/azure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/azure_impl.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

static const azure *impl(const zf_store *s)
{
    return s->impl;
}

void zf_azi_reason(const char *net_err, const uint8_t *body, size_t n, char *err, size_t errcap,
                   char *azcode)
{
    char code[64] = "", msg[160] = "";
    if (body && n)
        zf_s3list_error((const char *)body, n, code, sizeof code, msg, sizeof msg);
    msg[strcspn(msg, "?")] = '\0'; /* Azure's messages go on with "RequestId:..." lines */
    if (azcode)
        memcpy(azcode, code, sizeof code);
    if (!err || !errcap)
        return;
    if (*code)
        snprintf(err, errcap, "%s %s: %s", net_err, code, msg);
    else
        snprintf(err, errcap, "%s", net_err);
}

static int az_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                   zf_stamp *st, char *err, size_t errcap)
{
    zf_az_req r;
    int rc = zf_azi_prep(impl(s), "GET", key, NULL, 0, 0, 0, &r);
    if (rc != ZF_OK)
        return rc;
    char nerr[ZF_AZI_ERR] = "";
    zf_net_req nr = {.url = r.url, .headers = r.hdrs, .grow = b, .max = max, .err = nerr,
                     .errcap = sizeof nerr};
    zf_net_run(impl(s)->net, &nr, 1);
    zf_azi_req_free(&r);
    if (nr.rc != ZF_OK) {
        zf_azi_reason(nerr, nr.status >= 300 ? b->p : NULL, nr.n, err, errcap, NULL);
        return nr.rc;
    }
    *n = nr.n;
    zf_stamp_object(st, nr.size_known ? nr.size : nr.n, nr.last_modified_ns, nr.etag);
    return ZF_OK;
}

/* per request of a batch: its signed request and reason buffer */
typedef struct bitem {
    zf_az_req r;
    char nerr[ZF_AZI_ERR];
} bitem;

static int az_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    zf_net_req *nr = calloc(n ? n : 1, sizeof *nr);
    bitem *bi = calloc(n ? n : 1, sizeof *bi);
    size_t *map = calloc(n ? n : 1, sizeof *map), k = 0;
    int rc = nr && bi && map ? ZF_OK : ZF_ENOMEM;
    for (size_t i = 0; rc == ZF_OK && i < n; i++) {
        zf_store_req *q = &reqs[i];
        q->rc = ZF_OK;
        if (!q->len)
            continue;
        q->rc = zf_azi_prep(impl(s), "GET", q->key, NULL, 0, q->off, q->len, &bi[k].r);
        if (q->rc != ZF_OK)
            continue;
        nr[k] = (zf_net_req){.url = bi[k].r.url, .headers = bi[k].r.hdrs, .off = q->off,
                             .len = q->len, .buf = q->buf, .cap = q->len, .err = bi[k].nerr,
                             .errcap = sizeof bi[k].nerr};
        map[k++] = i;
    }
    if (k)
        zf_net_run(impl(s)->net, nr, k);
    for (size_t j = 0; j < k; j++) {
        zf_store_req *q = &reqs[map[j]];
        q->rc = nr[j].rc;
        if (q->rc != ZF_OK)
            zf_azi_reason(bi[j].nerr, nr[j].status >= 300 ? q->buf : NULL, nr[j].n, q->err,
                          q->errcap, NULL);
        zf_azi_req_free(&bi[j].r);
    }
    free(nr);
    free(bi);
    free(map);
    for (size_t i = 0; rc == ZF_OK && i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return rc;
}

/* the container-wide prefix of a key as a directory (malloc'd) */
static char *dir_prefix(const azure *a, const char *key)
{
    size_t n = strlen(a->prefix) + strlen(key) + 2;
    char *f = malloc(n);
    if (f)
        snprintf(f, n, "%s%s/", a->prefix, key);
    return f;
}

static int az_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    const azure *a = impl(s);
    *st = (zf_stamp){0};
    if (!*key) {
        st->kind = ZF_STORE_DIR;
        return ZF_OK;
    }
    zf_az_req r;
    int rc = zf_azi_prep(a, "HEAD", key, NULL, 0, 0, 0, &r);
    if (rc != ZF_OK)
        return rc;
    zf_net_req nr = {.url = r.url, .headers = r.hdrs, .head = 1, .err = err, .errcap = errcap};
    zf_net_run(a->net, &nr, 1);
    zf_azi_req_free(&r);
    if (nr.rc == ZF_OK)
        zf_stamp_object(st, nr.size, nr.last_modified_ns, nr.etag);
    if (nr.rc != ZF_ENOTFOUND || !a->can_list)
        return nr.rc;
    char *full = dir_prefix(a, key);
    rc = full ? zf_azi_any(a, full, err, errcap, NULL) : ZF_ENOMEM;
    free(full);
    if (rc == ZF_OK) {
        st->kind = ZF_STORE_DIR;
        if (err && errcap)
            *err = '\0';
    }
    return rc;
}

static void az_close(zf_store *s)
{
    azure *a = s->impl;
    if (!a)
        return;
    zf_net_close(a->net);
    zf_azi_conf_free(&a->conf);
    free(a->container);
    free(a->prefix);
    free(a);
}

/* the credentials' source, or anonymous */
static void az_credentials(const zf_store *s, char *out, size_t cap)
{
    snprintf(out, cap, "%s", impl(s)->conf.source);
}

static const zf_store_ops az_ops = {.close = az_close, .read = az_read, .read_many = az_read_many,
                                    .stamp = az_stamp, .list = zf_azi_list};

/* a container name as Azure allows: 3 to 63 lower-case letters, digits, '-' */
static int container_ok(const char *c)
{
    size_t n = strlen(c);
    for (size_t i = 0; i < n; i++)
        if (!((c[i] >= 'a' && c[i] <= 'z') || (c[i] >= '0' && c[i] <= '9') || c[i] == '-'))
            return 0;
    return (n >= 3 && n <= 63) || !strcmp(c, "$root") || !strcmp(c, "$web");
}

static int az_new(const char *container, const char *prefix, const zf_az_opts *o, azure *a,
                  char *err, size_t errcap)
{
    a->can_list = 1;
    if (!container_ok(container))
        return ERR(ZF_EINVAL, "container name %s: 3 to 63 lower-case letters, digits and '-'",
                   container);
    int rc = zf_store_page_size(o->max_results, "ZF_AZ_MAX_RESULTS", ZF_AZ_MAX_RESULTS,
                                &a->max_results, err, errcap);
    if (rc == ZF_OK)
        rc = zf_azi_conf_load(o, &a->conf, err, errcap);
    while (*prefix == '/')
        prefix++;
    size_t n = strlen(prefix);
    while (n && prefix[n - 1] == '/')
        n--;
    if (rc == ZF_OK && (!(a->container = strdup(container)) || !(a->prefix = malloc(n + 2))))
        rc = ZF_ENOMEM;
    if (rc == ZF_OK)
        snprintf(a->prefix, n + 2, "%.*s%s", (int)n, prefix, n ? "/" : "");
    if (rc == ZF_OK)
        rc = zf_net_open(&o->net, &a->net, err, errcap);
    if (rc == ZF_OK && o->note) {
        char line[240];
        snprintf(line, sizeof line, "credentials: %s%s", a->conf.auth ? "from " : "", a->conf.source);
        o->note(ZF_LOG_INFO, line);
    }
    return rc;
}

/* can any root metadata document be read?  For a container whose listing is refused */
static int root_readable(const azure *a)
{
    static const char *const keys[] = {"zarr.json", ".zmetadata", ".zgroup", ".zarray"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        zf_az_req r;
        if (zf_azi_prep(a, "HEAD", keys[i], NULL, 0, 0, 0, &r) != ZF_OK)
            continue;
        zf_net_req nr = {.url = r.url, .headers = r.hdrs, .head = 1};
        zf_net_run(a->net, &nr, 1);
        zf_azi_req_free(&r);
        if (nr.rc == ZF_OK)
            return 1;
    }
    return 0;
}

/* the first listing: credentials, container and prefix checked at once */
static int probe(azure *a, char *err, size_t errcap)
{
    char why[ZF_AZI_ERR + 160] = "", code[64] = "";
    int rc = zf_azi_any(a, a->prefix, why, sizeof why, code);
    if (rc == ZF_ENOTFOUND && *code)
        rc = ERR(ZF_ENOTFOUND, "%s", why); /* ContainerNotFound */
    else if (rc == ZF_ENOTFOUND)
        rc = ERR(ZF_ENOTFOUND, "no blobs under this prefix");
    else if (rc != ZF_OK && (!strcmp(code, "AuthorizationPermissionMismatch") ||
                             !strcmp(code, "NoAuthenticationInformation") ||
                             !strcmp(code, "ResourceNotFound")) && root_readable(a))
        a->can_list = 0, rc = ZF_OK; /* read blob by blob, from the root's metadata */
    else if (rc != ZF_OK)
        rc = ERR(rc, "%s (credentials: %s)", why, a->conf.source);
    return rc;
}

int zf_store_open_azure(const char *container, const char *prefix, const zf_az_opts *o,
                        zf_store **out, char *err, size_t errcap)
{
    *out = NULL;
    zf_store *s = calloc(1, sizeof *s);
    azure *a = calloc(1, sizeof *a);
    if (!s || !a) {
        free(s);
        free(a);
        return ZF_ENOMEM;
    }
    s->ops = &az_ops;
    s->impl = a;
    int rc = az_new(container, prefix, o, a, err, errcap);
    if (rc == ZF_OK) {
        size_t n = strlen(container) + strlen(a->prefix) + 8, plen = strlen(a->prefix);
        if ((s->name = malloc(n)))
            snprintf(s->name, n, "az://%s/%.*s", container, (int)(plen ? plen - 1 : 0), a->prefix);
        rc = s->name ? probe(a, err, errcap) : ZF_ENOMEM;
    }
    if (rc != ZF_OK) {
        zf_store_close(s);
        return rc;
    }
    s->parallel = zf_net_connections(a->net);
    s->budget_ms = zf_net_budget_ms(a->net);
    s->remote = 1;
    s->credentials = az_credentials;
    *out = s;
    return ZF_OK;
}
