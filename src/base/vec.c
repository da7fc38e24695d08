/* vec.c - growing arrays and string lists (vec.h). */
#include "base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

int zf_grow(void *v, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return ZF_OK;
    size_t want = *cap ? *cap * 2 : first;
    if (*cap > SIZE_MAX / 2 || want <= n || want > SIZE_MAX / elem)
        return ZF_ENOMEM;
    void *p = realloc(*(void **)v, want * elem);
    if (!p)
        return ZF_ENOMEM;
    *(void **)v = p;
    *cap = want;
    return ZF_OK;
}

int zf_strv_add(zf_strv *sv, const char *s, size_t n)
{
    if (zf_grow(&sv->v, &sv->cap, sv->n, sizeof *sv->v, 16))
        return ZF_ENOMEM;
    if (!(sv->v[sv->n] = strndup(s, n)))
        return ZF_ENOMEM;
    sv->n++;
    return ZF_OK;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void zf_strv_sort(zf_strv *sv)
{
    if (sv->n > 1)
        qsort(sv->v, sv->n, sizeof *sv->v, by_str);
}

void zf_strv_free(zf_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    *sv = (zf_strv){0};
}
