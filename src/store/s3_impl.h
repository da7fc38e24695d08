/* s3_impl.h - what the S3 backend's files share (private to src/store):
 * the backend's state and its prepared, signed requests. */
#ifndef ZF_S3_IMPL_H
#define ZF_S3_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "store/s3.h"
#include "store/s3list.h"
#include "store/sigv4.h"

/* Bytes of an S3 error code buffer (zf_s3i_reason). */
#define ZF_S3I_CODE 64

/* The signing key of the current day, shared by every request (its own
 * lock: the rest of the state is immutable). */
typedef struct s3_keys {
    pthread_mutex_t lock;
    zf_sigv4_key key;
    uint64_t gen;      /* of the credentials it was derived from */
} s3_keys;

/* The backend's state; immutable once the store is open (but keys). */
typedef struct s3 {
    zf_net *net;
    zf_s3cred *cred;
    zf_s3_addr addr;
    char *prefix;      /* the store's prefix in the bucket: "" or "a/b/" */
    char *host_line;   /* "Host: ..." */
    unsigned max_keys;
    int can_list;      /* 0: the first listing was denied (AccessDenied) */
    int requester_pays; /* send (and sign) x-amz-request-payer: requester */
    s3_keys *keys;     /* NULL when anonymous */
} s3;

/* ZF_OK for a bucket name S3 can have (3 to 255 letters, digits, '.', '-',
 * '_'), else ZF_EINVAL with the reason in err. */
int zf_s3i_bucket_check(const char *bucket, char *err, size_t errcap);

/* A request made ready for the engine: its URL and header lines (owned). */
typedef struct prep {
    char *url;
    char **sig;           /* from zf_sigv4_sign, or NULL (anonymous) */
    const char *hdrs[8];  /* sig's lines, then Host (and the payer); NULL-terminated */
    const zf_cred_value *cv; /* the credentials signed with (held), or NULL */
    zf_cred *cred;
} prep;

/* URL and signed headers (signed now) of method on key under the store's
 * prefix, or on the bucket itself with query q when key is NULL; *p is the
 * caller's (zf_s3i_prep_free).  ZF_ENOMEM, zf_sigv4_sign's error, or the
 * credentials' (cred.h), with the reason in err. */
int zf_s3i_prep(const s3 *b, const char *method, const char *key, const zf_sigv4_param *q,
                size_t nq, prep *p, char *err, size_t errcap);

/* Did a request signed as p fail because its credentials expired (S3's
 * ExpiredToken, InvalidToken, TokenRefreshRequired; a HEAD's bare 400
 * with temporary credentials)?  Then the provider is told (its next
 * value is fetched anew) and 1 is returned: sign again and retry once. */
int zf_s3i_expired(const prep *p, long status, const uint8_t *body, size_t n);

/* Free (and wipe the signature lines of) a prepared request. */
void zf_s3i_prep_free(prep *p);

/* err = the engine's reason net_err, with S3's error code and message when
 * the answer's body (body, n bytes; may be NULL) is an S3 error document;
 * the code alone also in code (ZF_S3I_CODE bytes; may be NULL). */
void zf_s3i_reason(const char *net_err, const uint8_t *body, size_t n, char *err, size_t errcap,
                   char *code);

/* The stamp of an object: size, Last-Modified in whole seconds (a listing
 * has ms, a header s), tag = digest of the ETag without W/ and quotes. */
void zf_s3i_file_stamp(zf_stamp *st, uint64_t size, int64_t mtime_ns, const char *etag);

/* One ListObjectsV2 page of the keys under full (a bucket-wide prefix) from
 * token (NULL: the first page), at most max_keys entries, the body read
 * into buf; reason in err, S3's error code in code (may be NULL). */
int zf_s3i_list_page(const s3 *x, const char *full, const char *token, unsigned max_keys,
                     zf_store_buf *buf, zf_s3list_page *page, char *err, size_t errcap,
                     char *code);

/* The bucket-wide prefix of a store prefix: the store's, then prefix and a
 * '/' unless prefix is "" (malloc'd; NULL when out of memory). */
char *zf_s3i_full_prefix(const s3 *x, const char *prefix);

/* The backend's list: entries under prefix, page by page (store.h); ZF_OK
 * only once the last page came, ZF_EIO (the page and reason in err) when
 * one fails or cannot be parsed. */
int zf_s3i_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                void *ctx, char *err, size_t errcap);

/* Stamp of a key that is no object: a DIR if any key lies under key "/",
 * else ZF_ENOTFOUND (also when the store cannot be listed); the reason of
 * another error in err. */
int zf_s3i_dir_stamp(const s3 *x, const char *key, zf_stamp *st, char *err, size_t errcap);

#endif
