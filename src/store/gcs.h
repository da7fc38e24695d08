/* gcs.h - the Google Cloud Storage backend: a store under
 * gs://BUCKET/PREFIX, read through the JSON API (objects.get with
 * alt=media, whole or ranged; objects.get for stamps; objects.list with a
 * prefix, delimiter '/' and page tokens for listings), all through one net
 * engine (net.h), each request with a bearer token from gcscred.h (or none:
 * anonymous).
 *
 * Requests go to ENDPOINT[/PATH]/storage/v1/b/BUCKET/o[/OBJECT], ENDPOINT
 * https://storage.googleapis.com unless -o endpoint= names another (an
 * emulator).  A token is sent over https only, or plain http to a loopback
 * address.
 *
 * Stamps: size, mtime = updated (whole seconds), tag = digest of the
 * object's generation (the x-goog-generation of a download, the listing's
 * generation), kind FILE; a prefix holding objects is a DIR. */
#ifndef ZF_GCS_H
#define ZF_GCS_H

#include <stddef.h>
#include <stdint.h>

#include "store/cred.h"
#include "store/net.h"
#include "store/store.h"

/* Largest objects.list page asked for (the API's own limit). */
#define ZF_GCS_MAX_RESULTS 1000

/* How to reach the store. */
typedef struct zf_gcs_opts {
    const char *endpoint;      /* -o endpoint= ("http[s]://host[:port][/path]"), or NULL */
    int anonymous;             /* -o anonymous: no token, no credentials read */
    const char *user_project;  /* -o requester_pays=PROJECT: billed for the requests */
    zf_net_opts net;           /* -o connections=, retries=, timeout_ms=, cafile= */
    unsigned max_results;      /* page size, 1..1000; 0: $ZF_GCS_MAX_RESULTS if set, else 1000 */
    zf_cred_note_fn note;      /* where credential refreshes are reported */
} zf_gcs_opts;

/* Open gs://bucket/prefix; *out owns the store (zf_store_close).
 * Credentials come from gcscred.h unless o->anonymous (none found: requests
 * go anonymous).  A first listing of the prefix checks them, so a refused
 * token fails here with the server's reason.  When the listing is refused
 * (401, 403) but a root metadata key can be read, the store opens without
 * listing (list: ZF_EUNSUPPORTED).  ZF_ENOTFOUND: no such bucket, or no
 * object under the prefix. */
int zf_store_open_gcs(const char *bucket, const char *prefix, const zf_gcs_opts *o,
                      zf_store **out, char *err, size_t errcap);

/* One entry of an objects.list page. */
typedef struct zf_gcs_item {
    char *name;          /* the whole object name; a prefix ends with '/' */
    int prefix;          /* 1: from "prefixes" (the other fields 0) */
    uint64_t size;
    int64_t mtime_ns;    /* updated */
    char generation[24]; /* decimal digits */
} zf_gcs_item;

/* One objects.list page. */
typedef struct zf_gcs_page {
    zf_gcs_item *items;  /* prefixes first, then objects */
    size_t n;
    char *next_token;    /* nextPageToken, or NULL: the last page */
} zf_gcs_page;

/* Parse an objects.list answer (doc, n bytes) into *pg (the caller's:
 * zf_gcs_page_free, also after a failure).  ZF_ECORRUPT with the reason in
 * err for anything that is not such a page within bounds (names up to
 * ZF_KEY_MAX - 1 bytes, at most ZF_GCS_PAGE_ITEMS entries). */
int zf_gcs_list_parse(const char *doc, size_t n, zf_gcs_page *pg, char *err, size_t errcap);

/* Most entries one page may hold. */
#define ZF_GCS_PAGE_ITEMS 100000

/* Free what a page holds. */
void zf_gcs_page_free(zf_gcs_page *pg);

/* An object resource (objects.get's JSON, n bytes) into *st; ZF_ECORRUPT
 * with the reason in err when it lacks a size or generation. */
int zf_gcs_object_parse(const char *doc, size_t n, zf_stamp *st, char *err, size_t errcap);

#endif
