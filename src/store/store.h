/* store.h - read-only access to a Zarr store held in a local directory.
 *
 * Keys are '/'-separated paths relative to the store root.  Every open is
 * confined beneath the root (symlinks that leave the store are refused unless
 * the store was opened with follow_symlinks).  The store is never written.
 * A zf_store is immutable after open and safe to use from many threads. */
#ifndef ZF_STORE_H
#define ZF_STORE_H

#include <stddef.h>
#include <stdint.h>

/* Longest store key, in bytes with its NUL (a Linux path's limit). */
#define ZF_KEY_MAX 4096

typedef struct zf_store zf_store;

/* Open the directory at path as a store; *out owns it (zf_store_close). */
int zf_store_open(const char *path, int follow_symlinks, zf_store **out);

/* Close a store; NULL is allowed. */
void zf_store_close(zf_store *s);

/* The root directory path the store was opened with. */
const char *zf_store_path(const zf_store *s);

/* Read the whole value of key into a new malloc'd buffer (*buf, caller frees).
 * ZF_ENOTFOUND if the key does not exist; ZF_ECORRUPT if it is larger than
 * max bytes or is not a regular file; ZF_EIO on read errors. */
int zf_store_read(const zf_store *s, const char *key, size_t max, uint8_t **buf, size_t *n);

/* A caller-owned byte buffer that reads reuse and grow (free p when done). */
typedef struct zf_store_buf {
    uint8_t *p;
    size_t cap;
} zf_store_buf;

/* As zf_store_read, but into b, grown (realloc) when the value is larger
 * than b->cap; b stays valid (and owned by the caller) on every error. */
int zf_store_read_buf(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n);

/* Make b hold at least n bytes (ZF_ENOMEM leaves it as it was). */
int zf_store_buf_reserve(zf_store_buf *b, size_t n);

/* Size in bytes of key's value; ZF_ENOTFOUND if absent. */
int zf_store_size(const zf_store *s, const char *key, uint64_t *size);

/* What a key looked like at one moment: size and modification time. */
typedef struct zf_stamp {
    uint64_t size;  /* UINT64_MAX: the key did not exist */
    int64_t mtime;  /* ns since the epoch */
} zf_stamp;

/* Stamp of key now; an absent key gets size UINT64_MAX (and ZF_ENOTFOUND). */
int zf_store_stamp(const zf_store *s, const char *key, zf_stamp *st);

/* Read exactly len bytes of key at offset off into buf (caller-owned).
 * ZF_ECORRUPT if the value is shorter than off + len. */
int zf_store_read_range(const zf_store *s, const char *key, uint64_t off, size_t len, uint8_t *buf);

/* Does key exist as a regular file (1), directory (2), or not at all (0)? */
int zf_store_kind(const zf_store *s, const char *key);

/* Called once per entry of a listed directory with the entry's name. */
typedef int (*zf_store_list_fn)(void *ctx, const char *name, int is_dir);

/* List the entries of directory key ("" for the root), skipping "." and "..";
 * stops early and returns fn's value if fn returns nonzero. */
int zf_store_list(const zf_store *s, const char *key, zf_store_list_fn fn, void *ctx);

#endif
