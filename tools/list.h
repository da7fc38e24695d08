/* list.h - zarrfs-cat --list, and why a path is not shown. */
#ifndef ZARRFS_CAT_LIST_H
#define ZARRFS_CAT_LIST_H

#include <stdio.h>

#include "tree/tree.h"

/* Write to out what a mount of t shows: one line per array (its path in the
 * store, kind, shape and file names), then one per array it does not show
 * and why. */
void zf_cat_list(const zf_tree *t, FILE *out);

/* One line on stderr saying why path (as given to zarrfs-cat) names no file
 * of t: a group, an array not shown, the store could not tell, or nothing
 * there. */
void zf_cat_why_not(const zf_tree *t, const char *path);

#endif
