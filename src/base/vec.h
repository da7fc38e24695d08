/* vec.h - growing a malloc'd array by doubling, and a list of strings. */
#ifndef ZF_VEC_H
#define ZF_VEC_H

#include <stddef.h>

/* Make room in the array *v (elements of elem bytes, *cap of them) for
 * element n (n <= *cap), doubling it, or making `first` when it is empty;
 * *v and *cap change only on success.  ZF_OK, or ZF_ENOMEM (also when the
 * size would overflow). */
int zf_grow(void *v, size_t *cap, size_t n, size_t elem, size_t first);

/* A list of malloc'd strings (zero-initialise it; zf_strv_free). */
typedef struct zf_strv {
    char **v;
    size_t n, cap;
} zf_strv;

/* Append a copy of s[0..n).  ZF_OK or ZF_ENOMEM. */
int zf_strv_add(zf_strv *sv, const char *s, size_t n);

/* Sort the strings bytewise (strcmp). */
void zf_strv_sort(zf_strv *sv);

/* Free every string and the list; sv is empty after. */
void zf_strv_free(zf_strv *sv);

#endif
