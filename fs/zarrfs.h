/* zarrfs.h - state shared by the FUSE front end's files. */
#ifndef ZARRFS_FS_H
#define ZARRFS_FS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <pthread.h>

#include "tree/tree.h"

/* One version of the tree.  The current-tree slot, requests and open files
 * hold references; the tree is freed when the last reference goes. */
typedef struct zf_gen {
    zf_tree *tree;
    unsigned long refs;
    struct zf_gen *prev, *next; /* every live generation, for shutdown */
} zf_gen;

typedef struct zf_fs {
    const zf_store *store;
    zf_cache *cache;
    const zf_layout_opts *opts;
    double timeout;          /* entry/attr timeout, and how often the store is re-checked */
    uid_t uid;
    gid_t gid;
    struct timespec mtime;   /* shown as every node's times */
    struct fuse_session *se;
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* wakes the notifier thread to stop (CLOCK_MONOTONIC) */
    pthread_t notifier;
    int notifier_running;
    zf_gen *cur;             /* the current tree */
    zf_gen *live;            /* list of all generations not yet freed */
    int stopping;
    uint64_t generation;     /* versions of the store seen so far, minus one (notifier only) */
    const char *mountpoint;  /* where we are mounted (absolute) */
    unsigned read_ahead_kb;  /* read-ahead window to set on the mount; 0: leave it */
    int read_ahead_asked;    /* given with -o read_ahead: say when it cannot be set */
    int read_ahead_tried;    /* the window was set (or failed) on a first open */
} zf_fs;

/* The current generation with one reference; give it back with zf_gen_put.
 * Never waits for a re-check of the store (the notifier thread does those). */
zf_gen *zf_gen_get(zf_fs *fs);

/* Drop a reference; the last one frees the generation's tree. */
void zf_gen_put(zf_fs *fs, zf_gen *g);

/* Make tree the first generation (fs takes ownership).  0 or -ENOMEM. */
int zf_gen_start(zf_fs *fs, zf_tree *tree);

/* Start the thread that re-checks the store every timeout, swaps in a rebuilt
 * tree and invalidates the kernel's caches; call it after fuse_daemonize
 * (threads do not survive its fork).  0 or a negative errno. */
int zf_gen_start_notifier(zf_fs *fs);

/* Stop the notifier thread (before the session is unmounted); waits for a
 * re-check in progress. */
void zf_gen_stop_notifier(zf_fs *fs);

/* Stop the notifier and free every generation at shutdown, including those
 * still held by files the kernel never released. */
void zf_gen_stop(zf_fs *fs);

/* Set the read-ahead window (KiB) of the FUSE mount at mountpoint through
 * sysfs; needs root and must follow the INIT reply.  0 or a negative errno. */
int zf_readahead_set(const char *mountpoint, unsigned kb);

/* The low-level operation table; userdata is a zf_fs. */
extern const struct fuse_lowlevel_ops zf_fs_ops;

#endif
