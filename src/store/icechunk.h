/* icechunk.h - an Icechunk repository as a store: one snapshot of it shown
 * as the Zarr v3 key space it holds.
 *
 * A repository lives in another store (a local directory, http(s), s3, gs:
 * the raw store).  Spec 2 (Icechunk 2.x) keeps its branches, tags and
 * snapshot list in the file `repo`; spec 1 (Icechunk 1.x) in
 * refs/branch.NAME/ref.json and refs/tag.NAME/ref.json.  The store shows the
 * snapshot a branch (default main), a tag or a snapshot id selects:
 *   - each node's zarr.json as the snapshot keeps it;
 *   - each array's chunk keys (in its own chunk key encoding), resolved
 *     through the manifests to inline bytes, a range of chunks/ID in the raw
 *     store, or a range of an outside object (a virtual chunk, read only
 *     where the user's consent allows: store/targets.h);
 *   - listings answered from the snapshot and the manifests, complete (a
 *     chunk they do not name is absent; one they name that cannot be read
 *     is an error, never absence).
 * Stamps identify a chunk's version by its reference (inline bytes; chunk
 * id, offset, length; location, range and checksum), so an offset index
 * persisted under them serves any later mount of the same data.  The store
 * is immutable (a snapshot never changes); for a branch, zf_store_update
 * re-reads the branch and opens the snapshot it moved to.  Manifests are
 * cached within a quarter of the cache size given (the last one used stays
 * whatever its size).  zf_store_describe gives .info's repository lines. */
#ifndef ZF_ICECHUNK_H
#define ZF_ICECHUNK_H

#include <stddef.h>

#include "store/store.h"
#include "store/targets.h"

/* How to open a repository. */
typedef struct zf_icechunk_opts {
    const char *branch;        /* at most one of branch, tag, snapshot; none: branch main */
    const char *tag;
    const char *snapshot;      /* 20 base-32 characters */
    const char *virtual_ok;    /* comma-separated location prefixes virtual chunks may be
                                * read from (consent.h); NULL: none */
    size_t cache_bytes;        /* the mount's cache size (0: 256 MiB) */
    zf_targets_open_fn open_target; /* opens the store of a virtual chunk's location */
    void *open_ctx;            /* its context, taken (free_ctx) */
    void (*free_ctx)(void *);
} zf_icechunk_opts;

/* Is the store raw a repository?  ZF_OK with *layout 2 (a repo file) or 1
 * (refs/branch.main/ref.json); ZF_ENOTFOUND if neither is there; another
 * error (the reason in err) if the store could not say.  One round trip. */
int zf_icechunk_probe(const zf_store *raw, int *layout, char *err, size_t errcap);

/* Open the repository in raw (a probe's layout) at the snapshot o selects;
 * takes raw (closed on failure too) and o's context.  *out is the caller's.
 * Errors with a one-line reason: ZF_ENOTFOUND for an unknown branch, tag or
 * snapshot (listing the branches and tags there are), ZF_EINVAL for a bad
 * option, ZF_ECORRUPT / ZF_EUNSUPPORTED for damaged or unknown metadata,
 * ZF_EIO, ZF_ENOMEM. */
int zf_store_open_icechunk(zf_store *raw, int layout, const zf_icechunk_opts *o, zf_store **out,
                           char *err, size_t errcap);

#endif
