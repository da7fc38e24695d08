/* labels.h - the label columns of an array's .csv: its coordinates' text.
 *
 * As xarray's to_dataframe().to_csv() writes an array: one column per
 * dimension (its dimension coordinate's values, or the index where it has
 * none), then one per other coordinate (in the order the caller gives), each
 * coordinate's text made once, when the .csv is first wanted, and kept as a
 * table of fields: at most ZF_LABELS_MAX bytes of them in all, whatever the
 * number of arrays (a coordinate whose table would exceed what is left, is
 * damaged or of a type not shown falls back to the index, or is left out,
 * with a log line).  Time coordinates (zf_array) are
 * decoded by their array's codecs, outside the cache (so that their own size
 * pass reads every chunk itself), in pandas' column format (text/pdcsv.h)
 * or the text of another -o format;
 * others through label/coordtext.h.  Immutable once loaded; shared by readers. */
#ifndef ZF_LABELS_H
#define ZF_LABELS_H

#include <stdint.h>

#include "chunk/array.h"

#define ZF_LABELS_MAX ((uint64_t)256 << 20)
/* most label columns of an array (dimensions and other coordinates; more
 * other coordinates are left out) */
#define ZF_LABELS_MAX_COLS 64
/* pandas writes a frame's rows in slices of this many cells / data columns,
 * choosing a time column's format for each slice */
#define ZF_PD_SLICE_CELLS 100000

/* Where a column's text comes from (the tree fills these in; all borrowed). */
typedef struct zf_labsrc {
    const char *name;          /* the coordinate's name: the column header */
    int dim;                   /* the array dimension it labels, or -1 (non-dimension) */
    zf_array *arr;             /* a time coordinate, or NULL */
    const char *path;          /* else the store key of a coordinate of another type */
} zf_labsrc;

/* One column: the text of element c (array coordinates) is field
 * sum(c[d] * stride[d]) of the table; without a table, c[dim] in decimal. */
typedef struct zf_labcol {
    char *name;                  /* header text, CSV-quoted (owned) */
    int dim;                     /* index columns: the dimension */
    uint64_t stride[ZF_MAX_DIMS];
    char *text;                  /* fields back to back (owned; NULL: index column) */
    uint64_t *start;             /* nfields + 1 offsets into text (owned) */
    uint64_t nfields;
    uint64_t reserved;           /* bytes of the label budget it holds */
} zf_labcol;

typedef struct zf_labels {
    unsigned ncols, ndata;       /* columns; those that are not the index (non-dimension) */
    zf_labcol *cols;             /* dimension columns first (in order), then the others */
} zf_labels;

/* Load the columns of array a (its metadata: shape, dimension names) from
 * the n sources src (at most one per dimension, dim >= 0; non-dimension
 * ones, dim -1, in column order).  A coordinate's dimensions are matched to
 * the array's by name (a dimension coordinate: 1-D along its dimension);
 * one whose dimensions are not among the array's is left out, as xarray
 * does.  Time labels are written in format (pandas: the column format
 * pandas chooses for each slice of ZF_PD_SLICE_CELLS / (ndata + 1) rows of
 * a 1-D array, ndata the frame's data columns: the non-dimension sources,
 * a column left out here keeping its place), NaT as nat (its CSV text).
 * *out owns the tables
 * (zf_labels_free).  ZF_OK or ZF_ENOMEM; a source that cannot be used is
 * logged and replaced; ZF_EIO (logged) when the store could not tell a
 * coordinate's values (a failed read, a chunk changed since it was seen):
 * nothing is replaced then, and the next call tries again. */
int zf_labels_load(zf_array *a, const zf_labsrc *src, unsigned n, zf_format format,
                   const char *nat, unsigned ndata, zf_labels **out);

/* Free labels; NULL is allowed. */
void zf_labels_free(zf_labels *lb);

/* The field index of element c in a table column. */
static inline uint64_t zf_labcol_field(const zf_labcol *col, const uint64_t *c, unsigned ndim)
{
    uint64_t t = 0;
    for (unsigned d = 0; d < ndim; d++)
        t += c[d] * col->stride[d];
    return t;
}

#endif
