/* TEMPORARY placeholder until helper-coord lands */
#include "label/coordtext.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/err.h"
int zf_coordtext_load(const zf_store *st, const char *path, size_t max_bytes, zf_coordtext *out,
                      char *err, size_t errcap)
{
    (void)st; (void)path; (void)max_bytes;
    memset(out, 0, sizeof *out);
    snprintf(err, errcap, "not a time type");
    return ZF_EUNSUPPORTED;
}
void zf_coordtext_clear(zf_coordtext *c)
{
    for (unsigned d = 0; d < ZF_MAX_DIMS; d++) free(c->dim_names[d]);
    free(c->text); free(c->start);
    memset(c, 0, sizeof *c);
}
