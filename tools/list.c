/* list.c - zarrfs-cat --list, and why a path is not shown (list.h). */
#include "list.h"

#include <string.h>

#include "chunk/array.h"
#include "zarr/cf.h"

/* the path of node n in the mount (names from the root down) into buf */
static void node_path(const zf_tree *t, const zf_node *n, char *buf, size_t cap)
{
    if (n->ino == ZF_ROOT_INO) {
        buf[0] = '\0';
        return;
    }
    node_path(t, zf_tree_node(t, n->parent), buf, cap);
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, "%s%s", len ? "/" : "", n->name);
}

/* "duration" or "time stamp", and how it is stored */
static void kind(const zf_meta *m, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s (%s)", m->values == ZF_VALUES_DATETIME ? "time stamp" : "duration",
             m->cf.how == ZF_CF_NATIVE ? "native" : "CF-encoded");
}

void zf_cat_list(const zf_tree *t, FILE *out)
{
    for (uint64_t i = 0, n = zf_tree_count(t); i < n; i++) {
        const zf_node *f = zf_tree_node_at(t, i);
        if (f->is_dir || f->view != ZF_VIEW_TXT)
            continue;
        const zf_array *a = zf_layout_array(f->layout);
        const zf_meta *m = zf_array_meta(a);
        char path[4096], what[64];
        node_path(t, f, path, sizeof path);
        path[strlen(path) - 4] = '\0'; /* without .txt */
        kind(m, what, sizeof what);
        fprintf(out, "%s\t%s\t[", *zf_array_path(a) ? zf_array_path(a) : "/", what);
        for (unsigned d = 0; d < m->ndim; d++)
            fprintf(out, "%s%llu", d ? ", " : "", (unsigned long long)m->shape[d]);
        fprintf(out, "]\t%s.txt %s.csv %s.info\n", path, path, path);
    }
    for (size_t i = 0; zf_tree_other(t, i); i++)
        fprintf(out, "%s\tnot shown: not a duration or time stamp (or hidden by -o cf=)\n",
                zf_tree_other(t, i));
}

void zf_cat_why_not(const zf_tree *t, const char *path)
{
    char key[4096];
    snprintf(key, sizeof key, "%s", path);
    size_t len = strlen(key);
    while (len > 1 && key[len - 1] == '/')
        key[--len] = '\0';
    const zf_node *n = zf_tree_node(t, ZF_ROOT_INO);
    for (char *save = NULL, *part = strtok_r(key, "/", &save); part && n;
         part = strtok_r(NULL, "/", &save))
        n = zf_tree_lookup(t, n->ino, part);
    char why[512];
    snprintf(key, sizeof key, "%s", path); /* an array's key: without a file's extension */
    char *dot = strrchr(key, '.');
    if (dot && (!strcmp(dot, ".txt") || !strcmp(dot, ".csv") || !strcmp(dot, ".info")))
        *dot = '\0';
    if (n && n->is_dir) {
        fprintf(stderr, "zarrfs-cat: %s: a group, not an array (zarrfs-cat --list STORE lists "
                "its arrays)\n", path);
        return;
    }
    for (size_t i = 0; zf_tree_other(t, i); i++)
        if (!strcmp(zf_tree_other(t, i), key)) {
            fprintf(stderr, "zarrfs-cat: %s: an array, but not a duration or time stamp (or "
                    "hidden by -o cf=): not shown\n", path);
            return;
        }
    if (zf_tree_incomplete(t, why, sizeof why))
        fprintf(stderr, "zarrfs-cat: %s: the store could not tell whether it is there: %s\n",
                path, why);
    else
        fprintf(stderr, "zarrfs-cat: %s: no array shown at that path (an array whose metadata "
                "cannot be used is named in a line above)\n", path);
}
