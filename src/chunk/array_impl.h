/* array_impl.h - internals shared by array.c (chunk keys, loading,
 * decoding), array_shard.c (an inner chunk of a shard read by itself),
 * snapshot.c (taking the snapshot of the stored chunks present and their
 * versions) and present.c (the set of them and what reads learn from it).
 * Calls go one way: array.c calls array_shard.c; both, and snapshot.c, call
 * present.c, which calls none of them; snapshot.c calls neither array.c nor
 * array_shard.c. */
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

/* a remote store's failing key, and a failing shard, is logged once per
 * ZF_TOLD_QUIET_MS (every inner chunk of a shard, and every reader waiting
 * for it, fail with it) */
#define ZF_TOLD_KEYS 16
#define ZF_TOLD_QUIET_MS 30000

/* a reason logged last on one channel of an array, and when (monotonic ms) */
typedef struct zf_told_why {
    zf_fp fp;
    int64_t ms;
} zf_told_why;

struct zf_array {
    const zf_store *store;
    zf_cache *cache;
    char *path;
    zf_meta meta;
    uint64_t id;              /* cache owner id, unique per array */
    uint64_t grid[ZF_MAX_DIMS];
    uint64_t nchunks;
    zf_snap *snap;            /* the stored chunks present at zf_array_snapshot */
    zf_shardidx *shards;      /* inner chunks read one by one: the kept shard indexes, else NULL */
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
    zf_told_why told_read;         /* why chunk reads failed, logged last (guarded by mu) */
    zf_told_why told_list;         /* why the stored chunks could not be told, logged last */
    int changed;              /* a stored chunk was seen changed since the snapshot (atomic) */
    int fill_rc;              /* CF: converting the fill value failed (convert.h) */
    char fill_err[160];
    /* a standard-calendar time-stamp array that may become cftime objects (ticks.c) */
    zf_cf *cft;               /* its descriptor as cftime objects (owned), or NULL */
    int cftime;               /* 1 once its values are cftime objects (atomic) */
    int cftime_wanted;        /* 1 once a value outside the ns range was met (atomic) */
    int64_t cft_fill;         /* the fill value as cftime ticks */
    int cft_fill_rc;
    char cft_fill_err[160];
};

/* A new cache owner id, unique in the process (array.c). */
uint64_t zf_array_next_id(void);

/* ---- ticks.c ---- */

/* Set up the decoding of a's values (at zf_array_new): the fill value as
 * ticks, and the cftime descriptor where the values may become cftime
 * objects.  ZF_OK or ZF_ENOMEM. */
int zf_array_init_ticks(zf_array *a);

/* The descriptor the values are decoded by now, and the fill value's ticks
 * (and whether converting it failed: *rc, with the reason err). */
const zf_cf *zf_array_cf(const zf_array *a);
int64_t zf_array_fill_ticks(const zf_array *a, int *rc, const char **err);

/* The cache owner id of the values as decoded now. */
uint64_t zf_array_owner(const zf_array *a);

/* A value outside the ns range was met while the values were decoded as
 * datetime64 (ZF_ERANGE from convert.h): remember it. */
void zf_array_note_outside(zf_array *a);

/* Is reason why news on a's channel t (not logged there in the last
 * ZF_TOLD_QUIET_MS; an empty reason always is)?  If so it is noted as
 * logged now.  A store that fails many chunks for one cause (a virtual chunk
 * location the user did not authorise, a server refusing every request, a
 * manifest it cannot read) is logged once per ZF_TOLD_QUIET_MS for the
 * whole array, naming the first chunk it failed (array.c). */
int zf_array_news(zf_array *a, zf_told_why *t, const char *why);

/* first element of read-grid chunk `index` */
static inline void zf_array_chunk_origin(const zf_array *a, uint64_t index, uint64_t *origin)
{
    for (unsigned d = a->meta.ndim; d-- > 0;) {
        origin[d] = index % a->grid[d] * a->meta.read_chunks[d];
        index /= a->grid[d];
    }
}

/* ---- array_shard.c ---- */

/* Read the stored bytes of read chunk index, an inner chunk of the shard at
 * key (a->shards is set: inner chunks are read one by one), into raw (grown
 * as needed): *rawn bytes, to decode with *pp (the innermost pipeline).  The
 * shard's version is checked against the snapshot (zf_array_check_version)
 * and its indexes against the shard (zf_pipeline_decode_index), each once
 * per version of the shard (shardidx.h).  ZF_ENOTFOUND: the shard, or the
 * inner chunk, is absent (empty); else 0 or an error with the reason in err. */
int zf_array_read_inner(zf_array *a, uint64_t index, const char *key, zf_store_buf *raw,
                        size_t *rawn, const zf_pipeline **pp, char *err, size_t errcap);

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
