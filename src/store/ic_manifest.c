/* ic_manifest.c - manifests: a bounded cache shared by a repository's
 * snapshots (single-flight loads, least recently used evicted first), and
 * chunk references looked up by coordinates in place (ic_impl.h).
 *
 * Lookups binary-search the manifest's arrays (by node id) and an array's
 * references (by coordinates), as the writer sorts them (spec: MUST).  So
 * that a hostile manifest cannot make a present chunk look absent, each is
 * checked once before its first lookup: arrays strictly increasing, an
 * array's references strictly increasing with one coordinate per dimension
 * (a manifest or array that fails is damaged: ZF_ECORRUPT, never absence). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/deadline.h"
#include "base/err.h"
#include "store/ic_impl.h"

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

#define LOCATION_MAX 1024   /* the writer's bound on a compressed location, decoded */
#define CHECKED_MAX 4096    /* arrays of one manifest whose references are remembered as checked */
#define PREFETCH_EACH ((uint64_t)256 << 10) /* manifests fetched at once at the start: each at most */
#define PREFETCH_ALL ((uint64_t)4 << 20)    /* ... and all of them at most (and the cache's budget) */

/* an array of the manifest whose references were checked, and the verdict */
typedef struct checked {
    uint8_t node[IC_NODE_ID_LEN];
    int rc;
} checked;

struct ic_manifest {
    uint8_t id[IC_ID_LEN];
    ic_file file;
    zf_fb_vec arrays;            /* ArrayManifest tables, sorted by node id */
    ZSTD_DDict *dict;            /* for compressed locations, if the manifest has a dictionary */
    int loading, failed, rc;
    char err[256];
    unsigned long users;
    checked *checks;             /* under the repository's mutex */
    size_t nchecks;
    ic_manifest *prev, *next;    /* the cache, most recent first */
};

/* ------------------------------------------------------------ loading */

/* the manifest's own checks: id, arrays sorted, dictionary */
static int open_manifest(ic_manifest *m, char *err, size_t errcap)
{
    const zf_fb_table *t = &m->file.root;
    const uint8_t *id, *prev = NULL;
    if (zf_fb_struct(t, FB_MAN_ID, IC_ID_LEN, &id) != ZF_OK || memcmp(id, m->id, IC_ID_LEN))
        return ERR(ZF_ECORRUPT, "the file holds another manifest's id");
    if (zf_fb_vector(t, FB_MAN_ARRAYS, 4, &m->arrays) != ZF_OK)
        return ERR(ZF_ECORRUPT, "its list of arrays is damaged");
    for (uint32_t i = 0; i < m->arrays.count; i++) {
        zf_fb_table am;
        const uint8_t *node;
        if (zf_fb_vec_table(&m->arrays, i, &am) != ZF_OK ||
            zf_fb_struct(&am, FB_AMAN_NODE, IC_NODE_ID_LEN, &node) != ZF_OK)
            return ERR(ZF_ECORRUPT, "its array %u is damaged", i);
        if (prev && memcmp(prev, node, IC_NODE_ID_LEN) >= 0)
            return ERR(ZF_ECORRUPT, "its arrays are not sorted by node id");
        prev = node;
    }
    zf_fb_vec dict;
    int rc = zf_fb_vector(t, FB_MAN_DICT, 1, &dict);
    if (rc == ZF_ECORRUPT)
        return ERR(ZF_ECORRUPT, "its location dictionary is damaged");
    if (rc == ZF_OK && !(m->dict = ZSTD_createDDict(zf_fb_vec_at(&dict, 0), dict.count)))
        return ERR(ZF_ECORRUPT, "its location dictionary is not one zstd can use");
    return ZF_OK;
}

/* fetch, decode and check manifest m (outside the cache's lock) */
static int load(ic_repo *r, ic_manifest *m, char *err, size_t errcap)
{
    char text[IC_ID_TEXT], key[32], why[200] = "";
    ic_id_text(m->id, IC_ID_LEN, text);
    snprintf(key, sizeof key, "manifests/%s", text);
    int rc = ic_file_fetch(r->raw, key, IC_MANIFEST, r->max_file, &m->file, NULL, why, sizeof why);
    if (rc == ZF_ENOTFOUND) /* the snapshot names it: gone is damage, not absence */
        return ERR(ZF_EIO, "%s does not exist", key);
    if (rc == ZF_OK)
        rc = open_manifest(m, why, sizeof why);
    if (rc != ZF_OK)
        return ERR(rc, "%s: %s", key, *why ? why : zf_strerror(rc));
    return ZF_OK;
}

static void manifest_free(ic_manifest *m)
{
    ic_file_free(&m->file);
    ZSTD_freeDDict(m->dict);
    free(m->checks);
    free(m);
}

/* free a list of manifests evict() or a failed load left */
static void free_dead(ic_manifest *dead)
{
    while (dead) {
        ic_manifest *next = dead->next;
        manifest_free(dead);
        dead = next;
    }
}

static void unlink_m(ic_repo *r, ic_manifest *m)
{
    if (m->prev)
        m->prev->next = m->next;
    else
        r->lru = m->next;
    if (m->next)
        m->next->prev = m->prev;
    m->prev = m->next = NULL;
}

static void push_front(ic_repo *r, ic_manifest *m)
{
    m->prev = NULL;
    m->next = r->lru;
    if (r->lru)
        r->lru->prev = m;
    r->lru = m;
}

/* drop idle manifests, least recent first, until the cache fits its budget;
 * the most recent one stays whatever its size (lock held) */
static void evict(ic_repo *r, ic_manifest **dead)
{
    ic_manifest *m = r->lru ? r->lru->next : NULL;
    while (m && m->next)
        m = m->next; /* the tail */
    while (m && m != r->lru && r->cached_bytes > r->budget) {
        ic_manifest *prev = m->prev;
        if (!m->users && !m->loading) {
            unlink_m(r, m);
            r->cached_bytes -= m->file.len;
            m->next = *dead;
            *dead = m;
        }
        m = prev;
    }
}

/* the cached manifest id with one use, loaded (or loading) */
static int acquire(ic_repo *r, const uint8_t id[IC_ID_LEN], ic_manifest **out, char *err,
                   size_t errcap)
{
    *out = NULL;
    pthread_mutex_lock(&r->mu);
    ic_manifest *m = r->lru;
    while (m && (m->failed || memcmp(m->id, id, IC_ID_LEN)))
        m = m->next;
    if (m) {
        m->users++;
        unlink_m(r, m);
        push_front(r, m);
        while (m->loading)
            if (zf_deadline_wait(&r->loaded, &r->mu)) {
                m->users--;
                pthread_mutex_unlock(&r->mu);
                return ERR(ZF_EIO, "the request's time budget was spent waiting for a manifest");
            }
        int rc = m->failed ? m->rc : ZF_OK;
        if (rc != ZF_OK)
            (void)ERR(rc, "%s", m->err);
        pthread_mutex_unlock(&r->mu);
        *out = m;
        return rc; /* a failed load's use is given back by ic_manifest_put too */
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        pthread_mutex_unlock(&r->mu);
        return ZF_ENOMEM;
    }
    memcpy(m->id, id, IC_ID_LEN);
    m->loading = 1;
    m->users = 1;
    push_front(r, m);
    pthread_mutex_unlock(&r->mu);
    int rc = load(r, m, m->err, sizeof m->err);
    ic_manifest *dead = NULL;
    pthread_mutex_lock(&r->mu);
    m->loading = 0;
    m->failed = rc != ZF_OK;
    m->rc = rc;
    if (rc == ZF_OK) {
        r->cached_bytes += m->file.len;
        evict(r, &dead);
    }
    pthread_cond_broadcast(&r->loaded);
    pthread_mutex_unlock(&r->mu);
    free_dead(dead);
    if (rc != ZF_OK)
        (void)ERR(rc, "%s", m->err);
    *out = m;
    return rc;
}

/* the i-th manifest file a snapshot lists (spec 1's structs v1, else spec 2's tables v2): its id and size */
static int file_info(const zf_fb_vec *v1, const zf_fb_vec *v2, uint32_t i, const uint8_t **id,
                     uint64_t *size)
{
    if (v1) {
        const uint8_t *p = zf_fb_vec_at(v1, i);
        *id = p;
        *size = zf_fb_le64(p + 16);
        return ZF_OK;
    }
    zf_fb_table t;
    return zf_fb_vec_table(v2, i, &t) == ZF_OK && zf_fb_struct(&t, FB_FILEINFO_ID, IC_ID_LEN, id) == ZF_OK &&
                   zf_fb_u64(&t, FB_FILEINFO_SIZE, 0, size) == ZF_OK
               ? ZF_OK : ZF_ECORRUPT;
}

/* is manifest id cached (or loading)?  (lock held) */
static int cached(const ic_repo *r, const uint8_t *id)
{
    for (const ic_manifest *m = r->lru; m; m = m->next)
        if (!m->failed && !memcmp(m->id, id, IC_ID_LEN))
            return 1;
    return 0;
}

/* a fetched manifest decoded into the cache (unless another thread got there) */
static void adopt(ic_repo *r, const uint8_t *id, const uint8_t *raw, size_t n)
{
    ic_manifest *m = calloc(1, sizeof *m), *dead = NULL;
    if (!m)
        return;
    memcpy(m->id, id, IC_ID_LEN);
    if (ic_file_decode(raw, n, IC_MANIFEST, r->max_file, &m->file, NULL, 0) != ZF_OK ||
        open_manifest(m, NULL, 0) != ZF_OK) {
        manifest_free(m);
        return;
    }
    pthread_mutex_lock(&r->mu);
    if (cached(r, id) || r->cached_bytes + m->file.len > r->budget) {
        pthread_mutex_unlock(&r->mu);
        manifest_free(m);
        return;
    }
    push_front(r, m);
    r->cached_bytes += m->file.len;
    evict(r, &dead);
    pthread_mutex_unlock(&r->mu);
    free_dead(dead);
}

void ic_manifest_prefetch(ic_repo *r, const ic_snap *s)
{
    enum { MOST = 256 };
    const uint64_t each_max = PREFETCH_EACH, all_max = r->budget < PREFETCH_ALL ? r->budget : PREFETCH_ALL;
    zf_fb_vec v1, v2;
    int has1 = zf_fb_vector(&s->file.root, FB_SNAP_FILES, IC_FILEINFO_V1, &v1) == ZF_OK && v1.count;
    if (!has1 && zf_fb_vector(&s->file.root, FB_SNAP_FILES_V2, 4, &v2) != ZF_OK)
        return;
    uint32_t n = has1 ? v1.count : v2.count, k = 0;
    zf_store_req *q = calloc(MOST, sizeof *q);
    const uint8_t **ids = calloc(MOST, sizeof *ids);
    char (*keys)[32] = calloc(MOST, sizeof *keys);
    uint64_t total = 0;
    for (uint32_t i = 0; q && ids && keys && i < n && k < MOST; i++) {
        uint64_t size;
        char text[IC_ID_TEXT];
        if (file_info(has1 ? &v1 : NULL, &v2, i, &ids[k], &size) != ZF_OK || size < IC_HEADER_LEN ||
            size > each_max || total + size > all_max)
            continue; /* large (a data variable's, most likely) or damaged: read when needed */
        uint8_t *buf = malloc((size_t)size);
        if (!buf)
            continue;
        total += size;
        ic_id_text(ids[k], IC_ID_LEN, text);
        snprintf(keys[k], sizeof keys[k], "manifests/%s", text);
        q[k] = (zf_store_req){.key = keys[k], .off = 0, .len = (size_t)size, .buf = buf};
        k++;
    }
    if (k)
        zf_store_read_many(r->raw, q, k);
    for (uint32_t i = 0; i < k; i++) {
        if (q[i].rc == ZF_OK)
            adopt(r, ids[i], q[i].buf, q[i].len);
        free(q[i].buf);
    }
    free(q);
    free(ids);
    free(keys);
}

void ic_manifest_put(ic_repo *r, ic_manifest *m)
{
    if (!m)
        return;
    ic_manifest *dead = NULL;
    pthread_mutex_lock(&r->mu);
    if (--m->users == 0 && m->failed) { /* failures are not kept */
        unlink_m(r, m);
        m->next = dead;
        dead = m;
    } else if (!m->users) {
        evict(r, &dead);
    }
    pthread_mutex_unlock(&r->mu);
    free_dead(dead);
}

void ic_manifest_cache_free(ic_repo *r)
{
    while (r->lru) {
        ic_manifest *m = r->lru;
        r->lru = m->next;
        manifest_free(m);
    }
    r->cached_bytes = 0;
}

/* ------------------------------------------------------------ lookups */

/* the ArrayManifest of node in m: ZF_ENOTFOUND if the manifest has none */
static int find_array(const ic_manifest *m, const uint8_t *node, zf_fb_table *am)
{
    uint32_t lo = 0, hi = m->arrays.count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const uint8_t *id;
        if (zf_fb_vec_table(&m->arrays, mid, am) != ZF_OK ||
            zf_fb_struct(am, FB_AMAN_NODE, IC_NODE_ID_LEN, &id) != ZF_OK)
            return ZF_ECORRUPT; /* checked at load: cannot happen */
        int c = memcmp(id, node, IC_NODE_ID_LEN);
        if (c == 0)
            return ZF_OK;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return ZF_ENOTFOUND;
}

/* the coordinates of reference i of refs (n of them, as the array has) */
static int ref_coords(const zf_fb_vec *refs, uint32_t i, unsigned ndim, ic_coords *c,
                      zf_fb_table *t)
{
    zf_fb_vec index;
    if (zf_fb_vec_table(refs, i, t) != ZF_OK || zf_fb_vector(t, FB_CREF_INDEX, 4, &index) != ZF_OK ||
        index.count != ndim)
        return ZF_ECORRUPT;
    c->n = ndim;
    for (unsigned d = 0; d < ndim; d++)
        c->v[d] = zf_fb_le32(zf_fb_vec_at(&index, d));
    return ZF_OK;
}

/* compare the first n coordinates of a and b */
static int coords_cmp(const ic_coords *a, const ic_coords *b, unsigned n)
{
    for (unsigned d = 0; d < n; d++)
        if (a->v[d] != b->v[d])
            return a->v[d] < b->v[d] ? -1 : 1;
    return 0;
}

/* are refs strictly increasing, each with ndim coordinates? */
static int check_refs(const zf_fb_vec *refs, unsigned ndim)
{
    ic_coords prev, c;
    zf_fb_table t;
    for (uint32_t i = 0; i < refs->count; i++) {
        if (ref_coords(refs, i, ndim, &c, &t) != ZF_OK || (i && coords_cmp(&prev, &c, ndim) >= 0))
            return ZF_ECORRUPT;
        prev = c;
    }
    return ZF_OK;
}

/* the references of array a in m, checked once (ZF_ENOTFOUND: none there) */
static int array_refs(ic_repo *r, ic_manifest *m, const ic_node *a, zf_fb_vec *refs)
{
    zf_fb_table am;
    int rc = find_array(m, a->id, &am);
    if (rc != ZF_OK)
        return rc;
    if (zf_fb_vector(&am, FB_AMAN_REFS, 4, refs) != ZF_OK)
        return ZF_ECORRUPT;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < m->nchecks; i++)
        if (!memcmp(m->checks[i].node, a->id, IC_NODE_ID_LEN)) {
            rc = m->checks[i].rc;
            pthread_mutex_unlock(&r->mu);
            return rc;
        }
    pthread_mutex_unlock(&r->mu);
    rc = check_refs(refs, a->ndim); /* outside the lock: another thread may do it too */
    pthread_mutex_lock(&r->mu);
    checked *c = m->nchecks < CHECKED_MAX ? realloc(m->checks, (m->nchecks + 1) * sizeof *c) : NULL;
    if (c) {
        m->checks = c;
        memcpy(c[m->nchecks].node, a->id, IC_NODE_ID_LEN);
        c[m->nchecks++].rc = rc;
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* the first reference of refs whose first n coordinates are >= c's */
static uint32_t refs_lower(const zf_fb_vec *refs, unsigned ndim, const ic_coords *c, unsigned n)
{
    uint32_t lo = 0, hi = refs->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        ic_coords x;
        zf_fb_table t;
        if (ref_coords(refs, mid, ndim, &x, &t) == ZF_OK && coords_cmp(&x, c, n) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* the extents of manifest reference mref: from/to per dimension, or none
 * (*n 0: the whole grid, the writer's "all") */
static int extents(const zf_fb_table *mref, unsigned ndim, zf_fb_vec *ext)
{
    if (zf_fb_vector(mref, FB_MREF_EXTENTS, 8, ext) != ZF_OK ||
        (ext->count != 0 && ext->count != ndim))
        return ZF_ECORRUPT;
    return ZF_OK;
}

/* do the extents hold the chunk at c (its first n coordinates)? */
static int extents_hold(const zf_fb_vec *ext, const ic_coords *c, unsigned n)
{
    for (unsigned d = 0; d < ext->count && d < n; d++) {
        const uint8_t *p = zf_fb_vec_at(ext, d);
        if (c->v[d] < zf_fb_le32(p) || c->v[d] >= zf_fb_le32(p + 4))
            return 0;
    }
    return 1;
}

/* manifest reference i of array a: its manifest id and extents */
static int manifest_ref(const ic_node *a, uint32_t i, const uint8_t **id, zf_fb_vec *ext)
{
    zf_fb_table t;
    if (zf_fb_vec_table(&a->manifests, i, &t) != ZF_OK ||
        zf_fb_struct(&t, FB_MREF_ID, IC_ID_LEN, id) != ZF_OK || extents(&t, a->ndim, ext) != ZF_OK)
        return ZF_ECORRUPT;
    return ZF_OK;
}

/* the first manifest reference of a whose extents hold c: *i, or ZF_ENOTFOUND */
static int covering(const ic_node *a, const ic_coords *c, uint32_t *i, char *err, size_t errcap)
{
    for (uint32_t k = 0; k < a->manifests.count; k++) {
        const uint8_t *id;
        zf_fb_vec ext;
        if (manifest_ref(a, k, &id, &ext) != ZF_OK)
            return ERR(ZF_ECORRUPT, "the snapshot's manifest reference %u of this array is damaged", k);
        if (extents_hold(&ext, c, c->n)) {
            *i = k;
            return ZF_OK;
        }
    }
    return ZF_ENOTFOUND;
}

/* a zstd context for the calling thread (freed when it ends): one per
 * thread, not one per compressed location */
static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;

static void dctx_free(void *p)
{
    ZSTD_freeDCtx(p);
}

static void dctx_init(void)
{
    pthread_key_create(&dctx_key, dctx_free);
}

static ZSTD_DCtx *thread_dctx(void)
{
    pthread_once(&dctx_once, dctx_init);
    ZSTD_DCtx *dc = pthread_getspecific(dctx_key);
    if (!dc && (dc = ZSTD_createDCtx()) && pthread_setspecific(dctx_key, dc) != 0) {
        ZSTD_freeDCtx(dc);
        dc = NULL;
    }
    return dc;
}

/* the virtual location of reference t into ref->url (decompressed, vcc expanded) */
static int decode_location(const ic_manifest *m, const ic_snap *s, const zf_fb_table *t, ic_ref *ref,
                           char *err, size_t errcap)
{
    char loc[LOCATION_MAX + 1];
    const char *p = loc;
    size_t n;
    zf_fb_vec comp;
    int rc = zf_fb_vector(t, FB_CREF_COMPRESSED_LOCATION, 1, &comp);
    if (rc == ZF_OK) {
        ZSTD_DCtx *dc = m->dict ? thread_dctx() : NULL;
        size_t got = dc ? ZSTD_decompress_usingDDict(dc, loc, LOCATION_MAX, zf_fb_vec_at(&comp, 0),
                                                      comp.count, m->dict) : 0;
        if (!m->dict)
            return ERR(ZF_ECORRUPT, "a compressed location, but the manifest has no dictionary");
        if (!dc)
            return ZF_ENOMEM;
        if (ZSTD_isError(got))
            return ERR(ZF_ECORRUPT, "its compressed location: zstd: %s", ZSTD_getErrorName(got));
        n = got;
    } else if (rc == ZF_ENOTFOUND && zf_fb_string(t, FB_CREF_LOCATION, &p, &n) == ZF_OK) {
        rc = ZF_OK;
    } else {
        return ERR(ZF_ECORRUPT, "a chunk reference of no kind zarrfs knows");
    }
    if (memchr(p, 0, n))
        return ERR(ZF_ECORRUPT, "a virtual location with a NUL byte");
    rc = ic_vcc_expand(&s->vcc, p, n, ref->url, sizeof ref->url);
    if (rc == ZF_ENOTFOUND)
        return ERR(ZF_EIO, "the location %.*s names a virtual chunk container the repository does "
                   "not configure", (int)(n > 200 ? 200 : n), p);
    return rc == ZF_OK ? rc : ERR(rc, "a virtual location longer than %zu bytes", sizeof ref->url - 1);
}

/* the virtual reference t: location, checksums */
static int decode_virtual(const ic_manifest *m, const ic_snap *s, const zf_fb_table *t, ic_ref *ref,
                          char *err, size_t errcap)
{
    const char *etag;
    size_t n;
    ref->kind = IC_REF_VIRTUAL;
    int rc = decode_location(m, s, t, ref, err, errcap);
    if (rc != ZF_OK)
        return rc;
    rc = zf_fb_string(t, FB_CREF_ETAG, &etag, &n);
    if (rc == ZF_OK && (n >= sizeof ref->etag || memchr(etag, 0, n)))
        rc = ZF_ECORRUPT;
    if (rc == ZF_OK) {
        memcpy(ref->etag, etag, n);
        ref->etag[n] = '\0';
    }
    if ((rc == ZF_OK || rc == ZF_ENOTFOUND) &&
        zf_fb_u32(t, FB_CREF_LAST_MODIFIED, 0, &ref->last_modified) != ZF_ECORRUPT)
        return ZF_OK;
    return ERR(ZF_ECORRUPT, "the checksum of a virtual reference is damaged");
}

/* decode reference t (icechunk's order: chunk id, compressed location, location, inline) */
static int decode_ref(const ic_manifest *m, const ic_snap *s, const zf_fb_table *t, ic_ref *ref,
                      char *err, size_t errcap)
{
    const uint8_t *id;
    zf_fb_vec data;
    memset(ref, 0, offsetof(ic_ref, url));
    ref->url[0] = ref->etag[0] = '\0';
    if (zf_fb_u64(t, FB_CREF_OFFSET, 0, &ref->offset) == ZF_ECORRUPT ||
        zf_fb_u64(t, FB_CREF_LENGTH, 0, &ref->length) == ZF_ECORRUPT)
        return ERR(ZF_ECORRUPT, "a damaged chunk reference");
    int rc = zf_fb_struct(t, FB_CREF_CHUNK_ID, IC_ID_LEN, &id);
    if (rc == ZF_OK) {
        ref->kind = IC_REF_NATIVE;
        memcpy(ref->chunk_id, id, IC_ID_LEN);
        return ZF_OK;
    }
    zf_fb_vec probe;
    const char *loc;
    size_t n;
    if (rc == ZF_ENOTFOUND && (zf_fb_vector(t, FB_CREF_COMPRESSED_LOCATION, 1, &probe) != ZF_ENOTFOUND ||
                               zf_fb_string(t, FB_CREF_LOCATION, &loc, &n) != ZF_ENOTFOUND))
        return decode_virtual(m, s, t, ref, err, errcap);
    if (rc == ZF_ENOTFOUND && zf_fb_vector(t, FB_CREF_INLINE, 1, &data) == ZF_OK) {
        ref->kind = IC_REF_INLINE;
        ref->data = zf_fb_vec_at(&data, 0);
        ref->offset = 0;
        ref->length = data.count;
        return ZF_OK;
    }
    return ERR(ZF_ECORRUPT, "a chunk reference of no kind zarrfs knows");
}

int ic_chunk_ref(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *c, ic_manifest **m,
                 ic_ref *ref, char *err, size_t errcap)
{
    *m = NULL;
    uint32_t i = 0;
    const uint8_t *id;
    zf_fb_vec ext, refs;
    if (a->damage)
        return ERR(ZF_ECORRUPT, "%s", a->damage);
    int rc = covering(a, c, &i, err, errcap);
    if (rc != ZF_OK)
        return rc; /* no manifest covers it: absent */
    manifest_ref(a, i, &id, &ext);
    if ((rc = acquire(r, id, m, err, errcap)) != ZF_OK)
        return rc;
    rc = array_refs(r, *m, a, &refs);
    if (rc == ZF_ECORRUPT)
        return ERR(rc, "the manifest's references of this array are damaged or out of order");
    uint32_t k = rc == ZF_OK ? refs_lower(&refs, a->ndim, c, c->n) : refs.count;
    ic_coords x;
    zf_fb_table t;
    if (rc != ZF_OK || k >= refs.count || ref_coords(&refs, k, a->ndim, &x, &t) != ZF_OK ||
        coords_cmp(&x, c, c->n) != 0)
        return rc == ZF_OK || rc == ZF_ENOTFOUND ? ZF_ENOTFOUND : rc;
    return decode_ref(*m, s, &t, ref, err, errcap);
}

/* is c held by an earlier manifest reference than i (which would have it)? */
static int earlier_holds(const ic_node *a, uint32_t i, const ic_coords *c)
{
    for (uint32_t k = 0; k < i; k++) {
        const uint8_t *id;
        zf_fb_vec ext;
        if (manifest_ref(a, k, &id, &ext) == ZF_OK && extents_hold(&ext, c, c->n))
            return 1;
    }
    return 0;
}

/* the chunks of manifest reference i of a under prefix */
static int each_in(ic_repo *r, const ic_snap *s, const ic_node *a, uint32_t i, const ic_coords *prefix,
                   int need_refs, ic_chunk_fn fn, void *ctx, char *err, size_t errcap)
{
    const uint8_t *id;
    zf_fb_vec ext, refs;
    ic_manifest *m = NULL;
    manifest_ref(a, i, &id, &ext);
    if (!extents_hold(&ext, prefix, prefix->n))
        return ZF_OK;
    int rc = acquire(r, id, &m, err, errcap);
    if (rc == ZF_OK && (rc = array_refs(r, m, a, &refs)) == ZF_ECORRUPT)
        (void)ERR(rc, "the manifest's references of this array are damaged or out of order");
    for (uint32_t k = rc == ZF_OK ? refs_lower(&refs, a->ndim, prefix, prefix->n) : 0;
         rc == ZF_OK && k < refs.count; k++) {
        ic_coords c;
        zf_fb_table t;
        ic_ref ref;
        if ((rc = ref_coords(&refs, k, a->ndim, &c, &t)) != ZF_OK || coords_cmp(&c, prefix, prefix->n))
            break;
        if (!extents_hold(&ext, &c, c.n) || (i && earlier_holds(a, i, &c)))
            continue; /* not this manifest's to say */
        if (need_refs && (rc = decode_ref(m, s, &t, &ref, err, errcap)) != ZF_OK)
            break;
        rc = fn(ctx, &c, need_refs ? &ref : NULL);
    }
    ic_manifest_put(r, m);
    return rc == ZF_ENOTFOUND ? ZF_OK : rc;
}

/* each_in for every manifest reference of a in turn: all of them, or (each)
 * the next one also after fn stopped in one (whether any chunk is there) */
static int each_manifest(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *prefix,
                         int need_refs, ic_chunk_fn fn, void *ctx, int each, char *err,
                         size_t errcap)
{
    if (a->damage)
        return ERR(ZF_ECORRUPT, "%s", a->damage);
    for (uint32_t i = 0; i < a->manifests.count; i++) {
        const uint8_t *id;
        zf_fb_vec ext;
        if (manifest_ref(a, i, &id, &ext) != ZF_OK)
            return ERR(ZF_ECORRUPT, "the snapshot's manifest reference %u of this array is damaged", i);
        int rc = each_in(r, s, a, i, prefix, need_refs, fn, ctx, err, errcap);
        if (rc < 0 || (rc > 0 && !each))
            return rc;
    }
    return ZF_OK;
}

int ic_chunks_each(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *prefix,
                   int need_refs, ic_chunk_fn fn, void *ctx, char *err, size_t errcap)
{
    return each_manifest(r, s, a, prefix, need_refs, fn, ctx, 0, err, errcap);
}

/* stop at the first chunk */
static int first_chunk(void *arg, const ic_coords *c, const ic_ref *ref)
{
    (void)c;
    (void)ref;
    *(int *)arg = 1;
    return 1;
}

int ic_chunks_any(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *prefix,
                  char *err, size_t errcap)
{
    /* every manifest that may hold such chunks is asked: one that cannot be
     * read fails the question as it fails a listing */
    int found = 0;
    int rc = each_manifest(r, s, a, prefix, 0, first_chunk, &found, 1, err, errcap);
    return rc < 0 ? rc : found;
}
