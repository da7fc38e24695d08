/* present.c - the stored chunks present at a snapshot (zf_snap): finding and
 * adding them, and what a read learns from them: whether the version read is
 * the snapshot's, which chunks were absent, and (a store that cannot be
 * listed) the versions learned while reading.  Used by array.c (reads) and
 * snapshot.c (taking and comparing snapshots); calls neither. */
#include "array_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"

/* linear index (C order over the stored-chunk grid) of the chunk holding read chunk index */
uint64_t zf_array_stored_index(const zf_array *a, uint64_t index)
{
    uint64_t origin[ZF_MAX_DIMS], k = 0;
    zf_array_chunk_origin(a, index, origin);
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        uint64_t g = (a->meta.shape[d] + a->meta.chunks[d] - 1) / a->meta.chunks[d];
        k = k * g + origin[d] / a->meta.chunks[d];
    }
    return k;
}

/* digest of key's stamp now into *d; ZF_OK (absent keys too), or the
 * store's failure: it cannot tell what is there now */
static int stamp_digest(const zf_array *a, const char *key, zf_fp *d)
{
    zf_stamp st;
    int rc = zf_store_stamp(a->store, key, &st);
    *d = zf_stamp_version(&st);
    return rc == ZF_ENOTFOUND ? ZF_OK : rc;
}

/* index of the first entry of s with index >= k (s->n if none) */
size_t zf_snap_lower(const zf_snap *s, uint64_t k)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].k < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* the entry of stored chunk k in snapshot s, or NULL if it was absent */
const zf_present *zf_snap_find(const zf_snap *s, uint64_t k)
{
    size_t i = zf_snap_lower(s, k);
    return i < s->n && s->v[i].k == k ? &s->v[i] : NULL;
}

/* digest of the stamp of an absent key */
static zf_fp absent_digest(void)
{
    zf_stamp absent;
    memset(&absent, 0, sizeof absent);
    return zf_stamp_digest(&absent);
}

/* remember the version of stored chunk k read from a store that cannot be listed */
static void learn(zf_array *a, uint64_t k, const zf_stamp *st)
{
    pthread_mutex_lock(&a->mu);
    zf_snap *l = &a->learned; /* the inner chunks of a shard come in a row: one entry */
    if (a->learning && (!l->n || l->v[l->n - 1].k != k))
        zf_snap_take_stamp(l, k, st);
    pthread_mutex_unlock(&a->mu);
}

/* after the stored chunk at key was read (rc, the stamp st of the version
 * read): ZF_ESTALE if that version is not the one of the snapshot, else rc.
 * A read that failed for another reason than absence compares the key's
 * stamp now instead (a file replaced by a directory is a change too), except
 * a remote store's ZF_EIO (HTTP status after retries), returned as it is,
 * as is the read's failure when that stamp fails too. */
int zf_array_check_version(zf_array *a, uint64_t index, const char *key, int rc,
                           const zf_stamp *st, char *err, size_t errcap)
{
    const zf_snap *snap = __atomic_load_n(&a->snap, __ATOMIC_ACQUIRE);
    if (!snap && a->unlisted && rc == ZF_OK && st->kind == ZF_STORE_FILE)
        learn(a, zf_array_stored_index(a, index), st);
    if (!snap || (rc == ZF_EIO && a->store->remote))
        return rc; /* a failing server says nothing of the version: its error, as is */
    const zf_present *p = zf_snap_find(snap, zf_array_stored_index(a, index));
    zf_fp then = p ? p->digest : absent_digest(), now = zf_stamp_version(st);
    if (rc != ZF_OK && rc != ZF_ENOTFOUND && stamp_digest(a, key, &now) != ZF_OK)
        return rc; /* the store cannot tell what is there: the read's own failure */
    if (now.a == then.a && now.b == then.b)
        return rc;
    __atomic_store_n(&a->changed, 1, __ATOMIC_RELEASE); /* the re-check tells (zf_array_changed) */
    snprintf(err, errcap, "rewritten since its size was computed; files open keep their version, "
             "the next open shows the new one");
    return ZF_ESTALE;
}

uint64_t zf_array_absent_run(const zf_array *a, uint64_t index)
{
    const zf_snap *snap = __atomic_load_n(&a->snap, __ATOMIC_ACQUIRE);
    int fill_rc;
    const char *fill_err;
    zf_array_fill_ticks(a, &fill_rc, &fill_err);
    if (!snap || fill_rc || index >= a->nchunks)
        return 0; /* unknown, or a missing chunk is an error (CF fill value) */
    int same_grid = 1;
    for (unsigned d = 0; d < a->meta.ndim; d++)
        same_grid &= a->meta.read_chunks[d] == a->meta.chunks[d];
    if (!same_grid) /* read chunks inside shards: one at a time */
        return zf_snap_find(snap, zf_array_stored_index(a, index)) ? 0 : 1;
    size_t i = zf_snap_lower(snap, index); /* the two grids coincide: index is k */
    return (i < snap->n ? snap->v[i].k : a->nchunks) - index;
}

/* was the stored chunk holding read chunk index absent at the snapshot of a
 * remote store?  (A local store's absent chunk is still looked at: one that
 * appeared since is a change, ZF_ESTALE.) */
int zf_array_snapshot_absent(const zf_array *a, uint64_t index)
{
    const zf_snap *snap = __atomic_load_n(&a->snap, __ATOMIC_ACQUIRE);
    return a->store->remote && snap && !zf_snap_find(snap, zf_array_stored_index(a, index));
}
/* add stored chunk k with stamp st to the snapshot being built */
void zf_snap_take_stamp(void *ctx, uint64_t k, const zf_stamp *st)
{
    zf_snap *s = ctx;
    if (s->failed)
        return;
    if (zf_grow(&s->v, &s->cap, s->n, sizeof *s->v, 64)) {
        s->failed = 1;
        return;
    }
    s->v[s->n++] = (zf_present){k, zf_stamp_version(st)};
    s->files += st->kind == ZF_STORE_FILE;
    if (zf_stamp_time(st) > s->newest)
        s->newest = zf_stamp_time(st);
}

int64_t zf_array_chunks_time(const zf_array *a)
{
    const zf_snap *snap = __atomic_load_n(&a->snap, __ATOMIC_ACQUIRE);
    return snap ? __atomic_load_n(&snap->newest, __ATOMIC_RELAXED) : 0;
}

void zf_array_set_chunks_time(zf_array *a, int64_t t)
{
    zf_snap *snap = __atomic_load_n(&a->snap, __ATOMIC_ACQUIRE);
    if (snap)
        __atomic_store_n(&snap->newest, t, __ATOMIC_RELAXED);
}

void zf_snap_free(zf_snap *s)
{
    if (s)
        free(s->v);
    free(s);
}
