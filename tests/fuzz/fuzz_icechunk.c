/* fuzz_icechunk.c - libFuzzer target: an Icechunk repository as a hostile
 * writer might leave it.
 *
 * The input is a repo file's payload, a snapshot's and any number of
 * manifests' (uncompressed FlatBuffers, the way the writer builds them),
 * separated by the line "--ICE--".  An in-memory store serves them with
 * their 39-byte headers: `repo`, every `snapshots/ID` (the snapshot), every
 * `manifests/ID` (the manifest part whose own id is ID), `chunks/ID` (64
 * bytes).  The repository is opened at branch main; when it opens, the
 * whole key space is listed (each directory, depth and entries bounded),
 * every value read whole and in ranges and stamped, .info's lines asked
 * for every node, and the branch re-checked.  Errors must be one of the
 * documented codes, with a reason where the contract gives one; a listing
 * entry must be a name (no '/', not empty); a read value must have the size
 * its stamp says.  Virtual chunks are allowed under a prefix whose opener
 * refuses, so their locations are parsed but nothing outside is opened.
 *
 * Seeds: tests/fuzz/make_ic_seeds.py (the spec 2 test repositories).
 * Build: scripts/fuzz (or CMake with -DZF_FUZZ=ON, clang). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/flatbuf.h"
#include "base/sbuf.h"
#include "store/icechunk.h"
#include "store/store.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "fuzz_icechunk: check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                                  \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

#define MAX_PARTS 18
#define MAX_ENTRIES 3000
#define MAX_DEPTH 10

static const char sep[] = "\n--ICE--\n";

typedef struct part {
    uint8_t *data; /* header + payload */
    size_t len;
    uint8_t id[12];
    int has_id;
} part;

typedef struct mem {
    part parts[MAX_PARTS];
    int n;
    uint8_t chunk[64];
} mem;

static const uint8_t magic[12] = {'I', 'C', 'E', 0xF0, 0x9F, 0xA7, 0x8A, 'C', 'H', 'U', 'N', 'K'};

/* payload p (n bytes) as a metadata file of type */
static void make_part(part *pt, const uint8_t *p, size_t n, uint8_t type)
{
    pt->len = 39 + n;
    pt->data = malloc(pt->len);
    memcpy(pt->data, magic, 12);
    memset(pt->data + 12, ' ', 24);
    memcpy(pt->data + 12, "fuzz", 4);
    pt->data[36] = 2, pt->data[37] = type, pt->data[38] = 0;
    memcpy(pt->data + 39, p, n);
    zf_fb_table t;
    const uint8_t *id;
    pt->has_id = zf_fb_root(p, n, &t) == ZF_OK && zf_fb_struct(&t, 0, 12, &id) == ZF_OK;
    if (pt->has_id)
        memcpy(pt->id, id, 12);
}

/* the 12 bytes a key's last 20 base-32 characters name (no check: a fuzzer's own ids) */
static int key_id(const char *key, const char *dir, uint8_t id[12])
{
    size_t dl = strlen(dir);
    if (strncmp(key, dir, dl) || strlen(key + dl) != 20)
        return -1;
    static const char digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    unsigned acc = 0, bits = 0, k = 0;
    for (const char *c = key + dl; *c; c++) {
        const char *p = strchr(digits, *c);
        if (!p)
            return -1;
        acc = acc << 5 | (unsigned)(p - digits);
        bits += 5;
        if (bits >= 8 && k < 12) {
            id[k++] = (uint8_t)(acc >> (bits - 8));
            bits -= 8;
        }
    }
    return 0;
}

/* the value of key, or NULL */
static const uint8_t *value(const mem *m, const char *key, size_t *n)
{
    uint8_t id[12];
    if (!strcmp(key, "repo") && m->n > 0) {
        *n = m->parts[0].len;
        return m->parts[0].data;
    }
    if (key_id(key, "snapshots/", id) == 0 && m->n > 1) {
        *n = m->parts[1].len;
        return m->parts[1].data;
    }
    if (key_id(key, "manifests/", id) == 0)
        for (int i = 2; i < m->n; i++)
            if (m->parts[i].has_id && !memcmp(m->parts[i].id, id, 12)) {
                *n = m->parts[i].len;
                return m->parts[i].data;
            }
    if (key_id(key, "chunks/", id) == 0) {
        *n = sizeof m->chunk;
        return m->chunk;
    }
    return NULL;
}

static void stamp_of(const char *key, size_t n, zf_stamp *st)
{
    memset(st, 0, sizeof *st);
    st->kind = ZF_STORE_FILE;
    st->size = n;
    zf_fp_init(&st->tag);
    zf_fp_add(&st->tag, key, strlen(key));
}

static int mem_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                    zf_stamp *st, char *err, size_t errcap)
{
    size_t len;
    const uint8_t *v = value(s->impl, key, &len);
    if (!v)
        return ZF_ENOTFOUND;
    if (len > max) {
        snprintf(err, errcap, "too large");
        return ZF_ECORRUPT;
    }
    if (zf_store_buf_reserve(b, len) != ZF_OK)
        return ZF_ENOMEM;
    memcpy(b->p, v, len);
    *n = len;
    stamp_of(key, len, st);
    return ZF_OK;
}

static int mem_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    int first = ZF_OK;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const uint8_t *v = value(s->impl, reqs[i].key, &len);
        reqs[i].rc = !v ? ZF_ENOTFOUND : reqs[i].off > len || reqs[i].len > len - reqs[i].off
                                             ? ZF_ECORRUPT : ZF_OK;
        if (reqs[i].rc == ZF_OK)
            memcpy(reqs[i].buf, v + reqs[i].off, reqs[i].len);
        else if (reqs[i].err && reqs[i].errcap)
            snprintf(reqs[i].err, reqs[i].errcap, "no such range");
        if (reqs[i].rc != ZF_OK && first == ZF_OK)
            first = reqs[i].rc;
    }
    return first;
}

static int mem_stamp(const zf_store *s, const char *key, zf_stamp *st, char *err, size_t errcap)
{
    (void)err;
    (void)errcap;
    size_t len;
    if (!value(s->impl, key, &len))
        return ZF_ENOTFOUND;
    stamp_of(key, len, st);
    return ZF_OK;
}

static int mem_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                    void *ctx, char *err, size_t errcap)
{
    (void)s, (void)prefix, (void)flags, (void)fn, (void)ctx, (void)err, (void)errcap;
    return ZF_ENOTFOUND; /* only spec 1 lists (refs/), and this is spec 2 */
}

static void mem_close(zf_store *s)
{
    mem *m = s->impl;
    for (int i = 0; i < m->n; i++)
        free(m->parts[i].data);
    free(m);
}

static const zf_store_ops mem_ops = {.close = mem_close, .read = mem_read,
                                     .read_many = mem_read_many, .stamp = mem_stamp,
                                     .list = mem_list};

static int refuse(void *ctx, const char *spec, zf_store **out, char *err, size_t errcap)
{
    (void)ctx, (void)spec, (void)out;
    snprintf(err, errcap, "no outside stores in the fuzzer");
    return ZF_EIO;
}

/* ------------------------------------------------------------ the walk */

typedef struct walk {
    const zf_store *s;
    char keys[64][512];  /* entries of one listing to visit (copied: names are the call's) */
    int kinds[64];
    int n;
    long *budget;
} walk;

static int collect(void *arg, const zf_store_entry *e)
{
    walk *w = arg;
    CHECK(e->name && *e->name && !strchr(e->name, '/'));
    CHECK(e->stamp.kind == ZF_STORE_FILE || e->stamp.kind == ZF_STORE_DIR);
    if (w->n < 64) {
        snprintf(w->keys[w->n], sizeof w->keys[0], "%s", e->name);
        w->kinds[w->n++] = (int)e->stamp.kind;
    }
    return --*w->budget > 0 ? 0 : 1;
}

static void visit_value(const zf_store *s, const char *key)
{
    zf_store_buf b = {NULL, 0};
    size_t n = 0;
    zf_stamp st, st2;
    char err[256];
    int rc = zf_store_read(s, key, 1 << 20, &b, &n, &st, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ENOTFOUND || rc == ZF_ECORRUPT || rc == ZF_EIO || rc == ZF_ENOMEM ||
          rc == ZF_EUNSUPPORTED);
    if (rc == ZF_OK) {
        CHECK(st.kind == ZF_STORE_FILE && st.size == n);
        CHECK(zf_store_stamp(s, key, &st2) == ZF_OK && st2.size == n);
        uint8_t r[3][8];
        zf_store_req q[3] = {{.key = key, .off = 0, .len = n < 8 ? n : 8, .buf = r[0]},
                             {.key = key, .off = n / 2, .len = n - n / 2 < 8 ? n - n / 2 : 8, .buf = r[1]},
                             {.key = key, .off = n, .len = 1, .buf = r[2]}};
        zf_store_read_many(s, q, 3);
        CHECK(q[0].rc == ZF_OK && !memcmp(r[0], b.p, q[0].len));
        CHECK(q[1].rc == ZF_OK && !memcmp(r[1], b.p + n / 2, q[1].len));
        CHECK(q[2].rc != ZF_OK);
    }
    free(b.p);
}

static void visit(const zf_store *s, const char *prefix, int depth, long *budget)
{
    walk *w = calloc(1, sizeof *w);
    w->s = s;
    w->budget = budget;
    char why[256] = "";
    int rc = zf_store_list(s, prefix, 0, collect, w, why, sizeof why);
    CHECK(rc >= ZF_ETIMEDOUT);
    zf_sbuf info = {0};
    zf_store_describe(s, prefix, &info);
    free(info.data);
    for (int i = 0; i < w->n && *budget > 0; i++) {
        char key[1100];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "/" : "", w->keys[i]);
        if (w->kinds[i] == ZF_STORE_DIR && depth < MAX_DEPTH)
            visit(s, key, depth + 1, budget);
        else if (w->kinds[i] == ZF_STORE_FILE)
            visit_value(s, key);
    }
    free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mem *m = calloc(1, sizeof *m);
    size_t pos = 0;
    while (m->n < MAX_PARTS && pos <= size) {
        const uint8_t *end = memmem(data + pos, size - pos, sep, sizeof sep - 1);
        size_t n = end ? (size_t)(end - (data + pos)) : size - pos;
        make_part(&m->parts[m->n], data + pos, n, m->n == 0 ? 6 : m->n == 1 ? 1 : 2);
        m->n++;
        pos += n + sizeof sep - 1;
        if (!end)
            break;
    }
    zf_store *raw = calloc(1, sizeof *raw);
    raw->ops = &mem_ops;
    raw->impl = m;
    raw->name = strdup("mem");
    raw->parallel = 1;
    raw->remote = 1; /* the manifests prefetched at open, too */
    zf_icechunk_opts o = {.virtual_ok = "file:///zf-fuzz/,s3://zf-fuzz/", .cache_bytes = 4 << 20,
                          .open_target = refuse};
    zf_store *s = NULL;
    char err[512] = "";
    int rc = zf_store_open_icechunk(raw, 2, &o, &s, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ENOTFOUND || rc == ZF_ECORRUPT || rc == ZF_EUNSUPPORTED ||
          rc == ZF_EIO || rc == ZF_ENOMEM || rc == ZF_EINVAL);
    CHECK(rc == ZF_OK || rc == ZF_ENOMEM || (*err && strlen(err) < sizeof err));
    if (rc == ZF_OK) {
        long budget = MAX_ENTRIES;
        visit(s, "", 0, &budget);
        zf_store *next = NULL;
        rc = zf_store_update(s, &next, err, sizeof err);
        CHECK(rc != ZF_OK || next == NULL); /* the same repo file: the same snapshot */
        zf_store_close(s);
    }
    return 0;
}
