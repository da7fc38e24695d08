/* store.c - the store interface: dispatch to the backend, shared helpers. */
#include "store/store.h"

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
