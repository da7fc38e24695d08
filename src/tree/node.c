/* node.c - the tree's node table as the walk (walk.c) fills it: appending a
 * node under its directory, and mixing facts about the store into the
 * tree's fingerprint.  Numbering and lookups: tree.c. */
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

size_t zf_tree_add_node(zf_tree *t, size_t parent, const char *name, int is_dir)
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
