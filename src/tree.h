/* tree.h - the namespace zarrfs shows: directories for groups, files for arrays.
 *
 * Built once at mount time from metadata alone (no chunk is read).  Node
 * numbers are stable for the life of the tree; node 1 is the root.  The tree is
 * immutable after zf_tree_build and may be read by many threads. */
#ifndef ZF_TREE_H
#define ZF_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "layout.h"
#include "store.h"

#define ZF_ROOT_INO 1

typedef struct zf_node {
    uint64_t ino;
    uint64_t parent;        /* ino of the parent (the root is its own parent) */
    char *name;
    int is_dir;
    uint64_t *children;     /* dirs: child inos sorted by name */
    size_t nchildren;
    zf_layout *layout;      /* files: the array's layout (shared by .txt/.csv/.info) */
    zf_view view;
} zf_node;

typedef struct zf_tree zf_tree;

/* Walk the store and build the tree.  ZF_ENOTFOUND if the root holds no Zarr
 * metadata.  Arrays with invalid or unsupported metadata are left out with a
 * log line.  store and cache must outlive the tree. */
int zf_tree_build(const zf_store *store, zf_cache *cache, const zf_layout_opts *opts,
                  zf_tree **out);

/* Free the tree, its arrays and layouts; NULL is allowed. */
void zf_tree_free(zf_tree *t);

/* The node with number ino, or NULL. */
const zf_node *zf_tree_node(const zf_tree *t, uint64_t ino);

/* The child called name of directory parent, or NULL. */
const zf_node *zf_tree_lookup(const zf_tree *t, uint64_t parent, const char *name);

/* Number of nodes (directories and files). */
uint64_t zf_tree_count(const zf_tree *t);

#endif
