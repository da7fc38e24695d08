/* array_impl.h - internals shared by array.c (chunk keys, loading,
 * decoding), snapshot.c (taking the snapshot of the stored chunks present
 * and their versions) and present.c (the set of them and what reads learn
 * from it).  Calls go one way: array.c and snapshot.c call present.c, which
 * calls neither; they do not call each other. */
#ifndef ZF_ARRAY_IMPL_H
#define ZF_ARRAY_IMPL_H

#include <pthread.h>

#include "chunk/array.h"
#include "chunk/shardidx.h"

/* one stored chunk present in the store: its index (C order over the stored
 * grid) and the digest of its stamp */
typedef struct zf_present {
    uint64_t k;
    zf_fp digest;
} zf_present;

/* the stored chunks present at one moment, sorted by index (no duplicates) */
typedef struct zf_snap {
    zf_present *v;
    size_t n, cap;
    uint64_t files;           /* how many of them are regular files */
    int64_t newest;           /* the newest of their times (zf_stamp_time; atomic) */
    int failed;               /* out of memory while it was built */
} zf_snap;

/* a remote store's failing key is logged once per ZF_TOLD_QUIET_MS (every
 * inner chunk of a shard, and every reader waiting for it, fail with it) */
#define ZF_TOLD_KEYS 16
#define ZF_TOLD_QUIET_MS 30000

struct zf_array {
    const zf_store *store;
    zf_cache *cache;
    char *path;
    zf_meta meta;
    uint64_t id;              /* cache owner id, unique per array */
    uint64_t grid[ZF_MAX_DIMS];
    uint64_t nchunks;
    zf_snap *snap;            /* the stored chunks present at zf_array_snapshot */
    zf_shardidx *shards;      /* remote and sharded: recent shard indexes (NULL: none kept) */
    int whole_off;            /* shards are too large to read whole (atomic) */
    size_t whole_hint;        /* bytes a whole-shard read reserves (atomic; shardidx.h) */
    int unlisted;             /* the store cannot be listed: stamps are learned from reads */
    zf_fp origin;             /* stamps of the metadata documents (zf_array_set_origin) */
    pthread_mutex_t mu;       /* guards learned and learning */
    zf_snap learned;          /* unlisted: stamps of the stored chunks read by the pass */
    int learning;             /* unlisted, and the size pass has not ended */
    int learned_once;         /* a pass ended before: chunks it cached are not read again */
    uint64_t told[ZF_TOLD_KEYS];   /* remote: stored chunks (index + 1) whose failure was */
    int64_t told_ms[ZF_TOLD_KEYS]; /* logged lately, and when (monotonic ms); guarded by mu */
    unsigned told_next;
    zf_fp told_list;               /* why the stored chunks could not be told, logged */
    int64_t told_list_ms;          /* last, and when (monotonic ms); guarded by mu */
    int changed;              /* a stored chunk was seen changed since the snapshot (atomic) */
    int fill_rc;              /* CF: converting the fill value failed (convert.h) */
    char fill_err[160];
};

/* first element of read-grid chunk `index` */
static inline void zf_array_chunk_origin(const zf_array *a, uint64_t index, uint64_t *origin)
{
    for (unsigned d = a->meta.ndim; d-- > 0;) {
        origin[d] = index % a->grid[d] * a->meta.read_chunks[d];
        index /= a->grid[d];
    }
}

/* ---- present.c ---- */

/* Linear index (C order over the stored-chunk grid) of the stored chunk
 * holding read chunk index. */
uint64_t zf_array_stored_index(const zf_array *a, uint64_t index);

/* After the stored chunk at key was read (rc, st the stamp of the version
 * read): ZF_ESTALE (reason in err) if that version is not the snapshot's,
 * else rc; an unlisted store's version is learned (array.h). */
int zf_array_check_version(zf_array *a, uint64_t index, const char *key, int rc,
                           const zf_stamp *st, char *err, size_t errcap);

/* Was the stored chunk holding read chunk index absent at the snapshot of a
 * remote store (so that reading it would only cost a request)? */
int zf_array_snapshot_absent(const zf_array *a, uint64_t index);

/* Index of the first entry of s with index >= k (s->n if none). */
size_t zf_snap_lower(const zf_snap *s, uint64_t k);

/* The entry of stored chunk k in s, or NULL if it was absent. */
const zf_present *zf_snap_find(const zf_snap *s, uint64_t k);

/* Add stored chunk k with stamp st to the zf_snap ctx being built (a
 * callback of the listing; out of memory sets its failed). */
void zf_snap_take_stamp(void *ctx, uint64_t k, const zf_stamp *st);

/* Free s and the entries it holds (NULL: nothing). */
void zf_snap_free(zf_snap *s);

#endif
