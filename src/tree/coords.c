/* coords.c - which arrays label an array's .csv: xarray's coordinates.
 *
 * As xarray decodes a group (conventions.decode_cf_variables, then
 * Dataset[NAME]): the group's coordinates are the arrays named by any
 * array's "coordinates" attribute, by the group's own "coordinates"
 * attribute, and the arrays named as a dimension of some array (dimension
 * coordinates).  NAME's .csv carries every coordinate whose dimensions are
 * all NAME's (scalar coordinates too): the coordinate of each of NAME's
 * dimensions labels it, the others are columns in the group's order (that
 * of its consolidated metadata, else names compared case-insensitively as
 * zarr-python consolidates them).  Time coordinates are the tree's own
 * arrays; the others are loaded by key. */
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* the length of the group part of a key ("a/b" in "a/b/c"; 0 at the root) */
static size_t group_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

static const char *var_name(const zf_var *v)
{
    size_t g = group_len(v->path);
    return v->path + g + (g ? 1 : 0);
}

/* names compared as zarr-python orders consolidated metadata: ASCII letters
 * without case, then bytes */
static int casefold_cmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        x += x >= 'A' && x <= 'Z' ? 32 : 0;
        y += y >= 'A' && y <= 'Z' ? 32 : 0;
        if (x != y || !x)
            return x - y;
    }
}

/* the order of the variables: by group, then as the group lists them */
static int by_group_order(const void *pa, const void *pb)
{
    const zf_var *a = *(zf_var *const *)pa, *b = *(zf_var *const *)pb;
    size_t ga = group_len(a->path), gb = group_len(b->path);
    int cmp = memcmp(a->path, b->path, ga < gb ? ga : gb);
    if (cmp || ga != gb)
        return cmp ? cmp : ga < gb ? -1 : 1;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    cmp = casefold_cmp(var_name(a), var_name(b));
    return cmp ? cmp : strcmp(var_name(a), var_name(b));
}

/* one group's variables: in its order, and (indices into v) by name */
typedef struct group {
    zf_var **v;
    size_t *named;
    size_t n;
    uint8_t *coord;         /* per variable (group order): a coordinate of the group */
    size_t *coords;         /* the indices of the coordinates, in order */
    size_t ncoords;
} group;

static int by_name(const void *pa, const void *pb, void *arg)
{
    zf_var *const *v = arg;
    return strcmp(var_name(v[*(const size_t *)pa]), var_name(v[*(const size_t *)pb]));
}

/* the index of the variable of the group called name[0..len), or SIZE_MAX */
static size_t find(const group *g, const char *name, size_t len)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *m = var_name(g->v[g->named[mid]]);
        int cmp = strncmp(m, name, len);
        if (cmp == 0)
            cmp = m[len] ? 1 : 0;
        if (cmp == 0)
            return g->named[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}

/* mark the variable i (SIZE_MAX: none) as a coordinate */
static void mark(group *g, size_t i)
{
    if (i != SIZE_MAX)
        g->coord[i] = 1;
}

/* mark the variables the space-separated names of list name */
static void mark_listed(group *g, const char *list)
{
    for (const char *p = list; p && *p;) {
        p += strspn(p, " \t\n\r\f\v");
        size_t len = strcspn(p, " \t\n\r\f\v");
        if (len)
            mark(g, find(g, p, len));
        p += len;
    }
}

/* the coordinates of the group (gattr: its own coordinates attribute) */
static void find_coords(group *g, const char *gattr)
{
    memset(g->coord, 0, g->n);
    mark_listed(g, gattr);
    for (size_t i = 0; i < g->n; i++) {
        const zf_var *v = g->v[i];
        mark_listed(g, v->coordinates);
        for (unsigned d = 0; v->ndim != (unsigned)-1 && d < v->ndim; d++)
            if (v->dims[d])
                mark(g, find(g, v->dims[d], strlen(v->dims[d])));
    }
    g->ncoords = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->coord[i])
            g->coords[g->ncoords++] = i;
}

/* is every dimension of c one of a's (c's all named)? */
static int dims_within(const zf_var *c, const zf_var *a)
{
    if (c->ndim == (unsigned)-1)
        return 0;
    for (unsigned i = 0; i < c->ndim; i++) {
        unsigned d = 0;
        while (d < a->ndim && !(c->dims[i] && a->dims[d] && !strcmp(c->dims[i], a->dims[d])))
            d++;
        if (d == a->ndim)
            return 0;
    }
    return 1;
}

/* the label source of variable c */
static void source(const zf_tree *t, const zf_var *c, int dim, zf_labsrc *src)
{
    src->name = var_name(c);
    src->dim = dim;
    src->arr = c->shown ? t->arrays[c->shown - 1] : NULL;
    src->path = c->path;
}

/* give the shown array a of group g its label sources */
static int attach(zf_tree *t, const group *g, const zf_var *a)
{
    zf_labsrc src[ZF_LABELS_MAX_COLS];
    unsigned n = 0, cols = a->ndim; /* a column per dimension, labelled or not */
    for (unsigned d = 0; d < a->ndim && n < ZF_LABELS_MAX_COLS; d++) {
        size_t c = a->dims[d] ? find(g, a->dims[d], strlen(a->dims[d])) : SIZE_MAX;
        if (c != SIZE_MAX)
            source(t, g->v[c], (int)d, &src[n++]);
    }
    for (size_t k = 0; k < g->ncoords && cols < ZF_LABELS_MAX_COLS; k++) {
        const zf_var *c = g->v[g->coords[k]];
        int is_dim = 0;
        for (unsigned d = 0; d < a->ndim; d++)
            is_dim |= a->dims[d] && !strcmp(a->dims[d], var_name(c));
        if (!is_dim && dims_within(c, a)) {
            source(t, c, -1, &src[n++]);
            cols++;
        }
    }
    return zf_layout_set_labels(t->layouts[a->shown - 1], src, n);
}

/* the coordinates attribute of the group at path[0..len), or NULL */
static const char *group_attr(const zf_tree *t, const char *path, size_t len)
{
    for (size_t i = 0; i < t->ngroups; i++)
        if (strlen(t->groups[i].path) == len && !memcmp(t->groups[i].path, path, len))
            return t->groups[i].coordinates;
    return NULL;
}

/* label every shown array of the group g */
static int label_group(zf_tree *t, group *g)
{
    for (size_t i = 0; i < g->n; i++)
        g->named[i] = i;
    qsort_r(g->named, g->n, sizeof *g->named, by_name, g->v);
    find_coords(g, group_attr(t, g->v[0]->path, group_len(g->v[0]->path)));
    int rc = ZF_OK;
    for (size_t i = 0; i < g->n && rc == ZF_OK; i++)
        if (g->v[i]->shown && g->v[i]->ndim != (unsigned)-1 && *g->v[i]->path)
            rc = attach(t, g, g->v[i]);
    return rc;
}

int zf_tree_attach_labels(zf_tree *t)
{
    size_t n = t->nvars, m = n ? n : 1;
    zf_var **order = malloc(m * sizeof *order);
    size_t *named = malloc(m * sizeof *named), *coords = malloc(m * sizeof *coords);
    uint8_t *coord = malloc(m);
    int rc = order && named && coords && coord ? ZF_OK : ZF_ENOMEM;
    for (size_t i = 0; rc == ZF_OK && i < n; i++)
        order[i] = &t->vars[i];
    if (rc == ZF_OK && n > 1)
        qsort(order, n, sizeof *order, by_group_order);
    for (size_t i = 0, j; rc == ZF_OK && i < n; i = j) {
        size_t gl = group_len(order[i]->path);
        for (j = i + 1; j < n && group_len(order[j]->path) == gl &&
                        !memcmp(order[j]->path, order[i]->path, gl); j++)
            ;
        group g = {order + i, named, j - i, coord, coords, 0};
        rc = label_group(t, &g);
    }
    free(order);
    free(named);
    free(coords);
    free(coord);
    return rc;
}
