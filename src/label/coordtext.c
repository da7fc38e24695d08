/* coordtext.c - load the CSV text of every element of a coordinate array
 * that is not a time type: its metadata, its chunks read and decoded, each
 * element's text (numbers: coordtext_num.c; strings: coordtext_str.c; bools
 * here) laid out in C order. */
#include "label/coordtext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "codec/codec.h"
#include "codec/vlen.h"
#include "coordtext_impl.h"
#include "zarr/meta.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))

/* largest metadata document read */
#define META_MAX ((size_t)64 << 20)

/* ---- loading ----------------------------------------------------------- */

typedef struct loader {
    const zf_store *st;
    const char *path;
    size_t max_bytes;
    zf_plain_meta pm;
    uint64_t chunk_elems;
    zf_sbuf text;           /* element texts, in the order the chunks were read */
    uint64_t *pos, *len;    /* element i (C order): text.data[pos[i] .. pos[i] + len[i]) */
    zf_store_buf io;
    uint8_t *elems;         /* one decoded chunk of numbers or bools */
    zf_sbuf field;          /* one string's text before CSV quoting */
    char key[ZF_KEY_MAX];   /* the chunk being read */
    char *err;
    size_t errcap;
} loader;

/* the store key of name under the array's path */
static int full_key(const loader *L, const char *name, char *key)
{
    int w = snprintf(key, ZF_KEY_MAX, "%s%s%s", L->path, *L->path ? "/" : "", name);
    return w >= 0 && w < ZF_KEY_MAX ? ZF_OK : ZF_EINVAL;
}

/* read a metadata document (NUL-terminated, *out owned by the caller) */
static int read_doc(loader *L, const char *name, char **out, size_t *n)
{
    char key[ZF_KEY_MAX];
    char *err = L->err;
    size_t errcap = L->errcap;
    zf_store_buf b = {0};
    int rc = full_key(L, name, key);
    if (rc)
        return ERR(ZF_EINVAL, "the key of %s under \"%.100s\" is too long", name, L->path);
    rc = zf_store_read(L->st, key, META_MAX, &b, n, NULL, err, errcap);
    if (rc == ZF_OK && !(*out = realloc(b.p, *n + 1)))
        rc = ERR(ZF_ENOMEM, "out of memory");
    if (rc) {
        free(b.p);
        return rc;
    }
    (*out)[*n] = '\0';
    return ZF_OK;
}

/* the array's metadata: zarr.json, else .zarray and .zattrs */
static int load_meta(loader *L)
{
    char *doc = NULL, *attrs = NULL;
    size_t n = 0, an = 0;
    int rc = read_doc(L, "zarr.json", &doc, &n);
    if (rc == ZF_OK)
        rc = zf_meta_parse_plain_v3(doc, n, &L->pm, L->err, L->errcap);
    else if (rc == ZF_ENOTFOUND && (rc = read_doc(L, ".zarray", &doc, &n)) == ZF_OK) {
        rc = read_doc(L, ".zattrs", &attrs, &an);
        if (rc == ZF_OK || rc == ZF_ENOTFOUND)
            rc = zf_meta_parse_plain_v2(doc, n, attrs, an, &L->pm, L->err, L->errcap);
    }
    if (rc == ZF_ENOTFOUND)
        snprintf(L->err, L->errcap, "no array at \"%.200s\"", L->path);
    free(doc);
    free(attrs);
    return rc;
}

/* the text and offsets held so far (with the final offsets) within the bound? */
static int check_budget(loader *L)
{
    uint64_t offsets = (L->pm.m.nelems + 1) * sizeof(uint64_t);
    char *err = L->err;
    size_t errcap = L->errcap;
    if (L->text.failed || L->field.failed)
        return ERR(ZF_ENOMEM, "out of memory");
    if (offsets > L->max_bytes || L->text.len > L->max_bytes - offsets)
        return ERR(ZF_ENOMEM, "the coordinate's text exceeds %zu bytes", L->max_bytes);
    return ZF_OK;
}

/* most bytes of string text one decoded variable-length chunk may hold */
#define VLEN_CHUNK_MAX ((size_t)1 << 30)

/* the most bytes a decoded string chunk may hold */
static size_t string_cap(const loader *L)
{
    if (L->pm.type != ZF_PLAIN_VLEN_UTF8)
        return (size_t)L->chunk_elems * L->pm.item_bytes; /* <= 2^48 */
    size_t room = L->max_bytes > L->text.len ? L->max_bytes - L->text.len : 0;
    size_t heads = 4 + 4 * (size_t)L->chunk_elems; /* <= 4 + 2^30 */
    return heads + (room < VLEN_CHUNK_MAX ? room : VLEN_CHUNK_MAX);
}

/* the largest encoding of a string chunk (an inner chunk when sharded) */
static size_t string_encoded_cap(const loader *L)
{
    size_t n = string_cap(L);
    for (unsigned i = 0; i < L->pm.ncodecs; i++)
        n = zf_codec_max_encoded(L->pm.codecs[i], n);
    return n;
}

/* the largest encoded chunk (shard) worth reading */
static size_t encoded_cap(const loader *L)
{
    if (L->pm.m.pipeline)
        return zf_pipeline_max_encoded(L->pm.m.pipeline);
    size_t n = string_encoded_cap(L);
    if (!L->pm.shard)
        return n;
    uint64_t count = zf_pipeline_inner_count(L->pm.shard); /* <= 2^24 */
    int start;
    size_t index = zf_pipeline_index_bytes(L->pm.shard, &start);
    return n > (SIZE_MAX - index) / count ? SIZE_MAX : index + (size_t)count * n;
}

/* undo the bytes->bytes codecs of a string chunk (the last one first) into
 * *owned (the caller frees it); *res is the result (in when there are none) */
static int undo_codecs(loader *L, const uint8_t *in, size_t n, const uint8_t **res, size_t *resn,
                       uint8_t **owned)
{
    size_t cap = string_cap(L);
    *res = in;
    *resn = n;
    for (unsigned i = L->pm.ncodecs; i-- > 0;) {
        size_t c = cap; /* codec i's output is what codecs 0 .. i-1 encoded */
        for (unsigned j = 0; j < i; j++)
            c = zf_codec_max_encoded(L->pm.codecs[j], c);
        uint8_t *buf = malloc(c ? c : 1);
        if (!buf)
            return snprintf(L->err, L->errcap, "out of memory"), ZF_ENOMEM;
        int rc = zf_codec_decode(L->pm.codecs[i], *res, *resn, buf, c, resn, L->err, L->errcap);
        free(*owned);
        *owned = buf;
        *res = buf;
        if (rc)
            return rc;
    }
    return ZF_OK;
}

/* one decoded chunk */
typedef struct chunk_src {
    const uint8_t *data; /* elements (numbers, bools, fixed strings); NULL if missing */
    zf_vlen_reader vlen; /* variable-length strings */
} chunk_src;

/* the text of the chunk's next element k; keep 0: it lies outside the array */
static int element_text(loader *L, chunk_src *c, uint64_t k, int keep)
{
    const zf_plain_meta *p = &L->pm;
    if (p->type == ZF_PLAIN_VLEN_UTF8) {
        const uint8_t *item;
        size_t n;
        int rc = c->data ? zf_vlen_next(&c->vlen, &item, &n, L->err, L->errcap) : ZF_OK;
        if (rc == ZF_OK && c->data && keep)
            zf_coordtext_csv_field(&L->text, (const char *)item, n);
        return rc;
    }
    if (!keep)
        return ZF_OK;
    if (p->type == ZF_PLAIN_NUMBER)
        zf_coordtext_number(&L->text, &p->m.cf, p->m.elem, c->data + k * p->m.elem.size);
    else if (p->type == ZF_PLAIN_BOOL && !(p->m.cf.nmask_i && (c->data[k] != 0) == p->m.cf.mask_i[0]))
        zf_sbuf_add(&L->text, c->data[k] ? "True" : "False", c->data[k] ? 4 : 5);
    else if (c->data)
        return zf_coordtext_fixed(&L->text, &L->field, p, c->data + k * p->item_bytes, L->err,
                                  L->errcap);
    else if (p->type == ZF_PLAIN_BYTES)
        zf_sbuf_add(&L->text, "b''", 3); /* missing: the fill value b"" */
    return ZF_OK;
}

/* decode the encoded chunk in[0..n) (NULL: missing) into *c; *owned is
 * freed by the caller */
static int decode_chunk(loader *L, const uint8_t *in, size_t n, chunk_src *c, uint8_t **owned)
{
    const zf_plain_meta *p = &L->pm;
    char *err = L->err;
    size_t errcap = L->errcap;
    c->data = L->elems;
    if (p->m.pipeline && in)
        return zf_pipeline_decode(p->m.pipeline, in, n, L->elems, err, errcap);
    if (p->m.pipeline) { /* missing: the fill value everywhere */
        for (uint64_t k = 0; k < L->chunk_elems; k++)
            memcpy(L->elems + k * p->m.elem.size, p->m.cf.fill_raw, p->m.elem.size);
        return ZF_OK;
    }
    c->data = NULL;
    if (!in)
        return ZF_OK; /* strings: the fill value "" */
    size_t got;
    int rc = undo_codecs(L, in, n, &c->data, &got, owned);
    if (rc)
        return rc;
    if (p->type == ZF_PLAIN_VLEN_UTF8)
        return zf_vlen_begin(&c->vlen, c->data, got, L->chunk_elems, err, errcap);
    if (got != string_cap(L))
        return ERR(ZF_ECORRUPT, "%zu bytes decoded, %llu elements of %u bytes expected", got,
                   (unsigned long long)L->chunk_elems, p->item_bytes);
    return ZF_OK;
}

/* the texts of every element of the decoded chunk c whose first element is
 * at origin (of the read chunk shape) that lies inside the array */
static int chunk_texts(loader *L, const uint64_t *origin, chunk_src *c)
{
    const zf_meta *m = &L->pm.m;
    uint64_t idx[ZF_MAX_DIMS] = {0};
    int rc = ZF_OK;
    for (uint64_t k = 0; k < L->chunk_elems && rc == ZF_OK; k++) {
        uint64_t g = 0;
        int keep = 1;
        for (unsigned d = 0; d < m->ndim; d++) {
            uint64_t at = origin[d] + idx[d];
            keep &= at < m->shape[d];
            g = g * m->shape[d] + at;
        }
        size_t before = L->text.len;
        rc = element_text(L, c, k, keep);
        if (keep) {
            L->pos[g] = before;
            L->len[g] = L->text.len - before;
            if (rc == ZF_OK)
                rc = check_budget(L);
        }
        for (unsigned d = m->ndim; d-- > 0;) { /* the next element, C order */
            if (++idx[d] < m->read_chunks[d])
                break;
            idx[d] = 0;
        }
    }
    return rc;
}

/* decode the encoded chunk in[0..n) (NULL: missing) whose first element is
 * at origin and make its texts */
static int chunk_of(loader *L, const uint8_t *in, size_t n, const uint64_t *origin)
{
    chunk_src c;
    uint8_t *owned = NULL;
    int rc = decode_chunk(L, in, n, &c, &owned);
    if (rc == ZF_OK)
        rc = chunk_texts(L, origin, &c);
    free(owned);
    return rc;
}

/* the inner chunks of the shard in[0..n) (NULL: missing) whose first
 * element is at origin, each read by its (offset, nbytes) in the index */
static int shard_of(loader *L, const uint8_t *in, size_t n, const uint64_t *origin)
{
    const zf_pipeline *sh = L->pm.shard;
    const zf_meta *m = &L->pm.m;
    uint64_t count = zf_pipeline_inner_count(sh), *idx = NULL, at[ZF_MAX_DIMS], r[ZF_MAX_DIMS] = {0};
    int start, rc = ZF_OK;
    size_t ib = zf_pipeline_index_bytes(sh, &start);
    if (in && n < ib)
        return snprintf(L->err, L->errcap, "%zu bytes, shorter than its index", n), ZF_ECORRUPT;
    if (in && !(idx = malloc((size_t)count * 2 * sizeof *idx)))
        return snprintf(L->err, L->errcap, "out of memory"), ZF_ENOMEM;
    if (in) /* (entries checked against the shard: inside, none overlapping) */
        rc = zf_pipeline_decode_index(sh, start ? in : in + n - ib, n, idx, L->err, L->errcap);
    size_t most = string_encoded_cap(L);
    for (uint64_t k = 0; rc == ZF_OK && k < count; k++) {
        uint64_t off = idx ? idx[2 * k] : UINT64_MAX, len = idx ? idx[2 * k + 1] : UINT64_MAX;
        int empty = off == UINT64_MAX && len == UINT64_MAX;
        if (!empty && len > most) {
            snprintf(L->err, L->errcap, "inner chunk %llu: %llu bytes, more than any encoding "
                     "of it (%zu)", (unsigned long long)k, (unsigned long long)len, most);
            rc = ZF_ECORRUPT;
        }
        for (unsigned d = 0; d < m->ndim; d++)
            at[d] = origin[d] + r[d] * m->read_chunks[d];
        if (rc == ZF_OK)
            rc = chunk_of(L, empty ? NULL : in + off, empty ? 0 : (size_t)len, at);
        for (unsigned d = m->ndim; d-- > 0;) { /* the next inner chunk, C order */
            if (++r[d] < m->chunks[d] / m->read_chunks[d])
                break;
            r[d] = 0;
        }
    }
    free(idx);
    return rc;
}

/* read, decode and turn into texts the chunk (shard) at grid coordinates cc */
static int load_chunk(loader *L, const uint64_t *cc)
{
    char name[ZF_KEY_MAX];
    int rc = zf_meta_chunk_key(&L->pm.m, cc, name, sizeof name);
    if (rc == ZF_OK)
        rc = full_key(L, name, L->key);
    if (rc)
        return snprintf(L->err, L->errcap, "a chunk key under \"%.100s\" is too long", L->path), rc;
    size_t n = 0;
    char why[200];
    rc = zf_store_read(L->st, L->key, encoded_cap(L), &L->io, &n, NULL, why, sizeof why);
    if (rc && rc != ZF_ENOTFOUND)
        return snprintf(L->err, L->errcap, "chunk \"%s\": %s", L->key, why), rc;
    uint64_t origin[ZF_MAX_DIMS];
    for (unsigned d = 0; d < L->pm.m.ndim; d++)
        origin[d] = cc[d] * L->pm.m.chunks[d];
    const uint8_t *in = rc ? NULL : L->io.p;
    rc = L->pm.shard ? shard_of(L, in, n, origin) : chunk_of(L, in, n, origin);
    if (rc && rc != ZF_ENOMEM) {
        snprintf(why, sizeof why, "%s", L->err);
        snprintf(L->err, L->errcap, "chunk \"%s\": %s", L->key, why);
    }
    return rc;
}

/* lay the texts out in C order into *out (which takes the memory) */
static int assemble(loader *L, zf_coordtext *out)
{
    uint64_t n = L->pm.m.nelems;
    out->text = malloc(L->text.len + 1);
    out->start = malloc((size_t)(n + 1) * sizeof *out->start);
    if (!out->text || !out->start)
        return snprintf(L->err, L->errcap, "out of memory"), ZF_ENOMEM;
    uint64_t at = 0;
    for (uint64_t i = 0; i < n; i++) {
        out->start[i] = at;
        if (L->len[i]) /* (every text empty: no text buffer at all) */
            memcpy(out->text + at, L->text.data + L->pos[i], (size_t)L->len[i]);
        at += L->len[i];
    }
    out->start[n] = at;
    out->text[at] = '\0';
    out->n = n;
    out->floats = L->pm.type == ZF_PLAIN_NUMBER &&
                  (L->pm.m.elem.kind == ZF_ELEM_FLOAT || L->pm.m.cf.pack == ZF_CF_PACK_F64 ||
                   L->pm.m.cf.nmask_i + L->pm.m.cf.nmask_f > 0);
    out->ndim = L->pm.m.ndim;
    memcpy(out->shape, L->pm.m.shape, sizeof out->shape);
    memcpy(out->dim_names, L->pm.m.dim_names, sizeof out->dim_names);
    memset(L->pm.m.dim_names, 0, sizeof L->pm.m.dim_names); /* now out's */
    return ZF_OK;
}

/* every chunk of the grid, in C order */
static int load_chunks(loader *L)
{
    const zf_meta *m = &L->pm.m;
    uint64_t grid[ZF_MAX_DIMS], cc[ZF_MAX_DIMS] = {0};
    for (unsigned d = 0; d < m->ndim; d++)
        grid[d] = m->shape[d] / m->chunks[d] + (m->shape[d] % m->chunks[d] != 0);
    if (m->nelems == 0)
        return ZF_OK;
    for (;;) {
        int rc = load_chunk(L, cc);
        if (rc)
            return rc;
        unsigned d = m->ndim;
        while (d-- > 0 && ++cc[d] == grid[d])
            cc[d] = 0;
        if (d == (unsigned)-1)
            return ZF_OK;
    }
}

/* the buffers of one load: positions of every element, one decoded chunk */
static int allocate(loader *L)
{
    const zf_plain_meta *p = &L->pm;
    L->chunk_elems = 1;
    for (unsigned d = 0; d < p->m.ndim; d++)
        L->chunk_elems *= p->m.read_chunks[d]; /* <= 2^28: zf_meta_parse_plain_* */
    int rc = check_budget(L);
    if (rc)
        return rc;
    size_t n = (size_t)p->m.nelems;
    L->pos = malloc((n ? n : 1) * sizeof *L->pos);
    L->len = malloc((n ? n : 1) * sizeof *L->len);
    if (p->m.pipeline)
        L->elems = malloc((size_t)L->chunk_elems * p->m.elem.size);
    if (!L->pos || !L->len || (p->m.pipeline && !L->elems))
        return snprintf(L->err, L->errcap, "out of memory"), ZF_ENOMEM;
    return ZF_OK;
}

int zf_coordtext_load(const zf_store *st, const char *path, size_t max_bytes, zf_coordtext *out,
                      char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    loader L = {.st = st, .path = path, .max_bytes = max_bytes, .err = err, .errcap = errcap};
    int rc = load_meta(&L);
    if (rc == ZF_OK)
        rc = allocate(&L);
    if (rc == ZF_OK)
        rc = load_chunks(&L);
    if (rc == ZF_OK)
        rc = assemble(&L, out);
    if (rc)
        zf_coordtext_clear(out);
    zf_plain_meta_clear(&L.pm);
    free(L.text.data);
    free(L.field.data);
    free(L.pos);
    free(L.len);
    free(L.elems);
    free(L.io.p);
    return rc;
}

/* is field i of c the text of a float zero, "0.0" or "-0.0"? */
static int is_zero(const zf_coordtext *c, uint64_t i)
{
    uint64_t n = c->start[i + 1] - c->start[i];
    const char *t = c->text + c->start[i];
    return (n == 3 && !memcmp(t, "0.0", 3)) || (n == 4 && !memcmp(t, "-0.0", 4));
}

int zf_coordtext_level(zf_coordtext *c)
{
    uint64_t first = 0, other = 0;
    while (c->floats && first < c->n && !is_zero(c, first))
        first++;
    if (!c->floats || first == c->n)
        return ZF_OK;
    int neg = c->start[first + 1] - c->start[first] == 4; /* every zero as the first */
    for (uint64_t i = first; i < c->n; i++)
        other += is_zero(c, i) && (c->start[i + 1] - c->start[i] == 4) != neg;
    if (!other)
        return ZF_OK;
    uint64_t len = c->start[c->n] + (neg ? other : 0) - (neg ? 0 : other);
    char *text = malloc((size_t)len + 1);
    if (!text)
        return ZF_ENOMEM;
    uint64_t at = 0;
    for (uint64_t i = 0; i < c->n; i++) {
        const char *t = c->text + c->start[i];
        uint64_t n = c->start[i + 1] - c->start[i];
        if (is_zero(c, i)) {
            t = neg ? "-0.0" : "0.0";
            n = neg ? 4 : 3;
        }
        c->start[i] = at;
        memcpy(text + at, t, (size_t)n);
        at += n;
    }
    c->start[c->n] = at;
    text[at] = '\0';
    free(c->text);
    c->text = text;
    return ZF_OK;
}

void zf_coordtext_clear(zf_coordtext *c)
{
    for (unsigned i = 0; i < ZF_MAX_DIMS; i++)
        free(c->dim_names[i]);
    free(c->text);
    free(c->start);
    memset(c, 0, sizeof *c);
}
