/* meta_impl.h - private to zarr/: what parsing v3 metadata (meta_v3.c) and
 * v2 metadata (meta_v2.c) share (meta.c).  Every function fills part of a
 * zf_meta or zf_plain_meta and returns ZF_OK or an error with the reason in
 * err (capacity errcap). */
#ifndef ZF_META_IMPL_H
#define ZF_META_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/json.h"
#include "zarr/meta.h"

/* write the reason into err and evaluate to code */
#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))

/* ---- time-type arrays (zf_meta) ---- */

/* Keep the attribute "coordinates" (xarray's non-dimension coordinates) if
 * it is a string; ZF_OK or ZF_ENOMEM. */
int zf_meta_keep_coordinates(const cJSON *attrs, zf_meta *m);

/* What xarray reads of an array of another data type or a group (its
 * labels, coords.c): ndim from the JSON array shape ((unsigned)-1 if it is
 * none; a group's shape is NULL), dimension names where they are valid, the
 * coordinates attribute of attrs.  ZF_OK or ZF_ENOMEM. */
int zf_meta_names_of(const cJSON *shape, const cJSON *names, const cJSON *attrs, zf_meta *m);

/* Keep the attributes NAME.info lists besides what it shows otherwise
 * (meta_attrs.c), as its "attribute NAME: VALUE" lines, in m->attributes;
 * after m->cf.how is known.  ZF_OK or ZF_ENOMEM. */
int zf_meta_keep_attributes(const cJSON *attrs, zf_meta *m);

/* The raw text of the value at the key path keys (NULL-terminated) in the
 * JSON object text[0..n); NULL if a key is absent. */
const char *zf_meta_raw_at(const char *text, size_t n, const char *const *keys, size_t *len);

/* A JSON array of integers in [min_value, 2^56] into out (min_value: 0 for
 * shapes, 1 for chunks); *ndim is its length, or must be it unless
 * (unsigned)-1; raw (may be NULL) is its text, read exactly. */
int zf_meta_parse_dims(const cJSON *a, const char *raw, size_t rawlen, const char *what,
                       int64_t min_value, unsigned *ndim, uint64_t *out, char *err, size_t errcap);

/* m->nelems from m->shape (at most 2^56). */
int zf_meta_count_elems(zf_meta *m, char *err, size_t errcap);

/* The fill value: ticks of a native array (null allowed as NaT when
 * allow_null), a stored element of a CF one; text[0..n) is the document. */
int zf_meta_parse_fill_of(const char *text, size_t n, const cJSON *fill, int allow_null,
                          zf_meta *m, char *err, size_t errcap);

/* CF hook (cf.h): the mask and packing attributes of a CF duration or time
 * array; attrs (an object or NULL) and its text raw[0..rn). */
int zf_meta_cf_finish(const cJSON *attrs, const char *raw, size_t rn, zf_meta *m, char *err,
                      size_t errcap);

/* The dimension names (v3 dimension_names, v2 _ARRAY_DIMENSIONS; what names
 * the key): absent, null, or m->ndim strings or nulls. */
int zf_meta_parse_dim_names(const cJSON *names, const char *what, zf_meta *m, char *err,
                            size_t errcap);

/* The end of every parse of a time-type array: the read chunks of an array
 * of kind ZF_KIND_TIMEDELTA when rc is ZF_OK; out is cleared on error.
 * Returns the result. */
int zf_meta_end(zf_meta *out, zf_node_kind kind, int rc, char *err, size_t errcap);

/* ---- plain arrays (zf_plain_meta) ---- */

/* A fixed string length in bytes: 1 .. 2^20, a multiple of unit. */
int zf_plain_item_length(int64_t v, unsigned unit, zf_plain_meta *p, char *err, size_t errcap);

/* Is the array a string type? */
int zf_plain_is_string(const zf_plain_meta *p);

/* Refuse attributes xarray decodes as times, or with coders not reproduced
 * here (attrs may be NULL). */
int zf_plain_attrs_check(const zf_plain_meta *p, const cJSON *attrs, char *err, size_t errcap);

/* The fill value (doc[0..n) the document), and for numbers xarray's mask and
 * packing (cf.h) from attrs and its text raw[0..rn). */
int zf_plain_fill(zf_plain_meta *p, const char *doc, size_t n, const cJSON *fill,
                  const cJSON *attrs, const char *raw, size_t rn, char *err, size_t errcap);

/* Add a bytes->bytes codec of a string array (p takes c, also on error). */
int zf_plain_add_codec(zf_plain_meta *p, zf_codec *c, char *err, size_t errcap);

/* The end of every plain parse: when rc is ZF_OK, the chunk size check and
 * the fill value of the pipeline; out is cleared on error.  Returns the
 * result. */
int zf_plain_end(zf_plain_meta *out, int rc, char *err, size_t errcap);

#endif
