/* precheck.h - what zarrfs checks before it mounts anything: the mount
 * point, and the options it leaves to libfuse.  Each failure is one line on
 * stderr, "zarrfs: ...", that says what to do. */
#ifndef ZARRFS_PRECHECK_H
#define ZARRFS_PRECHECK_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

/* Check MOUNTPOINT mnt: a directory (a /dev/fd/N of a mount helper is
 * libfuse's to check), not the disconnected mount point of a daemon that
 * died (ENOTCONN: the line says to run fusermount3 -u), not a zarrfs mount
 * already (a mount on top of it is refused).  0, or 1 after a line. */
int zf_precheck_mountpoint(const char *mnt);

/* Log a warning if MOUNTPOINT mnt is not empty (what it holds is hidden
 * while mounted); once the store is known to open, just before mounting. */
void zf_precheck_warn_not_empty(const char *mnt);

/* Check the options args still holds for libfuse (after fuse_parse_cmdline),
 * as fuse_session_new will read them, before the store is opened: an
 * unknown one is refused with the name of the known option nearest to it
 * ("unknown option: fromat=iso (did you mean format?)").  libfuse logs
 * through log_func afterwards.  0, or 1 after a line. */
int zf_precheck_fuse_options(const struct fuse_args *args, fuse_log_func_t log_func);

/* The local store store is an array, not a group: if the directory holding
 * it is a Zarr group (the array's coordinates live there), log that the
 * mount shows no coordinate labels and which directory to mount instead. */
void zf_precheck_root_array(const char *store);

#endif
