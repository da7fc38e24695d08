/* fake_remote.h - what the unit tests above the store layer share
 * (test_remote_core.c, test_presence.c): a fake remote store over a local
 * directory, with counters and an injected failure, the stores on disk they
 * read through it, and helpers to read trees and layouts. */
#ifndef ZF_FAKE_REMOTE_H
#define ZF_FAKE_REMOTE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "tree/tree.h"

/* kinds of request a fault hits (fake_fault.ops) */
enum { FAKE_READ = 1, FAKE_RANGE = 2, FAKE_STAMP = 4, FAKE_LIST = 8 };

/* one failure the fake injects: requests of the kinds in ops whose key (or
 * listed prefix) contains key fail with rc and the reason why; a listing
 * hands on `after` entries first (a later page fails), or all of them and
 * then fails */
typedef struct fake_fault {
    unsigned ops;       /* 0: no fault */
    const char *key;    /* NULL: every key */
    int rc;
    const char *why;    /* NULL: "HTTP 503 after 8 attempts" */
    size_t after;
} fake_fault;

/* a remote store (fake_open) over a local directory */
typedef struct fake {
    zf_store *inner;              /* the local directory it serves */
    int can_list;                 /* 0: plain HTTP (list is ZF_EUNSUPPORTED) */
    unsigned latency_us;          /* added to every request */
    fake_fault fault;             /* set by the test between calls */
    atomic_long reads, chunk_reads, ranges, stamps, lists, refused, faulted;
    atomic_int inflight, max_inflight;
} fake;

/* A remote store over inner, named by a URL ending as its directory does (a
 * root array's files are named after it); the caller frees both. */
zf_store *fake_open(fake *f, zf_store *inner, int can_list, unsigned parallel,
                    unsigned latency_us);

/* Requests made since the last reset. */
long requests(fake *f);

/* Zero the counters. */
void reset(fake *f);

/* Write data (n bytes) to dir/rel, making the parent directories. */
void put(const char *dir, const char *rel, const void *data, size_t n);
void put_text(const char *dir, const char *rel, const char *text);

/* Values of chunk c of array i: varied text lengths, some NaT. */
void chunk_values(unsigned i, unsigned c, unsigned len, int64_t *v, unsigned salt);

enum { SMALL_LEN = 20, SMALL_CHUNK = 10 };
enum { BIG_LEN = 4096, BIG_CHUNK = 16 };
enum { SH_LEN = 4096, SH_SHARD = 64, SH_INNER = 16 };
enum { BIGSH_LEN = 1100000, BIGSH_INNER = 110000 };

/* A v2 store of n arrays a000... (SMALL_LEN values, chunks of SMALL_CHUNK;
 * every third array's last chunk missing), consolidated or not. */
void make_v2(const char *dir, unsigned n, int consolidated);

/* A v3 store of n arrays g/a000... with inline consolidated metadata. */
void make_v3(const char *dir, unsigned n);

/* A root v2 array of BIG_LEN values in chunks of BIG_CHUNK (every fifth
 * missing); only_chunk != UINT32_MAX rewrites that chunk alone. */
void make_big(const char *dir, unsigned salt, unsigned only_chunk);

/* A root v3 array of SH_LEN values in shards of SH_SHARD, inner chunks of
 * SH_INNER (every seventh shard missing, every third inner chunk empty). */
void make_sharded(const char *dir);

/* A root v3 array held by one shard of over 8 MiB of ten inner chunks. */
void make_big_shard(const char *dir);

/* Layout options of the tests (pandas, NaT, 2 threads), persisting indexes
 * in index_dir (NULL: nowhere). */
zf_layout_opts opts(const char *index_dir);

/* The first file node of t whose name ends with ext, or NULL. */
const zf_node *first_file(const zf_tree *t, const char *ext);

/* The whole text of view v of l (malloc'd), its size in *n; NULL on error. */
char *whole(zf_layout *l, zf_view v, uint64_t *n);

/* Append "name;" ("name/;" for directories) of every node under d to out. */
void names(const zf_tree *t, const zf_node *d, char *out, size_t cap);

/* A new test directory $TMPDIR/NAME.XXXXXX into dir (cap bytes): 0, or -1
 * (reported). */
int test_dir_make(char *dir, size_t cap, const char *name);

/* Remove a test directory and everything in it. */
void test_dir_remove(const char *dir);

#endif
