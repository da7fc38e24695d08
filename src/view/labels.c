/* labels.c - the label columns of an array's .csv (labels.h). */
#include "view/labels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/deadline.h"
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

/* make the values of a chunk decoded at a coarser unit (ch->coarser) ticks
 * of the array's unit; ZF_EUNSUPPORTED (why filled in) where they overflow */
static int uncoarsen(zf_chunk *ch, int64_t *buf, uint64_t n, char *why, size_t cap)
{
    static const int64_t mult[4] = {1, 1000, 1000000, 1000000000};
    for (uint64_t i = 0; ch->values && ch->coarser && i < n; i++)
        if (buf[i] != ZF_NAT && __builtin_mul_overflow(buf[i], mult[ch->coarser & 3], &buf[i])) {
            snprintf(why, cap, "its values are beyond int64 ticks of its unit");
            return ZF_EUNSUPPORTED;
        }
    return ZF_OK;
}

/* most threads reading one time coordinate, and the decoded chunks they
 * may hold at once */
#define TICK_THREADS 16
#define TICK_BUF_MAX ((uint64_t)64 << 20)

/* one round of reading a time coordinate's chunks, shared by its threads */
typedef struct tick_round {
    pending *p;
    uint64_t per, nchunks;
    uint64_t next;        /* the next chunk to read (atomic) */
    int rc;               /* the first failure (atomic; the rest under mu) */
    int unreadable;       /* it was a chunk that could not be decoded */
    uint64_t failed;      /* that chunk */
    char *why;
    size_t cap;
    pthread_mutex_t mu;
} tick_round;

/* keep the first failure of a round (why: a reason, or NULL) */
static void round_fail(tick_round *r, int rc, int unreadable, uint64_t ci, const char *why)
{
    pthread_mutex_lock(&r->mu);
    if (!r->rc) {
        r->unreadable = unreadable;
        r->failed = ci;
        if (why)
            snprintf(r->why, r->cap, "%s", why);
        __atomic_store_n(&r->rc, rc, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&r->mu);
}

/* read chunks of the round until none is left or one fails (a worker of
 * zf_deadline_workers: under the request's deadline) */
static void *tick_worker(void *arg)
{
    tick_round *r = arg;
    zf_array *c = r->p->src->arr;
    int64_t *buf = malloc((size_t)r->per * 8);
    zf_store_buf raw = {NULL, 0};
    char why[300];
    if (!buf)
        round_fail(r, ZF_ENOMEM, 0, 0, NULL);
    for (uint64_t ci; buf && !__atomic_load_n(&r->rc, __ATOMIC_RELAXED) &&
                      (ci = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < r->nchunks;) {
        zf_chunk ch;
        int rc = zf_array_decode(c, ci, buf, &raw, &ch);
        if (rc) {
            round_fail(r, rc, 1, ci, NULL);
        } else if ((rc = uncoarsen(&ch, buf, r->per, why, sizeof why))) {
            round_fail(r, rc, 0, ci, why);
        } else {
            place_chunk(c, ci, &ch, r->p->ticks); /* (chunks fill disjoint elements) */
        }
    }
    free(buf);
    free(raw.p);
    return NULL;
}

/* threads for a round: as many requests as the store keeps in flight (a
 * local one: a CPU each), within the chunks and the memory their buffers
 * may take */
static unsigned tick_threads(const zf_array *c, uint64_t per, uint64_t nchunks)
{
    const zf_store *st = zf_array_store(c);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t n = st->remote && st->parallel > 0 ? st->parallel : (ncpu > 0 ? (uint64_t)ncpu : 1);
    uint64_t bytes = per * 8, room = TICK_BUF_MAX / (bytes ? bytes : 1); /* (per < 2^25) */
    n = n < TICK_THREADS ? n : TICK_THREADS;
    n = n < nchunks ? n : nchunks;
    n = n < room ? n : room;
    return n ? (unsigned)n : 1;
}

/* read every chunk of p's coordinate into p->ticks, by a few threads */
static int tick_round_run(pending *p, uint64_t per, char *why, size_t cap, int *unreadable,
                          uint64_t *failed)
{
    zf_array *c = p->src->arr;
    tick_round r = {.p = p, .per = per, .nchunks = zf_array_nchunks(c), .why = why, .cap = cap};
    pthread_mutex_init(&r.mu, NULL);
    zf_deadline_workers(tick_threads(c, per, r.nchunks), tick_worker, &r);
    pthread_mutex_destroy(&r.mu);
    *unreadable = r.unreadable;
    *failed = r.failed;
    return r.rc;
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
    if (!(p->ticks = malloc((size_t)p->n * 8 + 8)))
        return ZF_ENOMEM;
    /* decoded outside the cache: a coordinate's own size pass must read its
     * chunks itself (an unlisted store learns their versions that way).  A
     * switch to cftime objects (one way, once: made by this read, or by
     * another reader meanwhile) would leave chunks of two decodings: read
     * them all again */
    int rc = ZF_OK;
    for (int round = 0; round < 3; round++) {
        zf_values before = zf_array_ticks(c).values;
        int unreadable = 0;
        uint64_t failed = 0;
        rc = tick_round_run(p, per, why, cap, &unreadable, &failed);
        if (rc && unreadable && (zf_array_ticks(c).values != before ||
                                 (zf_array_cftime_wanted(c) && zf_array_to_cftime(c))))
            continue; /* cftime objects (switched by this read or another): again */
        if (rc == ZF_OK && zf_array_ticks(c).values != before)
            continue; /* switched while read: again */
        if (rc && unreadable)
            snprintf(why, cap, "chunk %llu cannot be read (%s)", (unsigned long long)failed,
                     zf_strerror(rc));
        return rc;
    }
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

/* how a time column's values are written: pandas' column format (the
 * format of each slice of `slice` values: UINT64_MAX one for all), or
 * another format's text of each value */
typedef struct tickfmt {
    zf_format format;
    zf_pdcsv pd;
    zf_text_room room;        /* the formatter of another format, or of cftime objects */
    int each;                 /* room writes each value (not pandas' column format) */
    zf_pdmode *mode;          /* pandas: per slice */
    uint64_t slice;
    const char *nat;
    size_t nat_len;
} tickfmt;

/* the text length (to) or text of value i of p */
static size_t tick_text(const tickfmt *f, const pending *p, uint64_t i, char *to)
{
    int64_t v = p->ticks[i];
    if (v == ZF_NAT) {
        if (to)
            memcpy(to, f->nat, f->nat_len);
        return f->nat_len;
    }
    if (f->each)
        return to ? zf_text_value(&f->room.text, v, to) : zf_text_len(&f->room.text, v);
    zf_pdmode m = f->mode[f->slice == UINT64_MAX ? 0 : i / f->slice];
    if (to)
        return zf_pdcsv_text(&f->pd, m, v, to);
    return zf_pdcsv_base_len(&f->pd, v) + zf_pdcsv_extra(m) +
           (f->pd.values == ZF_VALUES_DURATION && v < 0 && m != ZF_PD_DAYS);
}

/* set up f for the values of p as decoded now (pandas: each slice's format;
 * cftime objects: each value's text, pandas writing each one's str(), as it
 * writes a column of objects); ZF_EUNSUPPORTED (logged) if they cannot be
 * written so, ZF_ENOMEM */
static int tickfmt_init(const zf_array *a, pending *p, tickfmt *f)
{
    zf_ticks t = zf_array_ticks(p->src->arr);
    f->each = f->format != ZF_FORMAT_PANDAS || t.values == ZF_VALUES_CFTIME;
    if (f->each) {
        int rc = zf_text_init(&f->room, t.values, f->format, t.unit, t.scale, t.cal, ""); /* (NaT: f->nat) */
        return rc ? ZF_EUNSUPPORTED : ZF_OK;
    }
    if (zf_pdcsv_init(&f->pd, t.values, t.unit, t.scale)) {
        log_src(a, p->src, "its unit cannot be written as pandas does");
        return ZF_EUNSUPPORTED;
    }
    uint64_t nslices = f->slice == UINT64_MAX ? 1 : (p->n + f->slice - 1) / f->slice;
    if (!(f->mode = malloc((size_t)(nslices ? nslices : 1) * sizeof *f->mode)))
        return ZF_ENOMEM;
    for (uint64_t k = 0; k < nslices; k++) {
        uint64_t lo = f->slice == UINT64_MAX ? 0 : k * f->slice;
        uint64_t hi = f->slice == UINT64_MAX || p->n - lo < f->slice ? p->n : lo + f->slice;
        f->mode[k] = zf_pdcsv_mode(&f->pd, zf_pdcsv_parts_of(&f->pd, p->ticks + lo, (size_t)(hi - lo)));
    }
    return ZF_OK;
}

/* make column col's table from the time values of p, in format (pandas:
 * its column format, one per slice of `slice` values; UINT64_MAX: one for
 * all), NaT as nat */
static int format_ticks(const zf_array *a, pending *p, zf_format format, uint64_t slice,
                        const char *nat, zf_labcol *col)
{
    tickfmt f = {.format = format, .slice = slice, .nat = nat, .nat_len = strlen(nat)};
    int rc = tickfmt_init(a, p, &f);
    uint64_t bytes = 0;
    for (uint64_t i = 0; rc == ZF_OK && i < p->n; i++)
        bytes += tick_text(&f, p, i, NULL);
    if (rc == ZF_OK && !(col->start = malloc(((size_t)p->n + 1) * sizeof *col->start)))
        rc = ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = reserve_col(a, p, bytes, col);
    uint64_t at = 0;
    for (uint64_t i = 0; rc == ZF_OK && i < p->n; i++) {
        col->start[i] = at;
        at += tick_text(&f, p, i, col->text + at);
    }
    if (rc == ZF_OK) {
        col->start[p->n] = at;
        col->nfields = p->n;
    }
    free(f.mode);
    return rc;
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
static int fill_col(const zf_array *a, pending *p, zf_format format, uint64_t slice,
                    const char *nat, zf_labcol *col)
{
    col->dim = p->src->dim;
    memcpy(col->stride, p->stride, sizeof col->stride);
    if (p->ticks) {
        int rc = format_ticks(a, p, format, slice, nat, col);
        if (rc)
            return rc;
    } else { /* the loader's table: ownership moves to the column */
        if (p->src->dim >= 0 && zf_array_meta(a)->ndim > 1 && zf_coordtext_level(&p->ct))
            return ZF_ENOMEM; /* a level of pandas' MultiIndex */
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

int zf_labels_load(zf_array *a, const zf_labsrc *src, unsigned n, zf_format format,
                   const char *nat, unsigned ndata, zf_labels **out)
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
    int rc = ZF_OK;
    for (unsigned i = 0; i < n && rc == ZF_OK; i++) {
        p[i].src = &src[i];
        int got = load_src(a, &p[i]);
        ok[i] = got == ZF_OK;
        if (got == ZF_EIO || got == ZF_ESTALE)
            rc = ZF_EIO; /* a store that may answer later: the labels are tried again */
    }
    uint64_t slice = am->ndim == 1 ? ZF_PD_SLICE_CELLS / (ndata + 1) : UINT64_MAX;
    for (unsigned d = 0; d < am->ndim && rc == ZF_OK; d++) {
        zf_labcol *col = &lb->cols[lb->ncols++];
        unsigned i = 0;
        while (i < n && !(ok[i] && src[i].dim == (int)d))
            i++;
        if (i < n && (rc = fill_col(a, &p[i], format, slice, nat, col)) != ZF_ENOMEM && rc) {
            col_clear(col);
            rc = ZF_OK;
            i = n;
        }
        if (i == n && rc == ZF_OK)
            rc = index_col(am, d, col);
    }
    for (unsigned i = 0; i < n && rc == ZF_OK && lb->ncols < ZF_LABELS_MAX_COLS; i++) {
        if (!ok[i] || src[i].dim >= 0)
            continue;
        zf_labcol *col = &lb->cols[lb->ncols];
        if ((rc = fill_col(a, &p[i], format, slice, nat, col)) == ZF_OK)
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
