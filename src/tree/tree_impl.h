/* tree_impl.h - internals shared by tree.c (the node table, numbering,
 * lookups) and walk.c (walking the store into nodes). */
#ifndef ZF_TREE_IMPL_H
#define ZF_TREE_IMPL_H

#include "tree/tree.h"

struct zf_tree {
    zf_node *nodes;               /* node with id k is nodes[k - 1] */
    size_t count, cap;
    size_t *by_ino;               /* open-addressing table of ids, keyed by ino */
    size_t table_size;            /* a power of two, > 2 * count */
    zf_fp fp;                     /* order-independent sum over nodes and metadata stamps */
    zf_array **arrays;
    zf_layout **layouts;
    size_t narrays, arrays_cap;
    char **others;                /* keys of the arrays not shown (coordinates of other types) */
    size_t nothers, others_cap;
    const zf_store *store;
    zf_store *owned;              /* store, when the tree owns it (zf_tree_own_store) */
    zf_cache *cache;
    const zf_layout_opts *opts;   /* while building only */
    char cons_key[16];            /* the consolidated metadata's key, if every node's
                                     metadata came from it; "" if not */
    zf_stamp cons_stamp;          /* its stamp when the tree was built */
};

/* Append a node under directory id parent (0: none); its id, 0 if out of memory. */
size_t zf_tree_add_node(zf_tree *t, size_t parent, const char *name, int is_dir);

/* Mix one fact about the store (at path) into the tree's fingerprint. */
void zf_tree_fp_mix(zf_tree *t, const char *path, const void *data, size_t n);

/* Give every array's .csv its coordinates as label columns (coords.c). */
int zf_tree_attach_labels(zf_tree *t);

/* Walk the store into t's nodes (node 1, the root, already added): ZF_OK,
 * or as zf_tree_build fails. */
int zf_tree_walk(zf_tree *t);

#endif
