/* fuzz_idx.c - libFuzzer target: persisted offset indexes (view/idxcache.h)
 * are untrusted input.
 *
 * LLVMFuzzerInitialize makes a fixed store in a temp dir (in $ZF_FUZZ_TMP or
 * the working directory; removed at exit when libFuzzer runs atexit
 * handlers) and a cache directory beside it:
 *   t     v3 [100,90] timedelta64[ns] chunks [32,32], dimension names x, y
 *         (no coordinates: index columns), every chunk stored
 *   when  v3 [7000] datetime64[s] chunks [3000], dimension i, attribute
 *         coordinates "dur": a labelled .csv (the int32 coordinate i, the
 *         time coordinate dur) whose index carries per-block value formats
 *   dur   v3 [7000] timedelta64[h] chunks [7000], dimension i (labelled by i)
 *   i     v3 [7000] int32 (a coordinate, not shown)
 *   sp    v3 [150,150] timedelta64[s] chunks [30,30], fill NaT, two chunks
 *         stored (6 offset blocks, most sized arithmetically)
 * It reads every view once without an index (the expected text), then sizes
 * each array with the cache directory and keeps the index file that made
 * (the genuine file) and its name.
 *
 * Each input picks an array and makes an index file for it from the genuine
 * one: byte 0 the array, byte 1 the kind: even: the genuine file patched by
 * 11-byte records (op, word index u16, value u64, little-endian; ops by op %
 * 5: 0 xor, 1 add, 2 set a 64-bit word (the last one may be partial), 3
 * resize the file to value % (its length + 64) bytes, 4 add the 16-bit delta
 * value & 0xffff to a run of (value >> 16 & 0xffff) + 1 words); odd:
 * the genuine header (magic, fingerprint, count: 32 bytes) then the rest of
 * the input as the body.  The file is written under the genuine name, a tree
 * is built over the store with the cache directory, and both text views of
 * the array are sized and read (whole, in pieces, at input-derived offsets,
 * exact-size heap buffers).  Checks:
 *   - an index that was discarded (the file on disk is the genuine one
 *     again after sizing: the array was sized afresh and saved) or that
 *     equals the genuine one gives exactly the expected text and sizes;
 *   - an index that was kept (a mutation its checks cannot see: offsets
 *     within the bounds the metadata allows) starts the .txt at 0 and the
 *     .csv at its header's length (a labelled one, whose index holds its
 *     value lines alone, at 0), totals below 2^62, and every read returns
 *     at most what was asked and what the size allows, without a sanitizer
 *     report: never memory past a buffer, never a read that runs on. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"
#include "chunk/cache.h"
#include "store/store.h"
#include "tree/tree.h"
#include "view/layout.h"

#define FUZZ_NAME "fuzz_idx"
#include "fuzz_util.h"

/* ------------------------------------------------------------ the store */

static char top[4096], root[4200], cachedir[4200];

static void put(const char *rel, const void *data, size_t n)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) { /* parents */
        *s = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            die("cannot mkdir %s: %s", path, strerror(errno));
        *s = '/';
    }
    write_file(path, data, n);
}

static void put_text(const char *rel, const char *text)
{
    put(rel, text, strlen(text));
}

/* zarr.json of a v3 array with the bytes codec */
static void put_meta(const char *name, const char *shape, const char *chunks, const char *dtype,
                     const char *fill, const char *dims, const char *attrs)
{
    char rel[256], text[2048];
    snprintf(rel, sizeof rel, "%s/zarr.json", name);
    snprintf(text, sizeof text,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":%s,\"data_type\":%s,"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":%s}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":%s,"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
             "\"attributes\":%s,\"dimension_names\":%s}",
             shape, dtype, chunks, fill, attrs, dims);
    put_text(rel, text);
}

/* a deterministic value stream with texts of many lengths */
static uint64_t gen_state = 0x9E3779B97F4A7C15ull;
static int64_t gen(int64_t span)
{
    gen_state ^= gen_state << 13;
    gen_state ^= gen_state >> 7;
    gen_state ^= gen_state << 17;
    int64_t v = (int64_t)(gen_state % (uint64_t)span);
    return gen_state % 97 == 0 ? INT64_MIN : gen_state & 1 ? -v : v; /* NaT now and then */
}

/* chunk rel of n int64 values of magnitude below span (0: i itself) */
static void put_chunk64(const char *rel, size_t n, int64_t span, int64_t base)
{
    int64_t *v = malloc(n * 8);
    CHECK(v);
    for (size_t i = 0; i < n; i++)
        v[i] = span ? gen(span) : base + (int64_t)i;
    put(rel, v, n * 8);
    free(v);
}

static void cleanup(void)
{
    rm_tree(top);
}

static void make_store(void)
{
    put_text("zarr.json", "{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{}}");
    static const char *td_ns = "{\"name\":\"numpy.timedelta64\",\"configuration\":"
                               "{\"unit\":\"ns\",\"scale_factor\":1}}";
    put_meta("t", "[100,90]", "[32,32]", td_ns, "0", "[\"x\",\"y\"]", "{}");
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            char rel[64];
            snprintf(rel, sizeof rel, "t/c/%d/%d", a, b);
            put_chunk64(rel, 32 * 32, a == 1 ? 86400000000000LL * 40 : (int64_t)1 << (20 + 9 * b),
                        0);
        }
    put_meta("when", "[7000]", "[3000]",
             "{\"name\":\"numpy.datetime64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":1}}",
             "\"NaT\"", "[\"i\"]", "{\"coordinates\":\"dur\"}");
    for (int c = 0; c < 3; c++) { /* whole days in the first chunk, seconds after */
        char rel[64];
        snprintf(rel, sizeof rel, "when/c/%d", c);
        int64_t *v = malloc(3000 * 8);
        CHECK(v);
        for (int i = 0; i < 3000; i++)
            v[i] = 1700000000LL / 86400 * 86400 + (c ? gen(100000000) : 86400 * (i % 50));
        put(rel, v, 3000 * 8);
        free(v);
    }
    put_meta("dur", "[7000]", "[7000]",
             "{\"name\":\"numpy.timedelta64\",\"configuration\":{\"unit\":\"h\",\"scale_factor\":1}}",
             "\"NaT\"", "[\"i\"]", "{}");
    put_chunk64("dur/c/0", 7000, 1000000, 0);
    put_meta("i", "[7000]", "[7000]", "\"int32\"", "0", "[\"i\"]", "{}");
    int32_t *iv = malloc(7000 * 4);
    CHECK(iv);
    for (int k = 0; k < 7000; k++)
        iv[k] = k * 37 - 5000;
    put("i/c/0", iv, 7000 * 4);
    free(iv);
    put_meta("sp", "[150,150]", "[30,30]",
             "{\"name\":\"numpy.timedelta64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":1}}",
             "\"NaT\"", "[null,null]", "{}");
    put_chunk64("sp/c/0/0", 30 * 30, 1000000000, 0);
    put_chunk64("sp/c/3/4", 30 * 30, 1000, 0);
}

/* ---------------------------------------------------- what each array is */

typedef struct target {
    const char *name;
    char *expect[2];  /* the text of .txt, .csv (fresh pass, no index) */
    size_t len[2];
    size_t csv_header;/* length of the .csv header line */
    int labelled;     /* its index holds the .csv's value lines alone (from 0) */
    char idx[300];    /* the genuine index file's name in the cache dir */
    uint8_t *file;    /* its bytes */
    size_t file_len;
} target;

static target targets[] = {{.name = "t"}, {.name = "when", .labelled = 1},
                           {.name = "dur", .labelled = 1}, {.name = "sp"}};
#define NTARGETS (sizeof targets / sizeof targets[0])

static const zf_layout_opts base_opts = {.format = ZF_FORMAT_PANDAS, .nat = "NaT", .threads = 1};

/* a tree over the store (index_dir: the cache dir, or NULL), with its store and cache */
typedef struct mount {
    zf_store *store;
    zf_cache *cache;
    zf_tree *tree;
} mount;

static void mount_open(mount *m, const char *index_dir)
{
    zf_layout_opts o = base_opts;
    o.index_dir = index_dir;
    CHECK(zf_store_open_local(root, 0, &m->store) == ZF_OK);
    CHECK((m->cache = zf_cache_new((size_t)64 << 20)));
    int rc = zf_tree_build(m->store, m->cache, &o, &m->tree);
    if (rc)
        die("zf_tree_build failed: %d", rc);
}

static void mount_close(mount *m)
{
    zf_tree_free(m->tree);
    zf_cache_free(m->cache);
    zf_store_close(m->store);
}

static zf_layout *layout_of(const mount *m, const char *name, zf_view v)
{
    char fname[64];
    snprintf(fname, sizeof fname, "%s.%s", name, v == ZF_VIEW_TXT ? "txt" : "csv");
    const zf_node *n = zf_tree_lookup(m->tree, ZF_ROOT_INO, fname);
    if (!n)
        die("%s is not shown", fname);
    return n->layout;
}

/* the whole text of a view, freshly sized */
static char *read_all(zf_layout *l, zf_view v, size_t *len)
{
    uint64_t size = 0;
    CHECK(zf_layout_size(l, v, &size) == ZF_OK && size < ((uint64_t)1 << 30));
    char *buf = malloc(size ? (size_t)size : 1);
    size_t got = 0;
    CHECK(buf && zf_layout_read(l, v, 0, buf, (size_t)size, &got) == ZF_OK && got == size);
    *len = (size_t)size;
    return buf;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    uint8_t *p = malloc((size_t)st.st_size + 1);
    CHECK(p);
    size_t n = 0;
    for (ssize_t r; n < (size_t)st.st_size && (r = read(fd, p + n, (size_t)st.st_size - n)) > 0;)
        n += (size_t)r;
    close(fd);
    *len = n;
    return p;
}

/* the one .idx file of the cache dir not in names[0..n) */
static void new_index(char names[][300], size_t n, char *out)
{
    DIR *d = opendir(cachedir);
    CHECK(d);
    struct dirent *e;
    out[0] = '\0';
    while ((e = readdir(d))) {
        size_t k = strlen(e->d_name);
        if (k < 5 || strcmp(e->d_name + k - 4, ".idx"))
            continue;
        int seen = 0;
        for (size_t i = 0; i < n; i++)
            seen |= !strcmp(names[i], e->d_name);
        if (!seen) {
            CHECK(!out[0]);
            snprintf(out, 300, "%s", e->d_name);
        }
    }
    closedir(d);
    CHECK(out[0]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    err_fd = dup(2);
    if (err_fd < 0)
        err_fd = 2;
    zf_log_set_level(getenv("ZF_FUZZ_LOG") ? ZF_LOG_DEBUG : ZF_LOG_ERROR);
    const char *tmp = getenv("ZF_FUZZ_TMP");
    char dir[sizeof top];
    snprintf(dir, sizeof dir, "%s/zf-fuzz-idx.XXXXXX", tmp && *tmp ? tmp : ".");
    if (!mkdtemp(dir) || !realpath(dir, top))
        die("cannot make a temp dir in %s: %s", tmp && *tmp ? tmp : ".", strerror(errno));
    if (!getenv("ZF_FUZZ_KEEP"))
        atexit(cleanup);
    else
        fprintf(stderr, "store: %s\n", top);
    snprintf(root, sizeof root, "%s/store", top);
    snprintf(cachedir, sizeof cachedir, "%s/cache", top);
    CHECK(mkdir(root, 0755) == 0);
    make_store();
    mount m;
    mount_open(&m, NULL);
    for (size_t i = 0; i < NTARGETS; i++) {
        target *t = &targets[i];
        for (int v = 0; v < 2; v++)
            t->expect[v] = read_all(layout_of(&m, t->name, (zf_view)v), (zf_view)v, &t->len[v]);
        const char *nl = memchr(t->expect[1], '\n', t->len[1]);
        CHECK(nl);
        t->csv_header = (size_t)(nl + 1 - t->expect[1]);
    }
    mount_close(&m);
    char names[NTARGETS][300];
    for (size_t i = 0; i < NTARGETS; i++) { /* each array's index, one at a time */
        target *t = &targets[i];
        mount_open(&m, cachedir);
        size_t len;
        free(read_all(layout_of(&m, t->name, ZF_VIEW_TXT), ZF_VIEW_TXT, &len));
        mount_close(&m);
        new_index(names, i, t->idx);
        snprintf(names[i], sizeof names[i], "%s", t->idx);
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", cachedir, t->idx);
        CHECK((t->file = slurp(path, &t->file_len)) && t->file_len > 32);
    }
    return 0;
}

/* ---------------------------------------------------------- the mutations */

/* the genuine file patched by the input's records; *len its length */
static uint8_t *patched(const target *t, input *in, size_t *len)
{
    size_t n = t->file_len, cap = n + 4096;
    uint8_t *f = calloc(1, cap);
    CHECK(f);
    memcpy(f, t->file, n);
    while (in->pos + 11 <= in->n) {
        uint8_t op = in_byte(in);
        size_t words = (n + 7) / 8, w = (size_t)in_uint(in, 2); /* the last one may be partial */
        uint64_t val = in_uint(in, 8), word = 0;
        if (op % 5 == 3) { /* resize, zero-filled */
            size_t to = (size_t)(val % (t->file_len + 64));
            if (to > n)
                memset(f + n, 0, to - n);
            n = to;
            continue;
        }
        if (!words)
            continue;
        w %= words;
        size_t run = op % 5 == 4 ? (size_t)(val >> 16 & 0xffff) % (words - w) + 1 : 1;
        for (size_t k = w; k < w + run; k++) {
            size_t bytes = n - 8 * k < 8 ? n - 8 * k : 8;
            word = 0;
            memcpy(&word, f + 8 * k, bytes);
            switch (op % 5) {
            case 0: word ^= val; break;
            case 1: word += val; break;
            case 2: word = val; break;
            default: word += (uint64_t)(int64_t)(int16_t)(val & 0xffff); break;
            }
            memcpy(f + 8 * k, &word, bytes);
        }
    }
    *len = n;
    return f;
}

/* the genuine 32-byte header, then the rest of the input */
static uint8_t *random_body(const target *t, input *in, size_t *len)
{
    size_t body = in->n - in->pos;
    uint8_t *f = malloc(32 + body);
    CHECK(f);
    memcpy(f, t->file, 32);
    memcpy(f + 32, in->p + in->pos, body);
    *len = 32 + body;
    return f;
}

/* ------------------------------------------------------------- the checks */

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* read [off, off+len) into an exact-size buffer; exact: compare with want */
static void check_read(zf_layout *l, zf_view v, uint64_t size, uint64_t off, size_t len,
                       const char *want, int exact, const char *what)
{
    char *buf = malloc(len ? len : 1);
    CHECK(buf);
    size_t got = 0;
    int rc = zf_layout_read(l, v, off, buf, len, &got);
    uint64_t avail = off < size ? size - off : 0;
    size_t most = len < avail ? len : (size_t)avail;
    if (rc != ZF_OK || got > most)
        die("%s: read(%llu, %zu): rc %d, %zu bytes (at most %zu)", what, (unsigned long long)off,
            len, rc, got, most);
    if (exact && (got != most || memcmp(buf, want + off, got)))
        die("%s: read(%llu, %zu) is not the expected text", what, (unsigned long long)off, len);
    free(buf);
}

static void check_view(zf_layout *l, zf_view v, const target *t, int exact, const char *what)
{
    uint64_t size = 0;
    int rc = zf_layout_size(l, v, &size);
    if (rc != ZF_OK)
        die("%s: size failed: %d", what, rc);
    if (exact && size != t->len[v])
        die("%s: size %llu, expected %zu", what, (unsigned long long)size, t->len[v]);
    CHECK(size < ((uint64_t)1 << 62));
    check_read(l, v, size, 0, (size_t)(size < (1u << 24) ? size : 1u << 24), t->expect[v], exact,
               what);
    for (int i = 0; i < 10; i++) {
        uint64_t off = rng() % (size + 16);
        check_read(l, v, size, off, (size_t)(rng() % (i < 6 ? 100 : 5000)), t->expect[v], exact,
                   what);
    }
    check_read(l, v, size, t->csv_header > 2 ? t->csv_header - 2 : 0, 300, t->expect[v], exact,
               what);
    size_t piece = 100 + (size_t)(rng() % 20000);
    char *buf = malloc(piece);
    CHECK(buf);
    uint64_t pos = size > 100000 ? rng() % size : 0; /* 64 pieces from there */
    for (int k = 0; k < 64; k++) {
        size_t got = 0;
        CHECK(zf_layout_read(l, v, pos, buf, piece, &got) == ZF_OK && got <= piece);
        if (exact && memcmp(buf, t->expect[v] + pos, got))
            die("%s: the piece at %llu differs", what, (unsigned long long)pos);
        if (!got)
            break;
        pos += got;
        CHECK(pos <= size);
    }
    if (exact && pos < size && piece * 64 > size)
        die("%s: pieces add up to %llu of %llu", what, (unsigned long long)pos,
            (unsigned long long)size);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size, 0};
    target *t = &targets[in_byte(&in) % NTARGETS];
    int kind = in_byte(&in) & 1;
    size_t flen;
    uint8_t *f = kind ? random_body(t, &in, &flen) : patched(t, &in, &flen);
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", cachedir, t->idx);
    unlink(path);
    write_file(path, f, flen);
    rng_state = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < size; i++)
        rng_state = (rng_state ^ data[i]) * 0x100000001B3ull;
    rng_state |= 1;

    mount m;
    mount_open(&m, cachedir);
    zf_layout *l = layout_of(&m, t->name, ZF_VIEW_TXT);
    uint64_t s0 = 0, s1 = 0;
    CHECK(zf_layout_size(l, ZF_VIEW_TXT, &s0) == ZF_OK);
    CHECK(zf_layout_size(l, ZF_VIEW_CSV, &s1) == ZF_OK);
    size_t now_len = 0;
    uint8_t *now = slurp(path, &now_len);
    int genuine = flen == t->file_len && !memcmp(f, t->file, flen);
    int rewritten = now && now_len == t->file_len && !memcmp(now, t->file, now_len);
    int exact = genuine || rewritten;
    char what[64];
    snprintf(what, sizeof what, "%s.txt%s", t->name, exact ? "" : " (kept index)");
    check_view(l, ZF_VIEW_TXT, t, exact, what);
    snprintf(what, sizeof what, "%s.csv%s", t->name, exact ? "" : " (kept index)");
    check_view(l, ZF_VIEW_CSV, t, exact, what);
    if (!exact) { /* kept: what a kept index must hold */
        uint64_t n, off0, off1;
        CHECK(flen >= 32);
        memcpy(&n, f + 24, 8);
        if (n == 0 || n > (flen - 32) / 16)
            die("%s: an index of %llu entries in %zu bytes was kept", t->name,
                (unsigned long long)n, flen);
        memcpy(&off0, f + 32, 8);
        memcpy(&off1, f + 32 + 8 * n, 8);
        size_t want = t->labelled ? 0 : t->csv_header; /* (labels: added when sized) */
        if (off0 != 0 || off1 != want)
            die("%s: an index whose text starts at %llu, %llu was kept (want 0, %zu)", t->name,
                (unsigned long long)off0, (unsigned long long)off1, want);
    }
    mount_close(&m);
    free(now);
    free(f);
    return 0;
}
