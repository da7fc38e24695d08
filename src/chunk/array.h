/* array.h - one timedelta64 array of a store: metadata plus chunk access.
 *
 * Chunks are addressed by their linear index in C order over the chunk grid.
 * A missing chunk reads as the fill value; a damaged one fails with
 * ZF_ECORRUPT and a log line naming its key and the reason.  Decoded chunks
 * live in the shared zf_cache.  Thread-safe. */
#ifndef ZF_ARRAY_H
#define ZF_ARRAY_H

#include <stdint.h>

#include "chunk/cache.h"
#include "base/fp.h"
#include "zarr/meta.h"
#include "store/store.h"

typedef struct zf_array zf_array;

/* Create an array reading from store under key prefix path ("" for the root,
 * else "a/b"); takes ownership of *meta's contents (meta is cleared).  The
 * store and cache must outlive the array.  NULL on allocation failure. */
zf_array *zf_array_new(const zf_store *store, const char *path, zf_meta *meta, zf_cache *cache);

/* Free an array; NULL is allowed. */
void zf_array_free(zf_array *a);

/* The array's metadata (owned by the array). */
const zf_meta *zf_array_meta(const zf_array *a);

/* The store the array reads from. */
const zf_store *zf_array_store(const zf_array *a);

/* The array's key prefix in the store ("" for a root array). */
const char *zf_array_path(const zf_array *a);

/* Number of chunks along dimension d, and in total. */
uint64_t zf_array_grid(const zf_array *a, unsigned d);
uint64_t zf_array_nchunks(const zf_array *a);

/* What an array's int64 ticks are (they change once: zf_array_to_cftime). */
typedef struct zf_ticks {
    zf_values values;     /* durations, datetime64 or cftime objects (text/text.h) */
    zf_unit unit;         /* unit and scale of the ticks */
    uint32_t scale;
    const zf_calref *cal; /* ZF_VALUES_CFTIME: the calendar and reference date, else NULL */
    int64_t fill;         /* the fill value as ticks (a missing chunk's values) */
} zf_ticks;

/* The array's ticks as decoded now. */
zf_ticks zf_array_ticks(const zf_array *a);

/* Has a value outside the ns range been met in a standard-calendar time
 * array decoded as datetime64 (as xarray decodes it then: cftime objects
 * for every value)?  1 or 0. */
int zf_array_cftime_wanted(const zf_array *a);

/* May the values become (or are they) cftime objects?  1 or 0. */
int zf_array_may_cftime(const zf_array *a);

/* Decode the values as cftime objects from now on (a standard-calendar time
 * array that cftime reads, as xarray decodes one with a value outside the
 * ns range): chunks decoded before are not used again.  1 if the values are
 * cftime objects (now or before), 0 if they cannot be. */
int zf_array_to_cftime(zf_array *a);

/* Number of values in one (read-grid) chunk. */
uint64_t zf_array_chunk_elems(const zf_array *a);

/* Read and decode chunk `index` without the cache into buf (room for
 * zf_array_chunk_elems values): out->values is buf, or NULL for a missing
 * chunk (every value out->constant).  The stored bytes are read into raw
 * (caller-owned, reused across calls) or, if raw is NULL, a temporary
 * buffer.  Errors as zf_array_get_chunk. */
int zf_array_decode(zf_array *a, uint64_t index, int64_t *buf, zf_store_buf *raw,
                    zf_chunk *out);

/* Would the cache keep `chunks` more chunks of this array without evicting? */
int zf_array_cache_room(const zf_array *a, unsigned chunks);

/* Get decoded chunk `index` with one cache reference (zf_array_put_chunk).
 * ZF_EIO (logged, naming the key) also when the calling thread's request
 * deadline (base/deadline.h) comes while another thread is loading it. */
int zf_array_get_chunk(zf_array *a, uint64_t index, zf_chunk **out);

/* Give back a chunk reference; NULL is allowed. */
void zf_array_put_chunk(zf_array *a, zf_chunk *chunk);

/* Have chunk `index` loaded into the cache in the background if the cache
 * prefetches (cache.h); no effect otherwise or past the last chunk. */
void zf_array_prefetch(zf_array *a, uint64_t index);

/* The stored chunk (a shard, when the array is sharded) holding read chunk
 * index, as its index in C order over the stored grid. */
uint64_t zf_array_shard_of(const zf_array *a, uint64_t index);

/* How many chunks a sequential reader should have loading ahead of it:
 * `local` for a local store; for a remote store as many as it keeps requests
 * in flight (zf_store.parallel, at most ZF_PREFETCH_MAX_THREADS) while they
 * take at most half the cache, never fewer than `local`. */
unsigned zf_array_read_ahead(const zf_array *a, unsigned local);

/* Record the stamp (store.h) of every stored chunk present (listing the
 * chunk directories once: the cost and the memory, 24 bytes per present
 * chunk, follow what is stored, not the grid), and mix into fp
 * everything the array's values depend on: the array's path, its metadata
 * and those stamps (which identify each chunk file by device, inode, ctime,
 * size and mtime, so a store moved within its file system keeps its
 * fingerprint and a copy gets a new one).  From then on a chunk whose
 * stamp differs when it is loaded fails with ZF_ESTALE instead of mixing old
 * and new data.  Call before the first chunk is read.  Returns 0, ZF_ENOMEM,
 * or ZF_EIO when the store could not tell which chunks are stored (a
 * listing or a stamp failed: nothing is kept of it, one log line names the
 * key and the reason, and the next call asks again): a chunk is absent only
 * when the store's complete answer leaves it out (store.h).
 *
 * A remote store's stamps are its objects' versions (size and ETag: no
 * request beyond the listing; a chunk load compares the version its GET
 * returned).  A store that cannot be listed (plain HTTP) gives no snapshot:
 * zf_array_unlisted then says so, fp gets the array's path, metadata and the
 * stamps of the metadata documents it came from (zf_array_set_origin: the
 * consolidated document's ETag, or the array's own), and the versions of the
 * chunks are learned as they are read, to be adopted as the snapshot once
 * every chunk was read (zf_array_end_learning) or loaded from a persisted
 * copy (zf_array_snap_load).  Rule: an index persisted for an unlisted store
 * is trusted while its metadata's ETags are unchanged; each chunk is checked
 * lazily, when it is read, against the version the index was computed from
 * (ZF_ESTALE on a difference, as for any snapshot). */
int zf_array_snapshot(zf_array *a, zf_fp *fp);

/* Set the digest of the stamps of the metadata documents the array's
 * metadata came from (the tree walk does, before any snapshot). */
void zf_array_set_origin(zf_array *a, const zf_fp *origin);

/* Did zf_array_snapshot find a store that cannot be listed? */
int zf_array_unlisted(const zf_array *a);

/* Unlisted: stop learning versions (the size pass ended) and, if adopt,
 * make those learned the snapshot: only right once the pass read every
 * stored chunk without error (one not read would count as absent), and only
 * the first pass's (a retried pass finds chunks in the cache, unread).
 * ZF_OK (adopted), ZF_ENOTFOUND (no snapshot: not asked, or a retry), or
 * ZF_ENOMEM (none). */
int zf_array_end_learning(zf_array *a, int adopt);

/* The snapshot as bytes, to persist (*len of them; valid until the snapshot
 * is replaced); *len 0 without one. */
const void *zf_array_snap_data(const zf_array *a, size_t *len);

/* Install a snapshot persisted by zf_array_snap_data; ZF_ECORRUPT (nothing
 * installed) if the bytes are not one, ZF_ENOMEM. */
int zf_array_snap_load(zf_array *a, const void *data, size_t len);

/* Has any stored chunk changed, appeared or gone since zf_array_snapshot?
 * One listing, as the snapshot's: 1 or 0 (also if never taken, or the store
 * cannot be listed: its chunks are checked when read); ZF_EIO (the key and
 * reason in err) or ZF_ENOMEM when the store could not tell.  1 from then
 * on, without asking the store, once a listing or a read (ZF_ESTALE) has
 * seen a change. */
int zf_array_changed(zf_array *a, char *err, size_t errcap);

/* The newest time (store.h: zf_stamp_time) of the stored chunks present at
 * the snapshot, ns; 0 without a snapshot or times.  The setter gives a
 * snapshot loaded by zf_array_snap_load the time persisted with it. */
int64_t zf_array_chunks_time(const zf_array *a);
void zf_array_set_chunks_time(zf_array *a, int64_t t);

/* The digest zf_array_set_origin gave (the stamps of the metadata documents). */
const zf_fp *zf_array_origin(const zf_array *a);

/* Count stored chunks (shards) present in the store against those the grid
 * expects (no decoding, no chunk read): those of the snapshot once it is
 * taken, else by listing the chunk directories; ZF_EUNSUPPORTED (with
 * *expected set) if that listing holds more than limit chunks, ZF_ENOTFOUND
 * (with *expected set) if the store cannot be listed: unknown; ZF_EIO
 * (logged, as zf_array_snapshot) if the listing failed. */
int zf_array_count_stored(zf_array *a, uint64_t limit, uint64_t *present, uint64_t *expected);

/* As zf_array_count_stored, from the snapshot only (no listing, no wait):
 * ZF_ENOTFOUND (with *expected set) before zf_array_snapshot took one. */
int zf_array_count_listed(const zf_array *a, uint64_t *present, uint64_t *expected);

/* How many read chunks from index on were absent at zf_array_snapshot (read
 * as the fill value, with no store access needed): 0 if index may be stored,
 * no snapshot was taken, or a missing chunk is an error (a CF fill value
 * beyond int64).  With shards, at most 1. */
uint64_t zf_array_absent_run(const zf_array *a, uint64_t index);

#endif
