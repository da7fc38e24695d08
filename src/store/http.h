/* http.h - the plain HTTP(S) backend: a store whose keys are the URLs
 * ORIGIN/PREFIX/KEY, read with GET (whole or ranged) and HEAD through one
 * net engine (net.h).  Serves http://, https:// and gs:// (Google Cloud
 * Storage's public HTTPS endpoint, or an emulator's).
 *
 * Stamps: size, mtime = Last-Modified, tag = digest of the ETag as sent
 * (zf_fp), kind FILE; no dev/ino/ctime.  A read takes its stamp from its own
 * response; a stamp alone comes from a HEAD, or, from a server that answers
 * HEAD with 405 or 501, from a ranged GET of the object's first byte.  Plain HTTP has no listing: list returns ZF_EUNSUPPORTED.
 *
 * Authentication (https only, never sent over plain http nor after a
 * redirect to another host, port or scheme; redirects then stay on https):
 * a bearer token from a file, or basic authentication from ~/.netrc when
 * the engine's netrc option is on. */
#ifndef ZF_HTTP_H
#define ZF_HTTP_H

#include <stddef.h>

#include "store/net.h"
#include "store/store.h"

/* Open the store at origin ("http[s]://host[:port]") and prefix (unescaped,
 * no leading or trailing '/', "" for the root); name is what log lines call
 * it (the URL the user gave: never credentials).  bearer_file (may be NULL)
 * holds a bearer token for https requests: read now, and again whenever
 * the file changes (another inode, size, mtime or ctime).  Nothing is
 * fetched yet.  *out owns the store (zf_store_close).  ZF_EINVAL (bad
 * cafile), ZF_ENOMEM, ZF_EIO (an unreadable token file), with the reason
 * in err. */
int zf_store_open_http(const char *origin, const char *prefix, const char *name,
                       const zf_net_opts *o, const char *bearer_file, zf_store **out, char *err,
                       size_t errcap);

#endif
