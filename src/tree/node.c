/* node.c - the tree's node table as the walk (walk.c) fills it: appending a
 * node under its directory, an array's three files (with names that fit),
 * every array and group as xarray sees it (labels: coords.c), and facts
 * about the store mixed into
 * the tree's fingerprint.  Numbering and lookups: tree.c. */
#include "tree_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/vec.h"

size_t zf_tree_add_node(zf_tree *t, size_t parent, const char *name, int is_dir)
{
    if (zf_grow(&t->nodes, &t->cap, t->count, sizeof *t->nodes, 64))
        return 0;
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

void zf_tree_unknown(zf_tree *t, size_t dir, const char *key, const char *why, const char *seen)
{
    char where[ZF_KEY_MAX + 64];
    snprintf(where, sizeof where, "%s%s%s", zf_store_path(t->store), *key ? "/" : "", key);
    t->nodes[dir - 1].incomplete = 1;
    if (!*t->unknown && snprintf(t->unknown, sizeof t->unknown, "%s: %s", where, why) < 0)
        *t->unknown = '\0'; /* (cut to fit, as a log line would be) */
    if (!t->opts->generation) /* at mount; a re-check says it once (zf_tree_incomplete) */
        zf_log("%s: %s; %s", where, why, seen);
}

/* an order-independent sum: the walk may visit nodes in any order */
void zf_tree_fp_mix(zf_tree *t, const char *path, const void *data, size_t n)
{
    zf_fp one;
    zf_fp_init(&one);
    zf_fp_add(&one, path, strlen(path));
    zf_fp_add(&one, data, n);
    t->fp.a += one.a;
    t->fp.b += one.b;
}

/* grow the array *v of *cap elements of size es to hold n + 1 */
static int grow(void **v, size_t *cap, size_t n, size_t es)
{
    if (n < *cap)
        return ZF_OK;
    size_t c = *cap ? *cap * 2 : 16;
    void *g = realloc(*v, c * es);
    if (!g)
        return ZF_ENOMEM;
    *v = g;
    *cap = c;
    return ZF_OK;
}

int zf_tree_add_var(zf_tree *t, const char *path, const zf_meta *m, size_t order, size_t shown)
{
    if (grow((void **)&t->vars, &t->vars_cap, t->nvars, sizeof *t->vars))
        return ZF_ENOMEM;
    zf_var *v = &t->vars[t->nvars];
    memset(v, 0, sizeof *v);
    v->ndim = m->ndim;
    v->order = order;
    v->shown = shown;
    int ok = (v->path = strdup(path)) != NULL;
    if (m->coordinates)
        ok &= (v->coordinates = strdup(m->coordinates)) != NULL;
    for (unsigned d = 0; d < ZF_MAX_DIMS; d++)
        if (m->dim_names[d])
            ok &= (v->dims[d] = strdup(m->dim_names[d])) != NULL;
    t->nvars++; /* freed with the tree, whole or not */
    if (ok && !shown && grow((void **)&t->others, &t->others_cap, t->nothers, sizeof *t->others))
        return ZF_ENOMEM;
    if (ok && !shown)
        t->others[t->nothers++] = t->nvars - 1;
    return ok ? ZF_OK : ZF_ENOMEM;
}

int zf_tree_add_group(zf_tree *t, const char *path, const zf_meta *m)
{
    if (!m->coordinates)
        return ZF_OK;
    if (grow((void **)&t->groups, &t->groups_cap, t->ngroups, sizeof *t->groups))
        return ZF_ENOMEM;
    zf_group_coords *g = &t->groups[t->ngroups++];
    g->path = strdup(path);
    g->coordinates = strdup(m->coordinates);
    return g->path && g->coordinates ? ZF_OK : ZF_ENOMEM;
}

/* the stem of an array's file names into stem: the name itself when NAME.info
 * fits NAME_MAX, else its first bytes (whole UTF-8 characters), "~" and 8 hex
 * digits of a hash of the whole name; returns whether it was shortened */
static int file_stem(const char *name, char stem[ZF_STEM_MAX + 1])
{
    size_t len = strlen(name);
    if (len <= ZF_STEM_MAX) {
        memcpy(stem, name, len + 1);
        return 0;
    }
    size_t keep = ZF_STEM_MAX - 9;
    while (keep > 0 && ((unsigned char)name[keep] & 0xC0) == 0x80) /* not inside a character */
        keep--;
    zf_fp fp;
    zf_fp_init(&fp);
    zf_fp_add(&fp, name, len);
    snprintf(stem, ZF_STEM_MAX + 1, "%.*s~%08x", (int)keep, name, (unsigned)(fp.a >> 32));
    return 1;
}

/* add the files of the timedelta64 array at path (named name, in directory
 * dir): three nodes in a row, .txt first; takes m's contents.  The array
 * keeps its whole name (the CSV header, .info), its files a stem that fits */
int zf_tree_add_array(zf_tree *t, size_t dir, const char *name, const char *path, zf_meta *m,
                      const zf_fp *origin, int64_t time)
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
    zf_array_set_origin(a, origin);
    t->arrays[t->narrays] = a;
    t->layouts[t->narrays++] = l;
    char stem[ZF_STEM_MAX + 1];
    if (file_stem(name, stem))
        zf_log("%s/%s: the name is longer than %d bytes; its files are %s.txt, .csv and .info",
               zf_store_path(t->store), path, ZF_STEM_MAX, stem);
    static const char *const ext[3] = {".txt", ".csv", ".info"};
    for (int v = 0; v < 3; v++) {
        char fname[ZF_STEM_MAX + 6];
        snprintf(fname, sizeof fname, "%s%s", stem, ext[v]);
        size_t id = zf_tree_add_node(t, dir, fname, 0);
        if (!id)
            return ZF_ENOMEM;
        t->nodes[id - 1].layout = l;
        t->nodes[id - 1].view = (zf_view)v;
        t->nodes[id - 1].mtime = time;
    }
    return ZF_OK;
}

