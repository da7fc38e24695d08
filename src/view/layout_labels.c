/* layout_labels.c - a labelled .csv: its columns planned when the array is
 * first sized, its label tables loaded and its offsets made when the .csv is
 * first wanted (so that sizing or reading the .txt never reads a coordinate:
 * layout_impl.h). */
#include <stdlib.h>
#include <string.h>

#include "base/digits.h"
#include "base/err.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "layout_impl.h"

/* the rows pandas formats at once (ndata data columns and the value
 * column), and offset blocks that each lie in one of those slices (a
 * divisor of it), or hold whole ones */
static void slice_blocks(zf_layout *l)
{
    l->slice = ZF_PD_SLICE_CELLS / (l->ndata + 1);
    uint64_t b = l->slice < ZF_LAYOUT_BLOCK ? l->slice : ZF_LAYOUT_BLOCK;
    while (l->slice % b)
        b--;
    while (l->nelems / b > (UINT64_C(1) << 20))
        b = b < l->slice ? l->slice : b * 2;
    l->block = b;
    l->nblocks = (l->nelems + b - 1) / b;
}

void zf_layout_plan_labels(zf_layout *l)
{
    if (!l->srcs || l->labelled || l->labels_off)
        return;
    zf_ticks tk = zf_array_ticks(l->a);
    /* else each value's own text in that format (cftime objects: their str()) */
    l->pdvals = l->format == ZF_FORMAT_PANDAS && tk.values != ZF_VALUES_CFTIME;
    if (l->pdvals && zf_pdcsv_init(&l->pd, tk.values, tk.unit, tk.scale)) {
        zf_log("%s/%s: the values' unit cannot be written as pandas does; the .csv has index "
               "columns", zf_store_path(zf_array_store(l->a)), zf_array_path(l->a));
        l->labels_off = 1;
        return;
    }
    /* the data columns as the sources name them: one left out when its
     * table is loaded (labels.h) keeps its place in pandas' slices, as in
     * the frame xarray would write */
    unsigned ndata = 0;
    for (unsigned i = 0; i < l->nsrcs; i++)
        ndata += l->srcs[i].dim < 0 && l->ndim + ndata < ZF_LABELS_MAX_COLS;
    l->ndata = ndata;
    l->labelled = 1;
    slice_blocks(l);
}

uint64_t zf_layout_labels_len(const zf_layout *l, const uint64_t *c, uint64_t k)
{
    unsigned last = l->ndim - 1;
    uint64_t sum = k * l->lab->ncols; /* k < 2^45 (a block), fields < 2^28 (ZF_LABELS_MAX) */
    for (unsigned i = 0; i < l->lab->ncols; i++) {
        const zf_labcol *col = &l->lab->cols[i];
        uint64_t s = col->stride[last];
        if (!col->text) {
            sum += col->dim == (int)last ? zf_digit_sum(c[last], c[last] + k)
                                         : k * zf_ndig64(c[col->dim]);
            continue;
        }
        uint64_t t = zf_labcol_field(col, c, l->ndim);
        if (s <= 1)
            sum = zf_sat_add(sum, s ? col->start[t + k] - col->start[t]
                                    : zf_sat_mul(k, col->start[t + 1] - col->start[t]));
        else
            for (uint64_t j = 0; j < k; j++, t += s)
                sum = zf_sat_add(sum, col->start[t + 1] - col->start[t]);
    }
    return sum;
}

/* the header naming the loaded columns, and the longest line they make */
static int lab_header(zf_layout *l)
{
    zf_sbuf sb = {0};
    size_t most = 0;
    for (unsigned i = 0; i < l->lab->ncols; i++) {
        const zf_labcol *col = &l->lab->cols[i];
        zf_sbuf_add(&sb, col->name, strlen(col->name));
        zf_sbuf_add(&sb, ",", 1);
        uint64_t widest = 20;
        for (uint64_t t = 0; col->text && t < col->nfields; t++)
            if (col->start[t + 1] - col->start[t] > widest)
                widest = col->start[t + 1] - col->start[t];
        most += (size_t)widest + 1;
    }
    zf_sbuf_csv_field(&sb, l->name);
    zf_sbuf_add(&sb, "\n", 1);
    if (sb.failed) {
        free(sb.data);
        return ZF_ENOMEM;
    }
    l->lab_header = sb.data;
    l->lab_header_len = sb.len;
    l->lab_line_max = most + ZF_VALUE_MAX + l->csvtext->nat_len + 2;
    return ZF_OK;
}

/* the label fields' length of the elements [g, g + n), run by run along the
 * last axis */
static uint64_t labels_span(const zf_layout *l, uint64_t g, uint64_t n)
{
    unsigned last = l->ndim - 1;
    uint64_t c[ZF_MAX_DIMS], rem = g, sum = 0;
    for (unsigned d = l->ndim; d-- > 0;) {
        c[d] = rem % l->m->shape[d];
        rem /= l->m->shape[d];
    }
    while (n) {
        uint64_t k = l->m->shape[last] - c[last];
        k = k < n ? k : n;
        sum = zf_sat_add(sum, zf_layout_labels_len(l, c, k));
        n -= k;
        c[last] += k;
        for (unsigned d = last; d > 0 && c[d] == l->m->shape[d]; d--) {
            c[d] = 0;
            c[d - 1]++;
        }
    }
    return sum;
}

/* the .csv's offsets: the header, then each block's value lines (the pass's
 * off[1]) and label fields; saturating, so a view too long stays seen as such */
static int make_offsets(zf_layout *l)
{
    uint64_t *coff = malloc(((size_t)l->nblocks + 1) * sizeof *coff);
    if (!coff)
        return ZF_ENOMEM;
    coff[0] = l->lab_header_len;
    for (uint64_t b = 0; b < l->nblocks; b++) {
        uint64_t g = b * l->block, n = l->nelems - g < l->block ? l->nelems - g : l->block;
        uint64_t lines = l->off[1][b + 1] - l->off[1][b]; /* checked ascending (pass or index) */
        coff[b + 1] = zf_sat_add(coff[b], zf_sat_add(lines, labels_span(l, g, n)));
    }
    l->coff = coff;
    return ZF_OK;
}

/* load the tables, the header and the offsets; nothing kept on failure */
static int load_labels(zf_layout *l)
{
    zf_labels *lab = NULL;
    int rc = zf_labels_load(l->a, l->srcs, l->nsrcs, l->format, l->csvtext->nat, l->ndata, &lab);
    if (rc)
        return rc;
    l->lab = lab;
    if ((rc = lab_header(l)) == ZF_OK && (rc = make_offsets(l)) == ZF_OK)
        return ZF_OK;
    free(l->lab_header);
    l->lab_header = NULL;
    zf_labels_free(lab);
    l->lab = NULL;
    return rc;
}

int zf_layout_ensure_labels(zf_layout *l)
{
    if (!l->labelled || __atomic_load_n(&l->csv_state, __ATOMIC_ACQUIRE) == ZF_ONCE_DONE)
        return ZF_OK;
    return zf_layout_once(l, &l->csv_state, load_labels, NULL);
}

int zf_layout_view_ready(zf_layout *l, zf_view v)
{
    if (v == ZF_VIEW_INFO)
        return 1;
    return zf_layout_sized(l) && (v == ZF_VIEW_TXT || !l->labelled ||
                                  __atomic_load_n(&l->csv_state, __ATOMIC_ACQUIRE) == ZF_ONCE_DONE);
}
