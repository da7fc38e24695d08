/* http.h - the plain HTTP(S) backend: a store whose keys are the URLs
 * ORIGIN/PREFIX/KEY, read with GET (whole or ranged) and HEAD through one
 * net engine (net.h).  Serves http://, https:// and gs:// (Google Cloud
 * Storage's public HTTPS endpoint, or an emulator's).
 *
 * Stamps: size, mtime = Last-Modified, tag = digest of the ETag as sent
 * (zf_fp), kind FILE; no dev/ino/ctime.  A read takes its stamp from its own
 * response.  Plain HTTP has no listing: list returns ZF_EUNSUPPORTED. */
#ifndef ZF_HTTP_H
#define ZF_HTTP_H

#include <stddef.h>

#include "store/net.h"
#include "store/store.h"

/* Open the store at origin ("http[s]://host[:port]") and prefix (unescaped,
 * no leading or trailing '/', "" for the root); name is what log lines call
 * it (the URL the user gave: never credentials).  Nothing is fetched yet.
 * *out owns the store (zf_store_close).  ZF_EINVAL (bad cafile), ZF_ENOMEM,
 * ZF_EIO, with the reason in err. */
int zf_store_open_http(const char *origin, const char *prefix, const char *name,
                       const zf_net_opts *o, zf_store **out, char *err, size_t errcap);

#endif
