/* corebench - where does zarrfs's time go?  Times the stages of the core
 * library (no FUSE) on one array of a store:
 *
 *   corebench STORE ARRAY_PATH [REPEATS [decode|pass]]   (the last two: one stage, for perf)
 *
 *   decode      read + decode every chunk once, 1 thread (zf_array_get_chunk
 *               through a cache too small to hit)
 *   fmt_len     zf_fmt_len over every decoded value, 1 thread (ns/value)
 *   fmt_value   zf_fmt_value over every decoded value, 1 thread (ns/value)
 *   pass/1      the size pass (zf_layout_size) with 1 thread, fresh layout
 *   pass/N      the size pass with one thread per CPU (what a mount does)
 *   read/cold   zf_layout_read of the whole .txt in 1 MiB requests, chunks
 *               not cached (what a cold `cat` asks of the core), 1 thread
 *   read/pf     read/cold as a sequential reader (a cursor, as fs/ops.c
 *               keeps) over a cache with one prefetch thread: decoding
 *               ahead overlaps formatting
 *   read/warm   the same with every chunk already decoded in the cache
 *               (formatting + emission alone)
 *
 * Figures are medians of REPEATS (default 3).  Built by scripts/bench from
 * build-rel/libzfcore.a; a diagnostic, not a target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "tree/tree.h"

static size_t REQ = 1u << 20; /* request size (env CB_REQ: the FUSE reads are 128 KiB) */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct env {
    zf_store *store;
    zf_cache *cache;
    zf_tree *tree;
    const zf_node *node;
} env;

static const zf_node *find(const zf_tree *t, const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s.txt", path);
    const zf_node *n = zf_tree_node(t, ZF_ROOT_INO);
    for (char *save = NULL, *part = strtok_r(buf, "/", &save); part && n;
         part = strtok_r(NULL, "/", &save))
        n = zf_tree_lookup(t, n->ino, part);
    return n && !n->is_dir ? n : NULL;
}

/* a fresh tree (unsized layouts, no persisted index) over a cache of cap bytes */
static int open_env(env *e, const char *store, const char *path, size_t cap, unsigned threads)
{
    memset(e, 0, sizeof *e);
    zf_layout_opts o = {.format = ZF_FORMAT_PANDAS, .nat = "NaT", .threads = threads};
    if (zf_store_open_local(store, 0, &e->store) || !(e->cache = zf_cache_new(cap)) ||
        zf_tree_build(e->store, e->cache, &o, &e->tree) || !(e->node = find(e->tree, path))) {
        fprintf(stderr, "corebench: cannot open %s / %s\n", store, path);
        return -1;
    }
    return 0;
}

static void close_env(env *e)
{
    zf_tree_free(e->tree);
    zf_cache_free(e->cache);
    zf_store_close(e->store);
}

/* read + decode every chunk of the array once, 1 thread, through a cache of
 * one chunk (so nothing hits); returns seconds, or -1 */
static double decode_all(const char *storep, const char *path, uint64_t *nelems)
{
    zf_store *st = NULL;
    char key[4096];
    zf_store_buf text = {NULL, 0};
    size_t n = 0;
    zf_meta m;
    zf_node_kind kind;
    char err[256];
    memset(&m, 0, sizeof m);
    snprintf(key, sizeof key, "%s/zarr.json", path);
    if (zf_store_open_local(storep, 0, &st) ||
        zf_store_read(st, key, 1 << 24, &text, &n, NULL, err, sizeof err) ||
        zf_meta_parse_v3((const char *)text.p, n, &kind, &m, err, sizeof err))
        return -1;
    free(text.p);
    *nelems = m.nelems;
    zf_cache *c = zf_cache_new(1);
    zf_array *a = c ? zf_array_new(st, path, &m, c) : NULL;
    if (!a)
        return -1;
    double t0 = now();
    for (uint64_t i = 0; i < zf_array_nchunks(a); i++) {
        zf_chunk *ch;
        if (zf_array_get_chunk(a, i, &ch))
            return -1;
        zf_array_put_chunk(a, ch);
    }
    double t = now() - t0;
    zf_array_free(a);
    zf_cache_free(c);
    zf_store_close(st);
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: corebench STORE ARRAY_PATH [REPEATS]\n");
        return 2;
    }
    const char *store = argv[1], *path = argv[2];
    if (getenv("CB_REQ") && atol(getenv("CB_REQ")) > 0)
        REQ = (size_t)atol(getenv("CB_REQ"));
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    if (argc > 4 && !strcmp(argv[4], "decode")) { /* decode only, for perf record */
        uint64_t nv;
        for (int r = 0; r < reps; r++)
            printf("decode %.1f ms\n", decode_all(store, path, &nv) * 1e3);
        return 0;
    }
    if (argc > 4 && !strcmp(argv[4], "pass")) { /* the 1-thread size pass only, for perf record */
        for (int r = 0; r < reps; r++) {
            env e;
            uint64_t sz;
            if (open_env(&e, store, path, (size_t)64 << 20, 1))
                return 1;
            double t0 = now();
            zf_layout_size(e.node->layout, ZF_VIEW_TXT, &sz);
            printf("pass/1 %.1f ms\n", (now() - t0) * 1e3);
            close_env(&e);
        }
        return 0;
    }
    if (reps < 1 || reps > 99)
        reps = 3;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double t_dec[99], t_pass1[99], t_passn[99], t_cold[99], t_pf[99], t_warm[99], t_len[99],
        t_val[99];
    uint64_t size = 0, nvals = 0;
    char *buf = malloc(REQ);
    if (!buf)
        return 1;

    for (int r = 0; r < reps; r++) {
        env e;
        if ((t_dec[r] = decode_all(store, path, &nvals)) < 0)
            return fprintf(stderr, "corebench: decode failed\n"), 1;
        /* pass, 1 thread */
        if (open_env(&e, store, path, (size_t)64 << 20, 1))
            return 1;
        double t0 = now();
        if (zf_layout_size(e.node->layout, ZF_VIEW_TXT, &size))
            return fprintf(stderr, "corebench: size pass failed\n"), 1;
        t_pass1[r] = now() - t0;
        close_env(&e);
        /* pass, one thread per CPU */
        if (open_env(&e, store, path, (size_t)64 << 20, 0))
            return 1;
        t0 = now();
        zf_layout_size(e.node->layout, ZF_VIEW_TXT, &size);
        t_passn[r] = now() - t0;
        /* read, chunks not cached (64 MiB cache after the pass: the cat decodes
         * again, as a mount with an array larger than its cache does) */
        t0 = now();
        uint64_t off = 0;
        for (size_t got = 1; got;) {
            if (zf_layout_read(e.node->layout, ZF_VIEW_TXT, off, buf, REQ, &got))
                return fprintf(stderr, "corebench: read failed at %llu\n",
                               (unsigned long long)off), 1;
            off += got;
        }
        t_cold[r] = now() - t0;
        close_env(&e);
        /* read as a sequential reader, with a prefetch thread */
        if (open_env(&e, store, path, (size_t)64 << 20, 0) || zf_cache_start_prefetch(e.cache, 1))
            return 1;
        zf_layout_size(e.node->layout, ZF_VIEW_TXT, &size);
        zf_cursor cur = {0, UINT64_MAX};
        t0 = now();
        off = 0;
        for (size_t got = 1; got; off += got)
            if (zf_layout_read_from(e.node->layout, ZF_VIEW_TXT, off, buf, REQ, &got, &cur))
                return fprintf(stderr, "corebench: read failed\n"), 1;
        t_pf[r] = now() - t0;
        close_env(&e);
        /* read, every chunk cached */
        if (open_env(&e, store, path, (size_t)64 << 30, 0))
            return 1;
        zf_layout_size(e.node->layout, ZF_VIEW_TXT, &size);
        off = 0;
        for (size_t got = 1; got; off += got)
            zf_layout_read(e.node->layout, ZF_VIEW_TXT, off, buf, REQ, &got);
        t0 = now();
        off = 0;
        for (size_t got = 1; got; off += got)
            zf_layout_read(e.node->layout, ZF_VIEW_TXT, off, buf, REQ, &got);
        t_warm[r] = now() - t0;
        /* per-value cost of the formatter on values like bench/gen.py's */
        zf_fmt fmt; /* bench/gen.py writes timedelta64[ns] */
        zf_fmt_init(&fmt, ZF_FORMAT_PANDAS, ZF_UNIT_ns, 1, "NaT");
        const zf_fmt *f = &fmt;
        enum { NS = 1 << 20 };
        static int64_t sample[NS];
        uint64_t x = 88172645463325252ull;
        for (int i = 0; i < NS; i++) { /* same distribution as bench/gen.py */
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            int64_t v = (int64_t)(x % (30 * 24 * 60 + 1)) * 60000000000ll;
            if ((x >> 40) & 1)
                v += (int64_t)((x >> 20) % 60000000000ull);
            if ((x >> 50) % 100 == 0)
                v = INT64_MIN;
            sample[i] = v;
        }
        size_t acc = 0;
        t0 = now();
        for (int i = 0; i < NS; i++)
            acc += zf_fmt_len(f, sample[i]);
        t_len[r] = (now() - t0) / NS;
        char line[512];
        t0 = now();
        for (int i = 0; i < NS; i++) {
            acc += zf_fmt_value(f, sample[i], line);
            __asm__ volatile("" : : "r"(line) : "memory");
        }
        t_val[r] = (now() - t0) / NS;
        if (acc == 42)
            puts("");
        close_env(&e);
    }
    double mb = (double)size / (1 << 20);
    double p1 = median(t_pass1, reps), pn = median(t_passn, reps);
    double tc = median(t_cold, reps), tw = median(t_warm, reps);
    double td = median(t_dec, reps);
    printf("values %llu, text bytes %llu\n", (unsigned long long)nvals, (unsigned long long)size);
    printf("decode   %9.1f ms   (read + zstd + checks, 1 thread; %.1f ns/value)\n", td * 1e3,
           td / (double)nvals * 1e9);
    printf("pass/1   %9.1f ms   (%.1f ns/value; decode is %.0f %% of it)\n", p1 * 1e3,
           p1 / (double)nvals * 1e9, 100 * td / p1);
    printf("pass/%-2ld  %9.1f ms   (speed-up %.2f x)\n", ncpu, pn * 1e3, p1 / pn);
    printf("read/cold %8.1f ms   %7.0f MiB/s (decode + format, 1 thread; %.1f ns/value)\n",
           tc * 1e3, mb / tc, tc / (double)nvals * 1e9);
    double tp = median(t_pf, reps);
    printf("read/pf   %8.1f ms   %7.0f MiB/s (sequential, 1 prefetch thread; %.1f ns/value)\n",
           tp * 1e3, mb / tp, tp / (double)nvals * 1e9);
    printf("read/warm %8.1f ms   %7.0f MiB/s (format + emit only, 1 thread; %.1f ns/value)\n",
           tw * 1e3, mb / tw, tw / (double)nvals * 1e9);
    printf("fmt_len   %8.2f ns/value\n", median(t_len, reps) * 1e9);
    printf("fmt_value %8.2f ns/value\n", median(t_val, reps) * 1e9);
    free(buf);
    return 0;
}
