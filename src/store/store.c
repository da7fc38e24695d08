/* store.c - the store interface: dispatch to the backend, shared helpers. */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

_Static_assert(sizeof(zf_stamp) == 64, "zf_stamp has padding: digests would hash garbage");

void zf_store_close(zf_store *s)
{
    if (!s)
        return;
    s->ops->close(s);
    free(s->name);
    free(s);
}

const char *zf_store_path(const zf_store *s)
{
    return s->name;
}

void zf_store_credentials(const zf_store *s, char *out, size_t cap)
{
    if (cap)
        *out = '\0';
    if (s->credentials && cap)
        s->credentials(s, out, cap);
}

/* the reason buffer of a call: a zero-length one when the caller gave none */
static void clear_err(char *err, size_t errcap)
{
    if (err && errcap)
        *err = '\0';
}

int zf_store_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                  zf_stamp *st, char *err, size_t errcap)
{
    zf_stamp ignored;
    if (!st)
        st = &ignored;
    memset(st, 0, sizeof *st);
    clear_err(err, errcap);
    return s->ops->read(s, key, max, b, n, st, err, errcap);
}

int zf_store_read_range(const zf_store *s, const char *key, uint64_t off, size_t len,
                        uint8_t *buf, char *err, size_t errcap)
{
    zf_store_req r = {.key = key, .off = off, .len = len, .buf = buf, .err = err, .errcap = errcap};
    clear_err(err, errcap);
    return s->ops->read_many(s, &r, 1);
}

int zf_store_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        clear_err(reqs[i].err, reqs[i].errcap);
    return s->ops->read_many(s, reqs, n);
}

int zf_store_stamp_why(const zf_store *s, const char *key, zf_stamp *st, char *err,
                       size_t errcap)
{
    memset(st, 0, sizeof *st);
    clear_err(err, errcap);
    return s->ops->stamp(s, key, st, err, errcap);
}

int zf_store_stamp(const zf_store *s, const char *key, zf_stamp *st)
{
    return zf_store_stamp_why(s, key, st, NULL, 0);
}

int zf_store_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                  void *ctx, char *err, size_t errcap)
{
    clear_err(err, errcap);
    return s->ops->list(s, prefix, flags, fn, ctx, err, errcap);
}

int zf_store_update(const zf_store *s, zf_store **next, char *err, size_t errcap)
{
    *next = NULL;
    clear_err(err, errcap);
    return s->ops->update ? s->ops->update(s, next, err, errcap) : ZF_OK;
}

void zf_store_describe(const zf_store *s, const char *path, zf_sbuf *out)
{
    if (s->ops->describe)
        s->ops->describe(s, path, out);
}

int zf_store_buf_reserve(zf_store_buf *b, size_t n)
{
    if (n <= b->cap && b->p)
        return ZF_OK;
    size_t want = n ? n : 1; /* large buffers grow in place (mremap): no slack needed */
    uint8_t *p = realloc(b->p, want);
    if (!p)
        return ZF_ENOMEM;
    b->p = p;
    b->cap = want;
    return ZF_OK;
}

zf_fp zf_stamp_digest(const zf_stamp *st)
{
    zf_fp fp;
    zf_fp_init(&fp);
    zf_fp_add(&fp, st, sizeof *st);
    return fp;
}

zf_fp zf_stamp_version(const zf_stamp *st)
{
    if (!st->tag.a && !st->tag.b)
        return zf_stamp_digest(st);
    zf_stamp v;
    memset(&v, 0, sizeof v);
    v.kind = st->kind;
    v.size = st->size;
    v.tag = st->tag;
    return zf_stamp_digest(&v);
}

int64_t zf_stamp_time(const zf_stamp *st)
{
    return st->mtime > st->ctime ? st->mtime : st->ctime;
}

int zf_stamp_same_version(const zf_stamp *a, const zf_stamp *b)
{
    if (!memcmp(a, b, sizeof *a)) /* equal stamps: no digest needed */
        return 1;
    zf_fp x = zf_stamp_version(a), y = zf_stamp_version(b);
    return x.a == y.a && x.b == y.b;
}

void zf_stamp_object(zf_stamp *st, uint64_t size, int64_t mtime_ns, const char *tag)
{
    *st = (zf_stamp){.size = size, .mtime = mtime_ns / 1000000000 * 1000000000,
                     .kind = ZF_STORE_FILE};
    if (!tag)
        return;
    if (!strncmp(tag, "W/", 2))
        tag += 2;
    size_t n = strlen(tag);
    if (n >= 2 && tag[0] == '"' && tag[n - 1] == '"') {
        tag++;
        n -= 2;
    }
    if (n) {
        zf_fp_init(&st->tag);
        zf_fp_add(&st->tag, tag, n);
    }
}

int zf_store_list_key(char *key, size_t skip, const zf_stamp *st, zf_store_list_fn fn, void *ctx)
{
    if (strlen(key) <= skip)
        return 0; /* the prefix itself (a "directory marker" object) */
    char *name = key + skip;
    size_t len = strlen(name);
    if (st->kind == ZF_STORE_DIR && name[len - 1] == '/')
        name[--len] = '\0';
    if (!len || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return 0; /* "a//b", "a/./b", "a/../b": no name a directory may hold */
    zf_store_entry e = {.name = name, .stamp = *st};
    return fn(ctx, &e);
}

int zf_store_page_size(unsigned given, const char *var, unsigned max, unsigned *out, char *err,
                       size_t errcap)
{
    unsigned long v = given;
    const char *e = getenv(var);
    if (!v && e && *e) {
        char *end;
        v = strtoul(e, &end, 10);
        if (*end || !v)
            v = (unsigned long)max + 1;
    }
    if (v > max) {
        if (err && errcap)
            snprintf(err, errcap, "page size (%s): 1 to %u", var, max);
        return ZF_EINVAL;
    }
    *out = v ? (unsigned)v : max;
    return ZF_OK;
}

/* Most pages one listing reads before it gives up (a server looping on tokens). */
#define ZF_LIST_PAGES_MAX 1000000u

/* page number `page` of a listing failed: say which (the first has no number) */
static int page_failed(int rc, unsigned page, const char *why, char *err, size_t errcap)
{
    if (err && errcap && page)
        snprintf(err, errcap, "page %u of the listing: %s", page + 1, why);
    else if (err && errcap)
        snprintf(err, errcap, "%s", why);
    return rc;
}

int zf_store_list_pages(const zf_store_pages *pages, void *ctx, zf_store_list_fn fn, void *fnctx,
                        size_t *seen, char *err, size_t errcap)
{
    char *token = NULL;
    int rc = ZF_OK;
    for (unsigned page = 0;; page++) {
        char why[400] = "more than a million pages", *next = NULL;
        rc = page < ZF_LIST_PAGES_MAX ? pages->read(ctx, page, token, &next, why, sizeof why)
                                      : ZF_EIO;
        if (rc != ZF_OK) /* a 404 after pages came: not "nothing there" */
            rc = page_failed(rc == ZF_ENOTFOUND && page ? ZF_EIO : rc, page, why, err, errcap);
        if (rc == ZF_OK)
            rc = pages->emit(ctx, fn, fnctx, seen);
        pages->done(ctx);
        /* an empty page with a token (GCS sends them): nothing known yet */
        int more = rc == ZF_OK && next && (fn || !*seen);
        if (more && token && !strcmp(token, next)) {
            snprintf(why, sizeof why, "the same %s again", pages->token_name);
            rc = page_failed(ZF_EIO, page, why, err, errcap);
            more = 0;
        }
        free(token);
        token = more ? next : NULL;
        if (!more)
            free(next);
        if (!more)
            break;
    }
    free(token);
    return rc;
}
