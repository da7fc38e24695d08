/* ic_keys.c - the Zarr key space of a snapshot: each node's zarr.json, each
 * array's chunk keys in its own chunk key encoding ("c/0/1", "c.0.1",
 * "0.1", "0/1"; "c" or "0" for a 0-d array), and the directories above
 * them; listings answered from the snapshot and the manifests, complete
 * (ic_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "store/ic_impl.h"

#define META_NAME "zarr.json"

/* ------------------------------------------------------------ parsing */

/* a canonical decimal coordinate (no sign, no leading zero) of up to 32 bits
 * at *p, ending at sep or the end of the key; advances *p */
static int parse_coord(const char **p, char sep, uint32_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9') {
        v = v * 10 + (uint64_t)(s[n] - '0');
        if (v > UINT32_MAX)
            return -1;
        n++;
    }
    if (n == 0 || (n > 1 && s[0] == '0') || (s[n] && s[n] != sep))
        return -1;
    *out = (uint32_t)v;
    *p = s + n;
    return 0;
}

/* rel, relative to array a, as a chunk key or chunk directory of a */
static void parse_chunk(const ic_node *a, const char *rel, ic_key *out)
{
    const char *p = rel;
    out->node = a;
    out->coords.n = 0;
    if (a->v2_keys && a->ndim == 0) {
        out->kind = strcmp(rel, "0") == 0 ? IC_KEY_CHUNK : IC_KEY_NONE;
        return;
    }
    if (!a->v2_keys) {
        if (*p++ != 'c')
            return;
        if (!*p) { /* "c": the chunk of a 0-d array, or the nested chunks' directory */
            out->kind = a->ndim == 0 ? IC_KEY_CHUNK : a->sep == '/' ? IC_KEY_CHUNK_DIR : IC_KEY_NONE;
            return;
        }
        if (*p++ != a->sep)
            return;
    }
    for (;;) {
        if (out->coords.n >= a->ndim || parse_coord(&p, a->sep, &out->coords.v[out->coords.n]))
            return;
        out->coords.n++;
        if (!*p)
            break;
        p++; /* the separator */
    }
    out->kind = out->coords.n == a->ndim ? IC_KEY_CHUNK : a->sep == '/' ? IC_KEY_CHUNK_DIR : IC_KEY_NONE;
}

void ic_key_parse(const ic_snap *s, const char *key, ic_key *out)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(key), ml = strlen(META_NAME);
    /* a node's zarr.json */
    if (n >= ml && strcmp(key + n - ml, META_NAME) == 0 && (n == ml || key[n - ml - 1] == '/')) {
        const ic_node *nd = ic_snap_find(s, key, n == ml ? 0 : n - ml - 1);
        if (nd) {
            out->kind = IC_KEY_META;
            out->node = nd;
            return;
        }
    }
    /* a node, or a directory above nodes */
    size_t first, end;
    ic_snap_below(s, key, n, &first, &end);
    if (ic_snap_find(s, key, n) || first < end) {
        out->kind = IC_KEY_DIR;
        out->path = key;
        out->plen = n;
        return;
    }
    /* below an array: the longest node path ending at a '/' (or the root) */
    for (size_t cut = n; cut-- > 0;) {
        if (key[cut] != '/')
            continue;
        const ic_node *nd = ic_snap_find(s, key, cut);
        if (nd) {
            if (nd->is_array && nd->keys_ok)
                parse_chunk(nd, key + cut + 1, out);
            return;
        }
    }
    const ic_node *root = ic_snap_find(s, "", 0);
    if (root && root->is_array && root->keys_ok && n)
        parse_chunk(root, key, out);
}

/* ------------------------------------------------------------ listings */

void ic_ref_stamp(const ic_ref *ref, zf_stamp *st)
{
    memset(st, 0, sizeof *st);
    st->kind = ZF_STORE_FILE;
    st->size = ref->length;
    zf_fp_init(&st->tag); /* what identifies this version of the chunk's bytes */
    int kind = ref->kind;
    zf_fp_add(&st->tag, &kind, sizeof kind);
    if (ref->kind == IC_REF_INLINE) {
        zf_fp_add(&st->tag, ref->data, (size_t)ref->length);
    } else {
        zf_fp_add(&st->tag, &ref->offset, sizeof ref->offset);
        zf_fp_add(&st->tag, &ref->length, sizeof ref->length);
    }
    if (ref->kind == IC_REF_NATIVE)
        zf_fp_add(&st->tag, ref->chunk_id, IC_ID_LEN);
    if (ref->kind == IC_REF_VIRTUAL) {
        zf_fp_add(&st->tag, ref->url, strlen(ref->url) + 1);
        zf_fp_add(&st->tag, ref->etag, strlen(ref->etag) + 1);
        zf_fp_add(&st->tag, &ref->last_modified, sizeof ref->last_modified);
    }
}

/* give each name once, as a directory */
static int names_give(zf_strv *ns, zf_store_list_fn fn, void *ctx)
{
    zf_strv_sort(ns);
    for (size_t i = 0; i < ns->n; i++) {
        if (i && !strcmp(ns->v[i], ns->v[i - 1]))
            continue;
        zf_store_entry e = {.name = ns->v[i], .stamp = {.kind = ZF_STORE_DIR}};
        int rc = fn(ctx, &e);
        if (rc)
            return rc;
    }
    return ZF_OK;
}

/* what a chunk listing of array a gives: the entries at one level */
typedef struct chunk_list {
    const ic_node *a;
    unsigned level;             /* coordinates in the listed directory's path */
    zf_store_list_fn fn;
    void *ctx;
    zf_strv dirs;               /* coordinates of subdirectories, as text (sorted and
                                 * unique before they are given) */
    int stopped, rc;            /* the listing stopped, and why (fn's value, ZF_ENOMEM) */
} chunk_list;

/* the name of chunk c as an entry of the array's own directory (flat keys:
 * "c.0.1", "0.1"; the "c" or "0" of a 0-d array) */
static void flat_name(const ic_node *a, const ic_coords *c, char *out, size_t cap)
{
    char sep[2] = {a->sep, '\0'};
    size_t k = (size_t)snprintf(out, cap, "%s", a->v2_keys ? (a->ndim ? "" : "0") : "c");
    for (unsigned d = 0; d < c->n && k < cap; d++)
        k += (size_t)snprintf(out + k, cap - k, "%s%u", (!a->v2_keys || d) ? sep : "", c->v[d]);
}

/* one chunk under the listed directory: an entry, or the directory holding it */
static int chunk_entry(void *arg, const ic_coords *c, const ic_ref *ref)
{
    chunk_list *l = arg;
    const ic_node *a = l->a;
    char name[16 * IC_MAX_DIMS + 8];
    int nested = a->sep == '/' && a->ndim > 0, rc;
    if (nested)
        snprintf(name, sizeof name, "%u", c->v[l->level]);
    else
        flat_name(a, c, name, sizeof name);
    if (nested && l->level + 1 < a->ndim) { /* a directory of the next coordinate */
        rc = zf_strv_add(&l->dirs, name, strlen(name));
    } else {
        zf_store_entry e = {.name = name, .stamp = {.kind = ZF_STORE_FILE}};
        if (ref)
            ic_ref_stamp(ref, &e.stamp);
        rc = l->fn(l->ctx, &e);
    }
    if (rc) {
        l->stopped = 1;
        l->rc = rc;
    }
    return rc ? 1 : 0;
}

/* the chunk entries of array a under coordinates prefix */
static int list_chunks(ic_repo *r, const ic_snap *s, const ic_node *a, const ic_coords *prefix,
                       unsigned flags, zf_store_list_fn fn, void *ctx, char *err, size_t errcap)
{
    chunk_list l = {.a = a, .level = prefix->n, .fn = fn, .ctx = ctx};
    int rc = ic_chunks_each(r, s, a, prefix, !(flags & ZF_LIST_KINDS), chunk_entry, &l, err, errcap);
    if (l.stopped)
        rc = l.rc;
    else if (rc == ZF_OK)
        rc = names_give(&l.dirs, fn, ctx);
    zf_strv_free(&l.dirs);
    return rc;
}

/* the top level of array a's chunk space, in its own directory */
static int list_array_top(ic_repo *r, const ic_snap *s, const ic_node *a, unsigned flags,
                          zf_store_list_fn fn, void *ctx, char *err, size_t errcap)
{
    ic_coords none = {.n = 0};
    if (a->sep == '/' && a->ndim > 0 && !a->v2_keys) { /* "c", a directory, if any chunk */
        int found = ic_chunks_any(r, s, a, &none, err, errcap);
        if (found < 0)
            return found;
        zf_store_entry e = {.name = "c", .stamp = {.kind = ZF_STORE_DIR}};
        return found ? fn(ctx, &e) : ZF_OK;
    }
    return list_chunks(r, s, a, &none, flags, fn, ctx, err, errcap);
}

/* the children of the directory path: nodes below it */
static int list_nodes(const ic_snap *s, const char *path, size_t plen, zf_store_list_fn fn,
                      void *ctx)
{
    size_t first, end;
    zf_strv ns = {0};
    int rc = ZF_OK;
    ic_snap_below(s, path, plen, &first, &end);
    for (size_t i = first; rc == ZF_OK && i < end; i++) {
        const ic_node *nd = &s->nodes[i];
        const char *name = nd->path + (plen ? plen + 1 : 0);
        size_t left = nd->plen - (size_t)(name - nd->path);
        const char *slash = memchr(name, '/', left);
        rc = zf_strv_add(&ns, name, slash ? (size_t)(slash - name) : left);
    }
    if (rc == ZF_OK)
        rc = names_give(&ns, fn, ctx);
    zf_strv_free(&ns);
    return rc;
}

int ic_keys_list(ic_repo *r, const ic_snap *s, const char *prefix, unsigned flags,
                 zf_store_list_fn fn, void *ctx, char *err, size_t errcap)
{
    ic_key k;
    ic_key_parse(s, prefix, &k);
    /* a manifest that cannot be read or used says nothing of what is stored:
     * ZF_EIO, never ZF_ENOTFOUND or ZF_ECORRUPT ("no such directory") */
    if (k.kind == IC_KEY_CHUNK_DIR) {
        if (k.node->damage)
            return snprintf(err, errcap, "%s", k.node->damage), ZF_EIO;
        int found = ic_chunks_any(r, s, k.node, &k.coords, err, errcap);
        if (found < 0)
            return found == ZF_ENOMEM ? found : ZF_EIO;
        found = found ? list_chunks(r, s, k.node, &k.coords, flags, fn, ctx, err, errcap)
                      : ZF_ENOTFOUND;
        return found == ZF_ECORRUPT ? ZF_EIO : found;
    }
    if (k.kind == IC_KEY_META || k.kind == IC_KEY_CHUNK)
        return ZF_ECORRUPT; /* a value, not a directory */
    if (k.kind != IC_KEY_DIR && *prefix)
        return ZF_ENOTFOUND;
    const ic_node *nd = ic_snap_find(s, prefix, strlen(prefix));
    if (nd) {
        zf_stamp st = {.kind = ZF_STORE_FILE, .size = nd->mlen};
        zf_fp_init(&st.tag);
        zf_fp_add(&st.tag, nd->meta, nd->mlen);
        zf_store_entry e = {.name = META_NAME, .stamp = st};
        int rc = fn(ctx, &e);
        if (rc)
            return rc;
        if (nd->is_array && nd->damage)
            return snprintf(err, errcap, "%s", nd->damage), ZF_EIO;
        if (nd->is_array && nd->keys_ok &&
            (rc = list_array_top(r, s, nd, flags, fn, ctx, err, errcap)) != ZF_OK)
            return rc == ZF_ECORRUPT ? ZF_EIO : rc;
    }
    return list_nodes(s, prefix, strlen(prefix), fn, ctx);
}
