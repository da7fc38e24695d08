/* coordtext.h - the CSV text of every element of a coordinate array that is
 * not a time type, as pandas' DataFrame.to_csv writes xarray's decoded values. */
#ifndef ZF_COORDTEXT_H
#define ZF_COORDTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/pipeline.h"
#include "store/store.h"

typedef struct zf_coordtext {
    unsigned ndim;
    uint64_t shape[ZF_MAX_DIMS];   /* the coordinate's own shape */
    char *dim_names[ZF_MAX_DIMS];  /* owned; NULL where absent */
    uint64_t n;                    /* elements (product of shape) */
    char *text;                    /* the fields' texts back to back, CSV-quoted where needed (owned) */
    uint64_t *start;               /* n + 1 offsets (owned) */
} zf_coordtext;

int zf_coordtext_load(const zf_store *st, const char *path, size_t max_bytes, zf_coordtext *out,
                      char *err, size_t errcap);
void zf_coordtext_clear(zf_coordtext *c);
#endif
