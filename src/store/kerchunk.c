/* kerchunk.c - a kerchunk reference set as a store (kerchunk.h): the
 * document read (and decompressed), the store's reads, stamps and
 * listings over its checked table (kc_parse.c). */
#include "store/kerchunk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "base/err.h"
#include "base/json.h"
#include "store/kc_impl.h"

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

#define DOC_MIN ((size_t)64 << 20) /* a document may always take this much memory */
#define PARQUET_META_MAX ((size_t)4 << 20) /* the largest .zmetadata looked into for "record_size" */

typedef struct kc_store {
    kc_doc doc;
    zf_targets *targets;
    char *url;                  /* the document's */
} kc_store;

static const kc_store *kc_of(const zf_store *s)
{
    return s->impl;
}

/* ------------------------------------------------------------ naming */

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n > t && !strcmp(s + n - t, tail);
}

int zf_kerchunk_spec(const char *spec)
{
    if (strstr(spec, "://")) {
        size_t n = strcspn(spec, "?#");
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)n, spec);
        return ends_with(path, ".json") || ends_with(path, ".json.gz") ||
               ends_with(path, ".json.zst");
    }
    struct stat st;
    return stat(spec, &st) == 0 && S_ISREG(st.st_mode);
}

/* the most memory a document may take: an eighth of the machine's, at least DOC_MIN */
static size_t doc_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 8 : 0;
    return mem > DOC_MIN && mem < SIZE_MAX ? (size_t)mem : DOC_MIN;
}

/* ------------------------------------------------------------ decompression */

/* gzip data (in, n bytes) into *out (malloc'd), at most limit bytes */
static int gunzip(const uint8_t *in, size_t n, size_t limit, char **out, size_t *len)
{
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return ZF_ENOMEM;
    size_t cap = n * 4 + 4096, used = 0;
    char *buf = NULL;
    int rc = Z_OK;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)(n < UINT32_MAX ? n : UINT32_MAX);
    while (rc == Z_OK) {
        if (cap > limit + 1)
            cap = limit + 1;
        char *nb = realloc(buf, cap);
        if (!nb) {
            rc = Z_MEM_ERROR;
            break;
        }
        buf = nb;
        z.next_out = (Bytef *)buf + used;
        z.avail_out = (uInt)(cap - used < UINT32_MAX ? cap - used : UINT32_MAX);
        rc = inflate(&z, Z_NO_FLUSH);
        used = (size_t)((char *)z.next_out - buf);
        if (rc == Z_OK && used > limit)
            rc = Z_BUF_ERROR;
        if (rc == Z_OK && z.avail_out)
            rc = z.avail_in ? Z_OK : Z_DATA_ERROR; /* input ended before the stream */
        cap *= 2;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return rc == Z_MEM_ERROR ? ZF_ENOMEM : ZF_ECORRUPT;
    }
    *out = buf;
    *len = used;
    return ZF_OK;
}

/* zstd data (in, n bytes) into *out (malloc'd), at most limit bytes */
static int unzstd(const uint8_t *in, size_t n, size_t limit, char **out, size_t *len)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    size_t cap = n * 4 + 4096, used = 0, r = 1;
    char *buf = NULL;
    ZSTD_inBuffer ib = {in, n, 0};
    int rc = z ? ZF_OK : ZF_ENOMEM;
    while (rc == ZF_OK && r != 0) {
        if (cap > limit + 1)
            cap = limit + 1;
        char *nb = realloc(buf, cap);
        if (!nb) {
            rc = ZF_ENOMEM;
            break;
        }
        buf = nb;
        ZSTD_outBuffer ob = {buf, cap, used};
        r = ZSTD_decompressStream(z, &ob, &ib);
        used = ob.pos;
        if (ZSTD_isError(r) || used > limit || (r && ib.pos == n && ob.pos < ob.size))
            rc = ZF_ECORRUPT;
        cap *= 2;
    }
    ZSTD_freeDStream(z);
    if (rc == ZF_OK && ib.pos != n)
        rc = ZF_ECORRUPT; /* bytes after the frame */
    if (rc != ZF_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = used;
    return ZF_OK;
}

/* the document's text from its stored bytes (b, n), decompressed as name says */
static int doc_text(const char *name, zf_store_buf *b, size_t n, size_t limit, char **text,
                    size_t *len, char *err, size_t errcap)
{
    int gz = ends_with(name, ".gz"), zst = ends_with(name, ".zst");
    if (!gz && !zst) {
        *text = (char *)b->p;
        *len = n;
        b->p = NULL;
        return ZF_OK;
    }
    int rc = gz ? gunzip(b->p, n, limit, text, len) : unzstd(b->p, n, limit, text, len);
    if (rc == ZF_ECORRUPT)
        return ERR(rc, "not %s data, or more than the %zu bytes allowed", gz ? "gzip" : "zstd",
                   limit);
    return rc;
}

/* ------------------------------------------------------------ reads */

/* the reference of key: ZF_OK, ZF_ENOTFOUND, or ZF_ECORRUPT for a directory */
static int find(const kc_store *k, const char *key, const kc_ref **r, char *err, size_t errcap)
{
    int is_dir;
    *r = kc_find(&k->doc, key, &is_dir);
    if (*r)
        return ZF_OK;
    return is_dir ? ERR(ZF_ECORRUPT, "a directory, not a value") : ZF_ENOTFOUND;
}

/* the length of r's value: a whole object's from its stamp (into *st) */
static int ref_length(const kc_store *k, const kc_ref *r, uint64_t *len, zf_stamp *st, char *err,
                      size_t errcap)
{
    if (r->kind != KC_WHOLE) {
        *len = r->len;
        return ZF_OK;
    }
    int rc = zf_targets_stamp(k->targets, kc_url(&k->doc, r), st, err, errcap);
    *len = st->size;
    return rc;
}

/* the stamp identifying r's value: its bytes or its reference (and a whole
 * object's version) */
static void ref_stamp(const kc_store *k, const kc_ref *r, uint64_t len, const zf_stamp *target,
                      zf_stamp *st)
{
    *st = (zf_stamp){.kind = ZF_STORE_FILE, .size = len};
    if (r->kind == KC_INLINE) {
        st->tag = r->digest;
        return;
    }
    zf_fp_init(&st->tag);
    const char *url = kc_url(&k->doc, r);
    zf_fp_add(&st->tag, url, strlen(url) + 1);
    uint64_t range[2] = {r->off, r->len};
    zf_fp_add(&st->tag, range, sizeof range);
    if (r->kind == KC_WHOLE) {
        zf_fp v = zf_stamp_version(target);
        zf_fp_add(&st->tag, &v, sizeof v);
    }
}

/* read len bytes at off of r's value into buf (the range checked) */
static int read_ref(const kc_store *k, const kc_ref *r, uint64_t off, size_t len, uint8_t *buf,
                    char *err, size_t errcap)
{
    if (r->kind == KC_INLINE) {
        memcpy(buf, k->doc.arena + r->off + off, len);
        return ZF_OK;
    }
    zf_target_req q = {.url = kc_url(&k->doc, r), .off = r->off + off, .len = len, .buf = buf,
                       .err = err, .errcap = errcap};
    return zf_targets_read(k->targets, &q, 1);
}

static int kc_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                   zf_stamp *st, char *err, size_t errcap)
{
    const kc_store *k = kc_of(s);
    const kc_ref *r;
    zf_stamp target = {0};
    uint64_t len = 0;
    *n = 0;
    int rc = find(k, key, &r, err, errcap);
    if (rc == ZF_OK)
        rc = ref_length(k, r, &len, &target, err, errcap);
    if (rc == ZF_OK && len > max)
        rc = ERR(ZF_ECORRUPT, "%llu bytes, more than the %zu allowed", (unsigned long long)len, max);
    if (rc == ZF_OK)
        rc = zf_store_buf_reserve(b, (size_t)len);
    if (rc == ZF_OK)
        rc = read_ref(k, r, 0, (size_t)len, b->p, err, errcap);
    if (rc != ZF_OK)
        return rc;
    *n = (size_t)len;
    ref_stamp(k, r, len, &target, st);
    return ZF_OK;
}

static int kc_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    const kc_store *k = kc_of(s);
    zf_target_req *tq = calloc(n ? n : 1, sizeof *tq);
    size_t *of = calloc(n ? n : 1, sizeof *of), nt = 0;
    for (size_t i = 0; i < n; i++) {
        zf_store_req *q = &reqs[i];
        char *err = q->err;
        size_t errcap = q->errcap;
        const kc_ref *r;
        zf_stamp target;
        uint64_t len = 0;
        q->rc = tq && of ? find(k, q->key, &r, err, errcap) : ZF_ENOMEM;
        if (q->rc == ZF_OK)
            q->rc = ref_length(k, r, &len, &target, err, errcap);
        if (q->rc == ZF_OK && (q->off > len || q->len > len - q->off))
            q->rc = ERR(ZF_ECORRUPT, "%llu bytes, shorter than the range asked for",
                        (unsigned long long)len);
        if (q->rc != ZF_OK || !q->len)
            continue;
        if (r->kind == KC_INLINE) {
            memcpy(q->buf, k->doc.arena + r->off + q->off, q->len);
            continue;
        }
        tq[nt] = (zf_target_req){.url = kc_url(&k->doc, r), .off = r->off + q->off, .len = q->len,
                                 .buf = q->buf, .err = err, .errcap = errcap};
        of[nt++] = i;
    }
    if (nt) /* the targets read together: neighbours coalesced */
        zf_targets_read(k->targets, tq, nt);
    for (size_t j = 0; j < nt; j++)
        reqs[of[j]].rc = tq[j].rc;
    free(tq);
    free(of);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return ZF_OK;
}

static int kc_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    const kc_store *k = kc_of(s);
    int is_dir;
    const kc_ref *r = kc_find(&k->doc, key, &is_dir);
    memset(st, 0, sizeof *st);
    if (!r) {
        st->kind = is_dir ? ZF_STORE_DIR : ZF_STORE_ABSENT;
        return is_dir ? ZF_OK : ZF_ENOTFOUND;
    }
    zf_stamp target = {0};
    uint64_t len;
    int rc = ref_length(k, r, &len, &target, err, errcap);
    if (rc == ZF_OK)
        ref_stamp(k, r, len, &target, st);
    return rc;
}

static int kc_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                   void *ctx, char *err, size_t errcap)
{
    const kc_store *k = kc_of(s);
    const kc_doc *d = &k->doc;
    int is_dir;
    if (kc_find(d, prefix, &is_dir))
        return ERR(ZF_ECORRUPT, "a value, not a directory");
    if (!is_dir)
        return ZF_ENOTFOUND;
    char under[ZF_KEY_MAX + 1], name[ZF_KEY_MAX];
    size_t pn = strlen(prefix);
    snprintf(under, sizeof under, "%s%s", prefix, pn ? "/" : "");
    pn = strlen(under);
    for (size_t i = kc_lower(d, under); i < d->n;) {
        const char *key = kc_key(d, &d->refs[i]);
        if (strncmp(key, under, pn))
            break;
        size_t len = strcspn(key + pn, "/");
        int dir = key[pn + len] == '/';
        snprintf(name, sizeof name, "%.*s", (int)len, key + pn);
        zf_store_entry e = {.name = name};
        if (dir) { /* every key under it follows: skip them */
            e.stamp.kind = ZF_STORE_DIR;
            char next[ZF_KEY_MAX + 1];
            snprintf(next, sizeof next, "%.*s0", (int)(pn + len), key); /* '0' follows '/' */
            i = kc_lower(d, next);
        } else {
            const kc_ref *r = &d->refs[i++];
            zf_stamp target = {0};
            uint64_t vlen = r->len;
            int rc = r->kind == KC_WHOLE && !(flags & ZF_LIST_KINDS)
                     ? ref_length(k, r, &vlen, &target, err, errcap) : ZF_OK;
            if (rc != ZF_OK)
                return rc;
            ref_stamp(k, r, vlen, &target, &e.stamp);
        }
        int rc = fn(ctx, &e);
        if (rc)
            return rc;
    }
    return ZF_OK;
}

/* .info's lines: the document, and the references of the array at path */
static void kc_describe(const zf_store *s, const char *path, zf_sbuf *out)
{
    const kc_store *k = kc_of(s);
    zf_sbuf_printf(out, "reference_set: %s (kerchunk version %d)\n", k->url, k->doc.version);
    if (!path)
        return;
    size_t counts[4] = {0};
    char under[ZF_KEY_MAX + 1];
    snprintf(under, sizeof under, "%s%s", path, *path ? "/" : "");
    size_t pn = strlen(under);
    for (size_t i = kc_lower(&k->doc, under); i < k->doc.n; i++) {
        const char *key = kc_key(&k->doc, &k->doc.refs[i]);
        if (strncmp(key, under, pn))
            break;
        if (key[pn] != '.' && !strchr(key + pn, '/')) /* its chunks, not metadata */
            counts[k->doc.refs[i].kind]++;
    }
    zf_sbuf_printf(out, "chunk_refs: %zu inline, %zu ranges, %zu whole files\n", counts[KC_INLINE],
                   counts[KC_RANGE], counts[KC_WHOLE]);
}

static void kc_close(zf_store *s)
{
    kc_store *k = s->impl;
    if (!k)
        return;
    kc_doc_free(&k->doc);
    zf_targets_free(k->targets);
    free(k->url);
    free(k);
}

static const zf_store_ops kc_ops = {
    .close = kc_close,
    .read = kc_read,
    .read_many = kc_read_many,
    .stamp = kc_stamp,
    .list = kc_list,
    .describe = kc_describe,
};

/* ------------------------------------------------------------ opening */

/* the consent of a reference set: the document's container, and -o virtual= */
static int make_targets(const char *url, const zf_kerchunk_opts *o, zf_targets **out, char *err,
                        size_t errcap)
{
    zf_consent *c = zf_consent_new();
    char cont[4096], why[200] = "";
    int rc = c ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK && zf_consent_container(url, cont, sizeof cont) != ZF_OK)
        rc = ERR(ZF_EINVAL, "the reference document's location has no form zarrfs can authorise");
    if (rc == ZF_OK)
        rc = zf_consent_add(c, cont, why, sizeof why);
    if (rc == ZF_OK && o->virtual_ok && (rc = zf_consent_add_list(c, o->virtual_ok, why, sizeof why)))
        rc = ERR(rc, "-o virtual=: %s", why);
    else if (rc == ZF_EINVAL && !(err && *err))
        rc = ERR(rc, "%s", why);
    if (rc != ZF_OK) {
        zf_consent_free(c);
        if (o->free_ctx)
            o->free_ctx(o->open_ctx);
        return rc;
    }
    *out = zf_targets_new(c, o->open_target, o->open_ctx, o->free_ctx); /* takes both */
    return *out ? ZF_OK : ZF_ENOMEM;
}

/* read and parse the document name of dir into k->doc; base for relative URLs */
static int load_doc(kc_store *k, const zf_store *dir, const char *name, const char *base,
                    char *err, size_t errcap)
{
    size_t limit = doc_limit(), n, len = 0;
    zf_store_buf b = {0};
    char *text = NULL;
    int rc = zf_store_read(dir, name, limit, &b, &n, NULL, err, errcap);
    if (rc == ZF_OK)
        rc = doc_text(name, &b, n, limit, &text, &len, err, errcap);
    if (rc == ZF_OK)
        rc = kc_parse(text, len, base, limit, &k->doc, err, errcap);
    free(b.p);
    free(text);
    return rc;
}

int zf_store_open_kerchunk(zf_store *dir, const char *name, const char *url,
                           const zf_kerchunk_opts *o, zf_store **out, char *err, size_t errcap)
{
    *out = NULL;
    zf_store *s = calloc(1, sizeof *s);
    kc_store *k = calloc(1, sizeof *k);
    char *base = NULL;
    size_t blen = strlen(url) - strlen(name); /* url ends in name */
    int rc = s && k && (s->name = strdup(url)) && (k->url = strdup(url)) &&
             (base = strndup(url, blen)) ? ZF_OK : ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = make_targets(url, o, &k->targets, err, errcap);
    else if (o->free_ctx)
        o->free_ctx(o->open_ctx);
    if (rc == ZF_OK)
        rc = load_doc(k, dir, name, base, err, errcap);
    if (rc == ZF_OK) {
        *s = (zf_store){.ops = &kc_ops, .impl = k, .name = s->name, .parallel = dir->parallel,
                        .remote = dir->remote, .budget_ms = dir->budget_ms, .immutable = 1};
        *out = s;
        k = NULL;
        s = NULL;
    }
    free(base);
    if (k)
        kc_close(&(zf_store){.impl = k});
    if (s)
        free(s->name);
    free(s);
    zf_store_close(dir);
    return rc;
}

int zf_kerchunk_parquet(const zf_store *s, char *err, size_t errcap)
{
    zf_store_buf b = {0};
    size_t n;
    const char *v;
    size_t vlen;
    zf_stamp st; /* a Parquet set's .zmetadata holds metadata only: small */
    int found = zf_store_stamp(s, ".zmetadata", &st) == ZF_OK && st.size <= PARQUET_META_MAX &&
                zf_store_read(s, ".zmetadata", PARQUET_META_MAX, &b, &n, NULL, NULL, 0) == ZF_OK &&
                zf_json_raw_member((const char *)b.p, n, "record_size", &v, &vlen) == ZF_OK;
    free(b.p);
    if (found)
        (void)ERR(ZF_EUNSUPPORTED, "a kerchunk Parquet reference set (.zmetadata with "
                  "\"record_size\", refs.N.parq), which zarrfs does not read: convert it to JSON");
    return found;
}

int zf_kerchunk_check(const char *text, size_t n, char *err, size_t errcap)
{
    kc_doc d;
    int rc = kc_parse(text, n, "/base/", DOC_MIN, &d, err, errcap);
    kc_doc_free(&d);
    return rc;
}
