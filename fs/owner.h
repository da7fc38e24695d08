/* owner.h - the owner, group and permission bits the mount shows: -o uid=,
 * gid=, umask= (as sshfs and other FUSE file systems take them), else, with
 * allow_other, a local store's own, so that other users read through the
 * mount only what they could read in the store (the kernel checks them:
 * default_permissions), else the mounting user's. */
#ifndef ZARRFS_OWNER_H
#define ZARRFS_OWNER_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What the options ask (a field whose *_set is 0 was not given). */
typedef struct zf_owner {
    int uid_set, gid_set, umask_set;
    uid_t uid;
    gid_t gid;
    mode_t umask;
} zf_owner;

/* The attributes every node shows. */
typedef struct zf_owner_attrs {
    uid_t uid;
    gid_t gid;
    mode_t file_mode; /* permission bits of files: 0444 less the mask */
    mode_t dir_mode;  /* of directories: 0555 less the mask */
} zf_owner_attrs;

/* Read -o uid= and gid= (a number, or a user or group name) and umask= (an
 * octal number up to 0777); each NULL if not given.  0, or -1 with a
 * one-line reason in err. */
int zf_owner_parse(const char *uid, const char *gid, const char *umask, zf_owner *o, char *err,
                   size_t errcap);

/* The attributes to show: what o gives; for the rest, with allow_other and
 * a local store (store_root: the stat of its root directory; NULL for a
 * remote store), the store's owner, group, and read permission for each of
 * user, group and others that may both list and enter its root; otherwise
 * the mounting user and group, and every read permission. */
zf_owner_attrs zf_owner_resolve(const zf_owner *o, int allow_other, const struct stat *store_root);

#endif
