/* test_vec.c - growing arrays and string lists (base/vec.h): doubling from
 * the first size, room only when needed, overflow refused with the array
 * left as it was; strings copied, sorted bytewise, freed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "check.h"

static void test_grow(void)
{
    int *v = NULL;
    size_t cap = 0;
    CHECK(zf_grow(&v, &cap, 0, sizeof *v, 4) == ZF_OK && v && cap == 4, "first: cap %zu", cap);
    int *same = v;
    CHECK(zf_grow(&v, &cap, 3, sizeof *v, 4) == ZF_OK && v == same && cap == 4, "room: %zu", cap);
    for (int i = 0; i < 4; i++)
        v[i] = i;
    CHECK(zf_grow(&v, &cap, 4, sizeof *v, 4) == ZF_OK && cap == 8, "doubled: %zu", cap);
    CHECK(v[3] == 3, "kept the elements");
    size_t big = SIZE_MAX / 2 + 1;
    int *before = v;
    CHECK(zf_grow(&v, &big, big, sizeof *v, 4) == ZF_ENOMEM && v == before &&
              big == SIZE_MAX / 2 + 1, "a doubling past SIZE_MAX refused, nothing changed");
    size_t huge = SIZE_MAX / 8;
    CHECK(zf_grow(&v, &huge, huge, 16, 4) == ZF_ENOMEM && v == before, "bytes past SIZE_MAX");
    free(v);
}

static void test_strv(void)
{
    zf_strv sv = {0};
    const char *in[] = {"tag", "main", "b\xc3\xa9ta", "dev", "main"};
    for (size_t i = 0; i < 5; i++)
        CHECK(zf_strv_add(&sv, in[i], strlen(in[i])) == ZF_OK, "add %zu", i);
    CHECK(zf_strv_add(&sv, "abcdef", 3) == ZF_OK && !strcmp(sv.v[5], "abc"), "a prefix copied");
    zf_strv_sort(&sv);
    const char *want[] = {"abc", "b\xc3\xa9ta", "dev", "main", "main", "tag"};
    CHECK(sv.n == 6, "n %zu", sv.n);
    for (size_t i = 0; i < sv.n && i < 6; i++)
        CHECK(!strcmp(sv.v[i], want[i]), "sorted %zu: %s", i, sv.v[i]);
    zf_strv_free(&sv);
    CHECK(!sv.v && !sv.n && !sv.cap, "empty after free");
    zf_strv_sort(&sv);
    zf_strv_free(&sv);
}

int main(void)
{
    test_grow();
    test_strv();
    return check_summary("test_vec");
}
