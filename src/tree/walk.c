/* walk.c - walk a store's metadata into the tree's nodes.
 *
 * Each directory is walked once, known by its device and inode: a symlink
 * loop or a second path to a directory (a diamond) is not followed again,
 * with one log line.  Children are walked in byte order of their names, and
 * those reached through symlinks only after every real path, so a directory
 * shows under its real path when it has one, else under the first symlink
 * leading to it.  One path buffer serves the whole walk (appended on the way
 * down, cut on the way up): no key buffer per level on the stack. */
#include "tree_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"
#include "zarr/cf.h"
#include "zarr/consolidated.h"

#define ZF_MAX_DEPTH 64
#define ZF_MAX_META ((size_t)16 << 20) /* largest metadata document of a node below the root */
#define ZF_NAME_MAX 255                 /* longest file name (Linux NAME_MAX) */
#define ZF_STEM_MAX (ZF_NAME_MAX - 5)   /* longest array file stem: room for ".info" */

/* a directory walked, by identity, and where it was first walked */
typedef struct seen_dir {
    uint64_t dev, ino;
    char *path;        /* NULL: a free slot */
} seen_dir;

/* a child directory reached through a symlink, walked after the real paths */
typedef struct later {
    size_t parent;     /* node id of the directory listing it */
    int depth;
    uint64_t dev, ino;
    char *path;        /* its key (owned) */
} later;

typedef struct walker {
    zf_tree *t;
    const zf_store *store;
    zf_cons *cons;              /* consolidated metadata; NULL if none */
    int cons_rc;                /* why cons is NULL (ZF_ENOTFOUND: the store has none) */
    int no_root_v3;             /* the root has no zarr.json (found while loading cons) */
    char cons_err[256];
    char path[ZF_KEY_MAX];      /* key of the node being visited ("" the root) */
    size_t plen;
    size_t root_max;            /* largest document at the root (root_limit) */
    seen_dir *seen;             /* open addressing, a power of two slots */
    size_t seen_cap, nseen;
    later *later;               /* a queue: walked in order, appended while walking */
    size_t nlater, later_cap;
    size_t shown, other, left_out; /* arrays shown, arrays of other types, nodes left out */
    zf_fp origin;               /* stamps of the documents the node classified last came from */
    int own_docs;               /* some node's own metadata documents were read */
} walker;

/* mix the stamp of key into the fingerprint; returns it in *st (may be NULL) */
static int mix_stamp(walker *w, const char *key, zf_stamp *st)
{
    zf_stamp own;
    if (!st)
        st = &own;
    int rc = zf_store_stamp(w->store, key, st);
    zf_fp d = zf_stamp_digest(st);
    zf_tree_fp_mix(w->t, key, &d, sizeof d);
    return rc;
}

/* is what st describes there to be used (not absent, not a refused symlink)? */
static int stamp_usable(const zf_stamp *st)
{
    return st->kind != ZF_STORE_ABSENT && st->kind != ZF_STORE_LINK;
}

/* is name safe as one path component (UTF-8, no control characters)? */
static int safe_name(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > ZF_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, extra = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
                               : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (c < 0x20 || c == 0x7F || c == '/' || extra == 9 || (extra == 1 && c < 0xC2))
            return 0;
        for (unsigned i = 1; i <= extra; i++)
            if ((p[i] & 0xC0) != 0x80)
                return 0;
        p += 1 + extra;
    }
    return 1;
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
static int read_doc(walker *w, const char *dir, const char *name, char **doc, size_t *n,
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
    } else {
        mix_stamp(w, key, NULL); /* what is there instead (a directory, a link) */
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

/* remember the key of an array not shown (it may label others: coords.c) */
static int remember_other(zf_tree *t, const char *path)
{
    if (t->nothers == t->others_cap) {
        size_t cap = t->others_cap ? t->others_cap * 2 : 16;
        char **o = realloc(t->others, cap * sizeof *o);
        if (!o)
            return ZF_ENOMEM;
        t->others = o;
        t->others_cap = cap;
    }
    return (t->others[t->nothers] = strdup(path)) ? (t->nothers++, ZF_OK) : ZF_ENOMEM;
}

/* the stem of an array's file names into stem: the name itself when NAME.info
 * fits NAME_MAX, else its first bytes (whole UTF-8 characters), "~" and 8 hex
 * digits of a hash of the whole name; returns whether it was shortened */
static int file_stem(const char *name, char stem[ZF_STEM_MAX + 1])
{
    size_t len = strlen(name);
    if (len <= ZF_STEM_MAX) {
        memcpy(stem, name, len + 1);
        return 0;
    }
    size_t keep = ZF_STEM_MAX - 9;
    while (keep > 0 && ((unsigned char)name[keep] & 0xC0) == 0x80) /* not inside a character */
        keep--;
    zf_fp fp;
    zf_fp_init(&fp);
    zf_fp_add(&fp, name, len);
    snprintf(stem, ZF_STEM_MAX + 1, "%.*s~%08x", (int)keep, name, (unsigned)(fp.a >> 32));
    return 1;
}

/* add the files of the timedelta64 array at path (named name, in directory
 * dir); takes m's contents.  The array keeps its whole name (the CSV header,
 * .info), its files a stem that fits */
static int add_array(walker *w, size_t dir, const char *name, const char *path, zf_meta *m)
{
    zf_tree *t = w->t;
    if (t->narrays == t->arrays_cap) {
        size_t cap = t->arrays_cap ? t->arrays_cap * 2 : 16;
        zf_array **a = realloc(t->arrays, cap * sizeof *a);
        zf_layout **l = a ? realloc(t->layouts, cap * sizeof *l) : NULL;
        if (a)
            t->arrays = a;
        if (!l)
            return ZF_ENOMEM;
        t->layouts = l;
        t->arrays_cap = cap;
    }
    zf_array *a = zf_array_new(t->store, path, m, t->cache);
    zf_layout *l = a ? zf_layout_new(a, name, t->opts) : NULL;
    if (!l) {
        zf_array_free(a);
        return ZF_ENOMEM;
    }
    zf_array_set_origin(a, &w->origin);
    t->arrays[t->narrays] = a;
    t->layouts[t->narrays++] = l;
    w->shown++;
    char stem[ZF_STEM_MAX + 1];
    if (file_stem(name, stem))
        zf_log("%s/%s: the name is longer than %d bytes; its files are %s.txt, .csv and .info",
               zf_store_path(w->store), path, ZF_STEM_MAX, stem);
    static const char *const ext[3] = {".txt", ".csv", ".info"};
    for (int v = 0; v < 3; v++) {
        char fname[ZF_STEM_MAX + 6];
        snprintf(fname, sizeof fname, "%s%s", stem, ext[v]);
        size_t id = zf_tree_add_node(t, dir, fname, 0);
        if (!id)
            return ZF_ENOMEM;
        t->nodes[id - 1].layout = l;
        t->nodes[id - 1].view = (zf_view)v;
    }
    return ZF_OK;
}

/* log why path is left out (or why the root is unusable) */
static void log_invalid(const walker *w, const char *path, const char *err)
{
    if (*path)
        zf_log("%s/%s: left out: %s", zf_store_path(w->store), path, err);
    else
        zf_log("%s: invalid root metadata: %s", zf_store_path(w->store), err);
}

/* is the node's own document dir/name newer than the consolidated copy? */
static int newer_than_cons(walker *w, const char *dir, const char *name)
{
    char key[ZF_KEY_MAX];
    if (join(key, sizeof key, dir, name))
        return 0;
    zf_stamp st;
    mix_stamp(w, key, &st);
    return stamp_usable(&st) && st.mtime > zf_cons_stamp(w->cons)->mtime;
}

/* classify the root from the copy the consolidated metadata keeps (v3; for
 * a remote store, v2's too) */
static int classify_cons_root(walker *w, zf_node_kind *kind, zf_meta *m)
{
    size_t n;
    const char *doc = zf_cons_root(w->cons, &n);
    if (!doc && w->store->remote && zf_cons_v2_root_group(w->cons)) {
        *kind = ZF_KIND_GROUP;
        return ZF_OK;
    }
    if (!doc)
        return ZF_ENOTFOUND;
    char err[256] = "";
    int rc = zf_meta_parse_v3(doc, n, kind, m, err, sizeof err);
    if (rc)
        log_invalid(w, "", err);
    return rc;
}

/* classify path from the consolidated metadata; ZF_ENOTFOUND (read the
 * node's own metadata instead) if it has no valid, current entry for path */
static int classify_cons(walker *w, const char *path, zf_node_kind *kind, zf_meta *m)
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
    else if (e->v2_group)
        *kind = ZF_KIND_GROUP;
    else
        rc = zf_meta_parse_v2(e->doc, e->doc_len, e->attrs, e->attrs_len, kind, m, err, sizeof err);
    if (rc && rc != ZF_ENOMEM) {
        zf_log("%s/%s: consolidated metadata ignored for this node: %s", zf_store_path(w->store),
               path, err);
        return ZF_ENOTFOUND;
    }
    return rc;
}

/* what is at path: ZF_OK with *kind (and *m for timedelta arrays),
 * ZF_ENOTFOUND if no Zarr metadata, or an error already logged */
static int classify(walker *w, const char *path, zf_node_kind *kind, zf_meta *m)
{
    char err[256] = "", *doc = NULL, *attrs = NULL;
    size_t n, an = 0;
    zf_fp_init(&w->origin);
    int rc = classify_cons(w, path, kind, m);
    if (rc != ZF_ENOTFOUND) {
        zf_fp d = zf_stamp_digest(w->cons ? zf_cons_stamp(w->cons) : &(zf_stamp){0});
        zf_fp_add(&w->origin, &d, sizeof d);
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
        char key[ZF_KEY_MAX];
        if (join(key, sizeof key, path, ".zgroup"))
            return ZF_ENOTFOUND;
        *kind = ZF_KIND_GROUP;
        zf_stamp st;
        mix_stamp(w, key, &st);
        return stamp_usable(&st) ? ZF_OK : ZF_ENOTFOUND;
    }
    free(doc);
    free(attrs);
    if (rc)
        log_invalid(w, path, err);
    return rc;
}

/* log why the root group's consolidated metadata is not used, if it has some */
static void log_cons_unused(const walker *w)
{
    if (w->cons_rc != ZF_OK && w->cons_rc != ZF_ENOTFOUND)
        zf_log("%s: consolidated metadata not used, every node's own metadata is read: %s",
               zf_store_path(w->store), w->cons_err);
}


/* ------------------------------------------------------------ the path */

/* append name as one more component of w->path; -1 if the key gets too long */
static int path_push(walker *w, const char *name)
{
    size_t n = strlen(name), sep = w->plen ? 1 : 0;
    if (w->plen + sep + n >= sizeof w->path)
        return -1;
    if (sep)
        w->path[w->plen] = '/';
    memcpy(w->path + w->plen + sep, name, n + 1);
    w->plen += sep + n;
    return 0;
}

/* cut w->path back to its first len bytes */
static void path_cut(walker *w, size_t len)
{
    w->plen = len;
    w->path[len] = '\0';
}

/* -------------------------------------------------- directories walked */

/* the slot of (dev, ino): its entry, or the free slot where it goes */
static seen_dir *seen_slot(const walker *w, uint64_t dev, uint64_t ino)
{
    size_t mask = w->seen_cap - 1;
    size_t i = (size_t)(dev * 0x9E3779B97F4A7C15ull ^ ino * 0xC2B2AE3D27D4EB4Full) & mask;
    while (w->seen[i].path && (w->seen[i].dev != dev || w->seen[i].ino != ino))
        i = (i + 1) & mask;
    return &w->seen[i];
}

/* double the table of directories walked */
static int seen_grow(walker *w)
{
    seen_dir *old = w->seen;
    size_t old_cap = w->seen_cap, cap = old_cap ? 2 * old_cap : 64;
    seen_dir *s = calloc(cap, sizeof *s);
    if (!s)
        return ZF_ENOMEM;
    w->seen = s;
    w->seen_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].path)
            *seen_slot(w, old[i].dev, old[i].ino) = old[i];
    free(old);
    return ZF_OK;
}

/* log that w->path is a directory already walked at first */
static void log_again(const walker *w, const char *first)
{
    const char *store = zf_store_path(w->store);
    size_t n = strlen(first);
    if (n == 0 || (!strncmp(w->path, first, n) && w->path[n] == '/'))
        zf_log("%s/%s: a symlink loop back to %s%s%s; not followed", store, w->path, store,
               n ? "/" : "", first);
    else
        zf_log("%s/%s: the same directory as %s/%s; shown there only", store, w->path, store,
               first);
}

/* is the directory (dev, ino) at w->path walked for the first time?  1, or
 * 0 (logged), or ZF_ENOMEM.  Without identities (dev = ino = 0) always 1. */
static int first_visit(walker *w, uint64_t dev, uint64_t ino)
{
    if (!dev && !ino)
        return 1;
    if (2 * (w->nseen + 1) > w->seen_cap && seen_grow(w))
        return ZF_ENOMEM;
    seen_dir *s = seen_slot(w, dev, ino);
    if (s->path) {
        log_again(w, s->path);
        return 0;
    }
    if (!(s->path = strdup(w->path)))
        return ZF_ENOMEM;
    s->dev = dev;
    s->ino = ino;
    w->nseen++;
    return 1;
}

/* ------------------------------------------------------------- the walk */

/* the child directories of one listed group */
typedef struct child {
    char *name;        /* owned */
    uint64_t dev, ino;
    int alias;         /* reached through a symlink */
} child;

typedef struct children {
    child *v;
    size_t n, cap;
} children;

/* add the child called name[0..len) (no identity: a remote store's) */
static int add_child(children *c, const char *name, size_t len, uint64_t dev, uint64_t ino,
                     int alias)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        child *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return ZF_ENOMEM;
        c->v = v;
        c->cap = cap;
    }
    char *copy = strndup(name, len);
    if (!copy)
        return ZF_ENOMEM;
    c->v[c->n++] = (child){copy, dev, ino, alias};
    return 0;
}

/* list callback: keep the directories */
static int collect_dir(void *arg, const zf_store_entry *e)
{
    if (e->stamp.kind != ZF_STORE_DIR)
        return 0;
    return add_child(arg, e->name, strlen(e->name), e->stamp.dev, e->stamp.ino, e->alias);
}

/* consolidated metadata callback: every child is a candidate directory */
static int collect_cons(void *arg, const char *name, size_t len)
{
    return add_child(arg, name, len, 0, 0, 0);
}

static int by_child_name(const void *a, const void *b)
{
    return strcmp(((const child *)a)->name, ((const child *)b)->name);
}

/* sort by name, dropping repeated names (consolidated metadata may name a child twice) */
static void sort_children(children *c)
{
    if (c->n < 2)
        return;
    qsort(c->v, c->n, sizeof *c->v, by_child_name);
    size_t k = 1;
    for (size_t i = 1; i < c->n; i++) {
        if (strcmp(c->v[i].name, c->v[k - 1].name))
            c->v[k++] = c->v[i];
        else
            free(c->v[i].name);
    }
    c->n = k;
}

static void free_children(children *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].name);
    free(c->v);
}

static int walk(walker *w, size_t dir, const char *name, int depth);

/* walk the directory at w->path (name, in directory dir) unless walked already */
static int enter(walker *w, size_t dir, const char *name, uint64_t dev, uint64_t ino, int depth)
{
    int first = first_visit(w, dev, ino);
    return first == 1 ? walk(w, dir, name, depth) : first;
}

/* queue the symlinked directory at w->path for after the real paths */
static int defer(walker *w, size_t dir, int depth, const child *ch)
{
    if (w->nlater == w->later_cap) {
        size_t cap = w->later_cap ? 2 * w->later_cap : 16;
        later *v = realloc(w->later, cap * sizeof *v);
        if (!v)
            return ZF_ENOMEM;
        w->later = v;
        w->later_cap = cap;
    }
    char *path = strdup(w->path);
    if (!path)
        return ZF_ENOMEM;
    w->later[w->nlater++] = (later){dir, depth, ch->dev, ch->ino, path};
    return ZF_OK;
}

/* visit child ch of the group at w->path (node dir) */
static int visit_child(walker *w, size_t dir, const child *ch, int depth)
{
    size_t keep = w->plen;
    if (!safe_name(ch->name)) {
        zf_log("%s/%s%s%s: name is not safe as a file name; skipped", zf_store_path(w->store),
               w->path, keep ? "/" : "", ch->name);
        return ZF_OK;
    }
    if (path_push(w, ch->name)) {
        zf_log("%s/%s/%.40s...: key longer than %d bytes; skipped", zf_store_path(w->store),
               w->path, ch->name, ZF_KEY_MAX - 1);
        return ZF_OK;
    }
    int rc = ch->alias ? defer(w, dir, depth, ch) : enter(w, dir, ch->name, ch->dev, ch->ino, depth);
    path_cut(w, keep);
    return rc;
}

/* log that the group at w->path shows no children: the store cannot be
 * listed (plain HTTP) and has no consolidated metadata */
static void log_unlisted(const walker *w)
{
    zf_log("%s%s%s: a group, but this store cannot be listed and has no consolidated "
           "metadata; its children are not shown (consolidate the store's metadata, e.g. "
           "zarr.consolidate_metadata, to see them)", zf_store_path(w->store), *w->path ? "/" : "",
           w->path);
}

/* walk the group at w->path (node dir): its child directories in name order */
static int walk_group(walker *w, size_t dir, int depth)
{
    if (depth >= ZF_MAX_DEPTH) {
        zf_log("%s/%s: groups nested deeper than %d; children skipped", zf_store_path(w->store),
               w->path, ZF_MAX_DEPTH);
        return ZF_OK;
    }
    children c = {NULL, 0, 0};
    int rc;
    if (w->cons && w->store->remote) /* one document for the whole tree: no listing */
        rc = zf_cons_children(w->cons, w->path, collect_cons, &c);
    else if ((rc = zf_store_list(w->store, w->path, 0, collect_dir, &c)) == ZF_EUNSUPPORTED)
        log_unlisted(w);
    if (rc != ZF_ENOMEM) /* a directory that cannot be listed holds nothing */
        rc = ZF_OK;
    sort_children(&c);
    for (size_t i = 0; rc == ZF_OK && i < c.n; i++)
        rc = visit_child(w, dir, &c.v[i], depth + 1);
    free_children(&c);
    return rc;
}

/* classify the node at w->path and add it if it is a timedelta64 array;
 * *group says whether it is a group to walk.  Not inlined: the metadata
 * lives in this frame only, not in every level of the recursion. */
__attribute__((noinline)) static int visit_node(walker *w, size_t dir, const char *name,
                                                int depth, int *group)
{
    zf_node_kind kind;
    zf_meta m;
    memset(&m, 0, sizeof m);
    *group = 0;
    int rc = classify(w, w->path, &kind, &m);
    if (rc == ZF_ENOMEM)
        return rc;
    if (rc) { /* a broken root fails the whole tree; anything deeper is left out */
        w->left_out += rc != ZF_ENOTFOUND;
        return depth == 0 ? rc : ZF_OK;
    }
    if (kind == ZF_KIND_GROUP) {
        if (depth == 0)
            log_cons_unused(w);
        *group = 1;
        return ZF_OK;
    }
    if (kind != ZF_KIND_TIMEDELTA || !zf_cf_shown(&m.cf, w->t->opts->cf)) { /* or -o cf= hides it */
        w->other++;
        zf_meta_clear(&m);
        return remember_other(w->t, w->path);
    }
    rc = add_array(w, dir, name, w->path, &m);
    zf_meta_clear(&m);
    return rc;
}

/* add the node at w->path (named name, in directory dir) and its descendants */
static int walk(walker *w, size_t dir, const char *name, int depth)
{
    int group;
    int rc = visit_node(w, dir, name, depth, &group);
    if (rc || !group)
        return rc;
    size_t id = dir;
    if (depth > 0 && !(id = zf_tree_add_node(w->t, dir, name, 1)))
        return ZF_ENOMEM;
    return walk_group(w, id, depth);
}

/* walk the symlinked directories queued, in order (walking them may queue more) */
static int walk_later(walker *w)
{
    int rc = ZF_OK;
    for (size_t i = 0; rc == ZF_OK && i < w->nlater; i++) {
        later d = w->later[i]; /* a copy: the queue may move as it grows */
        w->later[i].path = NULL;
        size_t n = strlen(d.path); /* < ZF_KEY_MAX: it was in w->path */
        memcpy(w->path, d.path, n + 1);
        w->plen = n;
        free(d.path);
        const char *slash = strrchr(w->path, '/');
        rc = enter(w, d.parent, slash ? slash + 1 : w->path, d.dev, d.ino, d.depth);
    }
    return rc;
}

/* name for the files of a root array: the store directory without ".zarr" */
static void root_array_name(const zf_store *s, char *buf, size_t cap)
{
    const char *base = strrchr(zf_store_path(s), '/');
    base = base ? base + 1 : zf_store_path(s);
    snprintf(buf, cap, "%s", base);
    size_t len = strlen(buf);
    if (len > 5 && !strcmp(buf + len - 5, ".zarr"))
        buf[len - 5] = '\0';
    if (!*buf || !safe_name(buf))
        snprintf(buf, cap, "array");
}

/* largest document read at the root, where consolidated metadata (the
 * root zarr.json, .zmetadata) holds every node's: 1/16 of physical memory
 * (reading one costs about twice its size), at least ZF_MAX_META */
static size_t root_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return ZF_MAX_META;
    uint64_t mem = (uint64_t)pages > UINT64_MAX / (uint64_t)page ? UINT64_MAX
                                                                : (uint64_t)pages * (uint64_t)page;
    uint64_t limit = mem / 16 < SIZE_MAX / 4 ? mem / 16 : SIZE_MAX / 4;
    return limit > ZF_MAX_META ? (size_t)limit : ZF_MAX_META;
}

/* free what only the walk needed */
static void walker_free(walker *w)
{
    for (size_t i = 0; i < w->seen_cap; i++)
        free(w->seen[i].path);
    for (size_t i = 0; i < w->nlater; i++)
        free(w->later[i].path);
    free(w->seen);
    free(w->later);
    zf_cons_free(w->cons);
    free(w);
}

int zf_tree_walk(zf_tree *t)
{
    walker *w = calloc(1, sizeof *w); /* holds a ZF_KEY_MAX path: not on the stack */
    if (!w)
        return ZF_ENOMEM;
    w->t = t;
    w->store = t->store;
    char name[256];
    root_array_name(w->store, name, sizeof name);
    w->root_max = root_limit();
    w->cons_rc = zf_cons_load(w->store, w->root_max, &w->cons, &w->no_root_v3, w->cons_err,
                              sizeof w->cons_err);
    int rc = w->cons_rc == ZF_ENOMEM ? ZF_ENOMEM : ZF_OK;
    if (w->cons) { /* the document all nodes' metadata comes from */
        zf_fp d = zf_stamp_digest(zf_cons_stamp(w->cons));
        zf_tree_fp_mix(t, zf_cons_key(w->cons), &d, sizeof d);
        t->cons_stamp = *zf_cons_stamp(w->cons);
    }
    zf_stamp root = {0}; /* a remote store's root has no identity: not asked for */
    if (rc == ZF_OK && (w->store->remote || (rc = zf_store_stamp(w->store, "", &root)) == ZF_OK) &&
        (rc = first_visit(w, root.dev, root.ino)) == 1)
        rc = walk(w, 1, name, 0);
    if (rc == ZF_OK)
        rc = walk_later(w);
    if (w->cons && !w->own_docs) /* every node from that document: re-checked by its stamp */
        snprintf(t->cons_key, sizeof t->cons_key, "%s", zf_cons_key(w->cons));
    if (rc == ZF_OK && !t->opts->generation) /* at mount; not on every re-check */
        zf_log_msg(w->shown == 0 || w->left_out ? ZF_LOG_WARN : ZF_LOG_INFO, /* worth a look? */
                   "%zu arrays found, %zu shown (%zu of other data types); %zu nodes left out "
                   "for their metadata", w->shown + w->other, w->shown, w->other, w->left_out);
    walker_free(w);
    return rc;
}
