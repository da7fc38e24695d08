/* icechunk.c - an Icechunk repository's snapshot as a store (icechunk.h):
 * the repository shared by its snapshots, the store's reads, stamps and
 * listings, and the re-check of a branch. */
#include "store/icechunk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/deadline.h"
#include "base/err.h"
#include "store/ic_impl.h"

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

#define DEFAULT_CACHE ((size_t)256 << 20)
#define FILE_MIN ((size_t)64 << 20)   /* a metadata file may always decode to this much */

/* one snapshot store's state */
typedef struct ic_view {
    ic_repo *repo;
    ic_snap snap;
    ic_target target;               /* the ref as read when the snapshot was opened */
} ic_view;

static ic_view *view_of(const zf_store *s)
{
    return s->impl;
}

/* ------------------------------------------------------------ the repository */

void ic_repo_hold(ic_repo *r)
{
    __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
}

void ic_repo_drop(ic_repo *r)
{
    if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL))
        return;
    ic_manifest_cache_free(r);
    zf_targets_free(r->targets);
    zf_store_close(r->raw);
    free(r->sel_name);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->loaded);
    free(r);
}

/* the most a metadata file may decode to: a quarter of the memory, at least FILE_MIN */
static size_t file_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return FILE_MIN;
    uint64_t mem = (uint64_t)pages * (uint64_t)page / 4;
    return mem > FILE_MIN && mem < SIZE_MAX ? (size_t)mem : FILE_MIN;
}

/* is name usable as a branch or tag name (a path component of refs/)? */
static int ref_name_ok(const char *s)
{
    if (!*s || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) > 255)
        return 0;
    for (; *s; s++)
        if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

/* the selection of o into r */
static int select_ref(ic_repo *r, const zf_icechunk_opts *o, char *err, size_t errcap)
{
    int given = !!o->branch + !!o->tag + !!o->snapshot;
    if (given > 1)
        return ERR(ZF_EINVAL, "give at most one of -o branch=, -o tag= and -o snapshot=");
    r->sel_kind = o->tag ? ZF_IC_TAG : o->snapshot ? ZF_IC_SNAPSHOT : ZF_IC_BRANCH;
    const char *name = o->tag ? o->tag : o->snapshot ? o->snapshot : o->branch ? o->branch : "main";
    uint8_t id[IC_ID_LEN];
    if (r->sel_kind == ZF_IC_SNAPSHOT && ic_id_parse(name, id) != 0)
        return ERR(ZF_EINVAL, "not a snapshot id (20 base-32 characters): %s", name);
    if (r->sel_kind != ZF_IC_SNAPSHOT && !ref_name_ok(name))
        return ERR(ZF_EINVAL, "not a branch or tag name: %s", name);
    return (r->sel_name = strdup(name)) ? ZF_OK : ZF_ENOMEM;
}

/* a repository in raw (taken) */
static int repo_new(zf_store *raw, int layout, const zf_icechunk_opts *o, ic_repo **out,
                    char *err, size_t errcap)
{
    ic_repo *r = calloc(1, sizeof *r);
    zf_consent *c = zf_consent_new();
    if (!r || !c) {
        free(r);
        zf_consent_free(c);
        zf_store_close(raw);
        if (o->free_ctx)
            o->free_ctx(o->open_ctx);
        return ZF_ENOMEM;
    }
    r->refs = 1;
    r->raw = raw;
    r->layout = layout;
    r->max_file = file_limit();
    r->budget = (o->cache_bytes ? o->cache_bytes : DEFAULT_CACHE) / 4;
    pthread_mutex_init(&r->mu, NULL);
    zf_deadline_cond_init(&r->loaded);
    char why[200] = "";
    int rc = o->virtual_ok ? zf_consent_add_list(c, o->virtual_ok, why, sizeof why) : ZF_OK;
    if (rc == ZF_EINVAL)
        (void)ERR(rc, "-o virtual=: %s", why);
    r->consent = c;
    r->targets = zf_targets_new(c, o->open_target, o->open_ctx, o->free_ctx); /* takes both */
    if (rc == ZF_OK && !r->targets)
        rc = ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = select_ref(r, o, err, errcap);
    if (rc != ZF_OK) {
        ic_repo_drop(r);
        return rc;
    }
    *out = r;
    return ZF_OK;
}

/* ------------------------------------------------------------ reads */

/* the raw key of a native chunk */
static void chunk_key(const ic_ref *ref, char *out, size_t cap)
{
    char text[IC_ID_TEXT];
    ic_id_text(ref->chunk_id, IC_ID_LEN, text);
    snprintf(out, cap, "chunks/%s", text);
}

/* what a native read's failure means: the chunk file's absence is damage */
static int native_error(int rc, const char *key, char *err, size_t errcap)
{
    if (rc == ZF_ENOTFOUND)
        return ERR(ZF_EIO, "its chunk file %s does not exist", key);
    if (rc == ZF_ECORRUPT && err && errcap) {
        char why[256];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errcap, "%s: %s", key, why);
    }
    return rc;
}

/* read len bytes at off of the chunk ref (length checked by the caller) into buf */
static int read_ref(const ic_view *v, const ic_ref *ref, uint64_t off, size_t len, uint8_t *buf,
                    char *err, size_t errcap)
{
    if (ref->kind == IC_REF_INLINE) {
        memcpy(buf, ref->data + off, len);
        return ZF_OK;
    }
    if (ref->kind == IC_REF_NATIVE) {
        char key[40];
        chunk_key(ref, key, sizeof key);
        int rc = zf_store_read_range(v->repo->raw, key, ref->offset + off, len, buf, err, errcap);
        return rc == ZF_OK ? rc : native_error(rc, key, err, errcap);
    }
    zf_target_req q = {.url = ref->url, .off = ref->offset + off, .len = len, .buf = buf,
                       .etag = ref->etag, .last_modified = ref->last_modified, .err = err,
                       .errcap = errcap};
    return zf_targets_read(v->repo->targets, &q, 1);
}

/* the reference of chunk key k: ZF_OK, ZF_ENOTFOUND, or an error */
static int key_ref(const ic_view *v, const ic_key *k, ic_manifest **m, ic_ref *ref, char *err,
                   size_t errcap)
{
    int rc = ic_chunk_ref(v->repo, &v->snap, k->node, &k->coords, m, ref, err, errcap);
    if (rc == ZF_OK && ref->kind == IC_REF_VIRTUAL && ref->offset > UINT64_MAX - ref->length)
        rc = ERR(ZF_ECORRUPT, "a virtual reference's range is beyond the largest object");
    /* a damaged manifest or reference says nothing of the chunk's bytes:
     * whether (and what) the key holds is unknown (store.h), not bad data */
    return rc == ZF_ECORRUPT ? ZF_EIO : rc;
}

static int ic_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                   zf_stamp *st, char *err, size_t errcap)
{
    const ic_view *v = view_of(s);
    ic_key k;
    ic_key_parse(&v->snap, key, &k);
    *n = 0;
    if (k.kind == IC_KEY_DIR || k.kind == IC_KEY_CHUNK_DIR)
        return ERR(ZF_ECORRUPT, "a directory, not a value");
    if (k.kind == IC_KEY_NONE)
        return ZF_ENOTFOUND;
    if (k.kind == IC_KEY_META) {
        if (!k.node->meta)
            return ERR(ZF_ECORRUPT, "the snapshot's entry for this node is damaged");
        if (k.node->mlen > max)
            return ERR(ZF_ECORRUPT, "%zu bytes, more than the %zu allowed", k.node->mlen, max);
        if (zf_store_buf_reserve(b, k.node->mlen) != ZF_OK)
            return ZF_ENOMEM;
        memcpy(b->p, k.node->meta, k.node->mlen);
        *n = k.node->mlen;
        *st = (zf_stamp){.kind = ZF_STORE_FILE, .size = k.node->mlen};
        zf_fp_init(&st->tag);
        zf_fp_add(&st->tag, k.node->meta, k.node->mlen);
        return ZF_OK;
    }
    ic_manifest *m = NULL;
    ic_ref ref;
    int rc = key_ref(v, &k, &m, &ref, err, errcap);
    if (rc == ZF_OK && ref.length > max)
        rc = ERR(ZF_ECORRUPT, "%llu bytes, more than the %zu allowed", (unsigned long long)ref.length, max);
    if (rc == ZF_OK)
        rc = zf_store_buf_reserve(b, (size_t)ref.length);
    if (rc == ZF_OK)
        rc = read_ref(v, &ref, 0, (size_t)ref.length, b->p, err, errcap);
    if (rc == ZF_OK) {
        *n = (size_t)ref.length;
        ic_ref_stamp(&ref, st);
    }
    ic_manifest_put(v->repo, m);
    return rc;
}

/* one run of requests for the same key: its reference, resolved once */
typedef struct run {
    ic_ref ref;
    ic_manifest *m;
    char key[40];       /* a native chunk's raw key */
    int rc;
    char err[256];
} run;

/* resolve each run of equal keys once; the requests' ranges checked */
static void resolve_runs(const ic_view *v, zf_store_req *reqs, size_t n, run *runs, size_t *which)
{
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        zf_store_req *q = &reqs[i];
        if (!i || strcmp(q->key, reqs[i - 1].key)) {
            run *r = &runs[nr++];
            ic_key k;
            ic_key_parse(&v->snap, q->key, &k);
            r->m = NULL;
            r->rc = k.kind == IC_KEY_CHUNK ? key_ref(v, &k, &r->m, &r->ref, r->err, sizeof r->err)
                    : k.kind == IC_KEY_META && k.node->meta ? ZF_OK
                    : k.kind == IC_KEY_NONE ? ZF_ENOTFOUND : ZF_ECORRUPT;
            if (k.kind == IC_KEY_META && k.node->meta) /* a node's zarr.json: as inline bytes */
                r->ref = (ic_ref){.kind = IC_REF_INLINE, .data = k.node->meta, .length = k.node->mlen};
            if (r->rc == ZF_OK && r->ref.kind == IC_REF_NATIVE)
                chunk_key(&r->ref, r->key, sizeof r->key);
        }
        which[i] = nr - 1;
        run *r = &runs[nr - 1];
        q->rc = r->rc;
        if (q->rc != ZF_OK && q->err && q->errcap)
            snprintf(q->err, q->errcap, "%s", r->err);
        if (q->rc == ZF_OK && (q->off > r->ref.length || q->len > r->ref.length - q->off)) {
            char *err = q->err;
            size_t errcap = q->errcap;
            q->rc = ERR(ZF_ECORRUPT, "%llu bytes, shorter than the range asked for",
                        (unsigned long long)r->ref.length);
        }
    }
}

/* the native and virtual requests of a batch, each kind in one call */
typedef struct batch {
    zf_store_req *nat;
    zf_target_req *virt;
    size_t *nat_of, *virt_of;
    size_t nn, nv;
} batch;

static int ic_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    const ic_view *v = view_of(s);
    size_t m = n ? n : 1;
    run *runs = calloc(m, sizeof *runs);
    size_t *which = calloc(m, sizeof *which);
    batch b = {calloc(m, sizeof *b.nat), calloc(m, sizeof *b.virt), calloc(m, sizeof(size_t)),
               calloc(m, sizeof(size_t)), 0, 0};
    int rc = runs && which && b.nat && b.virt && b.nat_of && b.virt_of ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK)
        resolve_runs(v, reqs, n, runs, which);
    for (size_t i = 0; i < n; i++) {
        zf_store_req *q = &reqs[i];
        if (rc != ZF_OK)
            q->rc = rc;
        if (rc != ZF_OK || q->rc != ZF_OK || !q->len)
            continue;
        const run *r = &runs[which[i]];
        if (r->ref.kind == IC_REF_INLINE) {
            memcpy(q->buf, r->ref.data + q->off, q->len);
        } else if (r->ref.kind == IC_REF_NATIVE) {
            b.nat[b.nn] = (zf_store_req){.key = r->key, .off = r->ref.offset + q->off, .len = q->len,
                                         .buf = q->buf, .err = q->err, .errcap = q->errcap};
            b.nat_of[b.nn++] = i;
        } else {
            b.virt[b.nv] = (zf_target_req){.url = r->ref.url, .off = r->ref.offset + q->off,
                                           .len = q->len, .buf = q->buf, .etag = r->ref.etag,
                                           .last_modified = r->ref.last_modified, .err = q->err,
                                           .errcap = q->errcap};
            b.virt_of[b.nv++] = i;
        }
    }
    if (b.nn)
        zf_store_read_many(v->repo->raw, b.nat, b.nn);
    for (size_t k = 0; k < b.nn; k++)
        reqs[b.nat_of[k]].rc = b.nat[k].rc == ZF_OK ? ZF_OK
                               : native_error(b.nat[k].rc, b.nat[k].key, b.nat[k].err, b.nat[k].errcap);
    if (b.nv)
        zf_targets_read(v->repo->targets, b.virt, b.nv);
    for (size_t k = 0; k < b.nv; k++)
        reqs[b.virt_of[k]].rc = b.virt[k].rc;
    for (size_t i = 0; runs && i < n; i++)
        if (!i || which[i] != which[i - 1])
            ic_manifest_put(v->repo, runs[which[i]].m);
    free(runs);
    free(which);
    free(b.nat);
    free(b.virt);
    free(b.nat_of);
    free(b.virt_of);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return ZF_OK;
}

static int ic_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    const ic_view *v = view_of(s);
    ic_key k;
    ic_key_parse(&v->snap, key, &k);
    memset(st, 0, sizeof *st);
    if (k.kind == IC_KEY_DIR) {
        st->kind = ZF_STORE_DIR;
        return ZF_OK;
    }
    if (k.kind == IC_KEY_META) {
        st->kind = ZF_STORE_FILE;
        st->size = k.node->mlen;
        zf_fp_init(&st->tag);
        zf_fp_add(&st->tag, k.node->meta, k.node->mlen);
        return ZF_OK;
    }
    if (k.kind == IC_KEY_CHUNK_DIR) {
        int found = ic_chunks_any(v->repo, &v->snap, k.node, &k.coords, err, errcap);
        if (found < 0)
            return found;
        st->kind = found ? ZF_STORE_DIR : ZF_STORE_ABSENT;
        return found ? ZF_OK : ZF_ENOTFOUND;
    }
    if (k.kind == IC_KEY_NONE)
        return ZF_ENOTFOUND;
    ic_manifest *m = NULL;
    ic_ref ref;
    int rc = key_ref(v, &k, &m, &ref, err, errcap);
    if (rc == ZF_OK)
        ic_ref_stamp(&ref, st);
    ic_manifest_put(v->repo, m);
    return rc;
}

static int ic_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                   void *ctx, char *err, size_t errcap)
{
    const ic_view *v = view_of(s);
    return ic_keys_list(v->repo, &v->snap, prefix, flags, fn, ctx, err, errcap);
}

static void ic_close(zf_store *s)
{
    ic_view *v = s->impl;
    if (!v)
        return;
    ic_snap_free(&v->snap);
    ic_repo_drop(v->repo);
    free(v);
}

/* ------------------------------------------------------------ opening */

static int ic_update(const zf_store *s, zf_store **next, char *err, size_t errcap);

static const zf_store_ops ic_ops = {
    .close = ic_close,
    .read = ic_read,
    .read_many = ic_read_many,
    .stamp = ic_stamp,
    .list = ic_list,
    .update = ic_update,
    .describe = ic_describe,
};

/* a store showing snapshot t->id of r (holding a reference to r); repo is
 * the repo file read with the ref (spec 2), for its containers */
static int view_open(ic_repo *r, const ic_target *t, const ic_file *repo, zf_store **out,
                     char *err, size_t errcap)
{
    zf_store *s = calloc(1, sizeof *s);
    ic_view *v = calloc(1, sizeof *v);
    int rc = s && v && (s->name = strdup(zf_store_path(r->raw))) ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = ic_snap_load(r, t->id, &v->snap, err, errcap);
    if (rc == ZF_OK && repo && repo->data)
        rc = ic_vcc_load(repo, &v->snap.vcc, err, errcap);
    if (rc != ZF_OK) {
        if (v)
            ic_snap_free(&v->snap);
        free(v);
        if (s)
            free(s->name);
        free(s);
        return rc;
    }
    if (r->raw->remote) /* one round trip for every manifest, now, rather than one per array */
        ic_manifest_prefetch(r, &v->snap);
    ic_repo_hold(r);
    v->repo = r;
    v->target = *t;
    s->ops = &ic_ops;
    s->impl = v;
    s->parallel = r->raw->parallel;
    s->remote = r->raw->remote;
    s->budget_ms = r->raw->budget_ms;
    s->immutable = 1;
    *out = s;
    return ZF_OK;
}

/* resolve r's ref and open the snapshot it names */
static int open_current(ic_repo *r, zf_store **out, ic_target *t, char *err, size_t errcap)
{
    ic_file repo;
    int rc = ic_refs_resolve(r, t, &repo, err, errcap);
    if (rc == ZF_OK)
        rc = view_open(r, t, &repo, out, err, errcap);
    ic_file_free(&repo);
    return rc;
}

int zf_store_open_icechunk(zf_store *raw, int layout, const zf_icechunk_opts *o, zf_store **out,
                           char *err, size_t errcap)
{
    *out = NULL;
    ic_repo *r;
    int rc = repo_new(raw, layout, o, &r, err, errcap);
    if (rc != ZF_OK)
        return rc;
    ic_target t;
    rc = open_current(r, out, &t, err, errcap);
    if (rc == ZF_OK) {
        r->ref_stamp = t.stamp;
        memcpy(r->ref_id, t.id, IC_ID_LEN);
        r->ref_known = 1;
    }
    ic_repo_drop(r); /* the store holds its own reference */
    return rc;
}

/* are two stamps of the ref's file the same version? */
static int same_version(const zf_stamp *a, const zf_stamp *b)
{
    zf_fp x = zf_stamp_version(a), y = zf_stamp_version(b);
    return x.a == y.a && x.b == y.b;
}

/* a branch: re-read it if its file changed, and open the snapshot it moved to */
static int ic_update(const zf_store *s, zf_store **next, char *err, size_t errcap)
{
    const ic_view *v = view_of(s);
    ic_repo *r = v->repo;
    if (r->sel_kind != ZF_IC_BRANCH)
        return ZF_OK; /* tags and snapshots never move */
    zf_stamp now;
    int rc = ic_refs_stamp(r, &now, err, errcap);
    if (rc == ZF_ENOTFOUND)
        return ERR(rc, "branch '%s' no longer exists", r->sel_name);
    if (rc != ZF_OK)
        return rc;
    pthread_mutex_lock(&r->mu); /* what the file said when it was last read */
    int same = r->ref_known && same_version(&now, &r->ref_stamp) &&
               !memcmp(r->ref_id, v->snap.id, IC_ID_LEN);
    pthread_mutex_unlock(&r->mu);
    if (same)
        return ZF_OK;
    ic_target t;
    ic_file repo;
    rc = ic_refs_resolve(r, &t, &repo, err, errcap);
    if (rc == ZF_OK) {
        pthread_mutex_lock(&r->mu);
        r->ref_stamp = t.stamp;
        memcpy(r->ref_id, t.id, IC_ID_LEN);
        r->ref_known = 1;
        pthread_mutex_unlock(&r->mu);
    }
    if (rc == ZF_OK && memcmp(t.id, v->snap.id, IC_ID_LEN)) /* it moved */
        rc = view_open(r, &t, &repo, next, err, errcap);
    ic_file_free(&repo);
    return rc;
}

/* ------------------------------------------------------------ probing */

int zf_icechunk_probe(const zf_store *raw, int *layout, char *err, size_t errcap)
{
    uint8_t head[IC_HEADER_LEN], one[1];
    char e1[200] = "", e2[200] = "";
    zf_store_req q[2] = {
        {.key = "repo", .off = 0, .len = sizeof head, .buf = head, .err = e1, .errcap = sizeof e1},
        {.key = "refs/branch.main/ref.json", .off = 0, .len = 1, .buf = one, .err = e2,
         .errcap = sizeof e2},
    };
    zf_store_read_many(raw, q, 2);
    if (q[0].rc == ZF_OK && ic_file_header(head, sizeof head, IC_REPO_INFO) == ZF_OK) {
        *layout = 2;
        return ZF_OK;
    }
    if (q[1].rc == ZF_OK) {
        *layout = 1;
        return ZF_OK;
    }
    if (q[0].rc == ZF_ENOTFOUND || q[0].rc == ZF_ECORRUPT)
        return q[1].rc == ZF_ENOTFOUND || q[1].rc == ZF_ECORRUPT
                   ? ZF_ENOTFOUND : ERR(q[1].rc, "refs/branch.main/ref.json: %s", e2);
    return ERR(q[0].rc, "repo: %s", e1);
}

const ic_snap *ic_store_snap(const zf_store *s)
{
    return &view_of(s)->snap;
}

ic_repo *ic_store_repo(const zf_store *s)
{
    return view_of(s)->repo;
}

const ic_target *ic_store_target(const zf_store *s)
{
    return &view_of(s)->target;
}
