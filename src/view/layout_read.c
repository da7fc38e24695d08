/* layout_read.c - the bytes of an array's .txt and .csv views at any offset:
 * find the offset block, measure up to the offset, format what is returned. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "view/layout.h"
#include "layout_impl.h"
#include "base/digits.h"
#include "base/sbuf.h"

typedef struct reader {
    zf_layout *l;
    zf_view view;
    const zf_text *text;
    uint64_t pos;        /* text offset of the next line */
    uint64_t want, end;  /* requested range [want, end) */
    char *out;
    size_t outn;
    char prefix[ZF_MAX_DIMS * 21]; /* csv index text of the fixed coordinates */
    size_t prefix_len;
    zf_cursor last;      /* the last line started */
    char *tmp;           /* labelled .csv: a line cut by the request (line_max bytes) */
    int sequential;      /* continues the reader's previous read */
} reader;

/* format one whole line at p; returns its length */
static size_t format_line(const reader *r, int64_t v, uint64_t last, char *p)
{
    char *q = p;
    if (r->view == ZF_VIEW_CSV && r->l->ndim) {
        memcpy(q, r->prefix, r->prefix_len);
        q += r->prefix_len;
        q += zf_u64_text(last, q);
        *q++ = ',';
    }
    q += zf_text_value(r->text, v, q);
    *q++ = '\n';
    return (size_t)(q - p);
}

/* emit one line (value v, last coordinate `last`) clipped to the request */
static void emit_line(reader *r, int64_t v, uint64_t last)
{
    if (r->pos >= r->want && r->end - r->pos >= r->l->line_max) { /* fast path: fits whole */
        size_t len = format_line(r, v, last, r->out + r->outn);
        r->outn += len;
        r->pos += len;
        return;
    }
    uint64_t len = zf_text_len(r->text, v) + 1;
    if (r->view == ZF_VIEW_CSV && r->l->ndim)
        len += r->prefix_len + zf_ndig64(last) + 1;
    if (r->pos + len <= r->want) { /* before the request: measure only */
        r->pos += len;
        return;
    }
    char tmp[4096];
    format_line(r, v, last, tmp);
    uint64_t from = r->want > r->pos ? r->want - r->pos : 0;
    uint64_t to = r->end - r->pos < len ? r->end - r->pos : len;
    memcpy(r->out + r->outn, tmp + from, (size_t)(to - from));
    r->outn += (size_t)(to - from);
    r->pos += len;
}

/* lines of a run of values (no index columns) formatted straight into the
 * request while they surely fit; returns how many */
static uint64_t emit_lines(reader *r, const int64_t *vals, uint64_t n)
{
    zf_lines w = zf_text_lines(r->text, vals, (size_t)n, r->out + r->outn,
                              (size_t)(r->end - r->pos));
    if (w.count) {
        r->last.pos = r->pos + w.last;
        r->outn += w.bytes;
        r->pos += w.bytes;
    }
    return w.count;
}

/* a decimal counter: the text of a number, incremented in place */
typedef struct counter {
    char d[24];
    size_t n;
} counter;

static void counter_next(counter *c)
{
    size_t i = c->n;
    while (i > 0 && c->d[i - 1] == '9')
        c->d[--i] = '0';
    if (i > 0) {
        c->d[i - 1]++;
        return;
    }
    memmove(c->d + 1, c->d, c->n++); /* 99..9 + 1 */
    c->d[0] = '1';
}

/* csv lines of a run of values whose last coordinates start at idx, while
 * they surely fit the request: the values' text is made a batch at a time by
 * the run formatter, then each line gets its index columns; returns how many */
static uint64_t emit_csv_lines(reader *r, const int64_t *vals, uint64_t n, uint64_t idx)
{
    enum { BATCH = 128 };
    char text[BATCH * 24 + 2 * (ZF_VALUE_MAX + 1) + 512]; /* room for typical lines */
    counter ix;
    ix.n = zf_u64_text(idx, ix.d);
    uint64_t done = 0;
    while (done < n) {
        size_t want = n - done < BATCH ? (size_t)(n - done) : BATCH;
        zf_lines w = zf_text_lines(r->text, vals + done, want, text, sizeof text);
        const char *p = text;
        for (size_t i = 0; i < w.count; i++, done++, counter_next(&ix)) {
            /* a line ends at the first newline, but the NaT text may hold one */
            const char *nl = vals[done] == ZF_NAT ? p + r->text->nat_len
                                                  : memchr(p, '\n', (size_t)(text + w.bytes - p));
            size_t tlen = (size_t)(nl + 1 - p), len = r->prefix_len + ix.n + 1 + tlen;
            if (r->end - r->pos < len)
                return done;
            char *q = r->out + r->outn;
            memcpy(q, r->prefix, r->prefix_len);
            memcpy(q + r->prefix_len, ix.d, ix.n);
            q[r->prefix_len + ix.n] = ',';
            memcpy(q + r->prefix_len + ix.n + 1, p, tlen);
            r->last.pos = r->pos;
            r->outn += len;
            r->pos += len;
            p = nl + 1;
        }
        if (!w.count)
            break;
    }
    return done;
}

/* set the csv prefix for fixed coordinates c[0..ndim-2] */
static void set_prefix(reader *r, const uint64_t *c)
{
    size_t n = 0;
    for (unsigned d = 0; d + 1 < r->l->ndim; d++) {
        n += zf_u64_text(c[d], r->prefix + n);
        r->prefix[n++] = ',';
    }
    r->prefix_len = n;
}

/* ---- runs of one value (absent, constant or bad chunks) before the request:
 * passed over arithmetically, never line by line (a sparse array's offset
 * block may hold 2^36 of them) */

/* the largest k <= n with len(k) <= room, len non-decreasing, len(0) = 0 */
typedef uint64_t (*run_len_fn)(const reader *r, const void *ctx, uint64_t k);
static uint64_t lines_within(const reader *r, const void *ctx, run_len_fn len, uint64_t n,
                             uint64_t room)
{
    uint64_t lo = 0, hi = n; /* len(lo) <= room */
    while (lo < hi) {
        uint64_t mid = hi - (hi - lo) / 2;
        if (len(r, ctx, mid) <= room)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* ---- labelled .csv (labels.h): label fields, then the value as pandas writes it */

/* the fields of one line: per column, its field index (table columns) or
 * the index it writes (index columns) */
typedef struct labline {
    uint64_t f[ZF_LABELS_MAX_COLS];
} labline;

/* the fields of the line at coordinates c */
static void lab_fields(const zf_layout *l, const uint64_t *c, labline *ln)
{
    for (unsigned i = 0; i < l->lab->ncols; i++) {
        const zf_labcol *col = &l->lab->cols[i];
        ln->f[i] = col->text ? zf_labcol_field(col, c, l->ndim) : c[col->dim];
    }
}

/* the next line along the last axis */
static void lab_step(const zf_layout *l, labline *ln)
{
    unsigned last = l->ndim - 1;
    for (unsigned i = 0; i < l->lab->ncols; i++) {
        const zf_labcol *col = &l->lab->cols[i];
        ln->f[i] += col->text ? col->stride[last] : col->dim == (int)last;
    }
}

/* the length of the value field of x in mode (no comma, no newline) */
static uint64_t lab_value_len(const zf_layout *l, int64_t x, zf_pdmode mode)
{
    if (x == ZF_NAT || !l->pdvals)
        return zf_text_len(l->csvtext, x);
    return zf_pdcsv_base_len(&l->pd, x) + zf_pdcsv_extra(mode) +
           (l->pd.values == ZF_VALUES_DURATION && x < 0 && mode != ZF_PD_DAYS);
}

static uint64_t lab_line_len(const zf_layout *l, const labline *ln, int64_t x, zf_pdmode mode)
{
    uint64_t len = l->lab->ncols + 1;
    for (unsigned i = 0; i < l->lab->ncols; i++) {
        const zf_labcol *col = &l->lab->cols[i];
        len += col->text ? col->start[ln->f[i] + 1] - col->start[ln->f[i]] : zf_ndig64(ln->f[i]);
    }
    return len + lab_value_len(l, x, mode);
}

/* the label fields of a line, each followed by a comma, at q; returns the end */
static char *put_labels(const zf_layout *l, const labline *ln, char *q)
{
    for (unsigned i = 0; i < l->lab->ncols; i++) {
        const zf_labcol *col = &l->lab->cols[i];
        if (col->text) {
            uint64_t a = col->start[ln->f[i]], n = col->start[ln->f[i] + 1] - a;
            memcpy(q, col->text + a, (size_t)n);
            q += n;
        } else {
            q += zf_u64_text(ln->f[i], q);
        }
        *q++ = ',';
    }
    return q;
}

static size_t lab_line(const zf_layout *l, const labline *ln, int64_t x, zf_pdmode mode, char *p)
{
    char *q = put_labels(l, ln, p);
    if (x == ZF_NAT || !l->pdvals)
        q += zf_text_value(l->csvtext, x, q);
    else
        q += zf_pdcsv_text(&l->pd, mode, x, q);
    *q++ = '\n';
    return (size_t)(q - p);
}

/* can the values of a slice in mode be written by the array's own .csv
 * formatter (text.h), a batch at a time?  In another format than pandas
 * always; in pandas' when the slice's format is "to the second": then
 * str(Timedelta) and str(Timestamp), which it writes, are pandas' column text */
static int lab_batchable(const zf_layout *l, zf_pdmode mode)
{
    return !l->pdvals || mode == ZF_PD_SECS;
}

/* the labelled lines of the n values at vals (fields from *ln on, advanced)
 * while they surely fit the request, the values formatted a batch at a
 * time; returns how many */
static uint64_t emit_lab_batch(reader *r, const int64_t *vals, uint64_t n, labline *ln)
{
    enum { BATCH = 128 };
    const zf_layout *l = r->l;
    char text[BATCH * 24 + 2 * (ZF_VALUE_MAX + 1) + 512]; /* room for typical lines */
    uint64_t done = 0;
    while (done < n) {
        size_t want = n - done < BATCH ? (size_t)(n - done) : BATCH;
        zf_lines w = zf_text_lines(l->csvtext, vals + done, want, text, sizeof text);
        const char *p = text;
        for (size_t i = 0; i < w.count; i++, done++, lab_step(l, ln)) {
            /* a line ends at the first newline, but the NaT text may hold one */
            const char *nl = vals[done] == ZF_NAT ? p + l->csvtext->nat_len
                                                  : memchr(p, '\n', (size_t)(text + w.bytes - p));
            size_t tlen = (size_t)(nl + 1 - p);
            if (r->end - r->pos < l->line_max)
                return done;
            char *q = put_labels(l, ln, r->out + r->outn);
            memcpy(q, p, tlen);
            size_t len = (size_t)(q + tlen - (r->out + r->outn));
            r->last.pos = r->pos;
            r->outn += len;
            r->pos += len;
            p = nl + 1;
        }
        if (!w.count)
            break;
    }
    return done;
}

/* a labelled run of one value: its first line's coordinates, a line's
 * length but its label fields */
typedef struct lab_run {
    uint64_t c[ZF_MAX_DIMS];
    uint64_t value;
} lab_run;

static uint64_t lab_run_len(const reader *r, const void *ctx, uint64_t k)
{
    const lab_run *p = ctx;
    return zf_sat_add(zf_sat_mul(k, p->value), zf_layout_labels_len(r->l, p->c, k));
}

/* pass over the lines of a run of n values v (element g, coordinates c;
 * within one offset block: one value format) that end before the request
 * starts; returns how many.  Not when a label column's field steps by more
 * than one along the run: its lines are then measured one by one (at most
 * as many as its table has fields) */
static uint64_t skip_labelled(reader *r, int64_t v, uint64_t g, uint64_t n, const uint64_t *c)
{
    const zf_layout *l = r->l;
    if (r->pos >= r->want)
        return 0;
    for (unsigned i = 0; i < l->lab->ncols; i++)
        if (l->lab->cols[i].text && l->lab->cols[i].stride[l->ndim - 1] > 1)
            return 0;
    lab_run p;
    memcpy(p.c, c, l->ndim * sizeof *c);
    p.value = 1 + lab_value_len(l, v, (zf_pdmode)l->bmode[g / l->block]);
    uint64_t k = lines_within(r, &p, lab_run_len, n, r->want - r->pos);
    if (k) {
        r->last = (zf_cursor){r->pos + lab_run_len(r, &p, k - 1), g + k - 1}; /* the last one */
        r->pos += lab_run_len(r, &p, k);
    }
    return k;
}

/* emit the lines of a run of n elements from g (coordinates c), values
 * vals or (vals NULL) v, clipped to the request; returns the lines touched;
 * ZF_ECORRUPT in *rc if bad (a damaged chunk, measured as NaT) and the
 * request starts inside it */
static uint64_t emit_labelled(reader *r, const int64_t *vals, int64_t v, uint64_t g, uint64_t n,
                              const uint64_t *c, int bad, int *rc)
{
    const zf_layout *l = r->l;
    labline ln;
    lab_fields(l, c, &ln);
    uint64_t j = 0;
    while (j < n && r->pos < r->end) {
        zf_pdmode mode = (zf_pdmode)l->bmode[(g + j) / l->block];
        if (!vals && r->pos < r->want) { /* one value: pass over what precedes the request */
            uint64_t cj[ZF_MAX_DIMS], in_block = l->block - (g + j) % l->block;
            memcpy(cj, c, l->ndim * sizeof *c);
            cj[l->ndim - 1] += j;
            uint64_t k = skip_labelled(r, bad ? ZF_NAT : v, g + j, n - j < in_block ? n - j : in_block, cj);
            if (k) {
                j += k;
                cj[l->ndim - 1] += k;
                lab_fields(l, cj, &ln);
                continue;
            }
        }
        if (!bad && vals && r->pos >= r->want && lab_batchable(l, mode)) {
            uint64_t in_block = l->block - (g + j) % l->block; /* one format per block */
            uint64_t k = emit_lab_batch(r, vals + j, n - j < in_block ? n - j : in_block, &ln);
            j += k;
            if (k)
                continue;
        }
        int64_t x = bad ? ZF_NAT : vals ? vals[j] : v;
        r->last.pos = r->pos;
        if (!bad && r->pos >= r->want && r->end - r->pos >= l->line_max) {
            size_t len = lab_line(l, &ln, x, mode, r->out + r->outn);
            r->outn += len;
            r->pos += len;
        } else {
            uint64_t len = lab_line_len(l, &ln, x, mode);
            if (r->pos + len > r->want) { /* a line the request starts or ends inside */
                if (bad || (!r->tmp && !(r->tmp = malloc(l->line_max)))) {
                    *rc = bad ? ZF_ECORRUPT : ZF_ENOMEM;
                    return j;
                }
                lab_line(l, &ln, x, mode, r->tmp);
                uint64_t from = r->want > r->pos ? r->want - r->pos : 0;
                uint64_t to = r->end - r->pos < len ? r->end - r->pos : len;
                memcpy(r->out + r->outn, r->tmp + from, (size_t)(to - from));
                r->outn += (size_t)(to - from);
            }
            r->pos += len;
        }
        j++;
        lab_step(l, &ln);
    }
    return j;
}

/* a run of v from last coordinate `last` (.txt, or .csv with index columns) */
typedef struct plain_run {
    uint64_t line;  /* a line's length but its last index's digits */
    uint64_t last;
} plain_run;

static uint64_t plain_len(const reader *r, const void *ctx, uint64_t k)
{
    const plain_run *p = ctx;
    uint64_t digits = r->view == ZF_VIEW_CSV && r->l->ndim ? zf_digit_sum(p->last, p->last + k) : 0;
    return zf_sat_add(zf_sat_mul(k, p->line), digits);
}

/* pass over the lines of a run of n values v (element g, last coordinate
 * `last`) that end before the request starts; returns how many */
static uint64_t skip_plain(reader *r, int64_t v, uint64_t g, uint64_t n, uint64_t last)
{
    if (r->pos >= r->want)
        return 0;
    plain_run p = {zf_text_len(r->text, v) + 1, last};
    if (r->view == ZF_VIEW_CSV && r->l->ndim)
        p.line += r->prefix_len + 1;
    uint64_t k = lines_within(r, &p, plain_len, n, r->want - r->pos);
    if (k) {
        r->last = (zf_cursor){r->pos + plain_len(r, &p, k - 1), g + k - 1}; /* the last one */
        r->pos += plain_len(r, &p, k);
    }
    return k;
}

/* pass over a run of a bad chunk, measured as NaT like the size pass did;
 * ZF_ECORRUPT if the requested range starts inside it */
static int skip_bad_run(reader *r, uint64_t g, uint64_t run, uint64_t last)
{
    uint64_t k = skip_plain(r, ZF_NAT, g, run, last);
    return k < run && r->pos < r->end ? ZF_ECORRUPT : ZF_OK;
}

/* a sequential reader is in chunk ci: have the next chunks (C order of the
 * chunk grid) decoded in the background, except those known to be damaged
 * (a remote store: enough of them to keep its requests in flight) */
static void prefetch_ahead(zf_layout *l, uint64_t ci)
{
    uint64_t ahead = zf_array_read_ahead(l->a, ZF_LAYOUT_AHEAD); /* more for a remote store */
    if (l->by_shard) { /* one chunk of each next shard: its load brings the shard whole */
        uint64_t shard = zf_array_shard_of(l->a, ci), n = 0;
        for (uint64_t k = ci + 1; n < ahead && k <= ci + ahead * l->per_shard && k < l->nchunks;
             k++) {
            uint64_t s = zf_array_shard_of(l->a, k);
            if (s != shard && !zf_layout_is_bad(l, k)) {
                zf_array_prefetch(l->a, k);
                n++;
            }
            shard = s;
        }
        return;
    }
    for (uint64_t k = ci + 1; k <= ci + ahead && k < l->nchunks; k++)
        if (!zf_layout_is_bad(l, k))
            zf_array_prefetch(l->a, k);
}

/* emit lines from element g until the request is filled or the array ends */
static int emit_from(reader *r, uint64_t g)
{
    zf_layout *l = r->l;
    unsigned n = l->ndim, last = n ? n - 1 : 0;
    while (r->pos < r->end && g < l->nelems) {
        uint64_t c[ZF_MAX_DIMS], ci = 0, lo = 0, run = 1, rem = g;
        for (unsigned d = n; d-- > 0;) {
            c[d] = rem % l->m->shape[d];
            rem /= l->m->shape[d];
        }
        for (unsigned d = 0; d < n; d++) {
            ci = ci * zf_array_grid(l->a, d) + c[d] / l->m->read_chunks[d];
            lo += (c[d] % l->m->read_chunks[d]) * l->cstride[d];
        }
        if (n) {
            uint64_t cend = (c[last] / l->m->read_chunks[last] + 1) * l->m->read_chunks[last];
            run = (cend < l->m->shape[last] ? cend : l->m->shape[last]) - c[last];
            set_prefix(r, c);
        }
        int labelled = l->lab && r->view == ZF_VIEW_CSV;
        if (labelled && zf_layout_is_bad(l, ci)) {
            int rc = ZF_OK;
            emit_labelled(r, NULL, ZF_NAT, g, run, c, 1, &rc);
            if (rc)
                return rc;
            g += run;
            continue;
        }
        if (zf_layout_is_bad(l, ci)) {
            int rc = skip_bad_run(r, g, run, n ? c[last] : 0);
            if (rc)
                return rc;
            g += run;
            continue;
        }
        zf_chunk *ch;
        int rc = zf_array_get_chunk(l->a, ci, &ch);
        if (rc == ZF_ESTALE) /* this open keeps its version: EIO; the next one sizes afresh */
            zf_layout_drop_index(l);
        if (rc)
            return rc == ZF_ENOMEM || rc == ZF_ESTALE ? rc : ZF_ECORRUPT;
        if (r->sequential)
            prefetch_ahead(l, ci);
        const int64_t *vals = ch->values ? ch->values + lo : NULL;
        if (labelled) {
            uint64_t j = emit_labelled(r, vals, ch->constant, g, run, c, 0, &rc);
            r->last.elem = g + (j ? j - 1 : 0);
            zf_array_put_chunk(l->a, ch);
            if (rc)
                return rc;
            g += run;
            continue;
        }
        int batch = vals && (r->view == ZF_VIEW_TXT || !n);
        int csv_batch = vals && !batch;
        uint64_t j = vals ? 0 : skip_plain(r, ch->constant, g, run, n ? c[last] : 0);
        while (j < run && r->pos < r->end) {
            uint64_t k = 0;
            if (r->pos >= r->want && batch)
                k = emit_lines(r, vals + j, run - j);
            else if (r->pos >= r->want && csv_batch)
                k = emit_csv_lines(r, vals + j, run - j, c[last] + j);
            if (k) {
                j += k;
                continue;
            }
            r->last.pos = r->pos;
            emit_line(r, vals ? vals[j] : ch->constant, n ? c[last] + j : 0);
            j++;
        }
        r->last.elem = g + j - 1;
        zf_array_put_chunk(l->a, ch);
        g += run;
    }
    return ZF_OK;
}

/* the block whose text holds offset x */
static uint64_t find_block(const uint64_t *off, uint64_t nblocks, uint64_t x)
{
    uint64_t lo = 0, hi = nblocks; /* off[lo] <= x < off[hi] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (off[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int zf_layout_read(zf_layout *l, zf_view v, uint64_t off, char *buf, size_t len, size_t *got)
{
    return zf_layout_read_from(l, v, off, buf, len, got, NULL);
}

int zf_layout_read_from(zf_layout *l, zf_view v, uint64_t off, char *buf, size_t len,
                        size_t *got, zf_cursor *cursor)
{
    *got = 0;
    if (v == ZF_VIEW_INFO)
        return zf_layout_info_read(l, off, buf, len, got);
    int rc = zf_layout_ensure_text(l, v);
    if (rc)
        return rc;
    uint64_t total = l->off[v][l->nblocks];
    if (off >= total || len == 0)
        return ZF_OK;
    if (len > total - off)
        len = (size_t)(total - off);
    reader r = {.l = l, .view = v, .text = v == ZF_VIEW_CSV ? l->csvtext : l->text,
                .want = off, .end = off + len, .out = buf};
    if (v == ZF_VIEW_CSV && off < l->header_len) {
        size_t n = l->header_len - (size_t)off < len ? l->header_len - (size_t)off : len;
        memcpy(buf, l->header + off, n);
        r.outn = n;
    }
    if (r.outn < len) {
        uint64_t b = find_block(l->off[v], l->nblocks, off), g = b * l->block;
        r.pos = l->off[v][b];
        if (cursor && cursor->pos >= r.pos && cursor->pos <= off && cursor->elem < l->nelems &&
            cursor->elem >= g) { /* continue where the last read of this reader ended */
            r.pos = cursor->pos;
            g = cursor->elem;
            r.sequential = 1;
        }
        r.last = (zf_cursor){r.pos, g};
        rc = emit_from(&r, g);
        free(r.tmp);
        if (cursor && rc == ZF_OK)
            *cursor = r.last;
    }
    *got = r.outn;
    return rc;
}
