/* coordtext.c - the CSV text of a coordinate array's numbers, bools and
 * strings, as pandas writes xarray's decoded values. */
#include "label/coordtext.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "codec/codec.h"
#include "codec/vlen.h"
#include "zarr/meta.h"

#define ERR(code, ...) (snprintf(err, errcap, __VA_ARGS__), (code))

/* largest metadata document read */
#define META_MAX ((size_t)64 << 20)

/* ---- floats as Python / numpy print them ------------------------------- */

/* does the decimal text s read back as x (in float32 when single)? */
static int reads_back(const char *s, double x, int single)
{
    return single ? strtof(s, NULL) == (float)x : strtod(s, NULL) == x;
}

/* the digits of m x 10^e without trailing zeros into dig; the decimal
 * exponent of the first digit into *exp10 */
static void set_digits(uint64_t m, int e, char *dig, int *exp10)
{
    int len = snprintf(dig, 24, "%" PRIu64, m);
    *exp10 = e + len - 1;
    while (len > 1 && dig[len - 1] == '0')
        dig[--len] = '\0';
}

/* m x 10^e reads back as x?  (then its digits are set) */
static int try_candidate(uint64_t m, int e, double x, int single, char *dig, int *exp10)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%" PRIu64 "e%d", m, e);
    if (m == 0 || !reads_back(buf, x, single))
        return 0;
    set_digits(m, e, dig, exp10);
    return 1;
}

/* the shortest digits that read back as x (finite, > 0).  Any decimal of at
 * most DBL_DIG (FLT_DIG) digits survives decimal -> binary -> decimal at that
 * precision, so when the shortest is that short, rounding x to DBL_DIG digits
 * gives it with trailing zeros (not so for subnormals: they start at one
 * digit).  Beyond, per precision: the correctly rounded
 * decimal, or a neighbour of it (the rounding interval of a power of two is
 * narrower below than above). */
static void shortest_digits(double x, int single, char *dig, int *exp10)
{
    char buf[48];
    int normal = x >= (single ? FLT_MIN : DBL_MIN); /* subnormals hold fewer digits */
    for (int prec = !normal ? 1 : single ? FLT_DIG : DBL_DIG; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        uint64_t m = (uint64_t)(buf[0] - '0');
        const char *p = buf + 1;
        for (p += *p == '.'; *p >= '0' && *p <= '9'; p++)
            m = m * 10 + (uint64_t)(*p - '0');
        int e = atoi(p + 1) - (prec - 1);
        if (try_candidate(m, e, x, single, dig, exp10) ||
            try_candidate(m - 1, e, x, single, dig, exp10) ||
            try_candidate(m + 1, e, x, single, dig, exp10))
            return;
    }
    set_digits(0, 0, dig, exp10); /* not reached: 17 digits always read back */
}

/* the layout of the digits dig x 10^exp10 shared by Python's repr and
 * numpy's str: scientific (sci: d.ddde+XX) or positional (ddd.ddd, at
 * least one digit after the point) */
static void float_layout(zf_sbuf *out, int neg, const char *dig, int exp10, int sci)
{
    int nd = (int)strlen(dig);
    if (neg)
        zf_sbuf_add(out, "-", 1);
    if (sci) {
        zf_sbuf_add(out, dig, 1);
        if (nd > 1) {
            zf_sbuf_add(out, ".", 1);
            zf_sbuf_add(out, dig + 1, (size_t)nd - 1);
        }
        zf_sbuf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        zf_sbuf_add(out, "0.", 2);
        for (int i = -1; i > exp10; i--)
            zf_sbuf_add(out, "0", 1);
        zf_sbuf_add(out, dig, (size_t)nd);
    } else {
        int whole = exp10 + 1;
        zf_sbuf_add(out, dig, (size_t)(nd < whole ? nd : whole));
        for (int i = nd; i < whole; i++)
            zf_sbuf_add(out, "0", 1);
        zf_sbuf_add(out, ".", 1);
        if (nd > whole)
            zf_sbuf_add(out, dig + whole, (size_t)(nd - whole));
        else
            zf_sbuf_add(out, "0", 1);
    }
}

static void float_text(zf_sbuf *out, double x, int single)
{
    if (isnan(x)) {
        zf_sbuf_add(out, "nan", 3);
        return;
    }
    if (isinf(x)) {
        zf_sbuf_printf(out, "%sinf", x < 0 ? "-" : "");
        return;
    }
    char dig[24];
    int exp10 = 0;
    if (x == 0)
        set_digits(0, 0, dig, &exp10);
    else
        shortest_digits(fabs(x), single, dig, &exp10);
    /* positional: Python's repr for -4 <= exp10 < 16; numpy's str(float32)
     * for 1e-4 <= |x| < 1e6 (compared exactly) */
    int sci = single ? x != 0 && (fabs(x) < 1e-4 || fabs(x) >= 1e6) : exp10 < -4 || exp10 >= 16;
    float_layout(out, signbit(x) != 0, dig, exp10, sci);
}

void zf_coordtext_f64(zf_sbuf *out, double x)
{
    float_text(out, x, 0);
}

void zf_coordtext_f32(zf_sbuf *out, float x)
{
    float_text(out, x, 1);
}

/* ---- strings and bytes ------------------------------------------------- */

void zf_coordtext_bytes_repr(zf_sbuf *out, const uint8_t *s, size_t n)
{
    int dq = memchr(s, '\'', n) && !memchr(s, '"', n);
    char quote = dq ? '"' : '\'';
    zf_sbuf_printf(out, "b%c", quote);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == quote || c == '\\')
            zf_sbuf_printf(out, "\\%c", c);
        else if (c == '\t' || c == '\n' || c == '\r')
            zf_sbuf_printf(out, "\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
        else if (c < 0x20 || c >= 0x7f)
            zf_sbuf_printf(out, "\\x%02x", c);
        else
            zf_sbuf_add(out, (const char *)&c, 1);
    }
    zf_sbuf_add(out, &quote, 1);
}

void zf_coordtext_csv_field(zf_sbuf *out, const char *s, size_t n)
{
    int quote = 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n'; /* not CR: pandas' lineterminator is LF */
    if (!quote) {
        zf_sbuf_add(out, s, n);
        return;
    }
    zf_sbuf_add(out, "\"", 1);
    for (const char *p = s, *end = s + n; p < end;) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        size_t run = q ? (size_t)(q - p) + 1 : (size_t)(end - p);
        zf_sbuf_add(out, p, run);
        if (q)
            zf_sbuf_add(out, "\"", 1);
        p += run;
    }
    zf_sbuf_add(out, "\"", 1);
}

/* one UTF-32 code point as UTF-8; 0 if it is not a Unicode scalar value */
static int put_utf8(zf_sbuf *out, uint32_t c)
{
    char b[4];
    size_t n;
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    if (c < 0x80)
        b[0] = (char)c, n = 1;
    else if (c < 0x800)
        b[0] = (char)(0xC0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3F)), n = 2;
    else if (c < 0x10000)
        b[0] = (char)(0xE0 | c >> 12), b[1] = (char)(0x80 | (c >> 6 & 0x3F)),
        b[2] = (char)(0x80 | (c & 0x3F)), n = 3;
    else
        b[0] = (char)(0xF0 | c >> 18), b[1] = (char)(0x80 | (c >> 12 & 0x3F)),
        b[2] = (char)(0x80 | (c >> 6 & 0x3F)), b[3] = (char)(0x80 | (c & 0x3F)), n = 4;
    zf_sbuf_add(out, b, n);
    return 1;
}

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

/* an integer element's exact value: *neg and magnitude */
static uint64_t elem_integer(zf_elem el, const uint8_t *e, int *neg)
{
    int64_t i = 0;
    uint64_t u = 0;
    switch (el.size) {
    case 1: { int8_t a; uint8_t b; memcpy(&a, e, 1); memcpy(&b, e, 1); i = a; u = b; break; }
    case 2: { int16_t a; uint16_t b; memcpy(&a, e, 2); memcpy(&b, e, 2); i = a; u = b; break; }
    case 4: { int32_t a; uint32_t b; memcpy(&a, e, 4); memcpy(&b, e, 4); i = a; u = b; break; }
    default: memcpy(&i, e, 8); memcpy(&u, e, 8); break;
    }
    *neg = el.kind == ZF_ELEM_INT && i < 0;
    if (el.kind != ZF_ELEM_INT)
        return u;
    return *neg ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
}

/* an element of a number array at e (machine order) as a double */
static double elem_double(zf_elem el, const uint8_t *e)
{
    if (el.kind == ZF_ELEM_FLOAT) {
        if (el.size == 4) {
            float f;
            memcpy(&f, e, 4);
            return f;
        }
        double d;
        memcpy(&d, e, 8);
        return d;
    }
    int neg;
    uint64_t mag = elem_integer(el, e, &neg);
    return neg ? -(double)mag : (double)mag; /* rounds as numpy's astype(float64) */
}

/* does xarray's mask (CFMaskCoder) hide the element? */
static int masked(const zf_cf *cf, zf_elem el, const uint8_t *e)
{
    if (cf->mask_int) {
        int neg;
        uint64_t mag = elem_integer(el, e, &neg);
        if (!neg && mag > INT64_MAX)
            return 0; /* no int64 mask value equals it */
        int64_t v = neg ? -(int64_t)(mag - 1) - 1 : (int64_t)mag;
        for (unsigned i = 0; i < cf->nmask_i; i++)
            if (cf->mask_i[i] == v)
                return 1;
        return 0;
    }
    double d = elem_double(el, e);
    for (unsigned i = 0; i < cf->nmask_f; i++)
        if (cf->mask_f[i] == d)
            return 1;
    return 0;
}

/* one number as xarray decodes it and pandas writes it */
static void number_text(loader *L, const uint8_t *e)
{
    const zf_cf *cf = &L->pm.m.cf;
    zf_elem el = L->pm.m.elem;
    int has_mask = cf->nmask_i + cf->nmask_f > 0;
    if (has_mask && masked(cf, el, e))
        return; /* NaN: an empty field */
    if (cf->pack == ZF_CF_PACK_F64) {
        double y = elem_double(el, e);
        if (cf->has_scale)
            y *= cf->scale;
        if (cf->has_offset)
            y += cf->offset;
        if (!isnan(y))
            zf_coordtext_f64(&L->text, y);
    } else if (el.kind == ZF_ELEM_FLOAT || has_mask) {
        double d = elem_double(el, e);
        if (isnan(d))
            return;
        if (el.kind == ZF_ELEM_FLOAT && el.size == 4)
            zf_coordtext_f32(&L->text, (float)d);
        else
            zf_coordtext_f64(&L->text, d);
    } else {
        int neg;
        uint64_t mag = elem_integer(el, e, &neg);
        zf_sbuf_printf(&L->text, "%s%" PRIu64, neg ? "-" : "", mag);
    }
}

/* a fixed-length UTF-32 string (trailing NULs are not part of it) as UTF-8
 * into L->field */
static int utf32_field(loader *L, const uint8_t *e)
{
    size_t units = L->pm.item_bytes / 4;
    for (; units; units--) {
        const uint8_t *u = e + 4 * (units - 1);
        if (u[0] | u[1] | u[2] | u[3])
            break;
    }
    for (size_t i = 0; i < units; i++) {
        const uint8_t *u = e + 4 * i;
        uint32_t c = L->pm.big_endian
                         ? (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3]
                         : (uint32_t)u[3] << 24 | (uint32_t)u[2] << 16 | (uint32_t)u[1] << 8 | u[0];
        if (!put_utf8(&L->field, c)) {
            snprintf(L->err, L->errcap, "0x%" PRIx32 " is not a Unicode character", c);
            return ZF_ECORRUPT;
        }
    }
    return ZF_OK;
}

/* the CSV text of fixed-length string element e (item_bytes bytes) */
static int fixed_text(loader *L, const uint8_t *e)
{
    L->field.len = 0;
    if (L->pm.type == ZF_PLAIN_BYTES) { /* numpy drops trailing NULs */
        size_t n = L->pm.item_bytes;
        while (n && e[n - 1] == 0)
            n--;
        zf_coordtext_bytes_repr(&L->field, e, n);
    } else {
        int rc = utf32_field(L, e);
        if (rc)
            return rc;
    }
    zf_coordtext_csv_field(&L->text, L->field.data ? L->field.data : "", L->field.len);
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

/* the largest encoded chunk worth reading */
static size_t encoded_cap(const loader *L)
{
    if (L->pm.m.pipeline)
        return zf_pipeline_max_encoded(L->pm.m.pipeline);
    size_t n = string_cap(L);
    for (unsigned i = 0; i < L->pm.ncodecs; i++)
        n = zf_codec_bound(n);
    return n;
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
            c = zf_codec_bound(c);
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
        number_text(L, c->data + k * p->m.elem.size);
    else if (p->type == ZF_PLAIN_BOOL && !(p->m.cf.nmask_i && (c->data[k] != 0) == p->m.cf.mask_i[0]))
        zf_sbuf_printf(&L->text, "%s", c->data[k] ? "True" : "False");
    else if (c->data)
        return fixed_text(L, c->data + k * p->item_bytes);
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

/* the texts of every element of chunk cc that lies inside the array */
static int chunk_texts(loader *L, const uint64_t *cc, chunk_src *c)
{
    const zf_meta *m = &L->pm.m;
    uint64_t idx[ZF_MAX_DIMS] = {0};
    int rc = ZF_OK;
    for (uint64_t k = 0; k < L->chunk_elems && rc == ZF_OK; k++) {
        uint64_t g = 0;
        int keep = 1;
        for (unsigned d = 0; d < m->ndim; d++) {
            uint64_t at = cc[d] * m->chunks[d] + idx[d];
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
            if (++idx[d] < m->chunks[d])
                break;
            idx[d] = 0;
        }
    }
    return rc;
}

/* read, decode and turn into texts the chunk at grid coordinates cc */
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
    chunk_src c;
    uint8_t *owned = NULL;
    rc = decode_chunk(L, rc ? NULL : L->io.p, n, &c, &owned);
    if (rc == ZF_OK)
        rc = chunk_texts(L, cc, &c);
    free(owned);
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
        memcpy(out->text + at, L->text.data + L->pos[i], (size_t)L->len[i]);
        at += L->len[i];
    }
    out->start[n] = at;
    out->text[at] = '\0';
    out->n = n;
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
        L->chunk_elems *= p->m.chunks[d]; /* <= 2^28: zf_meta_parse_plain_* */
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

void zf_coordtext_clear(zf_coordtext *c)
{
    for (unsigned i = 0; i < ZF_MAX_DIMS; i++)
        free(c->dim_names[i]);
    free(c->text);
    free(c->start);
    memset(c, 0, sizeof *c);
}
