/* tree.c - the directory tree zarrfs shows: building it (the walk of the
 * store that makes the nodes: walk.c; the node table: node.c), their
 * numbers, lookups. */
#include "tree_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"

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

/* a directory's time is also the newest of its children's own (a child
 * added writes its metadata): children come after their parent, so each
 * directory takes its children's times before they take their own children's */
static void children_times(zf_tree *t)
{
    for (size_t i = 0; i < t->count; i++) {
        zf_node *d = &t->nodes[i];
        for (size_t k = 0; d->is_dir && k < d->nchildren; k++) {
            int64_t c = t->nodes[d->children[k] - 1].mtime;
            d->mtime = c > d->mtime ? c : d->mtime;
        }
    }
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

/* the view path of the node being numbered, grown and cut as numbering
 * goes down and up (one buffer, not one per level) */
typedef struct numbering {
    char path[ZF_KEY_MAX + 256]; /* a directory's key, then a file name */
    size_t len;
} numbering;

/* give node id (at path->path) and its descendants their numbers */
static void number(zf_tree *t, size_t id, uint64_t parent_ino, numbering *p)
{
    zf_node *n = &t->nodes[id - 1];
    n->ino = path_ino(p->path);
    if (!n->is_dir && t->opts->generation) /* a new version of a file is a new inode */
        n->ino = (n->ino ^ (t->opts->generation * 0xD6E8FEB86659FD93ull)) | 2;
    n->parent = parent_ino ? parent_ino : n->ino;
    table_put(t, id);
    size_t keep = p->len;
    for (size_t i = 0; i < n->nchildren; i++) {
        const char *name = t->nodes[n->children[i] - 1].name;
        int w = snprintf(p->path + keep, sizeof p->path - keep, "%s%s", keep ? "/" : "", name);
        p->len = w > 0 && (size_t)w < sizeof p->path - keep ? keep + (size_t)w : sizeof p->path - 1;
        number(t, n->children[i], n->ino, p);
    }
    p->len = keep;
    p->path[keep] = '\0';
}

static int index_nodes(zf_tree *t)
{
    t->table_size = 16;
    while (t->table_size < 2 * t->count + 1)
        t->table_size *= 2;
    numbering *p = calloc(1, sizeof *p);
    if (!p || !(t->by_ino = calloc(t->table_size, sizeof *t->by_ino))) {
        free(p);
        return ZF_ENOMEM;
    }
    number(t, 1, 0, p);
    free(p);
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
    int rc = zf_tree_add_node(t, 0, "", 1) ? zf_tree_walk(t) : ZF_ENOMEM;
    if (rc == ZF_OK && !opts->labels_index)
        rc = zf_tree_attach_labels(t);
    if (rc == ZF_OK) {
        sort_children(t);
        children_times(t);
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

/* have the chunks of any array of t whose size was computed changed?  1,
 * 0, or ZF_EIO / ZF_ENOMEM (why) when a listing could not tell */
static int chunks_changed(const zf_tree *t, char *why, size_t whycap)
{
    for (size_t i = 0; i < t->narrays; i++) {
        int rc = zf_layout_sized(t->layouts[i]) ? zf_array_changed(t->arrays[i], why, whycap) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int zf_tree_stale(const zf_tree *t, const zf_tree *fresh, int chunks, char *why, size_t whycap)
{
    if (t->fp.a != fresh->fp.a || t->fp.b != fresh->fp.b || t->count != fresh->count)
        return 1;
    return chunks ? chunks_changed(t, why, whycap) : 0;
}

int64_t zf_tree_node_time(const zf_node *n)
{
    int64_t t = n->mtime;
    if (!n->is_dir && zf_layout_sized(n->layout)) {
        int64_t c = zf_array_chunks_time(zf_layout_array(n->layout));
        t = c > t ? c : t;
    }
    return t;
}

/* are the children of directories a (of tree ta) and b (of tb) the same names? */
static int same_entries(const zf_tree *ta, const zf_node *a, const zf_tree *tb, const zf_node *b)
{
    if (a->nchildren != b->nchildren)
        return 0;
    for (size_t i = 0; i < a->nchildren; i++)
        if (strcmp(zf_tree_child(ta, a, i)->name, zf_tree_child(tb, b, i)->name))
            return 0;
    return 1;
}

/* does the array of file node n (of fresh) show what that of o (of old) showed? */
static int same_array(const zf_node *n, const zf_node *o)
{
    zf_array *was = zf_layout_array(o->layout);
    const zf_fp *a = zf_array_origin(zf_layout_array(n->layout)), *b = zf_array_origin(was);
    char why[160]; /* a listing that cannot tell: changed (its time moves forward) */
    return a->a == b->a && a->b == b->b &&
           !(zf_layout_sized(o->layout) && zf_array_changed(was, why, sizeof why));
}

void zf_tree_inherit_times(zf_tree *fresh, const zf_tree *old, int64_t now)
{
    for (size_t i = 0; i < fresh->count; i++) {
        zf_node *n = &fresh->nodes[i];
        const zf_node *o = n->ino == ZF_ROOT_INO ? zf_tree_node(old, ZF_ROOT_INO)
                                                 : zf_tree_lookup(old, n->parent, n->name);
        int same = o && o->is_dir == n->is_dir &&
                   (n->is_dir ? same_entries(fresh, n, old, o) : same_array(n, o));
        size_t files = n->is_dir ? 1 : 3; /* an array's three files, .txt first (node.c) */
        int64_t t = n->mtime;
        if (same) {
            t = o->mtime > t ? o->mtime : t;
        } else {
            int64_t was = o ? zf_tree_node_time(o) : 0;
            t = now > t ? now : t;
            t = was <= INT64_MAX - 1000000000 && was + 1000000000 > t ? was + 1000000000 : t;
        }
        for (size_t k = 0; k < files && i + k < fresh->count; k++)
            fresh->nodes[i + k].mtime = t;
        i += files - 1;
    }
}

int zf_tree_unchanged(const zf_tree *t, int chunks, char *why, size_t whycap)
{
    if (t->store->immutable)
        return 1;
    if (!t->store->remote || !*t->cons_key)
        return 0;
    zf_stamp now;
    if (zf_store_stamp(t->store, t->cons_key, &now) != ZF_OK)
        return 0; /* gone or unreadable: a rebuild tells what remains */
    zf_fp a = zf_stamp_version(&now), b = zf_stamp_version(&t->cons_stamp);
    if (a.a != b.a || a.b != b.b)
        return 0;
    int rc = chunks ? chunks_changed(t, why, whycap) : 0; /* a listable store: chunks
                                                             rewritten in place */
    return rc < 0 ? rc : !rc;
}

int zf_tree_incomplete(const zf_tree *t, char *why, size_t whycap)
{
    snprintf(why, whycap, "%s", t->unknown);
    return *t->unknown != '\0';
}

int zf_tree_root_is_array(const zf_tree *t)
{
    return t->root_array;
}

const char *zf_tree_other(const zf_tree *t, size_t i)
{
    return i < t->nothers ? t->vars[t->others[i]].path : NULL;
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
    for (size_t i = 0; i < t->nvars; i++) {
        free(t->vars[i].path);
        free(t->vars[i].coordinates);
        for (unsigned d = 0; d < ZF_MAX_DIMS; d++)
            free(t->vars[i].dims[d]);
    }
    free(t->vars);
    free(t->others);
    for (size_t i = 0; i < t->ngroups; i++) {
        free(t->groups[i].path);
        free(t->groups[i].coordinates);
    }
    free(t->groups);
    free(t->arrays);
    free(t->layouts);
    zf_store_close(t->owned);
    free(t);
}

const zf_store *zf_tree_store(const zf_tree *t)
{
    return t->store;
}

void zf_tree_own_store(zf_tree *t, zf_store *s)
{
    t->owned = s;
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
