/* s3.h - the S3 backend: a store under s3://BUCKET/PREFIX, read with signed
 * (SigV4) or anonymous GET and HEAD requests and listed with ListObjectsV2,
 * all through one net engine (net.h).
 *
 * Addressing: without an endpoint, virtual-hosted style
 * https://BUCKET.s3.REGION.amazonaws.com/KEY (path style
 * https://s3.REGION.amazonaws.com/BUCKET/KEY when the bucket name is no DNS
 * label: a dot, which a TLS wildcard cannot cover, upper case, '_'); with an endpoint (-o endpoint=,
 * AWS_ENDPOINT_URL...), path style ENDPOINT/BUCKET/KEY.
 *
 * Stamps: size, mtime = Last-Modified (whole seconds, from a GET, a HEAD or
 * the listing alike), tag = digest of the ETag without its quotes, kind
 * FILE; a prefix holding keys is a DIR (all other fields 0). */
#ifndef ZF_S3_H
#define ZF_S3_H

#include <stddef.h>

#include "store/net.h"
#include "store/s3cred.h"
#include "store/store.h"

/* Largest ListObjectsV2 page asked for (S3's own limit). */
#define ZF_S3_MAX_KEYS 1000

/* How to reach the store. */
typedef struct zf_s3_opts {
    zf_s3cred_opts cred;  /* -o region=, -o endpoint=, -o anonymous */
    zf_net_opts net;      /* -o connections=, retries=, timeout_ms=, cafile= */
    unsigned max_keys;    /* ListObjectsV2 max-keys, 1..1000; 0: $ZF_S3_MAX_KEYS if set, else 1000 */
    int requester_pays;   /* -o requester_pays: x-amz-request-payer: requester, signed */
    int objects_only;     /* open without the first listing: a bucket whose objects are read
                           * by key alone (virtual chunk targets), never listed */
} zf_s3_opts;

/* Where a bucket's requests go: URL = origin + encoded(root "/" KEY). */
typedef struct zf_s3_addr {
    char *origin;  /* "scheme://host[:port]" */
    char *host;    /* the Host header: "host[:port]" */
    char *root;    /* unencoded path before the key: "" (virtual-hosted) or "[/base]/BUCKET" */
} zf_s3_addr;

/* The address of bucket under c's region and endpoint (rules above); *a is
 * the caller's (zf_s3_addr_free).  ZF_EINVAL for a bucket name S3 cannot have. */
int zf_s3_addr_make(const zf_s3cred *c, const char *bucket, zf_s3_addr *a, char *err, size_t errcap);

/* Free what an address holds. */
void zf_s3_addr_free(zf_s3_addr *a);

/* Open s3://bucket/prefix (prefix may be "" or end in '/'); *out owns the
 * store (zf_store_close).  Credentials come from s3cred.h; a first listing
 * of the prefix checks them, so a wrong key fails here, the S3 error code in
 * err ("SignatureDoesNotMatch", "InvalidAccessKeyId", "NoSuchBucket").  When
 * the listing is denied (AccessDenied) but a root metadata key (zarr.json,
 * .zmetadata, .zgroup, .zarray) can be read, the store opens without
 * listing (list: ZF_EUNSUPPORTED).  ZF_ENOTFOUND: no such bucket, or no key under
 * the prefix.  With o->objects_only nothing is requested at open (errors
 * then come with the reads). */
int zf_store_open_s3(const char *bucket, const char *prefix, const zf_s3_opts *o, zf_store **out,
                     char *err, size_t errcap);

#endif
