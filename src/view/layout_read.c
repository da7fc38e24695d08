/* layout_read.c - the bytes of an array's .txt and .csv views at any offset:
 * find the offset block, measure up to the offset, format what is returned. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "view/layout.h"
#include "layout_impl.h"
#include "base/digits.h"
#include "base/sbuf.h"

/* one label column along a run of lines (a run: consecutive elements along
 * the last axis): the text of its field now, and how it moves line by line */
typedef struct runcol {
    const zf_labcol *col; /* a table column (labels.h), or NULL: an index column */
    uint64_t f, step;     /* a table column: its field now, and the step along the run;
                             an index column: the index now */
    int moves;            /* an index column: it counts along the run (the last axis) */
    char d[24];           /* an index column: the index in decimal */
    size_t n;
} runcol;

typedef struct reader {
    zf_layout *l;
    int csv;             /* the .csv (else the .txt) */
    const zf_text *text; /* the value column's text (.txt: one line per value) */
    const zf_pdcsv *pd;  /* labelled .csv in pandas' format: the value column as pandas
                            writes its slice (l->bmode), else NULL */
    const zf_labcol *cols; /* the label columns of every line (.txt: none) */
    unsigned ncols;
    uint64_t pos;        /* text offset of the next line */
    uint64_t want, end;  /* requested range [want, end) */
    char *out;
    size_t outn;
    char *prefix;        /* the leading label fields that stay the same along the run
                            (own_prefix, or line_max bytes of the heap) */
    size_t prefix_len;
    char own_prefix[ZF_MAX_DIMS * 21];
    runcol rc[ZF_LABELS_MAX_COLS]; /* the other label columns of the run */
    unsigned nrc;
    size_t line_max;     /* longest line */
    zf_cursor last;      /* the last line started */
    char *tmp;           /* a line cut by the request (line_max bytes) */
    int sequential;      /* continues the reader's previous read */
} reader;

/* ---- label columns: the fields of the run's lines */

/* the next index, its decimal text in place */
static void count_up(runcol *c)
{
    c->f++;
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

/* the text of column c's field now, its length in *n */
static inline const char *col_text(const runcol *c, size_t *n)
{
    if (!c->col) {
        *n = c->n;
        return c->d;
    }
    const uint64_t *s = c->col->start + c->f;
    *n = (size_t)(s[1] - s[0]);
    return c->col->text + s[0];
}

/* set up the label columns of the run starting at coordinates c: those
 * that stay the same along it up to the first that moves make the prefix */
static void start_run(reader *r, const uint64_t *c)
{
    unsigned ndim = r->l->ndim, last = ndim - 1;
    r->prefix_len = 0;
    r->nrc = 0;
    for (unsigned i = 0; i < r->ncols; i++) {
        const zf_labcol *col = &r->cols[i];
        runcol *rc = &r->rc[r->nrc];
        rc->col = col->text ? col : NULL;
        rc->f = col->text ? zf_labcol_field(col, c, ndim) : c[col->dim];
        rc->step = col->text ? col->stride[last] : 0;
        rc->moves = !col->text && col->dim == (int)last;
        if (!col->text)
            rc->n = zf_u64_text(rc->f, rc->d);
        if (r->nrc == 0 && !rc->step && !rc->moves) {
            size_t n;
            const char *t = col_text(rc, &n);
            memcpy(r->prefix + r->prefix_len, t, n);
            r->prefix[r->prefix_len + n] = ',';
            r->prefix_len += n + 1;
        } else {
            r->nrc++;
        }
    }
}

/* the label fields of the line, each followed by a comma, at q; returns the end */
static inline char *put_cols(const reader *r, char *q)
{
    memcpy(q, r->prefix, r->prefix_len);
    q += r->prefix_len;
    for (unsigned i = 0; i < r->nrc; i++) {
        size_t n;
        const char *t = col_text(&r->rc[i], &n);
        memcpy(q, t, n);
        q[n] = ',';
        q += n + 1;
    }
    return q;
}

/* the length of the label fields put_cols writes */
static uint64_t cols_len(const reader *r)
{
    uint64_t len = r->prefix_len;
    for (unsigned i = 0; i < r->nrc; i++) {
        size_t n;
        col_text(&r->rc[i], &n);
        len += n + 1;
    }
    return len;
}

/* the label fields of the next line along the run */
static inline void cols_next(reader *r)
{
    for (unsigned i = 0; i < r->nrc; i++) {
        runcol *c = &r->rc[i];
        if (c->moves)
            count_up(c);
        else
            c->f += c->step;
    }
}

/* the label fields of the line k lines further along the run */
static void cols_skip(reader *r, uint64_t k)
{
    for (unsigned i = 0; i < r->nrc; i++) {
        runcol *c = &r->rc[i];
        if (c->moves) {
            c->f += k;
            c->n = zf_u64_text(c->f, c->d);
        } else {
            c->f += k * c->step;
        }
    }
}

/* ---- lines: the label fields, then the value */

/* the value column's text of x (mode: its slice's format, pandas' column) at q */
static inline size_t put_value(const reader *r, int64_t x, zf_pdmode mode, char *q)
{
    if (x == ZF_NAT || !r->pd)
        return zf_text_value(r->text, x, q);
    return zf_pdcsv_text(r->pd, mode, x, q);
}

static uint64_t value_len(const reader *r, int64_t x, zf_pdmode mode)
{
    if (x == ZF_NAT || !r->pd)
        return zf_text_len(r->text, x);
    return zf_pdcsv_base_len(r->pd, x) + zf_pdcsv_extra(mode) +
           (r->pd->values == ZF_VALUES_DURATION && x < 0 && mode != ZF_PD_DAYS);
}

/* ---- runs of one value (absent, constant or damaged chunks) before the
 * request: passed over arithmetically, never line by line (a sparse
 * array's offset block may hold 2^36 of them) */

/* whether the lengths of the run's label fields add up at once: no table
 * column steps by more than one field along the run (its lines are then
 * measured one by one, at most as many as its table has fields) */
static int run_summable(const reader *r)
{
    for (unsigned i = 0; i < r->nrc; i++)
        if (r->rc[i].col && r->rc[i].step > 1)
            return 0;
    return 1;
}

/* the length of the next k lines of the run (run_summable), each value's
 * text and newline vlen bytes; saturates */
static uint64_t run_len(const reader *r, uint64_t vlen, uint64_t k)
{
    uint64_t len = zf_sat_mul(k, r->prefix_len + vlen);
    for (unsigned i = 0; i < r->nrc; i++) {
        const runcol *c = &r->rc[i];
        uint64_t f;
        if (!c->col)
            f = c->moves ? zf_digit_sum(c->f, c->f + k) : zf_sat_mul(k, c->n);
        else if (c->step)
            f = c->col->start[c->f + k] - c->col->start[c->f];
        else
            f = zf_sat_mul(k, c->col->start[c->f + 1] - c->col->start[c->f]);
        len = zf_sat_add(len, zf_sat_add(f, k));
    }
    return len;
}

/* pass over the lines of the next n (at most) of the run, all of value x
 * (mode: their slice's format), that end before the request starts;
 * returns how many */
static uint64_t skip_run(reader *r, int64_t x, zf_pdmode mode, uint64_t n)
{
    if (r->pos >= r->want || !run_summable(r))
        return 0;
    uint64_t vlen = value_len(r, x, mode) + 1, room = r->want - r->pos;
    uint64_t lo = 0, hi = n; /* the largest k <= n whose lines fit the room: lo */
    while (lo < hi) {
        uint64_t mid = hi - (hi - lo) / 2;
        if (run_len(r, vlen, mid) <= room)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo) {
        r->last.pos = r->pos + run_len(r, vlen, lo - 1); /* the last one */
        r->pos += run_len(r, vlen, lo);
        cols_skip(r, lo);
    }
    return lo;
}

/* the whole line of value x at p; its length */
static size_t put_line(const reader *r, int64_t x, zf_pdmode mode, char *p)
{
    char *q = put_cols(r, p);
    q += put_value(r, x, mode, q);
    *q++ = '\n';
    return (size_t)(q - p);
}

/* the lines of the n values at vals while they surely fit the request: the
 * values' text made a batch at a time by the formatter's run (text.h), then
 * each line gets its label fields (none: the lines go straight into the
 * request); returns how many */
static uint64_t emit_batch(reader *r, const int64_t *vals, uint64_t n)
{
    if (!r->nrc && !r->prefix_len) {
        zf_lines w = zf_text_lines(r->text, vals, (size_t)n, r->out + r->outn,
                                  (size_t)(r->end - r->pos));
        if (w.count) {
            r->last.pos = r->pos + w.last;
            r->outn += w.bytes;
            r->pos += w.bytes;
        }
        return w.count;
    }
    enum { BATCH = 128 };
    char text[BATCH * 24 + 2 * (ZF_VALUE_MAX + 1) + 512]; /* room for typical lines */
    uint64_t done = 0;
    while (done < n) {
        size_t want = n - done < BATCH ? (size_t)(n - done) : BATCH;
        zf_lines w = zf_text_lines(r->text, vals + done, want, text, sizeof text);
        const char *p = text;
        for (size_t i = 0; i < w.count; i++, done++, cols_next(r)) {
            /* a line ends at the first newline, but the NaT text may hold one */
            const char *nl = vals[done] == ZF_NAT ? p + r->text->nat_len
                                                  : memchr(p, '\n', (size_t)(text + w.bytes - p));
            size_t tlen = (size_t)(nl + 1 - p);
            uint64_t room = r->end - r->pos;
            if (room < r->line_max && room < cols_len(r) + tlen)
                return done;
            char *q = put_cols(r, r->out + r->outn);
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

/* one line (value x) clipped to the request, or measured only before it;
 * ZF_ECORRUPT if bad (a damaged chunk, measured as NaT) and the request
 * starts inside the line, ZF_ENOMEM */
static int emit_one(reader *r, int64_t x, zf_pdmode mode, int bad)
{
    r->last.pos = r->pos;
    if (!bad && r->pos >= r->want && r->end - r->pos >= r->line_max) { /* fits whole */
        size_t len = put_line(r, x, mode, r->out + r->outn);
        r->outn += len;
        r->pos += len;
        return ZF_OK;
    }
    uint64_t len = cols_len(r) + value_len(r, x, mode) + 1;
    if (r->pos + len > r->want) { /* a line the request starts or ends inside */
        if (bad)
            return ZF_ECORRUPT;
        if (!r->tmp && !(r->tmp = malloc(r->line_max)))
            return ZF_ENOMEM;
        put_line(r, x, mode, r->tmp);
        uint64_t from = r->want > r->pos ? r->want - r->pos : 0;
        uint64_t to = r->end - r->pos < len ? r->end - r->pos : len;
        memcpy(r->out + r->outn, r->tmp + from, (size_t)(to - from));
        r->outn += (size_t)(to - from);
    }
    r->pos += len;
    return ZF_OK;
}

/* how many of the n lines from element g have their value in one format
 * (pandas' column format: one per block) */
static uint64_t one_format(const reader *r, uint64_t g, uint64_t n)
{
    uint64_t in_block = r->l->block - g % r->l->block;
    return r->pd && in_block < n ? in_block : n;
}

/* emit the lines of a run of n elements from g (label columns set up by
 * start_run), values vals or (vals NULL) v, clipped to the request;
 * returns the lines touched, with ZF_ECORRUPT in *rc if bad (a damaged
 * chunk, measured as NaT like the size pass did) and the request starts
 * inside it, or ZF_ENOMEM */
static uint64_t emit_run(reader *r, const int64_t *vals, int64_t v, uint64_t g, uint64_t n,
                         int bad, int *rc)
{
    const zf_layout *l = r->l;
    uint64_t j = 0;
    while (j < n && r->pos < r->end) {
        zf_pdmode mode = r->pd ? (zf_pdmode)l->bmode[(g + j) / l->block] : ZF_PD_SECS;
        if (!vals && r->pos < r->want) { /* one value: pass over what precedes the request */
            uint64_t k = skip_run(r, bad ? ZF_NAT : v, mode, one_format(r, g + j, n - j));
            j += k;
            if (k)
                continue;
        }
        /* in pandas' format, the slice's format "to the second" is str(Timedelta)
         * and str(Timestamp), which the formatter's run writes */
        if (!bad && vals && r->pos >= r->want && mode == ZF_PD_SECS) {
            uint64_t k = emit_batch(r, vals + j, one_format(r, g + j, n - j));
            j += k;
            if (k)
                continue;
        }
        if ((*rc = emit_one(r, bad ? ZF_NAT : vals ? vals[j] : v, mode, bad)))
            return j;
        j++;
        cols_next(r);
    }
    return j;
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

/* the value column's texts of the chunk whose ticks are `coarser` steps of
 * 1000 coarser than the array's: .txt the values' text; .csv their .csv
 * text, in pandas' column format where labelled */
static void value_texts(reader *r, unsigned coarser)
{
    zf_vtext vt = zf_layout_vtext(r->l, coarser);
    r->text = r->csv ? vt.csv : vt.txt;
    r->pd = r->csv && r->l->lab && r->l->pdvals ? vt.pd : NULL;
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
            start_run(r, c);
        }
        int rc = ZF_OK;
        if (zf_layout_is_bad(l, ci)) {
            value_texts(r, 0);
            uint64_t j = emit_run(r, NULL, ZF_NAT, g, run, 1, &rc);
            r->last.elem = g + (j ? j - 1 : 0);
            if (rc)
                return rc;
            g += run;
            continue;
        }
        zf_chunk *ch;
        rc = zf_array_get_chunk(l->a, ci, &ch);
        if (rc == ZF_ESTALE) /* this open keeps its version: EIO; the next one sizes afresh */
            zf_layout_drop_index(l);
        if (rc)
            return rc == ZF_ENOMEM || rc == ZF_ESTALE ? rc : ZF_ECORRUPT;
        value_texts(r, ch->coarser);
        if (r->sequential)
            prefetch_ahead(l, ci);
        uint64_t j = emit_run(r, ch->values ? ch->values + lo : NULL, ch->constant, g, run, 0, &rc);
        r->last.elem = g + (j ? j - 1 : 0);
        zf_array_put_chunk(l->a, ch);
        if (rc)
            return rc;
        g += run;
    }
    return ZF_OK;
}

/* the label columns of view v's lines: .txt none; .csv the coordinates'
 * (labels.h) or the indices; ZF_ENOMEM */
static int reader_columns(reader *r, zf_view v)
{
    zf_layout *l = r->l;
    r->csv = v == ZF_VIEW_CSV;
    r->prefix = r->own_prefix;
    value_texts(r, 0);
    if (v != ZF_VIEW_CSV)
        return ZF_OK;
    r->cols = l->lab ? l->lab->cols : l->idxcols;
    r->ncols = l->lab ? l->lab->ncols : l->ndim;
    if (l->lab && !(r->prefix = malloc(l->lab_line_max)))
        return ZF_ENOMEM;
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
    const uint64_t *offs = zf_layout_offsets(l, v);
    uint64_t total = offs[l->nblocks];
    if (off >= total || len == 0)
        return ZF_OK;
    if (len > total - off)
        len = (size_t)(total - off);
    reader r = {.l = l, .want = off, .end = off + len, .out = buf,
                .line_max = zf_layout_line_max(l, v)};
    if ((rc = reader_columns(&r, v)))
        return rc;
    size_t hlen = 0;
    const char *header = v == ZF_VIEW_CSV ? zf_layout_header(l, &hlen) : NULL;
    if (off < hlen) { /* (the .csv's header: its labels are loaded, ensure_text) */
        size_t n = hlen - (size_t)off < len ? hlen - (size_t)off : len;
        memcpy(buf, header + off, n);
        r.outn = n;
    }
    if (r.outn < len) {
        uint64_t b = find_block(offs, l->nblocks, off), g = b * l->block;
        r.pos = offs[b];
        if (cursor && cursor->pos >= r.pos && cursor->pos <= off && cursor->elem < l->nelems &&
            cursor->elem >= g) { /* continue where the last read of this reader ended */
            r.pos = cursor->pos;
            g = cursor->elem;
            r.sequential = 1;
        }
        r.last = (zf_cursor){r.pos, g};
        rc = emit_from(&r, g);
        if (cursor && rc == ZF_OK)
            *cursor = r.last;
    }
    free(r.tmp);
    if (r.prefix != r.own_prefix)
        free(r.prefix);
    *got = r.outn;
    return rc;
}
