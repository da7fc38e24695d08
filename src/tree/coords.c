/* coords.c - which arrays label an array's .csv: xarray's coordinates.
 *
 * As xarray reads a group: the coordinate of dimension D is the array named
 * D in the same group; the other coordinates are those the array's
 * "coordinates" attribute names (a name used once, in byte order).  Time
 * coordinates are the tree's own arrays; the others are loaded by key. */
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* the key of name in the group of the array at path, into buf */
static int sibling_key(const char *path, const char *name, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) : 0;
    size_t n = strlen(name);
    if (dir + 1 + n + 1 > cap)
        return ZF_EINVAL;
    memcpy(buf, path, dir);
    if (dir)
        buf[dir++] = '/';
    memcpy(buf + dir, name, n + 1);
    return ZF_OK;
}

/* the source of coordinate name for the array at path: a time array of the
 * tree (a dimension coordinate labels itself), or another array at its key;
 * 0 if the group has no such array */
static int find_coord(zf_tree *t, const char *path, const char *name, zf_labsrc *src)
{
    char key[ZF_KEY_MAX];
    if (sibling_key(path, name, key, sizeof key))
        return 0;
    for (size_t i = 0; i < t->narrays; i++)
        if (!strcmp(zf_array_path(t->arrays[i]), key)) {
            src->arr = t->arrays[i];
            src->path = zf_array_path(t->arrays[i]);
            src->name = strrchr(src->path, '/') ? strrchr(src->path, '/') + 1 : src->path;
            return 1;
        }
    for (size_t i = 0; i < t->nothers; i++)
        if (!strcmp(t->others[i], key)) {
            src->arr = NULL;
            src->path = t->others[i];
            src->name = strrchr(src->path, '/') ? strrchr(src->path, '/') + 1 : src->path;
            return 1;
        }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const zf_labsrc *)a)->name, ((const zf_labsrc *)b)->name);
}

/* the non-dimension coordinates the attribute names, after the n dimension ones */
static unsigned other_coords(zf_tree *t, const zf_meta *m, const char *path, zf_labsrc *src,
                             unsigned n)
{
    const char *p = m->coordinates;
    unsigned first = n;
    while (p && *p && n < ZF_LABELS_MAX_COLS) {
        p += strspn(p, " \t\n");
        size_t len = strcspn(p, " \t\n");
        char name[256];
        if (len && len < sizeof name) {
            memcpy(name, p, len);
            name[len] = '\0';
            int dup = 0;
            for (unsigned d = 0; d < m->ndim; d++)
                dup |= m->dim_names[d] && !strcmp(m->dim_names[d], name);
            for (unsigned i = first; i < n; i++)
                dup |= !strcmp(src[i].name, name);
            if (!dup && find_coord(t, path, name, &src[n]) && strcmp(src[n].path, path))
                src[n++].dim = -1;
        }
        p += len;
    }
    qsort(src + first, n - first, sizeof *src, by_name);
    return n;
}

int zf_tree_attach_labels(zf_tree *t)
{
    zf_labsrc src[ZF_LABELS_MAX_COLS];
    for (size_t i = 0; i < t->narrays; i++) {
        const zf_meta *m = zf_array_meta(t->arrays[i]);
        const char *path = zf_array_path(t->arrays[i]);
        unsigned n = 0;
        for (unsigned d = 0; d < m->ndim && n < ZF_LABELS_MAX_COLS; d++)
            if (m->dim_names[d] && find_coord(t, path, m->dim_names[d], &src[n]))
                src[n++].dim = (int)d;
        n = other_coords(t, m, path, src, n);
        if (zf_layout_set_labels(t->layouts[i], src, n))
            return ZF_ENOMEM;
    }
    return ZF_OK;
}
