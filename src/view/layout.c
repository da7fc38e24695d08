/* layout.c - an array's text views: set-up, the size pass, the offset index
 * and its persisted copy (reading is in layout_read.c). */
#include "view/layout.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"
#include "view/idxcache.h"
#include "view/info.h"
#include "layout_impl.h"
#include "base/digits.h"
#include "base/sbuf.h"

enum { UNSIZED, SIZING, SIZED };

#define ZF_PASS_MAX_THREADS 64


/* geometry of one chunk: first element and extent inside the array */
typedef struct cgeom {
    uint64_t origin[ZF_MAX_DIMS], extent[ZF_MAX_DIMS];
} cgeom;

static void chunk_geom(const zf_layout *l, uint64_t ci, cgeom *g)
{
    for (unsigned d = l->ndim; d-- > 0;) {
        uint64_t gd = zf_array_grid(l->a, d);
        uint64_t k = ci % gd;
        ci /= gd;
        g->origin[d] = k * l->m->read_chunks[d];
        uint64_t rest = l->m->shape[d] - g->origin[d];
        g->extent[d] = rest < l->m->read_chunks[d] ? rest : l->m->read_chunks[d];
    }
}

static int mark_bad(zf_layout *l, uint64_t ci)
{
    pthread_mutex_lock(&l->mu);
    if (!l->bad)
        __atomic_store_n(&l->bad, calloc((size_t)(l->nchunks / 8 + 1), 1), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&l->mu);
    if (!l->bad)
        return ZF_ENOMEM;
    __atomic_fetch_or(&l->bad[ci / 8], (uint8_t)(1u << (ci % 8)), __ATOMIC_RELAXED);
    return ZF_OK;
}

/* ------------------------------------------------------------------ setup */

static int build_header(zf_layout *l, const char *name)
{
    zf_sbuf sb = {0};
    char dim[32];
    for (unsigned d = 0; d < l->ndim; d++) {
        const char *dn = l->m->dim_names[d];
        if (!dn) {
            memcpy(dim, "dim_", 4);
            dim[4 + zf_u64_text((uint64_t)d, dim + 4)] = '\0';
            dn = dim;
        }
        zf_sbuf_csv_field(&sb, dn);
        zf_sbuf_add(&sb, ",", 1);
    }
    zf_sbuf_csv_field(&sb, name);
    zf_sbuf_add(&sb, "\n", 1);
    if (sb.failed)
        return ZF_ENOMEM;
    l->header = sb.data;
    l->header_len = sb.len;
    return ZF_OK;
}

zf_layout *zf_layout_new(zf_array *a, const char *name, const zf_layout_opts *opts)
{
    zf_layout *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->a = a;
    l->m = zf_array_meta(a);
    l->ndim = l->m->ndim;
    l->nelems = l->m->nelems;
    l->block = ZF_LAYOUT_BLOCK; /* grows so that no index has more than 2^20 blocks */
    while (l->nelems / l->block > (UINT64_C(1) << 20))
        l->block *= 2;
    l->nblocks = (l->nelems + l->block - 1) / l->block;
    l->nchunks = zf_array_nchunks(a);
    char qnat[2 * ZF_NAT_MAX + 3];
    zf_csv_quote(opts->nat, qnat, sizeof qnat);
    if (zf_text_init(&l->dur, l->m->values, opts->format, l->m->unit, l->m->scale, opts->nat) ||
        zf_text_init(&l->csvdur, l->m->values, opts->format, l->m->unit, l->m->scale, qnat) ||
        build_header(l, name) || !(l->name = strdup(name)) ||
        (opts->index_dir && !(l->index_dir = strdup(opts->index_dir)))) {
        free(l->header);
        free(l->name);
        free(l);
        return NULL;
    }
    l->text = &l->dur.text;
    l->csvtext = &l->csvdur.text;
    l->csv_nat_differs = strcmp(qnat, opts->nat) != 0;
    l->format = opts->format;
    uint64_t s = 1, cs = 1;
    for (unsigned d = l->ndim; d-- > 0;) {
        l->stride[d] = s;
        s *= l->m->shape[d];
        l->cstride[d] = cs;
        cs *= l->m->read_chunks[d];
    }
    l->line_max = (size_t)l->ndim * 21 + ZF_VALUE_MAX + sizeof qnat + 2;
    l->per_shard = 1;
    for (unsigned d = 0; d < l->ndim; d++) /* inner chunks divide the shard (the spec says so) */
        l->per_shard *= l->m->chunks[d] / l->m->read_chunks[d];
    l->by_shard = zf_array_store(a)->remote && l->per_shard > 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    l->threads = opts->threads ? opts->threads : (unsigned)(ncpu > 0 ? ncpu : 1);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    return l;
}

void zf_layout_free(zf_layout *l)
{
    if (!l)
        return;
    free(l->off[0]);
    free(l->off[1]);
    free(l->bad);
    free(l->header);
    free(l->name);
    free(l->index_dir);
    free(l->info);
    free(l->srcs);
    zf_labels_free(l->lab);
    free(l->bnn);
    free(l->bneg);
    free(l->bmode);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}

int zf_layout_set_labels(zf_layout *l, const zf_labsrc *src, unsigned n)
{
    if (l->ndim == 0 || n == 0)
        return ZF_OK;
    zf_labsrc *copy = malloc(n * sizeof *copy);
    if (!copy)
        return ZF_ENOMEM;
    memcpy(copy, src, n * sizeof *copy);
    free(l->srcs);
    l->srcs = copy;
    l->nsrcs = n;
    return ZF_OK;
}

const zf_text *zf_layout_text(const zf_layout *l)
{
    return l->text;
}

/* --------------------------------------------------------------- the pass */

typedef struct pass {
    zf_layout *l;
    int by_shard;        /* a remote sharded array: work goes by shards (shard_pass) */
    uint64_t next;       /* next chunk (or shard) to measure (atomic) */
    int rc;              /* first fatal error (atomic) */
    unsigned reserve;    /* chunks of cache room the workers' own buffers count for */
} pass;

/* add one block's text lengths to the index (blocks are shared by threads) */
static void add_block(zf_layout *l, uint64_t b, uint64_t tsum, uint64_t csum)
{
    __atomic_fetch_add(&l->off[0][b + 1], tsum, __ATOMIC_RELAXED);
    __atomic_fetch_add(&l->off[1][b + 1], csum, __ATOMIC_RELAXED);
}

/* the index columns' text length of a line, but the last index's digits */
static uint64_t fixed_digits(const zf_layout *l, const uint64_t *c)
{
    uint64_t fixed = 0;
    for (unsigned d = 0; d + 1 < l->ndim; d++)
        fixed += zf_ndig64(c[d]);
    return fixed;
}

/* block sums of a run of n elements that all hold v: O(blocks), not O(n) */
static void measure_constant(zf_layout *l, int64_t v, uint64_t g, uint64_t n, const uint64_t *c)
{
    uint64_t fixed = fixed_digits(l, c), last = l->ndim ? c[l->ndim - 1] : 0;
    uint64_t t = zf_text_len(l->text, v) + 1;
    uint64_t cl = (v == ZF_NAT && l->csv_nat_differs ? (uint64_t)l->csvtext->nat_len + 1 : t) + l->ndim + fixed;
    while (n) {
        uint64_t b = g / l->block, k = (b + 1) * l->block - g;
        if (k > n)
            k = n;
        add_block(l, b, k * t, k * cl + (l->ndim ? zf_digit_sum(last, last + k) : 0));
        g += k;
        last += k;
        n -= k;
    }
}

static uint64_t count_nat(const int64_t *vals, uint64_t n)
{
    uint64_t k = 0;
    for (uint64_t j = 0; j < n; j++)
        k += vals[j] == ZF_NAT;
    return k;
}

/* block sums of one run of consecutive elements along the last axis: the
 * text lengths of each block's part at once; a .csv line adds its index
 * columns, and the quotes of a NaT text that needs them */
static void measure_run(zf_layout *l, const int64_t *vals, uint64_t g, uint64_t n,
                        const uint64_t *c)
{
    uint64_t fixed = fixed_digits(l, c), last = l->ndim ? c[l->ndim - 1] : 0;
    uint64_t nat_extra = (uint64_t)l->csvtext->nat_len - l->text->nat_len;
    while (n) {
        uint64_t b = g / l->block, k = (b + 1) * l->block - g;
        if (k > n)
            k = n;
        uint64_t t = zf_text_len_sum(l->text, vals, (size_t)k) + k;
        uint64_t cl = t + k * (l->ndim + fixed) + (l->ndim ? zf_digit_sum(last, last + k) : 0);
        if (l->csv_nat_differs)
            cl += count_nat(vals, k) * nat_extra;
        add_block(l, b, t, cl);
        vals += k;
        g += k;
        last += k;
        n -= k;
    }
}

/* the label fields' length (and their commas) of the k lines from c on
 * along the last axis */
static uint64_t labels_len(const zf_layout *l, const uint64_t *c, uint64_t k)
{
    unsigned last = l->ndim - 1;
    uint64_t sum = k * l->lab->ncols;
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
            sum += s ? col->start[t + k] - col->start[t] : k * (col->start[t + 1] - col->start[t]);
        else
            for (uint64_t j = 0; j < k; j++, t += s)
                sum += col->start[t + 1] - col->start[t];
    }
    return sum;
}

/* labelled .csv: the block sums of a run (values vals, or v everywhere) but
 * what the value column's format adds (per block: its non-NaT values,
 * negative durations and their parts, for the format chosen after the pass) */
static void measure_labelled(zf_layout *l, const int64_t *vals, int64_t v, uint64_t g, uint64_t n,
                             const uint64_t *c0)
{
    uint64_t c[ZF_MAX_DIMS];
    memcpy(c, c0, l->ndim * sizeof *c);
    while (n) {
        uint64_t b = g / l->block, k = (b + 1) * l->block - g;
        if (k > n)
            k = n;
        uint64_t t;
        zf_pdsum ps = {0, 0, 0, 0};
        if (vals) {
            t = zf_text_len_sum(l->text, vals, (size_t)k) + k;
            if (l->pdvals)
                zf_pdcsv_measure(&l->pd, vals, (size_t)k, &ps);
            else /* another format: each value's own text */
                ps.base = zf_text_len_sum(l->csvtext, vals, (size_t)k);
            if (l->pdvals)
                ps.base += (k - ps.nn) * l->csvtext->nat_len;
        } else {
            t = k * (zf_text_len(l->text, v) + 1);
            if (l->pdvals) {
                zf_pdcsv_measure(&l->pd, &v, 1, &ps);
                ps = (zf_pdsum){ps.base * k + (v == ZF_NAT ? k * l->csvtext->nat_len : 0),
                                ps.nn * k, ps.neg * k, ps.parts};
            } else {
                ps.base = k * zf_text_len(l->csvtext, v);
            }
        }
        uint64_t base = ps.base, nn = ps.nn, neg = ps.neg;
        unsigned parts = ps.parts;
        add_block(l, b, t, base + k + labels_len(l, c, k));
        __atomic_fetch_add(&l->bnn[b], nn, __ATOMIC_RELAXED);
        __atomic_fetch_add(&l->bneg[b], neg, __ATOMIC_RELAXED);
        __atomic_fetch_or(&l->bmode[b], (uint8_t)parts, __ATOMIC_RELAXED);
        if (vals)
            vals += k;
        g += k;
        c[l->ndim - 1] += k;
        n -= k;
    }
}

/* measure every run of the box cg (a chunk, or the chunks of an absent
 * run): its values (a chunk's, in C order), or (vals NULL) v everywhere */
static void measure_box(zf_layout *l, const cgeom *cg, const int64_t *vals, int64_t v)
{
    unsigned n = l->ndim, last = n - 1;
    uint64_t r[ZF_MAX_DIMS] = {0}, c[ZF_MAX_DIMS];
    for (unsigned d = 0; d < n; d++)
        if (cg->extent[d] == 0)
            return;
    for (;;) {
        uint64_t g = 0, lo = 0;
        for (unsigned d = 0; d < n; d++) {
            c[d] = cg->origin[d] + (d < last ? r[d] : 0);
            g += c[d] * l->stride[d];
            lo += (d < last ? r[d] : 0) * l->cstride[d];
        }
        if (l->lab)
            measure_labelled(l, vals ? vals + lo : NULL, v, g, cg->extent[last], c);
        else if (vals)
            measure_run(l, vals + lo, g, cg->extent[last], c);
        else
            measure_constant(l, v, g, cg->extent[last], c);
        unsigned d = last;
        while (d-- > 0) {
            if (++r[d] < cg->extent[d])
                break;
            r[d] = 0;
        }
        if (d == (unsigned)-1)
            return;
    }
}

/* measure every run of chunk ci: its values, or (vals NULL) v everywhere */
static void measure_chunk_values(zf_layout *l, uint64_t ci, const int64_t *vals, int64_t v)
{
    static const uint64_t origin[ZF_MAX_DIMS];
    if (l->ndim == 0) {
        if (vals)
            measure_run(l, vals, 0, 1, origin);
        else
            measure_constant(l, v, 0, 1, origin);
        return;
    }
    cgeom cg;
    chunk_geom(l, ci, &cg);
    measure_box(l, &cg, vals, v);
}

/* the element box of the chunks lo[d] <= c[d] < hi[d] of the read grid */
static void box_geom(const zf_layout *l, const uint64_t *lo, const uint64_t *hi, cgeom *g)
{
    for (unsigned d = 0; d < l->ndim; d++) {
        uint64_t rc = l->m->read_chunks[d], end = hi[d] * rc; /* <= grid * rc: no overflow */
        g->origin[d] = lo[d] * rc;
        g->extent[d] = (end < l->m->shape[d] ? end : l->m->shape[d]) - g->origin[d];
    }
}

/* measure the chunks c0 <= ci < c1 (C order) as the fill value everywhere:
 * the range splits into at most 2 * ndim boxes, each measured by rows, so a
 * run of absent chunks costs O(rows and blocks), not O(chunks) */
static void measure_absent(zf_layout *l, uint64_t c0, uint64_t c1)
{
    int64_t fill = l->m->fill;
    if (l->ndim == 0) {
        static const uint64_t origin[ZF_MAX_DIMS];
        measure_constant(l, fill, 0, 1, origin);
        return;
    }
    unsigned n = l->ndim;
    uint64_t span[ZF_MAX_DIMS]; /* chunks in one step of dimension d */
    for (unsigned d = n; d-- > 0;)
        span[d] = d + 1 < n ? span[d + 1] * zf_array_grid(l->a, d + 1) : 1;
    while (c0 < c1) {
        uint64_t lo[ZF_MAX_DIMS], hi[ZF_MAX_DIMS], rem = c0;
        for (unsigned d = 0; d < n; d++) {
            lo[d] = rem / span[d];
            rem %= span[d];
        }
        unsigned d = 0; /* the outermost dimension whose whole steps start at c0 and fit */
        while (d + 1 < n && (c0 % span[d] != 0 || c1 - c0 < span[d]))
            d++;
        uint64_t steps = (c1 - c0) / span[d], room = zf_array_grid(l->a, d) - lo[d];
        steps = steps < room ? steps : room;
        for (unsigned e = 0; e < n; e++)
            hi[e] = e < d ? lo[e] + 1 : e == d ? lo[e] + steps : zf_array_grid(l->a, e);
        cgeom cg;
        box_geom(l, lo, hi, &cg);
        measure_box(l, &cg, NULL, fill);
        c0 += steps * span[d];
    }
}

/* a pass worker's buffers, reused from chunk to chunk (no fresh memory, so
 * no page faults, per chunk) */
typedef struct pass_scratch {
    int64_t *values;  /* one decoded chunk */
    zf_store_buf raw; /* its stored bytes */
} pass_scratch;

/* is rc a failure of the store that may pass (a remote store's EIO: HTTP
 * 5xx/429 after its retries, timeouts, refused connections)?  Unlike a
 * damaged chunk (ZF_ECORRUPT: its bytes arrived and are bad) it says nothing
 * about the chunk, so the size pass fails and the next stat runs it again */
static int transient(const zf_layout *l, int rc)
{
    return rc == ZF_EIO && zf_array_store(l->a)->remote;
}

/* measure chunk ci: through the cache while it has room beyond what the
 * workers' own buffers take (later reads find the chunk there; the pass stays
 * within cache_size) and always for the last chunk (`tail` wants it), else
 * decoded into the worker's scratch (no eviction) */
static int measure_chunk(zf_layout *l, uint64_t ci, unsigned reserve, pass_scratch *s)
{
    zf_chunk *ch = NULL, own;
    int rc;
    if (zf_array_cache_room(l->a, 1 + reserve) || ci + 1 == zf_array_nchunks(l->a)) {
        rc = zf_array_get_chunk(l->a, ci, &ch);
    } else if (!s->values && !(s->values = zf_pool_alloc((size_t)zf_array_chunk_elems(l->a) *
                                                         sizeof *s->values))) {
        rc = ZF_ENOMEM;
    } else {
        rc = zf_array_decode(l->a, ci, s->values, &s->raw, &own);
    }
    if (rc == ZF_ENOMEM || transient(l, rc))
        return rc; /* the pass fails: nothing about the size is kept */
    if (rc != ZF_OK) {
        if ((rc = mark_bad(l, ci)))
            return rc;
        measure_chunk_values(l, ci, NULL, ZF_NAT); /* as layout.h promises */
        return ZF_OK;
    }
    const zf_chunk *c = ch ? ch : &own;
    measure_chunk_values(l, ci, c->values, c->constant);
    zf_array_put_chunk(l->a, ch);
    return ZF_OK;
}

/* claim the next piece of work: one chunk, or a run of chunks absent at the
 * snapshot; [*c0, *c1), *absent says which; 0 when there is none left */
static int claim(pass *p, uint64_t *c0, uint64_t *c1, int *absent)
{
    uint64_t ci = __atomic_load_n(&p->next, __ATOMIC_RELAXED), end;
    do {
        if (ci >= p->l->nchunks || __atomic_load_n(&p->rc, __ATOMIC_RELAXED))
            return 0;
        uint64_t run = zf_array_absent_run(p->l->a, ci);
        *absent = run > 0;
        end = ci + (run ? run : 1);
    } while (!__atomic_compare_exchange_n(&p->next, &ci, end, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    *c0 = ci;
    *c1 = end;
    return 1;
}

/* A remote sharded array's pass goes shard by shard (l->by_shard): each
 * worker measures every read chunk of the shard it claimed (one whole-shard
 * GET, the inner chunks decoded from it: chunk/shardidx.h), so the workers
 * keep as many shards in flight as there are workers, rather than waiting
 * for the few shards their neighbouring chunks share. */

/* number of shards along dimension d */
static uint64_t shard_grid(const zf_layout *l, unsigned d)
{
    return (l->m->shape[d] + l->m->chunks[d] - 1) / l->m->chunks[d];
}

/* measure every read chunk of shard k (C order over the shard grid) */
static int measure_shard(pass *p, uint64_t k, pass_scratch *s)
{
    zf_layout *l = p->l;
    uint64_t lo[ZF_MAX_DIMS], hi[ZF_MAX_DIMS], c[ZF_MAX_DIMS];
    for (unsigned d = l->ndim; d-- > 0;) { /* the box of read chunks the shard holds */
        uint64_t ratio = l->m->chunks[d] / l->m->read_chunks[d], g = shard_grid(l, d);
        lo[d] = k % g * ratio;
        hi[d] = lo[d] + ratio < zf_array_grid(l->a, d) ? lo[d] + ratio : zf_array_grid(l->a, d);
        c[d] = lo[d];
        k /= g;
    }
    for (;;) {
        uint64_t ci = 0;
        for (unsigned d = 0; d < l->ndim; d++)
            ci = ci * zf_array_grid(l->a, d) + c[d];
        int rc = ZF_OK;
        if (zf_array_absent_run(l->a, ci))
            measure_absent(l, ci, ci + 1);
        else
            rc = measure_chunk(l, ci, p->reserve, s);
        if (rc)
            return rc;
        unsigned d = l->ndim;
        while (d-- > 0 && ++c[d] == hi[d])
            c[d] = lo[d];
        if (d == (unsigned)-1)
            return ZF_OK;
    }
}

/* claim the next shard (l->by_shard); 0 when there is none left */
static int claim_shard(pass *p, uint64_t *k)
{
    uint64_t total = 1;
    for (unsigned d = 0; d < p->l->ndim; d++)
        total *= shard_grid(p->l, d); /* <= the read grid's chunks: no overflow */
    *k = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
    return *k < total && !__atomic_load_n(&p->rc, __ATOMIC_RELAXED);
}

static void *pass_worker(void *arg)
{
    pass *p = arg;
    pass_scratch s = {NULL, {NULL, 0}};
    uint64_t c0, c1;
    int absent;
    while (p->by_shard && claim_shard(p, &c0)) {
        int rc = measure_shard(p, c0, &s);
        if (rc)
            __atomic_store_n(&p->rc, rc, __ATOMIC_RELAXED);
    }
    while (!p->by_shard && claim(p, &c0, &c1, &absent)) {
        int rc = ZF_OK;
        if (absent)
            measure_absent(p->l, c0, c1);
        else
            rc = measure_chunk(p->l, c0, p->reserve, &s);
        if (rc)
            __atomic_store_n(&p->rc, rc, __ATOMIC_RELAXED);
    }
    free(s.values);
    free(s.raw.p);
    return NULL;
}

/* workers of the size pass: one per CPU (opts->threads); for a remote store
 * as many as it keeps requests in flight (zf_store.parallel), at most
 * ZF_PASS_MAX_THREADS, and beyond the CPU count only as many as the cache
 * has room for: each worker holds at most one decoded chunk and one stored
 * (raw) chunk, counted against cache_size through the pass's reserve, so
 * the requests in flight hold at most that many raw buffers */
static unsigned pass_threads(const zf_layout *l)
{
    unsigned nt = l->threads < ZF_PASS_MAX_THREADS ? l->threads : ZF_PASS_MAX_THREADS;
    const zf_store *st = zf_array_store(l->a);
    unsigned want = st->remote ? st->parallel : 0;
    want = want < ZF_PASS_MAX_THREADS ? want : ZF_PASS_MAX_THREADS;
    while (want > nt && !zf_array_cache_room(l->a, 2 * want))
        want--;
    return want > nt ? want : nt;
}

/* labelled .csv: each slice's format from its blocks' parts, and what it
 * adds to their values' text (the blocks of one slice: block divides slice) */
static void finish_modes(zf_layout *l)
{
    uint64_t per = l->slice > l->block ? l->slice / l->block : 1;
    int dur = l->pd.values == ZF_VALUES_DURATION;
    for (uint64_t b0 = 0; b0 < l->nblocks; b0 += per) {
        uint64_t b1 = b0 + per < l->nblocks ? b0 + per : l->nblocks;
        unsigned parts = 0;
        for (uint64_t b = b0; b < b1; b++)
            parts |= l->bmode[b];
        zf_pdmode mode = zf_pdcsv_mode(&l->pd, parts);
        for (uint64_t b = b0; b < b1; b++) {
            l->bmode[b] = (uint8_t)mode;
            l->off[1][b + 1] += l->bnn[b] * zf_pdcsv_extra(mode) +
                                (dur && mode != ZF_PD_DAYS ? l->bneg[b] : 0);
        }
    }
}

static int run_pass(zf_layout *l)
{
    for (int v = 0; v < 2; v++)
        if (!(l->off[v] = calloc((size_t)l->nblocks + 1, sizeof(uint64_t))))
            return ZF_ENOMEM;
    if (l->lab && (!(l->bnn = calloc((size_t)l->nblocks, sizeof *l->bnn)) ||
                   !(l->bneg = calloc((size_t)l->nblocks, sizeof *l->bneg)) ||
                   !(l->bmode = calloc((size_t)l->nblocks, 1))))
        return ZF_ENOMEM;
    pthread_t tid[ZF_PASS_MAX_THREADS];
    unsigned nt = pass_threads(l), started = 0;
    if (nt > l->nchunks)
        nt = l->nchunks ? (unsigned)l->nchunks : 1;
    pass p = {.l = l, .reserve = 2 * nt, /* each: a decoded chunk, its stored bytes */
              .by_shard = l->by_shard};
    for (unsigned i = 1; i < nt; i++)
        if (pthread_create(&tid[started], NULL, pass_worker, &p) == 0)
            started++;
    pass_worker(&p);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    if (p.rc)
        return p.rc;
    if (l->lab)
        finish_modes(l);
    l->off[1][0] = l->header_len;
    for (uint64_t b = 0; b < l->nblocks; b++) {
        l->off[0][b + 1] += l->off[0][b];
        l->off[1][b + 1] += l->off[1][b];
    }
    return ZF_OK;
}

/* the chunks holding the last block's elements (C order) into ci[]; their
 * number, or 0 if more than cap chunks or runs would have to be visited */
static unsigned last_block_chunks(const zf_layout *l, uint64_t *ci, unsigned cap)
{
    unsigned n = 0, last = l->ndim ? l->ndim - 1 : 0;
    uint64_t runs = 0;
    for (uint64_t g = (l->nblocks - 1) * l->block; g < l->nelems; runs++) {
        uint64_t c[ZF_MAX_DIMS], k = 0, rem = g, run = 1;
        if (runs == 64 * ZF_LAYOUT_BLOCK)
            return 0;
        for (unsigned d = l->ndim; d-- > 0;) {
            c[d] = rem % l->m->shape[d];
            rem /= l->m->shape[d];
        }
        for (unsigned d = 0; d < l->ndim; d++)
            k = k * zf_array_grid(l->a, d) + c[d] / l->m->read_chunks[d];
        if (l->ndim) {
            uint64_t cend = (c[last] / l->m->read_chunks[last] + 1) * l->m->read_chunks[last];
            run = (cend < l->m->shape[last] ? cend : l->m->shape[last]) - c[last];
        }
        unsigned i = 0;
        while (i < n && ci[i] != k)
            i++;
        if (i == n && n == cap)
            return 0;
        if (i == n)
            ci[n++] = k;
        g += run;
    }
    return n;
}

/* is the last block of a persisted index as long as the text of the chunks
 * holding it?  Those chunks are decoded (through the cache, where a reader
 * of the end finds them) and measured; an index whose last block they do
 * not match is stale (ZF_ESTALE) and would cut or pad the text.  ZF_OK also
 * when not checked: the block spans more than a few chunks. */
static int check_last_block(zf_layout *l)
{
    enum { CHUNKS = 8 };
    uint64_t ci[CHUNKS], nb = l->nblocks, *kept[2] = {l->off[0], l->off[1]};
    uint8_t *modes = l->bmode; /* a labelled .csv's loaded formats */
    unsigned n = nb ? last_block_chunks(l, ci, CHUNKS) : 0;
    if (n == 0)
        return ZF_OK;
    int rc = ZF_OK;
    pass_scratch s = {NULL, {NULL, 0}};
    for (int v = 0; v < 2; v++) /* measure into fresh sums: the loaded ones stay intact */
        if (!(l->off[v] = calloc((size_t)nb + 1, sizeof(uint64_t))))
            rc = ZF_ENOMEM;
    if (l->lab && (!(l->bnn = calloc((size_t)nb, sizeof *l->bnn)) ||
                   !(l->bneg = calloc((size_t)nb, sizeof *l->bneg)) ||
                   !(l->bmode = calloc((size_t)nb, 1))))
        rc = ZF_ENOMEM;
    for (unsigned i = 0; rc == ZF_OK && i < n; i++)
        if ((rc = measure_chunk(l, ci[i], 0, &s)) == ZF_OK && l->bad)
            rc = ZF_ESTALE; /* saved without damaged chunks: one now is a change */
    if (rc == ZF_OK && l->lab) /* the last block's values in their saved format */
        l->off[1][nb] += l->bnn[nb - 1] * zf_pdcsv_extra((zf_pdmode)modes[nb - 1]) +
                         (l->pd.values == ZF_VALUES_DURATION && modes[nb - 1] != ZF_PD_DAYS
                              ? l->bneg[nb - 1] : 0);
    for (int v = 0; v < 2; v++) {
        if (rc == ZF_OK && l->off[v][nb] != kept[v][nb] - kept[v][nb - 1])
            rc = ZF_ESTALE;
        free(l->off[v]);
        l->off[v] = kept[v];
    }
    if (l->lab) {
        free(l->bnn);
        free(l->bneg);
        free(l->bmode);
        l->bnn = l->bneg = NULL;
        l->bmode = modes;
    }
    free(s.values);
    free(s.raw.p);
    return rc;
}

/* snapshot the array's chunks; fp gets everything the offset index depends on */
static int layout_fingerprint(const zf_layout *l, zf_fp *fp)
{
    zf_fp_init(fp);
    zf_fp_add(fp, ZF_VERSION, sizeof ZF_VERSION);
    int rc = zf_array_snapshot(l->a, fp);
    zf_fp_add(fp, &l->format, sizeof l->format);
    zf_fp_add(fp, l->text->nat, l->text->nat_len);
    zf_fp_add(fp, l->header, l->header_len);
    zf_fp_add(fp, &l->block, sizeof l->block);
    if (l->lab)
        zf_labels_fp(l->lab, fp);
    return rc;
}

/* the persisted index saved under fp into l->off, with (unlisted store) the
 * chunk versions it was computed from as the array's snapshot: ZF_OK, or
 * ZF_ENOTFOUND (none usable), ZF_ENOMEM */
static int load_persisted(zf_layout *l, const zf_fp *fp)
{
    for (int v = 0; v < 2; v++)
        if (!(l->off[v] = malloc(((size_t)l->nblocks + 1) * sizeof(uint64_t))))
            return ZF_ENOMEM;
    int unlisted = zf_array_unlisted(l->a);
    size_t modes = l->lab ? (size_t)l->nblocks : 0; /* the extra bytes: modes, then versions */
    void *extra = NULL;
    size_t extra_len = 0;
    uint64_t n = zf_array_nchunks(l->a); /* at most 24 bytes (zf_present) per stored chunk */
    size_t most = modes + (!unlisted ? 0 : n < (SIZE_MAX - modes) / 24 ? (size_t)n * 24 : SIZE_MAX - modes);
    if (zf_idxcache_load(l->index_dir, fp, l->nblocks + 1, l->off[0], l->off[1], most,
                         unlisted || modes ? &extra : NULL, &extra_len) != 0)
        return ZF_ENOTFOUND;
    int rc = extra_len < modes ? ZF_ECORRUPT : ZF_OK;
    if (rc == ZF_OK && modes && !(l->bmode = malloc(modes)))
        rc = ZF_ENOMEM;
    for (size_t b = 0; rc == ZF_OK && b < modes; b++)
        if ((l->bmode[b] = ((uint8_t *)extra)[b]) > ZF_PD_NS)
            rc = ZF_ECORRUPT;
    if (rc == ZF_OK && unlisted)
        rc = zf_array_snap_load(l->a, (uint8_t *)extra + modes, extra_len - modes);
    free(extra);
    if (rc == ZF_ECORRUPT)
        return ZF_ENOTFOUND;
    if (rc || zf_array_store(l->a)->remote) /* remote: no chunk is fetched to check it */
        return rc;
    if ((rc = check_last_block(l)) != ZF_ESTALE)
        return rc;
    zf_log("%s/%s: the persisted offset index does not match the last chunks (stale); "
           "recomputing it", zf_store_path(zf_array_store(l->a)), zf_array_path(l->a));
    return ZF_ENOTFOUND;
}

/* save the index under fp, with the value formats of a labelled .csv's
 * blocks and the chunk versions of an unlisted store */
static void save_persisted(zf_layout *l, const zf_fp *fp)
{
    size_t len = 0, modes = l->lab ? (size_t)l->nblocks : 0;
    const void *snap = zf_array_unlisted(l->a) ? zf_array_snap_data(l->a, &len) : NULL;
    uint8_t *extra = modes + len ? malloc(modes + len) : NULL;
    if (modes + len && !extra)
        return;
    if (modes)
        memcpy(extra, l->bmode, modes);
    if (len)
        memcpy(extra + modes, snap, len);
    zf_idxcache_save(l->index_dir, fp, l->nblocks + 1, l->off[0], l->off[1], extra, modes + len);
    free(extra);
}

/* labelled .csv: the rows pandas formats at once, and offset blocks that
 * each lie in one of those slices (a divisor of it), or hold whole ones */
static void slice_blocks(zf_layout *l)
{
    l->slice = ZF_PD_SLICE_CELLS / (l->lab->ndata + 1);
    uint64_t b = l->slice < ZF_LAYOUT_BLOCK ? l->slice : ZF_LAYOUT_BLOCK;
    while (l->slice % b)
        b--;
    while (l->nelems / b > (UINT64_C(1) << 20))
        b = b < l->slice ? l->slice : b * 2;
    l->block = b;
    l->nblocks = (l->nelems + b - 1) / b;
}

/* the label columns (once), the header that names them and the longest line */
static int setup_labels(zf_layout *l)
{
    if (!l->srcs || l->lab || l->labels_off)
        return ZF_OK;
    l->pdvals = l->format == ZF_FORMAT_PANDAS; /* else each value's own text in that format */
    if (l->pdvals && zf_pdcsv_init(&l->pd, l->m->values, l->m->unit, l->m->scale)) {
        zf_log("%s/%s: the values' unit cannot be written as pandas does; the .csv has index "
               "columns", zf_store_path(zf_array_store(l->a)), zf_array_path(l->a));
        l->labels_off = 1;
        return ZF_OK;
    }
    int rc = zf_labels_load(l->a, l->srcs, l->nsrcs, l->csvtext->nat, &l->lab);
    if (rc)
        return rc;
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
    free(l->header);
    l->header = sb.data;
    l->header_len = sb.len;
    l->line_max = most + ZF_VALUE_MAX + l->csvtext->nat_len + 2;
    slice_blocks(l);
    return ZF_OK;
}

/* the offset index: from the persisted copy if it matches, else by a pass */
static int load_or_build(zf_layout *l)
{
    zf_fp fp;
    int rc = setup_labels(l);
    if (rc == ZF_OK)
        rc = layout_fingerprint(l, &fp);
    if (rc)
        return rc;
    if (l->index_dir && (rc = load_persisted(l, &fp)) != ZF_ENOTFOUND)
        return rc;
    for (int v = 0; v < 2; v++) {
        free(l->off[v]);
        l->off[v] = NULL;
    }
    free(l->bnn);
    free(l->bneg);
    free(l->bmode);
    l->bnn = l->bneg = NULL;
    l->bmode = NULL;
    rc = run_pass(l);
    int keep = rc == ZF_OK && !l->bad;
    if (zf_array_unlisted(l->a)) { /* every chunk was read once: their versions are the snapshot */
        int adopted = zf_array_end_learning(l->a, keep);
        keep = keep && adopted == ZF_OK; /* an index is saved only with its chunks' versions */
        rc = rc ? rc : adopted == ZF_ENOMEM ? adopted : ZF_OK;
    }
    if (keep && l->index_dir)
        save_persisted(l, &fp);
    return rc;
}

/* run the size pass once (or load its persisted result); 0 or an error */
int zf_layout_ensure_sized(zf_layout *l)
{
    pthread_mutex_lock(&l->mu);
    while (l->state == SIZING)
        pthread_cond_wait(&l->cv, &l->mu);
    int rc = ZF_OK;
    if (l->state == UNSIZED) {
        l->state = SIZING;
        pthread_mutex_unlock(&l->mu);
        rc = load_or_build(l);
        pthread_mutex_lock(&l->mu);
        if (rc) {
            for (int v = 0; v < 2; v++) {
                free(l->off[v]);
                l->off[v] = NULL;
            }
        }
        l->state = rc ? UNSIZED : SIZED;
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int zf_layout_damaged(const zf_layout *l)
{
    return __atomic_load_n(&l->bad, __ATOMIC_ACQUIRE) != NULL;
}

int zf_layout_sized(zf_layout *l)
{
    return __atomic_load_n(&l->state, __ATOMIC_ACQUIRE) == SIZED;
}

/* the .info line of the .csv's label columns: the coordinates found (the
 * index for a dimension without one) */
static void csv_labels_line(const zf_layout *l, zf_sbuf *sb)
{
    zf_sbuf_add(sb, "csv_labels: ", 12);
    if (!l->srcs || (l->format == ZF_FORMAT_PANDAS &&
                     zf_pdcsv_init(&(zf_pdcsv){0}, l->m->values, l->m->unit, l->m->scale))) {
        zf_sbuf_add(sb, "index\n", 6);
        return;
    }
    for (unsigned d = 0; d < l->ndim; d++) {
        unsigned i = 0;
        while (i < l->nsrcs && l->srcs[i].dim != (int)d)
            i++;
        if (i < l->nsrcs)
            zf_sbuf_printf(sb, "%s%s", d ? ", " : "", l->srcs[i].name);
        else
            zf_sbuf_printf(sb, "%s(index of dimension %u)", d ? ", " : "", d);
    }
    for (unsigned i = 0; i < l->nsrcs; i++)
        if (l->srcs[i].dim < 0)
            zf_sbuf_printf(sb, ", %s", l->srcs[i].name);
    zf_sbuf_add(sb, "\n", 1);
}

/* build the .info text once */
int zf_layout_ensure_info(zf_layout *l)
{
    pthread_mutex_lock(&l->mu);
    if (!l->info) {
        zf_sbuf sb = {0};
        zf_info_text(l->a, l->name, l->text, &sb);
        csv_labels_line(l, &sb);
        if (sb.failed)
            free(sb.data);
        else {
            l->info_len = sb.len;
            l->info = sb.data ? sb.data : calloc(1, 1);
        }
    }
    int rc = l->info ? ZF_OK : ZF_ENOMEM;
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int zf_layout_size(zf_layout *l, zf_view v, uint64_t *size)
{
    if (v == ZF_VIEW_INFO) {
        int rc = zf_layout_ensure_info(l);
        if (rc == ZF_OK)
            *size = l->info_len;
        return rc;
    }
    int rc = zf_layout_ensure_sized(l);
    if (rc == ZF_OK)
        *size = l->off[v][l->nblocks];
    return rc;
}
