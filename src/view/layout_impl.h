/* layout_impl.h - internals shared by layout.c (set-up, the size pass) and
 * layout_read.c (reading). */
#ifndef ZF_LAYOUT_IMPL_H
#define ZF_LAYOUT_IMPL_H

#include <pthread.h>

#include "text/pdcsv.h"
#include "text/text.h"
#include "view/layout.h"

struct zf_layout {
    zf_array *a;
    const zf_meta *m;
    zf_text_room dur, csvdur;     /* storage of the element type's formatters */
    const zf_text *text, *csvtext;/* all the view uses of them (.txt, .csv) */
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
    int state;                    /* UNSIZED, SIZING or SIZED (layout.c) */
    uint64_t *off[2];             /* [view][block] byte offset, nblocks + 1 entries */
    uint8_t *bad;                 /* bitmap of chunks that failed to decode */
    char *name;
    char *index_dir;              /* NULL: indexes are not persisted */
    zf_format format;
    char *info;                   /* the .info text, built on first use */
    /* labelled .csv (labels.h), set up with the first size; lab NULL: index columns */
    zf_labsrc *srcs;              /* where the label columns come from (owned array) */
    unsigned nsrcs;
    zf_labels *lab;
    int labels_off;               /* the values cannot be written as pandas does: index columns */
    int pdvals;                   /* the value column as pandas writes it (-o format=pandas) */
    zf_pdcsv pd;                  /* ... in the format pandas chooses for its slice */
    uint64_t slice;               /* rows pandas formats at once (one format each) */
    uint64_t *bnn, *bneg;         /* per block: non-NaT values, negative durations */
    uint8_t *bmode;               /* per block: the ZF_PD_* parts of its values, then
                                     (after the pass) the zf_pdmode of its slice */
    size_t info_len;
};

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

/* Run the size pass over every chunk into l->off (and the labelled .csv's
 * per-block counts); ZF_OK or the first failure. */
int zf_layout_run_pass(zf_layout *l);

/* Run the size pass once (or load its persisted index); ZF_OK or an error. */
int zf_layout_ensure_sized(zf_layout *l);

/* Length of the labelled .csv line of the element at coordinates c holding
 * x, its value column in mode (layout_read.c). */
uint64_t zf_layout_lab_len(const zf_layout *l, const uint64_t *c, int64_t x, zf_pdmode mode);

/* Build the .info text once; ZF_OK or ZF_ENOMEM. */
int zf_layout_ensure_info(zf_layout *l);

#endif
