/* coordtext_dump.c - print the text of every element of a coordinate array,
 * one per line (the oracle tests compare them with pandas' CSV column).
 * Usage: coordtext_dump STORE_DIR ARRAY_PATH [MAX_BYTES]
 * First line: "ndim n dim0 dim1 ..." (absent names as "-"); then per element
 * "LEN:TEXT" and a newline (TEXT may hold newlines).  Exit status 0, or 1
 * with "error CODE: reason" on stderr. */
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "label/coordtext.h"
#include "store/store.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: coordtext_dump STORE_DIR ARRAY_PATH [MAX_BYTES]\n");
        return 2;
    }
    zf_store *st = NULL;
    if (zf_store_open_local(argv[1], 0, &st) != ZF_OK) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 2;
    }
    size_t max = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : (size_t)1 << 30;
    zf_coordtext c;
    char err[512] = "";
    int rc = zf_coordtext_load(st, argv[2], max, &c, err, sizeof err);
    if (rc) {
        fprintf(stderr, "error %s: %s\n", zf_strerror(rc), err);
        zf_store_close(st);
        return 1;
    }
    printf("%u %llu", c.ndim, (unsigned long long)c.n);
    for (unsigned d = 0; d < c.ndim; d++)
        printf(" %s", c.dim_names[d] ? c.dim_names[d] : "-");
    putchar('\n');
    for (uint64_t i = 0; i < c.n; i++)
        printf("%llu:%.*s\n", (unsigned long long)(c.start[i + 1] - c.start[i]),
               (int)(c.start[i + 1] - c.start[i]), c.text + c.start[i]);
    zf_coordtext_clear(&c);
    zf_store_close(st);
    return 0;
}
