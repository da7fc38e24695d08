/* consolidated.c - split a consolidated metadata document into per-node spans. */
#include "zarr/consolidated.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "base/vec.h"

#define ZF_CONS_DEPTH 64 /* deepest nesting of group entries followed (v3) */

typedef struct entry {
    zf_cons_node node;
    size_t seq; /* order of appearance: the first description of a path wins */
} entry;

struct zf_cons {
    char *text;     /* the whole document; every span points into it */
    size_t len;
    char *root;     /* v3: text with the consolidated metadata nulled out */
    size_t root_len;
    const char *key;
    zf_stamp stamp;
    entry *entries; /* sorted by path after loading */
    size_t count, cap;
    int v2_root_group; /* v2: the metadata holds the root's .zgroup */
    const char *v2_root_attrs; /* v2: the root's .zattrs span, or NULL */
    size_t v2_root_attrs_len;
};

typedef struct load_ctx {
    zf_cons *c;
    const char *prefix; /* v3: path of the group whose members these are */
    int depth;
} load_ctx;

/* append an entry for path (copied, leading '/' dropped); NULL on allocation failure */
static zf_cons_node *append(zf_cons *c, const char *prefix, const char *path, size_t path_len)
{
    for (; path_len && *path == '/'; path_len--)
        path++;
    if (zf_grow(&c->entries, &c->cap, c->count, sizeof *c->entries, 32))
        return NULL;
    size_t plen = strlen(prefix), n = plen + (plen ? 1 : 0) + path_len;
    char *full = malloc(n + 1);
    if (!full)
        return NULL;
    snprintf(full, n + 1, "%s%s%.*s", prefix, plen ? "/" : "", (int)path_len, path);
    entry *e = &c->entries[c->count];
    memset(e, 0, sizeof *e);
    e->seq = c->count++;
    e->node.path = full;
    e->node.order = e->seq;
    return &e->node;
}

/* is the raw span exactly the literal lit? */
static int span_is(const char *val, size_t vlen, const char *lit)
{
    return vlen == strlen(lit) && !memcmp(val, lit, vlen);
}

/* the "metadata" object of an inline consolidated_metadata value in doc (the
 * whole value in *cm); ZF_ENOTFOUND if doc has none (absent or null) */
static int inline_metadata(const char *doc, size_t n, const char **cm, size_t *cmlen,
                           const char **meta, size_t *mlen, char *err, size_t errcap)
{
    const char *kind;
    size_t klen;
    int rc = zf_json_raw_member(doc, n, "consolidated_metadata", cm, cmlen);
    if (rc == ZF_ENOTFOUND || (rc == ZF_OK && span_is(*cm, *cmlen, "null")))
        return ZF_ENOTFOUND;
    if (rc == ZF_OK && (rc = zf_json_raw_member(*cm, *cmlen, "kind", &kind, &klen)) == ZF_OK &&
        !span_is(kind, klen, "\"inline\"")) {
        snprintf(err, errcap, "consolidated metadata of kind %.*s is not supported",
                 (int)(klen < 40 ? klen : 40), kind);
        return ZF_EUNSUPPORTED;
    }
    if (rc == ZF_OK)
        rc = zf_json_raw_member(*cm, *cmlen, "metadata", meta, mlen);
    if (rc == ZF_OK && (*mlen == 0 || **meta != '{'))
        rc = ZF_ECORRUPT;
    if (rc)
        snprintf(err, errcap, "\"consolidated_metadata\" has no \"kind\" and \"metadata\" object");
    return rc ? ZF_ECORRUPT : ZF_OK;
}

static int v3_member(void *arg, const char *key, const char *val, size_t vlen);

/* add the members of a v3 inline "metadata" object, paths under prefix */
static int load_v3_members(zf_cons *c, const char *prefix, int depth, const char *meta, size_t n)
{
    load_ctx ctx = {c, prefix, depth};
    return zf_json_raw_members(meta, n, v3_member, &ctx);
}

static int v3_member(void *arg, const char *key, const char *val, size_t vlen)
{
    load_ctx *ctx = arg;
    zf_cons_node *node = append(ctx->c, ctx->prefix, key, strlen(key));
    if (!node)
        return ZF_ENOMEM;
    node->zarr_format = 3;
    node->doc = val;
    node->doc_len = vlen;
    static const char cm_key[] = "\"consolidated_metadata\"";
    const char *nt, *cm, *meta;
    size_t ntlen, cmlen, mlen;
    char ignored[8];
    if (ctx->depth < ZF_CONS_DEPTH && memmem(val, vlen, cm_key, sizeof cm_key - 1) &&
        zf_json_raw_member(val, vlen, "node_type", &nt, &ntlen) == ZF_OK &&
        span_is(nt, ntlen, "\"group\"") &&
        inline_metadata(val, vlen, &cm, &cmlen, &meta, &mlen, ignored, sizeof ignored) == ZF_OK)
        return load_v3_members(ctx->c, node->path, ctx->depth + 1, meta, mlen);
    return ZF_OK;
}

static int v2_member(void *arg, const char *key, const char *val, size_t vlen)
{
    load_ctx *ctx = arg;
    const char *slash = strrchr(key, '/'), *base = slash ? slash + 1 : key;
    int doc = !strcmp(base, ".zarray") || !strcmp(base, ".zgroup");
    if (!strcmp(key, ".zgroup"))
        ctx->c->v2_root_group = 1;
    if (!strcmp(key, ".zattrs")) {
        ctx->c->v2_root_attrs = val;
        ctx->c->v2_root_attrs_len = vlen;
    }
    if (!slash || (!doc && strcmp(base, ".zattrs")))
        return ZF_OK; /* the root's documents are read from disk; others are not metadata */
    zf_cons_node *node = append(ctx->c, "", key, (size_t)(slash - key));
    if (!node)
        return ZF_ENOMEM;
    node->zarr_format = 2;
    if (doc) {
        node->doc = val;
        node->doc_len = vlen;
        node->v2_group = !strcmp(base, ".zgroup");
    } else {
        node->attrs = val;
        node->attrs_len = vlen;
    }
    return ZF_OK;
}

/* c->root: the root document with the consolidated_metadata value (val) nulled */
static int strip_root(zf_cons *c, const char *val, size_t vlen)
{
    size_t head = (size_t)(val - c->text), tail = c->len - head - vlen;
    if (!(c->root = malloc(head + 4 + tail)))
        return ZF_ENOMEM;
    memcpy(c->root, c->text, head);
    memcpy(c->root + head, "null", 4);
    memcpy(c->root + head + 4, val + vlen, tail);
    c->root_len = head + 4 + tail;
    return ZF_OK;
}

static int load_v3(zf_cons *c, char *err, size_t errcap)
{
    const char *cm, *meta;
    size_t cmlen, mlen;
    int rc = inline_metadata(c->text, c->len, &cm, &cmlen, &meta, &mlen, err, errcap);
    if (rc == ZF_OK && (rc = load_v3_members(c, "", 0, meta, mlen)) == ZF_ECORRUPT)
        snprintf(err, errcap, "consolidated metadata is not well-formed JSON");
    return rc ? rc : strip_root(c, cm, cmlen);
}

static int load_v2(zf_cons *c, char *err, size_t errcap)
{
    const char *meta;
    size_t mlen;
    int64_t version;
    if (zf_json_raw_int64(c->text, c->len, "zarr_consolidated_format", &version) != ZF_OK ||
        version != 1) {
        snprintf(err, errcap, ".zmetadata: \"zarr_consolidated_format\" is not 1");
        return ZF_EUNSUPPORTED;
    }
    load_ctx ctx = {c, "", 0};
    int rc = zf_json_raw_member(c->text, c->len, "metadata", &meta, &mlen);
    if (rc == ZF_OK)
        rc = zf_json_raw_members(meta, mlen, v2_member, &ctx);
    if (rc == ZF_ECORRUPT || rc == ZF_ENOTFOUND) {
        snprintf(err, errcap, ".zmetadata: no well-formed \"metadata\" object");
        rc = ZF_ECORRUPT;
    }
    return rc;
}

static int by_path(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int cmp = strcmp(x->node.path, y->node.path);
    return cmp ? cmp : (x->seq > y->seq) - (x->seq < y->seq);
}

/* sort by path and fold the entries of one path into the first */
static void merge(zf_cons *c)
{
    if (c->count > 1) /* (qsort wants a valid pointer even for no entries) */
        qsort(c->entries, c->count, sizeof *c->entries, by_path);
    size_t k = 0;
    for (size_t i = 0; i < c->count; i++) {
        zf_cons_node *cur = &c->entries[i].node, *keep = k ? &c->entries[k - 1].node : NULL;
        if (!keep || strcmp(keep->path, cur->path)) {
            c->entries[k++] = c->entries[i];
            continue;
        }
        if (!keep->doc && cur->doc) { /* v2: a .zattrs came before the .zarray */
            keep->doc = cur->doc;
            keep->doc_len = cur->doc_len;
            keep->v2_group = cur->v2_group;
        }
        if (!keep->attrs && cur->attrs) {
            keep->attrs = cur->attrs;
            keep->attrs_len = cur->attrs_len;
        }
        free((char *)cur->path);
    }
    c->count = k;
}

/* read key into c->text, its stamp (from the same read: one request to a
 * remote store) into c->stamp; the reason for an error in err */
static int read_key(zf_cons *c, const zf_store *s, const char *key, size_t max, char *err,
                    size_t errcap)
{
    c->key = key;
    zf_store_buf buf = {NULL, 0};
    char why[200] = "";
    int rc = zf_store_read(s, key, max, &buf, &c->len, &c->stamp, why, sizeof why);
    if (rc == ZF_OK)
        c->text = (char *)buf.p; /* c owns it */
    else
        free(buf.p);
    if (rc != ZF_OK && rc != ZF_ENOTFOUND)
        snprintf(err, errcap, "%s: %s", key, *why ? why : zf_strerror(rc));
    return rc;
}

int zf_cons_load(const zf_store *s, size_t max, zf_cons **out, int *no_v3, char *err,
                 size_t errcap)
{
    zf_cons *c = calloc(1, sizeof *c);
    if (!c)
        return ZF_ENOMEM;
    int rc = read_key(c, s, "zarr.json", max, err, errcap);
    if (no_v3)
        *no_v3 = rc == ZF_ENOTFOUND;
    if (rc == ZF_OK)
        rc = load_v3(c, err, errcap);
    else if (rc == ZF_ENOTFOUND && (rc = read_key(c, s, ".zmetadata", max, err, errcap)) == ZF_OK)
        rc = load_v2(c, err, errcap);
    if (rc) {
        zf_cons_free(c);
        return rc;
    }
    merge(c);
    *out = c;
    return ZF_OK;
}

void zf_cons_free(zf_cons *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->count; i++)
        free((char *)c->entries[i].node.path);
    free(c->entries);
    free(c->text);
    free(c->root);
    free(c);
}

const char *zf_cons_key(const zf_cons *c)
{
    return c->key;
}

const zf_stamp *zf_cons_stamp(const zf_cons *c)
{
    return &c->stamp;
}

const char *zf_cons_root(const zf_cons *c, size_t *n)
{
    *n = c->root_len;
    return c->root;
}

size_t zf_cons_count(const zf_cons *c)
{
    return c->count;
}

const zf_cons_node *zf_cons_find(const zf_cons *c, const char *path)
{
    size_t lo = 0, hi = c->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(c->entries[mid].node.path, path);
        if (cmp == 0)
            return &c->entries[mid].node;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int zf_cons_children(const zf_cons *c, const char *path, zf_cons_child_fn fn, void *ctx)
{
    size_t plen = strlen(path), lo = 0, hi = c->count;
    while (lo < hi) { /* the first entry at or after "path/": the subtree is contiguous */
        size_t mid = lo + (hi - lo) / 2;
        const char *p = c->entries[mid].node.path;
        int cmp = plen ? strncmp(p, path, plen) : 0;
        if (cmp == 0 && plen)
            cmp = p[plen] == '\0' ? -1 : (unsigned char)p[plen] - '/';
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const char *last = NULL;
    size_t last_len = 0;
    for (size_t i = lo; i < c->count; i++) {
        const char *p = c->entries[i].node.path;
        if (plen && (strncmp(p, path, plen) || p[plen] != '/'))
            break;
        const char *name = p + plen + (plen ? 1 : 0), *slash = strchr(name, '/');
        size_t n = slash ? (size_t)(slash - name) : strlen(name);
        if (n == 0 || (last && n == last_len && !memcmp(name, last, n)))
            continue;
        last = name;
        last_len = n;
        int rc = fn(ctx, name, n);
        if (rc)
            return rc;
    }
    return ZF_OK;
}

int zf_cons_v2_root_group(const zf_cons *c)
{
    return c->v2_root_group;
}

const char *zf_cons_v2_root_attrs(const zf_cons *c, size_t *n)
{
    *n = c->v2_root_attrs_len;
    return c->v2_root_attrs;
}
