/* store.h - the store interface: read-only access to the keys of a Zarr store.
 *
 * A store is a table of functions (zf_store_ops, after squashfuse's
 * sqfs_input) over a backend's state; each backend has its own constructor
 * (the local directory: zf_store_open_local).  Callers use the zf_store_*
 * functions below, never the table itself.
 *
 * Keys are '/'-separated paths relative to the store root ("" is the root;
 * no leading '/', no "." or ".." components).  The store is never written.
 *
 * Contract, for every backend:
 *   - Threads: a zf_store is immutable after its constructor returns; every
 *     function may be called from many threads at once.
 *   - Blocking: no key's content may block a call indefinitely (a FIFO,
 *     device or socket where a file is expected is refused, not opened).
 *   - Ownership: buffers, requests and reason buffers belong to the caller;
 *     names passed to a list callback are valid during the call only.
 *   - Errors: 0 (ZF_OK) or a negative zf_err (base/err.h):
 *       ZF_ENOTFOUND  the key does not exist: the store said so (below)
 *       ZF_ECORRUPT   it exists but cannot be used as asked: not a regular
 *                     file (or not a directory, for lists), a symlink that is
 *                     dangling or leaves the store, larger than the caller's
 *                     bound, shorter than the range asked for
 *       ZF_EIO        the backend failed: whether the key exists is unknown
 *       ZF_ENOMEM     out of memory
 *     Functions that take (err, errcap) write a one-line reason there on
 *     failure ("a FIFO, not a regular file"); err may be NULL (errcap 0).
 *     The store never logs: callers log, once, naming the store and key.
 *   - Presence: a key is absent only when the store said so.  ZF_ENOTFOUND
 *     (and a listing without the key) comes only from a definitive answer:
 *     ENOENT or ENOTDIR of a local path, HTTP 404 or 410, S3 NoSuchKey, a
 *     listing that completed, every page of it.  Every other outcome (a
 *     refused or failed request, EACCES, EIO, a timeout, an answer that
 *     cannot be parsed, a listing cut short) is an error, never absence, and
 *     callers treat it so: what a read, stat or lookup needs and the store
 *     could not tell fails (EIO at the FUSE boundary), nothing learned from
 *     a failed call is kept, and the next access asks again. */
#ifndef ZF_STORE_H
#define ZF_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "base/fp.h"
#include "base/sbuf.h"

/* Longest store key, in bytes with its NUL (a Linux path's limit). */
#define ZF_KEY_MAX 4096

/* What a key is. */
typedef enum zf_store_kind {
    ZF_STORE_ABSENT = 0, /* no such key */
    ZF_STORE_FILE,       /* a regular file: a value that can be read */
    ZF_STORE_DIR,        /* a directory (a prefix holding keys) */
    ZF_STORE_OTHER,      /* a FIFO, socket or device: never opened */
    ZF_STORE_LINK        /* a symlink not followed: dangling or leaving the store */
} zf_store_kind;

/* What a key looked like at one moment, identifying one version of it: two
 * stamps are equal only if nothing a user does by accident (rewriting a file
 * with the same size and restoring its mtime, copying, replacing it) could
 * have changed the value in between.  Fields a backend has no notion of are
 * 0.  No padding: stamps may be hashed as bytes (zf_stamp_digest). */
typedef struct zf_stamp {
    uint64_t size;      /* bytes of a file's value (0 for other kinds) */
    int64_t mtime;      /* modification time, ns since the epoch */
    int64_t ctime;      /* status change time, ns (local files: not settable by users) */
    uint64_t dev, ino;  /* identity of the object behind the key */
    zf_fp tag;          /* digest of an opaque version tag (an ETag); {0, 0}: none */
    uint32_t kind;      /* zf_store_kind; every other field is 0 for ZF_STORE_ABSENT */
    uint32_t zero;      /* always 0 */
} zf_stamp;

/* A caller-owned byte buffer that reads reuse and grow (free p when done). */
typedef struct zf_store_buf {
    uint8_t *p;
    size_t cap;
} zf_store_buf;

/* What a read saw of the version of the object it read, from the same
 * response or open file as the bytes (zf_store_req.seen), for callers that
 * check it against a version they were told of (store/targets.h). */
typedef struct zf_store_seen {
    char etag[128];     /* the ETag as sent, quotes included; "" if none */
    int64_t mtime_ns;   /* Last-Modified, or a local file's mtime; 0 if unknown */
    uint64_t ino;       /* a local file's inode; 0 otherwise */
    uint64_t size;      /* the whole object's size; 0 if unknown */
} zf_store_seen;

/* One byte range to read in a zf_store_read_many call. */
typedef struct zf_store_req {
    const char *key;
    uint64_t off;
    size_t len;
    uint8_t *buf;       /* caller-owned, room for len bytes */
    char *err;          /* reason on failure (may be NULL) */
    size_t errcap;
    int rc;             /* out: ZF_OK, or why this range could not be read */
    zf_store_seen *seen; /* optional out (NULL: not asked): filled when rc is ZF_OK */
} zf_store_req;

/* One entry of a listed prefix. */
typedef struct zf_store_entry {
    const char *name;   /* one key component (no '/'); valid during the call */
    zf_stamp stamp;     /* of what the name leads to: kind says file or dir */
    int alias;          /* reached through a symlink (another path may lead there too) */
} zf_store_entry;

/* Flags of zf_store_list: ZF_LIST_KINDS asks only for each entry's kind (the
 * backend may then leave the stamp's other fields 0 and answer faster, e.g.
 * from the directory entry alone); 0 asks for whole stamps. */
#define ZF_LIST_KINDS 1u

/* Called once per entry of a listed prefix; nonzero stops the listing.
 * Entries may come before the listing fails (a later page): the caller keeps
 * what it gathered only when zf_store_list returns ZF_OK. */
typedef int (*zf_store_list_fn)(void *ctx, const zf_store_entry *e);

typedef struct zf_store zf_store;

/* A backend: every function follows the contract above. */
typedef struct zf_store_ops {
    /* free the backend's state (s itself is freed by zf_store_close) */
    void (*close)(zf_store *s);
    /* whole value of key into b (grown as needed, at most max bytes); *st
     * gets the stamp of the version read, taken before reading (a remote
     * store: from the same response, never a second request) */
    int (*read)(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                zf_stamp *st, char *err, size_t errcap);
    /* every request's range into its buffer; may run them in any order or at once */
    int (*read_many)(const zf_store *s, zf_store_req *reqs, size_t n);
    /* stamp of key now (a remote store: from a HEAD, never a GET) */
    int (*stamp)(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap);
    /* entries directly under prefix, with their stamps (or kinds: flags);
     * ZF_OK only when every entry was passed to fn */
    int (*list)(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                void *ctx, char *err, size_t errcap);
    /* optional (NULL: the store never moves): a store showing one version of
     * something that moves (an Icechunk branch) opens, in *next, a store
     * showing its version now, or sets *next NULL while s still shows it */
    int (*update)(const zf_store *s, zf_store **next, char *err, size_t errcap);
    /* optional: append "key: value" lines about the store, and about the
     * array at path (its key prefix; NULL: the store alone), to out */
    void (*describe)(const zf_store *s, const char *path, zf_sbuf *out);
} zf_store_ops;

/* The common part of every store; a backend's constructor fills it. */
struct zf_store {
    const zf_store_ops *ops;
    void *impl;         /* the backend's state */
    char *name;         /* what log lines call the store (the root path, a URL); owned */
    unsigned parallel;  /* requests worth keeping in flight at once (>= 1): a local
                         * store 1 (callers use their own thread count), a remote
                         * store its connection count */
    int remote;         /* 1 for a network store: every request costs a round trip;
                         * stamps carry no dev/ino/ctime (size, mtime = Last-Modified,
                         * tag = digest of the ETag); list may return ZF_EUNSUPPORTED */
    unsigned budget_ms; /* a remote store: the time one call may take with all its
                         * retries (store/net.h's B), what a front end gives a whole
                         * request (base/deadline.h); 0: no bound (a local store) */
    /* a remote store: what authorises its requests, never a secret ("shared
     * key (AZURE_STORAGE_KEY)", "none (anonymous)"), into out (cap bytes);
     * NULL: nothing to say (a local store) */
    void (*credentials)(const zf_store *s, char *out, size_t cap);
    int immutable;      /* 1: no value ever changes (an Icechunk snapshot): a re-check
                         * of the store asks zf_store_update alone */
};

/* Open the local directory at path as a store; *out owns it (zf_store_close).
 * Symlinks inside it are followed only while they stay beneath it, unless
 * follow_symlinks.  ZF_ENOTFOUND if path is not a directory. */
int zf_store_open_local(const char *path, int follow_symlinks, zf_store **out);

/* Close a store; NULL is allowed. */
void zf_store_close(zf_store *s);

/* The store's name for log lines (a local store: its root's absolute path). */
const char *zf_store_path(const zf_store *s);

/* What authorises a remote store's requests, as .info shows it ("instance
 * metadata (role NAME)"; never a secret), into out; "" when the store has
 * nothing to say (a local one). */
void zf_store_credentials(const zf_store *s, char *out, size_t cap);

/* Read the whole value of key into b, grown (realloc) when it is larger than
 * b->cap; *n gets its length.  A value larger than max bytes is refused
 * (ZF_ECORRUPT, the sizes in err).  st (may be NULL) gets the stamp of the
 * version read (all zero if nothing was opened).  b stays valid, and the
 * caller's, on every error. */
int zf_store_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                  zf_stamp *st, char *err, size_t errcap);

/* Read exactly len bytes of key at offset off into buf (caller-owned);
 * ZF_ECORRUPT if the value is shorter than off + len. */
int zf_store_read_range(const zf_store *s, const char *key, uint64_t off, size_t len,
                        uint8_t *buf, char *err, size_t errcap);

/* Read n ranges at once (a remote backend keeps many in flight): each
 * request's rc gets its own result.  Returns ZF_OK if all succeeded, else the
 * result of the first request that failed. */
int zf_store_read_many(const zf_store *s, zf_store_req *reqs, size_t n);

/* Stamp of key now: ZF_OK for anything that exists (st->kind says what),
 * ZF_ENOTFOUND (st all zero: ZF_STORE_ABSENT) if it does not; on another
 * error the reason is in err, as for zf_store_read ("HTTP 503 after 8
 * attempts", "timed out after 2 attempts (time budget spent)"). */
int zf_store_stamp_why(const zf_store *s, const char *key, zf_stamp *st, char *err,
                       size_t errcap);

/* zf_store_stamp_why without the reason (callers that do not report it). */
int zf_store_stamp(const zf_store *s, const char *key, zf_stamp *st);

/* Call fn for each entry directly under prefix ("" for the root; "." and
 * ".." are never listed), in no particular order.  Returns ZF_OK only when
 * the listing is complete: every entry under prefix was passed to fn (every
 * page of a paged listing), so that a name not passed is absent.  Else fn's
 * value if it stops the listing; ZF_ENOTFOUND if nothing is under prefix (a
 * definitive answer, as above); ZF_ECORRUPT if prefix is there but not a
 * directory that can be listed; ZF_EUNSUPPORTED if the store cannot be
 * listed at all (plain HTTP: callers fall back to consolidated metadata);
 * ZF_EIO (the reason in err: "page 3: HTTP 503 after 8 attempts", "readdir:
 * Input/output error") if the listing failed, fn perhaps having seen some
 * entries: callers then drop what they gathered.  flags: 0 or ZF_LIST_KINDS
 * (above). */
int zf_store_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                  void *ctx, char *err, size_t errcap);

/* Does the store show one version of something that moves?  If so, *next
 * gets a new store (the caller's) showing its version now, or NULL while s
 * still shows it; a store that never moves always sets NULL.  Errors with
 * the reason in err (the thing moved to cannot be read). */
int zf_store_update(const zf_store *s, zf_store **next, char *err, size_t errcap);

/* Append the store's own "key: value" lines for .info about the array at
 * path (e.g. an Icechunk repository's ref and snapshot); nothing for most
 * stores. */
void zf_store_describe(const zf_store *s, const char *path, zf_sbuf *out);

/* Make b hold at least n bytes (ZF_ENOMEM leaves it as it was). */
int zf_store_buf_reserve(zf_store_buf *b, size_t n);

/* 128-bit digest of a stamp: equal digests mean equal stamps (but for a
 * 2^-128 chance).  Arrays keep one digest per present chunk (chunk/array.h). */
zf_fp zf_stamp_digest(const zf_stamp *st);

/* The newest of a stamp's times (mtime, ctime), ns since the epoch; 0 if
 * it has none (when the version it identifies was written, as far as the
 * store tells). */
int64_t zf_stamp_time(const zf_stamp *st);

/* The stamp of a remote object (kind FILE): size, mtime cut to whole
 * seconds (listings and headers give it in different precisions), tag =
 * digest of the version tag (an ETag, a generation) without W/ and quotes;
 * tag NULL or "": none. */
void zf_stamp_object(zf_stamp *st, uint64_t size, int64_t mtime_ns, const char *tag);

/* Hand fn the entry a listed object key names under a listed prefix of
 * skip bytes (remote stores' listings): the name after the prefix (a common
 * prefix's trailing '/' cut off: key is changed), with stamp st (kind DIR
 * for a common prefix).  Nothing is handed over for the prefix itself (a
 * "directory marker" object) nor for a name no directory may hold ("",
 * ".", "..", one with a '/': keys such as "a//b").  Returns fn's value, or 0. */
int zf_store_list_key(char *key, size_t skip, const zf_stamp *st, zf_store_list_fn fn, void *ctx);

/* The pages of one remote listing, as a backend reads them (ctx is the
 * backend's, holding the page just read):
 *   read: the page after token (NULL: the first; page: its number from 0)
 *         into ctx; *next the token of the page after it (malloc'd, taken by
 *         the caller), left NULL on the last page.  ZF_OK, or an error with
 *         the reason in why: ZF_ENOTFOUND when the service says there is no
 *         such bucket or container.
 *   emit: hand the page's entries to fn (zf_store_list_key), or only count
 *         them when fn is NULL; *seen counts every entry; fn's nonzero value
 *         stops the listing and is returned.
 *   done: free the page read (after emit, or after a failed read). */
typedef struct zf_store_pages {
    int (*read)(void *ctx, unsigned page, const char *token, char **next, char *why,
                size_t whycap);
    int (*emit)(void *ctx, zf_store_list_fn fn, void *fnctx, size_t *seen);
    void (*done)(void *ctx);
    const char *token_name; /* what the service calls its token ("marker") */
} zf_store_pages;

/* Every page of a remote listing in turn (fn NULL: until a page with an
 * entry): ZF_OK when complete, else the error, the reason in err naming the
 * page that failed ("page 3 of the listing: HTTP 503"); a 404 after a page
 * came is no absence (ZF_EIO), nor is a token answered twice in a row or a
 * listing of more than a million pages. */
int zf_store_list_pages(const zf_store_pages *pages, void *ctx, zf_store_list_fn fn, void *fnctx,
                        size_t *seen, char *err, size_t errcap);

/* The page size of a remote store's listings: given, else the number in
 * the environment variable var (tests of paging), else max; ZF_EINVAL (the
 * bound in err) when that is not in 1..max. */
int zf_store_page_size(unsigned given, const char *var, unsigned max, unsigned *out, char *err,
                       size_t errcap);

/* Digest of the version a stamp identifies: zf_stamp_digest, but for a stamp
 * with a version tag (an ETag) only its kind, size and tag count, so the same
 * object seen by a listing and by a GET or HEAD (whose Last-Modified may
 * differ in precision) has one version.  Without a tag (local files) it is
 * zf_stamp_digest itself. */
zf_fp zf_stamp_version(const zf_stamp *st);

/* Do two stamps identify one version (equal zf_stamp_version)? */
int zf_stamp_same_version(const zf_stamp *a, const zf_stamp *b);

#endif
