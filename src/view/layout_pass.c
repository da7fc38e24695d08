/* layout_pass.c - the size pass: every chunk's text lengths summed into the
 * offset index's blocks, by a pool of workers (layout.h tells the design). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"
#include "base/digits.h"
#include "base/err.h"
#include "layout_impl.h"

#define ZF_PASS_MAX_THREADS ZF_WORKERS_MAX

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

/* --------------------------------------------------------------- the pass */

typedef struct pass {
    zf_layout *l;
    int by_shard;        /* a remote sharded array: work goes by shards (shard_pass) */
    uint64_t next;       /* next chunk (or shard) to measure (atomic) */
    int rc;              /* first fatal error (atomic) */
    unsigned reserve;    /* chunks of cache room the workers' own buffers count for */
} pass;

/* *p += x, saturating (shared by threads) */
static void sat_add_to(uint64_t *p, uint64_t x)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &cur, zf_sat_add(cur, x), 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
}

/* add one block's text lengths to the index (blocks are shared by threads) */
static void add_block(zf_layout *l, uint64_t b, uint64_t tsum, uint64_t csum)
{
    sat_add_to(&l->off[0][b + 1], tsum);
    sat_add_to(&l->off[1][b + 1], csum);
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
static void measure_run(zf_layout *l, const zf_vtext *vt, const int64_t *vals, uint64_t g,
                        uint64_t n, const uint64_t *c)
{
    uint64_t fixed = fixed_digits(l, c), last = l->ndim ? c[l->ndim - 1] : 0;
    uint64_t nat_extra = (uint64_t)l->csvtext->nat_len - l->text->nat_len;
    while (n) {
        uint64_t b = g / l->block, k = (b + 1) * l->block - g;
        if (k > n)
            k = n;
        uint64_t t = zf_text_len_sum(vt->txt, vals, (size_t)k) + k;
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

/* labelled .csv: the block sums of a run (values vals, or v everywhere) of
 * its value lines, but what their format adds (per block: the non-NaT
 * values, negative durations and their parts, for the format chosen after
 * the pass); the label fields are added when the .csv is first wanted */
static void measure_labelled(zf_layout *l, const zf_vtext *vt, const int64_t *vals, int64_t v,
                             uint64_t g, uint64_t n)
{
    while (n) {
        uint64_t b = g / l->block, k = (b + 1) * l->block - g;
        if (k > n)
            k = n;
        uint64_t t;
        zf_pdsum ps = {0, 0, 0, 0};
        if (vals) {
            t = zf_text_len_sum(vt->txt, vals, (size_t)k) + k;
            if (l->pdvals)
                zf_pdcsv_measure(vt->pd, vals, (size_t)k, &ps);
            else /* another format: each value's own text */
                ps.base = zf_text_len_sum(vt->csv, vals, (size_t)k);
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
        add_block(l, b, t, zf_sat_add(ps.base, k));
        __atomic_fetch_add(&l->bnn[b], ps.nn, __ATOMIC_RELAXED);
        __atomic_fetch_add(&l->bneg[b], ps.neg, __ATOMIC_RELAXED);
        __atomic_fetch_or(&l->bmode[b], (uint8_t)ps.parts, __ATOMIC_RELAXED);
        if (vals)
            vals += k;
        g += k;
        n -= k;
    }
}

/* measure every run of the box cg (a chunk, or the chunks of an absent
 * run): its values (a chunk's, in C order), or (vals NULL) v everywhere */
static void measure_box(zf_layout *l, const cgeom *cg, const int64_t *vals, int64_t v,
                        const zf_vtext *vt)
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
        if (l->labelled)
            measure_labelled(l, vt, vals ? vals + lo : NULL, v, g, cg->extent[last]);
        else if (vals)
            measure_run(l, vt, vals + lo, g, cg->extent[last], c);
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

/* measure every run of chunk ci: its values (ticks `coarser` steps of 1000
 * coarser than the array's), or (vals NULL) v everywhere */
static void measure_chunk_values(zf_layout *l, uint64_t ci, const int64_t *vals, int64_t v,
                                 unsigned coarser)
{
    static const uint64_t origin[ZF_MAX_DIMS];
    zf_vtext vt = zf_layout_vtext(l, coarser);
    if (l->ndim == 0) {
        if (vals)
            measure_run(l, &vt, vals, 0, 1, origin);
        else
            measure_constant(l, v, 0, 1, origin);
        return;
    }
    cgeom cg;
    chunk_geom(l, ci, &cg);
    measure_box(l, &cg, vals, v, &vt);
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
    int64_t fill = zf_array_ticks(l->a).fill;
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
        zf_vtext vt = zf_layout_vtext(l, 0);
        box_geom(l, lo, hi, &cg);
        measure_box(l, &cg, NULL, fill, &vt);
        c0 += steps * span[d];
    }
}

/* a pass worker's buffers, reused from chunk to chunk (no fresh memory, so
 * no page faults, per chunk) */

/* is rc a failure of the store that may pass (EIO: HTTP 5xx/429 after its
 * retries, timeouts, refused connections, a local EACCES or EIO), or a
 * chunk changed since the snapshot (ZF_ESTALE)?  Unlike a damaged chunk
 * (ZF_ECORRUPT: its bytes arrived and are bad) it says nothing about the
 * chunk, so the size pass fails and the next stat runs it again (store.h:
 * nothing of a failure is kept) */
static int transient(int rc)
{
    return rc == ZF_EIO || rc == ZF_ESTALE;
}

/* measure chunk ci: through the cache while it has room beyond what the
 * workers' own buffers take (later reads find the chunk there; the pass stays
 * within cache_size) and always for the last chunk (`tail` wants it), else
 * decoded into the worker's scratch (no eviction) */
int zf_layout_measure_chunk(zf_layout *l, uint64_t ci, unsigned reserve, zf_pass_scratch *s)
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
    if (rc == ZF_ENOMEM || transient(rc) || (rc && zf_deadline_spent()))
        return rc; /* the pass fails (also when cancelled): nothing about the size is kept */
    if (rc != ZF_OK) {
        if ((rc = mark_bad(l, ci)))
            return rc;
        measure_chunk_values(l, ci, NULL, ZF_NAT, 0); /* as layout.h promises */
        return ZF_OK;
    }
    const zf_chunk *c = ch ? ch : &own;
    measure_chunk_values(l, ci, c->values, c->constant, c->coarser);
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
static int measure_shard(pass *p, uint64_t k, zf_pass_scratch *s)
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
            rc = zf_layout_measure_chunk(l, ci, p->reserve, s);
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

/* has the pass's request been abandoned (cancelled: the process stops, or
 * its caller went away)?  Then the pass fails (p->rc) rather than go on
 * reading a local store, whose reads never wait on the request */
static int abandoned(pass *p)
{
    if (!zf_deadline_spent())
        return 0;
    int none = ZF_OK;
    __atomic_compare_exchange_n(&p->rc, &none, ZF_ETIMEDOUT, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    return 1;
}

static void *pass_worker(void *arg)
{
    pass *p = arg;
    zf_pass_scratch s = {NULL, {NULL, 0}};
    uint64_t c0, c1;
    int absent;
    while (p->by_shard && !abandoned(p) && claim_shard(p, &c0)) {
        int rc = measure_shard(p, c0, &s);
        if (rc)
            __atomic_store_n(&p->rc, rc, __ATOMIC_RELAXED);
    }
    while (!p->by_shard && !abandoned(p) && claim(p, &c0, &c1, &absent)) {
        int rc = ZF_OK;
        if (absent)
            measure_absent(p->l, c0, c1);
        else
            rc = zf_layout_measure_chunk(p->l, c0, p->reserve, &s);
        if (rc)
            __atomic_store_n(&p->rc, rc, __ATOMIC_RELAXED);
    }
    free(s.values);
    free(s.raw.p);
    return NULL;
}

/* workers of the size pass: one per CPU (opts->threads); for a remote store
 * twice as many as it keeps requests in flight (zf_store.parallel: while a
 * worker decodes what it fetched, another's request keeps the connection
 * busy; with as many, each connection idled for a decode between two
 * requests), at most ZF_PASS_MAX_THREADS, and beyond the CPU count only as
 * many as the cache has room for: each worker holds at most one decoded
 * chunk and one stored (raw) chunk, counted against cache_size through the
 * pass's reserve, so the requests in flight hold at most that many raw
 * buffers */
static unsigned pass_threads(const zf_layout *l)
{
    unsigned nt = l->threads < ZF_PASS_MAX_THREADS ? l->threads : ZF_PASS_MAX_THREADS;
    const zf_store *st = zf_array_store(l->a);
    unsigned want = st->remote ? 2 * st->parallel : 0;
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
            l->off[1][b + 1] = zf_sat_add(l->off[1][b + 1], l->bnn[b] * zf_pdcsv_extra(mode) +
                                          (dur && mode != ZF_PD_DAYS ? l->bneg[b] : 0));
        }
    }
}

int zf_layout_run_pass(zf_layout *l)
{
    for (int v = 0; v < 2; v++)
        if (!(l->off[v] = calloc((size_t)l->nblocks + 1, sizeof(uint64_t))))
            return ZF_ENOMEM;
    if (l->labelled && (!(l->bnn = calloc((size_t)l->nblocks, sizeof *l->bnn)) ||
                   !(l->bneg = calloc((size_t)l->nblocks, sizeof *l->bneg)) ||
                   !(l->bmode = calloc((size_t)l->nblocks, 1))))
        return ZF_ENOMEM;
    unsigned nt = pass_threads(l);
    if (nt > l->nchunks)
        nt = l->nchunks ? (unsigned)l->nchunks : 1;
    pass p = {.l = l, .reserve = 2 * nt, /* each: a decoded chunk, its stored bytes */
              .by_shard = l->by_shard};
    zf_deadline_workers(nt, pass_worker, &p);
    if (p.rc)
        return p.rc;
    if (l->labelled)
        finish_modes(l);
    l->off[1][0] = l->labelled ? 0 : l->header_len; /* (labelled: the value lines alone) */
    for (uint64_t b = 0; b < l->nblocks; b++) { /* saturating: a view too long is left out */
        l->off[0][b + 1] = zf_sat_add(l->off[0][b + 1], l->off[0][b]);
        l->off[1][b + 1] = zf_sat_add(l->off[1][b + 1], l->off[1][b]);
    }
    return ZF_OK;
}

/* the chunks holding the last block's elements (C order) into ci[]; their
 * number, or 0 if more than cap chunks or runs would have to be visited */
