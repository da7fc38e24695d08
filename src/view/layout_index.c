/* layout_index.c - a persisted offset index checked against the metadata
 * before it is used (idxcache.h: the file itself is untrusted input). */
#include "base/err.h"
#include "layout_impl.h"

/* the shortest and longest line of each view (.txt, .csv) */
static void line_bounds(const zf_layout *l, uint64_t lo[2], uint64_t hi[2])
{
    size_t nat = l->text->nat_len;
    lo[0] = 1; /* a newline, after a value text or an empty NaT text */
    hi[0] = (uint64_t)(nat > ZF_VALUE_MAX ? nat : ZF_VALUE_MAX) + 1;
    /* .csv: commas and index digits; labelled, the value lines alone */
    lo[1] = l->labelled ? 1u : 2u * l->ndim + 1u;
    hi[1] = l->labelled ? (uint64_t)ZF_VALUE_MAX + l->csvtext->nat_len + 2 : l->line_max;
}

/* each block of view v as long as its elements' lines can be, the total
 * below the limit */
static int check_view(const zf_layout *l, int v, const uint64_t *lo, const uint64_t *hi, char *why,
                      size_t cap)
{
    static const char *const names[] = {".txt", ".csv"};
    typedef unsigned long long ull;
    const uint64_t *off = l->off[v];
    uint64_t start = v && !l->labelled ? l->header_len : 0;
    if (off[0] != start)
        return zf_errf(why, cap, ZF_ECORRUPT, "the %s text starts at byte %llu, not %llu",
                       names[v], (ull)off[0], (ull)start);
    for (uint64_t b = 0; b < l->nblocks; b++) {
        uint64_t first = b * l->block;
        uint64_t n = l->nelems - first < l->block ? l->nelems - first : l->block;
        uint64_t least = zf_sat_mul(n, lo[v]), most = zf_sat_mul(n, hi[v]);
        if (off[b + 1] < off[b] || off[b + 1] - off[b] < least || off[b + 1] - off[b] > most)
            return zf_errf(why, cap, ZF_ECORRUPT,
                           "block %llu of the %s (elements %llu to %llu) at bytes %llu to %llu, "
                           "not %llu to %llu bytes long", (ull)b, names[v], (ull)first,
                           (ull)(first + n - 1), (ull)off[b], (ull)off[b + 1], (ull)least,
                           (ull)most);
    }
    if (off[l->nblocks] >= ZF_LAYOUT_TEXT_MAX)
        return zf_errf(why, cap, ZF_ECORRUPT, "a %s of %llu bytes", names[v],
                       (ull)off[l->nblocks]);
    return ZF_OK;
}

/* a labelled .csv's value formats: each one the pass can choose, the same
 * in all the blocks of one slice */
static int check_modes(const zf_layout *l, char *why, size_t cap)
{
    unsigned exists = 0;
    for (unsigned parts = 0; parts < 16; parts++) /* every combination of ZF_PD_* parts */
        exists |= 1u << zf_pdcsv_mode(&l->pd, parts);
    uint64_t per = l->slice > l->block ? l->slice / l->block : 1;
    for (uint64_t b = 0; b < l->nblocks; b++) {
        unsigned m = l->bmode[b];
        if (m >= 32 || !(exists >> m & 1))
            return zf_errf(why, cap, ZF_ECORRUPT,
                           "block %llu's value format (%u) is not one the values can have",
                           (unsigned long long)b, m);
        if (m != l->bmode[b - b % per])
            return zf_errf(why, cap, ZF_ECORRUPT,
                           "block %llu's value format (%u) is not its slice's (%u)",
                           (unsigned long long)b, m, (unsigned)l->bmode[b - b % per]);
    }
    return ZF_OK;
}

int zf_layout_index_check(const zf_layout *l, char *why, size_t cap)
{
    uint64_t lo[2], hi[2];
    line_bounds(l, lo, hi);
    int rc = ZF_OK;
    for (int v = 0; v < 2 && rc == ZF_OK; v++)
        rc = check_view(l, v, lo, hi, why, cap);
    return rc == ZF_OK && l->labelled ? check_modes(l, why, cap) : rc;
}
