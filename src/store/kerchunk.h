/* kerchunk.h - a kerchunk reference set as a store: a JSON document
 * (fsspec/kerchunk spec, version 0 or 1; also gzip- or zstd-compressed)
 * mapping each key of a Zarr v2 store to inline bytes or to a byte range of
 * a target file, shown as that store.
 *
 *   - Keys: the document's, checked (store keys, no NUL, each once, none both
 *     a value and a directory); listings answered from it, complete.
 *   - Values: inline strings (raw bytes; "base64:" decoded; nested JSON as
 *     its text), [url, offset, length] ranges and [url] whole objects.
 *     Version 1's templates ({{name}}) and gen entries (the cartesian
 *     product of their dimensions) are expanded; any other template
 *     expression is refused.
 *   - Targets: absolute URLs (file://, /path, http(s)://, s3://, gs://) or
 *     paths relative to the document's directory, read through
 *     store/targets.h: only under the directory, host or bucket holding the
 *     document, or a prefix the user authorised (-o virtual=).  A target that
 *     is missing or shorter than its range is EIO, never absence.
 *   - Stamps identify a value by its reference (inline bytes; URL, offset,
 *     length), so a persisted index serves later mounts of the same set.
 * The store is immutable.  Thread-safe once open. */
#ifndef ZF_KERCHUNK_H
#define ZF_KERCHUNK_H

#include <stddef.h>

#include "store/store.h"
#include "store/targets.h"

/* 1 if spec names a reference document rather than a store: a local
 * regular file, or a remote URL whose name ends in .json, .json.gz or
 * .json.zst. */
int zf_kerchunk_spec(const char *spec);

/* How to open a reference set. */
typedef struct zf_kerchunk_opts {
    const char *virtual_ok;         /* more prefixes targets may be read from (consent.h) */
    zf_targets_open_fn open_target; /* opens the store of a target's location root */
    void *open_ctx;                 /* its context, taken (free_ctx) */
    void (*free_ctx)(void *);
} zf_kerchunk_opts;

/* Open the reference document called name in the store dir (taken: closed
 * on failure too; it is where the document lives, url its whole URL or
 * absolute path) and o's context.  *out is the caller's.  Errors with a
 * one-line reason: ZF_ENOTFOUND (no such document), ZF_ECORRUPT (malformed,
 * unsafe or too large for memory), ZF_EUNSUPPORTED, ZF_EINVAL (a bad
 * -o virtual=), ZF_EIO, ZF_ENOMEM. */
int zf_store_open_kerchunk(zf_store *dir, const char *name, const char *url,
                           const zf_kerchunk_opts *o, zf_store **out, char *err, size_t errcap);

/* Is the local store s a Parquet reference set (a .zmetadata with
 * "record_size")?  1 with the reason in err; 0 otherwise. */
int zf_kerchunk_parquet(const zf_store *s, char *err, size_t errcap);

/* Parse a reference document (text, n bytes) as the store does, and drop
 * it: ZF_OK or the error (fuzzing and tests). */
int zf_kerchunk_check(const char *text, size_t n, char *err, size_t errcap);

#endif
