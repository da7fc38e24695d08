/* tree.h - the namespace zarrfs shows: directories for groups, files for arrays.
 *
 * Built from metadata alone (no chunk is read).  A tree is immutable after
 * zf_tree_build and may be read by many threads.  Node numbers are derived from
 * the node's path (and, for files, opts->generation), so a tree rebuilt after
 * the store changed keeps every surviving directory's number while its files
 * get new ones: text of two versions never shares an inode.  The root is 1. */
#ifndef ZF_TREE_H
#define ZF_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "chunk/cache.h"
#include "view/layout.h"
#include "store/store.h"

#define ZF_ROOT_INO 1

typedef struct zf_node {
    uint64_t ino;
    uint64_t parent;        /* ino of the parent (the root is its own parent) */
    char *name;
    int is_dir;
    size_t *children;       /* dirs: children (see zf_tree_child), sorted by name */
    size_t nchildren;
    zf_layout *layout;      /* files: the array's layout (shared by .txt/.csv/.info) */
    zf_view view;
    int64_t mtime;          /* ns since the epoch, 0 if unknown: the newest time of the
                             * metadata documents (of a directory's, and of its
                             * children's), or when a change to it was seen
                             * (zf_tree_inherit_times); zf_tree_node_time adds the chunks' */
    int incomplete;         /* dirs: the store could not tell all of its entries (a
                             * listing or a child's metadata failed, store.h): a
                             * name not among children is unknown, not absent */
} zf_node;

typedef struct zf_tree zf_tree;

/* Walk the store and build the tree.  ZF_ENOTFOUND if the root holds no Zarr
 * metadata; ZF_ECORRUPT / ZF_EUNSUPPORTED (with a log line) if the root's own
 * metadata is invalid, ZF_EIO (with a log line: "cannot read the store") if
 * it cannot be read.  Arrays with invalid or unsupported
 * metadata are left out with a log line.  Each directory is walked once (by
 * device and inode): one reached again through a symlink (a loop, or a
 * second path to it) is not shown again, with a log line; a directory shows
 * under its real path if it has one, else under the first symlink to it in
 * the walk (names in byte order, symlinks after every real path).  store and
 * cache must outlive the tree. */
int zf_tree_build(const zf_store *store, zf_cache *cache, const zf_layout_opts *opts,
                  zf_tree **out);

/* Did the walk leave part of the store unknown (zf_node.incomplete)?  0, or
 * 1 with the first key and reason in why ("s3://b/p/g: HTTP 503 after 8
 * attempts").  A re-check keeps its last view rather than one with less. */
int zf_tree_incomplete(const zf_tree *t, char *why, size_t whycap);

/* Is the store's root an array (its files the root directory's), not a group? */
int zf_tree_root_is_array(const zf_tree *t);

/* The store key of the i-th array the walk found but does not show (of
 * another data type, or hidden by -o cf=); NULL past the last. */
const char *zf_tree_other(const zf_tree *t, size_t i);

/* Free the tree, its arrays and layouts (and the store it owns); NULL is allowed. */
void zf_tree_free(zf_tree *t);

/* The store the tree was built from. */
const zf_store *zf_tree_store(const zf_tree *t);

/* Make t own the store it was built from (one zf_store_update opened): it
 * is closed when t is freed. */
void zf_tree_own_store(zf_tree *t, zf_store *s);

/* The node with number ino, or NULL. */
const zf_node *zf_tree_node(const zf_tree *t, uint64_t ino);

/* Node i (0 <= i < zf_tree_count) in build order, for walking every node. */
const zf_node *zf_tree_node_at(const zf_tree *t, uint64_t i);

/* Child i (0 <= i < d->nchildren) of directory d. */
const zf_node *zf_tree_child(const zf_tree *t, const zf_node *d, size_t i);

/* The child called name of directory parent, or NULL. */
const zf_node *zf_tree_lookup(const zf_tree *t, uint64_t parent, const char *name);

/* Number of nodes (directories and files). */
uint64_t zf_tree_count(const zf_tree *t);

/* Does a fresh walk of the store differ from t: nodes added, removed or
 * renamed, metadata documents rewritten, or (if chunks) chunks of an array
 * whose size was computed rewritten?  Reads only metadata and stamps (no
 * chunk).  1 or 0; ZF_EIO (the key and reason in why) when a listing of such
 * chunks failed: the store could not tell. */
int zf_tree_stale(const zf_tree *t, const zf_tree *fresh, int chunks, char *why, size_t whycap);

/* When n's content last changed, as far as is known (ns since the epoch; 0
 * if unknown): n->mtime, or for a file of a sized array the newest time of
 * its stored chunks if that is later. */
int64_t zf_tree_node_time(const zf_node *n);

/* fresh replaces old (zf_tree_stale said so): each node of fresh that shows
 * what the node of old at its path showed keeps that node's time; a node
 * that changed (a file whose array's metadata documents or chunks changed,
 * a directory whose entries changed, a new node) moves forward to now (ns
 * since the epoch), at least a second past its old time.  May list the
 * chunks of old's sized arrays (as zf_tree_stale does). */
void zf_tree_inherit_times(zf_tree *fresh, const zf_tree *old, int64_t now);

/* A re-check without a rebuild, for a remote store whose every node came
 * from consolidated metadata: 1 if that document's version (ETag) is the one the
 * tree was built from (one HEAD) and, if chunks, no sized array's chunks
 * changed (a listing per sized array, where the store can list); 1 for an
 * immutable store (store.h: what moves is zf_store_update's to tell); 0 if
 * a rebuild must tell (always, for other stores); ZF_EIO (why) when a
 * listing of a sized array's chunks failed: the store could not tell. */
int zf_tree_unchanged(const zf_tree *t, int chunks, char *why, size_t whycap);

#endif
