/* ticks.c - what an array's decoded values are, and the one change they may
 * undergo: a standard-calendar CF time-stamp array decoded as datetime64[ns]
 * becomes cftime objects once a value outside the ns range is met, as xarray
 * (decode_cf_datetime) decodes an array holding one.  The switch happens at
 * most once, and takes a new cache owner id, so that no chunk decoded before
 * it is served after it (array.h, array_impl.h). */
#include <stdlib.h>

#include "base/err.h"
#include "chunk/array_impl.h"
#include "chunk/convert.h"

int zf_array_init_ticks(zf_array *a)
{
    const zf_cf *cf = &a->meta.cf;
    if (cf->how != ZF_CF_NATIVE) /* the fill value as ticks, as every chunk */
        a->fill_rc = zf_convert_one(cf, cf->fill_raw, &a->meta.fill, a->fill_err,
                                    sizeof a->fill_err);
    if (cf->how != ZF_CF_SINCE || !cf->may_cftime)
        return ZF_OK;
    if (!(a->cft = malloc(sizeof *a->cft)))
        return ZF_ENOMEM;
    zf_cf_cftime(cf, a->cft);
    a->cft_fill_rc = zf_convert_one(a->cft, cf->fill_raw, &a->cft_fill, a->cft_fill_err,
                                    sizeof a->cft_fill_err);
    return ZF_OK;
}

static int is_cftime(const zf_array *a)
{
    return __atomic_load_n(&a->cftime, __ATOMIC_ACQUIRE);
}

const zf_cf *zf_array_cf(const zf_array *a)
{
    return is_cftime(a) ? a->cft : &a->meta.cf;
}

int64_t zf_array_fill_ticks(const zf_array *a, int *rc, const char **err)
{
    int c = is_cftime(a);
    *rc = c ? a->cft_fill_rc : a->fill_rc;
    *err = c ? a->cft_fill_err : a->fill_err;
    return c ? a->cft_fill : a->meta.fill;
}

uint64_t zf_array_owner(const zf_array *a)
{
    return __atomic_load_n(&a->id, __ATOMIC_ACQUIRE);
}

zf_ticks zf_array_ticks(const zf_array *a)
{
    int rc;
    const char *err;
    int64_t fill = zf_array_fill_ticks(a, &rc, &err);
    if (is_cftime(a))
        return (zf_ticks){ZF_VALUES_CFTIME, ZF_UNIT_us, 1, &a->cft->ref, fill};
    const zf_meta *m = &a->meta;
    return (zf_ticks){m->values, m->unit, m->scale,
                      m->values == ZF_VALUES_CFTIME ? &m->cf.ref : NULL, fill};
}

void zf_array_note_outside(zf_array *a)
{
    __atomic_store_n(&a->cftime_wanted, 1, __ATOMIC_RELEASE);
}

int zf_array_cftime_wanted(const zf_array *a)
{
    return a->cft && !is_cftime(a) && __atomic_load_n(&a->cftime_wanted, __ATOMIC_ACQUIRE);
}

int zf_array_may_cftime(const zf_array *a)
{
    return a->cft != NULL;
}

int zf_array_to_cftime(zf_array *a)
{
    if (!a->cft)
        return 0;
    pthread_mutex_lock(&a->mu);
    if (!is_cftime(a)) {
        uint64_t old = a->id; /* the switch first: a reader of the new id sees it */
        __atomic_store_n(&a->cftime, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&a->id, zf_array_next_id(), __ATOMIC_RELEASE);
        pthread_mutex_unlock(&a->mu);
        zf_cache_cancel(a->cache, old); /* no prefetch of the old decoding lands after this */
        return 1;
    }
    pthread_mutex_unlock(&a->mu);
    return 1;
}
