/* gcs_impl.h - what the Google Cloud Storage files share (private to
 * src/store): the backend's state and its requests, and the signed
 * assertion of a service account key. */
#ifndef ZF_GCS_IMPL_H
#define ZF_GCS_IMPL_H

#include <stdint.h>

#include "store/gcs.h"

/* Bytes of a reason buffer for one request (a credential failure's fits). */
#define ZF_GCSI_ERR 320

/* The backend's state; immutable once the store is open. */
typedef struct gcs {
    zf_net *net;
    zf_cred *cred;        /* NULL: anonymous */
    char *base;           /* "ENDPOINT[/PATH]/storage/v1/b/BUCKET/o" */
    char *prefix;         /* the store's prefix in the bucket: "" or "a/b/" */
    char *project;        /* userProject (%-encoded), or NULL */
    unsigned max_results; /* objects.list page size */
    int can_list;         /* 0: the first listing was refused */
} gcs;

/* Run r against object (a whole object name; NULL: the bucket's listing)
 * with the query parameters query ("name=value&..." already encoded; may be
 * ""): its url and headers are set here (a bearer token added), and it runs
 * once more with a fresh token when the first is refused as expired (401).
 * Returns r->rc; a credential failure's reason goes to r->err. */
int zf_gcsi_run(const gcs *g, const char *object, const char *query, zf_net_req *r);

/* err = the engine's reason net_err, with the server's message when the
 * answer's body (body, n bytes; may be NULL) is a Google API error. */
void zf_gcsi_reason(const char *net_err, const uint8_t *body, size_t n, char *err,
                    size_t errcap);

/* One objects.list page under full (a bucket-wide prefix) from token
 * (NULL: the first), at most max entries, the body read into buf; the
 * reason in err; *status the HTTP status (may be NULL). */
int zf_gcsi_list_page(const gcs *g, const char *full, const char *token, unsigned max,
                      zf_store_buf *buf, zf_gcs_page *pg, char *err, size_t errcap, long *status);

/* The backend's list (store.h): every page, absence only from a complete
 * listing; ZF_EIO (the page and reason in err) when one fails. */
int zf_gcsi_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                 void *ctx, char *err, size_t errcap);

/* Is any object under full (a bucket-wide prefix)?  ZF_OK, ZF_ENOTFOUND
 * (from a complete listing: every page, however many come empty), or the
 * error with its reason in err; *status the first answer's HTTP status. */
int zf_gcsi_any(const gcs *g, const char *full, long *status, char *err, size_t errcap);

/* Stamp of a key that is no object: a DIR if an object lies under key "/",
 * else ZF_ENOTFOUND (also when the store cannot be listed). */
int zf_gcsi_dir_stamp(const gcs *g, const char *key, zf_stamp *st, char *err, size_t errcap);

/* The claims of a service account's assertion (RFC 7523). */
typedef struct zf_gcs_jwt_claims {
    const char *issuer;   /* the key's client_email */
    const char *scope;
    const char *audience;
    const char *key_id;   /* the key's private_key_id (the header's kid), or NULL */
    const char *key_pem;  /* the key's private_key: PEM (PKCS#8) RSA */
    int64_t issued;       /* iat, seconds since the epoch */
    int64_t lifetime;     /* exp - iat */
} zf_gcs_jwt_claims;

/* The JWT "HEADER.CLAIMS.SIGNATURE" (base64url), signed RS256 with
 * c->key_pem, malloc'd into *out (a secret for its lifetime: the caller
 * wipes it).  ZF_EINVAL when the key is no RSA private key in PEM. */
int zf_gcs_jwt(const zf_gcs_jwt_claims *c, char **out);

#endif
