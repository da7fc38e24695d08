/* layout_impl.h - internals shared by layout.c (set-up, the size pass) and
 * layout_read.c (reading). */
#ifndef ZF_LAYOUT_IMPL_H
#define ZF_LAYOUT_IMPL_H

#include <pthread.h>

#include "text/pdcsv.h"
#include "text/text.h"
#include "view/layout.h"

/* the state of a result made once (zf_layout_once): the offset index
 * (zf_layout.state), a labelled .csv's labels (csv_state) */
enum { ZF_ONCE_IDLE, ZF_ONCE_BUSY, ZF_ONCE_DONE };

/* the texts of the chunks a CF float duration array decodes at a coarser
 * unit than its own (zf_chunk.coarser k: ticks of 1000^k ns), [k] for
 * k = 1..3 (us, ms, s) */
typedef struct zf_coarse {
    zf_text_room txt[4], csv[4];
    zf_pdcsv pd[4];
} zf_coarse;

struct zf_layout {
    zf_array *a;
    const zf_meta *m;
    zf_text_room dur, csvdur;     /* storage of the element type's formatters */
    const zf_text *text, *csvtext;/* all the view uses of them (.txt, .csv) */
    zf_coarse *coarse;            /* chunks decoded at a coarser unit, if the array can
                                     have them (chunk/convert.h); else NULL */
    char nat[ZF_NAT_MAX + 1];     /* the text of NaT (-o nat=) */
    zf_values values;             /* the values they were set up for (chunk/array.h: zf_ticks) */
    int csv_nat_differs;
    char *header;
    size_t header_len;
    size_t line_max;              /* longest possible csv line */
    unsigned ndim;
    uint64_t nelems, nblocks, nchunks;
    uint64_t block;               /* elements per offset-index block */
    uint64_t stride[ZF_MAX_DIMS]; /* global C-order strides */
    uint64_t cstride[ZF_MAX_DIMS];/* strides inside a chunk */
    unsigned threads;
    int by_shard;                 /* remote and sharded: the pass and read-ahead go by shards */
    uint64_t per_shard;           /* read chunks in one shard (1 without sharding) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;                    /* ZF_ONCE_*: the offset index (written under mu;
                                     read atomically) */
    int too_long[2];              /* per text view: left out (ZF_LAYOUT_TEXT_MAX), logged */
    uint64_t *off[2];             /* [view][block] byte offset, nblocks + 1 entries */
    uint8_t *bad;                 /* bitmap of chunks that failed to decode */
    char *name;
    char *index_dir;              /* NULL: indexes are not persisted */
    uint64_t index_max;           /* the bytes index_dir may hold (idxcache.h) */
    zf_fp fp;                     /* what the offset index is keyed on (once sized) */
    int index_dropped;            /* its persisted copy was discarded (atomic) */
    zf_format format;
    char *info;                   /* the .info text, built on first use (the latest, under mu) */
    int info_final;               /* info tells nothing "not known yet" (info.h) */
    /* labelled .csv (labels.h).  The size pass measures its value column
     * only (off[1]: those lines' lengths without their label fields), so
     * that sizing the .txt never waits for coordinates; the label tables
     * are loaded, and the .csv's offsets (coff) made from both, when the
     * .csv is first wanted (layout_labels.c) */
    zf_labsrc *srcs;              /* where the label columns come from (owned array) */
    unsigned nsrcs;
    int labelled;                 /* the .csv has label columns (set with the first size) */
    unsigned ndata;               /* its non-dimension columns, as pandas slices by them */
    int csv_state;                /* ZF_ONCE_* (written under mu; read atomically) */
    zf_labels *lab;               /* the tables (csv_state DONE) */
    uint64_t *coff;               /* the .csv's offsets, header and labels included (csv_state DONE) */
    char *lab_header;             /* its header (csv_state DONE) */
    size_t lab_header_len, lab_line_max;
    zf_labcol idxcols[ZF_MAX_DIMS]; /* the index columns of the unlabelled .csv */
    int labels_off;               /* the values cannot be written as pandas does: index columns */
    int pdvals;                   /* the value column as pandas writes it (-o format=pandas) */
    zf_pdcsv pd;                  /* ... in the format pandas chooses for its slice */
    uint64_t slice;               /* rows pandas formats at once (one format each) */
    uint64_t *bnn, *bneg;         /* per block: non-NaT values, negative durations */
    uint8_t *bmode;               /* per block: the ZF_PD_* parts of its values, then
                                     (after the pass) the zf_pdmode of its slice */
    size_t info_len;
};

/* How the values of a chunk are written: their .txt and .csv texts, and
 * pandas' column format (set up with the labels). */
typedef struct zf_vtext {
    const zf_text *txt, *csv;
    const zf_pdcsv *pd;
} zf_vtext;

/* The texts of the values of a chunk whose ticks are `coarser` steps of
 * 1000 coarser than the array's (zf_chunk.coarser). */
static inline zf_vtext zf_layout_vtext(const zf_layout *l, unsigned coarser)
{
    if (!coarser || coarser > 3 || !l->coarse)
        return (zf_vtext){l->text, l->csvtext, &l->pd};
    return (zf_vtext){&l->coarse->txt[coarser].text, &l->coarse->csv[coarser].text,
                      &l->coarse->pd[coarser]};
}

/* Text lengths saturate: a sum that would pass 2^64 stays at UINT64_MAX, so
 * a view that long is seen as too long (ZF_LAYOUT_TEXT_MAX), never wrapped. */
static inline uint64_t zf_sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t zf_sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Whether chunk ci failed to decode (lock-free; marks are only ever added). */
static inline int zf_layout_is_bad(const zf_layout *l, uint64_t ci)
{
    const uint8_t *bad = __atomic_load_n(&l->bad, __ATOMIC_ACQUIRE);
    return bad && (__atomic_load_n(&bad[ci / 8], __ATOMIC_RELAXED) >> (ci % 8) & 1);
}

/* A pass worker's buffers, reused from chunk to chunk (no fresh memory, so
 * no page faults, per chunk); caller-owned, freed by the caller. */
typedef struct zf_pass_scratch {
    int64_t *values;  /* one decoded chunk */
    zf_store_buf raw; /* its stored bytes */
} zf_pass_scratch;

/* Measure chunk ci into the offset index's sums (layout_pass.c): through
 * the cache while it has room for reserve more chunks, else into s.  A chunk
 * that cannot be decoded is marked bad and measured as NaT; ZF_ENOMEM or a
 * remote store's passing failure fail it. */
int zf_layout_measure_chunk(zf_layout *l, uint64_t ci, unsigned reserve, zf_pass_scratch *s);

/* The offsets of view v's blocks: nblocks + 1 entries (the view sized:
 * zf_layout_ensure_text). */
static inline const uint64_t *zf_layout_offsets(const zf_layout *l, zf_view v)
{
    return v == ZF_VIEW_CSV && l->labelled ? l->coff : l->off[v];
}

/* The header of the .csv (sized), and the longest line of view v. */
static inline const char *zf_layout_header(const zf_layout *l, size_t *len)
{
    *len = l->labelled ? l->lab_header_len : l->header_len;
    return l->labelled ? l->lab_header : l->header;
}

static inline size_t zf_layout_line_max(const zf_layout *l, zf_view v)
{
    return v == ZF_VIEW_CSV && l->labelled ? l->lab_line_max : l->line_max;
}

/* Make a result of l once: run work(l) unless *state says it is made.
 * Callers that find it being made wait for it until their request's
 * deadline (ZF_ETIMEDOUT); a cancelled request starts nothing.  On failure
 * undo(l) (NULL: nothing) runs, nothing is kept and the next call starts
 * afresh.  ZF_OK or the error. */
int zf_layout_once(zf_layout *l, int *state, int (*work)(zf_layout *), void (*undo)(zf_layout *));

/* Labelled .csv: plan its columns when the array is first sized (how many
 * data columns pandas slices by, and so the offset blocks; no coordinate is
 * read; layout_labels.c). */
void zf_layout_plan_labels(zf_layout *l);

/* Labelled .csv, the array sized: load the label tables and make the
 * .csv's offsets, once (concurrent callers wait, until their deadline);
 * ZF_OK, ZF_EIO (a coordinate the store could not tell: tried again at the
 * next call), ZF_ETIMEDOUT, ZF_ENOMEM. */
int zf_layout_ensure_labels(zf_layout *l);

/* Labelled .csv: the length of the label fields (and their commas) of the k
 * lines from coordinates c on along the last axis, saturating; O(columns)
 * unless a column's field steps by more than 1 along that axis (O(k) then,
 * k lines within its table). */
uint64_t zf_layout_labels_len(const zf_layout *l, const uint64_t *c, uint64_t k);

/* Run the size pass over every chunk into l->off (and the labelled .csv's
 * per-block counts); ZF_OK or the first failure. */
int zf_layout_run_pass(zf_layout *l);

/* Run the size pass once (or load its persisted index); ZF_OK or an error. */
int zf_layout_ensure_sized(zf_layout *l);

/* zf_layout_ensure_sized, then ZF_ENOTFOUND (one log line) if text view v
 * is too long to be shown (ZF_LAYOUT_TEXT_MAX). */
int zf_layout_ensure_text(zf_layout *l, zf_view v);

/* Length of the labelled .csv line of the element at coordinates c holding
 * x, its value column in mode (layout_read.c). */
uint64_t zf_layout_lab_len(const zf_layout *l, const uint64_t *c, int64_t x, zf_pdmode mode);

/* A read found a chunk rewritten since the array was sized (ZF_ESTALE): a
 * store that cannot be listed keys its persisted index by its metadata
 * alone, so that copy is discarded (once, logged) and the next sizing (a new
 * generation's, chunk/array.h: zf_array_changed) builds and saves it again. */
void zf_layout_drop_index(zf_layout *l);

/* Copy up to len bytes of the .info text from off into buf (*got of them),
 * building it on first use; ZF_OK or ZF_ENOMEM. */
int zf_layout_info_read(zf_layout *l, uint64_t off, char *buf, size_t len, size_t *got);

/* Does the loaded index (l->off, and l->bmode for a labelled .csv) fit what
 * the metadata implies: each view starting at 0 (.txt) or after its header
 * (.csv), each block as long as its elements' lines can be, totals below
 * ZF_LAYOUT_TEXT_MAX, value formats that exist, one per slice?  ZF_OK, or
 * ZF_ECORRUPT with the first inconsistency in why (layout_index.c). */
int zf_layout_index_check(const zf_layout *l, char *why, size_t cap);

#endif
