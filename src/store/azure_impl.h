/* azure_impl.h - what the Azure Blob backend's files share (private to
 * src/store): where requests go, the credentials, and signed requests. */
#ifndef ZF_AZURE_IMPL_H
#define ZF_AZURE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "store/azure.h"
#include "store/sigv4.h"

/* Bytes of a reason buffer for one request. */
#define ZF_AZI_ERR 320
/* Longest decoded account key (Azure's are 64 bytes). */
#define ZF_AZI_KEY_MAX 256

/* How requests are authorised. */
typedef enum zf_az_auth { ZF_AZ_ANON, ZF_AZ_KEY, ZF_AZ_SAS } zf_az_auth;

/* The account, its endpoint and credentials (secrets wiped when freed). */
typedef struct zf_az_conf {
    char *account;
    char *origin;                   /* "scheme://host[:port]" */
    char *base;                     /* the endpoint's path ("" or "/a/b"), unencoded */
    zf_az_auth auth;
    unsigned char key[ZF_AZI_KEY_MAX]; /* ZF_AZ_KEY: the decoded account key */
    size_t keylen;
    char *sas;                      /* ZF_AZ_SAS: the query string, without '?' */
    char source[160];               /* what the credentials are, for the log and .info */
} zf_az_conf;

/* Resolve account, endpoint and credentials (azure.h's order) into *c
 * (the caller's: zf_azi_conf_free, also after a failure).  ZF_EINVAL with
 * the reason in err: no account, a malformed key, SAS, connection string
 * or endpoint. */
int zf_azi_conf_load(const zf_az_opts *o, zf_az_conf *c, char *err, size_t errcap);

/* Wipe and free what c holds. */
void zf_azi_conf_free(zf_az_conf *c);

/* The backend's state; immutable once the store is open. */
typedef struct azure {
    zf_net *net;
    zf_az_conf conf;
    char *container;
    char *prefix;          /* the store's prefix in the container: "" or "a/b/" */
    unsigned max_results;
    int can_list;          /* 0: the first listing was refused */
} azure;

/* A request made ready for the engine: its URL and header lines (owned,
 * wiped when freed). */
typedef struct zf_az_req {
    char *url;
    char *lines[3];          /* x-ms-date, x-ms-version, Authorization */
    const char *hdrs[4];     /* lines, NULL-terminated */
} zf_az_req;

/* URL and headers of method on blob (a whole blob name; NULL: the
 * container, with query q), signed now when the store has a key; len > 0
 * signs the Range bytes=off-(off+len-1) the engine sends.  ZF_ENOMEM or
 * ZF_EIO (a signing failure). */
int zf_azi_prep(const azure *a, const char *method, const char *blob, const zf_sigv4_param *q,
                size_t nq, uint64_t off, uint64_t len, zf_az_req *r);

/* Free (and wipe) a prepared request. */
void zf_azi_req_free(zf_az_req *r);

/* err = the engine's reason net_err, with Azure's error code and message
 * when the answer's body (may be NULL) is an Azure <Error> document; the
 * code alone in code (64 bytes; may be NULL). */
void zf_azi_reason(const char *net_err, const uint8_t *body, size_t n, char *err, size_t errcap,
                   char *code);

/* The backend's list: every page, absence only from a complete listing;
 * ZF_EIO (the page and reason in err) when one fails. */
int zf_azi_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                void *ctx, char *err, size_t errcap);

/* Is any blob under full (a container-wide prefix)?  ZF_OK, ZF_ENOTFOUND
 * (from a complete listing), or the error with its reason in err and
 * Azure's code in code (64 bytes; may be NULL). */
int zf_azi_any(const azure *a, const char *full, char *err, size_t errcap, char *code);

#endif
