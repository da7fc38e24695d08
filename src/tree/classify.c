/* classify.c - what a node of the store is, from its metadata: read from the
 * consolidated metadata where it has a current entry, else from the node's
 * own documents (zarr.json; .zarray and .zattrs; .zgroup), every stamp read
 * mixed into the tree's fingerprint (the walk that visits the nodes:
 * walk.c). */
#include "walk_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"

/* a document the node's metadata came from was written at st's time */
static void origin_time(zf_walker *w, const zf_stamp *st)
{
    int64_t t = zf_stamp_time(st);
    w->origin_time = t > w->origin_time ? t : w->origin_time;
}

/* mix the stamp of key into the fingerprint; returns it in *st (may be
 * NULL), the reason for a failure in err (may be NULL) */
static int mix_stamp(zf_walker *w, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    zf_stamp own;
    if (!st)
        st = &own;
    int rc = zf_store_stamp_why(w->store, key, st, err, errcap);
    zf_fp d = zf_stamp_digest(st);
    zf_tree_fp_mix(w->t, key, &d, sizeof d);
    return rc;
}

/* is what st describes there to be used (not absent, not a refused symlink)? */
static int stamp_usable(const zf_stamp *st)
{
    return st->kind != ZF_STORE_ABSENT && st->kind != ZF_STORE_LINK;
}

/* the key dir/name into buf; -1 if it does not fit (no such key can exist) */
static int join(char *buf, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(buf, cap, "%s%s%s", dir, *dir ? "/" : "", name);
    return n >= 0 && (size_t)n < cap ? 0 : -1;
}

/* read the metadata document dir/name into *doc (the caller frees it) and
 * mix its stamp into the fingerprint: ZF_OK, ZF_ENOTFOUND if absent, or
 * another error with the reason in err (a remote store's 403 too: the node
 * is left out with a log line) */
static int read_doc(zf_walker *w, const char *dir, const char *name, char **doc, size_t *n,
                    char *err, size_t errcap)
{
    char key[ZF_KEY_MAX], why[200];
    if (join(key, sizeof key, dir, name))
        return ZF_ENOTFOUND;
    zf_store_buf buf = {NULL, 0};
    size_t max = *dir ? ZF_MAX_META : w->root_max;
    zf_stamp st;
    w->own_docs = 1;
    int rc = zf_store_read(w->store, key, max, &buf, n, &st, why, sizeof why);
    if (rc == ZF_OK || rc == ZF_ENOTFOUND) { /* the read's own stamp: no second request */
        zf_fp d = zf_stamp_digest(&st);
        zf_tree_fp_mix(w->t, key, &d, sizeof d);
        zf_fp_add(&w->origin, &d, sizeof d);
        origin_time(w, &st);
    } else {
        mix_stamp(w, key, NULL, NULL, 0); /* what is there instead (a directory, a link) */
    }
    if (rc == ZF_OK) {
        *doc = (char *)buf.p; /* ownership passes to the caller */
        return ZF_OK;
    }
    free(buf.p);
    if (rc != ZF_ENOTFOUND)
        snprintf(err, errcap, "%s: %s", name, *why ? why : zf_strerror(rc));
    return rc;
}

/* log why path is left out (or why the root is unusable: its metadata
 * invalid, or rc ZF_EIO, the store could not be read: TLS, HTTP 403 ...) */
static void log_invalid(const zf_walker *w, const char *path, int rc, const char *err)
{
    if (*path)
        zf_log("%s/%s: left out: %s", zf_store_path(w->store), path, err);
    else if (rc == ZF_EIO)
        zf_log_error("%s: cannot read the store: %s", zf_store_path(w->store), err);
    else
        zf_log("%s: invalid root metadata: %s", zf_store_path(w->store), err);
}

/* is the node's own document dir/name newer than the consolidated copy? */
static int newer_than_cons(zf_walker *w, const char *dir, const char *name)
{
    char key[ZF_KEY_MAX];
    if (join(key, sizeof key, dir, name))
        return 0;
    zf_stamp st;
    mix_stamp(w, key, &st, NULL, 0); /* (cannot tell: the consolidated copy, as it is) */
    return stamp_usable(&st) && st.mtime > zf_cons_stamp(w->cons)->mtime;
}

/* classify the root from the copy the consolidated metadata keeps (v3; for
 * a remote store, v2's too) */
static int classify_cons_root(zf_walker *w, zf_node_kind *kind, zf_meta *m)
{
    size_t n;
    const char *doc = zf_cons_root(w->cons, &n);
    if (!doc && w->store->remote && zf_cons_v2_root_group(w->cons)) {
        const char *attrs = zf_cons_v2_root_attrs(w->cons, &n);
        *kind = ZF_KIND_GROUP;
        return zf_meta_parse_v2_group(attrs, n, m);
    }
    if (!doc)
        return ZF_ENOTFOUND;
    char err[256] = "";
    int rc = zf_meta_parse_v3(doc, n, kind, m, err, sizeof err);
    if (rc)
        log_invalid(w, "", rc, err);
    return rc;
}

/* classify path from the consolidated metadata; ZF_ENOTFOUND (read the
 * node's own metadata instead) if it has no valid, current entry for path */
static int classify_cons(zf_walker *w, const char *path, zf_node_kind *kind, zf_meta *m)
{
    if (w->cons && !*path)
        return classify_cons_root(w, kind, m);
    const zf_cons_node *e = w->cons ? zf_cons_find(w->cons, path) : NULL;
    if (!e || !e->doc)
        return ZF_ENOTFOUND;
    /* a remote store's consolidated metadata is taken as it is (as zarr-python
     * does): checking each node's own document would cost a request per node */
    int newer = w->store->remote ? 0
              : e->zarr_format == 3
                    ? newer_than_cons(w, path, "zarr.json")
                    : newer_than_cons(w, path, e->v2_group ? ".zgroup" : ".zarray") |
                          newer_than_cons(w, path, ".zattrs");
    if (newer)
        return ZF_ENOTFOUND;
    char err[256] = "";
    int rc = ZF_OK;
    if (e->doc_len > ZF_MAX_META || e->attrs_len > ZF_MAX_META) {
        snprintf(err, sizeof err, "its entry is %zu bytes, more than the %zu allowed for a node",
                 e->doc_len > e->attrs_len ? e->doc_len : e->attrs_len, ZF_MAX_META);
        rc = ZF_ECORRUPT;
    } else if (e->zarr_format == 3)
        rc = zf_meta_parse_v3(e->doc, e->doc_len, kind, m, err, sizeof err);
    else if (e->v2_group) {
        *kind = ZF_KIND_GROUP;
        rc = zf_meta_parse_v2_group(e->attrs, e->attrs_len, m);
    } else
        rc = zf_meta_parse_v2(e->doc, e->doc_len, e->attrs, e->attrs_len, kind, m, err, sizeof err);
    if (rc && rc != ZF_ENOMEM) {
        zf_log("%s/%s: consolidated metadata ignored for this node: %s", zf_store_path(w->store),
               path, err);
        return ZF_ENOTFOUND;
    }
    return rc;
}

/* a v2 group at path (its .zgroup), with the coordinates attribute of its
 * .zattrs (absent: none): ZF_OK, ZF_ENOTFOUND if there is no .zgroup, or
 * an error with the reason in err (ZF_EIO: the store could not tell) */
static int classify_v2_group(zf_walker *w, const char *path, zf_node_kind *kind, zf_meta *m,
                             char *err, size_t errcap)
{
    char key[ZF_KEY_MAX], why[200] = "", *attrs = NULL;
    size_t n = 0;
    if (join(key, sizeof key, path, ".zgroup"))
        return ZF_ENOTFOUND;
    *kind = ZF_KIND_GROUP;
    zf_stamp st;
    int rc = mix_stamp(w, key, &st, why, sizeof why);
    origin_time(w, &st);
    if (rc != ZF_OK && rc != ZF_ENOTFOUND) {
        snprintf(err, errcap, ".zgroup: %s", *why ? why : zf_strerror(rc));
        return rc == ZF_ENOMEM ? rc : ZF_EIO;
    }
    if (!stamp_usable(&st))
        return ZF_ENOTFOUND;
    rc = read_doc(w, path, ".zattrs", &attrs, &n, err, errcap);
    if (rc == ZF_OK || rc == ZF_ENOTFOUND) /* attributes are optional */
        rc = zf_meta_parse_v2_group(rc == ZF_OK ? attrs : NULL, n, m);
    free(attrs);
    return rc;
}

/* what is at path: ZF_OK with *kind (and *m for timedelta arrays),
 * ZF_ENOTFOUND if no Zarr metadata, or an error already logged */
int zf_walk_classify(zf_walker *w, const char *path, zf_node_kind *kind, zf_meta *m)
{
    char err[256] = "", *doc = NULL, *attrs = NULL;
    size_t n, an = 0;
    zf_fp_init(&w->origin);
    w->origin_time = 0;
    int rc = classify_cons(w, path, kind, m);
    if (rc != ZF_ENOTFOUND) {
        const zf_stamp *cons = w->cons ? zf_cons_stamp(w->cons) : &(zf_stamp){0};
        zf_fp d = zf_stamp_digest(cons);
        zf_fp_add(&w->origin, &d, sizeof d);
        origin_time(w, cons);
        return rc;
    }
    /* a document that is there but cannot be read leaves the node out */
    if (!*path && w->no_root_v3 && w->store->remote) /* asked already: not again */
        rc = ZF_ENOTFOUND;
    else
        rc = read_doc(w, path, "zarr.json", &doc, &n, err, sizeof err);
    if (rc == ZF_OK) {
        rc = zf_meta_parse_v3(doc, n, kind, m, err, sizeof err);
    } else if (rc == ZF_ENOTFOUND &&
               (rc = read_doc(w, path, ".zarray", &doc, &n, err, sizeof err)) == ZF_OK) {
        rc = read_doc(w, path, ".zattrs", &attrs, &an, err, sizeof err);
        if (rc == ZF_ENOTFOUND) /* attributes are optional */
            rc = ZF_OK;
        if (rc == ZF_OK)
            rc = zf_meta_parse_v2(doc, n, attrs, an, kind, m, err, sizeof err);
    } else if (rc == ZF_ENOTFOUND) {
        rc = classify_v2_group(w, path, kind, m, err, sizeof err);
        if (rc == ZF_OK || rc == ZF_ENOTFOUND)
            return rc;
    }
    free(doc);
    free(attrs);
    if (rc == ZF_EIO) /* the store could not tell what is there: unknown (walk.c) */
        snprintf(w->unknown, sizeof w->unknown, "cannot read its metadata: %s", err);
    if (rc && (rc != ZF_EIO || (!*path && !w->t->opts->generation))) /* (the mount fails) */
        log_invalid(w, path, rc, err);
    return rc;
}

/* log why the root group's consolidated metadata is not used, if it has some */
void zf_walk_log_cons_unused(const zf_walker *w)
{
    if (w->cons_rc != ZF_OK && w->cons_rc != ZF_ENOTFOUND)
        zf_log("%s: consolidated metadata not used, every node's own metadata is read: %s",
               zf_store_path(w->store), w->cons_err);
}

