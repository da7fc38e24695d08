/* zarrfs.h - state shared by the FUSE front end's files. */
#ifndef ZARRFS_FS_H
#define ZARRFS_FS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <pthread.h>

#include "tree/tree.h"

/* -o timeout=never: the kernel keeps names and sizes, and the store is
 * re-checked only when asked (SIGUSR1), as if the timeout were 31 years */
#define ZF_TIMEOUT_NEVER 1e9

/* One version of the tree.  The current-tree slot, requests, open files and
 * kernel-held node numbers (zf_inodes) hold references; the tree is freed
 * when the last reference goes. */
typedef struct zf_gen {
    zf_tree *tree;
    unsigned long refs;
    struct zf_gen *prev, *next; /* every live generation, for shutdown */
} zf_gen;

/* A node number the kernel holds: its lookup count (replies to LOOKUP minus
 * FORGETs) and the generation that answers for it (holding one reference). */
typedef struct zf_ino_ent {
    uint64_t ino;
    uint64_t nlookup;
    zf_gen *gen;
    struct zf_ino_ent *next;
} zf_ino_ent;

/* Every node number the kernel holds (the root, never looked up, is not in it). */
typedef struct zf_inodes {
    zf_ino_ent **buckets;
    size_t nbuckets;         /* 0 or a power of two */
    size_t count;
} zf_inodes;

/* The arrays sized ahead of their first request (presize.c). */
typedef struct zf_presize zf_presize;

/* The part of every open file's handle that links it into zf_fs.open (ops.c). */
typedef struct zf_open_link {
    struct zf_open_link *prev, *next;
} zf_open_link;

typedef struct zf_fs {
    const zf_store *store;
    zf_cache *cache;
    const zf_layout_opts *opts;
    double timeout;          /* entry/attr timeout, and how often the store is re-checked */
    uid_t uid;               /* owner, group and permission bits of every node (owner.h) */
    gid_t gid;
    mode_t file_mode, dir_mode;
    struct timespec mtime;   /* the times of a node whose own are unknown (tree.h) */
    struct fuse_session *se;
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* wakes the notifier thread to stop (CLOCK_MONOTONIC) */
    pthread_t notifier;
    int notifier_running;
    pthread_t signal_waiter; /* SIGUSR1: re-check now (gen.c) */
    int signal_waiter_running;
    zf_gen *cur;             /* the current tree */
    zf_gen *live;            /* list of all generations not yet freed */
    zf_inodes inodes;        /* node numbers the kernel holds, and their generations */
    zf_open_link *open;      /* handles of open files and directories (under mu) */
    int stopping;
    uint64_t generation;     /* versions of the store seen so far, minus one (notifier only) */
    int recheck_failing;     /* the last re-check could not tell (notifier only) */
    int recheck_soon;        /* a request met a part the store could not tell: re-check
                                without waiting a whole timeout (under mu) */
    const char *mountpoint;  /* where we are mounted (absolute) */
    unsigned read_ahead_kb;  /* read-ahead window to set on the mount; 0: leave it */
    int read_ahead_asked;    /* given with -o read_ahead: say when it cannot be set */
    int read_ahead_tried;    /* the window was set (or failed) on a first open */
    uint64_t presize_bytes;  /* -o presize: values sized ahead per directory (bytes) */
    zf_presize *presize;     /* NULL until the session's threads start */
} zf_fs;

/* The current generation with one reference; give it back with zf_gen_put.
 * Never waits for a re-check of the store (the notifier thread does those). */
zf_gen *zf_gen_get(zf_fs *fs);

/* Node number ino as the kernel knows it: from the current tree if it has
 * the number, otherwise from the generation the kernel was given it by.  *g
 * gets that generation with one reference (zf_gen_put) even when the node is
 * NULL (a number no generation knows). */
const zf_node *zf_gen_node(zf_fs *fs, uint64_t ino, zf_gen **g);

/* Count a LOOKUP reply naming node ino of g (call before replying): ino then
 * resolves to g (or to a newer tree that has the number) until forgotten.
 * 0 or -ENOMEM. */
int zf_gen_remember(zf_fs *fs, zf_gen *g, uint64_t ino);

/* FORGET: the kernel dropped n references to ino (or a reply counted by
 * zf_gen_remember never reached it); the last one releases its generation. */
void zf_gen_forget(zf_fs *fs, uint64_t ino, uint64_t n);

/* One more reference to g, which the caller holds one of. */
void zf_gen_hold(zf_fs *fs, zf_gen *g);

/* Drop a reference; the last one frees the generation's tree. */
void zf_gen_put(zf_fs *fs, zf_gen *g);

/* Make tree the first generation (fs takes ownership).  0 or -ENOMEM. */
int zf_gen_start(zf_fs *fs, zf_tree *tree);

/* Start the thread that re-checks the store every timeout, swaps in a rebuilt
 * tree and invalidates the kernel's caches, and the one that has it re-check
 * at once on SIGUSR1 (which the caller keeps blocked in every thread); call
 * it after fuse_daemonize (threads do not survive its fork).  0 or a
 * negative errno. */
int zf_gen_start_notifier(zf_fs *fs);

/* A request met a directory the store could not tell all of, or a read
 * found a chunk changed since its file was sized: have the notifier
 * re-check soon (as soon as its pacing allows) rather than after a whole
 * timeout, so that a later request finds what the store says then. */
void zf_gen_recheck_soon(zf_fs *fs);

/* Stop the notifier thread and the SIGUSR1 one (before the session is
 * unmounted); waits for a re-check in progress. */
void zf_gen_stop_notifier(zf_fs *fs);

/* Set up sizing ahead the other arrays of a directory whose first array is
 * sized, at most budget bytes of values (8 per value) per directory; 0:
 * never.  Its threads (ZF_PRESIZE_THREADS at most) start with the first
 * arrays queued, so after fuse_daemonize.  NULL without memory. */
zf_presize *zf_presize_start(zf_fs *fs, uint64_t budget);

/* Node n of generation g is about to be sized by a request: if its array
 * is not sized yet, queue the other arrays of its directory (once per
 * directory and generation).  p may be NULL. */
void zf_presize_dir(zf_presize *p, zf_gen *g, const zf_node *n);

/* Drop the queued arrays, cancel and join the passes running, free p (NULL
 * allowed).  Before the generations are freed. */
void zf_presize_stop(zf_presize *p);

/* Stop the notifier and free every generation at shutdown, including those
 * still held by files or node numbers the kernel never released. */
void zf_gen_stop(zf_fs *fs);

/* The table of kernel-held numbers (inodes.c; the caller holds fs->mu). */
zf_ino_ent *zf_inodes_find(const zf_inodes *t, uint64_t ino);
/* A new entry for ino (count 0, no generation) in *out; 0 or -ENOMEM. */
int zf_inodes_add(zf_inodes *t, uint64_t ino, zf_ino_ent **out);
/* Unlink and free an entry (its generation reference is the caller's). */
void zf_inodes_remove(zf_inodes *t, zf_ino_ent *e);
/* Call fn on every entry (fn may change an entry's gen, not the table). */
void zf_inodes_each(const zf_inodes *t, void (*fn)(zf_ino_ent *e, void *arg), void *arg);
/* Free every entry (their references are the caller's). */
void zf_inodes_clear(zf_inodes *t);

/* Set the read-ahead window (KiB) of the FUSE mount at mountpoint through
 * sysfs; needs root and must follow the INIT reply.  0 or a negative errno. */
int zf_readahead_set(const char *mountpoint, unsigned kb);

/* zarrfs --help: usage, views, options (options.h), then libfuse's (help.c). */
void zf_help_print(const char *prog);
/* zarrfs --version: ours first, then libfuse's. */
void zf_version_print(void);

/* Free the handles of files the kernel never released (the session has
 * ended: SIGTERM with files open); before zf_gen_stop. */
void zf_fs_close_files(zf_fs *fs);

/* The low-level operation table; userdata is a zf_fs. */
extern const struct fuse_lowlevel_ops zf_fs_ops;

#endif
