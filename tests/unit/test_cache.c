/* test_cache.c - unit tests for the chunk cache (src/cache.c) and the buffer
 * pool behind it (src/pool.c).
 *
 * Checks the contracts written in cache.h and pool.h: hits share one entry,
 * the byte bound holds (held entries may exceed it until put), errors are not
 * cached, concurrent misses of one key load once, a load decodes into the
 * buffer of the entry it evicts, the pool (loaders' scratch) keeps no more
 * than its limit, prefetched chunks are found by later gets, and a caller
 * with a request deadline stops waiting for another's load at it.  Run from
 * tests/. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chunk/cache.h"
#include "base/deadline.h"
#include "base/err.h"
#include "chunk/pool.h"

#include "check.h"


#define MIB ((size_t)1 << 20)

/* a loader of chunks of `n` values where value i of chunk k is k * 1000 + i;
 * chunk `bad` fails; counts its calls and the buffers the cache handed it */
typedef struct source {
    zf_cache *cache;
    uint64_t n, bad;
    int loads, reused;
    int64_t delay_ms;
    int late_once;   /* the next load fails as a spent request deadline would */
    pthread_mutex_t mu;
} source;

static int load(void *ctx, uint64_t index, void *buf, zf_chunk *out)
{
    source *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->loads++;
    int late = s->late_once;
    s->late_once = 0;
    pthread_mutex_unlock(&s->mu);
    if (s->delay_ms)
        nanosleep(&(struct timespec){0, s->delay_ms * 1000000}, NULL);
    if (late)
        return ZF_ETIMEDOUT;
    if (index == s->bad)
        return ZF_ECORRUPT;
    int64_t *v = buf;
    if (v) {
        pthread_mutex_lock(&s->mu);
        s->reused++;
        pthread_mutex_unlock(&s->mu);
    } else if (!(v = malloc((size_t)s->n * sizeof *v))) {
        return ZF_ENOMEM;
    }
    for (uint64_t i = 0; i < s->n; i++)
        v[i] = (int64_t)(index * 1000 + i);
    out->values = v;
    out->n = s->n;
    return ZF_OK;
}

#define BYTES(s) ((size_t)(s)->n * sizeof(int64_t))

static int chunk_ok(const zf_chunk *c, uint64_t index, uint64_t n)
{
    if (!c || !c->values || c->n != n)
        return 0;
    for (uint64_t i = 0; i < n; i += n / 7 + 1)
        if (c->values[i] != (int64_t)(index * 1000 + i))
            return 0;
    return c->values[n - 1] == (int64_t)(index * 1000 + n - 1);
}

static void source_init(source *s, zf_cache *c, uint64_t n)
{
    memset(s, 0, sizeof *s);
    s->cache = c;
    s->n = n;
    s->bad = UINT64_MAX;
    pthread_mutex_init(&s->mu, NULL);
}

/* hits share the entry; a miss loads once; errors are not cached */
static void test_hits_and_errors(void)
{
    zf_cache *c = zf_cache_new(64 * MIB);
    source s;
    source_init(&s, c, 1000);
    s.bad = 3;
    zf_chunk *a = NULL, *b = NULL, *e = NULL;
    CHECK(zf_cache_get(c, 1, 0, BYTES(&s), load, &s, &a) == ZF_OK && chunk_ok(a, 0, 1000), "first get");
    CHECK(zf_cache_get(c, 1, 0, BYTES(&s), load, &s, &b) == ZF_OK && b == a, "hit returns the same entry");
    CHECK(s.loads == 1, "one load for two gets, got %d", s.loads);
    zf_chunk *other = NULL;
    CHECK(zf_cache_get(c, 2, 0, BYTES(&s), load, &s, &other) == ZF_OK && other != a,
          "another owner is another key");
    CHECK(zf_cache_get(c, 1, 3, BYTES(&s), load, &s, &e) == ZF_ECORRUPT, "a failing load fails");
    CHECK(e == NULL, "a failed get hands out no chunk");
    CHECK(zf_cache_get(c, 1, 3, BYTES(&s), load, &s, &e) == ZF_ECORRUPT && s.loads == 4,
          "the error is not cached: loaded again (%d loads)", s.loads);
    CHECK(e == NULL, "a failed get hands out no chunk");
    zf_cache_put(c, a);
    zf_cache_put(c, b);
    zf_cache_put(c, other);
    zf_cache_put(c, NULL);
    zf_cache_free(c);
    pthread_mutex_destroy(&s.mu);
}

/* resident bytes stay under capacity once nothing is held; a load decodes
 * into the buffer of the entry it evicted */
static void test_bound_and_reuse(void)
{
    const uint64_t n = MIB / 8 * 2; /* 2 MiB chunks */
    zf_cache *c = zf_cache_new(8 * MIB);
    source s;
    source_init(&s, c, n);
    for (uint64_t k = 0; k < 20; k++) {
        zf_chunk *ch = NULL;
        CHECK(zf_cache_get(c, 7, k, BYTES(&s), load, &s, &ch) == ZF_OK && chunk_ok(ch, k, n), "chunk %llu",
              (unsigned long long)k);
        zf_cache_put(c, ch);
    }
    CHECK(s.loads == 20, "20 loads, got %d", s.loads);
    /* 8 MiB holds three 2 MiB chunks plus overheads: evictions from the 4th on */
    CHECK(s.reused == 17, "evicted buffers are reused from the 4th load: %d of 20", s.reused);
    CHECK(!zf_cache_room(c, 4 * MIB), "the cache is full");
    /* the most recent chunks are still there, the first ones are not */
    int before = s.loads;
    zf_chunk *last = NULL, *first = NULL;
    CHECK(zf_cache_get(c, 7, 19, BYTES(&s), load, &s, &last) == ZF_OK && s.loads == before, "19 is cached");
    zf_cache_put(c, last);
    CHECK(zf_cache_get(c, 7, 0, BYTES(&s), load, &s, &first) == ZF_OK && s.loads == before + 1 &&
              chunk_ok(first, 0, n), "0 was evicted and loads again");
    zf_cache_put(c, first);

    /* held entries may exceed the capacity until they are put */
    zf_chunk *held[6] = {NULL};
    for (uint64_t k = 0; k < 6; k++)
        CHECK(zf_cache_get(c, 8, k, BYTES(&s), load, &s, &held[k]) == ZF_OK && chunk_ok(held[k], k, n),
              "held chunk %llu", (unsigned long long)k);
    for (uint64_t k = 0; k < 6; k++)
        CHECK(chunk_ok(held[k], k, n), "held chunk %llu intact after later loads",
              (unsigned long long)k);
    for (uint64_t k = 0; k < 6; k++)
        zf_cache_put(c, held[k]);
    zf_cache_free(c);
    pthread_mutex_destroy(&s.mu);
}

typedef struct racer {
    zf_cache *c;
    source *s;
    uint64_t index;
    int rc;          /* what zf_cache_get returned */
    int ok;          /* got chunk `index` intact */
    zf_chunk *ch;    /* what it left in *out (NULL before the call) */
} racer;

/* one caller: get chunk r->index, check it, give it back if it was got */
static void *race(void *arg)
{
    racer *r = arg;
    r->ch = NULL;
    r->rc = zf_cache_get(r->c, 1, r->index, BYTES(r->s), load, r->s, &r->ch);
    if (r->rc == ZF_OK) {
        r->ok = chunk_ok(r->ch, r->index, r->s->n);
        zf_cache_put(r->c, r->ch);
    }
    return NULL;
}

/* 8 concurrent misses of chunk `index` (50 ms loads); fills r[] */
static void race8(zf_cache *c, source *s, uint64_t index, racer r[8])
{
    pthread_t t[8];
    int started[8];
    for (int i = 0; i < 8; i++) {
        r[i] = (racer){c, s, index, 0, 0, NULL};
        started[i] = pthread_create(&t[i], NULL, race, &r[i]) == 0;
        CHECK(started[i], "thread %d starts", i);
    }
    for (int i = 0; i < 8; i++)
        if (started[i])
            pthread_join(t[i], NULL);
}

/* concurrent misses of one key: one load, all callers get the chunk; when
 * that load fails, all of them get its error and no chunk */
static void test_single_flight(void)
{
    zf_cache *c = zf_cache_new(16 * MIB);
    source s;
    source_init(&s, c, 4096);
    s.delay_ms = 50;
    s.bad = 6;
    racer r[8];
    race8(c, &s, 5, r);
    int ok = 0;
    for (int i = 0; i < 8; i++)
        ok += r[i].rc == ZF_OK && r[i].ok;
    CHECK(ok == 8, "all 8 callers got the chunk (%d)", ok);
    CHECK(s.loads == 1, "one load for 8 concurrent misses, got %d", s.loads);

    race8(c, &s, 6, r);
    int failed = 0, handed = 0;
    for (int i = 0; i < 8; i++) {
        failed += r[i].rc == ZF_ECORRUPT;
        handed += r[i].ch != NULL;
    }
    CHECK(failed == 8, "all 8 callers got the load's error (%d)", failed);
    CHECK(handed == 0, "a failed get hands out no chunk (%d did)", handed);
    CHECK(s.loads == 2, "one load for 8 concurrent failing misses, got %d", s.loads - 1);
    zf_cache_free(c);
    pthread_mutex_destroy(&s.mu);
}

/* loads started so far (under s->mu) */
static int loads_of(source *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->loads;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* a caller whose request deadline comes while another thread loads its
 * chunk stops waiting then (ZF_ETIMEDOUT, no chunk); the load goes on, its
 * own caller gets the chunk, and later callers find it loaded; a load that
 * its caller's deadline cut short is loaded again by a waiter */
static void test_deadline(void)
{
    zf_cache *c = zf_cache_new(16 * MIB);
    source s;
    source_init(&s, c, 4096);
    s.delay_ms = 600;
    racer slow = {c, &s, 7, 0, 0, NULL};
    pthread_t t;
    int started = pthread_create(&t, NULL, race, &slow) == 0;
    CHECK(started, "the loading thread starts");
    for (int i = 0; i < 500 && loads_of(&s) == 0; i++)
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    CHECK(loads_of(&s) == 1, "the load runs");
    zf_chunk *ch = NULL;
    uint64_t t0 = zf_deadline_now_ms();
    zf_deadline_set(t0 + 100);
    int rc = zf_cache_get(c, 1, 7, BYTES(&s), load, &s, &ch);
    uint64_t took = zf_deadline_now_ms() - t0;
    zf_deadline_clear();
    CHECK(rc == ZF_ETIMEDOUT && !ch, "the waiter gives up at its deadline: rc %d", rc);
    CHECK(took >= 100 && took < 450, "within the deadline plus slack, before the load ends (%llu ms)",
          (unsigned long long)took);
    if (started)
        pthread_join(t, NULL);
    CHECK(slow.rc == ZF_OK && slow.ok, "the load went on for its own caller");
    CHECK(zf_cache_get(c, 1, 7, BYTES(&s), load, &s, &ch) == ZF_OK && chunk_ok(ch, 7, 4096),
          "a later get finds it");
    zf_cache_put(c, ch);
    CHECK(loads_of(&s) == 1, "loaded once: %d", loads_of(&s));
    zf_deadline_set(zf_deadline_now_ms() - 1); /* spent, but a hit needs no wait */
    CHECK(zf_cache_get(c, 1, 7, BYTES(&s), load, &s, &ch) == ZF_OK, "a hit with a spent deadline");
    zf_deadline_clear();
    zf_cache_put(c, ch);

    /* a load cut short by its own caller's deadline: that caller gets
     * ZF_ETIMEDOUT, a waiter with time left loads it again and gets it */
    s.delay_ms = 300;
    s.late_once = 1;
    int before = loads_of(&s);
    racer cut = {c, &s, 8, 0, 0, NULL};
    started = pthread_create(&t, NULL, race, &cut) == 0;
    CHECK(started, "the cut loader starts");
    for (int i = 0; i < 500 && loads_of(&s) == before; i++)
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    ch = NULL;
    rc = zf_cache_get(c, 1, 8, BYTES(&s), load, &s, &ch); /* no deadline here */
    if (started)
        pthread_join(t, NULL);
    CHECK(cut.rc == ZF_ETIMEDOUT, "the cut load's own caller: rc %d", cut.rc);
    CHECK(rc == ZF_OK && chunk_ok(ch, 8, 4096), "the waiter loaded it again: rc %d", rc);
    CHECK(loads_of(&s) == before + 2, "two loads: %d", loads_of(&s) - before);
    zf_cache_put(c, ch);
    zf_cache_free(c);
    pthread_mutex_destroy(&s.mu);
}

/* a prefetched chunk is found without another load */
static void test_prefetch(void)
{
    zf_cache *c = zf_cache_new(64 * MIB);
    source s;
    source_init(&s, c, 1024);
    CHECK(zf_cache_start_prefetch(c, 2) == ZF_OK, "prefetch threads start");
    zf_cache_prefetch(c, 3, 9, 1024 * 8, load, &s);
    zf_chunk *ch = NULL;
    CHECK(zf_cache_get(c, 3, 9, BYTES(&s), load, &s, &ch) == ZF_OK && chunk_ok(ch, 9, 1024), "get 9");
    zf_cache_put(c, ch);
    CHECK(s.loads == 1, "loaded once (prefetch or get, not both): %d", s.loads);
    zf_cache_prefetch(c, 3, 10, (size_t)64 * MIB, load, &s); /* too big to keep: dropped */
    zf_cache_cancel(c, 3);
    CHECK(s.loads == 1, "an oversized prefetch is not run: %d loads", s.loads);
    zf_cache_free(c);
    pthread_mutex_destroy(&s.mu);
}

/* the pool: smallest fitting buffer, the limit, the minimum size kept */
static void test_pool(void)
{
    zf_pool *p = zf_pool_new(10 * MIB);
    size_t cap = 0;
    CHECK(zf_pool_take(p, 0, &cap) == NULL, "empty pool");
    void *a = malloc(4 * MIB), *b = malloc(2 * MIB), *c = malloc(3 * MIB), *tiny = malloc(4096);
    memset(a, 1, 4 * MIB);
    zf_pool_give(p, a, 4 * MIB);
    zf_pool_give(p, b, 2 * MIB);
    zf_pool_give(p, c, 3 * MIB);  /* 9 MiB idle */
    zf_pool_give(p, tiny, 4096); /* below the minimum: freed */
    void *x = malloc(2 * MIB);
    zf_pool_give(p, x, 2 * MIB); /* over the limit: freed */
    CHECK(zf_pool_take(p, 5 * MIB, &cap) == NULL, "nothing of 5 MiB or more");
    void *got = zf_pool_take(p, 2 * MIB + 1, &cap);
    CHECK(got == c && cap == 3 * MIB, "the smallest that fits (3 MiB), got %zu", cap);
    free(got);
    got = zf_pool_take(p, 4 * MIB, &cap);
    CHECK(got == a && cap == 4 * MIB && ((char *)got)[4 * MIB - 1] == 1, "4 MiB or more: the 4 MiB one, contents kept");
    free(got);
    got = zf_pool_take(p, 0, &cap);
    CHECK(got == b && cap == 2 * MIB, "the last one");
    free(got);
    CHECK(zf_pool_take(p, 0, &cap) == NULL, "empty again");
    zf_pool_give(p, NULL, 0);
    for (int i = 0; i < 20; i++) /* more than the slots: the rest freed */
        zf_pool_give(p, malloc(256 << 10), 256 << 10);
    int kept = 0;
    while ((got = zf_pool_take(p, 0, &cap)) != NULL) {
        kept++;
        free(got);
    }
    CHECK(kept == 16, "16 slots, kept %d", kept);
    zf_pool_give(p, malloc(MIB), MIB);
    zf_pool_free(p); /* frees what it holds (valgrind / ASan check) */
    zf_pool_free(NULL);
}

int main(void)
{
    test_hits_and_errors();
    test_bound_and_reuse();
    test_single_flight();
    test_deadline();
    test_prefetch();
    test_pool();
    return check_summary("test_cache");
}
