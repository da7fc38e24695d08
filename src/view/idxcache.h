/* idxcache.h - offset indexes persisted between mounts.
 *
 * A layout's offset index costs a decode pass to build; it is saved to
 * DIR/<fingerprint>.idx and reused by a later mount when the fingerprint
 * matches.  The fingerprint covers everything the index depends on: the
 * array path, the metadata, the text options, and the stamp of every stored
 * chunk: device, inode, ctime, size and mtime, as git's index keys files,
 * so that rewriting a chunk with the same size and restoring its mtime (tar
 * -x, cp -p, rsync -a of another version) still invalidates it.  A store
 * moved within its file system keeps its indexes; a copy (new inodes) gets
 * its own.  A remote store's chunk stamps are versions (size and ETag), so a
 * second mount on any machine sharing the directory finds the index by a
 * listing alone; a store that cannot be listed (plain HTTP) keys it by its
 * metadata documents' ETags and saves the chunk versions with it, each
 * checked when its chunk is read (chunk/array.h: zf_array_snapshot).  The
 * layout also checks a local store's loaded index's last block against the
 * chunks holding it (layout.c); a remote store's is not (no chunk is fetched
 * to size an array whose index was persisted).  Files are written atomically (temp file +
 * rename); damaged, foreign or non-regular files are ignored. */
#ifndef ZF_IDXCACHE_H
#define ZF_IDXCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/fp.h"

/* The default directory: $XDG_CACHE_HOME/zarrfs or $HOME/.cache/zarrfs, into
 * buf (capacity cap).  Returns 0, or -1 if neither variable is set. */
int zf_idxcache_default_dir(char *buf, size_t cap);

/* Load the index saved under fp: n entries into each of off0 and off1
 * (caller-owned).  Returns 0 if found and well formed.  extra NULL: an index
 * saved without extra bytes; else one saved with them, whose extra bytes (at
 * most max_extra) go to *extra (malloc'd, the caller's) and *extra_len. */
int zf_idxcache_load(const char *dir, const zf_fp *fp, uint64_t n, uint64_t *off0, uint64_t *off1,
                     size_t max_extra, void **extra, size_t *extra_len);

/* Save an index of n entries per view under fp (creating dir); best effort.
 * extra (may be NULL) is saved with it: the chunk versions of a store that
 * cannot be listed, which the index was computed from (chunk/array.h). */
void zf_idxcache_save(const char *dir, const zf_fp *fp, uint64_t n, const uint64_t *off0,
                      const uint64_t *off1, const void *extra, size_t extra_len);

/* Remove the index saved under fp, if any (it no longer matches the store). */
void zf_idxcache_drop(const char *dir, const zf_fp *fp);

#endif
