/* azure.h - the Azure Blob Storage backend: a store under
 * az://CONTAINER/PREFIX (also abfs:// and abfss://, as fsspec spells
 * them), read with Get Blob (whole or ranged) and Get Blob Properties, and
 * listed with List Blobs (prefix, delimiter '/', markers), all through one
 * net engine (net.h).
 *
 * Where: the account is -o account=, else AZURE_STORAGE_ACCOUNT_NAME (or
 * AZURE_STORAGE_ACCOUNT), else the connection string's AccountName; the
 * endpoint -o endpoint=, else AZURE_STORAGE_BLOB_ENDPOINT, else the
 * connection string's BlobEndpoint, else
 * https://ACCOUNT.blob.core.windows.net (the connection string's protocol
 * and EndpointSuffix when it gives them).  Requests go to
 * ENDPOINT/CONTAINER/BLOB (path style under an endpoint's path, as Azurite
 * wants: http://HOST:PORT/ACCOUNT/CONTAINER/BLOB).
 *
 * Credentials, first found wins (-o anonymous: none read):
 *   1. AZURE_STORAGE_CONNECTION_STRING: its AccountKey (SharedKey) or
 *      SharedAccessSignature; UseDevelopmentStorage=true is Azurite's
 *      account at http://127.0.0.1:10000;
 *   2. AZURE_STORAGE_KEY (or AZURE_STORAGE_ACCOUNT_KEY): every request
 *      signed with SharedKey (HMAC-SHA256 of the canonical request);
 *   3. AZURE_STORAGE_SAS_TOKEN: appended to every request's query;
 *   4. none: anonymous requests (a public container).
 * Keys and SAS tokens are never logged nor put in a message.
 *
 * Stamps: size, mtime = Last-Modified (whole seconds), tag = digest of the
 * ETag without quotes, kind FILE; a prefix holding blobs is a DIR. */
#ifndef ZF_AZURE_H
#define ZF_AZURE_H

#include <stddef.h>
#include <stdint.h>

#include "store/cred.h"
#include "store/net.h"
#include "store/s3list.h"
#include "store/store.h"

/* Largest List Blobs page asked for (the service's own limit). */
#define ZF_AZ_MAX_RESULTS 5000

/* How to reach the store. */
typedef struct zf_az_opts {
    const char *account;   /* -o account= */
    const char *endpoint;  /* -o endpoint= */
    int anonymous;         /* -o anonymous */
    zf_net_opts net;
    unsigned max_results;  /* 1..5000; 0: $ZF_AZ_MAX_RESULTS if set, else 5000 */
    zf_cred_note_fn note;  /* where the credentials' source is reported */
} zf_az_opts;

/* Open az://container/prefix; *out owns the store (zf_store_close).  A
 * first listing checks the credentials: a wrong key fails here with
 * Azure's error code in err ("AuthenticationFailed",
 * "AuthorizationFailure").  ZF_ENOTFOUND: no such container, or no blob
 * under the prefix; ZF_EINVAL: no account, a bad key or connection string. */
int zf_store_open_azure(const char *container, const char *prefix, const zf_az_opts *o,
                        zf_store **out, char *err, size_t errcap);

/* Parse a List Blobs answer (an EnumerationResults document) into *page
 * (the caller's: zf_s3list_page_free, also after a failure): Blob entries
 * with Name, Content-Length, Etag and Last-Modified, BlobPrefix entries,
 * NextMarker as next_token (truncated when it is not empty).  Bounds and
 * refusals as s3list.h's (no DTD).  ZF_ECORRUPT with the reason in err. */
int zf_azlist_parse(const char *xml, size_t len, zf_s3list_page *page, char *err, size_t errcap);

#endif
