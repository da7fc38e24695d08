/* walk_impl.h - private to tree/: the state of one walk of the store, shared
 * by the walk (walk.c) and the classification of each node it visits
 * (classify.c). */
#ifndef ZF_WALK_IMPL_H
#define ZF_WALK_IMPL_H

#include "tree_impl.h"
#include "zarr/consolidated.h"

#define ZF_MAX_META ((size_t)16 << 20) /* largest metadata document of a node below the root */

/* a directory walked, by identity, and where it was first walked */
typedef struct zf_seen_dir {
    uint64_t dev, ino;
    char *path;        /* NULL: a free slot */
} zf_seen_dir;

/* a child directory reached through a symlink, walked after the real paths */
typedef struct zf_later {
    size_t parent;     /* node id of the directory listing it */
    int depth;
    uint64_t dev, ino;
    char *path;        /* its key (owned) */
} zf_later;

/* one walk of the store into a tree */
typedef struct zf_walker {
    zf_tree *t;
    const zf_store *store;
    zf_cons *cons;              /* consolidated metadata; NULL if none */
    int cons_rc;                /* why cons is NULL (ZF_ENOTFOUND: the store has none) */
    int no_root_v3;             /* the root has no zarr.json (found while loading cons) */
    char cons_err[256];
    char path[ZF_KEY_MAX];      /* key of the node being visited ("" the root) */
    size_t plen;
    size_t root_max;            /* largest document at the root (root_limit) */
    zf_seen_dir *seen;          /* open addressing, a power of two slots */
    size_t seen_cap, nseen;
    zf_later *later;            /* a queue: walked in order, appended while walking */
    size_t nlater, later_cap;
    size_t shown, other, left_out; /* arrays shown, arrays of other types, nodes left out */
    zf_fp origin;               /* stamps of the documents the node classified last came from */
    int64_t origin_time;        /* the newest of their times (zf_stamp_time), 0 if none */
    char unknown[400];          /* why the node classified last is unknown (ZF_EIO) */
    int own_docs;               /* some node's own metadata documents were read */
} zf_walker;

/* What is at path: ZF_OK with *kind (and *m for timedelta arrays), ZF_ENOTFOUND
 * if no Zarr metadata, ZF_EIO (w->unknown says why; not logged, but for the
 * root at mount) if the store could not tell, or another error already
 * logged.  w->origin gets the stamps of the documents it came from,
 * w->origin_time the newest of their times. */
int zf_walk_classify(zf_walker *w, const char *path, zf_node_kind *kind, zf_meta *m);

/* Log why the root group's consolidated metadata is not used, if it has some. */
void zf_walk_log_cons_unused(const zf_walker *w);

#endif
