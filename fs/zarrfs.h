/* zarrfs.h - state shared by the FUSE front end's files. */
#ifndef ZARRFS_FS_H
#define ZARRFS_FS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "tree.h"

typedef struct zf_fs {
    zf_tree *tree;
    double timeout;          /* entry/attr timeout in seconds (data is immutable) */
    uid_t uid;
    gid_t gid;
    struct timespec mtime;   /* shown as every node's times */
} zf_fs;

/* The low-level operation table; userdata is a zf_fs. */
extern const struct fuse_lowlevel_ops zf_fs_ops;

#endif
