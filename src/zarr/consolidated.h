/* consolidated.h - consolidated metadata: many nodes' metadata in one document.
 *
 * Zarr v3 (zarr-python's convention, outside the core spec): the root
 * zarr.json holds "consolidated_metadata": {"kind": "inline", "metadata":
 * {PATH: zarr.json document, ...}} with PATH relative to the root; a group's
 * entry may nest its own inline metadata, with paths relative to that group.
 * Zarr v2: the root's .zmetadata holds {"zarr_consolidated_format": 1,
 * "metadata": {"PATH/.zarray": document, "PATH/.zattrs": ..., "PATH/.zgroup": ...}}.
 *
 * A zf_cons owns the document's text and, per node path, the raw text spans
 * of that node's documents, so the metadata parser reads them as if they were
 * the node's own files (integers exact).  It is immutable after loading.
 * Entries are only delimited here, not validated: parse before trusting. */
#ifndef ZF_CONSOLIDATED_H
#define ZF_CONSOLIDATED_H

#include <stddef.h>

#include "store/store.h"

typedef struct zf_cons zf_cons;

typedef struct zf_cons_node {
    const char *path;      /* relative to the store root, e.g. "a/b" */
    int zarr_format;       /* 3: doc is a zarr.json; 2: doc is .zarray or .zgroup */
    int v2_group;          /* v2: doc is a .zgroup */
    const char *doc;       /* raw JSON span; NULL for a v2 node with only .zattrs */
    size_t doc_len;
    const char *attrs;     /* v2 .zattrs span, or NULL */
    size_t attrs_len;
    size_t order;          /* its place in the document (the first of its documents) */
} zf_cons_node;

/* Load store s's consolidated metadata (v3 inline in the root zarr.json, or
 * v2 .zmetadata when the root has no zarr.json), reading at most max bytes.
 * ZF_OK: *out owns it (zf_cons_free).  ZF_ENOTFOUND: the store has none.
 * ZF_ECORRUPT / ZF_EUNSUPPORTED: it exists but cannot be used (reason in err).
 * *no_v3 (may be NULL) says whether the root has no zarr.json (so that a
 * remote store is not asked again). */
int zf_cons_load(const zf_store *s, size_t max, zf_cons **out, int *no_v3, char *err,
                 size_t errcap);

/* v2: does the metadata hold the root's own .zgroup?  (A remote store's
 * root is then known to be a group without asking.) */
int zf_cons_v2_root_group(const zf_cons *c);

/* v2: the root's .zattrs span (length in *n), or NULL if the metadata has none. */
const char *zf_cons_v2_root_attrs(const zf_cons *c, size_t *n);

/* Free c; NULL is allowed. */
void zf_cons_free(zf_cons *c);

/* Called with each child's name (name[0..len), not NUL-terminated); nonzero stops. */
typedef int (*zf_cons_child_fn)(void *ctx, const char *name, size_t len);

/* Call fn once per distinct name directly under path ("" the root) among the
 * nodes described (a node "a/b/c" names "b" under "a" even when "a/b" has no
 * entry of its own), in byte order but for names that share a prefix (a
 * repeated name may come again: callers drop duplicates); fn's value if it
 * stops, else ZF_OK.  For stores that cannot be listed: the tree's children. */
int zf_cons_children(const zf_cons *c, const char *path, zf_cons_child_fn fn, void *ctx);

/* The store key the metadata was read from ("zarr.json" or ".zmetadata"). */
const char *zf_cons_key(const zf_cons *c);

/* Stamp of that key, as the read of it returned. */
const zf_stamp *zf_cons_stamp(const zf_cons *c);

/* The root's zarr.json with the value of "consolidated_metadata" replaced by
 * null (length in *n), to parse the root without its copy of every node;
 * NULL for v2. */
const char *zf_cons_root(const zf_cons *c, size_t *n);

/* Number of nodes described (the root not included). */
size_t zf_cons_count(const zf_cons *c);

/* The entry for the node at path (not the root), or NULL. */
const zf_cons_node *zf_cons_find(const zf_cons *c, const char *path);

#endif
