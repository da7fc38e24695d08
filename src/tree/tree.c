/* tree.c - walk a store's metadata into the directory tree zarrfs shows. */
#include "tree/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr/consolidated.h"
#include "base/err.h"
#include "base/log.h"

#define ZF_MAX_DEPTH 64
#define ZF_MAX_META (16u << 20) /* largest metadata document read */

struct zf_tree {
    zf_node *nodes;               /* node with id k is nodes[k - 1] */
    size_t count, cap;
    size_t *by_ino;               /* open-addressing table of ids, keyed by ino */
    size_t table_size;            /* a power of two, > 2 * count */
    zf_fp fp;                     /* order-independent sum over nodes and metadata stamps */
    zf_array **arrays;
    zf_layout **layouts;
    size_t narrays, arrays_cap;
    const zf_store *store;
    zf_cache *cache;
    const zf_layout_opts *opts;
    zf_cons *cons;                /* consolidated metadata, while building; NULL if none */
    int cons_rc;                  /* why cons is NULL (ZF_ENOTFOUND: the store has none) */
    char cons_err[256];
};

/* append a node under directory id parent (0: none); returns its id, 0 on failure */
static size_t add_node(zf_tree *t, size_t parent, const char *name, int is_dir)
{
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        zf_node *n = realloc(t->nodes, cap * sizeof *n);
        if (!n)
            return 0;
        t->nodes = n;
        t->cap = cap;
    }
    zf_node *n = &t->nodes[t->count];
    memset(n, 0, sizeof *n);
    if (!(n->name = strdup(name)))
        return 0;
    size_t id = ++t->count;
    n->is_dir = is_dir;
    if (parent) {
        zf_node *p = &t->nodes[parent - 1];
        size_t *c = realloc(p->children, (p->nchildren + 1) * sizeof *c);
        if (!c)
            return 0;
        p->children = c;
        p->children[p->nchildren++] = id;
    }
    return id;
}

/* mix one fact about the store into the tree's order-independent fingerprint */
static void fp_mix(zf_tree *t, const char *path, const void *data, size_t n)
{
    zf_fp one;
    zf_fp_init(&one);
    zf_fp_add(&one, path, strlen(path));
    zf_fp_add(&one, data, n);
    t->fp.a += one.a;
    t->fp.b += one.b;
}

/* mix the stamp of key into the fingerprint; returns it in *st (may be NULL) */
static int mix_stamp(zf_tree *t, const char *key, zf_stamp *st)
{
    zf_stamp own;
    if (!st)
        st = &own;
    int rc = zf_store_stamp(t->store, key, st);
    zf_fp d = zf_stamp_digest(st);
    fp_mix(t, key, &d, sizeof d);
    return rc;
}

/* is what st describes there to be used (not absent, not a refused symlink)? */
static int stamp_usable(const zf_stamp *st)
{
    return st->kind != ZF_STORE_ABSENT && st->kind != ZF_STORE_LINK;
}

/* is name safe as one path component (UTF-8, no control characters)? */
static int safe_name(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > 250 || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, extra = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
                               : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (c < 0x20 || c == 0x7F || c == '/' || extra == 9 || (extra == 1 && c < 0xC2))
            return 0;
        for (unsigned i = 1; i <= extra; i++)
            if ((p[i] & 0xC0) != 0x80)
                return 0;
        p += 1 + extra;
    }
    return 1;
}

static void join(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s%s%s", dir, *dir ? "/" : "", name);
}

/* read the metadata document dir/name into *doc (the caller frees it):
 * ZF_OK, ZF_ENOTFOUND if absent, or another error with the reason in err */
static int read_doc(zf_tree *t, const char *dir, const char *name, char **doc, size_t *n,
                    char *err, size_t errcap)
{
    char key[ZF_KEY_MAX], why[200];
    join(key, sizeof key, dir, name);
    zf_store_buf buf = {NULL, 0};
    mix_stamp(t, key, NULL);
    int rc = zf_store_read(t->store, key, ZF_MAX_META, &buf, n, NULL, why, sizeof why);
    if (rc == ZF_OK) {
        *doc = (char *)buf.p; /* ownership passes to the caller */
        return ZF_OK;
    }
    free(buf.p);
    if (rc != ZF_ENOTFOUND)
        snprintf(err, errcap, "%s: %s", name, *why ? why : zf_strerror(rc));
    return rc;
}

static int add_array(zf_tree *t, size_t dir, const char *name, const char *path, zf_meta *m)
{
    if (t->narrays == t->arrays_cap) {
        size_t cap = t->arrays_cap ? t->arrays_cap * 2 : 16;
        zf_array **a = realloc(t->arrays, cap * sizeof *a);
        zf_layout **l = a ? realloc(t->layouts, cap * sizeof *l) : NULL;
        if (a)
            t->arrays = a;
        if (!l)
            return ZF_ENOMEM;
        t->layouts = l;
        t->arrays_cap = cap;
    }
    zf_array *a = zf_array_new(t->store, path, m, t->cache);
    zf_layout *l = a ? zf_layout_new(a, name, t->opts) : NULL;
    if (!l) {
        zf_array_free(a);
        return ZF_ENOMEM;
    }
    t->arrays[t->narrays] = a;
    t->layouts[t->narrays++] = l;
    static const char *const ext[3] = {".txt", ".csv", ".info"};
    for (int v = 0; v < 3; v++) {
        char fname[300];
        snprintf(fname, sizeof fname, "%s%s", name, ext[v]);
        size_t id = add_node(t, dir, fname, 0);
        if (!id)
            return ZF_ENOMEM;
        t->nodes[id - 1].layout = l;
        t->nodes[id - 1].view = (zf_view)v;
    }
    return ZF_OK;
}

static int walk(zf_tree *t, size_t dir, const char *path, const char *name, int depth);

typedef struct list_ctx {
    zf_tree *t;
    size_t dir;
    const char *path;
    int depth;
    int rc;
} list_ctx;

static int visit_child(void *arg, const zf_store_entry *e)
{
    list_ctx *c = arg;
    const char *name = e->name;
    if (e->stamp.kind != ZF_STORE_DIR)
        return 0;
    char path[ZF_KEY_MAX];
    join(path, sizeof path, c->path, name);
    if (!safe_name(name)) {
        zf_log("%s/%s: name is not safe as a file name; skipped", zf_store_path(c->t->store), path);
        return 0;
    }
    int rc = walk(c->t, c->dir, path, name, c->depth + 1);
    return rc == ZF_ENOMEM ? (c->rc = rc) : 0;
}

static int walk_group(zf_tree *t, size_t parent, const char *path, const char *name, int depth)
{
    size_t dir = parent;
    if (depth > 0 && !(dir = add_node(t, parent, name, 1)))
        return ZF_ENOMEM;
    if (depth >= ZF_MAX_DEPTH) {
        zf_log("%s/%s: groups nested deeper than %d; children skipped", zf_store_path(t->store), path,
               ZF_MAX_DEPTH);
        return ZF_OK;
    }
    list_ctx c = {t, dir, path, depth, ZF_OK};
    int rc = zf_store_list(t->store, path, visit_child, &c);
    return c.rc ? c.rc : rc == ZF_ENOMEM ? rc : ZF_OK;
}

/* log why path is left out (or why the root is unusable) */
static void log_invalid(const zf_tree *t, const char *path, const char *err)
{
    if (*path)
        zf_log("%s/%s: left out: %s", zf_store_path(t->store), path, err);
    else
        zf_log("%s: invalid root metadata: %s", zf_store_path(t->store), err);
}

/* is the node's own document dir/name newer than the consolidated copy? */
static int newer_than_cons(zf_tree *t, const char *dir, const char *name)
{
    char key[ZF_KEY_MAX];
    join(key, sizeof key, dir, name);
    zf_stamp st;
    mix_stamp(t, key, &st);
    return stamp_usable(&st) && st.mtime > zf_cons_stamp(t->cons)->mtime;
}

/* classify the root from the copy the consolidated metadata keeps (v3) */
static int classify_cons_root(zf_tree *t, zf_node_kind *kind, zf_meta *m)
{
    size_t n;
    const char *doc = zf_cons_root(t->cons, &n);
    if (!doc)
        return ZF_ENOTFOUND;
    char err[256] = "";
    int rc = zf_meta_parse_v3(doc, n, kind, m, err, sizeof err);
    if (rc)
        log_invalid(t, "", err);
    return rc;
}

/* classify path from the consolidated metadata; ZF_ENOTFOUND (read the
 * node's own metadata instead) if it has no valid, current entry for path */
static int classify_cons(zf_tree *t, const char *path, zf_node_kind *kind, zf_meta *m)
{
    if (t->cons && !*path)
        return classify_cons_root(t, kind, m);
    const zf_cons_node *e = t->cons ? zf_cons_find(t->cons, path) : NULL;
    if (!e || !e->doc)
        return ZF_ENOTFOUND;
    int newer = e->zarr_format == 3
                    ? newer_than_cons(t, path, "zarr.json")
                    : newer_than_cons(t, path, e->v2_group ? ".zgroup" : ".zarray") |
                          newer_than_cons(t, path, ".zattrs");
    if (newer)
        return ZF_ENOTFOUND;
    char err[256] = "";
    int rc = ZF_OK;
    if (e->zarr_format == 3)
        rc = zf_meta_parse_v3(e->doc, e->doc_len, kind, m, err, sizeof err);
    else if (e->v2_group)
        *kind = ZF_KIND_GROUP;
    else
        rc = zf_meta_parse_v2(e->doc, e->doc_len, e->attrs, e->attrs_len, kind, m, err, sizeof err);
    if (rc && rc != ZF_ENOMEM) {
        zf_log("%s/%s: consolidated metadata ignored for this node: %s", zf_store_path(t->store),
               path, err);
        return ZF_ENOTFOUND;
    }
    return rc;
}

/* what is at path: ZF_OK with *kind (and *m for timedelta arrays),
 * ZF_ENOTFOUND if no Zarr metadata, or an error already logged */
static int classify(zf_tree *t, const char *path, zf_node_kind *kind, zf_meta *m)
{
    char err[256] = "", *doc = NULL, *attrs = NULL;
    size_t n, an = 0;
    int rc = classify_cons(t, path, kind, m);
    if (rc != ZF_ENOTFOUND)
        return rc;
    /* a document that is there but cannot be read leaves the node out */
    if ((rc = read_doc(t, path, "zarr.json", &doc, &n, err, sizeof err)) == ZF_OK) {
        rc = zf_meta_parse_v3(doc, n, kind, m, err, sizeof err);
    } else if (rc == ZF_ENOTFOUND &&
               (rc = read_doc(t, path, ".zarray", &doc, &n, err, sizeof err)) == ZF_OK) {
        rc = read_doc(t, path, ".zattrs", &attrs, &an, err, sizeof err);
        if (rc == ZF_ENOTFOUND) /* attributes are optional */
            rc = ZF_OK;
        if (rc == ZF_OK)
            rc = zf_meta_parse_v2(doc, n, attrs, an, kind, m, err, sizeof err);
    } else if (rc == ZF_ENOTFOUND) {
        char key[ZF_KEY_MAX];
        join(key, sizeof key, path, ".zgroup");
        *kind = ZF_KIND_GROUP;
        zf_stamp st;
        mix_stamp(t, key, &st);
        return stamp_usable(&st) ? ZF_OK : ZF_ENOTFOUND;
    }
    free(doc);
    free(attrs);
    if (rc)
        log_invalid(t, path, err);
    return rc;
}

/* log why the root group's consolidated metadata is not used, if it has some */
static void log_cons_unused(const zf_tree *t)
{
    if (t->cons_rc != ZF_OK && t->cons_rc != ZF_ENOTFOUND)
        zf_log("%s: consolidated metadata not used, every node's own metadata is read: %s",
               zf_store_path(t->store), t->cons_err);
}

/* add the node at path (named name in directory dir) and its descendants */
static int walk(zf_tree *t, size_t dir, const char *path, const char *name, int depth)
{
    zf_node_kind kind;
    zf_meta m;
    memset(&m, 0, sizeof m);
    int rc = classify(t, path, &kind, &m);
    if (rc == ZF_ENOMEM)
        return rc;
    if (rc) /* a broken root fails the whole tree; anything deeper is left out */
        return depth == 0 ? rc : ZF_OK;
    if (kind == ZF_KIND_GROUP && depth == 0)
        log_cons_unused(t);
    if (kind == ZF_KIND_GROUP)
        return walk_group(t, dir, path, name, depth);
    if (kind != ZF_KIND_TIMEDELTA)
        return ZF_OK;
    if (!zf_cf_shown(&m.cf, t->opts->cf)) { /* -o cf= leaves it out */
        zf_meta_clear(&m);
        return ZF_OK;
    }
    rc = add_array(t, dir, name, path, &m);
    zf_meta_clear(&m);
    return rc;
}

static int by_name(const void *a, const void *b, void *arg)
{
    const zf_tree *t = arg;
    return strcmp(t->nodes[*(const size_t *)a - 1].name, t->nodes[*(const size_t *)b - 1].name);
}

/* sort every directory's children; drop (and log) duplicate names */
static void sort_children(zf_tree *t)
{
    for (size_t i = 0; i < t->count; i++) {
        zf_node *d = &t->nodes[i];
        if (!d->is_dir || d->nchildren < 2)
            continue;
        qsort_r(d->children, d->nchildren, sizeof *d->children, by_name, t);
        size_t k = 1;
        for (size_t j = 1; j < d->nchildren; j++) {
            if (by_name(&d->children[k - 1], &d->children[j], t) == 0)
                zf_log("%s: two nodes are named \"%s\"; the second is hidden",
                       zf_store_path(t->store), t->nodes[d->children[j] - 1].name);
            else
                d->children[k++] = d->children[j];
        }
        d->nchildren = k;
    }
}

/* name for the files of a root array: the store directory without ".zarr" */
static void root_array_name(const zf_store *s, char *buf, size_t cap)
{
    const char *base = strrchr(zf_store_path(s), '/');
    base = base ? base + 1 : zf_store_path(s);
    snprintf(buf, cap, "%s", base);
    size_t len = strlen(buf);
    if (len > 5 && !strcmp(buf + len - 5, ".zarr"))
        buf[len - 5] = '\0';
    if (!*buf || !safe_name(buf))
        snprintf(buf, cap, "array");
}

/* number of the node whose view path is path (the root is ZF_ROOT_INO) */
static uint64_t path_ino(const char *path)
{
    if (!*path)
        return ZF_ROOT_INO;
    zf_fp fp;
    zf_fp_init(&fp);
    zf_fp_add(&fp, path, strlen(path));
    uint64_t ino = fp.a ^ (fp.b >> 1);
    return ino > ZF_ROOT_INO ? ino : ino + 2;
}

static void table_put(zf_tree *t, size_t id)
{
    zf_node *n = &t->nodes[id - 1];
    size_t mask = t->table_size - 1;
    for (;;) { /* on a (64-bit) collision, the later node takes the next free number */
        size_t slot = (size_t)(n->ino * 0x9E3779B97F4A7C15ull) & mask;
        while (t->by_ino[slot] && t->nodes[t->by_ino[slot] - 1].ino != n->ino)
            slot = (slot + 1) & mask;
        if (!t->by_ino[slot]) {
            t->by_ino[slot] = id;
            return;
        }
        n->ino++;
    }
}

/* give node id (at view path) and its descendants their numbers */
static void number(zf_tree *t, size_t id, uint64_t parent_ino, const char *path)
{
    zf_node *n = &t->nodes[id - 1];
    n->ino = path_ino(path);
    if (!n->is_dir && t->opts->generation) /* a new version of a file is a new inode */
        n->ino = (n->ino ^ (t->opts->generation * 0xD6E8FEB86659FD93ull)) | 2;
    n->parent = parent_ino ? parent_ino : n->ino;
    table_put(t, id);
    for (size_t i = 0; i < n->nchildren; i++) {
        char child[ZF_KEY_MAX];
        join(child, sizeof child, path, t->nodes[n->children[i] - 1].name);
        number(t, n->children[i], n->ino, child);
    }
}

static int index_nodes(zf_tree *t)
{
    t->table_size = 16;
    while (t->table_size < 2 * t->count + 1)
        t->table_size *= 2;
    if (!(t->by_ino = calloc(t->table_size, sizeof *t->by_ino)))
        return ZF_ENOMEM;
    number(t, 1, 0, "");
    return ZF_OK;
}

int zf_tree_build(const zf_store *store, zf_cache *cache, const zf_layout_opts *opts,
                  zf_tree **out)
{
    zf_tree *t = calloc(1, sizeof *t);
    if (!t)
        return ZF_ENOMEM;
    t->store = store;
    t->cache = cache;
    t->opts = opts;
    char name[256];
    root_array_name(store, name, sizeof name);
    t->cons_rc = zf_cons_load(store, ZF_MAX_META, &t->cons, t->cons_err, sizeof t->cons_err);
    int rc = t->cons_rc == ZF_ENOMEM ? ZF_ENOMEM : ZF_OK;
    if (t->cons) { /* the document all nodes' metadata comes from */
        zf_fp d = zf_stamp_digest(zf_cons_stamp(t->cons));
        fp_mix(t, zf_cons_key(t->cons), &d, sizeof d);
    }
    if (rc == ZF_OK)
        rc = add_node(t, 0, "", 1) ? walk(t, 1, "", name, 0) : ZF_ENOMEM;
    zf_cons_free(t->cons);
    t->cons = NULL;
    if (rc == ZF_OK) {
        sort_children(t);
        rc = index_nodes(t);
    }
    t->opts = NULL; /* used only while building */
    if (rc) {
        zf_tree_free(t);
        return rc;
    }
    *out = t;
    return ZF_OK;
}

int zf_tree_stale(const zf_tree *t, const zf_tree *fresh)
{
    if (t->fp.a != fresh->fp.a || t->fp.b != fresh->fp.b || t->count != fresh->count)
        return 1;
    for (size_t i = 0; i < t->narrays; i++)
        if (zf_layout_sized(t->layouts[i]) && zf_array_changed(t->arrays[i]))
            return 1;
    return 0;
}

void zf_tree_free(zf_tree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->count; i++) {
        free(t->nodes[i].name);
        free(t->nodes[i].children);
    }
    for (size_t i = 0; i < t->narrays; i++) {
        zf_layout_free(t->layouts[i]);
        zf_array_free(t->arrays[i]);
    }
    free(t->nodes);
    free(t->by_ino);
    free(t->arrays);
    free(t->layouts);
    free(t);
}

const zf_node *zf_tree_node(const zf_tree *t, uint64_t ino)
{
    size_t mask = t->table_size - 1;
    for (size_t slot = (size_t)(ino * 0x9E3779B97F4A7C15ull) & mask; t->by_ino[slot];
         slot = (slot + 1) & mask) {
        const zf_node *n = &t->nodes[t->by_ino[slot] - 1];
        if (n->ino == ino)
            return n;
    }
    return NULL;
}

const zf_node *zf_tree_node_at(const zf_tree *t, uint64_t i)
{
    return &t->nodes[i];
}

const zf_node *zf_tree_child(const zf_tree *t, const zf_node *d, size_t i)
{
    return &t->nodes[d->children[i] - 1];
}

const zf_node *zf_tree_lookup(const zf_tree *t, uint64_t parent, const char *name)
{
    const zf_node *d = zf_tree_node(t, parent);
    if (!d || !d->is_dir)
        return NULL;
    size_t lo = 0, hi = d->nchildren;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const zf_node *c = zf_tree_child(t, d, mid);
        int cmp = strcmp(c->name, name);
        if (cmp == 0)
            return c;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

uint64_t zf_tree_count(const zf_tree *t)
{
    return t->count;
}
