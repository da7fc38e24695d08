/* layout.c - an array's text views: set-up, the offset index and its
 * persisted copy, the .csv labels' set-up (the size pass is in
 * layout_pass.c, reading in layout_read.c). */
#include "view/layout.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/deadline.h"
#include "base/err.h"
#include "base/log.h"
#include "chunk/convert.h"
#include "view/idxcache.h"
#include "view/info.h"
#include "layout_impl.h"
#include "base/digits.h"
#include "base/sbuf.h"

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

/* the formatters of the array's values as decoded now (.txt, and .csv with
 * NaT CSV-quoted) */
static int setup_text(zf_layout *l)
{
    char qnat[2 * ZF_NAT_MAX + 3];
    zf_csv_quote(l->nat, qnat, sizeof qnat);
    zf_ticks t = zf_array_ticks(l->a);
    if (zf_text_init(&l->dur, t.values, l->format, t.unit, t.scale, t.cal, l->nat) ||
        zf_text_init(&l->csvdur, t.values, l->format, t.unit, t.scale, t.cal, qnat))
        return ZF_EINVAL;
    l->values = t.values;
    l->text = &l->dur.text;
    l->csvtext = &l->csvdur.text;
    return ZF_OK;
}

/* the texts of chunks decoded at the coarser units us, ms and s (zf_coarse;
 * durations only, so never cftime objects and set up once) */
static int coarse_texts(zf_layout *l, const char *qnat)
{
    if (!(l->coarse = calloc(1, sizeof *l->coarse)))
        return ZF_ENOMEM;
    for (unsigned k = 1; k <= 3; k++) {
        zf_unit u = (zf_unit)(ZF_UNIT_ns - k);
        if (zf_text_init(&l->coarse->txt[k], l->m->values, l->format, u, 1, NULL, l->nat) ||
            zf_text_init(&l->coarse->csv[k], l->m->values, l->format, u, 1, NULL, qnat) ||
            zf_pdcsv_init(&l->coarse->pd[k], l->m->values, u, 1))
            return ZF_EINVAL;
    }
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
    l->format = opts->format;
    size_t nat_len = strlen(opts->nat);
    if (nat_len <= ZF_NAT_MAX)
        memcpy(l->nat, opts->nat, nat_len + 1);
    if (nat_len > ZF_NAT_MAX || setup_text(l) || build_header(l, name) ||
        !(l->name = strdup(name)) ||
        (opts->index_dir && !(l->index_dir = strdup(opts->index_dir)))) {
        free(l->header);
        free(l->name);
        free(l);
        return NULL;
    }
    l->index_max = opts->index_max;
    l->csv_nat_differs = strcmp(qnat, opts->nat) != 0;
    uint64_t s = 1, cs = 1;
    for (unsigned d = 0; d < l->ndim; d++)
        l->idxcols[d].dim = (int)d;
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
    zf_deadline_cond_init(&l->cv); /* readers wait for the pass until their deadline */
    if (zf_convert_may_coarsen(&l->m->cf) && coarse_texts(l, qnat)) {
        zf_layout_free(l);
        return NULL;
    }
    return l;
}

zf_array *zf_layout_array(const zf_layout *l)
{
    return l->a;
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
    free(l->coarse);
    free(l->srcs);
    zf_labels_free(l->lab);
    free(l->coff);
    free(l->lab_header);
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
    zf_pass_scratch s = {NULL, {NULL, 0}};
    for (int v = 0; v < 2; v++) /* measure into fresh sums: the loaded ones stay intact */
        if (!(l->off[v] = calloc((size_t)nb + 1, sizeof(uint64_t))))
            rc = ZF_ENOMEM;
    if (l->labelled && (!(l->bnn = calloc((size_t)nb, sizeof *l->bnn)) ||
                   !(l->bneg = calloc((size_t)nb, sizeof *l->bneg)) ||
                   !(l->bmode = calloc((size_t)nb, 1))))
        rc = ZF_ENOMEM;
    for (unsigned i = 0; rc == ZF_OK && i < n; i++)
        if ((rc = zf_layout_measure_chunk(l, ci[i], 0, &s)) == ZF_OK && l->bad)
            rc = ZF_ESTALE; /* saved without damaged chunks: one now is a change */
    if (rc == ZF_OK && l->labelled) /* the last block's values in their saved format */
        l->off[1][nb] = zf_sat_add(l->off[1][nb],
                                   l->bnn[nb - 1] * zf_pdcsv_extra((zf_pdmode)modes[nb - 1]) +
                                       (l->pd.values == ZF_VALUES_DURATION &&
                                                modes[nb - 1] != ZF_PD_DAYS ? l->bneg[nb - 1] : 0));
    for (int v = 0; v < 2; v++) {
        if (rc == ZF_OK && l->off[v][nb] != kept[v][nb] - kept[v][nb - 1])
            rc = ZF_ESTALE;
        free(l->off[v]);
        l->off[v] = kept[v];
    }
    if (l->labelled) {
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
    if (zf_array_unlisted(l->a)) { /* keyed by its metadata's ETags, which may be digests of
                                    * their content (S3, GCS): the same in another store */
        const char *store = zf_store_path(zf_array_store(l->a));
        zf_fp_add(fp, store, strlen(store) + 1);
    }
    zf_fp_add(fp, &l->format, sizeof l->format);
    zf_fp_add(fp, l->text->nat, l->text->nat_len);
    zf_fp_add(fp, l->header, l->header_len);
    zf_fp_add(fp, &l->block, sizeof l->block);
    /* a labelled .csv's value lines: pandas' slices (its labels are not in
     * the index: they are measured when the .csv is first wanted) */
    uint32_t lab[3] = {(uint32_t)l->labelled, l->ndata, (uint32_t)l->pdvals};
    zf_fp_add(fp, lab, sizeof lab);
    return rc;
}

static int to_cftime(zf_layout *l);

/* the index file under fp does not fit the metadata (why): logged and removed */
static void discard_persisted(const zf_layout *l, const zf_fp *fp, const char *why)
{
    zf_log("%s/%s: the persisted offset index does not fit the array (%s); discarded, the array "
           "is sized afresh", zf_store_path(zf_array_store(l->a)), zf_array_path(l->a), why);
    zf_idxcache_drop(l->index_dir, fp);
}

/* the persisted index saved under fp into l->off, checked against the
 * metadata, with (unlisted store) the chunk versions it was computed from as
 * the array's snapshot (cftime: an index of the values as cftime objects,
 * which they then become): ZF_OK, or ZF_ENOTFOUND (none usable), ZF_ENOMEM */
static int load_persisted(zf_layout *l, const zf_fp *fp, int cftime)
{
    for (int v = 0; v < 2; v++)
        if (!(l->off[v] = malloc(((size_t)l->nblocks + 1) * sizeof(uint64_t))))
            return ZF_ENOMEM;
    int unlisted = zf_array_unlisted(l->a);
    /* the extra bytes: modes, then (unlisted) the chunks' time and versions */
    size_t modes = l->labelled ? (size_t)l->nblocks : 0, time = unlisted ? sizeof(int64_t) : 0;
    void *extra = NULL;
    size_t extra_len = 0;
    uint64_t n = zf_array_nchunks(l->a); /* at most 24 bytes (zf_present) per stored chunk */
    size_t head = modes + time, most = head + (!unlisted ? 0 : n < (SIZE_MAX - head) / 24
                                                                 ? (size_t)n * 24 : SIZE_MAX - head);
    char why[300] = "";
    int rc = zf_idxcache_load(l->index_dir, fp, l->nblocks + 1, l->off[0], l->off[1], most,
                              unlisted || modes ? &extra : NULL, &extra_len, why, sizeof why);
    if (rc == ZF_OK && extra_len < head) {
        snprintf(why, sizeof why, "%zu extra bytes, fewer than its %zu blocks%s", extra_len, modes,
                 time ? " and the chunks' time" : "");
        rc = ZF_ECORRUPT;
    }
    if (rc == ZF_OK && modes && (l->bmode = malloc(modes)))
        memcpy(l->bmode, extra, modes);
    else if (rc == ZF_OK && modes)
        rc = ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = zf_layout_index_check(l, why, sizeof why);
    int64_t t = 0; /* the chunks' newest time (ns since the epoch) */
    if (rc == ZF_OK && unlisted)
        memcpy(&t, (uint8_t *)extra + modes, sizeof t);
    if (t < 0) {
        snprintf(why, sizeof why, "a chunks' time before 1970");
        rc = ZF_ECORRUPT;
    }
    if (rc == ZF_OK && unlisted &&
        (rc = zf_array_snap_load(l->a, (uint8_t *)extra + head, extra_len - head)) == ZF_ECORRUPT)
        snprintf(why, sizeof why, "chunk versions that are not the array's");
    if (rc == ZF_OK && unlisted)
        zf_array_set_chunks_time(l->a, t);
    free(extra);
    if (rc == ZF_OK && cftime)
        rc = to_cftime(l);
    if (rc == ZF_ECORRUPT)
        discard_persisted(l, fp, why);
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
 * blocks and, for an unlisted store, the chunks' newest time and versions */
static void save_persisted(zf_layout *l, const zf_fp *fp)
{
    size_t len = 0, modes = l->labelled ? (size_t)l->nblocks : 0;
    int unlisted = zf_array_unlisted(l->a);
    const void *snap = unlisted ? zf_array_snap_data(l->a, &len) : NULL;
    int64_t t = zf_array_chunks_time(l->a);
    size_t time = unlisted ? sizeof t : 0, all = modes + time + len;
    uint8_t *extra = all ? malloc(all) : NULL;
    if (all && !extra)
        return;
    if (modes)
        memcpy(extra, l->bmode, modes);
    if (time)
        memcpy(extra + modes, &t, time);
    if (len)
        memcpy(extra + modes + time, snap, len);
    zf_idxcache_save(l->index_dir, l->index_max, fp, l->nblocks + 1, l->off[0], l->off[1], extra,
                     all);
    free(extra);
}

void zf_layout_drop_index(zf_layout *l)
{
    if (!l->index_dir || !zf_array_unlisted(l->a) || !zf_layout_sized(l) ||
        __atomic_exchange_n(&l->index_dropped, 1, __ATOMIC_ACQ_REL))
        return;
    zf_idxcache_drop(l->index_dir, &l->fp);
    zf_log_msg(ZF_LOG_INFO, "%s/%s: its persisted offset index was computed from other chunks; "
               "discarded, the next open of its files sizes it afresh",
               zf_store_path(zf_array_store(l->a)), zf_array_path(l->a));
}

/* nothing of a failed load or pass is kept (the damaged chunks' marks stay:
 * readers may look at them without the lock) */
static void drop_sizes(zf_layout *l)
{
    for (int v = 0; v < 2; v++) {
        free(l->off[v]);
        l->off[v] = NULL;
    }
    free(l->bnn);
    free(l->bneg);
    free(l->bmode);
    l->bnn = l->bneg = NULL;
    l->bmode = NULL;
}

/* forget what a pass or a persisted index left (offsets, per-block counts,
 * damaged chunks): none is read while the array is being sized */
static void forget_sizes(zf_layout *l)
{
    drop_sizes(l);
    free(l->bad);
    l->bad = NULL;
}

/* follow the array's values as decoded now (a standard-calendar time array
 * becomes cftime objects when it holds a value outside the ns range, as
 * xarray decodes it; its labels may find that first): the formatters, and
 * the value column as each cftime object's own text */
static int follow_values(zf_layout *l)
{
    zf_ticks t = zf_array_ticks(l->a);
    if (t.values == l->values)
        return ZF_OK;
    if (t.values == ZF_VALUES_CFTIME)
        l->pdvals = 0;
    return setup_text(l);
}

/* the values are cftime objects from now on */
static int to_cftime(zf_layout *l)
{
    return zf_array_to_cftime(l->a) ? follow_values(l) : ZF_EINVAL;
}

/* the fingerprint of the index as the values are decoded (datetime64 or
 * cftime objects): base, with that added */
static zf_fp decoded_fp(const zf_fp *base, zf_values values)
{
    zf_fp fp = *base;
    int32_t v = values;
    zf_fp_add(&fp, &v, sizeof v);
    return fp;
}

/* the offset index: from the persisted copy if it matches, else by a pass
 * (twice when the first meets a time stamp that makes the values cftime
 * objects: the values, and so the text, change) */
static int load_or_build(zf_layout *l)
{
    zf_fp base;
    zf_layout_plan_labels(l);
    int rc = follow_values(l); /* another reader may have decoded it meanwhile */
    if (rc == ZF_OK)
        rc = layout_fingerprint(l, &base);
    if (rc)
        return rc;
    l->fp = decoded_fp(&base, zf_array_ticks(l->a).values);
    if (l->index_dir && (rc = load_persisted(l, &l->fp, 0)) != ZF_ENOTFOUND)
        return rc;
    if (l->index_dir && zf_array_may_cftime(l->a)) { /* an index of its cftime objects */
        forget_sizes(l);
        l->fp = decoded_fp(&base, ZF_VALUES_CFTIME);
        if ((rc = load_persisted(l, &l->fp, 1)) != ZF_ENOTFOUND)
            return rc;
    }
    forget_sizes(l);
    rc = zf_layout_run_pass(l);
    /* a pass that met a value only cftime objects hold, or during which
     * another reader switched the array to them (its labels, another
     * array's), measured chunks of two decodings: again, as cftime objects
     * (the switch is one way: at most once more) */
    for (int round = 0; rc == ZF_OK && round < 2; round++) {
        if (zf_array_cftime_wanted(l->a) && !zf_array_to_cftime(l->a))
            rc = ZF_EINVAL;
        if (rc || zf_array_ticks(l->a).values == l->values)
            break;
        forget_sizes(l);
        if ((rc = follow_values(l)) == ZF_OK)
            rc = zf_layout_run_pass(l);
    }
    l->fp = decoded_fp(&base, zf_array_ticks(l->a).values);
    int keep = rc == ZF_OK && !l->bad;
    if (zf_array_unlisted(l->a)) { /* every chunk was read once: their versions are the snapshot */
        int adopted = zf_array_end_learning(l->a, keep);
        keep = keep && adopted == ZF_OK; /* an index is saved only with its chunks' versions */
        rc = rc ? rc : adopted == ZF_ENOMEM ? adopted : ZF_OK;
    }
    for (int v = 0; v < 2 && keep; v++) /* a view left out: nothing to keep */
        keep = l->off[v][l->nblocks] < ZF_LAYOUT_TEXT_MAX;
    if (keep && l->index_dir)
        save_persisted(l, &l->fp);
    return rc;
}

int zf_layout_once(zf_layout *l, int *state, int (*work)(zf_layout *), void (*undo)(zf_layout *))
{
    pthread_mutex_lock(&l->mu);
    int late = 0;
    while (*state == ZF_ONCE_BUSY && !late) /* another reader's: until our deadline */
        late = zf_deadline_wait(&l->cv, &l->mu) == ETIMEDOUT && *state == ZF_ONCE_BUSY;
    int rc = late ? ZF_ETIMEDOUT : ZF_OK;
    if (*state == ZF_ONCE_IDLE && zf_deadline_spent()) {
        rc = ZF_ETIMEDOUT; /* a cancelled request starts nothing */
    } else if (*state == ZF_ONCE_IDLE) { /* written atomically: read without the lock too */
        __atomic_store_n(state, ZF_ONCE_BUSY, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&l->mu);
        rc = work(l);
        pthread_mutex_lock(&l->mu);
        if (rc && undo)
            undo(l);
        __atomic_store_n(state, rc ? ZF_ONCE_IDLE : ZF_ONCE_DONE, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* run the size pass once (or load its persisted result); 0 or an error */
int zf_layout_ensure_sized(zf_layout *l)
{
    return zf_layout_once(l, &l->state, load_or_build, drop_sizes);
}

int zf_layout_damaged(const zf_layout *l)
{
    return __atomic_load_n(&l->bad, __ATOMIC_ACQUIRE) != NULL;
}

int zf_layout_sized(zf_layout *l)
{
    return __atomic_load_n(&l->state, __ATOMIC_ACQUIRE) == ZF_ONCE_DONE;
}

/* the .info line of the .csv's label columns: the coordinates found (the
 * index for a dimension without one) */
static void csv_labels_line(const zf_layout *l, zf_sbuf *sb)
{
    zf_sbuf_add(sb, "csv_labels: ", 12);
    zf_ticks t = zf_array_ticks(l->a);
    if (!l->srcs || (l->format == ZF_FORMAT_PANDAS && t.values != ZF_VALUES_CFTIME &&
                     zf_pdcsv_init(&(zf_pdcsv){0}, t.values, t.unit, t.scale))) {
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

/* the .info lines of the text files' sizes: their line counts (from the
 * shape), and their bytes once the array is sized (lock held) */
static void sizes_lines(const zf_layout *l, zf_sbuf *sb)
{
    unsigned long long n = (unsigned long long)l->m->nelems;
    zf_sbuf_printf(sb, "txt_lines: %llu\ncsv_lines: %llu (a header, then one per element)\n", n,
                   n + 1);
    if (l->state != ZF_ONCE_DONE) {
        zf_sbuf_printf(sb, "bytes: not known yet (counted when a text file of the array is "
                           "first read or stat-ed; see again after that)\n");
        return;
    }
    zf_sbuf_printf(sb, "txt_bytes: %llu\n", (unsigned long long)l->off[ZF_VIEW_TXT][l->nblocks]);
    if (l->labelled && l->csv_state != ZF_ONCE_DONE)
        zf_sbuf_printf(sb, "csv_bytes: not known yet (its labels are read when it is first "
                           "read or stat-ed)\n");
    else
        zf_sbuf_printf(sb, "csv_bytes: %llu\n",
                       (unsigned long long)zf_layout_offsets(l, ZF_VIEW_CSV)[l->nblocks]);
}

enum { INFO_ONCE, INFO_UNKNOWN, INFO_NOW }; /* build_info: when to build the text again */

/* build the .info text when there is none, or again: INFO_UNKNOWN when
 * the last one said something was not known yet, INFO_NOW whatever it said
 * (an open); lock held.  A failure is not kept: the next call tries again
 * (the last text, if any, stays) */
static int build_info(zf_layout *l, int again)
{
    if (l->info && (again == INFO_ONCE || (again == INFO_UNKNOWN && l->info_final)))
        return ZF_OK;
    zf_sbuf sb = {0};
    int final = 0;
    int rc = zf_info_text(l->a, l->name, l->format, l->nat, &sb, &final);
    csv_labels_line(l, &sb);
    sizes_lines(l, &sb);
    char *text = rc || sb.failed ? NULL : sb.data ? sb.data : calloc(1, 1);
    if (!text) {
        free(sb.data);
        return l->info ? ZF_OK : rc ? rc : ZF_ENOMEM; /* keep the last text */
    }
    free(l->info);
    l->info = text;
    l->info_len = sb.len;
    l->info_final = final;
    return ZF_OK;
}

int zf_layout_info_read(zf_layout *l, uint64_t off, char *buf, size_t len, size_t *got)
{
    pthread_mutex_lock(&l->mu);
    int rc = build_info(l, INFO_ONCE);
    *got = 0;
    if (rc == ZF_OK && off < l->info_len) {
        *got = len < l->info_len - off ? len : (size_t)(l->info_len - off);
        memcpy(buf, l->info + off, *got);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int zf_layout_info_now(zf_layout *l, char **text, size_t *len)
{
    pthread_mutex_lock(&l->mu);
    int rc = build_info(l, INFO_NOW);
    if (rc == ZF_OK && !(*text = malloc(l->info_len + 1)))
        rc = ZF_ENOMEM;
    if (rc == ZF_OK) {
        memcpy(*text, l->info, l->info_len);
        (*text)[l->info_len] = '\0';
        *len = l->info_len;
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int zf_layout_size(zf_layout *l, zf_view v, uint64_t *size)
{
    if (v == ZF_VIEW_INFO) { /* what is known now: the text again if it was not final */
        pthread_mutex_lock(&l->mu);
        int rc = build_info(l, INFO_UNKNOWN);
        *size = l->info_len;
        pthread_mutex_unlock(&l->mu);
        return rc;
    }
    int rc = zf_layout_ensure_text(l, v);
    if (rc == ZF_OK)
        *size = zf_layout_offsets(l, v)[l->nblocks];
    return rc;
}

int zf_layout_ensure_text(zf_layout *l, zf_view v)
{
    int rc = zf_layout_ensure_sized(l);
    if (rc == ZF_OK && v == ZF_VIEW_CSV)
        rc = zf_layout_ensure_labels(l);
    if (rc || zf_layout_offsets(l, v)[l->nblocks] < ZF_LAYOUT_TEXT_MAX)
        return rc;
    if (!__atomic_exchange_n(&l->too_long[v], 1, __ATOMIC_RELAXED))
        zf_log("%s/%s: %s.%s would be 2^62 bytes or more; left out",
               zf_store_path(zf_array_store(l->a)), zf_array_path(l->a), l->name,
               v == ZF_VIEW_TXT ? "txt" : "csv");
    return ZF_ENOTFOUND;
}
