/* targets.h - byte ranges of outside objects, read on the user's consent:
 * the targets of an Icechunk repository's virtual chunks or of a kerchunk
 * reference set.
 *
 * A request names an object by URL (file:///PATH, a bare /PATH,
 * http[s]://HOST[:PORT]/PATH, s3://BUCKET/KEY, gs://BUCKET/KEY; paths and
 * keys %-decoded, as Icechunk does; a query is not part of the object), a
 * range, and optionally the version the object must still have: an ETag
 * (surrounding quotes and a weak "W/" ignored; for a local file, the ETag
 * Icechunk's local store gives it: "INODE-MTIME_US-SIZE" in hex) or a
 * last-modified time (the object must not have been modified after it).
 *
 * The pool opens one store per location root, through the caller's opener
 * (so that the same options, credentials and retries as the mount apply,
 * and store/ needs no circle through open.c): a local directory rooted at
 * the consent prefix that allows the file (symlinks never followed out of
 * it), an http(s) origin, an s3 or gs bucket.  Neighbouring ranges of one
 * object in one call are read together (gaps up to 64 KiB, up to 16 MiB a
 * read).
 *
 * Every failure is ZF_EIO with a one-line reason after the object's URL
 * (without a query: it may hold a signature), never a fill value or
 * other bytes: a location the consent does not allow ("not authorised; add
 * -o virtual=CONTAINER"), a missing object, one shorter than the range, a
 * changed ETag or modification time, one whose server gives no ETag or
 * Last-Modified to check, a failing server; ZF_ENOMEM.  Thread-safe. */
#ifndef ZF_TARGETS_H
#define ZF_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "store/consent.h"
#include "store/store.h"

/* Open the store of a location root: an absolute local directory
 * ("/data/x"), "http[s]://HOST[:PORT]", "s3://BUCKET" or "gs://BUCKET".
 * *out is the caller's; a one-line reason in err on failure. */
typedef int (*zf_targets_open_fn)(void *ctx, const char *spec, zf_store **out, char *err,
                                  size_t errcap);

typedef struct zf_targets zf_targets;

/* A pool reading what consent allows, opening stores with open(ctx, ...).
 * Takes consent and ctx (ctx_free(ctx) when the pool is freed; may be NULL).
 * NULL when out of memory (consent and ctx are freed then too). */
zf_targets *zf_targets_new(zf_consent *consent, zf_targets_open_fn open, void *ctx,
                           void (*ctx_free)(void *));

/* Close every store opened and free the pool; NULL is allowed. */
void zf_targets_free(zf_targets *t);

/* The consent the pool reads under. */
const zf_consent *zf_targets_consent(const zf_targets *t);

/* One range to read. */
typedef struct zf_target_req {
    const char *url;        /* in: the object */
    uint64_t off;           /* in: the range */
    size_t len;
    uint8_t *buf;           /* in: room for len bytes (the caller's) */
    const char *etag;       /* in: the ETag it must have; NULL or "": no check */
    uint32_t last_modified; /* in: it must not be newer (s since the epoch); 0: no check */
    char *err;              /* out: the reason on failure (may be NULL) */
    size_t errcap;
    int rc;                 /* out: ZF_OK, ZF_EIO or ZF_ENOMEM */
} zf_target_req;

/* Read every request's range (at once where the stores allow); each rc says
 * its own result.  ZF_OK if all succeeded, else the first failure's rc. */
int zf_targets_read(zf_targets *t, zf_target_req *reqs, size_t n);

/* The stamp of the object at url now (its size: a reference to a whole
 * object), read under consent; errors as zf_targets_read's. */
int zf_targets_stamp(zf_targets *t, const char *url, zf_stamp *st, char *err, size_t errcap);

/* Does consent allow url?  Else the container to authorise in out
 * ("s3://bucket/", "file:///data/dir/"); -1 if url is not a location at all. */
int zf_targets_allowed(const zf_targets *t, const char *url, char *out, size_t cap);

#endif
