/* labels.c - the label columns of an array's .csv (labels.h). */
#include "view/labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "label/coordtext.h"
#include "text/pdcsv.h"


/* a coordinate being loaded: its values (time) or its text (other types) */
typedef struct pending {
    const zf_labsrc *src;
    int64_t *ticks;          /* a time coordinate's values (C order, its own axes) */
    uint64_t n;
    zf_coordtext ct;         /* another type's text */
    uint64_t stride[ZF_MAX_DIMS];
} pending;

/* bytes of label tables held by every layout of the process (ZF_LABELS_MAX) */
static uint64_t labels_in_use;

/* take n bytes of the label budget; 0 if that would exceed it */
static int reserve(uint64_t n)
{
    uint64_t cur = __atomic_load_n(&labels_in_use, __ATOMIC_RELAXED);
    do {
        if (n > ZF_LABELS_MAX - cur)
            return 0;
    } while (!__atomic_compare_exchange_n(&labels_in_use, &cur, cur + n, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return 1;
}

static void release(uint64_t n)
{
    __atomic_fetch_sub(&labels_in_use, n, __ATOMIC_RELAXED);
}

static void log_src(const zf_array *a, const zf_labsrc *s, const char *why)
{
    zf_log("%s/%s: coordinate %s: %s; %s", zf_store_path(zf_array_store(a)), zf_array_path(a),
           s->name, why, s->dim >= 0 ? "the index labels its dimension" : "column left out");
}

/* the strides (in the coordinate's C order) of each array dimension it
 * spans, matched by name; 0 unless its dimensions are all the array's and
 * its shape matches along them */
static int map_axes(const zf_meta *am, const zf_labsrc *s, unsigned ndim, const uint64_t *shape,
                    char *const *names, uint64_t *stride)
{
    uint64_t st = 1;
    memset(stride, 0, ZF_MAX_DIMS * sizeof *stride);
    if (s->dim >= 0 && ndim != 1)
        return 0;
    for (unsigned i = ndim; i-- > 0;) {
        unsigned d = 0;
        if (s->dim >= 0)
            d = (unsigned)s->dim;
        else
            while (d < am->ndim && !(names[i] && am->dim_names[d] && !strcmp(names[i], am->dim_names[d])))
                d++;
        if (d >= am->ndim || shape[i] != am->shape[d] || stride[d])
            return 0;
        stride[d] = st;
        st *= shape[i];
    }
    return 1;
}

/* copy chunk ci of coordinate array c (decoded: ch) into its whole-array buffer */
static void place_chunk(const zf_array *c, uint64_t ci, const zf_chunk *ch, int64_t *all)
{
    const zf_meta *m = zf_array_meta(c);
    uint64_t origin[ZF_MAX_DIMS], extent[ZF_MAX_DIMS], r[ZF_MAX_DIMS] = {0}, k = ci;
    for (unsigned d = m->ndim; d-- > 0;) {
        uint64_t gd = zf_array_grid(c, d);
        origin[d] = k % gd * m->read_chunks[d];
        extent[d] = m->shape[d] - origin[d] < m->read_chunks[d] ? m->shape[d] - origin[d]
                                                              : m->read_chunks[d];
        k /= gd;
    }
    uint64_t total = 1;
    for (unsigned d = 0; d < m->ndim; d++)
        total *= extent[d];
    for (uint64_t e = 0; e < total; e++) {
        uint64_t g = 0, lo = 0;
        for (unsigned d = 0; d < m->ndim; d++) {
            g = g * m->shape[d] + origin[d] + r[d];
            lo = lo * m->read_chunks[d] + r[d];
        }
        all[g] = ch->values ? ch->values[lo] : ch->constant;
        for (unsigned d = m->ndim; d-- > 0;) { /* the next element of the box */
            if (++r[d] < extent[d])
                break;
            r[d] = 0;
        }
    }
}

/* read a time coordinate's values; ZF_OK, or an error with why filled in */
static int read_ticks(pending *p, char *why, size_t cap)
{
    zf_array *c = p->src->arr;
    const zf_meta *m = zf_array_meta(c);
    uint64_t per = zf_array_chunk_elems(c);
    p->n = m->nelems;
    if (p->n > ZF_LABELS_MAX / 8 || per > ZF_LABELS_MAX / 8) {
        snprintf(why, cap, "%llu values are more than the label memory allows",
                 (unsigned long long)p->n);
        return ZF_EUNSUPPORTED;
    }
    int64_t *buf = malloc((size_t)per * 8);
    zf_store_buf raw = {NULL, 0};
    int rc = buf && (p->ticks = malloc((size_t)p->n * 8 + 8)) ? ZF_OK : ZF_ENOMEM;
    /* decoded outside the cache: a coordinate's own size pass must read its
     * chunks itself (an unlisted store learns their versions that way) */
    for (uint64_t ci = 0; rc == ZF_OK && ci < zf_array_nchunks(c); ci++) {
        zf_chunk ch;
        if ((rc = zf_array_decode(c, ci, buf, &raw, &ch)) == ZF_OK)
            place_chunk(c, ci, &ch, p->ticks);
        else if (zf_array_cftime_wanted(c) && zf_array_to_cftime(c)) /* cftime objects: again */
            rc = ZF_OK, ci = UINT64_MAX;
        else
            snprintf(why, cap, "chunk %llu cannot be read (%s)", (unsigned long long)ci,
                     zf_strerror(rc));
    }
    free(buf);
    free(raw.p);
    return rc;
}

/* load one source's values or text and check its shape against the array */
static int load_src(zf_array *a, pending *p)
{
    const zf_meta *am = zf_array_meta(a);
    char why[300] = "";
    int rc;
    if (p->src->arr) {
        const zf_meta *m = zf_array_meta(p->src->arr);
        rc = map_axes(am, p->src, m->ndim, m->shape, m->dim_names, p->stride)
                 ? read_ticks(p, why, sizeof why)
                 : ZF_EINVAL;
    } else {
        rc = zf_coordtext_load(zf_array_store(a), p->src->path,
                               ZF_LABELS_MAX - __atomic_load_n(&labels_in_use, __ATOMIC_RELAXED),
                               &p->ct, why, sizeof why);
        if (rc == ZF_OK && !map_axes(am, p->src, p->ct.ndim, p->ct.shape, p->ct.dim_names, p->stride))
            rc = ZF_EINVAL;
    }
    if (rc == ZF_EINVAL)
        snprintf(why, sizeof why, "its dimensions or shape are not the array's");
    if (rc == ZF_EIO || rc == ZF_ESTALE) /* the store could not tell: no fallback (store.h) */
        zf_log("%s/%s: coordinate %s: %s; the array is sized again on its next access",
               zf_store_path(zf_array_store(a)), zf_array_path(a), p->src->name,
               *why ? why : zf_strerror(rc));
    else if (rc)
        log_src(a, p->src, *why ? why : zf_strerror(rc));
    return rc;
}

/* hold n bytes of label text for p's column col (its start offsets too) */
static int reserve_col(const zf_array *a, const pending *p, uint64_t bytes, zf_labcol *col)
{
    uint64_t need = bytes + (p->n + 1) * sizeof *col->start;
    if (!reserve(need)) {
        log_src(a, p->src, "its text is more than the label memory left allows");
        return ZF_EUNSUPPORTED;
    }
    col->reserved = need;
    return (col->text = malloc((size_t)bytes + ZF_VALUE_MAX)) ? ZF_OK : ZF_ENOMEM;
}

/* make column col's table from the cftime values of p: each value's str(),
 * as pandas writes a column of objects */
static int format_each(const zf_array *a, pending *p, const zf_ticks *t, const char *nat,
                       zf_labcol *col)
{
    zf_text_room room;
    uint64_t bytes = 0;
    if (zf_text_init(&room, t->values, ZF_FORMAT_PANDAS, t->unit, t->scale, t->cal, nat))
        return ZF_EINVAL;
    if (!(col->start = malloc(((size_t)p->n + 1) * sizeof *col->start)))
        return ZF_ENOMEM;
    bytes = zf_text_len_sum(&room.text, p->ticks, (size_t)p->n);
    int rc = reserve_col(a, p, bytes, col);
    uint64_t at = 0;
    for (uint64_t i = 0; rc == ZF_OK && i < p->n; i++) {
        col->start[i] = at;
        at += zf_text_value(&room.text, p->ticks[i], col->text + at);
    }
    col->start[p->n] = at;
    col->nfields = p->n;
    return rc;
}

/* make column col's table from the time values of p: one format per
 * slice of `slice` values (UINT64_MAX: one for all) */
static int format_ticks(const zf_array *a, pending *p, uint64_t slice, const char *nat,
                        zf_labcol *col)
{
    zf_ticks t = zf_array_ticks(p->src->arr);
    zf_pdcsv pd;
    if (t.values == ZF_VALUES_CFTIME)
        return format_each(a, p, &t, nat, col);
    if (zf_pdcsv_init(&pd, t.values, t.unit, t.scale)) {
        log_src(a, p->src, "its unit cannot be written as pandas does");
        return ZF_EUNSUPPORTED;
    }
    size_t nat_len = strlen(nat);
    uint64_t bytes = 0;
    zf_pdmode *mode = NULL;
    uint64_t nslices = slice == UINT64_MAX ? 1 : (p->n + slice - 1) / slice;
    if (!(mode = malloc((size_t)(nslices ? nslices : 1) * sizeof *mode)) ||
        !(col->start = malloc(((size_t)p->n + 1) * sizeof *col->start))) {
        free(mode);
        return ZF_ENOMEM;
    }
    for (uint64_t k = 0; k < nslices; k++) {
        uint64_t lo = slice == UINT64_MAX ? 0 : k * slice, hi = slice == UINT64_MAX || p->n - lo < slice ? p->n : lo + slice;
        mode[k] = zf_pdcsv_mode(&pd, zf_pdcsv_parts_of(&pd, p->ticks + lo, (size_t)(hi - lo)));
        for (uint64_t i = lo; i < hi; i++) {
            int64_t v = p->ticks[i];
            bytes += v == ZF_NAT ? nat_len
                                 : zf_pdcsv_base_len(&pd, v) + zf_pdcsv_extra(mode[k]) +
                                       (t.values == ZF_VALUES_DURATION && v < 0 && mode[k] != ZF_PD_DAYS);
        }
    }
    int rc = reserve_col(a, p, bytes, col);
    if (rc) {
        free(mode);
        return rc;
    }
    uint64_t at = 0;
    for (uint64_t i = 0; i < p->n; i++) {
        col->start[i] = at;
        int64_t v = p->ticks[i];
        if (v == ZF_NAT) {
            memcpy(col->text + at, nat, nat_len);
            at += nat_len;
        } else {
            at += zf_pdcsv_text(&pd, mode[slice == UINT64_MAX ? 0 : i / slice], v, col->text + at);
        }
    }
    col->start[p->n] = at;
    col->nfields = p->n;
    free(mode);
    return ZF_OK;
}

/* the header text of a column: name CSV-quoted */
static char *quoted(const char *name)
{
    zf_sbuf sb = {0};
    zf_sbuf_csv_field(&sb, name);
    if (sb.failed) {
        free(sb.data);
        return NULL;
    }
    return sb.data;
}

/* column d: the index of dimension d */
static int index_col(const zf_meta *am, unsigned d, zf_labcol *col)
{
    char dn[32];
    snprintf(dn, sizeof dn, "dim_%u", d);
    col->dim = (int)d;
    col->name = quoted(am->dim_names[d] ? am->dim_names[d] : dn);
    return col->name ? ZF_OK : ZF_ENOMEM;
}

static void pending_free(pending *p)
{
    free(p->ticks);
    zf_coordtext_clear(&p->ct);
}

/* make col from a loaded source: its table (time values formatted here) */
static int fill_col(const zf_array *a, pending *p, uint64_t slice, const char *nat, zf_labcol *col)
{
    col->dim = p->src->dim;
    memcpy(col->stride, p->stride, sizeof col->stride);
    if (p->ticks) {
        int rc = format_ticks(a, p, slice, nat, col);
        if (rc)
            return rc;
    } else { /* the loader's table: ownership moves to the column */
        uint64_t need = p->ct.start[p->ct.n] + (p->ct.n + 1) * sizeof *p->ct.start;
        if (!reserve(need)) {
            log_src(a, p->src, "its text is more than the label memory left allows");
            return ZF_EUNSUPPORTED;
        }
        col->reserved = need;
        col->text = p->ct.text;
        col->start = p->ct.start;
        col->nfields = p->ct.n;
        p->ct.text = NULL;
        p->ct.start = NULL;
    }
    col->name = quoted(p->src->name);
    return col->name ? ZF_OK : ZF_ENOMEM;
}

static void col_clear(zf_labcol *col)
{
    release(col->reserved);
    free(col->name);
    free(col->text);
    free(col->start);
    memset(col, 0, sizeof *col);
}

int zf_labels_load(zf_array *a, const zf_labsrc *src, unsigned n, const char *nat,
                   zf_labels **out)
{
    const zf_meta *am = zf_array_meta(a);
    zf_labels *lb = calloc(1, sizeof *lb);
    pending *p = calloc(n ? n : 1, sizeof *p);
    int *ok = calloc(n ? n : 1, sizeof *ok);
    if (!lb || !p || !ok || !(lb->cols = calloc(am->ndim + n, sizeof *lb->cols))) {
        free(lb);
        free(p);
        free(ok);
        return ZF_ENOMEM;
    }
    unsigned ndata = 0;
    int rc = ZF_OK;
    for (unsigned i = 0; i < n && rc == ZF_OK; i++) {
        p[i].src = &src[i];
        int got = load_src(a, &p[i]);
        ok[i] = got == ZF_OK;
        ndata += ok[i] && src[i].dim < 0;
        if (got == ZF_EIO || got == ZF_ESTALE)
            rc = ZF_EIO; /* a store that may answer later: the labels are tried again */
    }
    uint64_t slice = am->ndim == 1 ? ZF_PD_SLICE_CELLS / (ndata + 1) : UINT64_MAX;
    for (unsigned d = 0; d < am->ndim && rc == ZF_OK; d++) {
        zf_labcol *col = &lb->cols[lb->ncols++];
        unsigned i = 0;
        while (i < n && !(ok[i] && src[i].dim == (int)d))
            i++;
        if (i < n && (rc = fill_col(a, &p[i], slice, nat, col)) != ZF_ENOMEM && rc) {
            col_clear(col);
            rc = ZF_OK;
            i = n;
        }
        if (i == n && rc == ZF_OK)
            rc = index_col(am, d, col);
    }
    for (unsigned i = 0; i < n && rc == ZF_OK; i++) {
        if (!ok[i] || src[i].dim >= 0)
            continue;
        zf_labcol *col = &lb->cols[lb->ncols];
        if ((rc = fill_col(a, &p[i], slice, nat, col)) == ZF_OK)
            lb->ncols++, lb->ndata++;
        else if (rc != ZF_ENOMEM) {
            col_clear(col);
            rc = ZF_OK;
        }
    }
    for (unsigned i = 0; i < n; i++)
        pending_free(&p[i]);
    free(p);
    free(ok);
    if (rc) {
        zf_labels_free(lb);
        return rc;
    }
    *out = lb;
    return ZF_OK;
}

void zf_labels_free(zf_labels *lb)
{
    if (!lb)
        return;
    for (unsigned i = 0; i < lb->ncols; i++)
        col_clear(&lb->cols[i]);
    free(lb->cols);
    free(lb);
}

void zf_labels_fp(const zf_labels *lb, zf_fp *fp)
{
    for (unsigned i = 0; i < lb->ncols; i++) {
        const zf_labcol *c = &lb->cols[i];
        zf_fp_add(fp, c->name, strlen(c->name) + 1);
        zf_fp_add(fp, c->stride, sizeof c->stride);
        zf_fp_add(fp, &c->dim, sizeof c->dim);
        if (c->text) {
            zf_fp_add(fp, c->start, ((size_t)c->nfields + 1) * sizeof *c->start);
            zf_fp_add(fp, c->text, (size_t)c->start[c->nfields]);
        }
    }
}
