/* snapshot.c - an array's snapshot of its stored chunks: listing them with
 * their versions (stamps), what changed since, how many are present, and,
 * for a store that cannot be listed, adopting the versions learned while
 * reading (the set itself and what reads learn from it: present.c). */
#include "array_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/deadline.h"
#include "base/err.h"
#include "base/log.h"

/* number of stored chunks (shards) along each dimension, and in all */
static uint64_t stored_grid(const zf_array *a, uint64_t *grid)
{
    uint64_t total = 1;
    for (unsigned d = 0; d < a->meta.ndim; d++) {
        grid[d] = (a->meta.shape[d] + a->meta.chunks[d] - 1) / a->meta.chunks[d];
        total *= grid[d]; /* <= nelems (or 0), so no overflow */
    }
    return total;
}

/* called with the index (C order over the stored grid) and stamp of every
 * stored chunk present in the store */
typedef void (*stamp_fn)(void *ctx, uint64_t k, const zf_stamp *st);

/* the linear index of coords over grid into *k; -1 if coords lie outside it */
static int grid_index(unsigned ndim, const uint64_t *grid, const uint64_t *coords, uint64_t *k)
{
    *k = 0;
    for (unsigned d = 0; d < ndim; d++) {
        if (coords[d] >= grid[d])
            return -1;
        *k = *k * grid[d] + coords[d];
    }
    return 0;
}

/* what a listing of the stored chunks found: complete, or why not.  A chunk
 * is absent only when a complete answer leaves it out (store.h); anything
 * else fails the whole listing, and its callers keep nothing of it. */
typedef struct seen {
    stamp_fn fn;
    void *ctx;
    int rc;                 /* ZF_OK, ZF_EUNSUPPORTED, or the first failure */
    char why[ZF_KEY_MAX + 256]; /* "KEY: REASON" of that failure */
} seen;

/* record that asking the store about key failed (rc, reason why); returns rc */
static int seen_fail(seen *v, int rc, const char *key, const char *why)
{
    if (v->rc == ZF_OK) {
        v->rc = rc;
        if (rc != ZF_EUNSUPPORTED)
            snprintf(v->why, sizeof v->why, "%s: %s", *key ? key : "(the store root)",
                     why && *why ? why : zf_strerror(rc));
    }
    return v->rc;
}

/* list key: complete (a directory that is not there holds no chunk), or
 * the failure recorded in v */
static int list_dir(const zf_array *a, const char *key, unsigned flags, zf_store_list_fn fn,
                    void *arg, seen *v)
{
    char why[256] = "";
    int rc = zf_store_list(a->store, key, flags, fn, arg, why, sizeof why);
    if (rc == ZF_OK || rc == ZF_ENOTFOUND)
        return ZF_OK;
    return seen_fail(v, rc == ZF_ECORRUPT ? ZF_EIO : rc, key, why); /* (fn stopped: v has it) */
}

typedef struct dir_ctx {
    const zf_array *a;
    const uint64_t *grid;
    const char *dir;   /* the listed directory, relative to the array's */
    seen *v;
} dir_ctx;

/* one entry of a listed chunk directory: a chunk of the grid, or ignored */
static int dir_entry(void *arg, const zf_store_entry *e)
{
    dir_ctx *c = arg;
    char rel[ZF_KEY_MAX];
    uint64_t coords[ZF_MAX_DIMS], k;
    int n = snprintf(rel, sizeof rel, "%s%s%s", c->dir, *c->dir ? "/" : "", e->name);
    if (n > 0 && (size_t)n < sizeof rel && zf_meta_chunk_coords(&c->a->meta, rel, coords) == ZF_OK &&
        grid_index(c->a->meta.ndim, c->grid, coords, &k) == 0)
        c->v->fn(c->v->ctx, k, &e->stamp);
    return 0;
}

/* list the directory holding the chunk at coords, calling v->fn for the
 * chunks in it; ZF_OK (complete), or the failure recorded in v */
static int list_chunk_dir(const zf_array *a, const uint64_t *grid, uint64_t *coords,
                          unsigned flags, seen *v)
{
    char rel[ZF_KEY_MAX], key[ZF_KEY_MAX];
    if (zf_meta_chunk_key(&a->meta, coords, rel, sizeof rel) != ZF_OK)
        return ZF_OK; /* no key fits: nothing can be stored */
    char *slash = strrchr(rel, '/');
    if (slash)
        *slash = '\0';
    else
        *rel = '\0';
    int n = snprintf(key, sizeof key, "%s%s%s", a->path, *a->path && *rel ? "/" : "", rel);
    if (n < 0 || (size_t)n >= sizeof key)
        return ZF_OK;
    dir_ctx c = {a, grid, rel, v};
    return list_dir(a, key, flags, dir_entry, &c, v);
}

/* stamp every stored chunk key one by one: only ZF_ENOTFOUND is absence */
static int stamp_each(const zf_array *a, const uint64_t *grid, uint64_t total, seen *v)
{
    uint64_t coords[ZF_MAX_DIMS] = {0};
    char key[ZF_KEY_MAX];
    size_t plen = *a->path ? (size_t)snprintf(key, sizeof key, "%s/", a->path) : 0;
    for (uint64_t k = 0; k < total; k++) {
        zf_stamp st;
        char why[256] = "";
        int rc = plen < sizeof key &&
                         zf_meta_chunk_key(&a->meta, coords, key + plen, sizeof key - plen) == ZF_OK
                     ? zf_store_stamp_why(a->store, key, &st, why, sizeof why)
                     : ZF_ENOTFOUND; /* no key fits: nothing can be stored */
        if (rc == ZF_OK)
            v->fn(v->ctx, k, &st);
        else if (rc != ZF_ENOTFOUND)
            return seen_fail(v, rc, key, why);
        for (unsigned d = a->meta.ndim; d-- > 0;) {
            if (++coords[d] < grid[d])
                break;
            coords[d] = 0;
        }
    }
    return ZF_OK;
}

/* a nested walk: the chunk directories below the array's chunk root */
typedef struct walk_ctx {
    const zf_array *a;
    const uint64_t *grid;
    char key[ZF_KEY_MAX];   /* the directory being listed, from the store root */
    size_t base;            /* where the part relative to the array starts in key */
    unsigned depth;         /* the dimension the listed directory's entries stand for */
    seen *v;
    unsigned flags;         /* zf_store_list's flags */
} walk_ctx;

/* is name a canonical decimal below bound?  (the names of chunk directories) */
static int grid_name(const char *name, uint64_t bound)
{
    uint64_t v = 0;
    if (!*name || (name[0] == '0' && name[1]))
        return 0;
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    return v < bound;
}

static int walk_dir(walk_ctx *w);

/* one entry of a nested chunk directory: a chunk, or a directory to descend
 * into; nonzero (a failure below) stops the listing */
static int walk_entry(void *arg, const zf_store_entry *e)
{
    walk_ctx *w = arg;
    size_t len = strlen(w->key), nlen = strlen(e->name);
    if (len + 1 + nlen >= sizeof w->key)
        return 0; /* too long for any key: not a chunk */
    int sep = len > 0; /* the store root "" needs no separator */
    if (sep)
        w->key[len] = '/';
    memcpy(w->key + len + sep, e->name, nlen + 1);
    const char *rel = w->key + w->base + (w->base && w->key[w->base] == '/');
    uint64_t coords[ZF_MAX_DIMS], k;
    int rc = 0;
    if (w->depth + 1 < w->a->meta.ndim) {
        if (e->stamp.kind == ZF_STORE_DIR && grid_name(e->name, w->grid[w->depth])) {
            w->depth++;
            rc = walk_dir(w);
            w->depth--;
        }
    } else if (zf_meta_chunk_coords(&w->a->meta, rel, coords) == ZF_OK &&
               grid_index(w->a->meta.ndim, w->grid, coords, &k) == 0) {
        w->v->fn(w->v->ctx, k, &e->stamp);
    }
    w->key[len] = '\0';
    return rc;
}

/* list w->key, descending into the directories of the grid it holds */
static int walk_dir(walk_ctx *w)
{
    return list_dir(w->a, w->key, w->flags, walk_entry, w, w->v);
}

/* v->fn for every chunk of a nested key layout (one directory level per
 * dimension): only directories that exist are listed, so a sparse grid
 * costs what it stores; ZF_OK, or the failure recorded in v */
static int walk_nested(const zf_array *a, const uint64_t *grid, unsigned flags, seen *v)
{
    uint64_t zero[ZF_MAX_DIMS] = {0};
    char rel[ZF_KEY_MAX];
    unsigned n = a->meta.ndim, comps = 1;
    if (zf_meta_chunk_key(&a->meta, zero, rel, sizeof rel) != ZF_OK)
        return ZF_OK; /* no key fits: nothing can be stored */
    for (const char *p = rel; *p; p++)
        comps += *p == '/';
    if (comps < n) /* not one level per dimension: nothing to walk */
        return ZF_OK;
    char *end = rel; /* the chunk root: rel without its last n components */
    for (unsigned c = 0; c < comps - n; c++)
        end = strchr(end, '/') + 1;
    end[end > rel ? -1 : 0] = '\0';
    walk_ctx *w = malloc(sizeof *w);
    if (!w)
        return seen_fail(v, ZF_ENOMEM, a->path, NULL);
    *w = (walk_ctx){.a = a, .grid = grid, .v = v, .flags = flags};
    int len = snprintf(w->key, sizeof w->key, "%s%s%s", a->path, *a->path && *rel ? "/" : "", rel);
    w->base = *a->path ? strlen(a->path) : 0;
    int rc = len >= 0 && (size_t)len < sizeof w->key ? walk_dir(w) : ZF_OK;
    free(w);
    return rc;
}

/* v->fn for every stored chunk present, asking the store in bulk: the chunk
 * directory (or, for nested keys, each chunk directory that exists) is
 * listed once, with the stamps of what it holds (or only their kinds, with
 * flags ZF_LIST_KINDS); a single stored chunk is stamped alone.  ZF_OK when
 * the answer is complete; else v->rc and v->why say why not (v->fn then saw
 * part of it, or nothing): ZF_EUNSUPPORTED if the store cannot be listed,
 * or the failure of the store (ZF_EIO, ZF_ENOMEM...). */
static int stamp_stored(const zf_array *a, unsigned flags, seen *v)
{
    uint64_t grid[ZF_MAX_DIMS], total = stored_grid(a, grid), coords[ZF_MAX_DIMS] = {0};
    unsigned n = a->meta.ndim;
    if (total == 0)
        return ZF_OK;
    if (total < 2)
        return stamp_each(a, grid, total, v);
    if (a->meta.separator == '/' && n > 1)
        return walk_nested(a, grid, flags, v);
    return list_chunk_dir(a, grid, coords, flags, v);
}

/* log that which chunks of a are stored could not be told (v): once per
 * reason and ZF_TOLD_QUIET_MS (every view of the array asks), never for a
 * request for no one (base/deadline.h); returns the error for the reads
 * that needed it */
static int told_unknown(zf_array *a, const seen *v)
{
    if (!zf_deadline_unattended() && zf_array_news(a, &a->told_list, v->why))
        zf_log("%s%s%s: cannot tell which chunks are stored: %s; reads fail until the store "
               "answers", zf_store_path(a->store), *a->path ? "/" : "", a->path, v->why);
    return v->rc == ZF_ENOMEM ? ZF_ENOMEM : ZF_EIO;
}

static int cmp_present(const void *x, const void *y)
{
    const zf_present *p = x, *q = y;
    return (p->k > q->k) - (p->k < q->k);
}

/* sort s by index and drop repeated indices (a key reached twice) */
static void snap_sort(zf_snap *s)
{
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, cmp_present);
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        if (m == 0 || s->v[i].k != s->v[m - 1].k)
            s->v[m++] = s->v[i];
    s->n = m;
}

static void fp_meta(const zf_array *a, zf_fp *fp)
{
    const zf_meta *m = &a->meta;
    char codecs[1024];
    zf_pipeline_describe(m->pipeline, codecs, sizeof codecs);
    zf_fp_add(fp, a->path, strlen(a->path)); /* not the store's: chunk stamps name the files */
    zf_fp_add(fp, m->shape, sizeof m->shape);
    zf_fp_add(fp, m->chunks, sizeof m->chunks);
    zf_fp_add(fp, m->read_chunks, sizeof m->read_chunks);
    zf_fp_add(fp, m->dtype_text, strlen(m->dtype_text));
    zf_fp_add(fp, &m->fill, sizeof m->fill);
    zf_fp_add(fp, &m->key_v2, sizeof m->key_v2);
    zf_fp_add(fp, &m->separator, 1);
    zf_fp_add(fp, codecs, strlen(codecs));
    zf_cf_fingerprint(&m->cf, fp);
    for (unsigned d = 0; d < m->ndim; d++)
        zf_fp_add(fp, m->dim_names[d] ? m->dim_names[d] : "", m->dim_names[d] ? strlen(m->dim_names[d]) + 1 : 0);
}

/* install s as the snapshot, freeing the one it replaces */
static void snap_install(zf_array *a, zf_snap *s)
{
    zf_snap_free(__atomic_exchange_n(&a->snap, s, __ATOMIC_ACQ_REL));
}

int zf_array_snapshot(zf_array *a, zf_fp *fp)
{
    zf_snap *s = calloc(1, sizeof *s);
    if (!s)
        return ZF_ENOMEM;
    seen v = {zf_snap_take_stamp, s, ZF_OK, ""};
    int rc = stamp_stored(a, 0, &v);
    if (rc == ZF_OK && s->failed)
        rc = ZF_ENOMEM;
    if (rc != ZF_OK) { /* nothing of a failed listing is kept */
        zf_snap_free(s);
        if (rc != ZF_EUNSUPPORTED)
            return rc == ZF_ENOMEM ? rc : told_unknown(a, &v);
        a->unlisted = 1; /* no snapshot: keyed by the metadata's stamps (array.h) */
        pthread_mutex_lock(&a->mu);
        a->learning = 1;
        pthread_mutex_unlock(&a->mu);
        fp_meta(a, fp);
        zf_fp_add(fp, "unlisted", 8);
        zf_fp_add(fp, &a->origin, sizeof a->origin);
        return ZF_OK;
    }
    snap_sort(s);
    fp_meta(a, fp);
    uint64_t n = s->n;
    zf_fp_add(fp, &n, sizeof n);
    if (s->n)
        zf_fp_add(fp, s->v, s->n * sizeof *s->v); /* no padding: three uint64_t */
    snap_install(a, s);
    return ZF_OK;
}

void zf_array_set_origin(zf_array *a, const zf_fp *origin)
{
    a->origin = *origin;
}

int zf_array_unlisted(const zf_array *a)
{
    return a->unlisted;
}

int zf_array_end_learning(zf_array *a, int adopt)
{
    zf_snap *s = calloc(1, sizeof *s);
    pthread_mutex_lock(&a->mu);
    int failed = !s || a->learned.failed;
    if (s) { /* the learned stamps move into s */
        s->v = a->learned.v;
        s->n = s->cap = a->learned.n;
        s->newest = a->learned.newest;
    }
    memset(&a->learned, 0, sizeof a->learned);
    a->learning = 0;
    adopt = adopt && !a->learned_once; /* a retried pass saw only what the cache lacked */
    a->learned_once = 1;
    pthread_mutex_unlock(&a->mu);
    if (failed || !adopt) {
        zf_snap_free(s);
        return failed && adopt ? ZF_ENOMEM : ZF_ENOTFOUND;
    }
    snap_sort(s); /* a shard read for each of its inner chunks: one entry */
    s->files = s->n;
    snap_install(a, s);
    return ZF_OK;
}

const void *zf_array_snap_data(const zf_array *a, size_t *len)
{
    const zf_snap *snap = __atomic_load_n(&a->snap, __ATOMIC_ACQUIRE);
    *len = snap ? snap->n * sizeof *snap->v : 0;
    return snap && snap->n ? (const void *)snap->v : (const void *)"";
}

int zf_array_snap_load(zf_array *a, const void *data, size_t len)
{
    uint64_t grid[ZF_MAX_DIMS], total = stored_grid(a, grid);
    const size_t one = sizeof(zf_present);
    if (len % one)
        return ZF_ECORRUPT;
    zf_snap *s = calloc(1, sizeof *s);
    if (!s || (len && !(s->v = malloc(len)))) {
        free(s);
        return ZF_ENOMEM;
    }
    if (len)
        memcpy(s->v, data, len);
    s->n = s->cap = s->files = len / one;
    for (size_t i = 0; i < s->n; i++) /* strictly increasing, inside the grid */
        if (s->v[i].k >= total || (i && s->v[i].k <= s->v[i - 1].k)) {
            zf_snap_free(s);
            return ZF_ECORRUPT;
        }
    snap_install(a, s);
    return ZF_OK;
}
typedef struct changed_ctx {
    const zf_snap *snap;
    uint64_t seen;
    int changed;
} changed_ctx;

/* compare stored chunk k's stamp now with the snapshot's */
static void compare_stamp(void *ctx, uint64_t k, const zf_stamp *st)
{
    changed_ctx *c = ctx;
    const zf_present *p = zf_snap_find(c->snap, k);
    zf_fp now = zf_stamp_version(st);
    c->changed |= !p || now.a != p->digest.a || now.b != p->digest.b; /* new, or rewritten */
    c->seen++;
}

int zf_array_changed(zf_array *a, char *err, size_t errcap)
{
    changed_ctx c = {__atomic_load_n(&a->snap, __ATOMIC_ACQUIRE), 0, 0};
    if (__atomic_load_n(&a->changed, __ATOMIC_ACQUIRE)) /* seen already (or by a read) */
        return 1;
    if (!c.snap || a->unlisted) /* unlisted: chunks are checked when read (check_version) */
        return 0;
    seen v = {compare_stamp, &c, ZF_OK, ""};
    if (stamp_stored(a, 0, &v) != ZF_OK) { /* cannot tell: neither changed nor not */
        snprintf(err, errcap, "%s", v.rc == ZF_ENOMEM ? zf_strerror(v.rc) : v.why);
        return v.rc == ZF_ENOMEM ? ZF_ENOMEM : ZF_EIO;
    }
    int changed = c.changed || c.seen != c.snap->n; /* present then, gone now */
    if (changed)
        __atomic_store_n(&a->changed, 1, __ATOMIC_RELEASE);
    return changed;
}

typedef struct count_ctx {
    uint64_t files, listed;
} count_ctx;

static void count_present(void *ctx, uint64_t k, const zf_stamp *st)
{
    (void)k;
    count_ctx *c = ctx;
    c->files += st->kind == ZF_STORE_FILE;
    c->listed++;
}

int zf_array_count_listed(const zf_array *a, uint64_t *present, uint64_t *expected)
{
    uint64_t grid[ZF_MAX_DIMS];
    *expected = stored_grid(a, grid);
    *present = 0;
    const zf_snap *snap = __atomic_load_n(&a->snap, __ATOMIC_ACQUIRE);
    if (!snap)
        return ZF_ENOTFOUND;
    *present = snap->files; /* the listing the size pass took */
    return ZF_OK;
}

int zf_array_count_stored(zf_array *a, uint64_t limit, uint64_t *present, uint64_t *expected)
{
    if (zf_array_count_listed(a, present, expected) == ZF_OK)
        return ZF_OK;
    count_ctx c = {0, 0};
    seen v = {count_present, &c, ZF_OK, ""};
    int rc = stamp_stored(a, ZF_LIST_KINDS, &v); /* kinds suffice */
    if (rc == ZF_EUNSUPPORTED)
        return ZF_ENOTFOUND;
    if (rc != ZF_OK) /* a count of part of them would be wrong: none */
        return told_unknown(a, &v);
    if (c.listed > limit)
        return ZF_EUNSUPPORTED;
    *present = c.files;
    return ZF_OK;
}
