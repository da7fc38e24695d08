/* consent.h - the outside locations a store may read on the user's word.
 *
 * An Icechunk repository's virtual chunks and a kerchunk reference set's
 * targets name URLs anywhere (file:///etc/shadow as easily as a public
 * bucket).  zarrfs reads such a location only under a prefix the user
 * authorised (-o virtual=PREFIX[,PREFIX...]), the model of Icechunk's own
 * authorize_virtual_chunk_access.
 *
 * Prefixes and URLs are compared in a canonical form:
 *   file:///ABS/PATH    (a bare absolute path "/ABS/PATH" is the same)
 *   http[s]://HOST[:PORT]/PATH   host lower-cased, the scheme's default port dropped
 *   s3://BUCKET/KEY, gs://BUCKET/KEY, az://CONTAINER/KEY
 * A URL is allowed when a prefix is a leading part of it that ends at a '/'
 * boundary ("s3://b/data" allows "s3://b/data/x" and "s3://b/data", not
 * "s3://b/database").  A URL or prefix with user information, a fragment,
 * "." or ".." path segments (also %-encoded), a NUL or control byte is never
 * allowed; a query string is not part of the comparison.  Thread-safe once
 * built (read-only). */
#ifndef ZF_CONSENT_H
#define ZF_CONSENT_H

#include <stddef.h>

typedef struct zf_consent zf_consent;

/* A new, empty set of prefixes (allows nothing); NULL when out of memory. */
zf_consent *zf_consent_new(void);

/* Free c; NULL is allowed. */
void zf_consent_free(zf_consent *c);

/* Add one prefix.  ZF_EINVAL (the reason in err) for one that is not of a
 * form above; ZF_ENOMEM. */
int zf_consent_add(zf_consent *c, const char *prefix, char *err, size_t errcap);

/* Add every prefix of a comma-separated list (empty items skipped). */
int zf_consent_add_list(zf_consent *c, const char *list, char *err, size_t errcap);

/* 1 if url lies under one of c's prefixes, else 0 (also for NULL c). */
int zf_consent_allows(const zf_consent *c, const char *url);

/* Number of prefixes, and the i-th in canonical form (owned by c). */
size_t zf_consent_count(const zf_consent *c);
const char *zf_consent_prefix(const zf_consent *c, size_t i);

/* The canonical form of url into out (cap bytes): ZF_OK, ZF_EINVAL (not a
 * form above, or a refused part; reason in err), ZF_ENOMEM (longer than cap). */
int zf_consent_canonical(const char *url, char *out, size_t cap, char *err, size_t errcap);

/* The container url belongs to, as a user would authorise it, into out:
 * "s3://BUCKET/", "gs://BUCKET/", "az://CONTAINER/", "http[s]://HOST[:PORT]/",
 * or for file: URLs the directory holding the file ("file:///data/x/").
 * ZF_EINVAL as zf_consent_canonical. */
int zf_consent_container(const char *url, char *out, size_t cap);

#endif
