/* layout.h - the text files of one array: exact size and bytes at any offset.
 *
 * Design (exact sizes): the text length of a value depends on the value, so
 * the first request for a size runs one pass over every chunk of the array
 * (in parallel), summing the text length of every line into blocks of
 * ZF_LAYOUT_BLOCK consecutive elements (C order; more for arrays of over 2^32
 * elements, so that no index exceeds 2^20 blocks).  The prefix sums of those
 * blocks form the offset index of both views (.txt and .csv): 16 bytes per
 * block, at most 0.05% of the decoded array and at most 16 MiB.  A read at offset x binary-searches the
 * block holding x, measures (without formatting) the lines before x within
 * that block, then formats only the lines it returns.  Missing chunks cost no
 * memory (a constant chunk) and are measured arithmetically, per block.  A chunk that cannot be
 * decoded during the pass is measured as if it held NaT and marked bad: reads
 * that touch it fail with ZF_ECORRUPT, all other bytes stay readable.  A
 * labelled .csv's label fields depend on the coordinates alone: the pass
 * measures its value lines, and the labels are read and added to them when
 * the .csv is first sized or read (so the .txt never waits for them).
 *
 * Thread-safe: many readers may call zf_layout_read at once; the pass runs
 * once, concurrent callers wait for it (until their request's deadline or
 * cancellation, base/deadline.h: ZF_ETIMEDOUT).  The pass runs under the
 * deadline and cancellation of the request that started it; when that is
 * cancelled the pass fails, keeps nothing, and the next caller runs it. */
#ifndef ZF_LAYOUT_H
#define ZF_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "chunk/array.h"
#include "text/text.h"
#include "view/labels.h"

#define ZF_LAYOUT_BLOCK 4096

/* A text view of this many bytes or more (2^62: far within off_t) is left
 * out: its size and reads fail with ZF_ENOTFOUND, after one log line naming
 * it.  Lengths are summed saturating, so no view's size ever wraps. */
#define ZF_LAYOUT_TEXT_MAX ((uint64_t)1 << 62)

/* the files of an array: values, indices and values, a description (info.h) */
typedef enum zf_view { ZF_VIEW_TXT, ZF_VIEW_CSV, ZF_VIEW_INFO } zf_view;

typedef struct zf_layout zf_layout;

typedef struct zf_layout_opts {
    zf_format format;   /* text of each value */
    const char *nat;    /* text of NaT (CSV-quoted in .csv when needed) */
    unsigned threads;   /* threads for the size pass (0: one per CPU) */
    const char *index_dir; /* where offset indexes persist (idxcache.h); NULL: nowhere */
    uint64_t index_max;    /* the bytes index_dir may hold (least recently used removed first) */
    uint64_t generation;   /* tree.h: files of each version of a changing store get
                              their own node numbers (directories keep theirs) */
    zf_cf_mode cf;         /* which arrays are shown (zarr/cf.h; default all) */
    int labels_index;      /* .csv labels: 1 the indices, 0 coordinates where there are some */
} zf_layout_opts;

/* Layout of array a (borrowed; must outlive the layout) whose CSV value
 * column is called name.  NULL on allocation failure or bad options. */
zf_layout *zf_layout_new(zf_array *a, const char *name, const zf_layout_opts *opts);

/* The array whose text the layout shows. */
zf_array *zf_layout_array(const zf_layout *l);

/* Free a layout; NULL is allowed. */
void zf_layout_free(zf_layout *l);

/* Has the array been sized (its .txt's size known without further work)? */
int zf_layout_sized(zf_layout *l);

/* Is the size of view v known without further work: the array sized and,
 * for a labelled .csv, its label tables loaded (when the .csv is first
 * wanted, not with the .txt)?  Always for .info. */
int zf_layout_view_ready(zf_layout *l, zf_view v);

/* Did the pass find chunks that cannot be decoded?  (Readers then want
 * exact request ranges: a kernel readahead window covering a bad chunk would
 * fail reads that never asked for its bytes.) */
int zf_layout_damaged(const zf_layout *l);

/* Exact size in bytes of view v; runs the pass on first use (not for .info,
 * which never waits for the store: its size is that of the text of what is
 * known now, built again while it is not final).  ZF_ENOTFOUND for a view
 * of ZF_LAYOUT_TEXT_MAX bytes or more (left out). */
int zf_layout_size(zf_layout *l, zf_view v, uint64_t *size);

/* The .info text as it is now, at an open of NAME.info (the chunks present
 * counted again from what is known without waiting on a remote store:
 * view/info.h), which the view's size and reads show from then on: a
 * malloc'd copy into *text (the caller's, NUL-terminated; *len bytes).  An
 * open file keeps the copy of its open, so its bytes are that open's
 * whatever changes (fs/: direct_io, its size never cached).  ZF_OK, ZF_EIO
 * (the store could not tell, info.h), ZF_ENOMEM. */
int zf_layout_info_now(zf_layout *l, char **text, size_t *len);

/* Copy up to len bytes of view v starting at off into buf (caller-owned).
 * *got is len unless the end of the text comes first. */
int zf_layout_read(zf_layout *l, zf_view v, uint64_t off, char *buf, size_t len, size_t *got);

/* Where a reader's last read ended: the text offset of a line and its element.
 * Only meaningful for the layout and view it came from. */
typedef struct zf_cursor {
    uint64_t pos, elem;
} zf_cursor;

/* Chunks a sequential reader has decoded ahead of it when the cache prefetches
 * (a local store; a remote one: zf_array_read_ahead). */
#define ZF_LAYOUT_AHEAD 2

/* zf_layout_read that starts from *cursor when it lies between the offset
 * block and off (a sequential reader then measures no line twice, and the
 * next ZF_LAYOUT_AHEAD chunks are prefetched, cache.h), and leaves
 * in *cursor the last line it touched.  cursor may be NULL; start it as {0, 0}
 * with elem = UINT64_MAX to mean "none". */
int zf_layout_read_from(zf_layout *l, zf_view v, uint64_t off, char *buf, size_t len,
                        size_t *got, zf_cursor *cursor);

/* Give the .csv the label columns of these coordinate sources (labels.h;
 * copied, the pointers in them borrowed: they must outlive the layout); read
 * when the .csv is first sized or read.  Before any size or read.  ZF_OK or ZF_ENOMEM. */
int zf_layout_set_labels(zf_layout *l, const zf_labsrc *src, unsigned n);

/* The formatter of this array's .txt values (owned by the layout). */
const zf_text *zf_layout_text(const zf_layout *l);

#endif
