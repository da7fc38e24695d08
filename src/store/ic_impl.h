/* ic_impl.h - internals of the Icechunk repository backend (icechunk.h),
 * shared by its files:
 *   ic_file.c      metadata files: the 39-byte header, zstd, ids in base 32
 *   ic_refs.c      which snapshot a branch, tag or id names (spec 1 refs/,
 *                  spec 2 the repo file), and spec 2's virtual chunk containers
 *   ic_snap.c      a snapshot: its nodes, their zarr.json and chunk key encoding
 *   ic_manifest.c  manifests: the bounded cache, chunk references by coordinates
 *   ic_keys.c      the Zarr key space of a snapshot: keys, listings
 *   icechunk.c     the store: reads, stamps, listings, re-checks, .info
 *
 * Format facts (icechunk spec v1, v2, v2.1 and the writer, icechunk 1.x/2.x):
 * every metadata file is a 39-byte header (12 bytes magic "ICE🧊CHUNK", 24
 * bytes writer name padded with spaces, spec version 1 or 2, file type,
 * compression 0 none / 1 zstd), then a FlatBuffers table.  Ids are 12 bytes
 * (8 for nodes) written as Crockford base 32, upper case, no padding. */
#ifndef ZF_IC_IMPL_H
#define ZF_IC_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/flatbuf.h"
#include "store/consent.h"
#include "store/icechunk.h"
#include "store/store.h"
#include "store/targets.h"

#define IC_HEADER_LEN 39
#define IC_ID_LEN 12
#define IC_NODE_ID_LEN 8
#define IC_ID_TEXT 21          /* 20 base-32 characters and a NUL */
#define IC_MAX_DIMS 32         /* as zarr/meta.h: deeper arrays are refused there */

/* file types of the header */
enum { IC_SNAPSHOT = 1, IC_MANIFEST = 2, IC_REPO_INFO = 6 };

/* Field ids of the FlatBuffers tables read (declaration order in the
 * schemas of icechunk-format/flatbuffers; a union takes two ids). */
enum { FB_REPO_SPEC = 0, FB_REPO_TAGS, FB_REPO_BRANCHES, FB_REPO_DELETED_TAGS, FB_REPO_SNAPSHOTS,
       FB_REPO_STATUS, FB_REPO_METADATA, FB_REPO_UPDATES, FB_REPO_BEFORE, FB_REPO_CONFIG };
enum { FB_REF_NAME = 0, FB_REF_INDEX };
enum { FB_SNAPINFO_ID = 0, FB_SNAPINFO_PARENT, FB_SNAPINFO_FLUSHED, FB_SNAPINFO_MESSAGE };
enum { FB_SNAP_ID = 0, FB_SNAP_PARENT, FB_SNAP_NODES, FB_SNAP_FLUSHED, FB_SNAP_MESSAGE,
       FB_SNAP_METADATA, FB_SNAP_FILES, FB_SNAP_FILES_V2 };
enum { FB_FILEINFO_ID = 0, FB_FILEINFO_SIZE };  /* ManifestFileInfoV2 */
#define IC_FILEINFO_V1 32                        /* struct ManifestFileInfo: id, pad, u64, u32, pad */
enum { FB_NODE_ID = 0, FB_NODE_PATH, FB_NODE_USER_DATA, FB_NODE_DATA_TYPE, FB_NODE_DATA };
enum { FB_NODE_ARRAY = 1, FB_NODE_GROUP = 2 };  /* the NodeData union's types */
enum { FB_ARRAY_SHAPE = 0, FB_ARRAY_DIM_NAMES, FB_ARRAY_MANIFESTS, FB_ARRAY_SHAPE_V2 };
enum { FB_MREF_ID = 0, FB_MREF_EXTENTS };
enum { FB_MAN_ID = 0, FB_MAN_ARRAYS, FB_MAN_DICT, FB_MAN_ALGO };
enum { FB_AMAN_NODE = 0, FB_AMAN_REFS };
enum { FB_CREF_INDEX = 0, FB_CREF_INLINE, FB_CREF_OFFSET, FB_CREF_LENGTH, FB_CREF_CHUNK_ID,
       FB_CREF_LOCATION, FB_CREF_ETAG, FB_CREF_LAST_MODIFIED, FB_CREF_COMPRESSED_LOCATION };

/* ------------------------------------------------------------ ic_file.c */

/* A metadata file, decoded: the FlatBuffers payload (owned) and its header. */
typedef struct ic_file {
    uint8_t *data;
    size_t len;
    zf_fb_table root;
    uint8_t spec;              /* the header's spec version: 1 or 2 */
    char writer[25];           /* the writer's name, trailing spaces cut */
} ic_file;

/* Does raw (n bytes) start with the header of a file of type?  ZF_OK or ZF_ECORRUPT. */
int ic_file_header(const uint8_t *raw, size_t n, uint8_t type);

/* Check the header of raw (n bytes) and decode its payload into *out: a
 * file of type, at most max bytes decoded.  ZF_ECORRUPT with the reason. */
int ic_file_decode(const uint8_t *raw, size_t n, uint8_t type, size_t max, ic_file *out,
                   char *err, size_t errcap);

/* Read key of the raw store and decode it (ic_file_decode); the raw store's
 * own errors as they are. */
int ic_file_fetch(const zf_store *raw, const char *key, uint8_t type, size_t max, ic_file *out,
                  zf_stamp *st, char *err, size_t errcap);

/* Free what f holds. */
void ic_file_free(ic_file *f);

/* The 20 characters of a 12-byte id (or 13 of an 8-byte one) into out. */
void ic_id_text(const uint8_t *id, size_t n, char *out);

/* Parse 20 Crockford base-32 characters (any case; I and L are 1, O is 0)
 * into 12 bytes; -1 if text is not one. */
int ic_id_parse(const char *text, uint8_t id[IC_ID_LEN]);

/* ------------------------------------------------------------ the repository */

/* One cached manifest (ic_manifest.c). */
typedef struct ic_manifest ic_manifest;

/* What every snapshot store of one repository shares: the raw store it
 * lives in, the ref followed, virtual chunk targets, the manifest cache.
 * Reference-counted: each snapshot store holds one. */
typedef struct ic_repo {
    unsigned long refs;          /* atomic */
    zf_store *raw;               /* owned */
    int layout;                  /* 2: the repo file; 1: refs/ (spec 1) */
    int sel_kind;                /* ZF_IC_BRANCH, ZF_IC_TAG or ZF_IC_SNAPSHOT */
    char *sel_name;              /* the branch, tag or id text */
    size_t max_file;             /* most bytes one metadata file may decode to */
    zf_targets *targets;         /* virtual chunks (owned) */
    const zf_consent *consent;   /* the targets' */
    /* the manifest cache */
    pthread_mutex_t mu;
    pthread_cond_t loaded;
    ic_manifest *lru;            /* most recent first */
    size_t cached_bytes, budget;
    /* the ref as last re-checked (the notifier thread's) */
    zf_stamp ref_stamp;
    uint8_t ref_id[IC_ID_LEN];
    int ref_known;
} ic_repo;

enum { ZF_IC_BRANCH = 1, ZF_IC_TAG, ZF_IC_SNAPSHOT };

/* Take / drop a reference; the last one frees the repository. */
void ic_repo_hold(ic_repo *r);
void ic_repo_drop(ic_repo *r);

/* ------------------------------------------------------------ ic_refs.c */

/* What a ref resolved to. */
typedef struct ic_target {
    uint8_t id[IC_ID_LEN];
    zf_stamp stamp;             /* of the file the ref was read from (repo, ref.json) */
} ic_target;

/* Spec 2's virtual chunk containers: vcc://NAME/PATH means PREFIX + PATH. */
typedef struct ic_vcc {
    char **names, **prefixes;
    size_t n;
} ic_vcc;

/* Resolve r's selection to a snapshot id.  An unknown name fails with
 * ZF_ENOTFOUND and a line listing what exists ("no branch 'x'; branches:
 * main, dev; tags: v1").  For spec 2, repo (may be NULL) gets the repo file
 * read (the caller frees it); it is zeroed otherwise. */
int ic_refs_resolve(ic_repo *r, ic_target *out, ic_file *repo, char *err, size_t errcap);

/* The stamp of the file r's ref lives in now (repo, or a ref.json). */
int ic_refs_stamp(ic_repo *r, zf_stamp *st, char *err, size_t errcap);

/* Read spec 2's virtual chunk containers from the repo file's configuration
 * (none if it has none) into *out (ic_vcc_free). */
int ic_vcc_load(const ic_file *repo, ic_vcc *out, char *err, size_t errcap);

/* Free what v holds. */
void ic_vcc_free(ic_vcc *v);

/* The URL a virtual chunk's location (n bytes) names, vcc://NAME/PATH
 * expanded, into out (cap bytes); ZF_ENOTFOUND for an unknown container,
 * ZF_ECORRUPT for one that does not fit. */
int ic_vcc_expand(const ic_vcc *v, const char *loc, size_t n, char *out, size_t cap);

/* ------------------------------------------------------------ ic_snap.c */

/* A node of a snapshot, indexed at load. */
typedef struct ic_node {
    const char *path;           /* without the leading '/': "" for the root, "a/b" */
    size_t plen;
    const uint8_t *id;          /* IC_NODE_ID_LEN bytes */
    const uint8_t *meta;        /* zarr.json as written */
    size_t mlen;
    int is_array;
    /* arrays: */
    int keys_ok;                /* the chunk key encoding below was understood */
    char sep;                   /* '/' or '.' */
    int v2_keys;                /* chunk key encoding "v2" (no "c" prefix) */
    unsigned ndim;
    zf_fb_vec manifests;        /* ManifestRef tables */
    const char *damage;         /* why its chunk references cannot be used, or NULL */
} ic_node;

/* A loaded snapshot: the decoded file and its nodes sorted by path. */
typedef struct ic_snap {
    ic_file file;
    uint8_t id[IC_ID_LEN];
    ic_node *nodes;
    size_t nnodes;
    uint64_t flushed_at;        /* us since the epoch */
    const char *message;
    size_t message_len;
    ic_vcc vcc;                 /* the containers when it was opened (spec 2) */
} ic_snap;

/* Load snapshot id of r (ZF_ECORRUPT: damaged, with the reason); out->vcc
 * is left empty (the caller's). */
int ic_snap_load(ic_repo *r, const uint8_t id[IC_ID_LEN], ic_snap *out, char *err, size_t errcap);

/* Free what a snapshot holds. */
void ic_snap_free(ic_snap *s);

/* The node at path (plen bytes, no leading '/'), or NULL. */
const ic_node *ic_snap_find(const ic_snap *s, const char *path, size_t plen);

/* Nodes whose path starts with path + "/" (all of them for the root ""):
 * [*first, *end) of s->nodes. */
void ic_snap_below(const ic_snap *s, const char *path, size_t plen, size_t *first, size_t *end);

/* ------------------------------------------------------------ ic_manifest.c */

/* A chunk reference, resolved. */
enum { IC_REF_INLINE = 1, IC_REF_NATIVE, IC_REF_VIRTUAL };
typedef struct ic_ref {
    int kind;
    const uint8_t *data;        /* inline: the bytes */
    uint64_t offset, length;    /* native, virtual: the range (inline: 0, its size) */
    uint8_t chunk_id[IC_ID_LEN];
    char url[2048];             /* virtual: the object's URL (vcc:// expanded) */
    char etag[256];             /* virtual: "" or the ETag the object must have */
    uint32_t last_modified;     /* virtual: 0, or the object must not be newer (s) */
} ic_ref;

/* Coordinates of a chunk. */
typedef struct ic_coords {
    uint32_t v[IC_MAX_DIMS];
    unsigned n;
} ic_coords;

/* The reference of chunk c of array node a in snapshot s: ZF_OK (*ref and a
 * manifest reference in *m, to give back with ic_manifest_put), ZF_ENOTFOUND
 * (no such chunk: absent), or an error with the reason. */
int ic_chunk_ref(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *c, ic_manifest **m, ic_ref *ref,
                 char *err, size_t errcap);

/* Called for every chunk of array a whose coordinates start with prefix
 * (each chunk once, as the first manifest covering it has it); nonzero
 * stops.  ref is valid during the call only. */
typedef int (*ic_chunk_fn)(void *ctx, const ic_coords *c, const ic_ref *ref);
int ic_chunks_each(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *prefix, int need_refs,
                   ic_chunk_fn fn, void *ctx, char *err, size_t errcap);

/* 1 if array a has a chunk whose coordinates start with prefix, 0 if not,
 * or the error of a manifest that may hold one and cannot be read. */
int ic_chunks_any(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *prefix,
                  char *err, size_t errcap);

/* Fetch the small manifests snapshot s lists (those of coordinates and time
 * arrays, typically: each at most 256 KiB, 4 MiB in all, within the cache's
 * budget) all at once, one round trip, into the cache (a remote repository:
 * the size passes then wait for chunks only).  Best effort: a manifest not
 * fetched so is read when needed. */
void ic_manifest_prefetch(ic_repo *r, const ic_snap *s);

/* Give back a manifest reference; NULL is allowed. */
void ic_manifest_put(ic_repo *r, ic_manifest *m);

/* Free every cached manifest (the repository is going away). */
void ic_manifest_cache_free(ic_repo *r);

/* ------------------------------------------------------------ ic_keys.c */

/* What a key of the snapshot's key space is. */
typedef struct ic_key {
    enum { IC_KEY_NONE = 0, IC_KEY_META, IC_KEY_CHUNK, IC_KEY_CHUNK_DIR, IC_KEY_DIR } kind;
    const ic_node *node;        /* META: its node; CHUNK, CHUNK_DIR: its array */
    ic_coords coords;           /* CHUNK: the chunk's; CHUNK_DIR: those a chunk under it starts with */
    const char *path;           /* DIR: the directory (a node's path, or one above nodes) */
    size_t plen;
} ic_key;

/* Classify key without reading anything: a node's zarr.json, a chunk key or
 * a chunk directory of an array (by its chunk key encoding; whether a chunk
 * is there is the manifests' to say), a directory of nodes, or nothing. */
void ic_key_parse(const ic_snap *s, const char *key, ic_key *out);

/* List prefix of the snapshot's key space (store.h's list contract: a
 * manifest that cannot be read is ZF_EIO with its reason in err). */
int ic_keys_list(ic_repo *r, const ic_snap *s, const char *prefix, unsigned flags,
                 zf_store_list_fn fn, void *ctx, char *err, size_t errcap);

/* The stamp of a chunk whose reference is ref. */
void ic_ref_stamp(const ic_ref *ref, zf_stamp *st);

/* ------------------------------------------------------------ ic_info.c */

/* The repository's lines for .info, and the array at path's (store.h's
 * describe); v is the store's ic_view. */
void ic_describe(const zf_store *s, const char *path, zf_sbuf *out);

/* The snapshot a store shows, and its repository (ic_info.c reads them). */
const ic_snap *ic_store_snap(const zf_store *s);
ic_repo *ic_store_repo(const zf_store *s);
const ic_target *ic_store_target(const zf_store *s);

#endif
