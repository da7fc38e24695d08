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
 * rename).
 *
 * Both the directory and the files are untrusted: the directory is used only
 * when every directory on the way to it is root's or the daemon's user's and
 * writable by nobody else (or sticky, as /tmp), and it is the user's own and
 * writable by nobody else (missing ones are made 0700); a symlink on the way
 * is followed only when root or the user owns it (the first refusal is
 * logged once).  Files are opened beneath the checked directory without
 * following symlinks, and must be regular files of the user with the exact
 * header, count and length; what the offsets say is the caller's to check
 * against the metadata (view/layout_index.c).
 *
 * The directory is bounded: after each save, the indexes beyond the bytes
 * asked are removed, least recently used first (a file's mtime is its last
 * save or load). */
#ifndef ZF_IDXCACHE_H
#define ZF_IDXCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/fp.h"

/* The default directory: $XDG_CACHE_HOME/zarrfs (an absolute one) or
 * $HOME/.cache/zarrfs, into buf (capacity cap).  Returns 0, or -1 if
 * neither is set. */
int zf_idxcache_default_dir(char *buf, size_t cap);

/* Load the index saved under fp: n entries into each of off0 and off1
 * (caller-owned).  extra NULL: an index saved without extra bytes; else one
 * saved with them, whose extra bytes (at most max_extra) go to *extra
 * (malloc'd, the caller's) and *extra_len.  ZF_OK; ZF_ENOTFOUND (no such
 * file, or no usable directory); ZF_ECORRUPT with the reason in why (cap
 * bytes) for a file that is there but not a well-formed index of fp;
 * ZF_ENOMEM. */
int zf_idxcache_load(const char *dir, const zf_fp *fp, uint64_t n, uint64_t *off0, uint64_t *off1,
                     size_t max_extra, void **extra, size_t *extra_len, char *why, size_t cap);

/* Remove the index saved under fp (a damaged one, or one that no longer
 * matches the store); best effort. */
void zf_idxcache_drop(const char *dir, const zf_fp *fp);

/* Save an index of n entries per view under fp (creating dir); best effort.
 * extra (may be NULL) is saved with it: the chunk versions of a store that
 * cannot be listed, which the index was computed from (chunk/array.h).
 * Then remove the least recently used other indexes of dir while all of
 * them hold more than max_bytes (0: no bound). */
void zf_idxcache_save(const char *dir, uint64_t max_bytes, const zf_fp *fp, uint64_t n,
                      const uint64_t *off0, const uint64_t *off1, const void *extra,
                      size_t extra_len);

#endif
