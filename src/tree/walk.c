/* walk.c - walk a store's metadata into the tree's nodes (what each node is:
 * classify.c; the nodes added: node.c).
 *
 * Each directory is walked once, known by its device and inode: a symlink
 * loop or a second path to a directory (a diamond) is not followed again,
 * with one log line.  Children are walked in byte order of their names, and
 * those reached through symlinks only after every real path, so a directory
 * shows under its real path when it has one, else under the first symlink
 * leading to it.  One path buffer serves the whole walk (appended on the way
 * down, cut on the way up): no key buffer per level on the stack. */
#include "walk_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "zarr/cf.h"

#define ZF_MAX_DEPTH 64

/* is name safe as one path component (UTF-8, no control characters as
 * base/utf8.h counts them: C0, DEL, C1, bidi overrides and isolates)? */
static int safe_name(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > ZF_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    for (const char *p = s, *end = s + len; p < end;) {
        size_t k = zf_utf8_len(p, end);
        if (!k || zf_utf8_is_control(p, k) || *p == '/')
            return 0;
        p += k;
    }
    return 1;
}


/* ------------------------------------------------------------ the path */

/* append name as one more component of w->path; -1 if the key gets too long */
static int path_push(zf_walker *w, const char *name)
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
static void path_cut(zf_walker *w, size_t len)
{
    w->plen = len;
    w->path[len] = '\0';
}

/* -------------------------------------------------- directories walked */

/* the slot of (dev, ino): its entry, or the free slot where it goes */
static zf_seen_dir *seen_slot(const zf_walker *w, uint64_t dev, uint64_t ino)
{
    size_t mask = w->seen_cap - 1;
    size_t i = (size_t)(dev * 0x9E3779B97F4A7C15ull ^ ino * 0xC2B2AE3D27D4EB4Full) & mask;
    while (w->seen[i].path && (w->seen[i].dev != dev || w->seen[i].ino != ino))
        i = (i + 1) & mask;
    return &w->seen[i];
}

/* double the table of directories walked */
static int seen_grow(zf_walker *w)
{
    zf_seen_dir *old = w->seen;
    size_t old_cap = w->seen_cap, cap = old_cap ? 2 * old_cap : 64;
    zf_seen_dir *s = calloc(cap, sizeof *s);
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
static void log_again(const zf_walker *w, const char *first)
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
static int first_visit(zf_walker *w, uint64_t dev, uint64_t ino)
{
    if (!dev && !ino)
        return 1;
    if (2 * (w->nseen + 1) > w->seen_cap && seen_grow(w))
        return ZF_ENOMEM;
    zf_seen_dir *s = seen_slot(w, dev, ino);
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
    if (zf_grow(&c->v, &c->cap, c->n, sizeof *c->v, 16))
        return ZF_ENOMEM;
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

static int walk(zf_walker *w, size_t dir, const char *name, int depth);

/* walk the directory at w->path (name, in directory dir) unless walked already */
static int enter(zf_walker *w, size_t dir, const char *name, uint64_t dev, uint64_t ino, int depth)
{
    int first = first_visit(w, dev, ino);
    return first == 1 ? walk(w, dir, name, depth) : first;
}

/* queue the symlinked directory at w->path for after the real paths */
static int defer(zf_walker *w, size_t dir, int depth, const child *ch)
{
    if (zf_grow(&w->later, &w->later_cap, w->nlater, sizeof *w->later, 16))
        return ZF_ENOMEM;
    char *path = strdup(w->path);
    if (!path)
        return ZF_ENOMEM;
    w->later[w->nlater++] = (zf_later){dir, depth, ch->dev, ch->ino, path};
    return ZF_OK;
}

/* visit child ch of the group at w->path (node dir) */
static int visit_child(zf_walker *w, size_t dir, const child *ch, int depth)
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
static void log_unlisted(const zf_walker *w)
{
    zf_log("%s%s%s: a group, but this store cannot be listed and has no consolidated "
           "metadata; its children are not shown (consolidate the store's metadata, e.g. "
           "zarr.consolidate_metadata, to see them)", zf_store_path(w->store), *w->path ? "/" : "",
           w->path);
}

/* did reading the consolidated metadata fail (not absent, not unusable:
 * the store could not tell what it holds)? */
static int cons_failed(const zf_walker *w)
{
    int rc = w->cons_rc;
    return rc != ZF_OK && rc != ZF_ENOTFOUND && rc != ZF_ECORRUPT && rc != ZF_EUNSUPPORTED;
}

/* the children of the group at w->path (node dir) into c: from the
 * consolidated metadata, or a complete listing; ZF_OK, ZF_ENOMEM, or
 * ZF_EIO when the store could not tell them (dir is then incomplete: a
 * failure is never an empty group) */
static int group_children(zf_walker *w, size_t dir, children *c)
{
    if (w->cons && w->store->remote) /* one document for the whole tree: no listing */
        return zf_cons_children(w->cons, w->path, collect_cons, c);
    char why[300] = "", what[400];
    int rc = zf_store_list(w->store, w->path, 0, collect_dir, c, why, sizeof why);
    if (rc == ZF_OK || rc == ZF_ENOTFOUND || rc == ZF_ENOMEM) /* (gone since: nothing in it) */
        return rc == ZF_ENOMEM ? rc : ZF_OK;
    if (rc == ZF_EUNSUPPORTED && !cons_failed(w)) {
        log_unlisted(w);
        return ZF_OK;
    }
    if (rc == ZF_EUNSUPPORTED)
        snprintf(what, sizeof what, "cannot read the consolidated metadata (%s), and this store "
                 "cannot be listed", w->cons_err);
    else
        snprintf(what, sizeof what, "cannot list this group: %s", *why ? why : zf_strerror(rc));
    zf_tree_unknown(w->t, dir, w->path, what, "its contents are not shown, and listing it or "
                    "looking names up in it fails with EIO until the store answers");
    return ZF_EIO;
}

/* walk the group at w->path (node dir): its child directories in name order */
static int walk_group(zf_walker *w, size_t dir, int depth)
{
    if (depth >= ZF_MAX_DEPTH) {
        zf_log("%s/%s: groups nested deeper than %d; children skipped", zf_store_path(w->store),
               w->path, ZF_MAX_DEPTH);
        return ZF_OK;
    }
    children c = {NULL, 0, 0};
    int rc = group_children(w, dir, &c);
    if (rc == ZF_EIO) { /* nothing of a failed listing is shown */
        free_children(&c);
        return ZF_OK;
    }
    sort_children(&c);
    for (size_t i = 0; rc == ZF_OK && i < c.n; i++)
        rc = visit_child(w, dir, &c.v[i], depth + 1);
    free_children(&c);
    return rc;
}

/* classify the node at w->path and add it if it is a timedelta64 array;
 * *group says whether it is a group to walk.  Not inlined: the metadata
 * lives in this frame only, not in every level of the recursion. */
__attribute__((noinline)) static int visit_node(zf_walker *w, size_t dir, const char *name,
              int depth, int *group)
{
    zf_node_kind kind;
    zf_meta m;
    memset(&m, 0, sizeof m);
    *group = 0;
    int rc = zf_walk_classify(w, w->path, &kind, &m);
    if (rc == ZF_ENOMEM)
        return rc;
    if (rc == ZF_EIO && (depth > 0 || w->t->opts->generation)) { /* unknown: its group (a
        re-check: the root itself) cannot say what it holds; at mount the root fails */
        zf_tree_unknown(w->t, dir, w->path, w->unknown, "it is not shown, and listing its group "
                        "or looking up names not shown there fails with EIO until the store "
                        "answers");
        return ZF_OK;
    }
    if (rc) { /* a broken root fails the whole tree; anything deeper is left out */
        w->left_out += rc != ZF_ENOTFOUND;
        return depth == 0 ? rc : ZF_OK;
    }
    const zf_cons_node *e = w->cons && *w->path ? zf_cons_find(w->cons, w->path) : NULL;
    size_t order = e ? e->order : SIZE_MAX;
    w->t->root_array |= depth == 0 && kind != ZF_KIND_GROUP;
    if (kind == ZF_KIND_GROUP) {
        if (depth == 0)
            zf_walk_log_cons_unused(w);
        *group = 1;
        rc = zf_tree_add_group(w->t, w->path, &m);
    } else if (kind != ZF_KIND_TIMEDELTA || !zf_cf_shown(&m.cf, w->t->opts->cf)) { /* or -o cf= hides it */
        w->other++;
        rc = zf_tree_add_var(w->t, w->path, &m, order, 0);
    } else if ((rc = zf_tree_add_var(w->t, w->path, &m, order, w->t->narrays + 1)) == ZF_OK &&
               (rc = zf_tree_add_array(w->t, dir, name, w->path, &m, &w->origin,
                                         w->origin_time)) == ZF_OK) {
        w->shown++;
    }
    zf_meta_clear(&m);
    return rc;
}

/* add the node at w->path (named name, in directory dir) and its descendants */
static int walk(zf_walker *w, size_t dir, const char *name, int depth)
{
    int group;
    int rc = visit_node(w, dir, name, depth, &group);
    if (rc || !group)
        return rc;
    size_t id = dir;
    if (depth > 0 && !(id = zf_tree_add_node(w->t, dir, name, 1)))
        return ZF_ENOMEM;
    w->t->nodes[id - 1].mtime = w->origin_time; /* the group's documents' */
    return walk_group(w, id, depth);
}

/* walk the symlinked directories queued, in order (walking them may queue more) */
static int walk_later(zf_walker *w)
{
    int rc = ZF_OK;
    for (size_t i = 0; rc == ZF_OK && i < w->nlater; i++) {
        zf_later d = w->later[i]; /* a copy: the queue may move as it grows */
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
static void walker_free(zf_walker *w)
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
    zf_walker *w = calloc(1, sizeof *w); /* holds a ZF_KEY_MAX path: not on the stack */
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
    char why[200] = "";
    if (rc == ZF_OK && !w->store->remote &&
        (rc = zf_store_stamp_why(w->store, "", &root, why, sizeof why)) == ZF_EIO)
        zf_log_error("%s: cannot read the store: %s", zf_store_path(w->store), why);
    if (rc == ZF_OK && (rc = first_visit(w, root.dev, root.ino)) == 1)
        rc = walk(w, 1, name, 0);
    if (rc == ZF_OK)
        rc = walk_later(w);
    if (w->cons && !w->own_docs) /* every node from that document: re-checked by its stamp */
        snprintf(t->cons_key, sizeof t->cons_key, "%s", zf_cons_key(w->cons));
    if (rc == ZF_OK && !t->opts->generation) /* at mount; not on every re-check */
        zf_log_msg(w->shown == 0 || w->left_out || *t->unknown ? ZF_LOG_WARN : ZF_LOG_INFO,
                   "%zu arrays found, %zu shown (%zu of other data types); %zu nodes left out "
                   "for their metadata%s", w->shown + w->other, w->shown, w->other, w->left_out,
                   *t->unknown ? "; the store could not tell all it holds (above)" : "");
    walker_free(w);
    return rc;
}
