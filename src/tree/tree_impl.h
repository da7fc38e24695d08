/* tree_impl.h - internals shared by tree.c (building, numbering, lookups),
 * walk.c and classify.c (walking the store into nodes), node.c (the node
 * table) and coords.c (labels).  Calls go one way: tree.c calls walk.c,
 * coords.c and node.c; walk.c calls classify.c and node.c; classify.c calls
 * node.c. */
#ifndef ZF_TREE_IMPL_H
#define ZF_TREE_IMPL_H

#include "tree/tree.h"

#define ZF_NAME_MAX 255                 /* longest file name (Linux NAME_MAX) */
#define ZF_STEM_MAX (ZF_NAME_MAX - 5)   /* longest array file stem: room for ".info" */

/* an array of the store as xarray sees it in its group: a variable, which
 * may be a coordinate of others (coords.c) */
typedef struct zf_var {
    char *path;                 /* its key (owned) */
    unsigned ndim;              /* (unsigned)-1: its shape is unknown */
    char *dims[ZF_MAX_DIMS];    /* dimension names (owned; NULL where absent) */
    char *coordinates;          /* its "coordinates" attribute (owned), or NULL */
    size_t order;               /* its place in the consolidated metadata (SIZE_MAX: none) */
    size_t shown;               /* 1 + its index in arrays[] if shown, else 0 */
} zf_var;

/* a group's own "coordinates" attribute (xarray's global coordinates) */
typedef struct zf_group_coords {
    char *path;                 /* the group's key (owned) */
    char *coordinates;          /* owned */
} zf_group_coords;

struct zf_tree {
    zf_node *nodes;               /* node with id k is nodes[k - 1] */
    size_t count, cap;
    size_t *by_ino;               /* open-addressing table of ids, keyed by ino */
    size_t table_size;            /* a power of two, > 2 * count */
    zf_fp fp;                     /* order-independent sum over nodes and metadata stamps */
    zf_array **arrays;
    zf_layout **layouts;
    size_t narrays, arrays_cap;
    zf_var *vars;                 /* every array, shown or not (coordinates: coords.c) */
    size_t nvars, vars_cap;
    size_t *others;               /* indices in vars of the arrays not shown (zf_tree_other) */
    size_t nothers, others_cap;
    zf_group_coords *groups;      /* the groups with a coordinates attribute */
    size_t ngroups, groups_cap;
    const zf_store *store;
    zf_store *owned;              /* store, when the tree owns it (zf_tree_own_store) */
    zf_cache *cache;
    const zf_layout_opts *opts;   /* while building only */
    char cons_key[16];            /* the consolidated metadata's key, if every node's
                                     metadata came from it; "" if not */
    zf_stamp cons_stamp;          /* its stamp when the tree was built */
    int root_array;               /* the store's root is an array, not a group */
    char unknown[320];            /* the first part the walk could not tell (key: reason);
                                     "" if none (zf_tree_incomplete) */
};

/* Append a node under directory id parent (0: none); its id, 0 if out of
 * memory (node.c). */
size_t zf_tree_add_node(zf_tree *t, size_t parent, const char *name, int is_dir);

/* Directory node dir is incomplete: the store could not tell part of it
 * (at key; why: what failed; seen: what the user sees instead); logged at
 * mount, kept for zf_tree_incomplete (node.c). */
void zf_tree_unknown(zf_tree *t, size_t dir, const char *key, const char *why, const char *seen);

/* Mix one fact about the store (at path) into the tree's fingerprint
 * (node.c). */
void zf_tree_fp_mix(zf_tree *t, const char *path, const void *data, size_t n);

/* Add the files of the timedelta64 array at path (named name, in directory
 * dir; origin: the stamps of its metadata documents, time the newest of
 * their times); takes m's contents.  The array keeps its whole name (the
 * CSV header, .info), its files a stem that fits NAME_MAX; they are three
 * nodes in a row, .txt first (node.c). */
int zf_tree_add_array(zf_tree *t, size_t dir, const char *name, const char *path, zf_meta *m,
                      const zf_fp *origin, int64_t time);

/* Remember the array at path (shown: 1 + its index in t->arrays, else 0)
 * as a variable of its group: its dimensions and coordinates attribute
 * from m (borrowed), its place in consolidated metadata (SIZE_MAX: none)
 * (node.c). */
int zf_tree_add_var(zf_tree *t, const char *path, const zf_meta *m, size_t order, size_t shown);

/* Remember the coordinates attribute of the group at path, if m has one (node.c). */
int zf_tree_add_group(zf_tree *t, const char *path, const zf_meta *m);

/* Give every array's .csv its coordinates as label columns (coords.c). */
int zf_tree_attach_labels(zf_tree *t);

/* Walk the store into t's nodes (node 1, the root, already added): ZF_OK,
 * or as zf_tree_build fails (walk.c). */
int zf_tree_walk(zf_tree *t);

#endif
